#!/usr/bin/env bash
# decoded_test.sh: JPEG and PNG inputs (issue 28, item 1) against netpbm's
# and libjpeg's own decoders, made here from seeded noise and a smooth
# image by netpbm's encoders (pnmtojpeg, pnmtopng).
# Oracles:
#   djpeg -pnm   a JPEG, byte for byte (the same libjpeg at its defaults);
#   pngtopam     a PNG, byte for byte (-alphapam with alpha): 8 and 16
#                bits, gray, RGB, palette, interlaced, with alpha;
#   scaleppm on the decoded PNM: a reduce of the JPEG/PNG gives the bytes
#                of the same reduce of its PNM.
# Every input by file on --io read, mmap and pread, and by a pipe; a cut
# or corrupt file is one line on stderr, exit 1 and no output file.
#
# usage: bash tests/decoded_test.sh PATH/TO/scaleppm [PATH/TO/genimage]
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$here/lib.sh"
setup "usage: decoded_test.sh PATH/TO/scaleppm [PATH/TO/genimage]" "$@"
cd "$WORK"

for tool in djpeg pnmtojpeg pnmtopng pngtopam pnmquant; do
    if ! have "$tool"; then
        skip 'decoded' "$tool not installed"
        finish
        exit
    fi
done

noise 97 61 255 7 3 >rgb.ppm
noise 97 61 255 9 1 >gray.pgm
noise 53 40 65535 11 3 >rgb16.ppm
noise 53 40 65535 13 1 >gray16.pgm
pamdepth 255 rgb16.ppm | pnmquant 50 >pal.ppm 2>/dev/null
pamtopnm -assume <(noise 53 40 255 17 1) >alpha.pgm
pnmtojpeg -quality=85 rgb.ppm >rgb.jpg
pnmtojpeg -quality=85 gray.pgm >gray.jpg
pnmtojpeg -quality=95 -progressive rgb.ppm >prog.jpg
pnmtopng rgb.ppm >rgb.png
pnmtopng gray.pgm >gray.png
pnmtopng rgb16.ppm >rgb16.png
pnmtopng gray16.pgm >gray16.png
pnmtopng -interlace rgb.ppm >inter.png
pnmtopng pal.ppm >pal.png
pnmtopng -alpha=alpha.pgm <(pamcut -width 53 -height 40 rgb.ppm) >alpha.png

for f in rgb.jpg gray.jpg prog.jpg; do
    djpeg -pnm "$f" >"$f.ref"
done
for f in rgb.png gray.png rgb16.png gray16.png inter.png pal.png; do
    pngtopam "$f" >"$f.ref"
done
pngtopam -alphapam alpha.png >alpha.png.ref

# by_path F IO, by_pipe F, reduced F: scaleppm's output of F as expected.
by_path() {
    "$SP" -s 1 --io "$2" "$1" out.pnm && same out.pnm "$1.ref"
}
by_pipe() {
    "$SP" -s 1 <"$1" | cat >out.pnm && same out.pnm "$1.ref"
}
reduced() {
    "$SP" -s -3 --filter box "$1" out.pnm &&
        "$SP" -s -3 --filter box "$1.ref" ref.pnm && same out.pnm ref.pnm
}

for f in *.jpg *.png; do
    for io in "${IO_PATHS[@]}"; do
        check "$f by $io is its decoder's" by_path "$f" "$io"
    done
    check "$f by a pipe is its decoder's" by_pipe "$f"
    check "$f reduced by 3 (box) as its PNM" reduced "$f"
done

# A cut file and a corrupt one: one line, exit 1, no output.
head -c 2000 rgb.jpg >cut.jpg
head -c 2000 rgb16.png >cut.png
{ head -c 1000 rgb.png; head -c 64 /dev/zero; tail -c +1065 rgb.png; } >bad.png
for f in cut.jpg cut.png bad.png; do
    for io in "${IO_PATHS[@]}"; do
        rm -f out.pnm
        rc=0
        "$SP" -s -2 --io "$io" "$f" out.pnm 2>err || rc=$?
        why=
        ((rc == 1)) || why="exit $rc"
        [[ -e out.pnm ]] && why="an output was left"
        [[ $(wc -l <err) == 1 ]] || why="stderr: $(cat err)"
        result "$f by $io: one line, no output ($(head -c 80 err))" "$why"
    done
done
# --max-pixels from the header, before decoding
rc=0
"$SP" -s -2 --max-pixels 100 rgb.jpg out.pnm 2>err || rc=$?
result "--max-pixels refuses a JPEG" \
    "$( ((rc == 1)) && grep -q max-pixels err || echo "exit $rc: $(cat err)")"
finish
