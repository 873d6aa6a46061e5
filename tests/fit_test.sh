#!/usr/bin/env bash
# fit_test.sh: thumbnails of a given size (--fit, --width, --height) and
# shrink-on-load (issue 28, items 2 and 3), on photo-like images made here
# (smooth waves and a grain, written by /usr/bin/python3 with numpy, then
# cjpeg and pnmtopng).
# Oracles:
#   vipsthumbnail -s WxH   the output size, for several aspect ratios;
#   pamscale -linear -xyfit W H
#                          pixel mixing on the samples as they are (no
#                          gamma), the same area average computed in
#                          floating point: PSNR >= PAMSCALE_FLOOR
#                          (measured 90.9 dB to identical in Y; a few
#                          samples differ by 1, pamscale's rounding);
#   vips thumbnail         its own shrink-on-load and resize: PSNR >=
#                          VIPS_FLOOR (measured 48.9 dB);
#   the box reduce         a fit by a whole ratio is -s -N --filter box,
#                          alpha and 16 bits included, byte for byte;
#   --no-shrink-on-load    a JPEG box reduce or fit shrunk on load against
#                          the full decode: PSNR >= SHRINK_FLOOR (measured
#                          56.0 to 61.1 dB by -2 to -16, 48.9 dB a fit).
# --crop centre: the fit to the size that covers the box, then its middle
# (pamcut), byte for byte; vipsthumbnail --smartcrop centre's size.
# Every --io path, a pipe and several thread counts give the same bytes.
#
# usage: bash tests/fit_test.sh PATH/TO/scaleppm [PATH/TO/genimage]
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$here/lib.sh"
setup "usage: fit_test.sh PATH/TO/scaleppm [PATH/TO/genimage]" "$@"
cd "$WORK"

PAMSCALE_FLOOR=80
VIPS_FLOOR=40
SHRINK_FLOOR=45

for tool in vipsthumbnail vips cjpeg djpeg pnmtopng pngtopnm pamscale pnmpsnr; do
    if ! have "$tool"; then
        skip 'fit' "$tool not installed"
        finish
        exit
    fi
done
if ! /usr/bin/python3 -c 'import numpy' 2>/dev/null; then
    skip 'fit' 'python3-numpy not installed'
    finish
    exit
fi

# photo W H SEED > FILE: a photo-like PPM: a few smooth waves a channel,
# and a grain shared by the channels, as a picture of a real scene has
# broad shapes and a fine texture.
photo() {
    /usr/bin/python3 - "$@" <<'PY'
import sys
import numpy as np
w, h, seed = (int(a) for a in sys.argv[1:4])
rng = np.random.default_rng(seed)
y, x = np.mgrid[0:h, 0:w].astype(np.float64)
img = np.empty((h, w, 3))
for c in range(3):
    a = rng.uniform(20, 90, 4)
    fx, fy = rng.uniform(0.002, 0.03, 4), rng.uniform(0.002, 0.03, 4)
    ph = rng.uniform(0, 6.3, 4)
    img[..., c] = 128 + sum(a[i] / 2 * np.sin(fx[i] * x + fy[i] * y + ph[i])
                            for i in range(4))
img += rng.normal(0, 6, (h, w, 1))
img = np.clip(np.rint(img), 0, 255).astype(np.uint8)
sys.stdout.buffer.write(b"P6\n%d %d\n255\n" % (w, h) + img.tobytes())
PY
}

# size_of F: "W H" of the image F (a PNG's or a JPEG's, too).
size_of() {
    if [[ $1 == *.png ]]; then
        pngtopnm "$1" >size_of.pnm
        set -- size_of.pnm
    elif [[ $1 == *.jpg ]]; then
        djpeg -pnm "$1" >size_of.pnm
        set -- size_of.pnm
    fi
    pamfile -size "$1"
}

