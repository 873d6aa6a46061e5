#!/usr/bin/env bash
# package.sh: build scaleppm's Debian packages, and with --check (as root)
# install the program's, try it, remove it and lint the three.
#
# The packages are CPack's (the top-level CMakeLists.txt): the library's,
# libscaleppm0 (the shared library) and libscaleppm-dev (the header, the
# static library, scaleppm.pc, libscaleppm.3), and
# scaleppm: scaleppm and scaleppm-iobench in /usr/bin, their manual
# pages, the copyright file and changelog.Debian.gz in
# /usr/share/doc/scaleppm; each one's dependencies
# computed by dpkg-shlibdeps.  The Release tree in build-deb/ is built
# with Debian's build flags (dpkg-buildflags, hardening=+all).
#
# What lintian 2.116 (Debian 12) says of scaleppm_0.1.0-1_amd64.deb, run
# by --check as "lintian -I --pedantic --show-overrides": nothing but the
# two tags that scripts/deb/lintian-overrides overrides, with its reasons:
#   O: scaleppm: initial-upload-closes-no-bugs
#        [usr/share/doc/scaleppm/changelog.Debian.gz:1]
#   O: scaleppm: shared-library-lacks-prerequisites [usr/bin/scaleppm]
# (a static PIE is an ELF of type DYN with no NEEDED entry).  Before the
# install stripped .comment as dh_strip does, it also gave
#   I: scaleppm: binary-has-unneeded-section .comment [usr/bin/scaleppm]
# and the same for scaleppm-iobench.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

usage() {
    cat <<'USAGE'
usage: scripts/package.sh [--check]

Builds a Release tree in build-deb/ and the Debian package in it with
cpack -G DEB, and prints the package's path.
  --check   as root: install the package (dpkg -i), run scaleppm and
            scaleppm-iobench, find their manual pages, scale a small
            image through a pipe, remove the package (dpkg -r) and check
            that its files are gone; then lint it (lintian, installed
            with apt-get if missing) and print lintian's report
  -h, --help  this help
USAGE
}

