#!/usr/bin/env bash
# regress_test.sh: replay what the fuzzers found (tests/fuzz/regress/) and
# the seed corpus through every harness, without libFuzzer (ctest).
set -euo pipefail

usage() {
    cat <<'USAGE'
usage: regress_test.sh REPLAY_HEADER REPLAY_SCALE REPLAY_ENCODE REPLAY_CHANGE
                       REPLAY_DECODE GENIMAGE

Runs replay_header, replay_scale, replay_encode, replay_change and
replay_decode over
tests/fuzz/regress/<harness>/ and over a seed corpus made afresh by seeds.sh
with GENIMAGE.  The seeds always run, so the test never passes on no inputs.
USAGE
}

if [[ ${1:-} == -h || ${1:-} == --help ]]; then
    usage
    exit 0
fi
if (($# != 6)); then
    usage >&2
    exit 2
fi
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

bash "$here/seeds.sh" "$tmp/seeds" "$6"
status=0
for pair in "header:$1" "scale:$2" "encode:$3" "change:$4" "decode:$5"; do
    harness=${pair%%:*} replay=${pair#*:}
    paths=("$tmp/seeds")
    [[ -d $here/regress/$harness ]] && paths+=("$here/regress/$harness")
    echo "== $harness: ${paths[*]}" >&2
    "$replay" "${paths[@]}" || status=1
done
exit "$status"
