#!/usr/bin/env bash
# stream_out_test.sh: the streamed PNG and JPEG outputs (issue 28, item 4)
# against netpbm's and libjpeg's own decoders.
#   PNG   pngtopam (-alphapam) gives back, byte for byte, the PAM scaleppm
#         writes for the same job: 8 and 16 bits, 1 to 4 channels, through
#         a copy, an enlarge and a reduce; --compression 0..9 gives sizes
#         that never grow on a photo-like image (ppmforge's fractal
#         planet), the same pixels at every level; at the default level
#         the rows are filtered as pamtopng filters them (the same
#         decompressed IDAT bytes) and the file is no more than 1.01x
#         pamtopng's (the parallel deflate's segments cost a little).
#   JPEG  djpeg reads it at its size; at --quality 100 --subsample 444 it
#         is within 50 dB PSNR of its input (each of Y, Cb, Cr); gray gives
#         a one-component JPEG; --subsample sets the frame's sampling
#         factors, and the default (4:2:0) does not change with quality.
#   both  byte-identical for -t 1, 2, 3 and 7 on every --io path (PNG:
#         also an enlarge, 16 bits, one row, one column); a write
#         that fails (/dev/full, a file size limit) is one line on stderr,
#         exit 1 and no output; peak memory of a 5120x2880 output within
#         2x of the same job to PPM; --skip-existing keeps a whole one and
#         makes a cut one again.
#
# usage: bash tests/stream_out_test.sh PATH/TO/scaleppm [PATH/TO/genimage]
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$here/lib.sh"
setup "usage: stream_out_test.sh PATH/TO/scaleppm [PATH/TO/genimage]" "$@"
cd "$WORK"

for tool in pngtopam pamtopng djpeg pnmpsnr pamstack ppmforge; do
    if ! have "$tool"; then
        skip 'stream_out' "$tool not installed"
        finish
        exit
    fi
done

# idat PNG: its IDAT chunks' data, inflated: the filtered rows.
idat() {
    /usr/bin/python3 - "$1" <<'PY'
import struct, sys, zlib
data, i, z = open(sys.argv[1], 'rb').read(), 8, b''
while i < len(data):
    n, kind = struct.unpack('>I4s', data[i:i + 8])
    z += data[i + 8:i + 8 + n] if kind == b'IDAT' else b''
    i += 12 + n
sys.stdout.buffer.write(zlib.decompress(z))
PY
}

ppmforge -width 480 -height 300 -seed 5 >planet.ppm 2>/dev/null
for depth in 255 65535; do
    noise 61 37 "$depth" 3 1 >"g$depth.pgm"
    noise 61 37 "$depth" 7 3 >"c$depth.ppm"
    noise 61 37 "$depth" 11 1 >"a$depth.pgm"
    pamstack -tupletype=GRAYSCALE_ALPHA "g$depth.pgm" "a$depth.pgm" \
        >"ga$depth.pam" 2>/dev/null
    pamstack -tupletype=RGB_ALPHA "c$depth.ppm" "a$depth.pgm" \
        >"ca$depth.pam" 2>/dev/null
done

# PNG: pngtopam's PAM of scaleppm's PNG is scaleppm's PAM of the same job.
for f in g255.pgm c255.ppm ga255.pam ca255.pam g65535.pgm c65535.ppm \
    ga65535.pam ca65535.pam; do
    why=
    alpha=()
    [[ $f == *.pam ]] && alpha=(-alphapam)
    for s in 1 3 -2; do
        "$SP" -s "$s" -t 3 "$f" out.png && "$SP" -s "$s" "$f" "want.${f#*.}" &&
            pngtopam "${alpha[@]}" out.png >got ||
            why="-s $s failed"
        if [[ -z $why ]] && ! cmp -s got "want.${f#*.}"; then
            why="-s $s: pngtopam gives other bytes"
        fi
    done
    result "PNG of $f round-trips through pngtopam" "$why"
done
why=
"$SP" -s 1 c65535.ppm o16.png
[[ $(head -c 25 o16.png | tail -c 1 | od -An -tu1 | tr -d ' ') == 16 ]] ||
    why='IHDR bit depth is not 16'
result 'a maxval 65535 input gives a 16-bit PNG' "$why"

# --compression: sizes never grow from 0 to 9; the pixels are the same.
why=
last=
for level in 0 1 2 3 4 5 6 7 8 9; do
    "$SP" -s 1 --compression "$level" planet.ppm "l$level.png"
    size=$(stat -c %s "l$level.png")
    if [[ -n $last ]] && ((size > last)); then
        why="level $level: $size bytes, more than $last"
    fi
    cmp -s <(pngtopam "l$level.png") planet.ppm || why="level $level: pixels"
    last=$size