check=0
while (($#)); do
    case $1 in
    --check) check=1 ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; exit 2 ;;
    esac
    shift
done
if ((check && EUID != 0)); then
    echo 'package.sh: --check installs the package: run it as root' >&2
    exit 2
fi

die() {
    printf 'package.sh: %s\n' "$*" >&2
    exit 1
}

dir=$ROOT/build-deb
log=$dir/build.log
mkdir -p "$dir"

# Debian's build flags, as a package built by debhelper gets them.
flags=()
if command -v dpkg-buildflags >/dev/null; then
    export DEB_BUILD_MAINT_OPTIONS=hardening=+all
    cflags="$(dpkg-buildflags --get CFLAGS) $(dpkg-buildflags --get CPPFLAGS)"
    flags=("-DCMAKE_C_FLAGS=$cflags"
        "-DCMAKE_EXE_LINKER_FLAGS=$(dpkg-buildflags --get LDFLAGS)"
        "-DCMAKE_SHARED_LINKER_FLAGS=$(dpkg-buildflags --get LDFLAGS)")
fi
printf 'building build-deb (log: %s)\n' "$log" >&2
if ! {
    cmake -S "$ROOT" -B "$dir" -DCMAKE_BUILD_TYPE=Release \
        -DSP_BUILD_TESTS=OFF -DCMAKE_INSTALL_PREFIX=/usr "${flags[@]}" &&
        cmake --build "$dir" -j "$(nproc)"
} >"$log" 2>&1; then
    tail -n 20 "$log" >&2
    die "build failed; the whole log: $log"
fi
rm -f "$dir"/*.deb
if ! (cd "$dir" && cpack -G DEB) >>"$log" 2>&1; then
    tail -n 20 "$log" >&2
    die "cpack failed; the whole log: $log"
fi
# Three packages: the programs, and the library's libscaleppm0 and
# libscaleppm-dev.
debs=("$dir"/*.deb)
deb=$dir/scaleppm_$(dpkg-deb -f "${debs[0]}" Version)_$(dpkg-deb -f \
    "${debs[0]}" Architecture).deb
lib=${deb/\/scaleppm_//libscaleppm0_}
dev=${deb/\/scaleppm_//libscaleppm-dev_}
[[ ${#debs[@]} == 3 && -f $deb && -f $lib && -f $dev ]] ||
    die "cpack made: ${debs[*]}"
for d in "$deb" "$lib" "$dev"; do
    printf '%s\n' "$d"
    dpkg-deb --info "$d" | sed -n '/Package:/,$p'
    dpkg-deb --contents "$d"
done
((check)) || exit 0

# --check: install, try, remove.
failed=0
ok() { printf 'ok - %s\n' "$1"; }
bad() {
    printf 'FAIL - %s\n' "$1"
    failed=1
}
try() {
    local what=$1
    shift
    if "$@"; then ok "$what"; else bad "$what"; fi
}

if dpkg-query -W -f='${db:Status-Abbrev}' scaleppm 2>/dev/null |
    grep -q '^.i'; then
    die 'scaleppm is installed already; --check would remove it'
fi
if ! dpkg -i "$deb"; then
    dpkg -r scaleppm >/dev/null 2>&1 || true
    die "dpkg -i $deb failed"
fi
mapfile -t files < <(dpkg -L scaleppm | while read -r f; do
    [[ -d $f ]] || printf '%s\n' "$f"
done)
man1=/usr/share/man/man1 doc=/usr/share/doc/scaleppm
want=(/usr/bin/scaleppm /usr/bin/scaleppm-iobench "$man1/scaleppm.1.gz"
    "$man1/scaleppm-iobench.1.gz" "$doc/copyright" "$doc/changelog.Debian.gz"
    /usr/share/lintian/overrides/scaleppm)
for f in "${want[@]}"; do
    try "installed $f" test -f "$f"
done
try "and no other file: ${files[*]}" test "${#files[@]}" -eq "${#want[@]}"
try 'scaleppm is /usr/bin/scaleppm' \
    test "$(command -v scaleppm)" = /usr/bin/scaleppm
try "scaleppm --version: $(scaleppm --version)" scaleppm --version
try 'scaleppm-iobench list' scaleppm-iobench list
for name in scaleppm scaleppm-iobench; do
    page=$(man -w "$name" 2>&1) || true
    try "man -w $name: $page" \
        test "$page" = "/usr/share/man/man1/$name.1.gz"
done
shape=$(ppmmake red 3 2 | scaleppm -s 2 - - | pamfile) || true
try "ppmmake red 3 2 | scaleppm -s 2 - - | pamfile: $shape" \
    grep -q 'PPM raw, 6 by 4 *maxval 255' <<<"$shape"
# netpbm's stream conventions: IN and OUT optional, and a PBM stays a PBM
shape=$(pbmmake -gray 3 2 | scaleppm -s 2 | pamfile) || true
try "pbmmake -gray 3 2 | scaleppm -s 2 | pamfile: $shape" \
    grep -q 'PBM raw, 6 by 4' <<<"$shape"

dpkg -r scaleppm || bad 'dpkg -r scaleppm'
left=()
for f in "${files[@]}"; do
    [[ -e $f ]] && left+=("$f")
done
try "dpkg -r removed every file${left[*]:+ (left: ${left[*]})}" \
    test "${#left[@]}" -eq 0
hash -r
try 'scaleppm is not on PATH' test -z "$(command -v scaleppm || true)"
status=$(dpkg-query -W -f='${db:Status-Abbrev}' scaleppm 2>/dev/null || true)
try "dpkg: not installed (${status:-not known to dpkg})" \
    test "${status:0:2}" != ii
dpkg -P scaleppm >/dev/null 2>&1 || true

# lintian, with the overrides the package ships and without them.
if ! command -v lintian >/dev/null; then
    echo 'installing lintian' >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
        --no-install-recommends lintian >&2 || die 'cannot install lintian'
fi
# as nobody where root can: lintian warns against running as root
as=()
if command -v setpriv >/dev/null &&
    setpriv --reuid=65534 --regid=65534 --clear-groups true 2>/dev/null; then
    as=(setpriv --reuid=65534 --regid=65534 --clear-groups env HOME=/tmp)
fi
echo "lintian --info --pedantic --show-overrides $(basename "$deb")" \
    "$(basename "$lib") $(basename "$dev"):"
lint=$("${as[@]}" lintian -I --pedantic --show-overrides "$deb" "$lib" \
    "$dev" 2>&1) ||
    true
printf '%s\n' "${lint:-(nothing to report)}"
if grep -q '^E: ' <<<"$lint"; then
    bad 'lintian reports errors'
else
    ok 'lintian reports no error'
fi
exit "$failed"