# psnr_at_least A B FLOOR: the PSNR of A against B, in Y, at least FLOOR
# dB (pnmpsnr says "1000.00" or "inf" for the same images).
psnr_at_least() {
    local y
    y=$(pnmpsnr -machine "$1" "$2" 2>/dev/null | awk '{print $1}')
    awk -v y="$y" -v f="$3" 'BEGIN { exit !(y == "inf" || y + 0 >= f) }' ||
        { printf '%s against %s: %s dB, under %s\n' "$1" "$2" "$y" "$3" >&2
          return 1; }
}

photo 1600 1067 1 >p.ppm
cjpeg -quality 90 p.ppm >p.jpg
photo 1000 667 2 >q.ppm
pnmtopng q.ppm >q.png

# ---- sizes: vipsthumbnail's, for several aspect ratios ----
why=
for s in 1000x750 1001x667 333x1000 1920x1080 999x1 401x250 1234x567 \
    777x777 1000x3 2000x1001 400x250 1000x15; do
    ppmmake red "${s%x*}" "${s#*x}" | pnmtopng >s.png
    for box in 320x320 100x100 320x200 3x3; do
        vipsthumbnail s.png -s "$box" -o v.png
        want=$(size_of v.png)
        "$SP" --fit "$box" s.png o.ppm
        got=$(size_of o.ppm)
        [[ $got == "$want" ]] || why+="$s in $box: $got, vips $want; "
    done
done
for s in 1000x750 333x1000; do
    ppmmake red "${s%x*}" "${s#*x}" | pnmtopng >s.png
    vipsthumbnail s.png -s 100x -o v.png
    "$SP" --width 100 s.png o.ppm
    [[ $(size_of o.ppm) == "$(size_of v.png)" ]] ||
        why+="$s --width 100: $(size_of o.ppm); "
    vipsthumbnail s.png -s x90 -o v.png
    "$SP" --height 90 s.png o.ppm
    [[ $(size_of o.ppm) == "$(size_of v.png)" ]] ||
        why+="$s --height 90: $(size_of o.ppm); "
done
result 'fit: the sizes vipsthumbnail gives' "$why"

# ---- the pixels: pamscale's pixel mixing, vips, the box ----
why=
for box in "320 320" "100 100" "333 200" "97 61"; do
    read -r w h <<<"$box"
    "$SP" --fit "${w}x$h" q.ppm o.ppm
    pamscale -linear -xyfit "$w" "$h" q.ppm >ref.ppm
    psnr_at_least o.ppm ref.ppm "$PAMSCALE_FLOOR" 2>>err || why+="$box; "
done
pamdepth 65535 q.ppm >q16.ppm
"$SP" --fit 97x61 q16.ppm o.ppm
pamscale -linear -xyfit 97 61 q16.ppm >ref.ppm
[[ $(pamfile o.ppm) == *"maxval 65535"* ]] || why+="16 bits lost; "
psnr_at_least o.ppm ref.ppm "$PAMSCALE_FLOOR" 2>>err || why+="16 bits; "
result "fit: PSNR >= $PAMSCALE_FLOOR dB against pamscale -linear -xyfit" \
    "$why$(head -n 1 err 2>/dev/null)"
rm -f err

vipsthumbnail p.jpg -s 320x320 -o v.png
"$SP" --fit 320x320 p.jpg o.ppm
pngtopnm v.png >v.ppm
check "fit: a JPEG, PSNR >= $VIPS_FLOOR dB against vipsthumbnail" \
    psnr_at_least o.ppm v.ppm "$VIPS_FLOOR"
vips resize q.ppm v.ppm 0.25
"$SP" --fit 250x250 q.ppm o.ppm
check "fit: PSNR >= $VIPS_FLOOR dB against vips resize" \
    psnr_at_least o.ppm v.ppm "$VIPS_FLOOR"

