#!/usr/bin/env bash
# ab.sh: two builds of scaleppm against each other, old and new, in one
# session: issue 38's targets for a change of the library's shape.
#
#   scripts/ab.sh [--quick] [--runs R] [--secs S] OLD_BUILD NEW_BUILD OUT
#
# OLD_BUILD and NEW_BUILD are CMake build trees (src/scaleppm,
# src/scaleppm-serve, src/sprun, images/genimage).  Three parts:
#   cli     the peers' jobs (scripts/peers.sh) on the Sun study's size and
#           on 12000x10000, each a whole process timed by the new build's
#           sprun, old and new alternating (which goes first alternates
#           by round), the output to /dev/null; before timing, both
#           builds' outputs of each job compared byte for byte.
#   server  throughput at W = 8 (wrk, closed loop, -c 8) on the Sun
#           study's image reduced by 4, for each load path, a fresh
#           server a cell, old and new alternating; the server on CPU 1
#           and wrk on CPU 0 where there are two.
#   strace  each build's server under `strace -f -c` while 1,000
#           requests (curl, one connection each, one at a time) are
#           answered: the system calls a request costs, and whether any
#           file is created, linked or unlinked per request.
# Rows: OUT/ab-cli.csv, OUT/ab-server.csv, OUT/ab-strace.csv, the
# machine and both builds in OUT/env.txt; the report,
# OUT/ab.md, is `spreport ab OUT`.  --quick: 2 runs, 2-second cells, the
# small image alone, 100 requests traced (a smoke test, not a
# measurement).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=scripts/report.sh
. "$ROOT/scripts/report.sh"

die() {
    printf 'ab.sh: %s\n' "$*" >&2
    exit 1
}

usage() {
    sed -n '4p' "${BASH_SOURCE[0]}" | sed 's/^# *//; s/^/usage: /' >&2
    exit 2
}

runs=10 secs=10 quick=0 requests=1000
while (($#)); do
    case $1 in
    --quick) quick=1 runs=2 secs=2 requests=100; shift ;;
    --runs) runs=${2:?}; shift 2 ;;
    --secs) secs=${2:?}; shift 2 ;;
    -h | --help) usage ;;
    --) shift; break ;;
    -*) usage ;;
    *) break ;;
    esac
done
(($# == 3)) || usage
old=$(cd "$1" && pwd) new=$(cd "$2" && pwd)
mkdir -p "$3"
out=$(cd "$3" && pwd)
for b in "$old" "$new"; do
    for f in src/scaleppm src/scaleppm-serve; do
        [[ -x $b/$f ]] || die "$b/$f: not built"
    done
done
sprun=$new/src/sprun gen=$new/images/genimage
[[ -x $sprun && -x $gen ]] || die "$new: sprun or genimage not built"
for t in wrk curl strace taskset pkill; do
    command -v "$t" >/dev/null || die "$t: not installed"
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/ab.XXXXXX")
srv_pid=""
cleanup() {
    [[ -z $srv_pid ]] || kill -KILL "$srv_pid" 2>/dev/null || true
    rm -rf -- "$tmp"
}
trap cleanup EXIT

cpus=$(nproc)
sizes=(1280x1024 12000x10000)
((quick)) && sizes=(1280x1024)
jobs=(reduce2 reduce3 reduce4 reduce8 enlarge2 enlarge4 box2 box4)

# job_args JOB: scaleppm's options for one of the peers' jobs.
job_args() {
    local n=${1//[a-z]/}
    case $1 in
    reduce*) echo "-s -$n" ;;
    enlarge*) echo "-s $n" ;;
    box*) echo "--filter box -s -$n" ;;
    esac
}

# build_name BUILD: old or new.
build_name() { [[ $1 == "$old" ]] && echo old || echo new; }

# --- cli ---
printf 'build,size,job,round,wall_ns,maxrss_kb\n' >"$out/ab-cli.csv"
for size in "${sizes[@]}"; do
    in=$tmp/in-$size.ppm
    "$gen" "${size%x*}" "${size#*x}" >"$in" || die "genimage $size failed"
    for job in "${jobs[@]}"; do
        # shellcheck disable=SC2207  # job_args' words are the options
        args=($(job_args "$job"))
        # Byte for byte, old against new (the hash of standard output).
        h_old=$("$old/src/scaleppm" "${args[@]}" "$in" - | sha256sum)
        h_new=$("$new/src/scaleppm" "${args[@]}" "$in" - | sha256sum)
        [[ $h_old == "$h_new" ]] ||
            die "$size $job: the builds' outputs differ"
        for ((r = 1; r <= runs; r++)); do
            order=("$old" "$new")
            ((r % 2)) || order=("$new" "$old")
            for b in "${order[@]}"; do
                read -r wall rss _ < <("$sprun" -- "$b/src/scaleppm" \
                    "${args[@]}" "$in" -) || die "$size $job: run failed"
                printf '%s,%s,%s,%d,%s,%s\n' "$(build_name "$b")" "$size" \
                    "$job" "$r" "$wall" "$rss" >>"$out/ab-cli.csv"
            done
        done
        printf 'ab.sh: cli %s %s done\n' "$size" "$job" >&2
    done
    rm -f -- "$in"
