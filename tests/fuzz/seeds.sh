#!/usr/bin/env bash
# seeds.sh: write the fuzzers' seed corpus (good and bad PNM files, and
# JPEG and PNG made from them by netpbm's and libjpeg's tools) into a
# directory, so that no binary seed is kept in git.
set -euo pipefail

usage() {
    cat <<'USAGE'
usage: seeds.sh OUTDIR GENIMAGE

Writes the seed corpus of the fuzz harnesses into OUTDIR (created; files
already there are replaced): valid P2, P3, P5 and P6 files of 8 and 16
bits from GENIMAGE (build/images/genimage) and printf, with comments, odd
sizes and 1x1, PBM and PAM of every tuple type, a multi-image stream,
and the known-bad cases (junk, truncated, zero
and huge dimensions, maxval 0 and 65536, bad plain samples); JPEG and PNG
of every kind the decoders take, where netpbm's and libjpeg's tools are
installed (pnmtojpeg, pnmtopng, pnmquant, cjpeg; convert for CMYK),
among them arithmetic-coded JPEGs; libpng's pngtest.png, where Debian
ships it; PNG of every colour type, bit depth and ancillary chunk, as
pngsuite has them, and ones whose chunks claim gigabytes (python3).
USAGE
}

if [[ ${1:-} == -h || ${1:-} == --help ]]; then
    usage
    exit 0