# A whole ratio is the box reduce, byte for byte: RGB, RGBA, 16-bit gray.
noise 96 64 255 3 3 >n.ppm
noise 96 64 255 9 1 >a.pgm
pamstack -tupletype=RGB_ALPHA n.ppm a.pgm >rgba.pam 2>/dev/null
noise 96 64 65535 5 1 >g16.pgm
why=
for f in n.ppm rgba.pam g16.pgm; do
    "$SP" --fit 24x16 "$f" fit.pam
    "$SP" -s -4 --filter box "$f" box.pam
    cmp -s fit.pam box.pam || why+="$f; "
done
result 'fit: a whole ratio gives the box reduce' "$why"

# A PNG input gives its PNM's bytes; a PBM is read as gray.
"$SP" --fit 200x200 q.png a.ppm
"$SP" --fit 200x200 q.ppm b.ppm
check 'fit: a PNG input, the bytes of its PNM' cmp a.ppm b.ppm
pgmnoise -randomseed=4 61 43 | pamthreshold -simple 2>/dev/null |
    pamtopnm >bits.pbm
pamdepth 255 bits.pbm 2>/dev/null | pamtopnm >bits.pgm
"$SP" --fit 20x20 bits.pbm a.pgm
"$SP" --fit 20x20 bits.pgm b.pgm
check 'fit: a PBM, as its gray' cmp a.pgm b.pgm

# ---- no enlarge, unless asked ----
"$SP" --fit 320x320 n.ppm small.ppm
check 'fit: an image inside the box is copied' cmp small.ppm n.ppm
"$SP" --fit 320x320 --enlarge n.ppm big.ppm
ppmmake red 96 64 | pnmtopng >s.png
vipsthumbnail s.png -s 320x320 -o v.png
result 'fit: --enlarge enlarges to the box' \
    "$([[ $(size_of big.ppm) == "$(size_of v.png)" ]] ||
        size_of big.ppm)"

# ---- every load path and thread count, the same bytes ----
why=
for f in p.jpg q.ppm; do
    "$SP" --fit 123x77 -t 1 --io read "$f" ref.ppm
    for io in "${IO_PATHS[@]}"; do
        for t in 1 2 3 7; do
            "$SP" --fit 123x77 -t "$t" --io "$io" "$f" o.ppm
            cmp -s o.ppm ref.ppm || why+="$f --io $io -t $t; "
        done
    done
    "$SP" --fit 123x77 -t 3 <"$f" >o.ppm
    cmp -s o.ppm ref.ppm || why+="$f by a pipe; "
    "$SP" --fit 123x77 -t 2 --io mmap "$f" o.png
    "$SP" --fit 123x77 -t 1 --io read "$f" ref.png
    cmp -s o.png ref.png || why+="$f as PNG; "
done
result 'fit: every --io path and thread count, the same bytes' "$why"

# ---- shrink-on-load ----
why=
for n in 2 4 6 8 16; do
    "$SP" -s "-$n" --filter box --timings p.jpg a.ppm 2>rec
    "$SP" -s "-$n" --filter box --no-shrink-on-load p.jpg b.ppm
    grep -q ' shrink=[248] ' rec || why+="-$n: not shrunk; "
    [[ $(size_of a.ppm) == "$(size_of b.ppm)" ]] || why+="-$n: size; "
    psnr_at_least a.ppm b.ppm "$SHRINK_FLOOR" 2>>err || why+="-$n; "
done
"$SP" --fit 320x320 p.jpg a.ppm
"$SP" --fit 320x320 --no-shrink-on-load p.jpg b.ppm
psnr_at_least a.ppm b.ppm "$VIPS_FLOOR" 2>>err || why+="fit; "
result "shrink-on-load: PSNR >= $SHRINK_FLOOR dB (box), $VIPS_FLOOR (fit)" \
    "$why$(head -n 1 err 2>/dev/null)"
rm -f err
"$SP" --fit 320x320 --timings p.jpg a.ppm 2>rec
check '--timings: a fit is factor 0, filter area' \
    grep -q ' factor=0 filter=area ' rec
