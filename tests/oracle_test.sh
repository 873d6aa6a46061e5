#!/usr/bin/env bash
# oracle_test.sh: scaleppm against tools that owe it nothing, and against
# itself: every --io path (IO_PATHS, lib.sh), 1 to 64 threads, give the
# same bytes.
#
# Oracles, and which pixel each one samples on a reduce by N (measured on
# images whose sample values encode their position, netpbm 11.1, vips
# 8.14, GraphicsMagick 1.3.40, ImageMagick 6.9):
#   pamenlarge N               enlarge: byte-exact.
#   vips subsample IN OUT N N  keeps (x*N, y*N): used for every N that
#                              divides the size.  Its PNM carries a dated
#                              comment, so it goes through pamtopnm first;
#                              it writes maxval 1000 as 65535: 8/16-bit only.
#   gm convert -sample WxH!    keeps (x*N, y*N): used likewise, and also only
#                              for maxval 255 and 65535 (a maxval 1000 input
#                              comes out as maxval 65535, all white).
#   pamscale -reduce N -nomix  keeps (x*N, y*N) only where 1/N is exact in
#                              binary: for N = 7, 13, 14 it takes x*N-1 for
#                              some x (on 42x14, N=7: columns 0 6 13 21 27
#                              35, rows 0 6), a floating-point slip.  Used
#                              for N = 2, 4, 8 only.
#   convert -sample (IM6)      keeps the block's centre, (x*N + (N-1)/2,
#                              ...): N=3 gives columns 1 4 7.  Not used.
#   pamscale -reduce N -linear the box filter, within 1.
#   ref.py (below)             dst(x,y) = src(x*N, y*N) on ceil(w/N) x
#                              ceil(h/N), and the box mean rounded half up,
#                              over pnmnoraw's text: every size, every N.
#
# usage: bash tests/oracle_test.sh PATH/TO/scaleppm [PATH/TO/genimage]
# SCALEPPM_PHOTOS: colon-separated extra photographs (JPEG/PNG/PNM) to test.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$here/lib.sh"
setup "usage: oracle_test.sh PATH/TO/scaleppm [PATH/TO/genimage]" "$@"
cd "$WORK"

have_py=0
if have python3; then
    have_py=1
fi
have_vips=0
if have vips; then
    have_vips=1
fi
have_gm=0
if have gm; then
    have_gm=1
fi
((have_py)) || skip 'the ref.py reference' 'python3 not installed'
((have_vips)) || skip 'vips subsample oracle' 'vips (libvips-tools) not installed'
((have_gm)) || skip 'gm convert -sample oracle' 'gm (graphicsmagick) not installed'

cat >ref.py <<'EOF'
# ref.py SRC.plain [OUT.plain FACTOR FILTER LABEL]...: for each job, is OUT
# (pnmnoraw of scaleppm's output) SRC scaled by FACTOR with FILTER?  Prints
# "LABEL<TAB>" and, when not, why.
import sys


def load(path):
    with open(path) as f:
        t = f.read().split()
    if t[0] not in ("P2", "P3"):
        raise SystemExit(path + ": not plain PGM/PPM")
    w, h, m = int(t[1]), int(t[2]), int(t[3])
    c = 3 if t[0] == "P3" else 1
    v = [int(s) for s in t[4:]]
    if len(v) != w * h * c:
        raise SystemExit(path + ": wrong number of samples")
    return w, h, c, m, v


