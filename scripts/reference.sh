# shellcheck shell=bash
# reference.sh: ./run_experiments.sh --reference: every committed result
# made again from this tree, each folder by separate invocations of
# run_experiments.sh (sourced by it).
#
# A folder holds SP_SESSIONS sessions (session-1, ...): each a fresh
# invocation with its own order seed (recorded in its env.txt), so that a
# figure is seen to hold across sessions and not only within one.  The
# sessions are interleaved across the whole run: session 1 of every
# folder, then session 2 of every folder, and so on, so that a folder's
# sessions lie a whole round apart (their start times are in their
# env.txt and sessions.md), and the pooled suites' contenders' rotation
# goes on from one session to the next (--session).  Folders are made in
# a scratch folder beside the target and each moved into place once
# complete: an interrupted run leaves the old folder, never half a new
# one.  At the end, results/stability.md: the new verdicts against the
# previous committed reference's (spreport stability).
# shellcheck disable=SC2154  # quick bin order_seed out iobench_suites
#                              reference_only are run_experiments.sh's

SP_SESSIONS=3

# The Sun-study folders: NAME SIZE CACHE PAGE_CACHE SCALES [OPTION...],
# the options run_experiments.sh's, kept with --quick.  Each writes no
# output, as the study did (--sun-output none), but the two after the six:
# the warm 1280x1024 case with each run's output written to a file, the
# second, named case, and with its 10 threads on one CPU, as the Ultra 30
# had.  Their names keep them out of the model's sun-1280x1024-warm-*.
SP_REFERENCE_SUN=(
    "sun-1280x1024-warm-large 1280x1024 warm large all"
    "sun-1280x1024-warm-small 1280x1024 warm small all"
    "sun-1280x1024-cold 1280x1024 cold large all"
    "big-12000x10000-warm-large 12000x10000 warm large reduce"
    "big-12000x10000-warm-small 12000x10000 warm small reduce"
    "big-12000x10000-cold 12000x10000 cold large reduce"
    "sun-1280x1024-output-warm-large 1280x1024 warm large all --sun-output file"
    "sun-1280x1024-1cpu-warm-large 1280x1024 warm large all --sun-cpus 1"
)

# The folders whose runs the cost model predicts (regen.py's MODEL_RUNS,
# in the same order): the study's case, 10 threads on every CPU, no
# output; not the output-file and one-CPU cases, which it does not model.
SP_MODEL_FOLDERS=(sun-1280x1024-cold sun-1280x1024-warm-large
    sun-1280x1024-warm-small big-12000x10000-cold big-12000x10000-warm-large
    big-12000x10000-warm-small)

# reference_step NAME COMMAND...: run one piece, its output to
# $scratch/NAME.log; say how long it took.
reference_step() {
    local name=$1 t0=$SECONDS
    shift
    printf '%s: ' "$name" >&2
    if ! "$@" >"$scratch/$name.log" 2>&1; then
        printf 'failed; the last lines of %s:\n' "$scratch/$name.log" >&2
        tail -n 5 "$scratch/$name.log" >&2
        exit 1
    fi
    printf '%d s\n' "$((SECONDS - t0))" >&2
}

# reference_seed K I: the order seed of session K of the I-th folder: its
# own for every session of every folder.
reference_seed() {
    echo $((seed_base + 100 * $2 + $1))
}

# reference_sun K I NAME SIZE CACHE PAGE_CACHE SCALES [OPTION...]: session
# K of one Sun-study folder (the I-th).
reference_sun() {
    local k=$1 i=$2 name=$3 size=$4 cache=$5 pc=$6 which=$7 args
    shift 7
    args=(--bin "$bin" --suite sun --cache "$cache" --page-cache "$pc" "$@")
    if ((quick)); then
        args+=(--quick)
    else
        args+=(--size "$size")
        [[ $which == reduce ]] && args+=(--scales "-2,-3,-4,-5,-6,-7,-8")
    fi
    reference_step "$name session $k" "$ROOT/run_experiments.sh" "${args[@]}" \
        --seed "$(reference_seed "$k" "$i")" --session "$k" \
        --out "$scratch/$name/session-$k"
}

