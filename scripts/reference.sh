# shellcheck shell=bash
# reference.sh: ./run_experiments.sh --reference: every committed result
# made again from this tree, each folder by separate invocations of
# run_experiments.sh (sourced by it).
#
# A Sun-study folder holds SP_SESSIONS sessions (session-1, ...): each a
# fresh invocation with its own order of factors (seed recorded in its
# env.txt), so that a figure is seen to hold across sessions and not only
# within one.  Folders are made in a scratch folder beside the target and
# each moved into place once complete: an interrupted run leaves the old
# folder, never half a new one.
# shellcheck disable=SC2154  # quick bin order_seed out iobench_suites
#                              reference_only are run_experiments.sh's

SP_SESSIONS=3

# The Sun-study folders: NAME SIZE CACHE PAGE_CACHE SCALES.
SP_REFERENCE_SUN=(
    "sun-1280x1024-warm-large 1280x1024 warm large all"
    "sun-1280x1024-warm-small 1280x1024 warm small all"
    "sun-1280x1024-cold 1280x1024 cold large all"
    "big-12000x10000-warm-large 12000x10000 warm large reduce"
    "big-12000x10000-warm-small 12000x10000 warm small reduce"
    "big-12000x10000-cold 12000x10000 cold large reduce"
)

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

# reference_sun NAME SIZE CACHE PAGE_CACHE SCALES: one Sun-study folder,
# SP_SESSIONS sessions and their combined table.
reference_sun() {
    local name=$1 size=$2 cache=$3 pc=$4 which=$5 k dir args
    dir=$scratch/$name
    args=(--bin "$bin" --suite sun --cache "$cache" --page-cache "$pc")
    if ((quick)); then
        args+=(--quick)
    else
        args+=(--size "$size")
        [[ $which == reduce ]] && args+=(--scales "-2,-3,-4,-5,-6,-7,-8")
    fi
    for ((k = 1; k <= SP_SESSIONS; k++)); do
        reference_step "$name session $k" "$ROOT/run_experiments.sh" "${args[@]}" \
            --seed "$((seed_base + k))" --out "$dir/session-$k"
    done
    sp_sun_sessions_report "$dir"
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
)

# reference_other NAME SUITE OPTION...: one of the other folders, in
# SP_SESSIONS sessions pooled by spreport pool (one for a profile), then
# the suite's own report from the pooled rows.
reference_other() {
    local name=$1 suite=$2 dir=$scratch/$1 k n=$SP_SESSIONS kind fs
    shift 2
    [[ $name == *-perf ]] && n=1
    for ((k = 1; k <= n; k++)); do
        reference_step "$name session $k" "$ROOT/run_experiments.sh" \
            --bin "$bin" --suite "$suite" "$@" --out "$dir/session-$k"
    done
    if ((n == 1)); then  # the one session is the folder
        mv "$dir/session-1" "$dir.one" && rmdir "$dir" && mv "$dir.one" "$dir"
        return
    fi
    case $suite in
    paths | durable | peers | threads | batch | server) kind=$suite ;;
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
    server) reference_step "$name report" spreport server "$dir" ;;
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

# reference_run: every folder, then each moved over its committed one.
reference_run() {
    local dest=${out:-$ROOT/results} t0=$SECONDS spec name
    local -a names=()
    mkdir -p "$dest"
    scratch=$(mktemp -d "$dest/.reference.XXXXXX")
    seed_base=$order_seed
    printf 'reference run into %s (tree %s); each step logs to %s\n' \
        "$dest" "$(sp_tree_state)" "$scratch" >&2
    # The cost model's unit costs: measured before, between and after the
    # Sun study's folders it is compared with (a shared machine's costs
    # drift; the model predicts a session-N folder from the units-K.csv
    # with K not N, each unit's median over them), with files of the
    # two images' sizes (a cost a page depends on the folios of the file).
    mkdir -p "$scratch/model"
    local spcost=("$bin/src/spcost" --size $((1280 * 1024 * 3))
        --size $((12000 * 10000 * 3))) units=0 sun=("${SP_REFERENCE_SUN[@]}")
    ((quick)) && spcost+=(--quick)
    [[ -n $reference_only ]] && sun=()
    for spec in "${sun[@]}"; do
        if ((units < 3)); then
            units=$((units + 1))
            reference_step "model units $units" "${spcost[@]}"
            cp "$scratch/model units $units.log" \
                "$scratch/model/units-$units.csv"
        fi
        # shellcheck disable=SC2086  # the spec's words are the arguments
        reference_sun $spec
        names+=("${spec%% *}")
    done
    if [[ -z $reference_only ]]; then
        reference_step model spreport model \
            --units "$scratch"/model/units-*.csv --out "$scratch/model" \
            "$scratch"/sun-*/session-* "$scratch"/big-*/session-*
        # spcost's own files are gone: the machine and the build that
        # measured the units (the runs it predicts have their own)
        sp_write_env "$scratch/model/env.txt" "" "$bin" \
            "suite=model quick=$quick units=$units runs=$(cd "$scratch" &&
                printf '%s\n' sun-*/session-* big-*/session-* |
                paste -sd,)"
        names+=(model)
    fi
    local -a opts
    for spec in "${SP_REFERENCE_OTHER[@]}"; do
        read -r -a opts <<<"$spec"
        name=${opts[0]}
        opts=("${opts[@]:1}")
        [[ -z $reference_only || ,$reference_only, == *",$name,"* ]] ||
            continue
        # --quick: the suite alone (and the memory limit, kept below the
        # quick file's size), at its tiny sizes
        if ((quick)); then
            opts=("${opts[@]:0:2}" --quick)
            [[ $name == *-perf ]] && opts+=(--perf)
        fi
        if [[ $name == *-perf ]] && ! perf record -q -o /dev/null -- true \
            >/dev/null 2>&1; then
            printf '%s: left out (perf cannot record here)\n' "$name" >&2
            continue
        fi
        if [[ $name == *-memlimit ]]; then
            if ((EUID != 0)); then
                printf '%s: left out (a memory cgroup needs root)\n' \
                    "$name" >&2
                continue
            fi
            ((quick)) && opts+=(--file-size 50331648 --mem-limit 33554432)
        fi
        reference_other "$name" "${opts[1]}" "${opts[@]:2}"
        names+=("$name")
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
    # The documents' figures and generated blocks made again from the new
    # folders; a verdict or a cause the new runs no longer bear is named,
    # for its sentence to be rewritten.
    if [[ $dest -ef $ROOT/results ]]; then
        (cd "$ROOT" && spreport readme --all) ||
            printf 'reference: document sentences to rewrite (above)\n' >&2
    fi
    if [[ -z $reference_only ]]; then
        printf '\nThe Sun study on the 1280x1024 image, warm, %d sessions:\n' \
            "$SP_SESSIONS"
        sed -n '/^| scale/,/^$/p' "$dest/sun-1280x1024-warm-large/sessions.md"
    fi
    printf 'reference: %d folders in %s, %d min %d s\n' "${#names[@]}" \
        "$dest" "$(((SECONDS - t0) / 60))" "$(((SECONDS - t0) % 60))" >&2
}

# sp_sun_sessions_report DIR: DIR's table over its sessions.
sp_sun_sessions_report() {
    spreport sun --quiet --sessions "$1" "$1"/session-*
}
