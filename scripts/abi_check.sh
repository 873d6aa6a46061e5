#!/usr/bin/env bash
# abi_check.sh: compare libscaleppm.so's ABI with the committed baseline,
# src/api/abi/libscaleppm.abi.xml (abidw's), by abidiff (Debian's
# abigail-tools); fail on a change that breaks the ABI unless the soname
# changed with it.  With --update, write the baseline from the library.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BASELINE=$ROOT/src/api/abi/libscaleppm.abi.xml
HEADERS=$ROOT/src/api

usage() {
    cat <<'USAGE'
usage: scripts/abi_check.sh [--update] [BUILD]

Compares BUILD's libscaleppm.so (default: build/, a tree built with debug
information: RelWithDebInfo, as run_tests.sh builds it) with the ABI
baseline src/api/abi/libscaleppm.abi.xml.  Exits 1 on a change that
breaks the ABI (a function removed, a parameter's or a return's type
changed) while the soname stays libscaleppm.so.N: raise SP_SOVERSION
(src/CMakeLists.txt) with such a change, then update the baseline.
Compatible changes (a function added) pass, and say so: update the
baseline with the commit that makes them.
  --update    write the baseline from BUILD's library instead
  -h, --help  this help
USAGE
}

update=0
while (($#)); do
    case $1 in
    --update) update=1; shift ;;
    -h | --help) usage; exit 0 ;;
    -*) usage >&2; exit 2 ;;
    *) break ;;
    esac
done
build=${1:-$ROOT/build}
lib=$build/src/libscaleppm.so
say() { printf 'abi_check: %s\n' "$*" >&2; }

for tool in abidw abidiff objdump; do
    if ! command -v "$tool" >/dev/null; then
        say "$tool not found: apt-get install abigail-tools binutils"
        exit 2
    fi
done
if [[ ! -e $lib ]]; then
    say "$lib: not built"
    exit 2
fi
# The private types (the handle's struct, the core's) are not the ABI:
# only what scaleppm.h declares.
if ((update)); then
    mkdir -p "$(dirname "$BASELINE")"
    abidw --no-corpus-path --no-comp-dir-path --no-show-locs \
        --headers-dir "$HEADERS" --drop-private-types \
        --exported-interfaces-only --out-file "$BASELINE" \
        "$(readlink -f "$lib")"
    say "wrote $BASELINE"
    exit 0
fi
if [[ ! -f $BASELINE ]]; then
    say "$BASELINE: no baseline (--update makes one)"
    exit 2
fi
soname=$(objdump -p "$lib" | awk '$1 == "SONAME" { print $2 }')
was=$(grep -om 1 "soname='[^']*'" "$BASELINE" | sed "s/soname='//; s/'//")
rc=0
abidiff --no-corpus-path --headers-dir2 "$HEADERS" --drop-private-types \
    --exported-interfaces-only "$BASELINE" "$(readlink -f "$lib")" >"${TMPDIR:-/tmp}/abi_check.$$" ||
    rc=$?
report=$(cat "${TMPDIR:-/tmp}/abi_check.$$")
rm -f "${TMPDIR:-/tmp}/abi_check.$$"
# abidiff's status is a bit set: 1 an error, 2 a usage error, 4 a change,
# 8 a change that breaks the ABI (a symbol removed).  A function or
# variable whose type changed gives 4 alone, but breaks a caller built
# against the old one: a break too.  Added ones are compatible.
if ((rc & 3)); then
    printf '%s\n' "$report" >&2
    say "abidiff failed (status $rc)"
    exit 2
fi
if grep -qE '(^|[^0-9])[1-9][0-9]* Changed' <<<"$report"; then
    rc=$((rc | 8))
fi
if ((rc & 8)); then
    printf '%s\n' "$report" >&2
    if [[ $soname != "$was" ]]; then
        say "the ABI breaks, and the soname says so ($was -> $soname):" \
            "update the baseline (--update)"
        exit 0
    fi
    say "the ABI breaks while the soname stays $soname: raise" \
        "SP_SOVERSION (src/CMakeLists.txt), or undo the break"
    exit 1
fi
if ((rc & 4)); then
    printf '%s\n' "$report" >&2
    say "compatible changes: update the baseline (--update) with them"
    exit 0
fi
say "$soname: the ABI of the baseline"
