#!/usr/bin/env bash
# orient_test.sh: photos turned upright by their EXIF orientation (issue
# 39, item 1).  One picture stored eight ways: its pixels turned with
# pamflip by the inverse of each orientation, the orientation written by
# exiftool (a PNG's eXIf chunk, a JPEG's APP1).  Checked:
#   a PNG stored any of the eight ways gives the upright picture's
#     output byte for byte: a copy, a reduce, a fit (its box measured on
#     the upright size), into every output format, by every --io path, a
#     pipe, one and three threads; and the output carries no
#     orientation (its pixels are upright);
#   a JPEG (quality 95) stored any way gives a fit within 35 dB PSNR of
#     the upright JPEG's, of its size (shrink-on-load kept);
#   with --no-auto-orient (and --orient none) the pixels stay as stored
#     and a PNG or JPEG output carries the orientation, so that
#     ImageMagick's -auto-orient of it gives the upright picture;
#   the server turns it upright too, and keeps it as stored with
#     orient=none, under another ETag.
#
# usage: bash tests/orient_test.sh PATH/TO/scaleppm [PATH/TO/genimage]
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$here/lib.sh"
# shellcheck source-path=SCRIPTDIR source=serve_lib.sh
. "$here/serve_lib.sh"
setup "usage: orient_test.sh PATH/TO/scaleppm [PATH/TO/genimage]" "$@"
cd "$WORK"
trap stop_server EXIT

for tool in exiftool pamflip pnmtopng pnmtojpeg pngtopam djpeg pnmpsnr \
    pgmramp rgb3toppm; do
    if ! have "$tool"; then
        skip 'orient' "$tool not installed"
        finish
        exit
    fi
done

# stored O IN: IN's pixels as a file of orientation O holds them: turned
# by the inverse of what O tells a viewer to do.
stored() {
    case $1 in
    1) cat "$2" ;;
    2) pamflip -lr "$2" ;;
    3) pamflip -r180 "$2" ;;
    4) pamflip -tb "$2" ;;
    5) pamflip -xy "$2" ;;
    6) pamflip -r90 "$2" ;;     # counter-clockwise: the file's 6 turns it back
    7) pamflip -xy "$2" | pamflip -r180 ;;
    8) pamflip -r270 "$2" ;;
    esac
}

# tag F: F's EXIF orientation, a number, or "" for none.
tag() {
    exiftool -n -s3 -Orientation "$1"
}

# psnr35 A B: A is within 35 dB PSNR of B in each of R, G and B.
psnr35() {
    local r g b db
    read -r r g b < <(pnmpsnr -rgb -machine "$1" "$2" 2>/dev/null)
    for db in "$r" "$g" "$b"; do
        [[ $db == inf ]] || awk -v d="$db" 'BEGIN { exit !(d >= 35) }' ||
            return 1
    done
}

# upright_by_convert F: ImageMagick's -auto-orient of the JPEG F (of the
# smooth picture) is the upright picture, within 35 dB (ImageMagick 6
# reads no PNG eXIf chunk: exiftool is the PNGs' oracle).
upright_by_convert() {
    convert "$1" -auto-orient ppm:turned.ppm 2>/dev/null &&
        psnr35 turned.ppm smooth.ppm
}

# The picture: noise for the PNGs (every pixel tells), a smooth picture
# for the JPEGs (as a photograph compresses); sides odd and unequal.
noise 61 37 255 5 3 >up.ppm
rgb3toppm <(pgmramp -lr 203 121) <(pgmramp -tb 203 121) \
    <(pgmramp -ellipse 203 121) >smooth.ppm
pnmtopng up.ppm >up.png 2>/dev/null
pnmtojpeg -quality=95 smooth.ppm >up.jpg
for o in 1 2 3 4 5 6 7 8; do
    stored "$o" up.ppm >"s$o.ppm"
    pnmtopng "s$o.ppm" >"o$o.png" 2>/dev/null
    stored "$o" smooth.ppm | pnmtojpeg -quality=95 >"o$o.jpg"
    exiftool -q -q -overwrite_original -n "-Orientation=$o" "o$o.png" "o$o.jpg"
done
check 'exiftool wrote the orientations' \
    test "$(tag o6.png) $(tag o8.jpg)" = "6 8"

