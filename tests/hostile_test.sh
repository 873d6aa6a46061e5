#!/usr/bin/env bash
# hostile_test.sh: scaleppm against inputs made to hurt it: bad and
# unsupported magic numbers, zero, negative, huge and wrapping dimensions and
# maxvals, numbers with junk in front, comments in odd places, every prefix
# of a header and a raster, plain samples out of range or malformed, sizes a
# tiny file cannot hold, and files that are not files (a directory, a FIFO
# whose writer closes at once, /dev/zero, /dev/null, a symbolic link loop, a
# file it may not read).  cli_test.sh has the first two dozen bad inputs;
# this one goes further.
#
# Every input is made here, from the table below, and run by every --io
# path (IO_PATHS, lib.sh: pread, the default, read, mmap), from stdin
# redirected from the file and from stdin through a pipe (where that
# means something).  Each run must exit as the table says
# (never 128 or more: no signal death); a failure prints exactly one line,
# 'scaleppm: NAME: ...' with the table's words in it, creates no output,
# leaves an existing output and the input as they were (checksums) and no
# temporary file.  An input the table accepts must give pamenlarge's bytes.
# Then outputs larger than their format holds (refused the same way), and
# -t 8 under RLIMIT_NPROC (fewer threads, the same bytes).
#
# usage: bash tests/hostile_test.sh PATH/TO/scaleppm [PATH/TO/genimage]
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$here/lib.sh"
setup "usage: hostile_test.sh PATH/TO/scaleppm [PATH/TO/genimage]" "$@"
cd "$WORK"
mkdir in od