fi
if (($# != 2)); then
    usage >&2
    exit 2
fi
out=$1 genimage=$2
mkdir -p "$out"

# gen NAME [GENIMAGE_ARGS...]: a test pattern image from genimage.
gen() {
    local name=$1
    shift
    "$genimage" -o "$out/$name" "$@"
}

# put NAME FORMAT [ARGS...]: a file written by printf.
put() {
    local name=$1
    shift
    # shellcheck disable=SC2059  # the format is the point
    printf "$@" >"$out/$name"
}

# Good files: every format, 8 and 16 bits, small and odd sizes.
gen p6-1x1.ppm 1 1
gen p6-3x2.ppm 3 2
gen p6-17x9.ppm 17 9
gen p6-40x30.ppm 40 30
gen p5-1x1.pgm -g 1 1
gen p5-5x3.pgm -g 5 3
gen p5-33x21.pgm -g 33 21
gen p6-16bit-4x3.ppm -m 65535 4 3
gen p6-16bit-9x7.ppm -m 1000 9 7
gen p5-16bit-7x5.pgm -g -m 65535 7 5
gen p5-16bit-maxval256-3x3.pgm -g -m 256 3 3
gen p5-maxval1-6x4.pgm -g -m 1 6 4
gen p6-maxval100-5x5.ppm -m 100 5 5
gen p3-3x2.ppm -p 3 2
gen p3-7x5.ppm -p 7 5
gen p2-5x4.pgm -p -g 5 4
gen p2-1x1.pgm -p -g 1 1
gen p3-16bit-2x2.ppm -p -m 65535 2 2
gen p2-16bit-3x3.pgm -p -g -m 65535 3 3
gen p2-maxval1-4x4.pgm -p -g -m 1 4 4
put p5-comments.pgm 'P5\n# a comment\n2 2 # after the size\n# another\n255\n\001\002\003\004'
put p5-spaces.pgm 'P5 \t 3\r\n1 \n 255 \001\002\003'
put p6-minimal.ppm 'P6 1 1 255 abc'
put p2-comments.pgm 'P2\n# c\n3 2\n255\n0 128 255\n# mid-raster\n1 2 3\n'
put p3-one-line.ppm 'P3 2 1 65535 0 1 65535 65535 2 3'
put p2-no-final-newline.pgm 'P2 2 2 9 1 2 3 9'
put p5-trailing-junk.pgm 'P5 2 1 255\n\001\002trailing junk'
put p5-two-images.pgm 'P5 1 1 255\n\001P5 1 1 255\n\002'
put p1-3x2.pbm 'P1\n3 2\n0 1 0\n101\n'
put p4-9x2.pbm 'P4\n9 2\n\377\200\125\000'
put p4-16x1.pbm 'P4 16 1\n\252\125'
put p7-gray.pam 'P7\nWIDTH 2\nHEIGHT 1\nDEPTH 1\nMAXVAL 255\nTUPLTYPE GRAYSCALE\nENDHDR\n\001\002'
put p7-rgba.pam 'P7\nWIDTH 2\nHEIGHT 2\nDEPTH 4\nMAXVAL 255\nTUPLTYPE RGB_ALPHA\nENDHDR\n\377\000\000\377\000\000\377\000\001\002\003\200\004\005\006\000'
put p7-ga16.pam 'P7\nWIDTH 1\nHEIGHT 2\nDEPTH 2\nMAXVAL 1000\nTUPLTYPE GRAYSCALE_ALPHA\nENDHDR\n\001\002\003\004\000\005\000\006'
put p7-depth5.pam 'P7\nWIDTH 2\nHEIGHT 1\nDEPTH 5\nMAXVAL 255\nENDHDR\n0123456789'
put p7-bw.pam 'P7\nWIDTH 3\nHEIGHT 1\nDEPTH 1\nMAXVAL 1\nTUPLTYPE BLACKANDWHITE\nENDHDR\n\000\001\000'
put p4-two-images.pbm 'P4 8 1\n\125P4 8 1\n\252'
# Several images: whitespace between them as netpbm's writers leave it
# (plain images end in a newline), CRLF, every whitespace byte; and what
# is not whitespace after an image (another format's bytes, text).
put p1-two-images.pbm 'P1\n3 2\n0 1 0\n1 0 1\nP1\n2 1\n1 0\n'
put p2-crlf-two-images.pgm 'P2\r\n2 1\r\n9\r\n1 2 \r\n\r\nP2\r\n1 1\r\n9\r\n7 \r\n'
put p3-p6-spaces.ppm 'P3 1 1 255 1 2 3 \n \t\v\f\rP6 1 1 255\n\001\002\003\n'
put p5-newline-three.pgm 'P5 1 1 255\n\001\nP5 2 1 255\n\002\003\n\nP5 1 1 255\n\004 '
put bad-jpeg-after.ppm 'P6 1 1 255\n\001\002\003\377\330\377\340\000\020JFIF\000'
put bad-text-after.pgm 'P5 1 1 255\n\001\n some text\n'
put bad-p-after.pgm 'P5 1 1 255\n\001 P'
put p6-16bit-le.ppm 'P6 1 2 65535\n\377\000\000\377\001\002\003\004\005\006\007\010'

# Bad files: each must be refused with a status, never a crash or exit.
put bad-empty ''
printf 'P' >"$out/bad-p"
put bad-p1-digit.pbm 'P1\n2 1\n0 2\n'
put bad-p4-short.pbm 'P4\n9 2\n\125'
put bad-p7-depth0.pam 'P7\nWIDTH 1\nHEIGHT 1\nDEPTH 0\nMAXVAL 255\nENDHDR\n'
put bad-p7-noend.pam 'P7\nWIDTH 1\nHEIGHT 1\nDEPTH 1\nMAXVAL 255\n\000'
put bad-p7-short.pam 'P7\nWIDTH 2\nHEIGHT 2\nDEPTH 4\nMAXVAL 255\nENDHDR\n\001'
put bad-p8 'P8 1 1 255\n\000'
put bad-junk 'GIF89a\001\000\001\000'
put bad-magic-only.ppm 'P6\n'
put bad-no-maxval.pgm 'P5 2 2'
put bad-truncated.ppm 'P6 4 4 255\n0123456789'
put bad-truncated-16bit.pgm 'P5 2 2 65535\n\001\002\003'
put bad-truncated-plain.pgm 'P2 3 3 255\n1 2 3\n'
put bad-width0.pgm 'P5 0 1 255\n'
put bad-height0.ppm 'P6 1 0 255\n'
put bad-negative.pgm 'P5 -1 1 255\n\000'
put bad-huge.ppm 'P6 4294967295 4294967295 255\n\000'
put bad-huge-int.ppm 'P6 2147483647 2147483647 65535\n\000'
put bad-huge-digits.pgm 'P5 99999999999999999999 1 255\n\000'
put bad-maxval0.pgm 'P5 1 1 0\n\000'
put bad-maxval65536.pgm 'P5 1 1 65536\n\000\000'
put bad-maxval-huge.ppm 'P3 1 1 4294967296 1 2 3'
put bad-plain-over-maxval.pgm 'P2 2 1 255\n0 256\n'
put bad-plain-letter.pgm 'P2 2 1 255\n0 x\n'
put bad-plain-negative.ppm 'P3 1 1 255\n1 -2 3\n'
put bad-plain-huge-sample.pgm 'P2 1 1 65535\n99999999999\n'
put bad-comment-unterminated.pgm 'P5 # no end'
put bad-nul-in-header.pgm 'P5 1\0001 255\n\000'

# JPEG and PNG (fuzz_decode, fuzz_scale): gray, RGB, progressive,
# arithmetic, restart markers, 4:4:4, CMYK; 1 to 16 bits, palette,
# interlaced, alpha, tRNS; and cut ones.
have() {
    command -v "$1" >/dev/null 2>&1
}
if have pnmtojpeg && have pnmtopng && have pnmquant && have cjpeg; then
    gen src.ppm 16 12
    gen src.pgm -g 13 9
    gen src16.ppm -m 65535 7 5
    gen src-bw.pgm -g -m 1 9 3
    gen src-4.pgm -g -m 3 6 2
    pnmtojpeg "$out/src.ppm" >"$out/jpeg-rgb.jpg"
    pnmtojpeg "$out/src.pgm" >"$out/jpeg-gray.jpg"
    pnmtojpeg -progressive "$out/src.ppm" >"$out/jpeg-progressive.jpg"
    pnmtojpeg -sample=1x1,1x1,1x1 -quality=100 "$out/src.ppm" \
        >"$out/jpeg-444.jpg"
    cjpeg -arithmetic "$out/src.ppm" >"$out/jpeg-arithmetic.jpg"
    cjpeg -arithmetic -progressive "$out/src.ppm" \
        >"$out/jpeg-arithmetic-progressive.jpg"
    cjpeg -arithmetic -restart 1 "$out/src.pgm" >"$out/jpeg-arithmetic-gray-restart.jpg"
    # uniform: its scan's data ends early and libjpeg feeds zeros
    ppmmake rgb:80/80/80 64 64 | cjpeg -arithmetic >"$out/jpeg-arithmetic-uniform.jpg"
    cjpeg -restart 1B -optimize "$out/src.ppm" >"$out/jpeg-restart.jpg"
    pnmtopng "$out/src.ppm" >"$out/png-rgb.png"
    pnmtopng "$out/src.pgm" >"$out/png-gray.png"
    pnmtopng "$out/src16.ppm" >"$out/png-rgb16.png"
    pnmtopng "$out/src-bw.pgm" >"$out/png-1bit.png"
    pnmtopng -transparent=rgb:1/1/1 "$out/src-4.pgm" >"$out/png-2bit-trns.png"
    pnmtopng -interlace "$out/src.ppm" >"$out/png-interlaced.png"
    pnmquant 8 "$out/src.ppm" 2>/dev/null | pnmtopng >"$out/png-palette.png"
    pnmtopng -alpha="$out/src-4.pgm" <(pamcut -width 6 -height 2 \
        "$out/src.ppm") >"$out/png-alpha.png" 2>/dev/null || true
    if have convert; then
        convert "$out/src.ppm" -colorspace cmyk "$out/jpeg-cmyk.jpg"
    fi
    head -c 300 "$out/jpeg-rgb.jpg" >"$out/bad-jpeg-cut.jpg"
    head -c 90 "$out/png-rgb.png" >"$out/bad-png-cut.png"
    rm "$out"/src*
fi

# The reference decoders' own test files, where Debian ships them
# (libpng's pngtest.png; libjpeg-turbo's test images are not packaged).
pngtest=/usr/share/doc/libpng-dev/examples/pngtest.png
[[ ! -r $pngtest ]] || cp "$pngtest" "$out/ref-pngtest.png"

# PNG as pngsuite has them: every colour type and bit depth, interlaced or
# not, odd sizes, tRNS of every kind, every ancillary chunk libpng knows;
# and ancillary chunks that claim gigabytes, or hold 200 KiB (fuzz_decode
# takes inputs of up to 256 KiB).
if have python3; then
    python3 - "$out" <<'SUITE'
import struct, sys, zlib

out = sys.argv[1] + "/"

def chunk(kind, data):
    crc = zlib.crc32(kind + data) & 0xffffffff
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)

# Adam7's passes: first column and row, steps across and down.
ADAM7 = ((0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4),
         (1, 0, 2, 2), (0, 1, 1, 2))

def png(name, w, h, depth, kind, interlace=0, extra=b"", after=b""):
    channels = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}[kind]
    rows = b""
    for x0, y0, dx, dy in ADAM7 if interlace else ((0, 0, 1, 1),):
        pw, ph = (w - x0 + dx - 1) // dx, (h - y0 + dy - 1) // dy
        row = (pw * channels * depth + 7) // 8
        for y in range(ph if pw > 0 else 0):  # every filter type, noise
            rows += bytes([y % 5]) + bytes((x * 7 + y * 13) % 256 for x in range(row))
    ihdr = struct.pack(">IIBBBBB", w, h, depth, kind, 0, 0, interlace)
    plte = chunk(b"PLTE", bytes(range(256)) * 3) if kind == 3 else b""
    data = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + extra + plte +
            chunk(b"IDAT", zlib.compress(rows)) + after + chunk(b"IEND", b""))
    open(out + name, "wb").write(data)