# The other folders: NAME, then run_experiments.sh's options of one
# session (each also gets --out; with --quick, --quick in their place).
# The seed suites at the seeds' sizes (4 GB, 3 GB); a folder's repeats
# are its sessions' together (syscall-vs-mmap: 3 x 2 = 6).  The profile
# under perf is one session: a picture of where the time goes, no verdict.
SP_REFERENCE_OTHER=(
    "syscall-vs-mmap --suite syscall-vs-mmap --file-size 4294967296 --reps 2"
    "syscall-vs-mmap-memlimit --suite syscall-vs-mmap --file-size 1073741824 --mem-limit 536870912 --reps 1"
    "syscall-vs-mmap-perf --suite syscall-vs-mmap --perf"
    "zero-page --suite zero-page --reps 2"
    "random-access --suite random-access --reps 2"
    "copy --suite copy --file-size 3000000000 --reps 1"
    "cdb --suite cdb --reps 2"
    "paths --suite paths --runs 4"
    "durable --suite durable --runs 4"
    "peers --suite peers --runs 2"
    "threads --suite threads --runs 3"
    "batch --suite batch --runs 3"
    "server --suite server"
    "compressed --suite compressed --runs 2"
    "photos --suite photos --runs 2"
)

# reference_other_opts SPEC: SPEC's folder name in other_name and its
# options (--suite first) in other_opts, as this run makes it (--quick:
# the suite alone at its tiny sizes); fails where the folder is left out
# here (--only, perf or a cgroup not to be had), saying why.
reference_other_opts() {
    read -r -a other_opts <<<"$1"
    other_name=${other_opts[0]}
    other_opts=("${other_opts[@]:1}")
    [[ -z $reference_only || ,$reference_only, == *",$other_name,"* ]] ||
        return 1
    # --quick: the suite alone (and the memory limit, kept below the
    # quick file's size), at its tiny sizes
    if ((quick)); then
        other_opts=("${other_opts[@]:0:2}" --quick)
        [[ $other_name == *-perf ]] && other_opts+=(--perf)
    fi
    if [[ $other_name == *-perf ]] && ! perf record -q -o /dev/null -- true \
        >/dev/null 2>&1; then
        printf '%s: left out (perf cannot record here)\n' "$other_name" >&2
        return 1
    fi
    if [[ $other_name == *-memlimit ]]; then
        if ((EUID != 0)); then
            printf '%s: left out (a memory cgroup needs root)\n' \
                "$other_name" >&2
            return 1
        fi
        ((quick)) && other_opts+=(--file-size 50331648 --mem-limit 33554432)
    fi
    return 0
}

# reference_other_session K I NAME SUITE OPTION...: session K of one of
# the other folders (the I-th); a profile (-perf) has one session.
reference_other_session() {
    local k=$1 i=$2 name=$3 suite=$4
    shift 4
    [[ $name == *-perf ]] && ((k > 1)) && return 0
    reference_step "$name session $k" "$ROOT/run_experiments.sh" \
        --bin "$bin" --suite "$suite" "$@" --seed "$(reference_seed "$k" "$i")" \
        --session "$k" --out "$scratch/$name/session-$k"
}

