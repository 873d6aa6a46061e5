# shellcheck shell=bash
# compressed.sh: run_experiments.sh --suite compressed (sourced): the paths
# suite's study (paths.sh) on compressed inputs, issue 28's item 6.  The
# Sun study's image and the largest of the photographs (photos.sh), each
# as PPM, JPEG and PNG, loaded by read, mmap and pread, the decode inside
# the span (load + scale + release from --timings): does mapping still win
# when decoding dominates?  Warm and cold, the paths' order rotated by one
# a round, a warm-up round first, output to /dev/null.

# The jobs: a name, then scaleppm's options.
COMPRESSED_JOBS=("reduce 2|-s -2" "reduce 8|-s -8")
COMPRESSED_FORMATS=(ppm jpeg png)

# compressed_inputs DIR LABEL PPM [JPEG]: PPM as DIR/LABEL.ppm, .jpg (JPEG,
# or cjpeg -quality 90 of PPM) and .png (pnmtopng); prints nothing.
compressed_inputs() {
    local dir=$1 label=$2 ppm=$3 jpeg=${4:-}
    cp -- "$ppm" "$dir/$label.ppm"
    if [[ -n $jpeg ]]; then
        cp -- "$jpeg" "$dir/$label.jpg"
    else
        cjpeg -quality 90 "$ppm" >"$dir/$label.jpg"
    fi
    pnmtopng "$ppm" >"$dir/$label.png" 2>/dev/null
}

# compressed_suite ROOT BIN OUT RUNS QUICK: for each image, format, cache
# state and job, RUNS rounds of the three paths; writes OUT/compressed.csv,
# compressed.md (spreport compressed) and env.txt.  Runs in a subshell: its
# folder goes with it, however it ends.
compressed_suite() (
    local root=$1 bin=$2 out=$3 runs=$4 quick=$5
    # shellcheck disable=SC2034  # paths_one's
    local sp=$bin/src/scaleppm sprun=$bin/src/sprun spcache=$bin/src/spcache
    local tmp sun big label fmt in cache spec size labels=()
    tmp=$(mktemp -d "${TMPDIR:-/tmp}/scaleppm-compressed.XXXXXX")
    # shellcheck disable=SC2064  # expand the folder now
    trap "rm -rf -- '$tmp'" EXIT
    trap 'exit 130' INT TERM
    mkdir -- "$tmp/photos"
    if ((quick)); then
        sun=$(sp_image_of "$root" "$bin" 320x256) || return 1
        "$bin/images/genimage" -o "$tmp/big.ppm" 640 400 >/dev/null
        compressed_inputs "$tmp" photo "$tmp/big.ppm"
        big=generated
    else
        sun=$(sp_image_of "$root" "$bin" 1280x1024) || return 1
        photos_collect "$tmp/photos" "$tmp/photos.csv"
        big=$(photos_largest "$tmp/photos.csv" jpeg)
        djpeg -ppm "$tmp/photos/$big" >"$tmp/big.ppm"
        compressed_inputs "$tmp" photo "$tmp/big.ppm" "$tmp/photos/$big"
        big=$(awk -F, -v n="$big" '$1 == n { print $2 }' "$tmp/photos.csv")
        rm -rf -- "$tmp/photos"
    fi
    compressed_inputs "$tmp" sun "$sun"
    labels=(sun photo)
    printf 'input,format,size,job,cache,io,round,span_ns,load_ns,%s\n' \
        'scale_ns,release_ns,minflt,wall_ns,maxrss_kb,threads,io_used' \
        >"$out/compressed.csv"
    for label in "${labels[@]}"; do
        size=$(photos_size "$tmp/$label.ppm" | tr ' ' x)
        for fmt in "${COMPRESSED_FORMATS[@]}"; do
            in=$tmp/$label.${fmt/jpeg/jpg}
            for cache in warm cold; do
                for spec in "${COMPRESSED_JOBS[@]}"; do
                    printf 'compressed: %s %s, %s, %s, %d rounds\n' \
                        "$label" "$fmt" "${spec%%|*}" "$cache" "$runs" >&2
                    # shellcheck disable=SC2086  # the job's options
                    paths_rounds "$in" "$cache" \
                        "$label,$fmt,$size,${spec%%|*},$cache" \
                        "$out/compressed.csv" 1 ${spec#*|} || return 1
                done
            done
        done
    done
    rm -f -- "$out/paths.err"
    spreport compressed "$out/compressed.csv" "$out/compressed.md" ||
        return 1
    # every file the runs read: each image as PPM, JPEG and PNG
    local -a read_in=()
    for label in "${labels[@]}"; do
        for fmt in "${COMPRESSED_FORMATS[@]}"; do
            read_in+=("$tmp/$label.${fmt/jpeg/jpg}")
        done
    done
    sp_write_env "$out/env.txt" "${read_in[0]}" "$bin" "suite=compressed \
runs=$runs quick=$quick photo=$big jpeg=cjpeg-q90-of-ppm png=pnmtopng" \
        "${read_in[@]:1}"
    cat "$out/compressed.md"
)
