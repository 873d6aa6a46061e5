# shellcheck shell=bash
# batch.sh: run_experiments.sh --suite batch (sourced): issue 17's batch
# mode against the other ways of scaling many files, and the Sun study's
# "set of image files".
#
# The peers: N photograph-sized images reduced by 4 and a few large ones
# enlarged by 2, each into a folder, by scaleppm's batch (-o DIR/), a shell
# loop of scaleppm, GNU parallel of scaleppm, gm mogrify and a shell loop
# of vips; every command a whole process timed by sprun, its outputs
# removed before each run, the inputs warm (checked), the contenders'
# order rotated by one each round.  Then the batch's peak memory for ten
# times as many names (hard links), to show it bounded.
#
# The set: a homogeneous set (one file under N names, hard links: the same
# name twice would be refused as two inputs writing one output) and a
# heterogeneous one (N different files), each loaded four ways (read into
# a fresh buffer each image, the study's; read reusing its buffer; mmap;
# pread), warm and cold (evicted by spcache, checked); --timings=json
# gives each image's load, scale and release and its faults.

BATCH_WHO=(batch loop parallel gm-mogrify vips-loop)
BATCH_LOADS=(read-fresh read-reuse mmap pread)
# The set's factor: the study's reduce by 4.
BATCH_SET_SCALE=-4

batch_die() {
    printf 'run_experiments.sh: batch: %s\n' "$*" >&2
    exit 1
}

# batch_resident FILE...: "RESIDENT TOTAL" pages of the FILEs, in one
# process (fincore), for sets of hundreds of files.
batch_resident() {
    local page
    page=$(getconf PAGESIZE)
    fincore -b -n -o PAGES,SIZE -- "$@" |
        awk -v p="$page" '{ r += $1; t += int(($2 + p - 1) / p) }
            END { print r + 0, t + 0 }'
}

# batch_ready CACHE FILE...: warm: every page of the FILEs cached,
# re-read until it is (at most 5 times); cold: each evicted (spcache) and
# at most 1% left, checked.  Sets retries.
batch_ready() {
    local cache=$1 f res total
    shift
    retries=0
    if [[ $cache == cold ]]; then
        for f; do "$spcache" evict "$f" || batch_die "$f: cannot evict"; done
        read -r res total < <(batch_resident "$@")
        ((res * 100 <= total)) ||
            batch_die "eviction failed: $res of $total pages still cached"
        return 0
    fi
    read -r res total < <(batch_resident "$@")
    while ((res < total)); do
        ((retries < 5)) ||
            batch_die "$res of $total pages cached after 5 re-reads"
        retries=$((retries + 1))
        cat -- "$@" >/dev/null
        read -r res total < <(batch_resident "$@")
    done
}

# batch_variants BASE DIR N PREFIX: N different images of BASE's size in
# DIR, PREFIX0001.ppm ...: image i is BASE with its rows rotated down by
# i * 7 rows (modulo its height), so that no two are alike (N * 7 < H).
batch_variants() {
    local base=$1 dir=$2 n=$3 prefix=$4 h off rb k i f
    read -r _ _ h _ off _ < <(peers_pnm_info "$base") ||
        batch_die "$base: not a binary PNM"
    rb=$((($(stat -c %s -- "$base") - off) / h))
    # i * 7 modulo H differs for every i < H when 7 does not divide H
    ((n < h && h % 7 != 0)) || batch_die "$base: too few rows for $n"
    for ((i = 1; i <= n; i++)); do
        f=$(printf '%s/%s%04d.ppm' "$dir" "$prefix" "$i")
        k=$(((i * 7) % h * rb))
        {
            head -c "$off" -- "$base"
            tail -c "+$((off + k + 1))" -- "$base"
            # tail reads all that head writes: no SIGPIPE under pipefail
            head -c "$((off + k))" -- "$base" | tail -c "$k"
        } >"$f"
    done
}

# batch_links DIR COUNT PREFIX FILE...: COUNT hard links in DIR,
# PREFIX00001.ppm ..., to the FILEs in turn.
batch_links() {
    local dir=$1 count=$2 prefix=$3 i
    shift 3
    local -a files=("$@")
    for ((i = 0; i < count; i++)); do
        ln -- "${files[i % ${#files[@]}]}" \
            "$(printf '%s/%s%05d.ppm' "$dir" "$prefix" "$i")"
    done
}