# --- the table -----------------------------------------------------------
# NAME | EXIT | WHERE | WORDS | CONTENT
#   WHERE  all: each --io path, stdin redirected, stdin piped; file: each
#          path only; redir: each path and redirected; pipe: piped only;
#          user: --io read as an unprivileged user (each path when not
#          root: the user is already unprivileged)
#   WORDS  an extended regular expression the error line must match ('-'
#          for EXIT 0: the output must equal pamenlarge 2 of the input)
#   CONTENT a printf format for the bytes of in/NAME, or '=' when the file
#          is made further down
# The pipe character cannot appear in CONTENT (it ends the fields).
table=$(cat <<'TABLE'
# --- magic numbers: not PNM, or PNM we do not read
magic_P0.ppm      |1|all |not a format scaleppm reads|P0\n1 1\n255\n\0\0\0
magic_P8.ppm      |1|all |not a format scaleppm reads|P8\n1 1\n255\n\0\0\0
magic_Pa.ppm      |1|all |not a format scaleppm reads|Pa
magic_lower_p6.ppm|1|all |not a format scaleppm reads|p6\n1 1\n255\n\0\0\0
magic_P_only.ppm  |1|all |not a format scaleppm reads|P
magic_space.ppm   |1|all |not a format scaleppm reads|\040P6\n1 1\n255\n\0\0\0
magic_bom.ppm     |1|all |not a format scaleppm reads|\357\273\277P6\n1 1\n255\n\0\0\0
magic_nul.ppm     |1|all |not a format scaleppm reads|\0P6\n1 1\n255\n\0\0\0
magic_comment.ppm |1|all |not a format scaleppm reads|#c\nP6\n1 1\n255\n\0\0\0
magic_split.ppm   |1|all |not a format scaleppm reads|P#c\n6\n1 1\n255\n\0\0\0
pfm_color.pfm     |1|all |not a format scaleppm reads: a PFM image|PF\n1 1\n-1.0\n\0\0\0\0\0\0\0\0\0\0\0\0
pfm_gray.pfm      |1|all |not a format scaleppm reads: a PFM image|Pf\n1 1\n-1.0\n\0\0\0\0
# --- other formats' magic numbers: named, and what scaleppm reads said
webp.webp         |1|all |not a format scaleppm reads: a WebP image \(it reads PNM, PAM, JPEG and PNG\)|RIFF\044\0\0\0WEBPVP8 \030\0\0\0
gif.gif           |1|all |not a format scaleppm reads: a GIF image \(it reads PNM, PAM, JPEG and PNG\)|GIF89a\001\0\001\0\0\0\0,
tiff_le.tif       |1|all |not a format scaleppm reads: a TIFF image|II*\0\010\0\0\0
tiff_be.tif       |1|all |not a format scaleppm reads: a TIFF image|MM\0*\0\0\0\010
bmp.bmp           |1|all |not a format scaleppm reads: a BMP image|BM\072\0\0\0\0\0\0\0\066\0\0\0\050\0
heic.heic         |1|all |not a format scaleppm reads: a HEIF image|\0\0\0\030ftypheic\0\0\0\0mif1heic
avif.avif         |1|all |not a format scaleppm reads: an AVIF image|\0\0\0\034ftypavif\0\0\0\0avifmif1
jxl.jxl           |1|all |not a format scaleppm reads: a JPEG XL image|\377\012\372\037
jxl_box.jxl       |1|all |not a format scaleppm reads: a JPEG XL image|\0\0\0\014JXL \r\n\207\n\0\0\0\024
pdf.pdf           |1|all |not a format scaleppm reads: a PDF document|%%PDF-1.4\n%%\342\343\317\323\n
text.txt          |1|all |not a format scaleppm reads: no PNM or PAM \(P1 to P7\), JPEG or PNG magic number|hello\n
# --- PBM and PAM: their headers' faults
pbm_P1_bare.pbm   |1|all |bad PNM header    |P1
pbm_P4_huge.pbm   |1|redir|file is truncated|P4\n100000 100000\n\0
pbm_P4_huge_pipe.pbm|1|pipe|too large for --max-pixels|P4\n100000 100000\n\0
pbm_P4_short.pbm  |1|all |file is truncated |P4\n9 2\n\0\0\0
pbm_P1_bad.pbm    |1|all |bad pixel data    |P1\n2 1\n0 2\n
pam_P7_bare.pam   |1|all |bad PNM header    |P7\n
pam_P7_no_end.pam |1|all |bad PNM header    |P7\nWIDTH 1\nHEIGHT 1\nDEPTH 3\nMAXVAL 255\n
pam_P7_depth0.pam |1|all |bad PNM header    |P7\nWIDTH 1\nHEIGHT 1\nDEPTH 0\nMAXVAL 255\nENDHDR\n
pam_P7_maxval0.pam|1|all |bad PNM header    |P7\nWIDTH 1\nHEIGHT 1\nDEPTH 1\nMAXVAL 0\nENDHDR\n\0
pam_P7_huge_depth.pam|1|redir|file is truncated|P7\nWIDTH 1000\nHEIGHT 1000\nDEPTH 100000\nMAXVAL 65535\nENDHDR\n\0
pam_P7_short.pam  |1|all |file is truncated |P7\nWIDTH 2\nHEIGHT 1\nDEPTH 4\nMAXVAL 255\nTUPLTYPE RGB_ALPHA\nENDHDR\n\0\0\0
pam_P7_rgb.pam    |0|all |-                 |P7\nWIDTH 1\nHEIGHT 1\nDEPTH 3\nMAXVAL 255\nTUPLTYPE RGB\nENDHDR\n\0\0\0
pam_P7_rgba16.pam |0|all |-                 |P7\nWIDTH 1\nHEIGHT 1\nDEPTH 4\nMAXVAL 65535\nTUPLTYPE RGB_ALPHA\nENDHDR\n\1\2\3\4\5\6\7\10
pbm_P4_ok.pbm     |0|all |-                 |P4\n9 2\n\377\200\125\0
# --- dimensions
dims_both_zero.ppm|1|all |bad PNM header    |P6\n0 0\n255\n
dims_neg_height.pgm|1|all|bad PNM header    |P5\n3 -2\n255\n\0\0\0\0\0\0
dims_neg_zero.pgm |1|all |bad PNM header    |P5\n-0 1\n255\n\0
dims_int_max.pgm  |1|all |bad PNM header    |P5\n2147483647 2147483647\n255\n\0
dims_2p31.pgm     |1|all |bad PNM header    |P5\n2147483648 1\n255\n\0
dims_wrap32.pgm   |1|all |bad PNM header    |P5\n4294967299 1\n255\n\0\0\0
dims_wrap64.pgm   |1|all |bad PNM header    |P5\n18446744073709551619 1\n255\n\0\0\0
dims_height_max.pgm|1|all|bad PNM header    |P5\n1 2147483647\n65535\n\0
dims_row_huge.ppm |1|all |bad PNM header    |P6\n357913942 1\n65535\n\0
dims_float.pgm    |1|all |bad PNM header    |P5\n3.0 2\n255\n\0\0\0\0\0\0
dims_hex.pgm      |1|all |bad PNM header    |P5\n0x3 2\n255\n\0\0\0\0\0\0
dims_one_only.pgm |1|all |bad PNM header    |P5\n3\n
# --- maxvals
maxval_neg.ppm    |1|all |bad PNM header    |P6\n1 1\n-1\n\0\0\0
maxval_65536.pgm  |1|all |bad PNM header    |P5\n1 1\n65536\n\0\0
maxval_wrap32.pgm |1|all |bad PNM header    |P5\n1 1\n4294967551\n\0
maxval_wrap0.pgm  |1|all |bad PNM header    |P5\n1 1\n4294967296\n\0\0
maxval_plus.pgm   |1|all |bad PNM header    |P5\n3 1\n+255\n\0\0\0
maxval_junk.pgm   |1|all |bad PNM header    |P5\n3 1\nff\n\0\0\0
maxval_256_short.pgm|1|all|file is truncated|P5\n1 1\n256\n\0
# --- numbers with junk in front
width_junk.pgm    |1|all |bad PNM header    |P5\nx3 2\n255\n\0\0\0\0\0\0
width_plus.pgm    |1|all |bad PNM header    |P5\n+3 2\n255\n\0\0\0\0\0\0
width_nul.pgm     |1|all |bad PNM header    |P5\n\0003 2\n255\n\0\0\0\0\0\0
height_junk.pgm   |1|all |bad PNM header    |P5\n3 ~2\n255\n\0\0\0\0\0\0
# --- comments
comment_eof.pgm   |1|all |bad PNM header    |P5\n1 1\n255#c
comment_only.pgm  |1|all |bad PNM header    |P5\n# a comment and nothing else
comment_unended.ppm|1|all|bad PNM header    |P6\n# 1 1 255\0\0\0
# --- headers that promise what the file does not hold
claims_12TB.ppm   |1|redir|file is truncated.*12000000000000|P6\n2000000 2000000\n255\n\0\0\0
claims_12TB_16bit.pgm|1|redir|file is truncated.*12000000000000|P5\n2000000 3000000\n65535\n\0\0
claims_12TB_plain.ppm|1|redir|file is truncated|P3\n2000000 2000000\n255\n1 2 3\n
# ... a pipe's length is not known: the claim meets --max-pixels first
claims_12TB_pipe.ppm|1|pipe|too large for --max-pixels: the input is 2000000x2000000|P6\n2000000 2000000\n255\n\0\0\0
claims_12TB_pipe_16bit.pgm|1|pipe|too large for --max-pixels: the input is 2000000x3000000|P5\n2000000 3000000\n65535\n\0\0
claims_12TB_pipe_plain.ppm|1|pipe|too large for --max-pixels: the input is 2000000x2000000|P3\n2000000 2000000\n255\n1 2 3\n
short_by_one_16bit.pgm|1|all|file is truncated|=
short_by_one_16bit.ppm|1|all|file is truncated|=
first_of_two_truncated.ppm|1|all|file is truncated|=
# --- plain rasters
plain_neg.pgm     |1|all |bad pixel data    |P2\n2 1\n255\n1 -2\n
plain_plus.pgm    |1|all |bad pixel data    |P2\n2 1\n255\n+1 2\n
plain_overflow.pgm|1|all |bad pixel data    |P2\n2 1\n255\n1 99999999999999999999\n
plain_over_65535.pgm|1|all|bad pixel data   |P2\n1 1\n65535\n65536\n
plain_over_1.ppm  |1|all |bad pixel data    |P3\n1 1\n1\n0 1 2\n
plain_letters.ppm |1|all |bad pixel data    |P3\n1 1\n255\nred green blue\n
plain_comment_eof.pgm|1|all|bad pixel data  |P2\n2 1\n255\n1 # 2\n
plain_unterminated.ppm|1|all|bad pixel data |P3\n2 1\n255\n10 20 30 40 50 60
plain_empty_raster.pgm|1|all|file is truncated|P2\n2 1\n255\n
# --- odd but valid: accepted, as netpbm accepts them
ok_comment_after_magic.ppm|0|all|-          |P6#c\n1 1\n255\n\001\002\003
ok_comment_ends_number.pgm|0|all|-          |P5\n1#c\n2\n255\n\001\002
ok_comment_after_maxval.pgm|0|all|-         |P5\n2 1\n255# c\n\001\002
ok_comment_binary.pgm|0|all|-               |P5\n# \001\377\n1 1\n255\n\007
ok_cr_separators.ppm|0|all|-                |P6\r3 1\r255\r\001\002\003\004\005\006\007\010\011
ok_tab_separators.pgm|0|all|-               |P5\t3\t1\t255\t\001\002\003
ok_leading_zeros.pgm|0|all|-                |P5\n003 01\n0255\n\001\002\003
ok_maxval_1.pgm   |0|all |-                 |P5\n3 1\n1\n\000\001\000
ok_maxval_65535.pgm|0|all|-                 |P5\n1 1\n65535\n\377\376
ok_plain_comment.pgm|0|all|-                |P2\n2 1\n255\n1 #c\n 2\n
ok_long_comment.ppm|0|all|-                 |=
# --- after an image: whitespace, then nothing or an image (netpbm's rule;
# after a JPEG or PNG, bytes that begin no image are ignored: decoded_test)
junk_after.ppm    |1|all |not a format scaleppm reads: image 2.*no PNM or PAM|P6\n1 1\n255\n\001\002\003junk
jpeg_after.ppm    |1|all |truncated: image 2.*JPEG|P6\n1 1\n255\n\001\002\003\377\330\377\340\0\020JFIF
space_junk_after.pgm|1|all|not a format scaleppm reads: image 2|P5\n1 1\n255\n\007 \r\n x
lone_P_after.pgm  |1|all |not a format scaleppm reads: image 2|P5\n1 1\n255\n\007\nP
nul_after.pgm     |1|all |not a format scaleppm reads: image 2|P5\n1 1\n255\n\007\n\0
plain_junk_after.pgm|1|all|not a format scaleppm reads: image 2|P2\n1 1\n255\n7\nx
bad_second.ppm    |1|all |bad PNM header.*image 2|P6\n1 1\n255\n\001\002\003\nP6\n0 1\n255\n
ok_space_after.ppm|0|all |-                 |P6\n1 1\n255\n\001\002\003 \r\n\t\v\f
ok_plain_space_after.pgm|0|all|-            |P2\n1 1\n255\n7 \r\n\r\n
# --- not regular files
adir              |1|redir|Is a directory   |=
fifo_no_data      |1|all |empty file        |=
/dev/zero         |1|all |not a format scaleppm reads|=
/dev/null         |1|all |empty file        |=
# --- JPEG and PNG (made below from pnmtojpeg's and pnmtopng's files)
png_cut_idat.png  |1|all |file is truncated: PNG|=
png_claims_20000.png|1|all|file is truncated: PNG: .* cannot hold 20000 x 20000|=
png_claims_50000.png|1|all|too large for --max-pixels|=
png_crc_idat.png  |1|all |bad pixel data: PNG: IDAT: CRC error|=
png_crc_ihdr.png  |1|all |bad PNG header: IHDR: CRC error|=
png_no_plte.png   |1|all |bad PNG header: .*PLTE|=
png_idat_short.png|1|all |bad pixel data: PNG: Not enough image data|=
png_palette_interlaced_cut.png|1|all|file is truncated: PNG|=
jpeg_cut.jpg      |1|all |file is truncated: JPEG|=
jpeg_claims_20000.jpg|1|all|file is truncated: JPEG: .* cannot hold 20000 x 20000|=
jpeg_bad_huffman.jpg|1|all|bad JPEG header: Bogus Huffman table|=
jpeg_no_image.jpg |1|all |bad JPEG header: JPEG datastream contains no image|\377\330\377\331
jpeg_cmyk_cut.jpg |1|all |file is truncated: JPEG|=
jpeg_progressive_cut.jpg|1|all|file is truncated: JPEG|=
jpeg_pnm_junk_after.jpg|1|all|not a format scaleppm reads: image 2|=
symlink_loop.ppm  |1|file|Too many levels of symbolic links|=
dangling.ppm      |1|file|No such file or directory|=
unreadable.ppm    |1|user|Permission denied |=
TABLE
)

