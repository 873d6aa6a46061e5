#!/usr/bin/env bash
# photo_batch_test.sh: a batch over a folder of photographs, JPEG and PNG
# (issue 28, item 5).  `-o DIR/` and `--files-from` take JPEG and PNG
# inputs, each output byte-identical to the one-file run and of the type
# its name says (DIR/a.jpg a JPEG, --format png a PNG); a corrupt JPEG in
# the folder fails alone (one stderr line, no output, exit 1) with a
# --timings=json record of its own, error included, beside the others';
# and the records show the files running side by side: with two threads,
# two workers whose files' intervals overlap, so that one file's decode
# runs while another's encode does.  The inputs: netpbm-generated images
# through cjpeg and pnmtopng.
#
# usage: bash tests/photo_batch_test.sh PATH/TO/scaleppm PATH/TO/genimage
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$here/lib.sh"
# shellcheck source-path=SCRIPTDIR source=batch_lib.sh
. "$here/batch_lib.sh"
setup "usage: photo_batch_test.sh PATH/TO/scaleppm PATH/TO/genimage" "$@"
cd "$WORK"
trap 'rm -rf -- "$WORK"' EXIT
[[ -n $GEN ]] || { skip "photo batches" "no genimage"; finish; exit; }
for t in cjpeg pnmtopng; do
    have "$t" || { skip "photo batches" "$t not installed"; finish; exit; }
done

# magic FILE: "jpeg", "png", "pnm" or "other", from FILE's first bytes.
magic() {
    case $(head -c 4 -- "$1" | od -An -tx1 | tr -d ' \n') in
    ffd8ff*) echo jpeg ;;
    89504e47) echo png ;;
    50[1-7]*) echo pnm ;;
    *) echo other ;;
    esac
}

# records_of FILE N BAD: empty, or why FILE's lines before the summary are
# not N JSON records, one an input, BAD's (if given) with status error and
# an error text, every other one ok, each with its worker and interval.
records_of() {
    python3 -c 'import json, sys
lines = open(sys.argv[1]).read().splitlines()
objs = [json.loads(x) for x in lines if x.startswith("{")]
n, bad = int(sys.argv[2]), sys.argv[3]
if len(objs) != n or len({o["input"] for o in objs}) != n:
    sys.exit(f"{len(objs)} records, want {n}, one an input")
for o in objs:
    name, st = o["input"], o["status"]
    want = "error" if name == bad else "ok"
    if st != want or (want == "error") != bool(o.get("error")):
        sys.exit(f"{name}: status {st}, want {want}")
    if not 0 <= o.get("start_ns", -1) <= o.get("end_ns", -1) \
            or "worker" not in o:
        sys.exit(f"{name}: no worker or interval")
' "$1" "$2" "${3:-}" 2>&1 || true
}

# overlapped FILE: empty, or why no two records of FILE, of two workers,
# ran at the same time.
overlapped() {
    python3 -c 'import json, sys
objs = [json.loads(x) for x in open(sys.argv[1]) if x.startswith("{")]
for a in objs:
    for b in objs:
        if a["worker"] != b["worker"] and a["start_ns"] < b["end_ns"] \
                and b["start_ns"] < a["end_ns"]:
            sys.exit(0)
sys.exit("no two files of two workers overlap: " + ", ".join(
    "%d:%d-%d" % (o["worker"], o["start_ns"], o["end_ns"]) for o in objs))
' "$1" 2>&1 || true
}

mkdir in
k=0
for size in "640 480" "480 640" "800 600" "320 200" "600 400" "512 512"; do
    k=$((k + 1))
    # shellcheck disable=SC2086  # W H
    "$GEN" -o gen.ppm $size >/dev/null
    if ((k <= 4)); then
        cjpeg -quality 85 gen.ppm >"in/photo$k.jpg"
    else
        pnmtopng gen.ppm >"in/photo$k.png" 2>/dev/null
    fi