# batch_cmd WHO JOB OUTDIR FILE...: into the array cmd, contender WHO
# scaling each FILE (names relative to the folder it runs in) by JOB
# (scaleppm's -s) into OUTDIR under its own name.
cmd=()
batch_cmd() {
    local who=$1 job=$2 o=$3 n=${2#-} pct vips
    shift 3
    if ((job < 0)); then
        pct=$((100 / n))% vips=(subsample "$n" "$n")
    else
        pct=$((100 * job))% vips=(zoom "$job" "$job")
    fi
    # shellcheck disable=SC2016  # the loops' $1... are the inner shell's
    case $who in
    batch) cmd=("$sp" -s "$job" -o "$o/" "$@") ;;
    loop) cmd=(bash -c 'sp=$1 j=$2 o=$3; shift 3
        for f; do "$sp" -s "$j" "$f" "$o/$f" || exit 1; done' \
        loop "$sp" "$job" "$o" "$@") ;;
    parallel) cmd=(parallel --will-cite "$sp" -s "$job" '{}' "$o/{/}" \
        ::: "$@") ;;
    gm-mogrify) cmd=(gm mogrify -output-directory "$o" -sample "$pct" "$@") ;;
    vips-loop) cmd=(bash -c 'v=$1 a=$2 b=$3 o=$4; shift 4
        for f; do vips "$v" "$f" "$o/$f" "$a" "$b" || exit 1; done' \
        vips "${vips[@]}" "$o" "$@") ;;
    *) batch_die "no contender $who" ;;
    esac
}

