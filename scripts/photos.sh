# shellcheck shell=bash
# photos.sh: run_experiments.sh --suite photos (sourced): issue 28's
# targets on real photographs, and the folder of photographs that the
# compressed suite (compressed.sh) takes its large photo from.
#
# The photographs: every JPEG and PNG file (not a link, not a preview
# "screenshot") that the Debian wallpaper packages below put under
# /usr/share/wallpapers and /usr/share/backgrounds, sorted by path and
# copied into one folder as j001.jpg ... and p001.png ...; photos.csv
# names each one's source, size and bytes.
#
# The targets, each command a whole process timed by sprun, its outputs
# removed before each run, the contenders' order rotated each round:
# - thumbs: every JPEG to a 320x320-bounded JPEG thumbnail, scaleppm
#   --fit 320x320 -o DIR/ against vipsthumbnail -s 320x320 (at most 0.5
#   times its time);
# - encode: the Sun study's image and a 5120x2880 photo (decoded to PPM)
#   written as PNG at the default level by scaleppm, pamtopng, ImageMagick,
#   GraphicsMagick and vips (scaleppm's file at most 1.05 times pamtopng's,
#   its time below vips's), and by scaleppm as JPEG and as PPM: the peak
#   RSS of the PNG and JPEG outputs within 2 times the PPM's.

# The packages that hold the photographs (JPEG: plasma's, MATE's, UKUI's
# and Lomiri's contest photographs; PNG: plasma's and MATE's).
PHOTOS_PACKAGES=(plasma-workspace-wallpapers mate-backgrounds ukui-wallpapers
    lomiri-wallpapers-16.04 lomiri-wallpapers-20.04)
PHOTOS_DIRS=(/usr/share/wallpapers /usr/share/backgrounds)
# The encode target's contenders: scaleppm's PNG, the PNG peers, then
# scaleppm's JPEG and PPM for the memory target.
PHOTOS_ENCODERS=(scaleppm-png pamtopng magick gm vips scaleppm-jpg
    scaleppm-ppm)
PHOTOS_THUMBS=(scaleppm vipsthumbnail)
PHOTOS_FIT=320x320
# The memory target's output size: a photo of it, where there is one.
PHOTOS_BIG=5120x2880

photos_die() {
    printf 'run_experiments.sh: photos: %s\n' "$*" >&2
    exit 1
}

# photos_install: the wallpaper packages, installed as setup.sh installs
# the build's (a non-root user is told the command).
photos_install() {
    # shellcheck disable=SC2034  # sp_install reads it
    local SP_PACKAGES=("${PHOTOS_PACKAGES[@]}")
    sp_install
}

# photos_size FILE: "W H" of an image file (vipsheader).
photos_size() {
    vipsheader -- "$1" 2>/dev/null | sed -n 's/^.*: \([0-9]*\)x\([0-9]*\) .*$/\1 \2/p'
}