done
rm -f gen.ppm
photos=(photo1.jpg photo2.jpg photo3.jpg photo4.jpg photo5.png photo6.png)
# A corrupt JPEG: the start of a real one, cut in its entropy-coded data.
head -c 3000 in/photo3.jpg >in/cut.jpg
refs -2 ref "${photos[@]/#/in/}"

# --- -o DIR/ over JPEG and PNG, each output the type of its name ----------
why=''
for t in 1 2; do
    for io in "${IO_PATHS[@]}"; do
        rm -rf out && mkdir out
        sp -t "$t" --io "$io" -s -2 -o out/ "${photos[@]/#/in/}"
        why=$(stderr_is 0 "$(summary_re '6 scaled')")
        [[ -n $why ]] || why=$(holds out ref "${photos[@]}")
        [[ -n $why ]] || [[ $(magic out/photo1.jpg) == jpeg &&
            $(magic out/photo5.png) == png ]] ||
            why="types: $(magic out/photo1.jpg), $(magic out/photo5.png)"
        [[ -z $why ]] || break 2
    done
done
result "-o DIR/ over JPEG and PNG: each output the one-file run's, its type" \
    "$why"

# --- --files-from with JPEG and PNG -----------------------------------------
rm -rf out && mkdir out
printf 'in/%s\n' "${photos[@]}" >list
sp -s -2 -o out/ --files-from list
why=$(stderr_is 0 "$(summary_re '6 scaled')")
[[ -n $why ]] || why=$(holds out ref "${photos[@]}")
result "--files-from naming JPEGs and PNGs" "$why"

# --- another type for every output: --format, a pattern ----------------------
why=''
rm -rf out && mkdir out
sp -s -2 --format png -o out/ in/photo1.jpg in/photo5.png
[[ $rc == 0 && $(magic out/photo1.png) == png &&
    $(magic out/photo5.png) == png ]] ||
    why="--format png: exit $rc, $(find out -type f -printf "%f ")"
rm -rf out && mkdir out
sp -s -2 -o 'out/%s.ppm' in/photo2.jpg in/photo6.png
[[ -n $why || ($rc == 0 && $(magic out/photo2.ppm) == pnm &&
    $(magic out/photo6.ppm) == pnm) ]] ||
    why="out/%s.ppm: exit $rc, $(find out -type f -printf "%f ")"
result "--format png and -o 'DIR/%s.ppm' turn JPEGs and PNGs to one type" \
    "$why"

# --- a corrupt JPEG in the folder: it alone fails, every file a record ------
why=''
for io in "${IO_PATHS[@]}"; do
    rm -rf out && mkdir out
    sp -t 2 --io "$io" --timings=json -s -2 -o out/ in/photo1.jpg \
        in/cut.jpg in/photo2.jpg in/photo5.png
    why=$(records_of e 4 in/cut.jpg)
    [[ -n $why ]] || ((rc == 1)) || why="exit $rc, want 1"
    [[ -n $why ]] || (($(grep -c '^scaleppm: in/cut.jpg: ' e) == 1)) ||
        why="not one error line: $(grep -v '^{' e | tr '\n' '|')"
    [[ -n $why ]] || why=$(holds out ref photo1.jpg photo2.jpg photo5.png)
    [[ -z $why ]] || { why="--io $io: $why"; break; }
done
result "a corrupt JPEG: its record with the error, the others done, exit 1" \
    "$why"

# --- the files run side by side ---------------------------------------------
rm -rf out && mkdir out
sp -t 2 --timings=json -s -2 -o out/ "${photos[@]/#/in/}"
why=$(records_of e 6)
[[ -n $why ]] || why=$(overlapped e)
result "-t 2: two workers' files overlap in time (records' intervals)" "$why"
rm -rf out && mkdir out
sp -t 1 --timings=json -s -2 -o out/ "${photos[@]/#/in/}"
why=$(records_of e 6)
[[ -n $why ]] || [[ -n $(overlapped e) ]] || why="-t 1 overlapped"
result "-t 1: one worker, no overlap" "$why"

finish
