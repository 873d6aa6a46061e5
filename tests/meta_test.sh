#!/usr/bin/env bash
# meta_test.sh: the metadata channel (issue 38, item 3): a JPEG's and a
# PNG's ICC profile and EXIF orientation carried into JPEG and PNG
# outputs, nothing else of the EXIF.  The inputs are made here: netpbm's
# encoders, a profile made by lcms2's linkicc, the orientation and the
# profile (and a GPS position, a camera's make) written by exiftool,
# which is the oracle too (-b -ICC_Profile, -n -Orientation).
# Checked, for RGB and gray inputs of both formats, each output format,
# every --io path, a pipe, one and three threads, a factor and a fit:
#   the output's profile is the input's, byte for byte, its orientation
#     the input's, and no GPS position or make is there;
#   its pixels are those of the same input without metadata (the channel
#     changes no pixel), and an input without metadata gives an output
#     without any;
#   PNM, BMP and TGA outputs carry nothing: byte for byte the outputs of
#     the input without metadata.
# Every run keeps the stored order (--orient none), the channel's case:
# the default turns the pixels upright instead (orient_test.sh).
#
# usage: bash tests/meta_test.sh PATH/TO/scaleppm [PATH/TO/genimage]
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$here/lib.sh"
setup "usage: meta_test.sh PATH/TO/scaleppm [PATH/TO/genimage]" "$@"
cd "$WORK"

for tool in exiftool linkicc djpeg pnmtojpeg pnmtopng pngtopam; do
    if ! have "$tool"; then
        skip 'meta' "$tool not installed"
        finish
        exit
    fi
done

# exif FILE ARGS...: exiftool writing ARGS into FILE in place, quietly.
exif() {
    local f=$1
    shift
    exiftool -q -q -overwrite_original "$@" "$f"
}

linkicc -x -o rgb.icc '*sRGB' '*XYZ' >/dev/null 2>&1
linkicc -x -o gray.icc '*Gray22' '*XYZ' >/dev/null 2>&1
noise 97 61 255 7 3 >rgb.ppm
noise 97 61 255 9 1 >gray.pgm
declare -A orient=([rgb.jpg]=6 [rgb.png]=8 [gray.jpg]=3 [gray.png]=5)
for f in rgb.jpg rgb.png gray.jpg gray.png; do
    src=rgb.ppm
    [[ $f == gray.* ]] && src=gray.pgm
    if [[ $f == *.jpg ]]; then
        pnmtojpeg -quality=90 "$src" >"plain-$f"
    else
        pnmtopng "$src" >"plain-$f" 2>/dev/null
    fi
    cp "plain-$f" "meta-$f"
    exif "meta-$f" -n "-Orientation=${orient[$f]}" \
        "-ICC_Profile<=${f%%.*}.icc" -GPSLatitude=48.85 -GPSLatitudeRef=N \
        -Make=Camera
done
check 'the inputs hold a profile and an orientation' \
    test "$(exiftool -n -s3 -Orientation meta-rgb.png)" = 8

# carried IN OUT: OUT, scaled from the input IN, holds IN's profile and
# orientation and nothing else of its EXIF; empty, or the reason.
carried() {
    local in=$1 out=$2 o
    if ! exiftool -b -ICC_Profile "$out" | cmp -s - "${in%%.*}.icc"; then
        printf '%s: the profile is not the input'"'"'s\n' "$out"
        return
    fi
    o=$(exiftool -n -s3 -Orientation "$out")
    if [[ $o != "${orient[$in]}" ]]; then
        printf '%s: orientation %s, not %s\n' "$out" "$o" "${orient[$in]}"
        return
    fi
    if [[ -n $(exiftool -s3 -GPS:all -Make "$out") ]]; then
        printf '%s: the GPS position or the make was copied\n' "$out"
    fi
}

# pixels F: F's pixels as PNM (its format's own decoder).
pixels() {
    case $1 in
    *.jpg) djpeg -pnm "$1" ;;
    *) pngtopam "$1" ;;
    esac
}

# The output of the input with metadata, by --io read and one thread,
# checked with exiftool; by every other path, a pipe and three threads
# the same bytes.
for in in rgb.jpg rgb.png gray.jpg gray.png; do
    for out in jpg png; do
        for args in "-s 2" "--fit 40x40" "-s -3 --filter box"; do
            # shellcheck disable=SC2086  # ARGS are words
            "$SP" --orient none --io read -t 1 $args "meta-$in" "m.$out"
            # shellcheck disable=SC2086
            "$SP" --orient none --io read -t 1 $args "plain-$in" "p.$out"
            why=$(carried "$in" "m.$out")
            if [[ -z $why ]] && ! cmp -s <(pixels "m.$out") <(pixels "p.$out"); then
                why="the pixels differ from the plain input's"
            fi
            if [[ -z $why && -n $(exiftool -s3 -ICC_Profile -Orientation "p.$out") ]]; then
                why="metadata from an input without any"
            fi
            for io in "${IO_PATHS[@]}" pipe; do
                for t in 1 3; do
                    # shellcheck disable=SC2086
                    if [[ $io == pipe ]]; then
                        "$SP" --orient none -t "$t" $args - "o.$out" <"meta-$in"
                    else
                        "$SP" --orient none --io "$io" -t "$t" $args "meta-$in" "o.$out"
                    fi
                    if [[ -z $why ]] && ! cmp -s "o.$out" "m.$out"; then
                        why="$io, -t $t: not the bytes of read, -t 1"
                    fi
                done
            done
            result "$in to $out ($args): profile and orientation carried" "$why"
        done
    done
done

# PNM, BMP and TGA hold none: the outputs of the plain inputs'.
for in in rgb.jpg rgb.png gray.jpg gray.png; do
    why=
    for out in ppm pam bmp tga; do
        "$SP" --orient none -s -2 "meta-$in" "m.$out"
        "$SP" --orient none -s -2 "plain-$in" "p.$out"
        cmp -s "m.$out" "p.$out" || why="$out differs"
    done
    result "$in to PNM, PAM, BMP, TGA: nothing carried" "$why"
done

finish
