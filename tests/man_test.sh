#!/usr/bin/env bash
# man_test.sh SCALEPPM MANDIR: the manual pages in MANDIR (man/) render
# without a warning, through man-db as a reader's man does and through
# groff with every warning on; and scaleppm.1 names every long option that
# "scaleppm --help" prints, so that the page cannot fall behind the help;
# libscaleppm.3 names every function of the library's header.
# Exits 77 (skipped) without man and groff.
set -uo pipefail
usage='usage: man_test.sh SCALEPPM MANDIR'
sp=${1:?$usage}
mandir=${2:?$usage}
# shellcheck source=tests/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

if ! have man || ! have groff; then
    echo "skip: man and groff are needed (apt-get install man-db groff)"
    exit 77
fi
WORK=$(mktemp -d "${TMPDIR:-/tmp}/scaleppm-man.XXXXXX")
trap 'rm -rf -- "$WORK"' EXIT

# warnings WHAT CMD...: pass when CMD succeeds and prints nothing on
# stderr (its stdout, the page, is dropped).
warnings() {
    local what=$1 err
    shift
    if ! err=$("$@" 2>&1 >/dev/null); then
        fail "$what" "exit status: ${err:-(no message)}"
    else
        result "$what" "$(head -n 3 <<<"$err")"
    fi
}

for page in scaleppm.1 scaleppm-iobench.1 libscaleppm.3; do
    src=$mandir/$page
    if [[ ! -r $src ]]; then
        fail "$page" "not found in $mandir"
        continue
    fi
    # From standard input: man-db run as root reads the page as the user
    # "man", who may not reach the source tree.
    warnings "$page: man renders it without a warning" env LC_ALL=C.UTF-8 \
        MANROFFSEQ='' MANWIDTH=80 man --warnings -E UTF-8 -l -Tutf8 -Z - \
        <"$src"
    warnings "$page: groff -ww renders it without a warning" \
        groff -man -ww -z "$src"
done

# The page as text, in lines too long to break and without hyphenation,
# so that every option is whole on one line.
text=$(groff -man -Tascii -rLL=400n -rHY=0 -P-cbou "$mandir/scaleppm.1" \
    2>/dev/null)
help=$("$sp" --help 2>&1)
mapfile -t options < <(grep -oE -- '(^|[^[:alnum:]-])--[a-z][a-z0-9-]*' \
    <<<"$help" | sed -E 's/^[^-]+//; s/-+$//' | sort -u)
if ((${#options[@]} < 5)); then
    fail "scaleppm --help" "found ${#options[@]} long options in it"
fi
missing=()
for opt in "${options[@]}"; do
    grep -qE -- "(^|[^[:alnum:]-])$opt([^[:alnum:]-]|\$)" <<<"$text" ||
        missing+=("$opt")
done
result "scaleppm.1 names every long option of --help (${#options[@]})" \
    "${missing[*]:+not in scaleppm.1: ${missing[*]}}"

# Each function the header declares (SP_API), in libscaleppm.3's NAME.
header=$mandir/../src/api/scaleppm.h
mapfile -t functions < <(grep -oE '^SP_API [^(]*\<sp_[a-z_]+\(' "$header" |
    grep -oE 'sp_[a-z_]+')
names=$(sed -n '/^\.SH NAME/,/^\.SH/p' "$mandir/libscaleppm.3")
missing=()
for fn in "${functions[@]}"; do
    grep -qE "(^|[ ,])$fn(,|\$| )" <<<"$names" || missing+=("$fn")
done
result "libscaleppm.3 names every function of scaleppm.h (${#functions[@]})" \
    "$( ((${#functions[@]} >= 10)) || printf 'found %d in %s ' \
        "${#functions[@]}" "$header")${missing[*]:+not in libscaleppm.3: ${missing[*]}}"
finish