# reference_other NAME SUITE: one of the other folders, its SP_SESSIONS
# sessions made, pooled by spreport pool (one for a profile), then the
# suite's own report from the pooled rows.
reference_other() {
    local name=$1 suite=$2 dir=$scratch/$1 n=$SP_SESSIONS kind fs
    [[ $name == *-perf ]] && n=1
    if ((n == 1)); then  # the one session is the folder
        mv "$dir/session-1" "$dir.one" && rmdir "$dir" && mv "$dir.one" "$dir"
        return
    fi
    case $suite in
    paths | durable | peers | threads | batch | server | compressed | photos)
        kind=$suite ;;
    *) kind=iobench ;;
    esac
    reference_step "$name pooled" spreport pool "$kind" "$dir" \
        "$dir"/session-*
    {
        cat "$dir/session-1/env.txt"
        printf 'sessions: %d separate invocations, session-1 to session-%d ' \
            "$n" "$n"
        printf '(each its own env.txt; above: session 1'"'"'s); the rows '
        printf 'here are theirs together\n'
    } >"$dir/env.txt"
    case $kind in
    iobench)
        reference_step "$name report" spreport iobench "$suite" \
            "$dir/$suite.csv" "$dir/$suite.md" "$dir/$suite.png" ;;
    paths) reference_step "$name report" spreport paths "$dir/paths.csv" \
        "$dir/paths.md" ;;
    durable)
        fs=$(df -PT "${TMPDIR:-/tmp}" | awk 'NR == 2 { print $2 " on " $1 }')
        reference_step "$name report" spreport durable --filesystem "$fs" \
            "$dir" ;;
    peers) reference_peers_report "$dir" ;;
    server | photos) reference_step "$name report" spreport "$kind" "$dir" ;;
    compressed) reference_step "$name report" spreport compressed \
        "$dir/compressed.csv" "$dir/compressed.md" ;;
    threads) reference_step "$name report" spreport threads --cpus "$(nproc)" \
        --disk "$(df -PT "${TMPDIR:-/tmp}" | awk 'NR == 2 { print $2 " on " $1 }')" \
        "$dir" ;;
    batch)
        fs=$(sed -n 's/^settings:.* enlarged_outputs=\([^ ]*\).*/\1/p' \
            "$dir/session-1/env.txt")
        reference_step "$name report" spreport batch --outputs \
            "tmpfs; enlarged: ${fs:-?}" "$dir" ;;
    esac
}

