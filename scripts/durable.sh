# shellcheck shell=bash
# durable.sh: run_experiments.sh --suite durable (sourced): what it costs
# that scaleppm makes the replacement of an existing output durable (an
# fsync of the new file before the rename, of its directory after), against
# writing a new file, which is not fsynced.

# durable_suite ROOT BIN OUT RUNS QUICK: for the 1280x1024 image and the
# 12000x10000 one (320x256 and 2000x1500 with QUICK), RUNS rounds of
# `scaleppm -s 1 IN OUT` into $TMPDIR (ext4 here), alternating which case
# goes first: "new" (OUT removed first) and "replace" (OUT there, from the
# round before).  Every timed run starts after a sync, so that neither
# pays for the other's dirty pages.  Writes OUT/durable.csv (size, case,
# round, wall_ns, rss_kb) and, through spreport, OUT/durable.md (medians,
# the difference).
durable_suite() {
    local root=$1 bin=$2 out=$3 runs=$4 quick=$5
    local sp=$bin/src/scaleppm sprun=$bin/src/sprun sizes size in dir r c res
    local wall rss fs
    sizes=(1280x1024 12000x10000)
    ((quick)) && sizes=(320x256 2000x1500)
    dir=$(mktemp -d "${TMPDIR:-/tmp}/scaleppm-durable.XXXXXX")
    printf 'size,case,round,wall_ns,rss_kb\n' >"$out/durable.csv"
    for size in "${sizes[@]}"; do
        in=$(sp_image_of "$root" "$bin" "$size") || return 1
        cat -- "$in" >/dev/null
        "$sp" -s 1 "$in" "$dir/out.ppm"  # the file the first replace replaces
        printf 'durable: %s, %d rounds\n' "$size" "$runs" >&2
        for ((r = 1; r <= runs; r++)); do
            for c in $( ((r % 2)) && echo new replace || echo replace new); do
                [[ $c == new ]] && rm -f -- "$dir/out.ppm"
                sync
                res=$("$sprun" -t 600 -- "$sp" -s 1 "$in" "$dir/out.ppm") || {
                    rm -rf -- "$dir"
                    printf 'durable: scaleppm failed on %s\n' "$size" >&2
                    return 1
                }
                read -r wall rss _ <<<"$res"
                printf '%s,%s,%d,%s,%s\n' "$size" "$c" "$r" "$wall" "$rss" \
                    >>"$out/durable.csv"
            done
        done
    done
    fs=$(df -PT "$dir" | awk 'NR == 2 { print $2 " on " $1 }')
    rm -rf -- "$dir"
    spreport durable --filesystem "$fs" "$out"
}
