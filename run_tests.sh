#!/usr/bin/env bash
# run_tests.sh: install what is missing, build, and run every test (ctest).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=scripts/setup.sh
. "$ROOT/scripts/setup.sh"

usage() {
    cat <<'USAGE'
usage: run_tests.sh [--sanitize | --tsan] [-- CTEST_ARGS...]

Installs the Debian packages that are missing (as root; otherwise prints
the apt-get line and exits 2), builds with CMake and runs ctest.
  --sanitize   build with AddressSanitizer + UBSan, in build-asan/
  --tsan       build with ThreadSanitizer, in build-tsan/, and run the
               tests that run threads (parallel_*, job_*, concurrent, api*,
               oracle, cli, faults, batch, batch_options, and the server's:
               serve_*, serve, serve_soak)
  -h, --help   this help
USAGE
}

dir=$ROOT/build args=(-DSP_BUILD_TESTS=ON) only=()
while (($#)); do
    case $1 in
    --sanitize) dir=$ROOT/build-asan args+=(-DSP_SANITIZE=ON); shift ;;
    --tsan)
        dir=$ROOT/build-tsan args+=(-DSP_TSAN=ON)
        only=(-R '^(parallel_.*|job_.*|concurrent|api.*|oracle|cli|faults|batch|batch_options|serve|serve_.*)$')
        shift
        ;;
    -h | --help) usage; exit 0 ;;
    --) shift; break ;;
    *) usage >&2; exit 2 ;;
    esac
done

# A sanitizer build: libnetpbm's own leak on a refused PAM header is not
# ours (tests/lsan.supp says why).
LSAN_OPTIONS=${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$ROOT/tests/lsan.supp
export LSAN_OPTIONS=$LSAN_OPTIONS:print_suppressions=0
sp_setup RelWithDebInfo "$dir" "${args[@]}"
cd "$dir"
ctest --output-on-failure --no-tests=error -j 2 "${only[@]}" "$@"
