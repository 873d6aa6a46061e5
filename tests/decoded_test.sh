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
# or corrupt file is one line on stderr, exit 1 and no output file.  Then
# 2-bit gray with tRNS (pngtopam -alphapam), CMYK (jpegtopnm), images after
# an image and junk after one, the codec in -v and --timings, and a
# stream's bounds.
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

# refused WHAT WORDS CMD...: CMD exits 1 with one line matching WORDS and
# leaves no out.pnm.
refused() {
    local what=$1 words=$2 rc=0 why=
    shift 2
    rm -f out.pnm
    "$@" 2>err || rc=$?
    ((rc == 1)) || why="exit $rc"
    [[ -e out.pnm ]] && why="an output was left"
    [[ $(wc -l <err) == 1 ]] && grep -Eq -- "$words" err ||
        why="stderr: $(tr '\n' '|' <err)"
    result "$what: one line, no output" "$why"
}

# 2-bit gray with a tRNS chunk: the maxval kept, as pngtopam keeps it.
printf 'P2\n4 2\n3\n0 1 2 3\n3 2 1 0\n' >g2.pgm
pnmtopng -transparent=rgb:55/55/55 g2.pgm >trns.png
pngtopam -alphapam trns.png >trns.png.ref
for io in "${IO_PATHS[@]}"; do
    check "2-bit gray with tRNS by $io is pngtopam -alphapam's" \
        by_path trns.png "$io"
done

# RGB with a tRNS colour: that colour transparent, every other opaque, as
# libpng and the PNG specification have it (the manual says so), where
# pngtopam -alphapam leaves it opaque: the reference is written here.
printf 'P3\n4 1\n255\n0 0 255 0 0 254 1 0 255 200 100 50\n' >key.ppm
pnmtopng -force -transparent=rgb:00/00/ff key.ppm >key.png  # RGB, not a palette
{
    printf 'P7\nWIDTH 4\nHEIGHT 1\nDEPTH 4\nMAXVAL 255\nTUPLTYPE RGB_ALPHA\nENDHDR\n'
    printf '\0\0\377\0\0\0\376\377\1\0\377\377\310\144\62\377'
} >key.png.ref
for io in "${IO_PATHS[@]}"; do
    check "RGB with a tRNS colour by $io: that colour alone transparent" \
        by_path key.png "$io"
done

# A CMYK JPEG (ImageMagick writes Adobe's inverted inks): jpegtopnm's RGB.
if have convert && have jpegtopnm; then
    convert rgb.ppm -colorspace cmyk cmyk.jpg
    jpegtopnm cmyk.jpg >cmyk.jpg.ref 2>/dev/null
    for io in "${IO_PATHS[@]}"; do
        check "CMYK JPEG by $io is jpegtopnm's" by_path cmyk.jpg "$io"
    done
    check "CMYK JPEG by a pipe is jpegtopnm's" by_pipe cmyk.jpg
else
    skip 'CMYK JPEG' 'convert (ImageMagick) or jpegtopnm not installed'
fi

# A progressive JPEG decoded at 1/8 stops after the last scan its output
# needs (the DC's, and every scan of a component whose inverse DCT is
# larger than 1 x 1: 4:2:0 chroma's is 2 x 2): libjpeg's full 1/8 decode
# (djpeg -scale 1/8), byte for byte, for cjpeg's scans at 4:2:0 and
# 4:4:4, gray, DC refinement last (no scan skipped), every coefficient in
# the first scans (all but one skipped, where smoothing would change the
# DC), and a CMYK one (a baseline copy's by jpegtran, same coefficients).
# A box reduce by 8 of sides that are multiples of 8 is the 1/8 decode.
if have cjpeg && have jpegtran; then
    noise 104 72 255 21 3 >p8.ppm
    printf '%s\n' '0 1 2: 0 0 0 1;' '0: 1 5 0 2;' '2: 1 63 0 1;' \
        '1: 1 63 0 1;' '0: 6 63 0 2;' '0: 1 63 2 1;' '2: 1 63 1 0;' \
        '1: 1 63 1 0;' '0: 1 63 1 0;' '0 1 2: 0 0 1 0;' >dclast.txt
    printf '%s\n' '0 1 2: 0 0 0 0;' '0: 1 9 0 0;' '1: 1 63 0 0;' \
        '2: 1 63 0 0;' '0: 10 63 0 1;' >whole.txt
    cjpeg -progressive p8.ppm >p420.jpg
    cjpeg -progressive -sample 1x1 p8.ppm >p444.jpg
    cjpeg -progressive -grayscale p8.ppm >pgray.jpg
    cjpeg -scans dclast.txt -sample 1x1 p8.ppm >pdclast.jpg
    cjpeg -scans whole.txt -sample 1x1 p8.ppm >pwhole.jpg
    eighths=(p420.jpg p444.jpg pgray.jpg pdclast.jpg pwhole.jpg)
    for f in "${eighths[@]}"; do
        djpeg -scale 1/8 -pnm "$f" >"$f.8"
    done
    if have convert; then
        convert p8.ppm -colorspace cmyk -interlace JPEG pcmyk.jpg
        jpegtran pcmyk.jpg >bcmyk.jpg
        "$SP" -s -8 --filter box bcmyk.jpg pcmyk.jpg.8.pnm
        mv pcmyk.jpg.8.pnm pcmyk.jpg.8
        eighths+=(pcmyk.jpg)
    else
        skip 'progressive CMYK JPEG at 1/8' \
            'convert (ImageMagick) not installed'
    fi
    eighth_path() {
        "$SP" -s -8 --filter box --io "$2" "$1" out.pnm && same out.pnm "$1.8"
    }
    eighth_pipe() {
        "$SP" -s -8 --filter box <"$1" | cat >out.pnm && same out.pnm "$1.8"
    }
    for f in "${eighths[@]}"; do
        for io in "${IO_PATHS[@]}"; do
            check "progressive $f at 1/8 by $io is libjpeg's" \
                eighth_path "$f" "$io"
        done
        check "progressive $f at 1/8 by a pipe is libjpeg's" eighth_pipe "$f"
    done
    # The scans not decoded are still read past: the next image is found.
    cat p444.jpg pgray.jpg p420.jpg >eighths.jpg
    cat p444.jpg.8 pgray.jpg.8 p420.jpg.8 >eighths.jpg.8
    for io in "${IO_PATHS[@]}"; do
        check "three progressive JPEGs in one file at 1/8 by $io" \
            eighth_path eighths.jpg "$io"
    done
    check "three progressive JPEGs through a pipe at 1/8" \
        eighth_pipe eighths.jpg