for kind, depths in ((0, (1, 2, 4, 8, 16)), (2, (8, 16)), (3, (1, 2, 4, 8)),
                     (4, (8, 16)), (6, (8, 16))):
    for depth in depths:
        for lace in (0, 1):
            png("suite-c%dd%02di%d.png" % (kind, depth, lace), 39, 39 if lace else 7,
                depth, kind, lace)
png("suite-1x1-interlaced.png", 1, 1, 8, 2, 1)
png("suite-trns-gray16.png", 5, 3, 16, 0, 0, chunk(b"tRNS", b"\x01\x02"))
png("suite-trns-rgb.png", 5, 3, 8, 2, 0, chunk(b"tRNS", b"\0\1\0\2\0\3"))
png("suite-trns-palette.png", 5, 3, 4, 3, 1)  # tRNS after PLTE: below
p = open(out + "suite-trns-palette.png", "rb").read()
at = p.index(b"IDAT") - 4
open(out + "suite-trns-palette.png", "wb").write(p[:at] + chunk(b"tRNS", bytes(range(0, 256, 16))) + p[at:])
ancillary = (chunk(b"gAMA", struct.pack(">I", 45455)) +
             chunk(b"cHRM", struct.pack(">8I", 31270, 32900, 64000, 33000, 30000, 60000, 15000, 6000)) +
             chunk(b"sRGB", b"\0") + chunk(b"sBIT", b"\5\6\5") +
             chunk(b"iCCP", b"icc\0\0" + zlib.compress(bytes(200))) +
             chunk(b"pHYs", struct.pack(">IIB", 2835, 2835, 1)) +
             chunk(b"oFFs", struct.pack(">iiB", 10, -10, 0)) +
             chunk(b"pCAL", b"cal\0" + struct.pack(">iiBB", 0, 100, 0, 1) + b"m\0" + b"1.5") +
             chunk(b"sCAL", b"\x011.5\x002.5") +
             chunk(b"sPLT", b"pal\0\x08" + bytes(6 * 4)) +
             chunk(b"tIME", struct.pack(">HBBBBB", 2024, 1, 2, 3, 4, 5)) +
             chunk(b"tEXt", b"Title\0a title") +
             chunk(b"zTXt", b"Comment\0\0" + zlib.compress(b"a comment" * 50)) +
             chunk(b"iTXt", b"Author\0\0\0en\0\0someone") +
             chunk(b"eXIf", b"MM\0*\0\0\0\x08\0\0") + chunk(b"prVt", b"private"))