"$SP" -s -8 p.jpg a.ppm
"$SP" -s -8 --no-shrink-on-load p.jpg b.ppm
check '--filter sample: never shrunk on load' cmp a.ppm b.ppm
"$SP" -s -3 --filter box --timings p.jpg a.ppm 2>rec
result 'shrink-on-load: none for a factor that 2 does not divide' \
    "$(! grep -q shrink= rec || echo 'shrunk')"

# ---- usage errors: one line, exit 2, no output ----
why=
for bad in "--fit 0x10" "--fit 10x" "--fit abc" "--fit 99999999999x5" \
    "--fit 10x10x" "--width 0" "--height -5" "--fit 10x10 -s -2" \
    "--enlarge -s -2" "--width 10 --crop centre" "--fit 9x9 --crop left"; do
    rc=0
    # shellcheck disable=SC2086  # the words of BAD are the options
    "$SP" $bad q.ppm bad.ppm 2>err || rc=$?
    ((rc == 2)) || why+="$bad: exit $rc; "
    [[ $(wc -l <err) == 1 ]] || why+="$bad: $(wc -l <err) lines; "
    [[ ! -e bad.ppm ]] || why+="$bad: an output; "
done
result 'fit: a bad value is one line and exit 2' "$why"

# ---- --crop centre: the box filled, the excess cut ----
# cover W H BW BH: the size a W x H image takes to cover a BW x BH box,
# its short side rounded as a fit rounds it.
cover() {
    awk -v w="$1" -v h="$2" -v bw="$3" -v bh="$4" 'function side(a, b, o,
        v) { v = int((2 * b * o + a) / (2 * a)); return v < 1 ? 1 : v }
        BEGIN { if (w * bh >= h * bw) print side(h, w, bh), bh
                else print bw, side(w, h, bw) }'
}
# The crop is the fit to the cover, then its middle (pamcut): byte for
# byte, from a PNG and a JPEG (shrunk on load alike), every path, a pipe
# and three threads; vipsthumbnail --smartcrop centre gives the same size.
why=
for in in q.png p.jpg; do
    read -r w h < <(size_of "$in")
    for box in 100x100 64x200 300x40 999x666; do
        bw=${box%x*} bh=${box#*x}
        read -r cw ch < <(cover "$w" "$h" "$bw" "$bh")
        "$SP" --width "$cw" "$in" cov.ppm
        pamcut -left $(((cw - bw) / 2)) -top $(((ch - bh) / 2)) \
            -width "$bw" -height "$bh" cov.ppm >want.ppm
        for io in "${IO_PATHS[@]}" pipe; do
            for t in 1 3; do
                if [[ $io == pipe ]]; then
                    "$SP" -t "$t" --fit "$box" --crop centre - got.ppm <"$in"
                else
                    "$SP" --io "$io" -t "$t" --fit "$box" --crop centre \
                        "$in" got.ppm
                fi
                cmp -s got.ppm want.ppm ||
                    why+="$in $box ($io, -t $t): not the cover's middle; "
            done
        done
        vipsthumbnail -s "$box" --smartcrop centre -o vt.png "$in" 2>/dev/null &&
            [[ $(size_of vt.png) == "$bw $bh" ]] ||
            why+="$in $box: vipsthumbnail's size is $(size_of vt.png); "
    done
done
result '--crop centre: the fit to the cover, its middle; every path' "$why"

# Inside the box: kept whole without --enlarge (no larger than the box),
# covered with it.
why=
"$SP" --fit 2000x500 --crop centre q.png small.ppm
[[ $(size_of small.ppm) == "1000 500" ]] || why="$(size_of small.ppm), not 1000 500; "
"$SP" --fit 2000x500 --crop centre --enlarge q.png big.ppm
[[ $(size_of big.ppm) == "2000 500" ]] || why+="--enlarge: $(size_of big.ppm)"
result '--crop centre: an image under the box is not enlarged unless asked' "$why"

finish