done

# --- server ---
www=$tmp/www
mkdir -p "$www"
"$gen" 1280 1024 >"$www/sun.ppm" || die "genimage 1280x1024 failed"

# serve_start BUILD [WRAPPER...]: BUILD's server on a free port, its
# port into port.
serve_start() {
    local b=$1 log=$tmp/serve.log pre=() i
    shift
    rm -f -- "$log"
    ((cpus >= 2)) && pre=(taskset -c 1)
    "${pre[@]}" "$@" "$b/src/scaleppm" serve --root "$www" \
        --listen 127.0.0.1:0 --allow-io --quiet --workers 32 --queue 64 \
        >/dev/null 2>"$log" &
    srv_pid=$!
    for ((i = 0; i < 400; i++)); do
        port=$(sed -n 's|.*listening on http://127\.0\.0\.1:\([0-9]*\)/$|\1|p' \
            "$log" 2>/dev/null || true)
        [[ -n $port ]] && return 0
        kill -0 "$srv_pid" 2>/dev/null || break
        sleep 0.05
    done
    die "no server: $(tail -n 2 "$log")"
}

# serve_stop: the server stopped (SIGTERM); under strace, the server
# (strace's child) is stopped, and strace then writes its table and exits.
serve_stop() {
    pkill -TERM -P "$srv_pid" 2>/dev/null || kill -TERM "$srv_pid" 2>/dev/null ||
        true
    wait "$srv_pid" 2>/dev/null || true
    srv_pid=""
}

printf 'build,io,round,w,requests,duration_us,errors\n' >"$out/ab-server.csv"
for io in read mmap pread; do
    for ((r = 1; r <= runs; r++)); do
        order=("$old" "$new")
        ((r % 2)) || order=("$new" "$old")
        for b in "${order[@]}"; do
            serve_start "$b"
            pre=()
            ((cpus >= 2)) && pre=(taskset -c 0)
            line=$("${pre[@]}" wrk -t 1 -c 8 -d "${secs}s" --timeout 40s \
                -s "$ROOT/scripts/server.lua" "http://127.0.0.1:$port" -- \
                "/sun.ppm?s=-4&io=$io" | grep '^requests=') ||
                die "wrk failed"
            serve_stop
            declare -A kv=()
            for pair in $line; do kv[${pair%%=*}]=${pair#*=}; done
            errors=$((kv[connect] + kv[read] + kv[write] + kv[status] +
                kv[timeout]))
            printf '%s,%s,%d,8,%s,%s,%d\n' "$(build_name "$b")" "$io" "$r" \
                "${kv[requests]}" "${kv[duration_us]}" "$errors" \
                >>"$out/ab-server.csv"
        done
    done
    printf 'ab.sh: server %s done\n' "$io" >&2
done

# --- strace ---
printf 'build,requests,syscall,calls\n' >"$out/ab-strace.csv"
for b in "$old" "$new"; do
    trace=$tmp/strace.txt
    serve_start "$b" strace -f -c -o "$trace"
    urls=$tmp/urls
    : >"$urls"
    for ((i = 0; i < requests; i++)); do
        printf 'url = "http://127.0.0.1:%s/sun.ppm?s=-4&io=mmap"\noutput = "/dev/null"\n' \
            "$port" >>"$urls"
    done
    curl -s -f -K "$urls" || die "curl: a request failed"
    serve_stop
    # strace -c's table: calls in the 4th column (5th when errors are
    # counted), the system call's name last.
    awk -v b="$(build_name "$b")" -v n="$requests" '
        $1 ~ /^[0-9.]+$/ && NF >= 5 { printf "%s,%d,%s,%s\n", b, n, $NF, $4 }
    ' "$trace" >>"$out/ab-strace.csv"
done
sp_write_env "$out/env.txt" "" "$new" "scripts/ab.sh: runs=$runs secs=$secs \
requests=$requests quick=$quick; new: $new; old: $old"
{
    printf 'the old build:\n'
    sp_build_lines "$old"
} >>"$out/env.txt"
printf 'ab.sh: rows in %s\n' "$out" >&2
spreport ab "$out"
