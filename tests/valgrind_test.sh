#!/usr/bin/env bash
# valgrind_test.sh: scaleppm under valgrind's memcheck, on a plain (not
# sanitized) build: every load path (IO_PATHS, lib.sh), both filters, an
# enlarge to PNG, stdin to stdout, a plain input, 16 bits to PNG and to
# JPEG, a reduce to JPEG, and the error paths (a bad input, /dev/full for
# PNM, PNG and JPEG, --max-pixels); JPEG and PNG inputs by every path
# (progressive, CMYK, interlaced 16-bit, palette) and cut ones.  No invalid
# access, no use of undefined memory, no definite or indirect leak.
#
# A sanitizer build cannot run under valgrind: then it exits 77 (a skip).
#
# usage: bash tests/valgrind_test.sh PATH/TO/scaleppm [PATH/TO/genimage]
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$here/lib.sh"
setup "usage: valgrind_test.sh PATH/TO/scaleppm [PATH/TO/genimage]" "$@"
cd "$WORK"
mkdir od

if ! have valgrind; then
    printf 'skip - valgrind is not installed\n'
    exit 77
fi
if ! have nm; then
    printf 'skip - nm (binutils) is needed to tell a sanitizer build\n'
    exit 77
fi
if nm -- "$SP" 2>/dev/null | grep -E '__(asan|tsan|msan|ubsan)_' >/dev/null; then
    printf 'skip - %s is a sanitizer build, which valgrind cannot run\n' "$SP"
    exit 77
fi

noise 67 41 255 1 3 >c.ppm
noise 23 19 65535 4 1 >g16.pgm
pnmnoraw c.ppm >plain.ppm
head -c 500 c.ppm >cut.ppm
c2=od/c2.ppm
"$SP" -s 2 c.ppm "$c2"

# vg WHAT WANT ARGS...: scaleppm ARGS under memcheck must exit WANT with a
# clean valgrind log.  Standard input is c.ppm; stdout goes to o.
vg() {
    local what=$1 want=$2 rc=0 why=''
    shift 2
    valgrind -q --log-file=vg.log --error-exitcode=99 --leak-check=full \
        --show-leak-kinds=definite,indirect \
        --errors-for-leak-kinds=definite,indirect --track-fds=no \
        "$SP" "$@" <c.ppm >o 2>e || rc=$?
    if ((rc == 99)) || [[ -s vg.log ]]; then
        why="valgrind: $(grep -m 1 -E '== (Invalid|Conditional|Use of|[0-9,]+ bytes in)' vg.log ||
            head -n 1 vg.log)"
    elif ((rc != want)); then
        why="exit $rc, want $want: $(head -n 1 e)"
    fi
    result "memcheck: $what" "$why"
}

for io in "${IO_PATHS[@]}"; do
    vg "$io, sample reduce by 3" 0 --io "$io" -t 4 -s -3 c.ppm "od/$io-s.ppm"
    vg "$io, box reduce by 4" 0 --io "$io" -t 4 --filter box -s -4 c.ppm \
        "od/$io-b.ppm"
    vg "$io, box reduce by 3, 16-bit" 0 --io "$io" --filter box -s -3 \
        g16.pgm "od/$io-g.pgm"
done
vg 'enlarge by 3 to PNG' 0 -s 3 c.ppm od/x.png
vg '16-bit enlarge to PNG' 0 -s 2 g16.pgm od/g.png
vg 'reduce by 2 to JPEG, 4:4:4' 0 -t 3 --subsample 444 -s -2 c.ppm od/x.jpg
vg '16-bit gray enlarge to JPEG' 0 -s 2 g16.pgm od/g.jpg
ln -s /dev/full od/full.png
ln -s /dev/full od/full.jpg
vg 'output .png to /dev/full (libpng left by longjmp)' 1 -s 2 c.ppm \
    od/full.png
vg 'output .jpg to /dev/full (libjpeg left by longjmp)' 1 -s 2 c.ppm \
    od/full.jpg
vg 'stdin to stdout' 0 -s 2 - -
why=''
cmp -s o "$c2" || why='stdout differs from the file output'
result 'memcheck: stdin to stdout gives the right bytes' "$why"
vg 'plain P3 input' 0 -s 2 plain.ppm od/p.ppm
vg '--timings=json -v' 0 --timings=json -v -s -2 c.ppm od/t.ppm
for io in "${IO_PATHS[@]}"; do
    vg "$io, --no-output --timings" 0 --io "$io" -t 3 --no-output --timings \
        -s -3 c.ppm
done
vg 'a truncated input' 1 -s 2 cut.ppm od/cut.ppm
vg 'a missing input' 1 -s 2 nope.ppm od/nope.ppm
vg 'output /dev/full' 1 -s 2 c.ppm /dev/full
vg 'output .png to a missing directory' 1 -s 2 c.ppm od/no/x.png
vg 'refused by --max-pixels' 1 --max-pixels 100 -s 2 c.ppm od/mp.ppm
vg 'a usage error' 2 -s 0 c.ppm od/u.ppm

# JPEG and PNG inputs (the decoders, by every path), and bad ones.
if have pnmtojpeg && have pnmtopng; then
    pnmtojpeg c.ppm >c.jpg
    pnmtojpeg -progressive -greyscale c.ppm >p.jpg
    pnmtopng -interlace g16.pgm >g16.png
    pamdepth 255 c.ppm | pnmquant 16 2>/dev/null | pnmtopng >pal.png
    head -c 700 c.jpg >cut.jpg
    head -c 300 g16.png >cut.png
    for io in "${IO_PATHS[@]}"; do
        vg "$io, JPEG, box reduce by 3" 0 --io "$io" --filter box -s -3 \
            c.jpg "od/$io-j.ppm"
        vg "$io, interlaced 16-bit PNG" 0 --io "$io" -s -2 g16.png \
            "od/$io-p.pgm"
    done
    vg 'progressive gray JPEG' 0 -s -2 p.jpg od/pj.pgm
    vg 'palette PNG' 0 -s -2 pal.png od/pal.ppm
    vg 'a truncated JPEG' 1 -s 2 cut.jpg od/cj.ppm
    vg 'a truncated PNG, mmap' 1 --io mmap -s 2 cut.png od/cp.ppm
    if have convert; then
        convert c.ppm -colorspace cmyk cmyk.jpg
        vg 'CMYK JPEG' 0 -s -2 cmyk.jpg od/cmyk.ppm
    fi
else
    printf 'skip - pnmtojpeg or pnmtopng not installed: no JPEG or PNG runs\n'
fi

finish
