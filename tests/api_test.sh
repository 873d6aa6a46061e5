#!/usr/bin/env bash
# api_test.sh SCALEPPM CMAKE BUILD CC [SANITIZER]: libscaleppm as a program
# outside the tree uses it.  "cmake --install BUILD --component runtime",
# then "dev", into a prefix under the work folder installs the shared
# library and the header, the link to the shared library
# with its soname, the static one, scaleppm.pc and libscaleppm.3, and the
# shared library exports the API's symbols alone (the version script's
# list, each declared in scaleppm.h).  Then contrib/examples/
# scale_memory.c, built with CC and "pkg-config --cflags --libs
# scaleppm" against that prefix, scales a JPEG held in memory into a PNG
# in memory on 16 threads at once, 16 jobs (half of them from one image
# decoded once, sp_job_decode, which they share), which give the bytes that
# SCALEPPM writes for the same input and decode back (pngtopam) to the
# size asked; a cut input fails with one line naming the problem.  The
# same program built with -fsanitize=thread runs the 16 jobs without a
# report (in a BUILD made with SP_TSAN the library is instrumented too);
# and built with the static library, it gives the same bytes.
# SANITIZER, when BUILD is a sanitizer build (address,undefined or
# thread), is what the program is built with, as the library was.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$here/lib.sh"
usage="usage: api_test.sh SCALEPPM CMAKE BUILD CC [SANITIZER]"
setup "$usage" "$@"
cmake=${2:?$usage}
build=$(abspath "${3:?$usage}")
cc=${4:?$usage}
sanitizer=${5:-}
example=$here/../contrib/examples/scale_memory.c
header=$here/../src/api/scaleppm.h
map=$here/../src/api/scaleppm.map
cd "$WORK"

for tool in pkg-config nm pnmtojpeg pngtopam; do
    if ! have "$tool"; then
        skip 'api' "$tool not installed"
        finish
        exit
    fi
done

# The install: the library's components alone (the shared library,
# runtime; the rest, dev), into a prefix of their own.
prefix=$WORK/prefix
for component in runtime dev; do
    if ! "$cmake" --install "$build" --prefix "$prefix" \
        --component "$component" >install.log 2>&1; then
        fail "cmake --install --component $component" \
            "$(tail -n 1 install.log)"
        finish
        exit
    fi
done
libdir=$(sed -n 's/^CMAKE_INSTALL_LIBDIR:[A-Z]*=//p' "$build/CMakeCache.txt")
version=$(sed -n 's/^CMAKE_PROJECT_VERSION:[A-Z]*=//p' \
    "$build/CMakeCache.txt")
got=$(cd "$prefix" && find . ! -type d | sed 's|^\./||' | sort)
want=$(printf '%s\n' include/scaleppm.h "$libdir/libscaleppm.a" \
    "$libdir/libscaleppm.so" "$libdir/libscaleppm.so.0" \
    "$libdir/libscaleppm.so.$version" "$libdir/pkgconfig/scaleppm.pc" \
    share/man/man3/libscaleppm.3.gz | sort)
result "cmake --install --component runtime, dev: header, libraries, .pc, man3" \
    "$([[ $got == "$want" ]] || printf 'installed: %s' "${got//$'\n'/ }")"
lib=$prefix/$libdir/libscaleppm.so
soname=$(objdump -p "$lib" 2>/dev/null | awk '$1 == "SONAME" { print $2 }')
result "libscaleppm.so's soname is libscaleppm.so.0" \
    "$([[ $soname == libscaleppm.so.0 ]] || printf 'SONAME %s' "$soname")"

# The exports: nm -D's defined functions, against the version script's
# list and the header's declarations.
exported=$(nm -D --defined-only "$lib" | awk '$2 == "T" { print $3 }' |
    sed 's/@.*//' | sort)
listed=$(sed -n 's/^ *\(sp_[a-z_]*\);$/\1/p' "$map" | sort)
declared=$(grep -oE '^SP_API [^(]*\<sp_[a-z_]+\(' "$header" |
    grep -oE 'sp_[a-z_]+' | sort)
result "the library exports scaleppm.map's symbols and no other" \
    "$([[ $exported == "$listed" ]] ||
        diff <(echo "$listed") <(echo "$exported") | grep '^[<>]' |
        tr '\n' ' ')"
result "each exported symbol is declared in scaleppm.h" \
    "$([[ $exported == "$declared" ]] ||
        diff <(echo "$declared") <(echo "$exported") | grep '^[<>]' |
        tr '\n' ' ')"

