# shellcheck shell=bash
# threads.sh: run_experiments.sh --suite threads (sourced): scaleppm's
# default thread count against -t 1, 2, 4 and 8 on the peers suite's kinds of
# job, into a pipe, a tmpfs file and a file on $TMPDIR's filesystem, on a
# quiet machine and on one with a busy loop on every CPU; and, into the
# pipe on the quiet machine, the two pipe targets of issue 16 against
# vips zoom and pamenlarge, and the floor of the large one (sppipe).

# THREADS_JOBS: the jobs of each image, as scaleppm's -s (and --filter).
THREADS_SMALL_JOBS=(-2 -4 2 4 box-2)
THREADS_LARGE_JOBS=(-2 2 box-2)
THREADS_VARIANTS=(default t1 t2 t4 t8)

# threads_busy N: start N busy loops in the background; their pids in
# threads_busy_pids.
threads_busy_pids=()
threads_busy() {
    local i
    for ((i = 0; i < $1; i++)); do
        (while :; do :; done) &
        threads_busy_pids+=($!)
    done
}

threads_unbusy() {
    ((${#threads_busy_pids[@]} == 0)) && return
    kill "${threads_busy_pids[@]}" 2>/dev/null || true
    wait "${threads_busy_pids[@]}" 2>/dev/null || true
    threads_busy_pids=()
}

# threads_cmd SP WHO JOB IN OUT SIZE: into the array cmd, the command for
# contender WHO (a THREADS_VARIANTS entry, vips-zoom or pamenlarge) doing
# JOB on IN into OUT ("-": standard output); or, for floor-vmsplice and
# floor-write, sppipe writing as many bytes of JOB's output rows (IN is
# SIZE, WxH, 8-bit RGB), to know
# what the pipe alone costs.
cmd=()
threads_cmd() {
    local sp=$1 who=$2 job=$3 in=$4 out=$5
    case $who in
    vips-zoom) [[ $out == - ]] && out=.ppm
        cmd=(vips zoom "$in" "$out" "$job" "$job") ;;
    pamenlarge) cmd=(pamenlarge "$job" "$in") ;;
    floor-*)  # the raster scaleppm writes (8-bit RGB), as rows
        local w=${6%x*} h=${6#*x}
        cmd=("${sp%/scaleppm}/sppipe")
        [[ $who == floor-write ]] && cmd+=(--write)
        cmd+=("$((w * job * h * job * 3))" "$((w * job * 3))") ;;
    *)
        cmd=("$sp")
        [[ $who == default ]] || cmd+=(-t "${who#t}")
        case $job in
        box*) cmd+=(--filter box -s "${job#box}") ;;
        *) cmd+=(-s "$job") ;;
        esac
        cmd+=("$in" "$out") ;;
    esac
}

# threads_time SPRUN OUTPUT DEST CMD...: one timed run of CMD into
# OUTPUT (pipe: through `| cat`, whole pipeline; else the file DEST,
# removed first, as are the dirty pages of the last by a sync).  Prints
# sprun's "wall_ns rss_kb".
threads_time() {
    local sprun=$1 output=$2 dest=$3
    shift 3
    if [[ $output == pipe ]]; then
        # shellcheck disable=SC2016  # $@ is the inner shell's
        "$sprun" -t 600 -- bash -c 'set -o pipefail; "$@" | cat >/dev/null' \
            threads "$@"
    else
        rm -f -- "$dest"
        sync
        "$sprun" -t 600 -- "$@"
    fi
}

# threads_suite ROOT BIN OUT RUNS QUICK: RUNS rounds; in each, for every
# image, job, output and load, every contender once, their order rotated
# by one each round.  Writes OUT/threads.csv (image, job, output, load,
# contender, round, wall_ns, rss_kb) and, through spreport, threads.md.
threads_suite() {
    local root=$1 bin=$2 out=$3 runs=$4 quick=$5
    local sp=$bin/src/scaleppm sprun=$bin/src/sprun cpus tmp shm r size in
    local output load job who res wall rss dest i k disk
    local -a sizes jobs whos
    sizes=(1280x1024 12000x10000)
    ((quick)) && sizes=(320x256 2000x1500)
    cpus=$(nproc)
    tmp=$(mktemp -d "${TMPDIR:-/tmp}/scaleppm-threads.XXXXXX")
    shm=$(mktemp -d /dev/shm/scaleppm-threads.XXXXXX)
    disk=$(df -PT "$tmp" | awk 'NR == 2 { print $2 " on " $1 }')
    printf 'image,job,output,load,contender,round,wall_ns,rss_kb\n' \
        >"$out/threads.csv"
    for size in "${sizes[@]}"; do
        in=$(sp_image_of "$root" "$bin" "$size") || return 1
    done
    if ! threads_rounds; then
        threads_unbusy
        rm -rf -- "$tmp" "$shm"
        return 1
    fi
    rm -rf -- "$tmp" "$shm"
    spreport threads --cpus "$cpus" --disk "$disk" "$out"
}

# threads_rounds: threads_suite's rounds (its locals in scope).
threads_rounds() {
    for ((r = 1; r <= runs; r++)); do
        printf 'threads: round %d of %d\n' "$r" "$runs" >&2
        for load in quiet loaded; do
            [[ $load == loaded ]] && threads_busy "$cpus"
            for i in "${!sizes[@]}"; do
                size=${sizes[$i]}
                in=$(sp_image_of "$root" "$bin" "$size")
                cat -- "$in" >/dev/null
                jobs=("${THREADS_SMALL_JOBS[@]}")
                ((i == 1)) && jobs=("${THREADS_LARGE_JOBS[@]}")
                for job in "${jobs[@]}"; do
                    for output in pipe tmpfs disk; do
                        whos=("${THREADS_VARIANTS[@]}")
                        if [[ $output == pipe && $load == quiet &&
                            $job == 2 ]]; then
                            who=pamenlarge
                            ((i == 1)) && who=vips-zoom
                            command -v "${who%-zoom}" >/dev/null &&
                                whos+=("$who")
                            ((i == 1)) && whos+=(floor-vmsplice floor-write)
                        fi
                        k=$(((r + ${sp_offset:-0}) % ${#whos[@]}))
                        whos=("${whos[@]:k}" "${whos[@]:0:k}")
                        dest=$shm/out.ppm
                        [[ $output == disk ]] && dest=$tmp/out.ppm
                        for who in "${whos[@]}"; do
                            threads_cmd "$sp" "$who" "$job" "$in" \
                                "$([[ $output == pipe ]] && echo - ||
                                    echo "$dest")" "$size"
                            res=$(threads_time "$sprun" "$output" "$dest" \
                                "${cmd[@]}") || {
                                printf 'threads: %s failed\n' "${cmd[*]}" >&2
                                return 1
                            }
                            read -r wall rss _ <<<"$res"
                            printf '%s,%s,%s,%s,%s,%d,%s,%s\n' "$size" \
                                "$job" "$output" "$load" "$who" "$r" \
                                "$wall" "$rss" >>"$out/threads.csv"
                        done
                        rm -f -- "$dest"
                    done
                done
            done
            threads_unbusy
        done
    done
}