done
(($(stat -c %s l0.png) > 2 * $(stat -c %s l9.png))) ||
    why="${why:-level 0 is not much larger than 9}"
result '--compression 0..9: sizes never grow, pixels the same' "$why"
"$SP" -s 1 planet.ppm default.png
result 'the default level is 6' \
    "$(cmp l6.png default.png 2>&1 || true)"
# At the default level, with the same filter choice (write_png.c makes
# libpng's heuristic itself) and zlib settings, the file is pamtopng's
# (libpng at its defaults) but for the parallel deflate's segment
# boundaries (write_png_seg.c): the same filtered rows once inflated (so
# the same filter on every row), the same pixels, and no more than 1.01x
# its size.  An enlarge repeats rows (each repeat is filtered under
# itself); one-row and one-column images leave out filters.  The large
# planet makes many segments, on rows of every filter.
noise 1 40 255 21 3 >col.ppm
noise 40 1 65535 23 1 >line.pgm
ppmforge -width 1000 -height 600 -seed 9 >large.ppm 2>/dev/null
noise 200 150 65535 25 3 >c16.ppm
for job in "1 planet.ppm" "1 g255.pgm" "1 ca255.pam" "1 c65535.ppm" \
    "1 ga65535.pam" "3 planet.ppm" "2 ca65535.pam" "-3 c255.ppm" \
    "1 col.ppm" "1 line.pgm" "4 col.ppm" "1 large.ppm" "4 c16.ppm"; do
    read -r s f <<<"$job"
    alpha=()
    [[ $f == *.pam ]] && alpha=(-alphapam)
    "$SP" -s "$s" "$f" own.png
    "$SP" -s "$s" "$f" own.pam
    pamtopng own.pam >peer.png 2>/dev/null
    why=
    if ! cmp -s <(idat own.png) <(idat peer.png); then
        why='other filtered rows'
    elif ! cmp -s <(pngtopam "${alpha[@]}" own.png) \
        <(pngtopam "${alpha[@]}" peer.png); then
        why='other pixels'
    elif (($(stat -c %s own.png) * 100 > $(stat -c %s peer.png) * 101)); then
        why="$(stat -c %s own.png) bytes, over 1.01x pamtopng's"
        why+=" $(stat -c %s peer.png)"
    fi
    result "PNG of $f -s $s is pamtopng's rows, within 1.01x its size" \
        "$why"
done

# JPEG: decodes at its size; close at quality 100, 4:4:4.
why=
"$SP" -s 1 --quality 100 --subsample 444 planet.ppm q100.jpg
read -r y cb cr < <(pnmpsnr -machine planet.ppm <(djpeg q100.jpg) 2>/dev/null)
for v in "$y" "$cb" "$cr"; do
    [[ $v == inf ]] || awk -v v="$v" 'BEGIN { exit !(v >= 50) }' ||
        why="PSNR $y $cb $cr dB, under 50"
done
result 'JPEG at quality 100, 4:4:4: within 50 dB of the input' "$why"
"$SP" -s -3 planet.ppm small.jpg
result 'JPEG decodes at its size (djpeg)' \
    "$( [[ $(djpeg small.jpg | pamfile) == *'160 by 100'* ]] || echo size)"

# sof FILE: the frame's components and their sampling factors (djpeg).
sof() {
    djpeg -verbose "$1" 2>&1 >/dev/null |
        sed -n 's/^ *Component \([0-9]\): \([0-9]hx[0-9]v\) q=.*/\1:\2/p' |
        tr '\n' ' '
}
why=
chroma="2:1hx1v 3:1hx1v "
for pair in 444=1hx1v 422=2hx1v 420=2hx2v; do
    s=${pair%=*} want="1:${pair#*=} $chroma"
    "$SP" -s 1 --subsample "$s" planet.ppm "s$s.jpg"
    [[ $(sof "s$s.jpg") == "$want" ]] ||
        why="--subsample $s: $(sof "s$s.jpg"), want $want"
done
for q in 90 91 100; do
    "$SP" -s 1 --quality "$q" planet.ppm "d$q.jpg"
    [[ $(sof "d$q.jpg") == "1:2hx2v $chroma" ]] ||
        why="--quality $q: $(sof "d$q.jpg"), want 4:2:0"