else
    skip 'progressive JPEGs at 1/8' 'cjpeg or jpegtran not installed'
fi

# What follows an image's end: whitespace, another image (of any codec),
# or junk, refused as after a PNM image.
{ cat gray.png; printf '\n\n'; cat gray.jpg; cat gray.pgm; } >three
cat gray.png.ref gray.jpg.ref gray.pgm >three.ref
# from_pipe F: scaleppm -s 1 of F through a pipe (not a file as standard
# input) into out.pnm.
from_pipe() {
    # shellcheck disable=SC2002  # the pipe is the point
    cat "$1" | "$SP" -s 1 - out.pnm
}
all_images() {
    "$SP" -s 1 --io "$1" three out.pnm && same out.pnm three.ref
}
for io in "${IO_PATHS[@]}"; do
    check "PNG, JPEG, PGM in one file by $io: every image" all_images "$io"
done
check "PNG, JPEG, PGM through a pipe: every image" \
    eval 'from_pipe three && same out.pnm three.ref'
# After a JPEG or PNG, bytes that begin no image are ignored, as djpeg,
# pngtopam and vips ignore them (a phone's motion photo appends its video
# there); bytes that begin as a PNM would are the next image, or refused.
{ cat rgb.jpg; printf '\0\0\0\030ftypmp42 and the rest'; } >motion.jpg
"$SP" -s 1 rgb.jpg plain.pnm
motion_file() { "$SP" -s 1 motion.jpg out.pnm && same out.pnm plain.pnm; }
motion_pipe() { from_pipe motion.jpg && same out.pnm plain.pnm; }
check "a video after a JPEG: ignored" motion_file
check "a video after a JPEG, from a pipe: ignored" motion_pipe
{ cat rgb.jpg; printf 'Pjunk'; } >junk.jpg
refused "a bad PNM after a JPEG" 'not a format scaleppm reads: image 2' "$SP" -s 1 junk.jpg out.pnm
refused "a bad PNM after a JPEG, from a pipe" 'not a format scaleppm reads: image 2' \
    from_pipe junk.jpg

# The codec in -v and in --timings records.
"$SP" -v --timings=json -s 1 rgb.png out.pnm 2>err
check "--timings=json names the codec (png)" grep -q '"codec":"png"' err
check "-v names the codec" grep -q 'PNG decoded to P6 97x61' err
"$SP" --timings -s 1 - out.pnm <prog.jpg 2>err
check "--timings names the codec (jpeg, standard input)" grep -q ' codec=jpeg ' err

# A stream's bounds: a PNG whose header never ends (a 20 MiB chunk before
# IDAT) and one whose data runs past twice its raster and 16 MiB.
"${PYTHON:-/usr/bin/python3}" - <<'BIG'
import struct, zlib
def chunk(kind, data):
    crc = zlib.crc32(kind + data) & 0xffffffff
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)
sig = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 0, 0, 0, 0))
idat = chunk(b"IDAT", zlib.compress(b"\0\7"))
big = chunk(b"prVt", bytes(20 << 20))
open("meta.png", "wb").write(sig + big + idat + chunk(b"IEND", b""))
open("tail.png", "wb").write(sig + idat + big + chunk(b"IEND", b""))
BIG
refused "a stream's PNG header past 16 MiB" 'bad PNG header: no image in the first 16 MiB' \
    from_pipe meta.png
refused "a stream's PNG past twice its raster and 16 MiB" \
    'image too large: PNG: more than' \
    from_pipe tail.png
by_paths() {
    "$SP" -s 1 meta.png out.pnm && "$SP" -s 1 tail.png out.pnm
}
check "the same PNGs by path: no limit" by_paths
finish