def scale(img, factor, filt):
    w, h, c, m, v = img
    n = abs(factor)
    if n == 1:
        return img
    if factor > 0:
        out = []
        for y in range(h * n):
            row = v[(y // n) * w * c:(y // n + 1) * w * c]
            for x in range(w):
                out += row[x * c:(x + 1) * c] * n
        return w * n, h * n, c, m, out
    ow, oh = -(-w // n), -(-h // n)
    out = []
    for y in range(oh):
        for x in range(ow):
            if filt == "sample":
                i = (y * n * w + x * n) * c
                out += v[i:i + c]
                continue
            ys = range(y * n, min(y * n + n, h))
            xs = range(x * n, min(x * n + n, w))
            cnt = len(ys) * len(xs)
            for ch in range(c):
                s = sum(v[(yy * w + xx) * c + ch] for yy in ys for xx in xs)
                out.append((s + cnt // 2) // cnt)
    return ow, oh, c, m, out


src = load(sys.argv[1])
jobs = sys.argv[2:]
for i in range(0, len(jobs), 4):
    out, factor, filt, label = jobs[i:i + 4]
    want = scale(src, int(factor), filt)
    got = load(out)
    why = ""
    if got[:4] != want[:4]:
        why = "got %dx%d c%d maxval %d, want %dx%d c%d maxval %d" % (
            got[:4] + want[:4])
    elif got[4] != want[4]:
        k = next(j for j, (a, b) in enumerate(zip(got[4], want[4])) if a != b)
        w, c = want[0], want[2]
        why = "sample (%d,%d) ch %d is %d, want %d" % (
            k // c % w, k // c // w, k % c, got[4][k], want[4][k])
    print(label + "\t" + why)
EOF

# Jobs for ref.py, per source image: "OUT FACTOR FILTER LABEL" quadruples.
ref_jobs=()

# run_ref SRC: check the queued jobs against SRC with ref.py.
run_ref() {
    local label why
    if ((!have_py)) || ((${#ref_jobs[@]} == 0)); then
        ref_jobs=()
        return
    fi
    pnmnoraw "$1" >src.plain
    while IFS=$'\t' read -r label why; do
        result "$label" "$why"
    done < <(python3 ref.py src.plain "${ref_jobs[@]}" 2>&1 ||
        printf 'ref.py on %s\tref.py failed\n' "$1")
    ref_jobs=()
}

# queue_ref OUT FACTOR FILTER LABEL: OUT (PNM) to be checked by ref.py.
queue_ref() {
    ((have_py)) || return 0
    pnmnoraw "$1" >"$1.plain"
    ref_jobs+=("$1.plain" "$2" "$3" "$4")
}

# --- inputs --------------------------------------------------------------
noise 451 300 255 1 3 >c451x300.ppm
noise 37 23 65535 4 1 >g37x23_16.pgm
noise 37 23 1000 5 1 >g37x23_1000.pgm
noise 37 23 65535 6 3 >c37x23_16.ppm
noise 37 23 255 9 1 >g37x23.pgm
pnmnoraw <(noise 29 11 255 12 3) >p29x11.ppm        # plain P3
pnmnoraw <(noise 13 5 65535 15 1) >p13x5_16.pgm     # plain P2, 16-bit
noise 1 1 255 18 3 >c1x1.ppm
noise 1 9 255 19 1 >g1x9.pgm
noise 9 1 65535 20 3 >c9x1_16.ppm
{
    printf 'P6\n# a comment\n7 # another\n5\n255\n'
    tail -c 105 <(noise 7 5 255 21 3)
} >comment7x5.ppm

# Largest enlarge factor per image: keeps every output under ~4 MB.
declare -A maxup=([c451x300.ppm]=3)
images=(c451x300.ppm g37x23_16.pgm g37x23_1000.pgm c37x23_16.ppm g37x23.pgm
    p29x11.ppm p13x5_16.pgm c1x1.ppm g1x9.pgm c9x1_16.ppm comment7x5.ppm)
if [[ -n $GEN ]]; then
    "$GEN" -o gen451x300.ppm 451 300
    "$GEN" -g -m 65535 -o gen37x23_16.pgm 37 23
    maxup[gen451x300.ppm]=3
    images+=(gen451x300.ppm gen37x23_16.pgm)
else
    skip 'genimage inputs' 'genimage not given or not working'
fi

# --- equivalence: each --io path x 1/2/10/64 threads, byte-identical ---
# variants IMG FACTOR FILTER: every variant equals the output of the
# default path (IO_PATHS[0]) at -t 1 (left in ref.pnm); one check line.
variants() {
    local img=$1 f=$2 filt=$3 io t why='' rc=0 first=${IO_PATHS[0]}
    "$SP" --io "$first" -t 1 -s "$f" --filter "$filt" "$img" ref.pnm \
        2>err || rc=$?
    if ((rc != 0)); then
        why="--io $first -t 1 failed: exit $rc: $(head -n 1 err)"
    fi
    for io in "${IO_PATHS[@]}"; do
        for t in 1 2 10 64; do
            [[ -z $why ]] || break 2
            [[ $io/$t != "$first/1" ]] || continue
            rc=0
            "$SP" --io "$io" -t "$t" -s "$f" --filter "$filt" "$img" v.pnm \
                2>err || rc=$?
            if ((rc != 0)); then
                why="--io $io -t $t: exit $rc: $(head -n 1 err)"
            elif ! cmp -s v.pnm ref.pnm; then
                why="--io $io -t $t differs from --io $first -t 1"
            fi
        done
    done
    result "equivalence $img -s $f --filter $filt: ${IO_PATHS[*]}, 1/2/10/64 threads" "$why"
    [[ -z $why ]]
}

for img in "${images[@]}"; do
    up=${maxup[$img]:-8}
    for f in -8 -7 -6 -5 -4 -3 -2 -1 $(seq 1 "$up"); do
        for filt in sample box; do
            ((f < 0)) || [[ $filt == sample ]] || continue
            variants "$img" "$f" "$filt" || continue
            if ((f >= 1)); then
                # Enlarge: pamenlarge is the oracle (1 copies: pamtopnm).
                if ((f == 1)); then
                    pamtopnm "$img" >want.pnm
                else
                    pamenlarge "$f" "$img" >want.pnm
                fi
                why=''
                cmp -s ref.pnm want.pnm || why='differs'
                result "enlarge $img -s $f = pamenlarge $f" "$why"
            else
                mv ref.pnm "ref_${f}_$filt.pnm"
                queue_ref "ref_${f}_$filt.pnm" "$f" "$filt" \
                    "reduce $img -s $f --filter $filt = ref.py"
            fi
        done
    done
    run_ref "$img"
    rm -f ref_*.pnm ref_*.plain
done

# --- which pixel each tool keeps: evidence for the notes at the top -----
# A 42-column plain PGM whose samples are their column numbers, reduced by
# N = 3 and 7 (both divide 42): print the columns each tool keeps.
im=''
for c in convert-im6.q16 convert; do
    if have "$c"; then
        im=$c
        break
    fi
done
# kept TOOL ARGS...: the first output row of a tool writing PNM on stdout.
kept() {
    "$@" 2>/dev/null | pnmnoraw 2>/dev/null | sed -n 4p | tr -s ' ' ' ' |
        sed 's/ $//'
}
for n in 3 7; do
    { printf 'P2\n42 %d\n255\n' "$n"; for _ in $(seq "$n"); do seq 0 41; done; } >pos.pgm
    line="# columns kept, 42 by $n: scaleppm [$(kept "$SP" -s "-$n" pos.pgm -)]"
    line+=" pamscale-nomix [$(kept pamscale -reduce "$n" -nomix pos.pgm)]"
    if ((have_vips)) && vips subsample pos.pgm vpos.pgm "$n" "$n" 2>/dev/null; then
        line+=" vips [$(kept cat vpos.pgm)]"
    fi
    if ((have_gm)); then
        line+=" gm [$(kept gm convert pos.pgm -sample "$((42 / n))x1!" pgm:-)]"
    fi
    if [[ -n $im ]]; then
        line+=" $im [$(kept "$im" pos.pgm -sample "$((42 / n))x1!" pgm:-)]"
    fi
    printf '%s\n' "$line"
done

# --- reduce, sample, N dividing the size: vips, gm, pamscale -nomix -----
noise 123 77 255 30 3 >d8.ppm
noise 123 77 65535 33 1 >d16.pgm
noise 123 77 65535 34 3 >d16.ppm
noise 123 77 255 37 1 >d8.pgm
for src in d8.ppm d16.pgm d16.ppm d8.pgm; do
    ext=${src##*.}
    for n in 2 3 4 5 6 7 8; do
        w=$((123 / n * n))
        h=$((77 / n * n))
        cut=cut.$ext
        pamcut -width="$w" -height="$h" "$src" >"$cut"
        "$SP" -s "-$n" "$cut" "got.$ext"
        tag="reduce ${src%.*}(${w}x$h, $ext) -s -$n"
        if ((have_vips)); then
            why=''
            vips subsample "$cut" "v.$ext" "$n" "$n" 2>/dev/null || why='vips failed'
            [[ -n $why ]] || pamtopnm "v.$ext" | cmp -s - "got.$ext" || why='differs'
            result "$tag = vips subsample $n $n" "$why"
        fi
        if ((have_gm)); then
            why=''
            gm convert "$cut" -sample "$((w / n))x$((h / n))!" "gm.$ext" 2>/dev/null ||
                why='gm failed'
            [[ -n $why ]] || pamtopnm "gm.$ext" | cmp -s - "got.$ext" || why='differs'
            result "$tag = gm convert -sample $((w / n))x$((h / n))!" "$why"
        fi
        if ((n == 2 || n == 4 || n == 8)); then
            why=''
            pamscale -reduce "$n" -nomix "$cut" 2>/dev/null | cmp -s - "got.$ext" ||
                why='differs'
            result "$tag = pamscale -reduce $n -nomix" "$why"
        fi
    done
done

# --- reduce, sample, N not dividing: pad with pamcut, then an oracle -----
# Padding to a multiple of N adds only pixels that (x*N, y*N) never picks.
for src in d8.ppm d16.pgm; do
    ext=${src##*.}
    for n in 2 3 4 5 7 8; do
        w=$(((123 + n - 1) / n * n))
        h=$(((77 + n - 1) / n * n))
        pamcut -pad -left=0 -top=0 -width="$w" -height="$h" "$src" >"pad.$ext"
        "$SP" -s "-$n" "$src" "got.$ext"
        tag="reduce ${src%.*}(123x77, $ext) -s -$n"
        if ((n == 2 || n == 4 || n == 8)); then
            why=''
            pamscale -reduce "$n" -nomix "pad.$ext" 2>/dev/null | cmp -s - "got.$ext" ||
                why='differs'
            result "$tag = pamscale -reduce $n -nomix of the input padded to ${w}x$h" "$why"
        fi
        if ((have_vips)); then
            why=''
            vips subsample "pad.$ext" "v.$ext" "$n" "$n" 2>/dev/null || why='vips failed'
            [[ -n $why ]] || pamtopnm "v.$ext" | cmp -s - "got.$ext" || why='differs'
            result "$tag = vips subsample of the input padded to ${w}x$h" "$why"
        fi
    done
done

# --- box: by hand, and against pamscale -linear --------------------------
# box_case WHAT INPUT FACTOR WANT: the box reduce of the plain INPUT text is
# the plain WANT text (samples compared as numbers).
box_case() {
    local what=$1 in=$2 f=$3 want=$4 got why=''
    printf '%s' "$in" >box_in.pnm
    "$SP" --filter box -s "$f" box_in.pnm box_out.pnm 2>err || why="exit $?: $(head -n 1 err)"
    if [[ -z $why ]]; then
        got=$(pnmnoraw box_out.pnm | tr -s ' \n' ' ' | sed 's/ $//')
        [[ $got == "$want" ]] || why="got '$got', want '$want'"
    fi
    result "box by hand: $what" "$why"
}
# 1 2 3 / 4 7 6 / 8 9 10 reduced by 2: (1+2+4+7)/4 = 3.5 -> 4, (3+6)/2 = 4.5
# -> 5, (8+9)/2 = 8.5 -> 9, and 10 alone.
box_case '3x3 by 2: means of 4, 2, 2, 1, halves up' \
    $'P2\n3 3\n255\n1 2 3\n4 7 6\n8 9 10\n' -2 'P2 2 2 255 4 5 9 10'
box_case '3x3 by 3: mean of 9, 49/9 -> 5' \
    $'P2\n3 3\n255\n1 2 3\n4 7 6\n8 9 9\n' -3 'P2 1 1 255 5'
box_case '3x3 by 8: one block, the whole image' \
    $'P2\n3 3\n255\n1 2 3\n4 7 6\n8 9 10\n' -8 'P2 1 1 255 6'
box_case 'color 2x1 by 2: each channel apart' \
    $'P3\n2 1\n255\n0 10 255 1 11 254\n' -2 'P3 1 1 255 1 11 255'
box_case '16-bit 2x1 by 2: 65534.5 -> 65535, no overflow' \
    $'P2\n2 1\n65535\n65535 65534\n' -2 'P2 1 1 65535 65535'
box_case '16-bit 4x4 all 65535 by 4: stays 65535' \
    $'P2\n4 4\n65535\n65535 65535 65535 65535 65535 65535 65535 65535\n65535 65535 65535 65535 65535 65535 65535 65535\n' \
    -4 'P2 1 1 65535 65535'
box_case 'maxval 1000 3x1 by 2: 999.5 -> 1000, then 7' \
    $'P2\n3 1\n1000\n1000 999 7\n' -2 'P2 2 1 1000 1000 7'

# Within 1 of pamscale -reduce N -linear where N divides the size.
maxdiff() {
    paste <(pnmnoraw "$1" | tail -n +4 | tr -s ' \n' '\n' | sed '/^$/d') \
        <(pnmnoraw "$2" | tail -n +4 | tr -s ' \n' '\n' | sed '/^$/d') |
        awk 'NF != 2 {bad = 1} {d = $1 - $2; if (d < 0) d = -d; if (d > m) m = d}
             END {print (bad ? "size" : m + 0)}'
}
worst=0
for src in d8.ppm d16.pgm d16.ppm; do
    ext=${src##*.}
    for n in 2 3 4 5 7 8; do
        w=$((123 / n * n))
        h=$((77 / n * n))
        pamcut -width="$w" -height="$h" "$src" >"cut.$ext"
        "$SP" --filter box -s "-$n" "cut.$ext" "got.$ext"
        pamscale -reduce "$n" -linear "cut.$ext" >"want.$ext" 2>/dev/null
        d=$(maxdiff "got.$ext" "want.$ext")
        why=''
        if [[ $d == size ]] || [[ $(pamfile -size "got.$ext") != $(pamfile -size "want.$ext") ]]; then
            why='sizes differ'
        elif ((d > 1)); then
            why="differs by up to $d"
        elif ((d > worst)); then
            worst=$d
        fi
        result "box ${src%.*}(${w}x$h, $ext) -s -$n within 1 of pamscale -linear (max $d)" "$why"
    done
done
printf '# box vs pamscale -linear: largest difference %d\n' "$worst"

# --- real photographs ----------------------------------------------------
# photo NAME FILE: cut to an odd size (at most 451x301) and check it.
photo() {
    local name=$1 file=$2 w h why f
    case ${file,,} in
    *.jpg | *.jpeg) jpegtopnm "$file" >"$name.full" 2>/dev/null || true ;;
    *.png) pngtopam "$file" 2>/dev/null | pamtopnm >"$name.full" 2>/dev/null || true ;;
    *) pamtopnm "$file" >"$name.full" 2>/dev/null || true ;;
    esac
    if ! pamfile "$name.full" >/dev/null 2>&1; then
        skip "photograph $file" 'cannot convert it to PNM'
        return
    fi
    read -r w h < <(pamfile -size "$name.full")
    w=$((w > 451 ? 451 : w - (1 - w % 2)))
    h=$((h > 301 ? 301 : h - (1 - h % 2)))
    pamcut -width="$w" -height="$h" "$name.full" >"$name.pnm"
    for f in -4 -3; do
        variants "$name.pnm" "$f" sample || continue
        mv ref.pnm "ref_$f.pnm"
        queue_ref "ref_$f.pnm" "$f" sample "photograph $name (${w}x$h) -s $f = ref.py"
    done
    variants "$name.pnm" -3 box || true
    for f in 2 3; do
        why=''
        "$SP" -s "$f" "$name.pnm" got.pnm 2>err || why="exit $?: $(head -n 1 err)"
        [[ -n $why ]] || pamenlarge "$f" "$name.pnm" | cmp -s - got.pnm || why='differs'
        result "photograph $name (${w}x$h) -s $f = pamenlarge $f" "$why"
    done
    run_ref "$name.pnm"
    rm -f ref_*.pnm ref_*.plain
}

if [[ -n $im ]] && "$im" rose: rose.ppm 2>/dev/null; then
    photo rose rose.ppm
else
    skip 'photograph rose: (70x46)' 'ImageMagick convert not installed'
fi

photos=()
while IFS= read -r p; do
    photos+=("$p")
done < <(find /usr/share -xdev \( -iname '*.jpg' -o -iname '*.jpeg' \) \
    -size +50k 2>/dev/null | LC_ALL=C sort | head -n 2)
if [[ -n ${SCALEPPM_PHOTOS:-} ]]; then
    IFS=: read -r -a extra <<<"$SCALEPPM_PHOTOS"
    photos+=("${extra[@]}")
fi
if ((${#photos[@]} == 0)); then
    skip 'photographs from /usr/share' 'no JPEG over 50 KiB installed (set SCALEPPM_PHOTOS to add some)'
fi
i=0
for p in "${photos[@]}"; do
    i=$((i + 1))
    printf '# photo%d is %s\n' "$i" "$p"
    photo "photo$i" "$p"
done

finish
