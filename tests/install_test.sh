#!/usr/bin/env bash
# install_test.sh CMAKE CPACK BUILD: what "cmake --install BUILD" installs
# (scaleppm and scaleppm-iobench, their gzipped manual pages, the
# copyright file, scaleppm serve's program in libexec, the library's
# files: header, libraries, scaleppm.pc, libscaleppm.3; and nothing else:
# no dev tool, no test), that the programs run and man finds the pages;
# then the Debian packages that "cpack -G DEB" makes from BUILD: the
# program's files, name, section and dependencies, and scaleppm serve's
# systemd unit (verified by systemd-analyze) and nginx example; and the
# library's, libscaleppm0 and libscaleppm-dev (tests/api_test.sh tries
# the library).  The packages are built, not installed:
# scripts/package.sh --check installs the program's.
set -uo pipefail
usage='usage: install_test.sh CMAKE CPACK BUILD'
cmake=${1:?$usage}
cpack=${2:?$usage}
build=${3:?$usage}
# shellcheck source=tests/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/scaleppm-install.XXXXXX")
trap 'rm -rf -- "$WORK"' EXIT
prefix=$WORK/prefix
pages=(share/man/man1/scaleppm-iobench.1.gz share/man/man1/scaleppm.1.gz)
expected=$(printf '%s\n' bin/scaleppm bin/scaleppm-iobench \
    libexec/scaleppm/scaleppm-serve \
    share/doc/scaleppm/copyright "${pages[@]}" | sort)
# The library's (component dev), in BUILD's library folder.
libdir=$(sed -n 's/^CMAKE_INSTALL_LIBDIR:[A-Z]*=//p' "$build/CMakeCache.txt")
libversion=$(sed -n 's/^CMAKE_PROJECT_VERSION:[A-Z]*=//p' \
    "$build/CMakeCache.txt")
library=$(printf '%s\n' include/scaleppm.h "$libdir/libscaleppm.a" \
    "$libdir/libscaleppm.so" "$libdir/libscaleppm.so.0" \
    "$libdir/libscaleppm.so.$libversion" "$libdir/pkgconfig/scaleppm.pc" \
    share/man/man3/libscaleppm.3.gz | sort)

if ! "$cmake" --install "$build" --prefix "$prefix" --strip \
    >"$WORK/install.log" 2>&1; then
    fail "cmake --install" "$(tail -n 1 "$WORK/install.log")"
    finish
    exit