# trim S: S without blanks at either end.
trim() {
    local s=$1
    s=${s#"${s%%[![:space:]]*}"}
    s=${s%"${s##*[![:space:]]}"}
    printf '%s' "$s"
}

names=() wants=() wheres=() words=()
while IFS='|' read -r name want where word content; do
    name=$(trim "$name")
    [[ -n $name && $name != '#'* ]] || continue
    names+=("$name")
    wants+=("$(trim "$want")")
    wheres+=("$(trim "$where")")
    words+=("$(trim "$word")")
    content=$(trim "$content")
    if [[ $content != '=' ]]; then
        # shellcheck disable=SC2059  # the content is a printf format
        printf -- "$content" >"in/$name"
    fi
done <<<"$table"

# The inputs marked '=': made here.
printf 'P5\n3 1\n65535\n\001\002\003\004\005' >in/short_by_one_16bit.pgm
printf 'P6\n1 1\n65535\n\001\002\003\004\005' >in/short_by_one_16bit.ppm
# A 20x20 image cut after 100 of its 1200 raster bytes, then a whole 2x2
# image: the second fills only part of what the first is missing.
{
    printf 'P6\n20 20\n255\n'
    head -c 100 /dev/zero | tr '\0' '\001'
    printf 'P6\n2 2\n255\n'
    head -c 12 /dev/zero | tr '\0' '\002'
} >in/first_of_two_truncated.ppm
# 200 KiB of comment: a stream's header arrives in many reads.
{
    printf 'P6\n#'
    head -c 204800 /dev/zero | tr '\0' 'c'
    printf '\n2 1\n255\n\001\002\003\004\005\006'
} >in/ok_long_comment.ppm
# JPEG and PNG: valid files of netpbm's encoders, then cut, claiming more
# than they hold, with a CRC or a Huffman table broken (coded.py).
noise 40 30 255 5 3 >in/coded.ppm
ppmmake rgb:80/80/80 64 64 | cjpeg -arithmetic >in/arith.jpg
pnmtojpeg in/coded.ppm >in/coded.jpg
pnmtojpeg -progressive in/coded.ppm >in/coded_progressive.jpg
pnmtopng in/coded.ppm >in/coded.png
pnmtopng -interlace <(pnmquant 16 in/coded.ppm 2>/dev/null) >in/coded_palette.png
"${PYTHON:-/usr/bin/python3}" - in <<'CODED'
import struct, sys, zlib

d = sys.argv[1] + "/"
def read(name):
    return open(d + name, "rb").read()
def write(name, data):
    open(d + name, "wb").write(data)
def chunk(kind, data):
    crc = zlib.crc32(kind + data) & 0xffffffff
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)
def png(ihdr, *chunks):
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + b"".join(chunks) + chunk(b"IEND", b"")
def gray(w, h, depth=8, kind=0):
    return struct.pack(">IIBBBBB", w, h, depth, kind, 0, 0, 0)

