#!/usr/bin/env bash
# formats_test.sh: every netpbm format in and out, and netpbm's stream
# conventions (issue 16).
#
# Inputs: PBM (raw and plain), PAM of depth 1 to 5, maxval 1 to 65535,
# with their tuple types (BLACKANDWHITE, GRAYSCALE, GRAYSCALE_ALPHA, RGB,
# RGB_ALPHA, and a depth 5 of no known type), made here from seeded noise.
# Oracles:
#   pamenlarge N             every enlarge, byte for byte (PBM stays PBM);
#   pamscale -reduce N -nomix sample reduces where N is 2 or 4 and divides
#                            the size (oracle_test.sh says why only those);
#   ppmtopgm, pgmtoppm, pamtopam, pamtopnm
#                            .pgm, .ppm and .pam outputs, byte for byte;
#   convert -flatten         an alpha flattened onto --background;
#   ref.py (below)           box reduces: PBM to PGM (the share of white),
#                            alpha-weighted colour; every size and N.
# Every job on --io read, mmap and pread, 1 and 3 threads: the same bytes.
#
# usage: bash tests/formats_test.sh PATH/TO/scaleppm [PATH/TO/genimage]
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$here/lib.sh"
setup "usage: formats_test.sh PATH/TO/scaleppm [PATH/TO/genimage]" "$@"
cd "$WORK"

if ! have python3; then
    skip 'formats' 'python3 not installed (it makes the PAM inputs)'
    finish
    exit
fi

cat >mk.py <<'EOF'
# mk.py OUT W H DEPTH MAXVAL TUPLTYPE SEED: a PAM of seeded noise; with
# TUPLTYPE BLACKANDWHITE and OUT ending in .pbm, the same as a raw PBM.
import random
import sys

out, w, h, d, m, t, seed = sys.argv[1:]
w, h, d, m = int(w), int(h), int(d), int(m)
rnd = random.Random(int(seed))
vals = [rnd.randrange(m + 1) for _ in range(w * h * d)]
if d in (2, 4) and t.endswith("_ALPHA"):  # some transparent, some opaque
    for i in range(d - 1, len(vals), d * 3):
        vals[i] = 0
    for i in range(d - 1 + d, len(vals), d * 5):
        vals[i] = m