# The program, from pkg-config's flags alone (the library found at run
# time by its rpath).
export PKG_CONFIG_PATH=$prefix/$libdir/pkgconfig
pcversion=$(pkg-config --modversion scaleppm 2>&1)
result "pkg-config --modversion scaleppm" \
    "$([[ $pcversion == "$version" ]] || printf '%s' "$pcversion")"
# shellcheck disable=SC2207  # pkg-config's words are flags
flags=($(pkg-config --cflags --libs scaleppm))
san=()
[[ -n $sanitizer ]] && san=("-fsanitize=$sanitizer")
check "cc scale_memory.c \$(pkg-config --cflags --libs scaleppm)" \
    "$cc" -std=c11 -Wall -Wextra -Werror -pthread "${san[@]}" -o \
    scale_memory "$example" "${flags[@]}" -Wl,-rpath,"$prefix/$libdir"

noise 211 157 255 7 3 >in.ppm
pnmtojpeg -quality=90 in.ppm >in.jpg
"$SP" -s -2 in.jpg cli.png
if [[ -x scale_memory ]]; then
    check "16 jobs on 16 threads: a JPEG in memory (and its one decode) to a PNG in memory" \
        ./scale_memory in.jpg -2 16 out.png
    result "the PNG in memory is the command line's, byte for byte" \
        "$(cmp out.png cli.png 2>&1)"
    # through a file: pamfile stops reading after the header
    pngtopam out.png >out.pam 2>/dev/null || true
    size=$(pamfile out.pam 2>&1 | grep -oE '[0-9]+ by [0-9]+' || true)
    result "the PNG decodes, 106 by 79" \
        "$([[ $size == '106 by 79' ]] || printf 'pngtopam: %s' "$size")"
    head -c 600 in.ppm >cut.ppm
    rc=0
    ./scale_memory cut.ppm -2 2 bad.png 2>err || rc=$?
    result "a cut input fails, one line naming the problem" \
        "$([[ $rc == 1 && $(grep -c . err) == 1 &&
            $(head -n 1 err) == *'file is truncated'* ]] ||
            printf 'status %s: %s' "$rc" "$(tr '\n' '|' <err)")"
fi

# The static library, with pkg-config --static's libraries.
# shellcheck disable=SC2207
static=($(pkg-config --cflags scaleppm)
    $(pkg-config --static --libs-only-l --libs-only-other scaleppm |
        sed 's/-lscaleppm//'))
check "cc scale_memory.c libscaleppm.a \$(pkg-config --static --libs ...)" \
    "$cc" -std=c11 -pthread "${san[@]}" -o scale_memory_static "$example" \
    "$prefix/$libdir/libscaleppm.a" "${static[@]}"
if [[ -x scale_memory_static ]]; then
    ./scale_memory_static in.jpg -2 4 static.png 2>static.err || true
    result "the static library's program gives the same PNG" \
        "$(cmp static.png cli.png 2>&1 | head -n 1; head -n 1 static.err)"
fi

# The same under ThreadSanitizer (not beside ASan, which a sanitizer
# build's library may hold).
if [[ $sanitizer == *address* ]]; then
    skip "scale_memory under TSan" "the library is built with ASan"
elif ! "$cc" -fsanitize=thread -pthread -o tsan_probe -x c - \
    <<<'int main(void) { return 0; }' 2>/dev/null; then
    skip "scale_memory under TSan" "$cc cannot build with -fsanitize=thread"
else
    check "cc -fsanitize=thread scale_memory.c" "$cc" -std=c11 -pthread \
        -fsanitize=thread -g -o scale_memory_tsan "$example" \
        "${flags[@]}" -Wl,-rpath,"$prefix/$libdir"
    if [[ -x scale_memory_tsan ]]; then
        rc=0
        TSAN_OPTIONS=halt_on_error=1:exitcode=66 \
            ./scale_memory_tsan in.jpg -2 16 tsan.png 2>tsan.err || rc=$?
        result "16 jobs on 16 threads under TSan: no report" \
            "$( ((rc == 0)) && ! grep -q ThreadSanitizer tsan.err ||
                printf 'status %s: %s' "$rc" "$(grep -m 3 . tsan.err)")"
        result "TSan's PNG is the same" "$(cmp tsan.png cli.png 2>&1)"
    fi
fi
finish