p = read("coded.png")
idat = p.index(b"IDAT")
write("png_cut_idat.png", p[: idat + 40])
bad = bytearray(p)  # the IDAT's CRC, its data whole
bad[idat + 4 + struct.unpack(">I", p[idat - 4 : idat])[0]] ^= 0x55
write("png_crc_idat.png", bytes(bad))
bad = bytearray(p)
bad[20] ^= 0x01
write("png_crc_ihdr.png", bytes(bad))
write("png_claims_20000.png", png(gray(20000, 20000), chunk(b"IDAT", zlib.compress(bytes(64)))))
write("png_claims_50000.png", png(gray(50000, 50000), chunk(b"IDAT", zlib.compress(bytes(64)))))
write("png_no_plte.png", png(gray(4, 4, 8, 3), chunk(b"IDAT", zlib.compress(bytes(20)))))
write("png_idat_short.png", png(gray(64, 64), chunk(b"IDAT", zlib.compress(bytes(100)))))
q = read("coded_palette.png")
write("png_palette_interlaced_cut.png", q[: q.index(b"IDAT") + 60])

j = read("coded.jpg")
write("jpeg_cut.jpg", j[: len(j) // 2])
write("jpeg_pnm_junk_after.jpg", j + b" Pjunk")
sof = j.index(b"\xff\xc0")
write("jpeg_claims_20000.jpg", j[: sof + 5] + struct.pack(">HH", 20000, 20000) + j[sof + 9 :])
dht = j.index(b"\xff\xc4")
bad = bytearray(j)
bad[dht + 5 : dht + 21] = bytes([255] * 16)  # 4080 codes: more than fit
write("jpeg_bad_huffman.jpg", bytes(bad))
g = read("coded_progressive.jpg")
write("jpeg_progressive_cut.jpg", g[: len(g) * 2 // 3])

# Bombs (below): a width libpng allocated rows for from IHDR alone, and
# chunks whose claimed length it allocated (and zeroed) before reading.
idat = chunk(b"IDAT", zlib.compress(b""))
write("bomb_png_wide.png", png(gray(2147483647, 1), idat))
write("bomb_png_wide_rgba16.png", png(gray(2147483647, 1, 16, 6), idat))
for kind in (b"pCAL", b"sCAL", b"sPLT"):
    write("bomb_png_huge_%s.png" % kind.decode(),
          png(gray(1, 1))[:33] + struct.pack(">I", 0x7FFFFFFF) + kind + bytes(64))
a = read("arith.jpg")  # uniform: libjpeg feeds zeros past its scan's data
sof = a.index(b"\xff\xc9")
write("bomb_jpeg_arith.jpg", a[: sof + 5] + struct.pack(">HH", 46000, 46000) + a[sof + 9 :])
CODED
if have convert; then
    convert in/coded.ppm -colorspace cmyk in/coded_cmyk.jpg
    head -c 900 in/coded_cmyk.jpg >in/jpeg_cmyk_cut.jpg
else  # cut in its header: still refused, if not for its inks
    head -c 300 in/coded.jpg >in/jpeg_cmyk_cut.jpg
fi
mkdir in/adir
mkfifo in/fifo_no_data
ln -s symlink_loop.ppm in/symlink_loop.ppm
ln -s no_such_file.ppm in/dangling.ppm
printf 'P5\n1 1\n255\n\0' >in/unreadable.ppm
chmod 000 in/unreadable.ppm

# Every prefix of a valid image is a hostile input too: empty, a lone 'P',
# a header cut at each byte (a comment among them), a raster cut at each
# byte.  16-bit: every raster prefix.
add_row() {
    names+=("$1")
    wants+=("$2")
    wheres+=("$3")
    words+=("$4")
}
# prefixes NAME HEADER RASTER FROM: in/NAME is HEADER then RASTER (printf
# formats); a row for each of its prefixes of FROM bytes or more.
prefixes() {
    local file=$1 hlen n len word
    # shellcheck disable=SC2059  # printf formats
    printf -- "$2$3" >"in/$file"
    # shellcheck disable=SC2059
    hlen=$(printf -- "$2" | wc -c)
    n=$(wc -c <"in/$file")
    for ((len = $4; len < n; len++)); do
        if ((len == 0)); then
            word='empty file'
        elif ((len == 1)); then
            word='not a format scaleppm reads'
        elif ((len < hlen)); then
            word='bad PNM header'
        else
            word='file is truncated'
        fi
        head -c "$len" "in/$file" >"in/$file.$len"
        add_row "$file.$len" 1 all "$word"
    done
}
prefixes cut.ppm 'P6\n# c\n3 1\n255\n' '\001\002\003\004\005\006\007\010\011' 0
prefixes cut16.pgm 'P5\n2 2\n65535\n' '\001\002\003\004\005\006\007\010' 13
# Plain prefixes: a cut may leave a valid image (a last sample '6' of
# '60'), so netpbm's verdict is the oracle; refused ones are too short for
# their samples or end inside the raster.
printf 'P3\n2 1\n255\n10 20 30 40 50 60\n' >in/cutp.ppm
n=$(wc -c <in/cutp.ppm)
for ((len = 11; len < n; len++)); do
    head -c "$len" in/cutp.ppm >"in/cutp.ppm.$len"
    if pamtopnm "in/cutp.ppm.$len" >/dev/null 2>&1; then
        add_row "cutp.ppm.$len" 0 all -
    else
        add_row "cutp.ppm.$len" 1 all 'file is truncated|bad pixel data'
    fi
done

# --- running one case ------------------------------------------------------
# An unprivileged user, for the file we may not read (as root, every file
# can be read).
as_user=()
user_note=''
if ((EUID != 0)); then
    user_note='not root: the mode bits are enough'
elif have setpriv && setpriv --reuid=65534 --regid=65534 --clear-groups \
    "$SP" --version >/dev/null 2>&1; then
    as_user=(setpriv --reuid=65534 --regid=65534 --clear-groups)
elif have runuser && runuser -u nobody -- "$SP" --version >/dev/null 2>&1; then
    as_user=(runuser -u nobody --)
else
    user_note='skip'
fi
chmod 0755 "$WORK" in
chmod 0777 od

# checksum PATH: of a regular file's bytes, or '-' for anything else.
checksum() {
    if [[ -f $1 && -r $1 ]]; then
        cksum <"$1"
    else
        printf -- '-'
    fi
}

# temps: the temporary files ('.NAME.XXXXXX') left in od, if any.
temps() {
    find od -maxdepth 1 -name '.?*.??????' -printf '%f '
}

# sp_run HOW PATH OUT: scaleppm -s 2 on PATH to OUT, HOW being a path of
# IO_PATHS, redir, pipe or user; exit status in rc, stderr in e, stdout
# in o.  A
# FIFO gets a writer that opens and closes it at once.
sp_run() {
    local how=$1 path=$2 out=$3 writer=''
    if [[ -p $path ]]; then
        # shellcheck disable=SC2016  # $1 is the inner shell's
        timeout 20 bash -c ': >"$1"' _ "$path" &
        writer=$!
    fi
    rc=0
    case $how in
    user)
        timeout 30 "${as_user[@]}" "$SP" --io read -s 2 "$path" "$out" \
            >o 2>e </dev/null || rc=$?
        ;;
    redir)
        timeout 30 "$SP" --io mmap -s 2 - "$out" >o 2>e <"$path" || rc=$?
        ;;
    pipe)
        set +o pipefail
        { cat -- "$path" 2>/dev/null || true; } |
            { timeout 30 "$SP" --io read -s 2 - "$out" >o 2>e || echo $? >pipe.rc; }
        set -o pipefail
        if [[ -s pipe.rc ]]; then
            rc=$(cat pipe.rc)
            rm -f pipe.rc
        fi
        ;;
    *) # a path of IO_PATHS
        timeout 30 "$SP" --io "$how" -s 2 "$path" "$out" >o 2>e </dev/null ||
            rc=$?
        ;;
    esac
    if [[ -n $writer ]]; then
        wait "$writer" || true
    fi
}