fi
got=$(cd "$prefix" && find . ! -type d | sed 's|^\./||' | sort)
all=$(printf '%s\n' "$expected" "$library" | sort)
result "cmake --install: the programs, their pages, the copyright file, the library" \
    "$([[ $got == "$all" ]] || printf 'installed: %s' "${got//$'\n'/ }")"

serve=$("$prefix/bin/scaleppm" serve --version 2>&1)
result "installed scaleppm serve runs scaleppm-serve" \
    "$([[ $serve == "scaleppm serve "* ]] || printf '%s' "$serve")"

version=$("$prefix/bin/scaleppm" --version 2>&1)
result "installed scaleppm --version" \
    "$([[ $version == 'scaleppm '[0-9]* ]] || printf '%s' "$version")"
list=$("$prefix/bin/scaleppm-iobench" list 2>&1)
result "installed scaleppm-iobench list: its five experiments" \
    "$([[ $(grep -c . <<<"$list") == 5 ]] || printf '%s' "${list//$'\n'/ }")"

# Each installed program names itself by its installed name (issue 25:
# scaleppm-iobench said "usage: iobench").
for prog in scaleppm scaleppm-iobench; do
    help=$("$prefix/bin/$prog" --help 2>&1 | head -n 1)
    result "installed $prog --help names it" \
        "$([[ $help == "usage: $prog "* ]] || printf '%s' "$help")"
    said=$("$prefix/bin/$prog" --no-such-option 2>&1 >/dev/null |
        grep -v "unrecognized option" | head -n 1)
    result "installed $prog: a usage error names it" \
        "$([[ $said == "usage: $prog "* || $said == "$prog: "* ]] ||
            printf '%s' "$said")"
done

for page in "${pages[@]}"; do
    name=${page##*/}
    name=${name%.1.gz}
    check "$name.1.gz is gzip" gzip -t "$prefix/$page"
    # gzip -n: no file name, no time stamp (bytes 4-7), as Debian wants
    stamp=$(od -An -tu1 -j3 -N5 "$prefix/$page" | tr -s ' ')
    result "$name.1.gz: gzip -n (no name, no time stamp)" \
        "$([[ $stamp == ' 0 0 0 0 0' ]] || printf 'header: %s' "$stamp")"
    found=$(MANPATH=$prefix/share/man man -w "$name" 2>&1)
    result "man -w $name finds the installed page" \
        "$([[ $found == "$prefix/$page" ]] || printf '%s' "$found")"
done

if have readelf; then
    for prog in scaleppm scaleppm-iobench; do
        result "--strip stripped $prog as dh_strip does" "$(
            readelf -S "$prefix/bin/$prog" | grep -oE '\.(symtab|comment)\>' |
                tr '\n' ' ')"
    done
fi

# The package: cpack with BUILD's configuration, into $WORK.
if ! have dpkg-deb || [[ ! -f $build/CPackConfig.cmake ]]; then
    skip "cpack -G DEB" "no dpkg-deb, or no CPack in this build"
    finish
    exit
fi
if ! "$cpack" -G DEB --config "$build/CPackConfig.cmake" -B "$WORK/deb" \
    >"$WORK/cpack.log" 2>&1; then
    fail "cpack -G DEB" "$(grep -m 1 -i error "$WORK/cpack.log")"
    finish
    exit
fi
debs=("$WORK"/deb/*.deb)
arch=$(dpkg --print-architecture)
deb=$WORK/deb/scaleppm_$libversion-1_$arch.deb
lib=$WORK/deb/libscaleppm0_$libversion-1_$arch.deb
dev=$WORK/deb/libscaleppm-dev_$libversion-1_$arch.deb
result "cpack -G DEB makes three packages: scaleppm, libscaleppm0, libscaleppm-dev" \
    "$([[ ${#debs[@]} == 3 && -f $deb && -f $lib && -f $dev ]] ||
        printf '%s' "${debs[*]}")"
# The library's: the shared library by its soname in libscaleppm0, the
# rest in libscaleppm-dev, which depends on it; each its copyright and
# changelog, its section.
runtime=$(grep '\.so\.' <<<"$library")
for pkg in libscaleppm0 libscaleppm-dev; do
    file=$lib files=$runtime section=libs
    if [[ $pkg == libscaleppm-dev ]]; then
        file=$dev files=$(grep -v '\.so\.' <<<"$library") section=libdevel
    fi
    contents=$(dpkg-deb -c "$file" 2>&1 | awk '$1 !~ /^d/ { print $6 }' |
        sed 's|^\./usr/||' | sort)
    want=$(printf '%s\n' "$files" "share/doc/$pkg/copyright" \
        "share/doc/$pkg/changelog.Debian.gz" | sort)
    result "$pkg: its part of the library, its copyright and changelog" \
        "$([[ $contents == "$want" ]] ||
            printf '%s' "${contents//$'\n'/ }")"
    got=$(dpkg-deb -f "$file" Section 2>&1)
    result "$pkg: section $section" \
        "$([[ $got == "$section" ]] || printf '%s' "$got")"
done
result "libscaleppm-dev depends on libscaleppm0 of its version" \
    "$(depends=$(dpkg-deb -f "$dev" Depends 2>&1)
        [[ $depends == *"libscaleppm0 (= $libversion-1)"* ]] ||
            printf '%s' "$depends")"
result "libscaleppm0: a shlibs file and an ldconfig trigger" \
    "$(dpkg-deb -I "$lib" shlibs 2>&1 | grep -q '^libscaleppm 0 libscaleppm0' &&
        dpkg-deb -I "$lib" triggers 2>&1 | grep -q '^activate-noawait ldconfig' ||
        printf 'shlibs: %s; triggers: %s' "$(dpkg-deb -I "$lib" shlibs 2>&1)" \
            "$(dpkg-deb -I "$lib" triggers 2>&1 | grep -v '^#')")"
contents=$(dpkg-deb -c "$deb" | awk '$1 !~ /^d/ { print $6 }' |
    sed 's|^\./usr/||' | sort)
want=$(printf '%s\n' "$expected" share/doc/scaleppm/changelog.Debian.gz \
    share/lintian/overrides/scaleppm \
    share/doc/scaleppm/examples/nginx/scaleppm.conf | sort)
# The systemd unit lies beside /usr, in /lib/systemd/system.
units=$(dpkg-deb -c "$deb" | awk '$1 !~ /^d/ { print $6 }' |
    grep '^\./lib/' || true)
contents=$(grep -v '^\./lib/' <<<"$contents")
result "the package: the install, the changelog, lintian's overrides, the nginx example" \
    "$([[ $contents == "$want" ]] || printf '%s' "${contents//$'\n'/ }")"
result "the package: scaleppm serve's systemd unit" \
    "$([[ $units == ./lib/systemd/system/scaleppm-serve@.service ]] ||
        printf '%s' "${units//$'\n'/ }")"
if have systemd-analyze; then
    dpkg-deb -x "$deb" "$WORK/x"
    unit=$WORK/x/lib/systemd/system/scaleppm-serve@.service
    sed "s|/usr/bin/scaleppm|$WORK/x/usr/bin/scaleppm|" "$unit" \
        >"$WORK/scaleppm-serve@8081.service"
    check "systemd-analyze verify: the unit" \
        systemd-analyze verify --man=no "$WORK/scaleppm-serve@8081.service"
fi
field() { dpkg-deb -f "$deb" "$1"; }
result "package name, section, version" "$(
    [[ $(field Package) == scaleppm && $(field Section) == graphics &&
        $(field Version) == *-1 ]] ||
        printf '%s %s %s' "$(field Package)" "$(field Section)" \
            "$(field Version)")"
# dpkg-shlibdeps: scaleppm-iobench is linked dynamically, to the C library
# at least; scaleppm may be a static PIE that needs nothing.
result "Depends computed by dpkg-shlibdeps" \
    "$([[ $(field Depends) == *libc6* ]] ||
        printf 'Depends: %s' "$(field Depends)")"
finish