png("suite-ancillary.png", 6, 4, 8, 2, 0, ancillary,
    chunk(b"tEXt", b"After\0the image") + chunk(b"bKGD", b"\0\1\0\2\0\3"))
png("suite-ancillary-palette.png", 6, 4, 8, 3, 0,
    chunk(b"hIST", bytes(512)) + chunk(b"bKGD", b"\3"))
png("suite-big-text.png", 16, 16, 8, 0, 0, chunk(b"tEXt", b"Big\0" + bytes(range(32, 127)) * 2150))
png("suite-big-private.png", 16, 16, 8, 0, 0, chunk(b"prVt", bytes(200 << 10)))
# a chunk claiming 2^31 - 1 bytes, then a few
head = open(out + "suite-c0d08i0.png", "rb").read()[:33]
for kind in (b"pCAL", b"sCAL", b"sPLT", b"tEXt", b"zTXt", b"iTXt", b"iCCP", b"eXIf", b"prVt", b"IDAT"):
    open(out + "bad-png-huge-%s.png" % kind.decode(), "wb").write(
        head + struct.pack(">I", 0x7FFFFFFF) + kind + bytes(64))

# Metadata (meta.h): a profile of the samples' colour space and an EXIF
# Orientation, in PNG chunks and in JPEG markers; and the bad cases: a
# profile claiming 2 GiB, another colour space, EXIF of no byte order
# before a good one, an eXIf past 64 KiB, ICC markers that do not add up.
def icc(space, claim=None, n=256):
    p = bytearray(n)
    p[0:4] = struct.pack(">I", n if claim is None else claim)
    p[8:10] = b"\x02\x10"
    p[12:24] = b"mntr" + space + b"XYZ "
    p[36:40] = b"acsp"
    p[68:80] = bytes.fromhex("0000f6d6000100000000d32d")
    # a pattern after the empty tag table: libpng takes no iCCP chunk of
    # fewer than 92 bytes
    p[132:] = bytes((i * 31 + (i >> 8)) & 255 for i in range(132, n))
    return bytes(p)