# check_case I HOW: run case I one way and check everything.
check_case() {
    local i=$1 how=$2 name=${names[$1]} want=${wants[$1]} word=${words[$1]}
    local path label out before after why='' line
    case $name in
    /*) path=$name ;;
    *) path=in/$name ;;
    esac
    label=$path
    [[ $how != redir && $how != pipe ]] || label=-
    # read and redir write a new file; the other paths, pipe and user an
    # existing one.
    rm -f od/new.pnm
    printf 'keep me\n' >od/keep.pnm
    chmod 0666 od/keep.pnm
    case $how in
    read | redir) out=od/new.pnm ;;
    *) out=od/keep.pnm ;;
    esac
    before=$(checksum "$path")
    sp_run "$how" "$path" "$out"
    after=$(checksum "$path")

    line=$(head -n 1 e)
    if ((rc >= 124)); then
        why="exit $rc: killed or timed out (signal $((rc - 128)) if >= 128)"
    elif ((rc != want)); then
        why="exit $rc, want $want; stderr: $line"
    elif ((want == 0)); then
        [[ ! -s e ]] || why="stderr: $line"
        [[ -n $why ]] || pamenlarge 2 "$path" 2>/dev/null | cmp -s - "$out" ||
            why='output differs from pamenlarge 2'
    else
        if [[ $(wc -l <e) -ne 1 ]]; then
            why="$(wc -l <e) lines on stderr: $(tr '\n' '|' <e)"
        elif [[ $line != "scaleppm: $label: "* ]]; then
            why="stderr '$line' does not start 'scaleppm: $label: '"
        elif ! grep -Eq -- "$word" e; then
            why="stderr '$line' does not match '$word'"
        elif [[ -e od/new.pnm ]]; then
            why='an output file was created'
        elif [[ $(cat od/keep.pnm) != 'keep me' ]]; then
            why='an existing output was changed'
        fi
    fi
    [[ -n $why || ! -s o ]] || why='stdout is not empty'
    [[ -n $why || $before == "$after" ]] || why='the input was changed'
    [[ -n $why || -z $(temps) ]] || why="temporary files left: $(temps)"
    if ((want == 0)); then
        word="same bytes as pamenlarge 2"
    fi
    result "$name, $how: exit $want ($word)" "$why"
}

for i in "${!names[@]}"; do
    case ${wheres[$i]} in
    all) hows=("${IO_PATHS[@]}" redir pipe) ;;
    redir) hows=("${IO_PATHS[@]}" redir) ;;
    pipe) hows=(pipe) ;;
    file) hows=("${IO_PATHS[@]}") ;;
    user)
        if [[ $user_note == skip ]]; then
            skip "${names[$i]}" 'running as root and neither setpriv nor runuser can drop to nobody'
            continue
        fi
        hows=(user)
        if ((EUID != 0)); then hows=("${IO_PATHS[@]}"); fi
        ;;
    esac
    for how in "${hows[@]}"; do
        check_case "$i" "$how"
    done
done

# --- streams of several images --------------------------------------------
# Every image of a multi-image input is scaled, whatever names the input
# and whatever whitespace separates its images, as pamsplit sees them: the
# output split by pamsplit must be pamenlarge 2 of each image, by every
# load path and every way a stream can be named: redirected, piped, a FIFO
# by its path, a process substitution, /dev/stdin.  A stream's writer
# pauses before its last image (the bytes read past image 1 were lost when
# the path was opened again for each image), and a FIFO's writer has
# exited before its last images are read (that open waited forever).
multi_parts() {  # NAME: in/NAME.a (all but the last image), in/NAME.b
    cat "in/$1.a" "in/$1.b" >"in/$1"
}
# plain PBM, PGM and PPM as netpbm writes them (each image ends in '\n')
bits() {  # W H SEED: a PBM of noise
    noise "$1" "$2" 255 "$3" 1 | pamditherbw -threshold 2>/dev/null |
        pamtopnm
}
bits 5 3 21 | pnmtoplainpnm >in/plain.pbm.a
bits 4 2 22 | pnmtoplainpnm >>in/plain.pbm.a
bits 3 3 23 | pnmtoplainpnm >in/plain.pbm.b
multi_parts plain.pbm
noise 4 3 255 31 1 | pnmtoplainpnm >in/plain.pgm.a
noise 3 2 65535 32 1 | pnmtoplainpnm >>in/plain.pgm.a
noise 2 5 255 33 1 | pnmtoplainpnm >in/plain.pgm.b
multi_parts plain.pgm
noise 3 3 255 41 3 | pnmtoplainpnm >in/plain.ppm.a
noise 2 2 255 44 3 | pnmtoplainpnm >in/plain.ppm.b
multi_parts plain.ppm
# CRLF line ends, trailing spaces, a blank line between images
{ noise 4 2 255 51 1 | pnmtoplainpnm | sed 's/$/ \r/'; printf '\r\n'; } \
    >in/crlf.pgm.a
noise 3 3 9 52 1 | pnmtoplainpnm | sed 's/$/\r/' >in/crlf.pgm.b
multi_parts crlf.pgm
# raw images separated by a newline, then every whitespace byte
{ noise 6 4 255 61 3; printf '\n'; noise 5 5 65535 64 3;
  printf ' \t\n\v\f\r'; } >in/raw.ppm.a
{ noise 7 2 255 67 3; printf '\n'; } >in/raw.ppm.b
multi_parts raw.ppm
# raw images back to back, nothing between: the case that needs no
# whitespace rule, only the one descriptor
{ noise 5 4 255 81 3; noise 3 3 65535 84 3; } >in/tight.ppm.a
noise 4 4 255 87 3 >in/tight.ppm.b
multi_parts tight.ppm
{ bits 6 4 71; printf '\n'; } >in/raw.pbm.a
bits 9 2 72 >in/raw.pbm.b
multi_parts raw.pbm

# writer NAME: in/NAME with a pause before its last image.
writer() {
    cat "in/$1.a"
    sleep 0.3
    cat "in/$1.b"
}

# multi_run HOW NAME OUT: scaleppm -s 2 on in/NAME, one way; rc and e.
multi_run() {
    local how=$1 name=$2 out=$3 pid
    rc=0
    case $how in
    redir) timeout 30 "$SP" -s 2 - "$out" 2>e <"in/$name" || rc=$? ;;
    pipe | devstdin)
        local arg=-
        [[ $how == pipe ]] || arg=/dev/stdin
        # the writer may meet a reader gone (exit 1 or a hang killed)
        { writer "$name" 2>/dev/null || true; } |
            { timeout 30 "$SP" -s 2 "$arg" "$out" 2>e || echo $? >pipe.rc; }
        if [[ -s pipe.rc ]]; then
            rc=$(cat pipe.rc)
            rm -f pipe.rc
        fi
        ;;
    fifo | fifo_gone)
        rm -f in/multi.fifo
        mkfifo in/multi.fifo
        if [[ $how == fifo ]]; then
            { writer "$name" >in/multi.fifo; } 2>/dev/null &
        else
            { cat "in/$name" >in/multi.fifo; } 2>/dev/null &
        fi
        pid=$!
        [[ $how == fifo ]] || sleep 0.3  # the writer has gone by image 2
        timeout 30 "$SP" -s 2 in/multi.fifo "$out" 2>e || rc=$?
        kill "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
        ;;
    procsub)
        timeout 30 "$SP" -s 2 <(writer "$name") "$out" 2>e || rc=$?
        ;;
    *) # a path of IO_PATHS
        timeout 30 "$SP" --io "$how" -s 2 "in/$name" "$out" 2>e </dev/null ||
            rc=$?
        ;;
    esac
}

# multi_check HOW NAME: the output is pamenlarge 2 of each image.
multi_check() {
    local how=$1 name=$2 why='' n i
    rm -rf split && mkdir split
    rm -f od/multi.pnm
    multi_run "$how" "$name" od/multi.pnm
    if ((rc != 0)); then
        why="exit $rc; stderr: $(head -n 1 e)"
    elif [[ -s e ]]; then
        why="stderr: $(head -n 1 e)"
    else
        pamsplit "in/$name" split/in.%d 2>/dev/null
        pamsplit od/multi.pnm split/out.%d 2>/dev/null
        n=$(find split -name 'in.*' | wc -l)
        if ((n < 2)); then
            why="pamsplit sees $n image(s) in the input"
        elif [[ $(find split -name 'out.*' | wc -l) -ne $n ]]; then
            why="$(find split -name 'out.*' | wc -l) images out, $n in"
        fi
        for ((i = 0; i < n && ${#why} == 0; i++)); do
            pamenlarge 2 "split/in.$i" | cmp -s - "split/out.$i" ||
                why="image $((i + 1)) differs from pamenlarge 2"
        done
    fi
    result "$name, $how: every image, as pamsplit + pamenlarge 2" "$why"
}

for name in tight.ppm plain.pbm plain.pgm plain.ppm crlf.pgm raw.ppm \
    raw.pbm; do
    for how in "${IO_PATHS[@]}" redir pipe devstdin fifo fifo_gone procsub; do
        multi_check "$how" "$name"
    done
done

# Junk after an image: netpbm's tools refuse it too (the oracle), and
# scaleppm exits 1 with one line naming the image, through a FIFO too.
for name in junk_after.ppm jpeg_after.ppm space_junk_after.pgm; do
    why=''
    if pamscale 1 "in/$name" >/dev/null 2>&1; then
        why='pamscale accepts it: the oracle disagrees'
    fi
    rm -f in/multi.fifo od/multi.pnm
    mkfifo in/multi.fifo
    { cat "in/$name" >in/multi.fifo; } 2>/dev/null &
    rc=0
    timeout 30 "$SP" -s 2 in/multi.fifo od/multi.pnm 2>e || rc=$?
    wait $! 2>/dev/null || true
    if [[ -z $why ]] && ((rc != 1)); then
        why="exit $rc, want 1"
    elif [[ -z $why ]] && [[ $(wc -l <e) -ne 1 ]] ||
        ! grep -Eq "^scaleppm: in/multi.fifo: (not a format scaleppm reads|file is truncated).*image 2" e; then
        why=${why:-"stderr: $(tr '\n' '|' <e)"}
    elif [[ -e od/multi.pnm ]]; then
        why='an output file was created'
    fi
    result "$name by a FIFO: exit 1, as pamscale, no output" "$why"
done

# A FIFO with no writer in a batch: the worker does not wait in open()
# (-t 1: it would hold the only one); the FIFO fails in one line, the
# batch goes on with the next file.
mkfifo in/batch.ppm
cp in/raw.ppm.b in/next.ppm
rm -rf obatch && mkdir obatch
rc=0
timeout -k 5 30 "$SP" -s 2 -t 1 -o obatch/ in/batch.ppm in/next.ppm >o 2>e ||
    rc=$?
why=''
if ((rc != 1)); then
    why="exit $rc, want 1; stderr: $(tr '\n' '|' <e)"
elif ! grep -q '^scaleppm: in/batch.ppm: empty file: a FIFO with no writer' \
    e; then
    why="stderr: $(tr '\n' '|' <e)"
elif ! pamenlarge 2 in/next.ppm | cmp -s - obatch/next.ppm; then
    why='the next file was not scaled'
fi
result 'batch: a FIFO with no writer fails at once, the batch goes on' "$why"

# A one-file run waits for the FIFO's writer, as cat does.
rm -f od/late.ppm
rc=0
{ sleep 0.5; cat in/next.ppm >in/batch.ppm; } &
timeout 30 "$SP" -s 2 in/batch.ppm od/late.ppm 2>e || rc=$?
wait $! || true
why=''
if ((rc != 0)); then
    why="exit $rc; stderr: $(head -n 1 e)"
elif ! pamenlarge 2 in/next.ppm | cmp -s - od/late.ppm; then
    why='output differs from pamenlarge 2'
fi
result 'one file: a FIFO whose writer comes late is waited for' "$why"

# --- outputs larger than their format holds ------------------------------
# stb_image_write computes sizes and offsets in int (BMP, TGA), TGA holds a
# side in 16 bits and libjpeg up to 65500: a small input enlarged past
# those limits is refused
# before anything is scaled or allocated (under a 1 GiB address space
# where the build allows one): exit 1, one line naming the output and the
# limit, no output file and no temporary file.
printf 'P6\n1 1\n255\n\001\002\003' >in/one.ppm
noise 7000 1 255 7 3 >in/wide.ppm
noise 1 6551 255 7 3 >in/tall.ppm
as_limit=(bash -c 'ulimit -v 1048576 && exec "$@"' _)
if ! "${as_limit[@]}" "$SP" --version >/dev/null 2>&1; then
    as_limit=()  # a sanitizer's runtime needs more address space
fi
big_out() {
    local input=$1 factor=$2 out=od/out.$3 expect=$4 why='' line
    rm -f od/keep.pnm od/new.pnm
    rc=0
    timeout 20 "${as_limit[@]}" "$SP" -s "$factor" "in/$input" "$out" \
        >o 2>e </dev/null || rc=$?
    line=$(head -n 1 e)
    if ((rc != 1)); then
        why="exit $rc, want 1; stderr: $line"
    elif [[ $(wc -l <e) -ne 1 ]]; then
        why="$(wc -l <e) lines on stderr: $(tr '\n' '|' <e)"
    elif [[ $line != "scaleppm: $out: image too large: "* ]]; then
        why="stderr '$line' does not start 'scaleppm: $out: image too large: '"
    elif ! grep -Eq -- "$expect" e; then
        why="stderr '$line' does not match '$expect'"
    elif [[ -e $out ]]; then
        why='an output file was created'
    elif [[ -n $(temps) ]]; then
        why="temporary files left: $(temps)"
    fi
    result "$input -s $factor to ${out##*/}: refused ($expect)" "$why"
}
big_out one.ppm 26760 bmp 'too large for BMP.*2147483647'
big_out one.ppm 26760 tga 'too large for TGA.*715827883 pixels'
big_out tall.ppm 10 jpg '10x65510 is too large for JPEG \(libjpeg takes up to 65500'
big_out wide.ppm 10 tga '70000x10 is too large for TGA \(65535 pixels a side'
big_out wide.ppm 10 jpg '70000x10 is too large for JPEG \(libjpeg takes up to 65500 pixels a side'