# batch_time INDIR OUTDIR CMD...: one timed run of CMD in INDIR, into the
# emptied OUTDIR; prints sprun's "wall_ns rss_kb"; CMD's stderr in
# $meta/err.
batch_time() {
    local indir=$1 o=$2
    shift 2
    rm -rf -- "$o"
    mkdir -- "$o"
    [[ $o == /dev/shm/* ]] || sync
    (cd -- "$indir" && "$sprun" -t 600 -- "$@") 2>"$meta/err" ||
        batch_die "${*:1:4} ... failed: $(tail -n 2 "$meta/err")"
}

# batch_peers IMAGE INDIR ORIGINALS OUTDIR JOB WHO...: a warm-up round,
# not recorded (the enlarge's first round took several times the later
# ones'), then RUNS rounds of every contender WHO on INDIR's files
# (ORIGINALS: a folder of the distinct files behind them, checked warm),
# rows into batch.csv.  In the warm-up round each contender's outputs are
# counted, and the scaleppm ones' first output kept to be compared.
batch_peers() {
    local image=$1 indir=$2 orig=$3 o=$4 job=$5 r k who res wall rss n
    local -a files whos ref
    shift 5
    mapfile -t files < <(cd -- "$indir" && ls -- *.ppm)
    n=${#files[@]}
    for ((r = 0; r <= runs; r++)); do
        printf 'batch: %s x %d, -s %s, round %d of %d%s\n' "$image" "$n" \
            "$job" "$r" "$runs" "$( ((r)) || echo ' (warm-up)')" >&2
        whos=("$@")
        k=$(((r - 1 + ${sp_offset:-0} + ${#whos[@]}) % ${#whos[@]}))
        whos=("${whos[@]:k}" "${whos[@]:0:k}")
        for who in "${whos[@]}"; do
            batch_ready warm "$orig"/*.ppm
            batch_cmd "$who" "$job" "$o" "${files[@]}"
            res=$(batch_time "$indir" "$o" "${cmd[@]}") || exit 1
            read -r wall rss _ <<<"$res"
            ((r == 0)) || printf '%s,%d,%s,%s,%d,%s,%s\n' "$image" "$n" \
                "$job" "$who" "$r" "$wall" "$rss" >>"$out/batch.csv"
            ((r == 0)) || continue
            k=$(find "$o" -type f | wc -l)
            ((k == n)) || batch_die "$who wrote $k outputs of $n"
            [[ $who == gm-* || $who == vips-* ]] ||
                cp -- "$o/${files[0]}" "$meta/first-$who"
        done
    done
    rm -rf -- "$o"
    ref=("$meta"/first-*)
    for who in "${ref[@]:1}"; do
        cmp -s -- "${ref[0]}" "$who" ||
            batch_die "${who##*first-} and ${ref[0]##*first-} differ"
    done
    rm -f -- "${ref[@]}"
}

# batch_load_args LOAD: scaleppm's options for a BATCH_LOADS entry.
batch_load_args() {
    case $1 in
    read-fresh) echo --io read --read-buffer fresh ;;
    read-reuse) echo --io read --read-buffer reuse ;;
    *) echo --io "$1" ;;
    esac
}

# batch_json_rows PREFIX FILE: a CSV row for each --timings=json record in
# FILE: PREFIX, its number, the span (load + scale + release), each
# phase, the span's minor and major faults, the threads.
batch_json_rows() {
    awk -v p="$1" '
        function v(k) {
            if (!match($0, "\"" k "\":[0-9]+")) { bad = 1; return 0 }
            return substr($0, RSTART + length(k) + 3) + 0
        }
        /^\{/ {
            n++; bad = 0
            l = v("load_ns"); s = v("scale_ns"); r = v("release_ns")
            w = v("write_ns"); t = v("threads")
            mi = v("load_minflt") + v("scale_minflt") + v("release_minflt")
            ma = v("load_majflt") + v("scale_majflt") + v("release_majflt")
            if (bad) { print "bad record " n > "/dev/stderr"; exit 1 }
            printf "%s,%d,%d,%d,%d,%d,%d,%d,%d,%d\n", p, n, l + s + r, l,
                s, r, w, mi, ma, t
        }' "$2"
}

# batch_set NAME INDIR OUTDIR DISTINCT...: the set study on INDIR's files
# (DISTINCT: the distinct files behind them, evicted or checked warm):
# warm and cold, a warm-up round then RUNS rounds of the four loads in an
# order rotated by one a round.
batch_set() {
    local name=$1 indir=$2 o=$3 cache r k load res wall rss n got
    local -a files loads opts
    shift 3
    mapfile -t files < <(cd -- "$indir" && ls -- *.ppm)
    n=${#files[@]}
    for cache in warm cold; do
        printf 'batch: the %s set of %d, %s, %d rounds\n' "$name" "$n" \
            "$cache" "$runs" >&2
        for ((r = 0; r <= runs; r++)); do
            k=$(((r + ${sp_offset:-0}) % ${#BATCH_LOADS[@]}))
            loads=("${BATCH_LOADS[@]:k}" "${BATCH_LOADS[@]:0:k}")
            for load in "${loads[@]}"; do
                read -r -a opts <<<"$(batch_load_args "$load")"
                batch_ready "$cache" "$@"
                res=$(batch_time "$indir" "$o" "$sp" "${opts[@]}" -q \
                    --timings=json -s "$BATCH_SET_SCALE" -o "$o/" \
                    "${files[@]}") || exit 1
                ((r > 0)) || continue
                read -r wall rss _ <<<"$res"
                got=$(grep -c '^{' "$meta/err" || true)
                ((got == n)) || batch_die "$load: $got records of $n"
                printf '%s,%d,%s,%s,%d,%s,%s,%d\n' "$name" "$n" "$cache" \
                    "$load" "$r" "$wall" "$rss" "$retries" \
                    >>"$out/batch-set-runs.csv"
                batch_json_rows "$name,$cache,$load,$r" "$meta/err" \
                    >>"$out/batch-set.csv" || batch_die "$load: bad records"
            done
        done
    done
    rm -rf -- "$o"
}

# batch_suite ROOT BIN OUT RUNS QUICK: the suite, into OUT: batch.csv,
# batch-set.csv, batch-set-runs.csv, batch.md, batch.png, batch-set.png
# and env.txt.  Runs in a subshell: its folders go with it, however it
# ends.
batch_suite() (
    local root=$1 bin out runs=$4 quick=$5
    # absolute: the contenders run in their inputs' folder
    bin=$(cd -- "$2" && pwd) out=$(cd -- "$3" && pwd)
    local sp=$bin/src/scaleppm sprun=$bin/src/sprun spcache=$bin/src/spcache
    local small=1280x1024 nsmall=500 big=6000x4000 nbig=20 nset=100
    local tmp shm meta base t bigout where retries=0
    ((quick)) && small=320x256 nsmall=20 big=600x400 nbig=3 nset=8
    for t in "$sp" "$sprun" "$spcache"; do
        [[ -x $t ]] || batch_die "$t: not built"
    done
    for t in parallel gm vips fincore; do
        command -v "$t" >/dev/null || batch_die "$t: not installed"
    done
    tmp=$(mktemp -d "${TMPDIR:-/tmp}/scaleppm-batch.XXXXXX")
    shm=$(mktemp -d /dev/shm/scaleppm-batch.XXXXXX)
    # shellcheck disable=SC2064  # expand the folders now
    trap "rm -rf -- '$tmp' '$shm'" EXIT
    trap 'exit 130' INT TERM
    meta=$tmp/meta
    mkdir -- "$meta" "$tmp/small" "$tmp/big" "$tmp/many" "$tmp/same" \
        "$tmp/mixed"
    printf 'batch: making the inputs in %s\n' "$tmp" >&2
    base=$(sp_image_of "$root" "$bin" "$small") || batch_die "no $small"
    batch_variants "$base" "$tmp/small" "$nsmall" im
    batch_links "$tmp/many" $((nsmall * 10)) l "$tmp/small"/*.ppm
    batch_links "$tmp/same" "$nset" h "$tmp/small/im0001.ppm"
    batch_links "$tmp/mixed" "$nset" m "$tmp/small"/*.ppm
    t=$(sp_image_of "$root" "$bin" "$big") || batch_die "no $big"
    batch_variants "$t" "$tmp/big" "$nbig" big
    sync
    # The enlarged outputs on tmpfs where memory holds them twice over
    # beside the inputs, else on $TMPDIR's filesystem.
    t=$((${big%x*} * ${big#*x} * 3 * (4 + 1) * nbig))
    bigout=$tmp/out where="$(df -PT "$tmp" | awk 'NR == 2 { print $2 }')"
    if ((2 * t < $(awk '/^MemAvailable:/ { print $2 }' /proc/meminfo) * 1024))
    then
        bigout=$shm/big where=tmpfs
    fi
    printf 'image,files,job,contender,round,wall_ns,rss_kb\n' \
        >"$out/batch.csv"
    printf 'set,files,cache,load,round,wall_ns,rss_kb,retries\n' \
        >"$out/batch-set-runs.csv"
    printf 'set,cache,load,round,file,span_ns,load_ns,scale_ns,%s\n' \
        release_ns,write_ns,minflt,majflt,threads >"$out/batch-set.csv"
    batch_peers "$small" "$tmp/small" "$tmp/small" "$shm/out" -4 \
        "${BATCH_WHO[@]}"
    batch_peers "$big" "$tmp/big" "$tmp/big" "$bigout" 2 "${BATCH_WHO[@]}"
    batch_peers "$small" "$tmp/many" "$tmp/small" "$shm/out" -4 batch
    batch_set homogeneous "$tmp/same" "$shm/out" "$tmp/small/im0001.ppm"
    batch_set heterogeneous "$tmp/mixed" "$shm/out" "$tmp/mixed"/*.ppm
    spreport batch --outputs "tmpfs; enlarged: $where" "$out" ||
        batch_die "the report failed; the rows are in $out"
    sp_write_env "$out/env.txt" "$base" "$bin" "suite=batch runs=$runs \
quick=$quick reduce=${small}x$nsmall enlarge=${big}x$nbig \
memory=${small}x$((nsmall * 10)) set=${small}x$nset \
set_scale=$BATCH_SET_SCALE outputs=tmpfs enlarged_outputs=$where \
warmup_rounds=1 \
parallel=$(parallel --version | awk 'NR == 1 { print $3 }') \
gm=$(gm version | awk 'NR == 1 { print $2 }') \
vips=$(vips --version | awk '{ print $1 }' | sed 's/^vips-//')"
    cat "$out/batch.md"
)
