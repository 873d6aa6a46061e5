#!/usr/bin/env bash
# stall_test.sh SCALEPPM: a job never waits on another job's input.
#
# libnetpbm is called under one lock (src/input/header.c), on memory only:
# what it parses is read first, outside the lock.  A batch (-t 2: two
# files at a time) of a FIFO whose plain PGM stalls inside its raster and
# five PPM files: the PPM jobs end while the FIFO stalls.  The FIFO's
# writer holds the stall until the batch's --timings record of every PPM
# job has come (an event, not a time), then sends the rest; a watchdog
# (20 s) fails the test if they never come, as when the FIFO's job read
# its raster under the lock and held every other job's header there.
# Each PPM job's time (its record's end_ns - start_ns: taken to written)
# is printed, and checked under 100 ms: a 2x2 image's job takes a small
# fraction of a millisecond, and a job held by the stall takes as long
# as the stall; not checked in a sanitizer build, whose times are not
# the program's.
set -euo pipefail

usage() {
    printf 'usage: %s SCALEPPM\n' "${0##*/}"
}

if [[ ${1:-} == --help ]]; then
    usage
    exit 0
fi
if (($# != 1)); then
    usage >&2
    exit 2
fi
SP=$(realpath "$1")

# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"

WORK=$(mktemp -d)
writer=''
batch=''
cleanup() {
    [[ -n $writer ]] && exec 3>&-
    [[ -n $batch ]] && kill "$batch" 2>/dev/null
    rm -rf "$WORK"
}
trap cleanup EXIT
cd "$WORK"

sanitized=0
if nm -- "$SP" 2>/dev/null | grep -E '__(asan|tsan|msan|ubsan)_' >/dev/null; then
    sanitized=1
fi

for i in 1 2 3 4 5; do
    printf 'P6\n2 2\n255\n%012d' "$i" >"a$i.ppm"
done
mkfifo f.pgm records
mkdir out
# The writer is there before the batch opens the FIFO (a batch does not
# wait for one), and the raster stops inside its second row.
exec 3<>f.pgm
writer=1
printf 'P2\n4 2\n255\n1 2 3 4\n5 6' >&3

"$SP" -t 2 -s 1 --timings=json -o out/ f.pgm a1.ppm a2.ppm a3.ppm a4.ppm \
    a5.ppm 2>records 3>&- &
batch=$!
exec 4<records

# Every PPM job's record, each within what is left of the watchdog.
deadline=$((${EPOCHREALTIME/./} + 20000000))
seen=0 longest=0 times=''
why=''
while ((seen < 5)); do
    left=$((deadline - ${EPOCHREALTIME/./}))
    if ((left <= 0)) ||
        ! IFS= read -r -t "$((left / 1000000)).$(printf '%06d' $((left % 1000000)))" line <&4; then
        why="$seen of the five PPM jobs ended in 20 s while the FIFO stalled"
        break
    fi
    [[ $line =~ \"input\":\"a[1-5]\.ppm\".*\"start_ns\":([0-9]+).*\"end_ns\":([0-9]+) ]] ||
        continue
    us=$(((BASH_REMATCH[2] - BASH_REMATCH[1]) / 1000))
    times+=" $((us / 1000)).$(printf '%03d' $((us % 1000)))"
    ((us > longest)) && longest=$us
    seen=$((seen + 1))
done
# The rest of the raster: the FIFO's job ends too.
printf ' 7 8\n' >&3
exec 3>&-
writer=''
rc=0
wait "$batch" || rc=$?
batch=''
# The records that came only once the stall ended: how long it held them.
while IFS= read -r line <&4; do
    [[ $line =~ \"input\":\"a[1-5]\.ppm\".*\"start_ns\":([0-9]+).*\"end_ns\":([0-9]+) ]] &&
        times+=" $(((BASH_REMATCH[2] - BASH_REMATCH[1]) / 1000000)) (held)"
done
exec 4<&-

printf '# the PPM jobs, ms:%s\n' "${times:- none}"
result 'the PPM jobs end while a FIFO of the batch stalls' "$why"
if [[ -z $why ]]; then
    if ((sanitized)); then
        skip 'each PPM job under 100 ms' 'a sanitizer build'
    else
        ((longest < 100000)) && why='' ||
            why="the longest took $((longest / 1000)) ms"
        result 'each PPM job under 100 ms while the FIFO stalls' "$why"
    fi
fi
why=''
((rc == 0)) || why="batch exit $rc"
cmp -s out/f.pgm <(printf 'P5\n4 2\n255\n\1\2\3\4\5\6\7\10') ||
    why="${why:+$why; }the FIFO's image is not its P5"
for i in 1 2 3 4 5; do
    cmp -s "out/a$i.ppm" "a$i.ppm" || why="${why:+$why; }out/a$i.ppm differs"
done
result 'the batch ends once the FIFO is written, every output right' "$why"
finish