done
(($(stat -c %s s444.jpg) > $(stat -c %s s422.jpg) &&
    $(stat -c %s s422.jpg) > $(stat -c %s s420.jpg))) ||
    why="${why:-sizes do not fall 444 > 422 > 420}"
"$SP" -s 1 g255.pgm gray.jpg
[[ $(sof gray.jpg) == "1:1hx1v " ]] || why="gray: $(sof gray.jpg)"
result '--subsample sets the sampling, fixed whatever the quality' "$why"

# The same bytes for every thread count and load path: for PNG also on
# images of many segments (an enlarge, 16 bits), one row and one column.
for ext in png jpg; do
    why=
    jobs=("1 planet.ppm" "-2 planet.ppm" "3 planet.ppm")
    [[ $ext == png ]] && jobs+=("1 large.ppm" "4 c16.ppm" "-2 large.ppm"
        "1 col.ppm" "1 line.pgm" "5 line.pgm")
    for job in "${jobs[@]}"; do
        read -r s f <<<"$job"
        "$SP" -s "$s" -t 1 --io read "$f" "ref.$ext"
        for t in 1 2 3 7; do
            for io in "${IO_PATHS[@]}"; do
                "$SP" -s "$s" -t "$t" --io "$io" "$f" "t.$ext"
                cmp -s "ref.$ext" "t.$ext" || why="$f -s $s -t $t --io $io"
            done
        done
        "$SP" -s "$s" -t 3 - "p.$ext" <"$f"
        cmp -s "ref.$ext" "p.$ext" || why="$f -s $s from a pipe"
    done
    result "$ext: the same bytes for -t 1, 2, 3, 7 on every --io path" "$why"
done

# A failed write: one line, exit 1, no output.
for ext in png jpg; do
    ln -s /dev/full "full.$ext"
    why=
    if "$SP" -s 2 planet.ppm "full.$ext" 2>err; then
        why='exit 0'
    elif (($(wc -l <err) != 1)) || ! grep -q 'No space left' err; then
        why="stderr: $(head -c 200 err)"
    fi
    result "$ext to /dev/full: one line, exit 1" "$why"
    why=
    if (ulimit -f 64 && trap '' XFSZ && "$SP" -s 2 planet.ppm "cut.$ext") \
        2>err; then
        why='exit 0'
    elif [[ -e cut.$ext ]] || (($(wc -l <err) != 1)); then
        why="left cut.$ext, or stderr: $(head -c 200 err)"
    fi
    result "$ext past a file size limit: one line, no output" "$why"
done

# Peak memory of a 5120x2880 output (a 43 MiB raster): PPM's and 4 MiB
# at most, an encoder's state and its rows, never the image.  Not a ratio
# of PPM's: that is a few MiB and moves from run to run (1.4 to 2.0 MiB
# seen), and a PNG's 2816 KiB against PPM's 1404 once failed "within 2x"
# under load.
ppmforge -width 1280 -height 720 -seed 3 >p720.ppm 2>/dev/null
/usr/bin/time -f %M -o rss.ppm "$SP" -s 4 p720.ppm big.ppm
for ext in png jpg; do
    level=()
    [[ $ext == png ]] && level=(--compression 1)  # the memory of any level
    /usr/bin/time -f %M -o "rss.$ext" "$SP" -s 4 "${level[@]}" p720.ppm \
        "big.$ext"
    rss=$(tail -n 1 "rss.$ext") ppm=$(tail -n 1 rss.ppm)
    result "$ext 5120x2880: peak RSS ${rss} KiB within PPM's ${ppm} + 4 MiB" \
        "$( ((rss <= ppm + 4096)) || echo "over")"
done

# --skip-existing: a whole PNG or JPEG is kept, a cut one made again.
for ext in png jpg; do
    why=
    mkdir -p "skip$ext"
    "$SP" -s 2 -q -o "skip$ext/" --format "$ext" planet.ppm
    cp "skip$ext/planet.$ext" "whole.$ext"
    touch -d '2001-01-01' "skip$ext/planet.$ext"
    "$SP" -s 2 -q -o "skip$ext/" --format "$ext" --skip-existing planet.ppm
    [[ $(stat -c %Y "skip$ext/planet.$ext") == $(date -d 2001-01-01 +%s) ]] ||
        why='a whole one was made again'
    truncate -s -1 "skip$ext/planet.$ext"
    "$SP" -s 2 -q -o "skip$ext/" --format "$ext" --skip-existing planet.ppm
    cmp -s "whole.$ext" "skip$ext/planet.$ext" || why='a cut one was kept'
    result "$ext: --skip-existing keeps a whole one, remakes a cut one" "$why"
done

finish