# --- bombs: a few bytes that claim gigabytes -----------------------------
# Refused from the header, before the decoder allocates anything: by every
# load path and from a pipe, under a 1 GiB address space (where the build
# allows one), and, where strace can watch, without asking for a mapping
# of 256 MiB or more (libpng allocated rows for a claimed width, and a
# claimed pCAL, sCAL or sPLT length, before any check; an arithmetic-coded
# JPEG, whose length bounds nothing, was decoded whole).
trace=()
if ((${#as_limit[@]})) && have strace && strace -f -qq -o /dev/null true; then
    trace=(strace -f -qq -e trace=mmap -o trace.txt)
fi
# big_maps: the mappings of 256 MiB or more that trace.txt shows asked
# for (a malloc arena's reservation, MAP_NORESERVE, is not one).
big_maps() {
    [[ -s trace.txt ]] || return 0
    awk -F', ' '/mmap\(/ && !/MAP_NORESERVE/ && $2 + 0 >= 268435456' \
        trace.txt | head -n 2 | tr '\n' '|'
}
# bomb NAME WORDS [OPTION...]: scaleppm -s -2 on in/NAME refused.
bomb() {
    local name=$1 want=$2 how label why line
    shift 2
    for how in "${IO_PATHS[@]}" pipe; do
        rm -f od/bomb.pnm trace.txt
        rc=0 label=in/$name
        if [[ $how == pipe ]]; then
            label=-
            timeout 30 "${trace[@]}" "${as_limit[@]}" "$SP" "$@" -s -2 - \
                od/bomb.pnm >o 2>e < <(cat "in/$name") || rc=$?
        else
            timeout 30 "${trace[@]}" "${as_limit[@]}" "$SP" --io "$how" \
                "$@" -s -2 "in/$name" od/bomb.pnm >o 2>e </dev/null || rc=$?
        fi
        line=$(head -n 1 e) why=''
        if ((rc != 1)); then
            why="exit $rc, want 1; stderr: $line"
        elif [[ $(wc -l <e) -ne 1 ]]; then
            why="$(wc -l <e) lines on stderr: $(tr '\n' '|' <e)"
        elif [[ $line != "scaleppm: $label: "* ]] || ! grep -Eq -- "$want" e; then
            why="stderr '$line' does not match '$want'"
        elif [[ -e od/bomb.pnm || -s o ]]; then
            why='an output was written'
        elif [[ -n $(big_maps) ]]; then
            why="asked for a mapping of 256 MiB or more: $(big_maps)"
        fi
        result "$name${*:+ $*}, $how: refused before allocating ($want)" "$why"
    done
}
if ((${#trace[@]} == 0)); then
    skip 'bombs: no mapping of 256 MiB asked for' \
        'a sanitizer build (no address-space limit) or no strace: exit and words only'
fi
bomb bomb_png_wide.png 'file is truncated: PNG: .* cannot hold 2147483647 x 1 pixels'
bomb bomb_png_wide_rgba16.png \
    'too large for --max-pixels: the input is 2147483647x1' --max-pixels 1000
for kind in pCAL sCAL sPLT; do
    bomb "bomb_png_huge_$kind.png" 'file is truncated: PNG: the file ends early'
done
bomb bomb_jpeg_arith.jpg \
    'image too large: JPEG: 46000 x 46000 pixels, arithmetic-coded'

# --- fewer threads than asked --------------------------------------------
# Under RLIMIT_NPROC a thread that cannot be started is done without: -t 8
# exits 0 with -t 1's bytes, and -v reports the threads that ran ("1
# thread" when only the main one could).  Run as a user id that no process
# holds (root is not held to the limit; nobody may run other programs,
# which use it up), so a limit of 3 leaves room for 3 threads.
noise 200 200 255 11 3 >in/threads.ppm
# nproc_run T OUT: scaleppm -v -t T under the limit; rc, e and o as sp_run.
nproc_run() {
    rc=0
    ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
        timeout 30 prlimit --nproc=3 "${as_user[@]}" "$SP" -v -t "$1" -s 2 \
        in/threads.ppm "$2" >o 2>e </dev/null || rc=$?
}
what='-t 8 under RLIMIT_NPROC 3: exit 0, fewer threads, -t 1 bytes'
unprivileged_alone
if ((EUID != 0)); then
    skip "$what" 'not root: cannot run as a user with no other process'
elif [[ ${as_user[0]:-} != setpriv ]] || ! have prlimit; then
    skip "$what" 'needs prlimit, and setpriv to run as a user of its own'
else
    rm -f od/t1.ppm od/t8.ppm
    nproc_run 1 od/t1.ppm
    if ((rc != 0)); then
        skip "$what" "even -t 1 fails there (exit $rc: $(head -n 1 e))"
    else
        nproc_run 8 od/t8.ppm
        why=''
        line=$(tail -n 1 e)
        if ((rc != 0)); then
            why="exit $rc; stderr: $(head -n 1 e)"
        elif ! [[ $line =~ ,\ ([0-9]+)\ threads?$ ]] ||
            ((BASH_REMATCH[1] >= 8)); then
            why="-v does not report fewer than 8 threads: $line"
        elif ! same od/t1.ppm od/t8.ppm 2>/dev/null; then
            why='output differs from -t 1'
        elif [[ -n $(temps) ]]; then
            why="temporary files left: $(temps)"
        fi
        result "$what (${BASH_REMATCH[1]:-?} ran)" "$why"
    fi
    rm -f od/t1.ppm od/t8.ppm
fi

# A header longer than a stream may send (1 MiB with its comments): one
# line naming that limit, not libnetpbm's "EOF"; the same file by its path
# has no such limit.
python3 -c 'import sys; sys.stdout.buffer.write(
    b"P6\n#" + b"A" * 1100000 + b"\n1 1\n255\n\0\0\0")' >longhdr.ppm
rc=0
"$SP" -s 2 - od/long.ppm < <(cat longhdr.ppm) 2>e || rc=$?
why=''
((rc == 1)) && grep -q 'no end to it in the first 1048576 bytes' e &&
    [[ ! -e od/long.ppm ]] || why="a pipe: exit $rc: $(head -c 300 e)"
rc=0
"$SP" -s 2 longhdr.ppm od/long.ppm 2>e || rc=$?
((rc == 0)) || why="${why:+$why; }by path: exit $rc: $(head -n 1 e)"
result 'a stream header past 1 MiB: one line naming the limit; by path, fine' "$why"
rm -f longhdr.ppm od/long.ppm

# A PAM header is read into a copy that libnetpbm parses (header.c): a
# file whose header never ends is refused at 1 MiB by its path too, in
# that much memory, not read whole (8 MiB of WIDTH lines here).
python3 -c 'import sys; sys.stdout.buffer.write(
    b"P7\n" + b"WIDTH 1\n" * (1 << 20))' >longhdr.pam
rc=0
"$SP" -s -2 longhdr.pam od/long.pam 2>e || rc=$?
why=''
((rc == 1)) && grep -q 'no end to it in the first 1048576 bytes' e &&
    [[ ! -e od/long.pam ]] || why="exit $rc: $(head -c 300 e)"
result 'a PAM header past 1 MiB by path: one line naming the limit' "$why"
rm -f longhdr.pam od/long.pam

printf '# %d hostile inputs\n' "${#names[@]}"
finish