with open(out, "wb") as f:
    if out.endswith(".pbm"):
        f.write(b"P4\n%d %d\n" % (w, h))
        for y in range(h):
            row = bytearray((w + 7) // 8)
            for x in range(w):
                if vals[y * w + x] == 0:  # BLACKANDWHITE 0 is black
                    row[x // 8] |= 0x80 >> (x % 8)
            f.write(bytes(row))
    else:
        f.write(b"P7\nWIDTH %d\nHEIGHT %d\nDEPTH %d\nMAXVAL %d\n"
                % (w, h, d, m))
        if t != "-":
            f.write(b"TUPLTYPE %s\n" % t.encode())
        f.write(b"ENDHDR\n")
        b = 2 if m > 255 else 1
        f.write(b"".join(v.to_bytes(b, "big") for v in vals))
EOF

cat >ref.py <<'EOF'
# ref.py IN OUT N [pbm]: is OUT IN box-reduced by N?  IN and OUT in PAM form
# (pamtopam), so one reader does all.  Box: the block's mean rounded half
# up; with alpha (GRAYSCALE_ALPHA, RGB_ALPHA) the colour weighted by
# opacity, a block all transparent by the plain mean; a PBM (pbm: IN is
# pamtopam's PAM of one) gives PGM maxval 255, the share of white.
import sys


def load(path):
    data = open(path, "rb").read()
    end = data.index(b"ENDHDR\n") + 7
    head = dict(ln.split(b" ", 1) for ln in data[:end].split(b"\n")[1:-2])
    w, h = int(head[b"WIDTH"]), int(head[b"HEIGHT"])
    d, m = int(head[b"DEPTH"]), int(head[b"MAXVAL"])
    t = head.get(b"TUPLTYPE", b"").decode()
    b = 2 if m > 255 else 1
    r = data[end:]
    v = [int.from_bytes(r[i:i + b], "big") for i in range(0, len(r), b)]
    return w, h, d, m, t, v


def box(img, n, pbm):
    w, h, d, m, t, v = img
    ow, oh = -(-w // n), -(-h // n)
    alpha = t.endswith("_ALPHA") and d in (2, 4)
    out = []
    for oy in range(oh):
        for ox in range(ow):
            cells = [(x, y) for y in range(oy * n, min(h, oy * n + n))
                     for x in range(ox * n, min(w, ox * n + n))]
            cnt = len(cells)
            px = [v[(y * w + x) * d:(y * w + x) * d + d] for x, y in cells]
            if pbm:
                white = sum(p[0] for p in px)
                out.append((255 * white + cnt // 2) // cnt)
                continue
            a = sum(p[d - 1] for p in px) if alpha else 0
            for c in range(d):
                if alpha and c < d - 1 and a > 0:
                    s = sum(p[c] * p[d - 1] for p in px)
                    out.append((s + a // 2) // a)
                else:
                    out.append((sum(p[c] for p in px) + cnt // 2) // cnt)
    return ow, oh, (1 if pbm else d), (255 if pbm else m), out


src, dst, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
want = box(load(src), n, sys.argv[4:] == ["pbm"])
got = load(dst)
if (got[0], got[1], got[2], got[3]) != want[:4]:
    sys.exit(f"{dst}: {got[:4]}, expected {want[:4]}")
bad = [i for i, (x, y) in enumerate(zip(got[5], want[4])) if x != y]
if bad:
    i = bad[0]
    sys.exit(f"{dst}: sample {i} is {got[5][i]}, expected {want[4][i]} "
             f"({len(bad)} differ)")
EOF

# inputs: NAME W H DEPTH MAXVAL TUPLTYPE
inputs=(
    "bw.pbm 37 13 1 1 BLACKANDWHITE"
    "bw8.pbm 16 8 1 1 BLACKANDWHITE"
    "gray.pam 23 11 1 255 GRAYSCALE"
    "ga.pam 19 9 2 255 GRAYSCALE_ALPHA"
    "rgb16.pam 17 10 3 65535 RGB"
    "rgba.pam 21 12 4 255 RGB_ALPHA"
    "rgba16.pam 16 8 4 1000 RGB_ALPHA"
    "bwpam.pam 13 7 1 1 BLACKANDWHITE"
    "five.pam 9 5 5 255 -"
)
seed=1
for spec in "${inputs[@]}"; do
    read -r name w h d m t <<<"$spec"
    python3 mk.py "$name" "$w" "$h" "$d" "$m" "$t" "$seed"
    seed=$((seed + 7))
done
pnmtoplainpnm bw.pbm >plain.pbm
"$SP" -s 2 bw.pbm raw2.pbm

# run_all OUT ARGS...: scaleppm ARGS on every I/O path (IO_PATHS) and 1
# and 3 threads; OUT is the default path's output at -t 1; the others must
# equal it.
run_all() {
    local out=$1 io t why='' alt first=${IO_PATHS[0]}
    shift
    alt=alt.${out##*.}
    "$SP" --io "$first" -t 1 "$@" "$out" 2>err || {
        echo "scaleppm $* failed: $(head -n 1 err)" >&2
        return 1
    }
    for io in "${IO_PATHS[@]}"; do
        for t in 1 3; do
            "$SP" --io "$io" -t "$t" "$@" "$alt" 2>err ||
                { why="--io $io -t $t failed: $(head -n 1 err)"; break 2; }
            cmp -s "$out" "$alt" ||
                { why="--io $io -t $t differs from --io $first -t 1"; break 2; }
        done
    done
    [[ -z $why ]] || { echo "$why" >&2; return 1; }
}

# --- type kept, against pamenlarge and pamscale -nomix ---------------------
for spec in "${inputs[@]}"; do
    read -r name w h _ _ t <<<"$spec"
    ext=${name##*.}
    for n in 2 3; do
        why=''
        run_all "e$n.$ext" -s "$n" "$name" 2>e || why=$(head -n 1 e)
        [[ -n $why ]] || { pamenlarge "$n" "$name" >o.ref && same o.ref "e$n.$ext" 2>e; } ||
            why="differs from pamenlarge $n"
        result "enlarge $n of $name ($t): pamenlarge's bytes" "$why"
    done
    for n in 2 4; do
        ((w % n == 0 && h % n == 0)) || continue
        why=''
        run_all "r$n.$ext" -s "-$n" "$name" 2>e || why=$(head -n 1 e)
        [[ -n $why ]] ||
            { pamscale -reduce "$n" -nomix "$name" 2>/dev/null >o.ref &&
                same o.ref "r$n.$ext" 2>e; } ||
            why="differs from pamscale -reduce $n -nomix"
        result "sample reduce $n of $name ($t): pamscale -nomix's bytes" "$why"
    done
done
why=''
run_all p2.pbm -s 2 plain.pbm 2>e || why=$(head -n 1 e)
[[ -n $why ]] || same raw2.pbm p2.pbm 2>e || why='plain PBM gives other bytes'
result 'plain PBM (P1): the raw one'"'"'s output' "$why"

# --- box: PBM to PGM, alpha-weighted colour ------------------------------
for spec in "${inputs[@]}"; do
    read -r name _ _ _ _ t <<<"$spec"
    kind=()
    [[ $name == *.pbm ]] && kind=(pbm)
    for n in 2 3 5; do
        why=''
        run_all "b$n.pnm" --filter box -s "-$n" "$name" 2>e ||
            why=$(head -n 1 e)
        [[ -n $why ]] || { pamtopam <"$name" >in.pam &&
            pamtopam <"b$n.pnm" >out.pam &&
            python3 ref.py in.pam out.pam "$n" "${kind[@]}" 2>e; } ||
            why=$(head -n 1 e)
        result "box reduce $n of $name ($t): the reference" "$why"
    done
done
"$SP" --filter box -s -2 bw.pbm box.pnm
why=$(pamfile box.pnm)
[[ $why == *'PGM raw, 19 by 7  maxval 255'* ]] && why=''
result 'box of PBM: a PGM of maxval 255, as pamscale' "$why"

# --- output types by name -------------------------------------------------
# to_type IN OUT_NAME WHAT ORACLE...: scaleppm -s 1 IN OUT_NAME is ORACLE's
# output of IN.
to_type() {
    local in=$1 out=$2 what=$3 why=''
    shift 3
    rm -f -- "$out"
    run_all "$out" -s 1 "$in" 2>e || why=$(head -n 1 e)
    [[ -n $why ]] || { "$@" <"$in" >o.ref 2>/dev/null && same o.ref "$out" 2>e; } ||
        why="differs from $*"
    result "$what" "$why"
}
noise 31 7 255 11 3 >c8.ppm
noise 31 7 1000 12 3 >c16.ppm
noise 13 5 255 13 1 >g8.pgm
noise 13 5 65535 14 1 >g16.pgm
to_type c8.ppm o.pgm 'colour to .pgm (8 bits): ppmtopgm'"'"'s bytes' ppmtopgm
to_type c16.ppm o.pgm 'colour to .pgm (maxval 1000): ppmtopgm'"'"'s bytes' ppmtopgm
to_type g8.pgm o.ppm 'gray to .ppm: pgmtoppm'"'"'s bytes' pgmtoppm white
to_type g16.pgm o.ppm 'gray to .ppm (16 bits): pgmtoppm'"'"'s bytes' pgmtoppm white
to_type c8.ppm o.pam 'PPM to .pam: pamtopam'"'"'s bytes' pamtopam
to_type bw.pbm o.pam 'PBM to .pam: pamtopam'"'"'s bytes' pamtopam
# An alpha flattened onto the background (white by default), as
# ImageMagick flattens (pamtopnm drops it: the covered colour would show).
if have convert; then
    for bg in white black '#3080c0'; do
        hex=${bg#\#}
        [[ $bg == white ]] && hex=ffffff
        [[ $bg == black ]] && hex=000000
        why=
        run_all o.ppm -s 1 --background "$hex" rgba.pam 2>e ||
            why=$(head -n 1 e)
        if [[ -z $why ]]; then
            convert - -background "$bg" -flatten ppm:- <rgba.pam >o.ref
            cmp -s o.ref o.ppm || why="differs from ImageMagick's"
        fi
        result "RGB_ALPHA to .ppm on $bg: ImageMagick's -flatten, byte for byte" \
            "$why"
    done
    to_type ga.pam o.pgm 'GRAYSCALE_ALPHA to .pgm on white: ImageMagick'"'"'s -flatten' \
        convert - -background white -flatten pgm:-
else
    skip 'an alpha flattened' 'ImageMagick not installed'
fi
# A JPEG has no alpha: a PNG half transparent gives the background there,
# within JPEG's error.
if have pnmtopng && have djpeg; then
    why=
    pgmmake 0 16 16 >clear.pgm
    pgmmake 1 16 16 >solid.pgm
    pamcat -lr clear.pgm solid.pgm >halfa.pgm 2>/dev/null ||
        pnmcat -lr clear.pgm solid.pgm >halfa.pgm
    noise 32 16 255 21 3 >halfc.ppm
    pnmtopng -alpha=halfa.pgm halfc.ppm >half.png 2>/dev/null
    for bg in ffffff 3080c0; do
        "$SP" -s 1 --quality 95 --background "$bg" half.png half.jpg
        djpeg -pnm half.jpg | pamcut -left 0 -width 12 >left.ppm
        ppmmake "rgb:${bg:0:2}/${bg:2:2}/${bg:4:2}" 12 16 >want.ppm
        # the largest difference from the background, any sample
        d=$(pamarith -difference left.ppm want.ppm | pamsumm -max -brief)
        ((d <= 8)) || why="background $bg: the clear half differs by up to $d"
    done
    result "a half-transparent PNG to JPEG: the clear half is the background" "$why"
fi
to_type bwpam.pam o.pbm 'BLACKANDWHITE PAM to .pbm: pamtopnm'"'"'s bytes' pamtopnm
to_type bw.pbm o.pnm 'PBM to .pnm: kept' cat
to_type rgba.pam o.pnm 'PAM to .pnm: kept' cat

rm -f -- refused.pbm
rc=0
"$SP" -s 2 c8.ppm refused.pbm 2>e || rc=$?
why=''
((rc == 1)) || why="exit $rc, expected 1"
grep -q 'pamthreshold' e || why="message does not name pamthreshold: $(head -n 1 e)"
[[ ! -e refused.pbm ]] || why='an output file was left'
result 'colour to .pbm: refused, naming the netpbm tool, no file' "$why"

rc=0
"$SP" -s 1 five.pam refused.ppm 2>e || rc=$?
result 'depth-5 PAM to .ppm: refused' \
    "$( ((rc == 1)) && [[ ! -e refused.ppm ]] || echo "exit $rc: $(head -n 1 e)")"

if have pngtopam; then
    "$SP" -s 2 rgba.pam a.png
    pngtopam -alphapam a.png >a.pam
    "$SP" -s 2 rgba.pam a2.pam
    why=''
    same a2.pam a.pam 2>e || why='PNG'"'"'s RGBA differs from the PAM'"'"'s'
    result 'PNG keeps alpha (pngtopam -alphapam gives the PAM back)' "$why"
else
    skip 'PNG keeps alpha' 'pngtopam not installed'
fi

# --- JPEG quality, PNG compression -----------------------------------------
noise 64 64 255 21 3 >q.ppm
"$SP" -s 2 --quality 10 q.ppm q10.jpg
"$SP" -s 2 --quality 95 q.ppm q95.jpg
"$SP" -s 2 q.ppm q90.jpg
why=''
(($(stat -c %s q10.jpg) < $(stat -c %s q90.jpg) &&
    $(stat -c %s q90.jpg) < $(stat -c %s q95.jpg))) ||
    why="sizes $(stat -c %s q10.jpg) $(stat -c %s q90.jpg) $(stat -c %s q95.jpg)"
result '--quality: 10 < default (90) < 95 in bytes' "$why"
# stb_image_write's deflate: the level is how far it searches for matches
# (levels 0 to 5 search alike); the pixels are the same at every level.
"$SP" -s 1 --compression 0 c8.ppm c0.png
"$SP" -s 1 --compression 9 c8.ppm c9.png
why=''
(($(stat -c %s c9.png) <= $(stat -c %s c0.png))) ||
    why="level 9: $(stat -c %s c9.png) bytes, 0: $(stat -c %s c0.png)"
if have pngtopam; then
    cmp -s <(pngtopam c0.png) <(pngtopam c9.png) || why='pixels differ'
fi
result '--compression: 9 no larger than 0, the same pixels' "$why"

# --- stream conventions -----------------------------------------------------
"$SP" -s 2 <c8.ppm >s1.ppm
"$SP" -s 2 c8.ppm >s2.ppm
"$SP" -s 2 c8.ppm s3.ppm
why=''
same s3.ppm s1.ppm 2>e && same s3.ppm s2.ppm 2>e || why='outputs differ'
result 'no files: stdin to stdout; one file: to stdout' "$why"

noise 2000 1500 255 31 3 >big.ppm
set +o pipefail
"$SP" -s -1 big.ppm 2>e | head -c 10 >/dev/null
rc=${PIPESTATUS[0]}
set -o pipefail
why=''
((rc == 141)) || why="exit $rc, expected 141 (SIGPIPE)"
[[ ! -s e ]] || why="it said: $(head -n 1 e)"
result 'a reader that closes early: killed by SIGPIPE, no message' "$why"

rc=0
"$SP" -s 2 --filter box c8.ppm o.ppm 2>e || rc=$?
result '--filter box with an enlarge: a usage error naming --filter' \
    "$( ((rc == 2)) && grep -q -- '--filter box' e || echo "exit $rc: $(head -n 1 e)")"
rc=0
"$SP" -s 2 --timings json c8.ppm o.ppm 2>e || rc=$?
result '--timings json (space): a usage error naming --timings=json' \
    "$( ((rc == 2)) && grep -q -- '--timings=json' e || echo "exit $rc: $(head -n 1 e)")"

"$SP" -s -3 --timings=json c8.ppm 'o "q".ppm' 2>t.json
why=$(python3 - t.json <<'EOF' 2>&1
import json, sys
lines = open(sys.argv[1]).read().splitlines()
assert len(lines) == 1, lines
r = json.loads(lines[0])
want = {"input": "c8.ppm", "output": 'o "q".ppm', "factor": -3,
        "filter": "sample"}
for k, v in want.items():
    assert r.get(k) == v, (k, r.get(k))
for k in ("io", "threads", "load_ns", "scale_ns", "write_ns"):
    assert k in r, k
EOF
)
result '--timings=json: one object naming input, output, factor, filter' "$why"

"$SP" -v -t 1 -s 2 c8.ppm o.ppm 2>e
why=''
grep -q ', 1 thread$' e || why=$(head -n 1 e)
result '-v: "1 thread"' "$why"

finish