# A PNG stored any way: the upright picture's bytes.
for args in "-s 1" "-s -2" "-s 3" "--fit 20x20" "-s -3 --filter box"; do
    why=
    for out in ppm png jpg bmp tga; do
        # shellcheck disable=SC2086  # ARGS are words
        "$SP" --io read -t 1 $args up.png "ref.$out"
        for o in 1 2 3 4 5 6 7 8; do
            for io in "${IO_PATHS[@]}" pipe; do
                for t in 1 3; do
                    # shellcheck disable=SC2086
                    if [[ $io == pipe ]]; then
                        "$SP" -t "$t" $args - "got.$out" <"o$o.png"
                    else
                        "$SP" --io "$io" -t "$t" $args "o$o.png" "got.$out"
                    fi
                    if [[ -z $why ]] && ! cmp -s "got.$out" "ref.$out"; then
                        why="orientation $o to $out, $io, -t $t: not the upright picture's bytes"
                    fi
                done
            done
            if [[ -z $why && $out == @(png|jpg) && -n $(tag "got.$out") ]]; then
                why="orientation $o to $out: the output carries orientation $(tag "got.$out")"
            fi
        done
    done
    result "a PNG stored 8 ways, $args: upright, every format, path and thread count" "$why"
done

# A JPEG stored any way: a fit within 35 dB of the upright JPEG's.
"$SP" --fit 48x48 up.jpg ref.ppm
why=
for o in 1 2 3 4 5 6 7 8; do
    "$SP" --fit 48x48 "o$o.jpg" got.ppm
    if [[ $(pamfile got.ppm | cut -d, -f2-) != $(pamfile ref.ppm | cut -d, -f2-) ]]; then
        why="orientation $o: $(pamfile got.ppm), not the upright size"
        break
    fi
    if ! psnr35 got.ppm ref.ppm; then
        why="orientation $o: $(pnmpsnr -rgb -machine got.ppm ref.ppm 2>&1) dB against the upright JPEG's fit"
    fi
done
result "a JPEG stored 8 ways, --fit 48x48: upright, within 35 dB, of its size" "$why"

# --no-auto-orient: the stored pixels, the tag carried.
why=
for o in 2 5 6 8; do
    for flag in --no-auto-orient "--orient none"; do
        # shellcheck disable=SC2086  # FLAG may be two words
        "$SP" $flag -s 1 "o$o.png" kept.png
        # shellcheck disable=SC2086
        "$SP" $flag -s 1 --quality 95 "o$o.jpg" kept.jpg
        if ! pngtopam kept.png | cmp -s - "s$o.ppm"; then
            why="orientation $o, $flag: the PNG's pixels are not as stored"
        elif [[ $(tag kept.png) != "$o" || $(tag kept.jpg) != "$o" ]]; then
            why="orientation $o, $flag: the outputs carry $(tag kept.png) and $(tag kept.jpg)"
        elif have convert && ! upright_by_convert kept.jpg; then
            why="orientation $o: convert -auto-orient of the JPEG output is not upright"
        fi
    done
done
result "--no-auto-orient: pixels as stored, the orientation carried" "$why"

# The server: orient= is the same key.
if have curl; then
    mkdir -p root
    cp o6.png root/
    # a file changed within the last seconds gets no ETag (it may be
    # being written): an older one
    touch -d '1 hour ago' root/o6.png
    start_server --root root -q
    why=
    if ! curl -s -o a.ppm "$URL/o6.png?s=1&format=ppm" || ! cmp -s a.ppm up.ppm; then
        why="GET ?s=1: not upright"
    elif ! curl -s -o n.ppm "$URL/o6.png?s=1&format=ppm&orient=none" ||
        ! cmp -s n.ppm s6.ppm; then
        why="GET ?s=1&orient=none: not as stored"
    elif [[ $(status '/o6.png?s=1&orient=sideways') != 400 ]]; then
        why="orient=sideways: not 400"
    else
        curl -s -D a.hdr -o /dev/null "$URL/o6.png?s=1" || true
        curl -s -D n.hdr -o /dev/null "$URL/o6.png?s=1&orient=none" || true
        a=$(grep -i '^etag:' a.hdr || true)
        n=$(grep -i '^etag:' n.hdr || true)
        [[ -n $a && $a != "$n" ]] ||
            why="ETags '$a' and '$n': $(head -n 1 a.hdr)"
    fi
    stop_server
    result "the server: upright, orient=none as stored, another ETag" "$why"
else
    skip "the server" "curl not installed"
fi

finish
