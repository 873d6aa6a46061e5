# shellcheck shell=bash
# paths.sh: run_experiments.sh --suite paths (sourced): scaleppm's three
# load paths, read, mmap and pread (the default's), side by side on the
# same jobs: the study's span (load + scale + release, from --timings),
# the whole process and its peak memory, for small to large images, warm
# and cold.  What README.md's "Choosing read, mmap or pread" quotes.

# The jobs: a name, then scaleppm's options.
PATHS_JOBS=("reduce 2|-s -2" "reduce 4|-s -4" "reduce 8|-s -8"
    "box 2|--filter box -s -2" "box 4|--filter box -s -4"
    "enlarge 2|-s 2" "enlarge 4|-s 4" "copy|-s 1")
# The cold cases: the reduces of the two largest images.
PATHS_COLD_JOBS=("reduce 2|-s -2" "reduce 4|-s -4" "reduce 8|-s -8")

# paths_one IN IO CACHE OPTION...: one run of scaleppm --io IO OPTION...
# --timings IN /dev/null, timed by sprun (sp, sprun, spcache and out are
# the caller's); warm: IN read in first; cold: evicted (spcache), and
# checked.  Sets paths_row, the CSV fields span_ns ... threads of
# paths.csv, and paths_io, the path the record says was used.
paths_row="" paths_io=""
paths_one() {
    local in=$1 io=$2 cache=$3 line res wall rss pair
    local -A kv
    shift 3
    if [[ $cache == cold ]]; then
        # at most 1% left, checked (spcache evict)
        "$spcache" evict "$in" || return 1
    else
        cat -- "$in" >/dev/null
    fi
    res=$("$sprun" -t 600 -- "$sp" --io "$io" "$@" --timings "$in" \
        /dev/null 2>"$out/paths.err") || {
        printf 'paths: scaleppm failed: %s\n' "$(cat "$out/paths.err")" >&2
        return 1
    }
    read -r wall rss _ <<<"$res"
    line=$(tail -n 1 "$out/paths.err")
    for pair in $line; do kv[${pair%%=*}]=${pair#*=}; done
    # shellcheck disable=SC2034  # the compressed suite's
    paths_io=${kv[io]}
    paths_row=$(printf '%d,%s,%s,%s,%d,%s,%s,%s' \
        "$((kv[load_ns] + kv[scale_ns] + kv[release_ns]))" \
        "${kv[load_ns]}" "${kv[scale_ns]}" "${kv[release_ns]}" \
        "$((kv[load_minflt] + kv[scale_minflt] + kv[release_minflt]))" \
        "$wall" "$rss" "${kv[threads]}")
}

# paths_rounds IN CACHE PREFIX CSV IO_USED OPTION...: a warm-up round
# then RUNS rounds (the caller's runs) of the three paths on IN, in an
# order rotated by one a round (paths_one); a row a run into CSV: PREFIX,
# the path, the round, paths_row, and paths_io too when IO_USED is set.
paths_rounds() {
    local in=$1 cache=$2 prefix=$3 csv=$4 with=$5 r k io
    local paths=(read mmap pread)
    shift 5
    for ((r = 0; r <= runs; r++)); do
        for ((k = 0; k < 3; k++)); do
            io=${paths[(r + k + ${sp_offset:-0}) % 3]}
            paths_one "$in" "$io" "$cache" "$@" || return 1
            ((r > 0)) || continue  # round 0 warms up
            printf '%s,%s,%d,%s%s\n' "$prefix" "$io" "$r" "$paths_row" \
                "${with:+,$paths_io}" >>"$csv"
        done
    done
}

# paths_suite ROOT BIN OUT RUNS QUICK: for each image, cache state and job,
# RUNS rounds; in each round the three paths run once each, in an order
# rotated by one a round.  Output to /dev/null (the write is not what is
# compared), default threads.  Warm: the input read in first; cold: evicted
# before every run (spcache), and checked.  Writes OUT/paths.csv, then the
# tables (spreport paths).
paths_suite() {
    local root=$1 bin=$2 out=$3 runs=$4 quick=$5
    local sp=$bin/src/scaleppm sprun=$bin/src/sprun spcache=$bin/src/spcache
    local sizes=(64x64 320x256 1280x1024 12000x10000) size in cache spec
    local jobs
    ((quick)) && sizes=(64x64 320x256)
    printf 'size,job,cache,io,round,span_ns,load_ns,scale_ns,release_ns,' \
        >"$out/paths.csv"
    printf 'minflt,wall_ns,maxrss_kb,threads\n' >>"$out/paths.csv"
    for size in "${sizes[@]}"; do
        in=$(sp_image_of "$root" "$bin" "$size") || return 1
        for cache in warm cold; do
            jobs=("${PATHS_JOBS[@]}")
            if [[ $cache == cold ]]; then
                [[ $size == "${sizes[-1]}" || $size == "${sizes[-2]}" ]] ||
                    continue
                jobs=("${PATHS_COLD_JOBS[@]}")
            fi
            for spec in "${jobs[@]}"; do
                printf 'paths: %s, %s, %s, %d rounds\n' "$size" \
                    "${spec%%|*}" "$cache" "$runs" >&2
                # shellcheck disable=SC2086  # the job's options
                paths_rounds "$in" "$cache" "$size,${spec%%|*},$cache" \
                    "$out/paths.csv" "" ${spec#*|} || return 1
            done
        done
    done
    rm -f -- "$out/paths.err"
    spreport paths "$out/paths.csv" "$out/paths.md"
}