# reference_peers_report DIR: the peers report of DIR's pooled rows, with
# every session's copy rates and session 1's inputs (from the env.txt).
reference_peers_report() {
    local dir=$1 rates specs
    rates=$(sed -n 's/^settings:.* memcpy_bytes_per_s=\([0-9,]*\).*/\1/p' \
        "$dir"/session-*/env.txt | paste -sd,)
    specs=$(sed -n 's/^settings:.* specs=\([^ ]*\).*/\1/p' \
        "$dir/session-1/env.txt")
    [[ -n $rates && -n $specs ]] || {
        printf 'peers: no copy rates or inputs in %s\n' \
            "$dir/session-1/env.txt" >&2
        exit 1
    }
    # shellcheck disable=SC2086  # the specs' commas become words
    reference_step "peers report" peers_report "$dir" "$rates" \
        ${specs//,/ }
}

# reference_units K: the cost model's unit costs of session round K
# (spcost), into $scratch/model/units-K.csv: measured once a round, before
# the Sun-study folders it is compared with (a shared machine's costs
# drift; the model takes each unit's median over the rounds).
reference_units() {
    local spcost=("$bin/src/spcost" --size $((1280 * 1024 * 3))
        --size $((12000 * 10000 * 3)))
    ((quick)) && spcost+=(--quick)
    reference_step "model units $1" "${spcost[@]}"
    cp "$scratch/model units $1.log" "$scratch/model/units-$1.csv"
}

# reference_round K: session K of every folder, in the order of the
# arrays (a Sun-study folder's, the model's units before the first).
reference_round() {
    local k=$1 i=0 spec
    for spec in "${sun[@]}"; do
        i=$((i + 1))
        ((i == 1)) && reference_whole_sun && reference_units "$k"
        # shellcheck disable=SC2086  # the spec's words are the arguments
        reference_sun "$k" "$i" $spec
    done
    for spec in "${SP_REFERENCE_OTHER[@]}"; do
        i=$((i + 1))
        reference_other_opts "$spec" 2>/dev/null || continue
        reference_other_session "$k" "$i" "$other_name" \
            "${other_opts[1]}" "${other_opts[@]:2}"
    done
}

# reference_whole_sun: whether this run makes every Sun-study folder and
# the model (no --only, or "sun" in its list).
reference_whole_sun() {
    [[ -z $reference_only || ,$reference_only, == *,sun,* ]]
}

# reference_sun_only: sun, the Sun-study folders this run makes: all of
# them (reference_whole_sun), or those --only names.
reference_sun_only() {
    local spec
    sun=()
    for spec in "${SP_REFERENCE_SUN[@]}"; do
        if reference_whole_sun ||
            [[ ,$reference_only, == *",${spec%% *},"* ]]; then
            sun+=("$spec")
        fi
    done
}

# reference_check_only: every name --only lists is a folder of the
# reference (or "sun"), so that a misspelt one is not silently skipped.
reference_check_only() {
    local name spec known=",sun,"
    for spec in "${SP_REFERENCE_SUN[@]}" "${SP_REFERENCE_OTHER[@]}"; do
        known+="${spec%% *},"
    done
    for name in ${reference_only//,/ }; do
        [[ $known == *",$name,"* ]] ||
            die "--only: no folder $name in the reference"
    done
}

# reference_run: every folder, then each moved over its committed one.
reference_run() {
    local dest=${out:-$ROOT/results} t0=$SECONDS spec name k
    local -a names=() other_opts sun=("${SP_REFERENCE_SUN[@]}")
    local other_name
    reference_check_only
    mkdir -p "$dest"
    scratch=$(mktemp -d "$dest/.reference.XXXXXX")
    seed_base=$order_seed
    printf 'reference run into %s (tree %s); each step logs to %s\n' \
        "$dest" "$(sp_tree_state)" "$scratch" >&2
    mkdir -p "$scratch/model"
    reference_sun_only
    for spec in "${SP_REFERENCE_OTHER[@]}"; do
        reference_other_opts "$spec" || true  # say once what is left out
    done
    for ((k = 1; k <= SP_SESSIONS; k++)); do
        reference_round "$k"
    done
    for spec in "${sun[@]}"; do
        name=${spec%% *}
        sp_sun_sessions_report "$scratch/$name"
        names+=("$name")
    done
    if reference_whole_sun; then
        local -a model_runs=()
        for name in "${SP_MODEL_FOLDERS[@]}"; do
            model_runs+=("$scratch/$name"/session-*)
        done
        reference_step model spreport model \
            --units "$scratch"/model/units-*.csv --out "$scratch/model" \
            "${model_runs[@]}"
        # spcost's own files are gone: the machine and the build that
        # measured the units (the runs it predicts have their own)
        sp_write_env "$scratch/model/env.txt" "" "$bin" \
            "suite=model quick=$quick units=$SP_SESSIONS runs=$(cd "$scratch" &&
                printf '%s\n' "${model_runs[@]#"$scratch/"}" | paste -sd,)"
        names+=(model)
    fi
    for spec in "${SP_REFERENCE_OTHER[@]}"; do
        reference_other_opts "$spec" 2>/dev/null || continue
        reference_other "$other_name" "${other_opts[1]}"
        names+=("$other_name")
    done
    for name in "${names[@]}"; do
        # a folder's README.md is prose written by hand: the new folder
        # keeps it (spreport readme --all below checks it against the runs)
        if [[ -f $dest/$name/README.md ]]; then
            cp -p "$dest/$name/README.md" "$scratch/$name/README.md"
        fi
        rm -rf "${dest:?}/$name"
        mv "$scratch/$name" "$dest/$name"
    done
    rm -rf "$scratch"
    # The new verdicts against the committed reference's (HEAD's results/),
    # cell by cell: how many flipped.
    spreport stability --rev HEAD --results "$dest" \
        --out "$dest/stability.md" ||
        printf 'reference: no stability table (above)\n' >&2
    # The documents' figures and generated blocks made again from the new
    # folders; a verdict or a cause the new runs no longer bear is named,
    # for its sentence to be rewritten.
    if [[ $dest -ef $ROOT/results ]]; then
        (cd "$ROOT" && spreport readme --all) ||
            printf 'reference: document sentences to rewrite (above)\n' >&2
    fi
    if reference_whole_sun; then
        printf '\nThe Sun study on the 1280x1024 image, warm, %d sessions:\n' \
            "$SP_SESSIONS"
        sed -n '/^| scale/,/^$/p' "$dest/sun-1280x1024-warm-large/sessions.md"
    fi
    [[ ! -f $dest/stability.md ]] || sed -n '/^In all:/p' "$dest/stability.md"
    printf 'reference: %d folders in %s, %d min %d s\n' "${#names[@]}" \
        "$dest" "$(((SECONDS - t0) / 60))" "$(((SECONDS - t0) % 60))" >&2
}

# sp_sun_sessions_report DIR: DIR's table over its sessions.
sp_sun_sessions_report() {
    spreport sun --quiet --sessions "$1" "$1"/session-*
}