def exif(o, order=b"MM"):
    return order + b"\0*\0\0\0\x08\0\x01\x01\x12\0\x03\0\0\0\x01" + \
        struct.pack(">H", o) + bytes(6)

def iccp(profile):
    return chunk(b"iCCP", b"icc\0\0" + zlib.compress(profile))

png("suite-meta.png", 5, 3, 8, 2, 0, iccp(icc(b"RGB ")) + chunk(b"eXIf", exif(6)))
png("suite-meta-gray.png", 5, 3, 8, 0, 0, iccp(icc(b"GRAY")) + chunk(b"eXIf", exif(3)))
png("bad-png-meta.png", 5, 3, 8, 2, 0,
    iccp(icc(b"RGB ", 0x80000000)) + iccp(icc(b"GRAY")) +
    chunk(b"eXIf", exif(6, b"XX")) + chunk(b"eXIf", exif(9)))
png("bad-png-exif-long.png", 5, 3, 8, 2, 0, chunk(b"eXIf", exif(6) + bytes(70000)))
try:
    jpeg = open(out + "jpeg-rgb.jpg", "rb").read()
except OSError:
    jpeg = None

def marker(m, data):
    return b"\xff" + bytes([m]) + struct.pack(">H", len(data) + 2) + data

if jpeg is not None:
    for name, seq in (("jpeg-meta.jpg", b"\x01\x01"), ("bad-jpeg-meta.jpg", b"\x02\x01")):
        open(out + name, "wb").write(
            jpeg[:2] + marker(0xE1, b"Exif\0\0" + exif(8, b"MM")) +
            marker(0xE2, b"ICC_PROFILE\0" + seq + icc(b"RGB ")) + jpeg[2:])
SUITE
fi

# The encode harness's inputs (fuzz_encode.c: a format, channels, a mode
# and its bytes): each stb format and channel count (1, 3) at its limits,
# one pixel beyond, and a small image written whole.
for f in 1 2 3 4; do
    for c in 0 1; do
        put "enc-$f$c-wide" "\x0$f\x0$c\x02\x00\x04\x04"
        put "enc-$f$c-wide-1" "\x0$f\x0$c\x02\x00\x04\x05"
        put "enc-$f$c-tall" "\x0$f\x0$c\x01\x00\x04\x04"
        put "enc-$f$c-tall-1" "\x0$f\x0$c\x01\x00\x04\x05"
        put "enc-$f$c-65535" "\x0$f\x0$c\x01\x0c\x04\x04"
        put "enc-$f$c-square" "\x0$f\x0$c\x03\x04\x04"
        put "enc-$f$c-square-1" "\x0$f\x0$c\x03\x05\x05"
        put "enc-$f$c-small" \
            "\x0$f\x0$c\x05\x10\x00\x09\x02\x01\x02\x03\x04%s\377\001\200" \
            "runs aaaaaaaaaaaaaaaa and bytes"
    done
done
