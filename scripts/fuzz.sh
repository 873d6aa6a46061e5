#!/usr/bin/env bash
# fuzz.sh: build the libFuzzer harnesses with clang and run each for a while.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=$ROOT/build-fuzz
FUZZ=$ROOT/tests/fuzz
ALL=(header scale encode change decode)

usage() {
    cat <<'USAGE'
usage: fuzz.sh [-p] [SECONDS] [HARNESS...]

Builds build-fuzz/ with clang (-DSP_FUZZ=ON: libFuzzer, ASan, UBSan), makes
the seed corpus, and runs each HARNESS (header, scale, encode, change,
decode; default all) for SECONDS (default 60), one after the other.  Each
keeps its corpus in build-fuzz/fuzz/corpus/HARNESS/ from run to run and its
log in
build-fuzz/fuzz/HARNESS.log.  A crash, leak, timeout or out-of-memory input
is written to tests/fuzz/crashes/HARNESS/; replay it with
build-fuzz/tests/fuzz/fuzz_HARNESS FILE and keep it in
tests/fuzz/regress/HARNESS/ once it is fixed.  Prints each harness's
final libFuzzer stats on stdout.  Exits 0 when nothing was found, 1 when a
harness found something, 2 on usage or build errors.
  -p, --parallel  run the harnesses at the same time, one process each
  -h, --help      this help
USAGE
}

parallel=0 secs=60 harnesses=()
while (($#)); do
    case $1 in
    -p | --parallel) parallel=1 ;;
    -h | --help) usage; exit 0 ;;
    [0-9]*)
        [[ $1 =~ ^[0-9]+$ && $1 -gt 0 ]] || { usage >&2; exit 2; }
        secs=$1 ;;
    header | scale | encode | change | decode) harnesses+=("$1") ;;
    fuzz_header | fuzz_scale | fuzz_encode | fuzz_change | fuzz_decode)
        harnesses+=("${1#fuzz_}") ;;
    *) usage >&2; exit 2 ;;
    esac
    shift
done
((${#harnesses[@]})) || harnesses=("${ALL[@]}")

if ! command -v clang >/dev/null; then
    echo "fuzz.sh: clang not found: apt-get install clang libclang-rt-14-dev" >&2
    exit 2
fi

targets=(genimage)
for h in "${harnesses[@]}"; do
    targets+=("fuzz_$h")
done
echo "fuzz.sh: building ${targets[*]} in $BUILD" >&2
CC=clang cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DSP_FUZZ=ON -DSP_BUILD_TESTS=OFF >&2 || exit 2
cmake --build "$BUILD" -j "$(nproc)" --target "${targets[@]}" >&2 || exit 2

seeds=$BUILD/fuzz/seeds
rm -rf "$seeds"
bash "$FUZZ/seeds.sh" "$seeds" "$BUILD/images/genimage"

# libnetpbm's own leak on a refused PAM header is not ours (lsan.supp).
lsan=${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$ROOT/tests/lsan.supp
lsan+=:print_suppressions=0

# run HARNESS: fuzz it for $secs seconds; the exit status is libFuzzer's.
# The decoders get inputs of up to 256 KiB (a reference decoder's test
# files, a huge ancillary chunk); one allocation of more than 1 GiB is a
# finding, as replay.c makes it one.
run() {
    local h=$1 max_len=4096
    local corpus=$BUILD/fuzz/corpus/$h crashes=$FUZZ/crashes/$h
    [[ $h != decode ]] || max_len=262144
    mkdir -p "$corpus" "$crashes"
    echo "fuzz.sh: fuzz_$h for ${secs}s, log $BUILD/fuzz/$h.log" >&2
    LSAN_OPTIONS=$lsan "$BUILD/tests/fuzz/fuzz_$h" -max_total_time="$secs" \
        -max_len="$max_len" -rss_limit_mb=2048 -malloc_limit_mb=1024 \
        -timeout=30 -dict="$FUZZ/pnm.dict" \
        -artifact_prefix="$crashes/" -print_final_stats=1 \
        "$corpus" "$seeds" >"$BUILD/fuzz/$h.log" 2>&1
}

# report HARNESS RC: the last stats line and the totals, on stdout.
report() {
    local h=$1 rc=$2 log=$BUILD/fuzz/$1.log last execs rate
    last=$(grep -E '^#[0-9]+' "$log" | tail -n 1 || true)
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
    printf '%s: %s\n' "$h" "${last:-no stats (see $log)}"
    printf '%s: execs=%s exec/s=%s corpus=%s files\n' "$h" "${execs:-?}" \
        "${rate:-?}" "$(find "$BUILD/fuzz/corpus/$h" -type f | wc -l)"
    if ((rc != 0)); then
        printf '%s: FOUND (libFuzzer exit %d):\n' "$h" "$rc"
        grep -E 'ERROR|SUMMARY|check failed|Test unit written' "$log" |
            head -n 8 | sed "s/^/$h:   /"
    fi
}

mkdir -p "$BUILD/fuzz"
declare -A rcs=() pids=()
for h in "${harnesses[@]}"; do
    if ((parallel)); then
        run "$h" &
        pids[$h]=$!
    else
        rc=0
        run "$h" || rc=$?
        rcs[$h]=$rc
    fi
done
for h in "${!pids[@]}"; do
    rc=0
    wait "${pids[$h]}" || rc=$?
    rcs[$h]=$rc
done

status=0
for h in "${harnesses[@]}"; do
    report "$h" "${rcs[$h]}"
    ((rcs[$h] == 0)) || status=1
done
exit "$status"