# photos_collect DIR LIST: the photographs copied into DIR in sorted order
# of their paths, j001.jpg ... then p001.png ...; LIST the CSV of them
# (name, source, format, width, height, bytes).  Fewer than 50 JPEGs is
# an error: the target wants at least 50.
photos_collect() {
    local dir=$1 list=$2 fmt f k name w h
    local -a found
    printf 'name,source,format,width,height,bytes\n' >"$list"
    for fmt in jpeg png; do
        if [[ $fmt == jpeg ]]; then
            mapfile -d '' -t found < <(find "${PHOTOS_DIRS[@]}" -type f \
                \( -iname '*.jpg' -o -iname '*.jpeg' \) \
                ! -name 'screenshot.*' -print0 2>/dev/null | LC_ALL=C sort -z)
            ((${#found[@]} >= 50)) || photos_die "${#found[@]} JPEG" \
                "photographs under ${PHOTOS_DIRS[*]}, 50 wanted"
        else
            mapfile -d '' -t found < <(find "${PHOTOS_DIRS[@]}" -type f \
                -iname '*.png' ! -name 'screenshot.*' -print0 2>/dev/null |
                LC_ALL=C sort -z)
        fi
        k=0
        for f in "${found[@]}"; do
            k=$((k + 1))
            name=$(printf '%s%03d.%s' "${fmt:0:1}" "$k" \
                "${fmt/jpeg/jpg}")
            read -r w h < <(photos_size "$f") ||
                photos_die "$f: not an image vips reads"
            cp -- "$f" "$dir/$name"
            printf '%s,%s,%s,%s,%s,%s\n' "$name" "$f" "$fmt" "$w" "$h" \
                "$(stat -c %s -- "$f")" >>"$list"
        done
    done
}

# photos_generated DIR LIST BIN: for --quick, six generated JPEGs and two
# PNGs in DIR (j001.jpg ..., p001.png ...), listed as photos_collect does.
photos_generated() {
    local dir=$1 list=$2 bin=$3 k name w h
    printf 'name,source,format,width,height,bytes\n' >"$list"
    for k in 1 2 3 4 5 6 7 8; do
        w=$((200 + 40 * k)) h=$((150 + 20 * k))
        "$bin/images/genimage" -o "$dir/gen.ppm" "$w" "$h" >/dev/null
        if ((k <= 6)); then
            name=$(printf 'j%03d.jpg' "$k")
            cjpeg -quality 90 "$dir/gen.ppm" >"$dir/$name"
        else
            name=$(printf 'p%03d.png' $((k - 6)))
            pnmtopng "$dir/gen.ppm" >"$dir/$name" 2>/dev/null
        fi
        printf '%s,genimage %sx%s,%s,%s,%s,%s\n' "$name" "$w" "$h" \
            "$([[ $name == *.jpg ]] && echo jpeg || echo png)" "$w" "$h" \
            "$(stat -c %s -- "$dir/$name")" >>"$list"
    done
    rm -f -- "$dir/gen.ppm"
}

# photos_largest LIST FORMAT [WxH]: the name of the first photo of FORMAT
# (jpeg or png) in LIST that is WxH, or else of the largest (in pixels,
# then the first in the list).
photos_largest() {
    awk -F, -v f="$2" -v size="${3:-}" 'NR > 1 && $3 == f {
        if ($4 "x" $5 == size && !exact) { exact = $1 }
        if ($4 * $5 > best) { best = $4 * $5; name = $1 } }
        END { print exact ? exact : name }' "$1"
}

# photos_can SP OPTION: whether scaleppm SP has OPTION (its --help).
# grep reads the help to its end: with -q it would leave at the first
# match, and the help's second write would die of SIGPIPE, which
# pipefail makes a "no".
photos_can() {
    "$1" --help 2>&1 | grep -- "$2" >/dev/null
}

# photos_run OUTFILE CMD...: one timed run of CMD (stdout to OUTFILE when
# it is not empty); prints sprun's "wall_ns rss_kb"; CMD's stderr in
# $meta/err.
photos_run() {
    local o=$1
    shift
    [[ -z $o ]] || set -- -o "$o" -- "$@"
    [[ -n $o ]] || set -- -- "$@"
    "$sprun" -t 600 "$@" 2>"$meta/err" ||
        photos_die "${*:1:5} ... failed: $(tail -n 2 "$meta/err")"
}

# photos_fits IN THUMB: whether THUMB is IN fitted to PHOTOS_FIT: within
# the box, and touching it on one side, or (an input within the box, left
# as it is) IN's size.
photos_fits() {
    local bw=${PHOTOS_FIT%x*} bh=${PHOTOS_FIT#*x} iw ih w h
    read -r iw ih < <(photos_size "$1") || return 1
    read -r w h < <(photos_size "$2") || return 1
    ((w <= bw && h <= bh)) || return 1
    ((w == bw || h == bh || (w == iw && h == ih)))
}

# photos_thumbs INDIR OUTDIR: RUNS rounds of scaleppm --fit and
# vipsthumbnail on INDIR's JPEGs, rows into photos-thumbs.csv.  Round 1
# checks each wrote a thumbnail a file, the first one fitted to the box.
photos_thumbs() {
    local indir=$1 o=$2 r k who res wall rss n bytes
    local -a files whos cmd
    mapfile -t files < <(cd -- "$indir" && ls -- *.jpg)
    n=${#files[@]}
    for ((r = 1; r <= runs; r++)); do
        printf 'photos: %d thumbnails, round %d of %d\n' "$n" "$r" \
            "$runs" >&2
        k=$(((r - 1 + ${sp_offset:-0}) % 2))
        whos=("${PHOTOS_THUMBS[@]:k}" "${PHOTOS_THUMBS[@]:0:k}")
        for who in "${whos[@]}"; do
            case $who in
            scaleppm) cmd=("$sp" --fit "$PHOTOS_FIT" -o "$o/" "${files[@]}") ;;
            vipsthumbnail) cmd=(vipsthumbnail -s "$PHOTOS_FIT" \
                -o "$o/%s.jpg" "${files[@]}") ;;
            esac
            rm -rf -- "$o"
            mkdir -- "$o"
            res=$(cd -- "$indir" && photos_run "" "${cmd[@]}") || exit 1
            read -r wall rss _ <<<"$res"
            bytes=$(du -sb -- "$o" | awk '{ print $1 }')
            printf '%d,%s,%d,%s,%s,%s\n' "$n" "$who" "$r" "$wall" "$rss" \
                "$bytes" >>"$out/photos-thumbs.csv"
            ((r == 1)) || continue
            k=$(find "$o" -name '*.jpg' -type f | wc -l)
            ((k == n)) || photos_die "$who wrote $k thumbnails of $n"
            photos_fits "$indir/${files[0]}" "$o/${files[0]}" ||
                photos_die "$who: ${files[0]}: a thumbnail not of the box"
        done
    done
    rm -rf -- "$o"
}

# photos_encode_cmd WHO IN OUTBASE: into cmd and stdout_to, how WHO writes
# the PPM IN as OUTBASE.png (.jpg, .ppm for scaleppm's others).
photos_encode_cmd() {
    local who=$1 in=$2 o=$3
    stdout_to=
    case $who in
    scaleppm-png) cmd=("$sp" -s 1 "$in" "$o.png") ;;
    scaleppm-jpg) cmd=("$sp" -s 1 "$in" "$o.jpg") ;;
    scaleppm-ppm) cmd=("$sp" -s 1 "$in" "$o.ppm") ;;
    pamtopng) cmd=(pamtopng "$in") stdout_to=$o.png ;;
    magick) cmd=(convert "$in" "$o.png") ;;
    gm) cmd=(gm convert "$in" "$o.png") ;;
    vips) cmd=(vips copy "$in" "$o.png") ;;
    *) photos_die "no encoder $who" ;;
    esac
}

# photos_encode LABEL IN OUTDIR: RUNS rounds of every encoder on the PPM
# IN (warm), rows into photos-encode.csv.
photos_encode() {
    local label=$1 in=$2 o=$3 r k who res wall rss bytes f
    local -a whos cmd
    for ((r = 1; r <= runs; r++)); do
        printf 'photos: %s as PNG, JPEG, PPM, round %d of %d\n' "$label" \
            "$r" "$runs" >&2
        k=$(((r - 1 + ${sp_offset:-0}) % ${#PHOTOS_ENCODERS[@]}))
        whos=("${PHOTOS_ENCODERS[@]:k}" "${PHOTOS_ENCODERS[@]:0:k}")
        for who in "${whos[@]}"; do
            photos_encode_cmd "$who" "$in" "$o/out"
            rm -rf -- "$o"
            mkdir -- "$o"
            cat -- "$in" >/dev/null
            res=$(photos_run "$stdout_to" "${cmd[@]}") || exit 1
            read -r wall rss _ <<<"$res"
            f=$(find "$o" -type f | head -n 1)
            [[ -s $f ]] || photos_die "$who wrote nothing"
            bytes=$(stat -c %s -- "$f")
            printf '%s,%s,%d,%s,%s,%s\n' "$label" "$who" "$r" "$wall" \
                "$rss" "$bytes" >>"$out/photos-encode.csv"
        done
    done
    rm -rf -- "$o"
}

# photos_suite ROOT BIN OUT RUNS QUICK: the suite, into OUT: photos.csv,
# photos-thumbs.csv, photos-encode.csv, photos.md and env.txt.  Runs in a
# subshell: its folders go with it, however it ends.
photos_suite() (
    local root=$1 bin out runs=$4 quick=$5
    bin=$(cd -- "$2" && pwd) out=$(cd -- "$3" && pwd)
    local sp=$bin/src/scaleppm sprun=$bin/src/sprun
    local tmp shm meta t big sun thumbs=run stdout_to
    for t in "$sp" "$sprun"; do
        [[ -x $t ]] || photos_die "$t: not built"
    done
    for t in vipsthumbnail vips vipsheader pamtopng convert gm djpeg cjpeg \
        pnmtopng; do
        command -v "$t" >/dev/null || photos_die "$t: not installed"
    done
    tmp=$(mktemp -d "${TMPDIR:-/tmp}/scaleppm-photos.XXXXXX")
    shm=$(mktemp -d /dev/shm/scaleppm-photos.XXXXXX)
    # shellcheck disable=SC2064  # expand the folders now
    trap "rm -rf -- '$tmp' '$shm'" EXIT
    trap 'exit 130' INT TERM
    meta=$tmp/meta
    mkdir -- "$meta" "$tmp/photos"
    if ((quick)); then
        photos_generated "$tmp/photos" "$out/photos.csv" "$bin"
    else
        photos_collect "$tmp/photos" "$out/photos.csv"
    fi
    printf 'files,contender,round,wall_ns,rss_kb,bytes\n' \
        >"$out/photos-thumbs.csv"
    printf 'image,contender,round,wall_ns,rss_kb,bytes\n' \
        >"$out/photos-encode.csv"
    if photos_can "$sp" --fit; then
        photos_thumbs "$tmp/photos" "$shm/thumbs"
    else
        thumbs=skipped-no-fit
        printf 'photos: scaleppm has no --fit: the thumbnails are not run\n' >&2
    fi
    sun=$(sp_image_of "$root" "$bin" 1280x1024) || photos_die "no 1280x1024"
    big=$(photos_largest "$out/photos.csv" jpeg "$PHOTOS_BIG")
    djpeg -ppm "$tmp/photos/$big" >"$tmp/big.ppm" ||
        photos_die "$big: djpeg failed"
    photos_encode 1280x1024 "$sun" "$shm/enc"
    photos_encode "$(photos_size "$tmp/big.ppm" | tr ' ' x)" \
        "$tmp/big.ppm" "$shm/enc"
    spreport photos "$out" ||
        photos_die "the report failed; the rows are in $out"
    sp_write_env "$out/env.txt" "$sun" "$bin" "suite=photos runs=$runs \
quick=$quick fit=$PHOTOS_FIT thumbs=$thumbs large=$big \
packages=$(IFS=,; echo "${PHOTOS_PACKAGES[*]}") \
vips=$(vips --version | awk '{ print $1 }' | sed 's/^vips-//') \
gm=$(gm version | awk 'NR == 1 { print $2 }') \
magick=$(convert -version | awk 'NR == 1 { print $3 }') \
netpbm=$(pamtopng --version 2>&1 | awk '/Netpbm/ { print $NF; exit }')" \
        "$tmp/big.ppm" "$tmp/photos/$big"
    cat "$out/photos.md"
)
