# shellcheck shell=bash
# peers.sh: run_experiments.sh --suite peers (sourced): scaleppm against the
# tools a user would otherwise reach for (netpbm, libvips, GraphicsMagick,
# ImageMagick) on the same jobs, each a fresh process timed by sprun:
# verification first, then R rounds of every (job, tool) pair, then the
# scale phase alone against the memory floor and its thread scaling, then
# the report (peers.md, peers.png).  See peers_suite.
#
# Which pixel each tool keeps on a sampled reduce by N, measured on images
# whose samples encode their position (netpbm 11.1, vips 8.14, gm 1.3.40,
# ImageMagick 6.9.11):
#   vips subsample      (x*N, y*N) on floor(W/N) x floor(H/N)
#   vips affine nearest (x*N, y*N) on round(W/N) x round(H/N)
#   gm -sample W'xH'!   (x*W/W', y*H/H') truncated: x*N only where N
#                       divides the size, else a slightly smaller step
#   IM -sample W'xH'!   ((x+o)*W/W' - eps): the default offset o = 50% is
#                       the block's centre, and o = 0 gives x*N-1 (the
#                       epsilon), so sample:offset=1 (1%) keeps the
#                       top-left pixel of each block for N <= 100
#   pamscale -reduce N -nomix
#                       round(W/N) x round(H/N), and for N not a power of
#                       two a float slip picks x*N-1 for some x
# scaleppm keeps (x*N, y*N) on ceil(W/N) x ceil(H/N).

# The jobs: reduce (sample) by N, enlarge by N, box reduce by N.
PEERS_JOBS=(reduce2 reduce3 reduce4 reduce8 enlarge2 enlarge4 box2 box4)

# Targets (issue 6): scaleppm's median against the fastest peer's.
PEERS_TARGET_REDUCE=0.33 PEERS_TARGET_ENLARGE=0.8 PEERS_TARGET_RSS=2
PEERS_TARGET_BOX=0.5 PEERS_TARGET_FLOOR=2 PEERS_TARGET_THREADS=1.7

# A peer slower than this many times the fastest peer on a job, and over
# PEERS_SLOW_MIN_NS a run, is verified but not timed.
PEERS_SLOW_RATIO=20 PEERS_SLOW_MIN_NS=1000000000
# A run still going after this long is killed and counted as failed (the
# slowest timed here, pamscale enlarging the large image by 4, takes ~20 s).
PEERS_TIMEOUT_S=600

peers_die() {
    printf 'run_experiments.sh: peers: %s\n' "$*" >&2
    exit 1
}

# peers_tools JOB: the tools of a job, scaleppm first.
peers_tools() {
    case $1 in
    reduce*) echo scaleppm pamscale vips-subsample vips-affine gm im ;;
    enlarge*) echo scaleppm pamenlarge vips-zoom pamscale gm im ;;
    box*) echo scaleppm vips-shrink pamscale gm im ;;
    esac
}

# peers_out_size JOB W H: the output's "W H" (scaleppm's: ceil on reduce).
peers_out_size() {
    local job=$1 w=$2 h=$3 n=${1//[a-z]/}
    case $job in
    enlarge*) echo $((w * n)) $((h * n)) ;;
    *) echo $(((w + n - 1) / n)) $(((h + n - 1) / n)) ;;
    esac
}

# peers_command SCALEPPM IMCFG JOB TOOL IN OUT W H: sets the global array
# cmd to sprun's arguments for TOOL doing JOB on the W x H image IN.
peers_command() {
    local sp=$1 imcfg=$2 job=$3 tool=$4 in=$5 out=$6 n=${3//[a-z]/} ow oh r
    read -r ow oh < <(peers_out_size "$job" "$7" "$8")
    local geom="${ow}x${oh}!"
    local im=(env MAGICK_CONFIGURE_PATH="$imcfg" convert-im6.q16)
    case $job:$tool in
    reduce*:scaleppm) cmd=(-- "$sp" -s "-$n" "$in" "$out") ;;
    enlarge*:scaleppm) cmd=(-- "$sp" -s "$n" "$in" "$out") ;;
    box*:scaleppm) cmd=(-- "$sp" --filter box -s "-$n" "$in" "$out") ;;
    reduce*:pamscale) cmd=(-o "$out" -- pamscale -reduce "$n" -nomix "$in") ;;
    enlarge*:pamscale) cmd=(-o "$out" -- pamscale "$n" -nomix "$in") ;;
    box*:pamscale) cmd=(-o "$out" -- pamscale -reduce "$n" -linear "$in") ;;
    reduce*:vips-subsample) cmd=(-- vips subsample "$in" "$out" "$n" "$n") ;;
    reduce*:vips-affine)
        r=$(awk -v n="$n" 'BEGIN { printf "%.17g", 1 / n }')
        cmd=(-- vips affine "$in" "$out" "$r 0 0 $r" --interpolate nearest)
        ;;
    enlarge*:pamenlarge) cmd=(-o "$out" -- pamenlarge "$n" "$in") ;;
    enlarge*:vips-zoom) cmd=(-- vips zoom "$in" "$out" "$n" "$n") ;;
    box*:vips-shrink) cmd=(-- vips shrink "$in" "$out" "$n" "$n") ;;
    reduce*:gm | enlarge*:gm) cmd=(-- gm convert "$in" -sample "$geom" "$out") ;;
    box*:gm) cmd=(-- gm convert "$in" -scale "$geom" "$out") ;;
    reduce*:im)
        cmd=(-- "${im[@]}" "$in" -define sample:offset=1 -sample "$geom" "$out")
        ;;
    enlarge*:im) cmd=(-- "${im[@]}" "$in" -sample "$geom" "$out") ;;
    box*:im) cmd=(-- "${im[@]}" "$in" -scale "$geom" "$out") ;;
    *) peers_die "no command for $tool on $job" ;;
    esac
}

# peers_command_text JOB TOOL W H: TOOL's command line for JOB on a W x H
# input, as the report shows it (IN, OUT; MAGICK_CONFIGURE_PATH aside).
peers_command_text() {
    local cmd=() a text=""
    peers_command scaleppm DIR "$1" "$2" IN OUT "$3" "$4"
    for a in "${cmd[@]}"; do
        [[ $a == MAGICK_CONFIGURE_PATH=* || $a == env ]] && continue
        [[ $a == *" "* ]] && a="\"$a\""
        text+="${text:+ }$a"
    done
    sed -e 's/^-- //' -e 's/^-o OUT -- \(.*\)$/\1 > OUT/' <<<"$text"
}

# peers_pnm_info FILE: "MAGIC W H MAXVAL RASTER_OFFSET BYTES_PER_PIXEL"
# of a binary PNM holding one image (the offset: the file's size less the
# raster's).
peers_pnm_info() {
    local f=$1 magic w h maxval size bytes bpp=1
    read -r magic w h maxval < <(head -c 1024 -- "$f" | tr '\0' ' ' |
        LC_ALL=C awk '{ sub(/#.*/, "")
                        for (i = 1; i <= NF; i++) { t[++n] = $i
                            if (n == 4) { print t[1], t[2], t[3], t[4]; exit } } }') ||
        return 1
    [[ ($magic == P6 || $magic == P5) && $w =~ ^[0-9]+$ && $h =~ ^[0-9]+$ &&
        $maxval =~ ^[0-9]+$ ]] || return 1
    [[ $magic == P6 ]] && bpp=3
    ((maxval > 255)) && bpp=$((bpp * 2))
    bytes=$((w * h * bpp))
    size=$(stat -c %s -- "$f") || return 1
    ((size > bytes && size - bytes <= 1024)) || return 1
    echo "$magic" "$w" "$h" "$maxval" $((size - bytes)) "$bpp"
}

# peers_maxdiff A B W H: the largest absolute sample difference between
# the top-left W x H regions of the PNMs A and B.
peers_maxdiff() {
    pamarith -difference \
        <(pamcut -left 0 -top 0 -width "$3" -height "$4" "$1") \
        <(pamcut -left 0 -top 0 -width "$3" -height "$4" "$2") |
        pamsumm -max -brief
}

# peers_compare KIND N W H REF GOT: GOT against scaleppm's REF, both made
# from a W x H input by a job of KIND (reduce, enlarge, box) by N.  Prints
# one tab-separated line:
#   RESULT  DIMS  DETAIL  MAXDIFF
# RESULT: equal (same dimensions, maxval and raster, whatever the headers
# say besides), differs (same dimensions, other samples), dims (other
# dimensions) or bad (GOT is not one binary PNM); DIMS: GOT's WxH;
# DETAIL: where the rasters part, or the verdict on the region both have
# ("-" when there is nothing to say);
# MAXDIFF: for box, the largest absolute sample difference over that
# region, else "-".  For a box reduce by an N that does not divide the
# size, DETAIL also gives it over the whole N x N blocks alone.
peers_compare() {
    local kind=$1 n=$2 iw=$3 ih=$4 ref=$5 got=$6 rm rw rh rmax roff gm gw gh
    local gmax goff result detail="" maxdiff=- at byte px bpp w h fw fh
    read -r rm rw rh rmax roff bpp < <(peers_pnm_info "$ref") ||
        { printf 'bad\t?\tscaleppm output is not one binary PNM\t-\n'; return 0; }
    if ! read -r gm gw gh gmax goff _ < <(peers_pnm_info "$got"); then
        printf 'bad\t?\tnot one binary PNM\t-\n'
        return 0
    fi
    if [[ $rm != "$gm" || $rmax != "$gmax" ]]; then
        printf 'differs\t%sx%s\t%s maxval %s, scaleppm %s maxval %s\t-\n' \
            "$gw" "$gh" "$gm" "$gmax" "$rm" "$rmax"
        return 0
    fi
    w=$((rw < gw ? rw : gw)) h=$((rh < gh ? rh : gh))
    if [[ $rw == "$gw" && $rh == "$gh" ]]; then
        if at=$(cmp -i "$roff:$goff" -- "$ref" "$got" 2>&1); then
            result=equal
        else
            byte=$(sed -n 's/.*differ: byte \([0-9]*\).*/\1/p' <<<"$at")
            [[ -n $byte ]] ||
                { printf 'bad\t%sx%s\tcmp: %s\t-\n' "$gw" "$gh" "$at"; return 0; }
            px=$(((byte - 1) / bpp))
            result=differs detail="first differs at pixel ($((px % rw)),$((px / rw)))"
        fi
    else
        result=dims
        if cmp -s <(pamcut -left 0 -top 0 -width "$w" -height "$h" "$ref") \
            <(pamcut -left 0 -top 0 -width "$w" -height "$h" "$got"); then
            detail="common ${w}x${h} region equal"
        else
            detail="common ${w}x${h} region differs"
        fi
    fi
    if [[ $kind == box ]]; then
        maxdiff=0
        if [[ $result != equal ]]; then
            maxdiff=$(peers_maxdiff "$ref" "$got" "$w" "$h") || maxdiff='?'
            detail+="${detail:+; }max abs diff $maxdiff"
        fi
        fw=$((iw / n)) fh=$((ih / n))
        if ((fw * n != iw || fh * n != ih)) && ((fw > 0 && fh > 0)) &&
            [[ $maxdiff != 0 ]]; then
            detail+=", $(peers_maxdiff "$ref" "$got" "$fw" "$fh") over the whole blocks"
        fi
    fi
    printf '%s\t%sx%s\t%s\t%s\n' "$result" "$gw" "$gh" "${detail:--}" "$maxdiff"
}

# peers_expected KIND N TOOL W H: what TOOL owes scaleppm on a W x H input:
# "equal", "common equal" (the region both sizes have: vips samples
# (x*N, y*N) whatever N, but rounds the size down), "within 1" (box) or ""
# (nothing: it is free to differ).
peers_expected() {
    local kind=$1 n=$2 tool=$3 divides=0
    (($4 % n == 0 && $5 % n == 0)) && divides=1
    case $kind:$tool in
    enlarge:*) echo equal ;;
    reduce:pamscale) ((divides && (n == 2 || n == 4 || n == 8))) && echo equal ;;
    reduce:vips-*) if ((divides)); then echo equal; else echo "common equal"; fi ;;
    reduce:*) ((divides)) && echo equal ;;
    box:*) ((divides)) && echo "within 1" ;;
    esac
    return 0
}

# peers_verdict EXPECTED RESULT MAXDIFF DETAIL: "as expected", "MISMATCH" or
# "not required".
peers_verdict() {
    case $1 in
    equal)
        if [[ $2 == equal ]]; then echo "as expected"; else echo MISMATCH; fi
        ;;
    "common equal")
        if [[ $2 == equal || ($2 == dims && $4 == "common "*" region equal") ]]; then
            echo "as expected"
        else
            echo MISMATCH
        fi
        ;;
    "within 1")
        if [[ ($2 == equal || $2 == differs) && $3 =~ ^[01]$ ]]; then
            echo "as expected"
        else
            echo MISMATCH
        fi
        ;;
    *) echo "not required" ;;
    esac
}

# peers_label JOB: "reduce 2" for reduce2.
peers_label() {
    printf '%s %s\n' "${1%%[0-9]*}" "${1//[a-z]/}"
}

# peers_mem_need JOB TOOL W H BPP: bytes TOOL holds doing JOB on a W x H
# input, its output file (on tmpfs) included.  GraphicsMagick and
# ImageMagick (Q16) keep input and output at 8 bytes a pixel (measured:
# gm 1.18 GB for 120 + 30 Mpixel, 4.7 GB for 120 + 480); scaleppm, netpbm
# and vips stream (tens to hundreds of MB).
peers_mem_need() {
    local job=$1 tool=$2 w=$3 h=$4 bpp=$5 ow oh need
    read -r ow oh < <(peers_out_size "$job" "$w" "$h")
    need=$((ow * oh * bpp))
    case $tool in
    gm | im) need=$((need + 8 * (w * h + ow * oh))) ;;
    esac
    echo "$need"
}

# peers_gb BYTES: "1.23" (GB, 10^9).
peers_gb() {
    awk -v b="$1" 'BEGIN { printf "%.2f", b / 1e9 }'
}

# peers_suite ROOT BIN OUT RUNS QUICK [SIZE]: the suite, into OUT:
# peers.csv, peers-scale.csv, peers-verify.tsv, peers.md, peers.png and
# env.txt; on 1280x1024 and 12000x10000, on SIZE alone when given, on
# 320x256 and 200x150 when QUICK is 1.  Runs in a subshell: its tmpfs
# folder goes with it, however it ends.
peers_suite() (
    local root=$1 bin=$2 out=$3 runs=$4 quick=$5 only=${6:-}
    local sp=$bin/src/scaleppm sprun=$bin/src/sprun gen=$bin/images/genimage
    local sizes=(1280x1024 12000x10000) size in w h rw rh bpp job tool
    local kind n wall rss t dir imcfg avail need result dims detail
    local maxdiff expected verdict mismatches=0 fastest r k i left start
    local specs=()
    local -A inputs=() timed=() vwall=()
    if ((quick)); then
        sizes=(320x256 200x150)
    elif [[ -n $only ]]; then
        sizes=("$only")
    fi

    for t in "$sp" "$sprun" "$gen"; do
        [[ -x $t ]] || peers_die "$t: not built"
    done
    for t in pamscale pamenlarge pamcut pamarith pamsumm vips gm \
        convert-im6.q16 gnuplot; do
        command -v "$t" >/dev/null || peers_die "$t: not installed"
    done
    dir=$(mktemp -d /dev/shm/scaleppm-peers.XXXXXX) ||
        peers_die "cannot make a folder on /dev/shm (tmpfs)"
    # shellcheck disable=SC2064  # expand dir now
    trap "rm -rf -- '$dir'" EXIT
    trap 'exit 130' INT TERM
    mkdir "$dir/meta"

    # ImageMagick: Debian's policy.xml refuses images over 16K pixels a
    # side or 128 Mpixel and caches pixels on disk past 256 MiB; this one
    # lets it use memory and refuses the disk instead.
    imcfg=$dir/meta/im
    mkdir "$imcfg"
    cat >"$imcfg/policy.xml" <<'XML'
<policymap>
  <policy domain="resource" name="memory" value="64GiB"/>
  <policy domain="resource" name="map" value="64GiB"/>
  <policy domain="resource" name="width" value="1MP"/>
  <policy domain="resource" name="height" value="1MP"/>
  <policy domain="resource" name="area" value="64GP"/>
  <policy domain="resource" name="disk" value="0"/>
</policymap>
XML

    # The inputs (generated into images/, git-ignored, when missing).
    for size in "${sizes[@]}"; do
        in=$root/images/gen$size.ppm
        [[ $size == 1280x1024 ]] && in=$root/images/sun1280x1024.ppm
        if [[ ! -s $in ]]; then
            printf 'generating %s\n' "$in" >&2
            # Beside it, then renamed: another run may be reading it.
            "$gen" -o "$in.tmp.$$" "${size%x*}" "${size#*x}" ||
                peers_die "genimage $size failed"
            mv -f -- "$in.tmp.$$" "$in"
        fi
        inputs[$size]=$in
    done
    avail=$(($(awk '/^MemAvailable:/ { print $2 }' /proc/meminfo) * 1024))

    # run_tool JOB TOOL SIZE OUTFILE: one run through sprun; sets wall and
    # rss; on failure returns 1 with the reason in $dir/meta/err.
    run_tool() {
        local cmd=() res
        peers_command "$sp" "$imcfg" "$1" "$2" "${inputs[$3]}" "$4" \
            "${3%x*}" "${3#*x}"
        rm -f -- "$4"
        res=$("$sprun" -t "$PEERS_TIMEOUT_S" "${cmd[@]}" 2>"$dir/meta/err") || return 1
        read -r wall rss _ <<<"$res"
    }
    reason() {
        grep -v '^pamscale: reducing by' "$dir/meta/err" | tail -n 2 | tr '\n\t' '  '
    }

    # --- verification ---------------------------------------------------
    local vtsv=$out/peers-verify.tsv
    printf 'size\tjob\ttool\texpected\tresult\tdims\tdetail\tmaxdiff\tverdict\twall_ns\tmaxrss_kb\ttimed\n' >"$vtsv"
    for size in "${sizes[@]}"; do
        in=${inputs[$size]}
        read -r _ w h _ _ bpp < <(peers_pnm_info "$in") ||
            peers_die "$in: not a binary PNM"
        specs+=("$size:$bpp")
        cat -- "$in" >/dev/null
        printf 'verifying on %s: every tool once a job\n' "$size" >&2
        for job in "${PEERS_JOBS[@]}"; do
            kind=${job%%[0-9]*} n=${job//[a-z]/}
            need=$(peers_mem_need "$job" scaleppm "$w" "$h" "$bpp")
            ((need <= avail * 3 / 4)) ||
                peers_die "$size $job: scaleppm needs $(peers_gb "$need") GB, $(peers_gb "$avail") GB available"
            run_tool "$job" scaleppm "$size" "$dir/ref.ppm" ||
                peers_die "scaleppm failed on $size $job: $(reason)"
            read -r _ rw rh _ _ _ < <(peers_pnm_info "$dir/ref.ppm") ||
                peers_die "scaleppm's output on $size $job is not one binary PNM"
            [[ "$rw $rh" == "$(peers_out_size "$job" "$w" "$h")" ]] ||
                peers_die "scaleppm's output on $size $job is ${rw}x$rh, not $(peers_out_size "$job" "$w" "$h" | tr ' ' x)"
            timed[$size:$job:scaleppm]=yes
            printf '%s\t%s\tscaleppm\t\treference\t%s\t\t-\t\t%s\t%s\tyes\n' \
                "$size" "$job" "$(peers_out_size "$job" "$w" "$h" | tr ' ' x)" \
                "$wall" "$rss" >>"$vtsv"
            fastest="" vwall=()
            for tool in $(peers_tools "$job"); do
                [[ $tool == scaleppm ]] && continue
                expected=$(peers_expected "$kind" "$n" "$tool" "$w" "$h")
                # Its memory and output, beside the reference output.
                need=$(($(peers_mem_need "$job" "$tool" "$w" "$h" "$bpp") +
                    $(peers_out_size "$job" "$w" "$h" | awk '{ print $1 * $2 }') * bpp))
                if ((need > avail * 3 / 4)); then
                    printf '%s\t%s\t%s\t%s\tskipped\t\t\t-\tnot run\t\t\tno: needs ~%s GB (its memory and output, and the reference output on tmpfs), over 3/4 of the %s GB available\n' \
                        "$size" "$job" "$tool" "$expected" "$(peers_gb "$need")" \
                        "$(peers_gb "$avail")" >>"$vtsv"
                    printf '  %s %s: skipped, needs ~%s GB\n' "$job" "$tool" \
                        "$(peers_gb "$need")" >&2
                    continue
                fi
                if ! run_tool "$job" "$tool" "$size" "$dir/out.ppm"; then
                    printf '%s\t%s\t%s\t%s\tfailed\t\t%s\t-\tnot run\t\t\tno: failed\n' \
                        "$size" "$job" "$tool" "$expected" "$(reason)" >>"$vtsv"
                    printf '  %s %s: FAILED: %s\n' "$job" "$tool" "$(reason)" >&2
                    continue
                fi
                IFS=$'\t' read -r result dims detail maxdiff < <(peers_compare \
                    "$kind" "$n" "$w" "$h" "$dir/ref.ppm" "$dir/out.ppm")
                rm -f -- "$dir/out.ppm"
                verdict=$(peers_verdict "$expected" "$result" "$maxdiff" "$detail")
                if [[ $verdict == MISMATCH ]]; then
                    mismatches=$((mismatches + 1))
                    printf '\n*** MISMATCH: scaleppm and %s should agree (%s) on %s %s, but: %s %s %s ***\n\n' \
                        "$tool" "$expected" "$size" "$(peers_label "$job")" \
                        "$result" "$dims" "$detail" >&2
                fi
                printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\tyes\n' "$size" \
                    "$job" "$tool" "$expected" "$result" "$dims" "$detail" \
                    "$maxdiff" "$verdict" "$wall" "$rss" >>"$vtsv"
                if [[ $result == bad ]]; then
                    awk -F'\t' -v OFS='\t' -v s="$size" -v j="$job" -v t="$tool" \
                        '$1 == s && $2 == j && $3 == t { $12 = "no: its output is not a binary PNM" } { print }' \
                        "$vtsv" >"$dir/meta/v" && cat "$dir/meta/v" >"$vtsv"
                    continue
                fi
                timed[$size:$job:$tool]=yes vwall[$tool]=$wall
                [[ -z $fastest || $wall -lt $fastest ]] && fastest=$wall
            done
            rm -f -- "$dir/ref.ppm"
            # A peer far slower than the fastest one is not timed.
            for tool in $(peers_tools "$job"); do
                [[ $tool != scaleppm && -n ${timed[$size:$job:$tool]:-} ]] || continue
                wall=${vwall[$tool]}
                if ((wall > PEERS_SLOW_RATIO * fastest && wall > PEERS_SLOW_MIN_NS)); then
                    unset "timed[$size:$job:$tool]"
                    awk -F'\t' -v OFS='\t' -v s="$size" -v j="$job" -v t="$tool" \
                        -v why="no: $(awk -v a="$wall" -v b="$fastest" 'BEGIN { printf "%.1f s, %.0fx the fastest peer (%.2f s)", a / 1e9, a / b, b / 1e9 }')" \
                        '$1 == s && $2 == j && $3 == t { $12 = why } { print }' \
                        "$vtsv" >"$dir/meta/v" && cat "$dir/meta/v" >"$vtsv"
                    printf '  %s %s: too slow to time\n' "$job" "$tool" >&2
                fi
            done
            printf '  %s: %s\n' "$(peers_label "$job")" "$(awk -F'\t' -v s="$size" -v j="$job" \
                '$1 == s && $2 == j && $3 != "scaleppm" { printf "%s%s %s", sep, $3, $5; sep = ", " }' "$vtsv")" >&2
        done
    done
    if ((mismatches)); then
        peers_report "$out" "" "${specs[@]}"
        peers_die "$mismatches MISMATCH(ES): scaleppm differs from a tool that should agree; see $out/peers.md (nothing timed)"
    fi

    # --- timing: R rounds of every (job, tool) pair -----------------------
    printf 'size,job,tool,round,wall_ns,maxrss_kb\n' >"$out/peers.csv"
    for size in "${sizes[@]}"; do
        cat -- "${inputs[$size]}" >/dev/null
        start=$SECONDS
        for ((r = 1; r <= runs; r++)); do
            left=""
            ((r > 1)) && left=", about $(((SECONDS - start) * (runs - r + 1) / (r - 1))) s left for this size"
            printf 'timing on %s: round %d of %d%s\n' "$size" "$r" "$runs" "$left" >&2
            for job in "${PEERS_JOBS[@]}"; do
                local tools=()
                for tool in $(peers_tools "$job"); do
                    [[ -n ${timed[$size:$job:$tool]:-} ]] && tools+=("$tool")
                done
                k=${#tools[@]}
                for ((i = 0; i < k; i++)); do
                    tool=${tools[(i + r - 1) % k]}
                    run_tool "$job" "$tool" "$size" "$dir/out.ppm" ||
                        peers_die "$tool failed on $size $job in round $r: $(reason)"
                    rm -f -- "$dir/out.ppm"
                    printf '%s,%s,%s,%d,%s,%s\n' "$size" "$job" "$tool" "$r" \
                        "$wall" "$rss" >>"$out/peers.csv"
                done
            done
        done
    done

    # --- the scale phase: default threads, then -t 1 / -t 2 (enlarge) -----
    local rate
    rate=$("$sprun" --memcpy) || peers_die "sprun --memcpy failed"
    printf 'memcpy: %s bytes/s\n' "$rate" >&2
    printf 'size,job,threads_arg,run,scale_ns,threads\n' >"$out/peers-scale.csv"
    scale_run() {  # scale_run SIZE JOB THREADS_ARG RUN
        local args=() n=${2//[a-z]/} json ns
        case $2 in
        reduce*) args=(-s "-$n") ;;
        enlarge*) args=(-s "$n") ;;
        box*) args=(--filter box -s "-$n") ;;
        esac
        [[ $3 == default ]] || args+=(-t "$3")
        # To /dev/null: scaleppm writes an item while it scales the next,
        # and a write into tmpfs beside the scaling would be timed here.
        json=$("$sp" "${args[@]}" --timings=json "${inputs[$1]}" /dev/null 2>&1) ||
            peers_die "scaleppm ${args[*]} failed on $1: $json"
        [[ $json =~ \"scale_ns\":([0-9]+) ]] || peers_die "no scale_ns in: $json"
        ns=${BASH_REMATCH[1]}
        [[ $json =~ \"threads\":([0-9]+) ]] || peers_die "no threads in: $json"
        printf '%s,%s,%s,%d,%s,%s\n' "$1" "$2" "$3" "$4" "$ns" "${BASH_REMATCH[1]}" \
            >>"$out/peers-scale.csv"
    }
    for size in "${sizes[@]}"; do
        cat -- "${inputs[$size]}" >/dev/null
        printf 'scale phase on %s\n' "$size" >&2
        for job in "${PEERS_JOBS[@]}"; do
            for ((r = 1; r <= runs; r++)); do
                scale_run "$size" "$job" default "$r"
            done
        done
        for job in enlarge2 enlarge4; do
            for ((r = 1; r <= runs; r++)); do
                if ((r % 2)); then
                    scale_run "$size" "$job" 1 "$r"
                    scale_run "$size" "$job" 2 "$r"
                else
                    scale_run "$size" "$job" 2 "$r"
                    scale_run "$size" "$job" 1 "$r"
                fi
            done
        done
    done

    peers_report "$out" "$rate" "${specs[@]}"
    sp_write_env "$out/env.txt" "${inputs[${sizes[-1]}]}" "$bin" \
        "suite=peers quick=$quick runs=$runs sizes=${sizes[*]} outputs=/dev/shm (tmpfs) memcpy_bytes_per_s=$rate inputs=$(for s in "${sizes[@]}"; do printf '%s ' "${inputs[$s]}"; done)"
    cat "$out/peers.md"
)

# peers_medians CSV KEY_COLS VALUE_COL: "KEY N MEDIAN MIN MAX" for each
# KEY (the named columns joined with |) of CSV.
peers_medians() {
    awk -F, -v keys="$2" -v val="$3" '
        NR == 1 { nk = split(keys, kn, " ")
                  for (i = 1; i <= NF; i++) col[$i] = i; next }
        { key = ""
          for (i = 1; i <= nk; i++) key = key (i > 1 ? "|" : "") $(col[kn[i]])
          print key, $(col[val]) }' "$1" |
        sort -k1,1 -k2,2n |
        awk 'function flush() {
                 if (n) printf "%s %d %.1f %s %s\n", key, n,
                                (n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2), v[1], v[n] }
             $1 != key { flush(); key = $1; n = 0 }
             { v[++n] = $2 }
             END { flush() }'
}

# peers_speed_tables WALL RSS VERIFY FIG SUMMARY SIZE...: the per-size
# tables of peers.md (stdout); "JOB SIZE RATIO TARGET" lines for the
# figure into FIG, "MET of TARGETS" into SUMMARY.
peers_speed_tables() {
    local wall=$1 rss=$2 verify=$3 fig=$4 summary=$5
    shift 5
    awk -v sizes="$*" -v jobs="${PEERS_JOBS[*]}" \
        -v tr="$PEERS_TARGET_REDUCE" -v te="$PEERS_TARGET_ENLARGE" \
        -v trss="$PEERS_TARGET_RSS" -v tb="$PEERS_TARGET_BOX" \
        -v fig="$fig" -v sum="$summary" '
        function ms(ns) { return sprintf("%.1f", ns / 1e6) }
        function x(a, b) { return (a != "" && b != "" && b > 0) ? sprintf("%.2f", a / b) : "" }
        FILENAME == ARGV[1] { n[$1] = $2; med[$1] = $3; lo[$1] = $4; hi[$1] = $5; next }
        FILENAME == ARGV[2] { rss[$1] = $3; next }
        FNR == 1 { next }
        { split($0, f, "\t"); key = f[1] "|" f[2] "|" f[3]
          tools[f[1] "|" f[2]] = tools[f[1] "|" f[2]] " " f[3]
          if (f[12] != "yes") why[key] = substr(f[12], 5) }
        END {
            ns = split(sizes, S, " "); nj = split(jobs, J, " ")
            for (s = 1; s <= ns; s++) {
                printf "## %s\n\n", S[s]
                print "| job | tool | median ms | min-max ms | peak RSS MB | × fastest | target | met? |"
                print "|---|---|---:|---:|---:|---:|---|---|"
                for (j = 1; j <= nj; j++) {
                    sj = S[s] "|" J[j]; label = J[j]; sub(/[0-9]+$/, " &", label)
                    nt = split(substr(tools[sj], 2), T, " ")
                    # The peers, fastest first (skipped ones last).
                    np = 0; best = ""
                    for (t = 1; t <= nt; t++) {
                        if (T[t] == "scaleppm") continue
                        P[++np] = T[t]; m = med[sj "|" T[t]]
                        if (m != "" && (best == "" || m + 0 < med[sj "|" best] + 0)) best = T[t]
                    }
                    for (a = 2; a <= np; a++)
                        for (b = a; b > 1; b--) {
                            ma = med[sj "|" P[b]]; mb = med[sj "|" P[b - 1]]
                            if (ma == "" || (mb != "" && mb + 0 <= ma + 0)) break
                            tt = P[b]; P[b] = P[b - 1]; P[b - 1] = tt
                        }
                    fm = best == "" ? "" : med[sj "|" best]
                    fr = best == "" ? "" : rss[sj "|" best]
                    sp = sj "|scaleppm"; r = x(med[sp], fm); figr = r
                    if (J[j] ~ /^reduce/) {
                        target = "≤ " tr "× fastest"; ft = tr
                        met = r == "" ? "?" : (r + 0 <= tr + 0 ? "yes" : "no")
                    } else if (J[j] ~ /^enlarge/) {
                        target = "≤ " te "× fastest, RSS ≤ " trss "× its"; ft = te
                        rr = x(rss[sp], fr)
                        met = (r == "" || rr == "") ? "?" : \
                            ((r + 0 <= te + 0 && rr + 0 <= trss + 0) ? "yes" : "no") " (RSS " rr "×)"
                    } else {
                        target = "≤ " tb "× vips-shrink and pamscale"; ft = tb
                        r1 = x(med[sp], med[sj "|vips-shrink"]); r2 = x(med[sp], med[sj "|pamscale"])
                        met = (r1 == "" || r2 == "") ? "?" : \
                            ((r1 + 0 <= tb + 0 && r2 + 0 <= tb + 0) ? "yes" : "no") " (" r1 "×, " r2 "×)"
                        figr = (r1 == "" || r2 == "") ? "" : (r1 + 0 > r2 + 0 ? r1 : r2)
                    }
                    if (met ~ /^yes/) nmet++
                    ntarget++
                    printf "%s %s %s %s\n", J[j], S[s], figr == "" ? "?" : figr, ft > fig
                    printf "| %s | **scaleppm** | %s | %s-%s | %.1f | **%s** | %s | %s |\n", label, \
                        ms(med[sp]), ms(lo[sp]), ms(hi[sp]), rss[sp] / 1024, r, target, met
                    for (p = 1; p <= np; p++) {
                        k = sj "|" P[p]
                        if (k in why) {
                            printf "| | %s | | | | | not timed: %s | |\n", P[p], why[k]
                            continue
                        }
                        printf "| | %s | %s | %s-%s | %.1f | %s | | |\n", P[p], ms(med[k]), \
                            ms(lo[k]), ms(hi[k]), rss[k] / 1024, x(med[k], fm)
                    }
                }
                print ""
            }
            printf "%d of %d\n", nmet, ntarget > sum
        }' "$wall" "$rss" "$verify"
}

# peers_floor_row SCALE SIZE BPP JOB RATE: the memory-floor table's row.
peers_floor_row() {
    awk -v key="$2|$4|default" -v size="$2" -v job="$4" -v bpp="$3" \
        -v rate="$5" -v t="$PEERS_TARGET_FLOOR" '
        $1 == key { m = $3 }
        END { split(size, d, "x"); w = d[1]; h = d[2]; n = job; gsub(/[a-z]/, "", n)
              label = job; sub(/[0-9]+$/, " &", label)
              ow = int((w + n - 1) / n); oh = int((h + n - 1) / n); rd = w * h * bpp
              if (job ~ /^enlarge/) { ow = w * n; oh = h * n }
              if (job ~ /^reduce/) rd = oh * w * bpp
              wr = ow * oh * bpp; fl = (rd + wr) / (2 * rate) * 1e9
              printf "| %s | %s | %.2f | %.2f | %.2f | %.3f | %.2f | %s |\n", size, label,
                  m / 1e6, rd / 1e6, wr / 1e6, fl / 1e6, m / fl,
                  m == 0 ? "? (no scale figure)" : (m / fl <= t) ? "yes" : "no" }' "$1"
}

# peers_threads_row SCALE SIZE JOB: the thread-scaling table's row.
peers_threads_row() {
    awk -v a="$2|$3|1" -v b="$2|$3|2" -v size="$2" \
        -v label="$(peers_label "$3")" -v t="$PEERS_TARGET_THREADS" '
        $1 == a { t1 = $3 } $1 == b { t2 = $3 }
        END { if (t1 == 0 || t2 == 0) {
                  printf "| %s | %s | %.2f | %.2f | ? | ? (a figure is missing) |\n", size, label, t1 / 1e6, t2 / 1e6
                  exit }
              printf "| %s | %s | %.2f | %.2f | %.2f | %s |\n", size, label,
              t1 / 1e6, t2 / 1e6, t1 / t2, (t1 / t2 >= t) ? "yes" : "no" }' "$1"
}

# peers_verify_table VERIFY: the verification table's rows, and the list
# of what was not timed.
peers_verify_table() {
    awk -F'\t' 'NR > 1 && $3 != "scaleppm" {
            label = $2; sub(/[0-9]+$/, " &", label)
            if ($5 == "equal") what = "equal"
            else if ($5 == "dims") what = "dimensions differ; " $7
            else if ($5 == "differs") what = "differs: " $7
            else if ($5 == "skipped") what = "not run: " substr($12, 5)
            else what = $5 ": " $7
            printf "| %s | %s | %s | %s | %s | %s | %s |\n", $1, label, $3, $6,
                what, $4 == "" ? "-" : $4, $9 == "MISMATCH" ? "**MISMATCH**" : $9 }' "$1"
    printf '\n## Not timed\n\n'
    awk -F'\t' 'NR > 1 && $12 != "yes" {
            label = $2; sub(/[0-9]+$/, " &", label)
            printf "- %s %s, %s: %s\n", $1, label, $3, substr($12, 5); n++ }
        END { if (!n) print "Nothing: every tool was timed on every job." }' "$1"
}

# peers_report OUT MEMCPY_RATE SIZE:BPP...: peers.md and peers.png from
# OUT's peers.csv, peers-scale.csv and peers-verify.tsv.  Without a
# MEMCPY_RATE (verification failed, nothing timed) only the verification.
peers_report() {
    local out=$1 rate=$2 spec size tmp job tool nr
    shift 2
    local specs=("$@") sizes=()
    for spec in "${specs[@]}"; do sizes+=("${spec%%:*}"); done
    tmp=$(mktemp -d)
    {
        printf '# peers: scaleppm against netpbm, libvips, GraphicsMagick and ImageMagick\n\n'
        if [[ -n $rate ]]; then
            peers_medians "$out/peers.csv" "size job tool" wall_ns >"$tmp/wall"
            peers_medians "$out/peers.csv" "size job tool" maxrss_kb >"$tmp/rss"
            peers_medians "$out/peers-scale.csv" "size job threads_arg" scale_ns >"$tmp/scale"
            nr=$(awk -F, 'NR > 1 && $4 > r { r = $4 } END { print r + 0 }' "$out/peers.csv")
            peers_speed_tables "$tmp/wall" "$tmp/rss" "$out/peers-verify.tsv" \
                "$tmp/fig" "$tmp/summary" "${sizes[@]}" >"$tmp/tables"
            printf 'scaleppm meets %s targets against the peers (below).\n\n' "$(cat "$tmp/summary")"
            cat <<EOF
Each tool does each job as a fresh process, timed by \`sprun\` (wall
time, CLOCK_MONOTONIC from fork to wait4; peak RSS from wait4's rusage,
as /usr/bin/time -v reports it) in $nr rounds; in each round every (job,
tool) pair runs once, the tools of a job in an order rotated by one each
round. The input is in the page cache (read once before), the output
goes to tmpfs (/dev/shm) and is removed before each run. scaleppm runs
with its defaults (no \`-t\`, no \`--io\`). "peak RSS": the median over
the rounds of each run's peak. Raw rows: peers.csv; the scale
phase alone: peers-scale.csv; verification: peers-verify.tsv; the
machine: env.txt.

"× fastest" is a tool's median over the fastest peer's (scaleppm is not
a peer). Targets (issue 6): sample reduce, scaleppm ≤
${PEERS_TARGET_REDUCE}× the fastest peer; enlarge, ≤ ${PEERS_TARGET_ENLARGE}× and
peak RSS ≤ ${PEERS_TARGET_RSS}× the fastest peer's; box, ≤ ${PEERS_TARGET_BOX}× both
vips shrink and pamscale -reduce N -linear (met? gives both ratios).

EOF
            cat "$tmp/tables"
            cat <<EOF
## The scale phase against the memory floor

scaleppm's scale phase alone (\`--timings=json\`, scale_ns: the time any
thread was scaling; default threads, median of $nr runs, the output to
/dev/null, since scaleppm writes one item while it scales the next and a
write into tmpfs beside it would be timed too) against the memory floor:
the bytes the job
must read plus the bytes it writes, moved at 2 × the single-thread memcpy
rate (a memcpy reads and writes each byte it copies). The memcpy rate,
by \`sprun --memcpy\` in this run (median of 5 copies of 256 MiB):
$(awk -v r="$rate" 'BEGIN { printf "%.2f", r / 1e9 }') GB/s. Read: a sampled reduce by N, ceil(H/N) whole rows
(it touches every cache line of a sampled row for N ≤ 21); enlarge and
box, the whole raster. Written: the output raster. Target: scale ≤
${PEERS_TARGET_FLOOR}× floor.

| size | job | scale median ms | read MB | written MB | floor ms | scale ÷ floor | met? |
|---|---|---:|---:|---:|---:|---:|---|
EOF
            for spec in "${specs[@]}"; do
                for job in "${PEERS_JOBS[@]}"; do
                    peers_floor_row "$tmp/scale" "${spec%%:*}" "${spec#*:}" "$job" "$rate"
                done
            done
            cat <<EOF

## Thread scaling of the scale phase (enlarge)

Median scale phase with \`-t 1\` and with \`-t 2\` ($nr runs each, in
alternating order). Target: t1 ÷ t2 ≥ ${PEERS_TARGET_THREADS}.

| size | job | -t 1 ms | -t 2 ms | t1 ÷ t2 | met? |
|---|---|---:|---:|---:|---|
EOF
            for size in "${sizes[@]}"; do
                for job in enlarge2 enlarge4; do
                    peers_threads_row "$tmp/scale" "$size" "$job"
                done
            done
            printf '\n'
        else
            printf '**Verification failed: nothing was timed.**\n\n'
        fi
        cat <<'EOF'
## Verification

Every tool once a job on each input, its output against scaleppm's:
dimensions, maxval and raster byte for byte (headers aside); for box the
largest absolute sample difference. "expected": what the tool owes
scaleppm there (see the notes); a MISMATCH stops the suite.

| size | job | tool | output | against scaleppm | expected | verdict |
|---|---|---|---|---|---|---|
EOF
        peers_verify_table "$out/peers-verify.tsv"
        printf '\n## Commands (for %s; IN, OUT)\n\n' "${sizes[0]}"
        printf '| job | tool | command |\n|---|---|---|\n'
        for job in "${PEERS_JOBS[@]}"; do
            for tool in $(peers_tools "$job"); do
                printf '| %s | %s | %s |\n' "$(peers_label "$job")" "$tool" \
                    "\`$(peers_command_text "$job" "$tool" "${sizes[0]%x*}" "${sizes[0]#*x}")\`"
            done
        done
        cat <<'EOF'

ImageMagick runs with MAGICK_CONFIGURE_PATH set to a policy.xml that
lifts Debian's limits (16K pixels a side, 128 Mpixel, 256 MiB of memory)
and forbids the disk cache. A peer is not timed when its job would not
fit in 3/4 of the memory available at the start (GraphicsMagick and
ImageMagick, Q16, hold input and output at 8 bytes a pixel; the outputs
sit on tmpfs), or when it took over 20× the fastest peer and over 1 s in
verification.

## Notes: which pixel a sampled reduce keeps

scaleppm keeps (x·N, y·N) on ceil(W/N) × ceil(H/N). Measured on images
whose samples encode their position:

- vips subsample: (x·N, y·N) on floor(W/N) × floor(H/N): where N does not
  divide the size, a row or column fewer, the rest equal.
- vips affine, nearest: (x·N, y·N) on round(W/N) × round(H/N).
- gm -sample W'xH'!: (x·W/W', y·H/H') truncated: x·N where N divides the
  size, else a step a little under N, and the columns drift.
- ImageMagick -sample: ((x + o)·W/W' − ε), o the sample:offset define
  (default 50%, the block's centre; 0 gives x·N − 1, through the ε), so
  sample:offset=1 (1%) keeps the top-left pixel for N ≤ 100.
- pamscale -reduce N -nomix: round(W/N) × round(H/N), and for N not a
  power of two a floating-point slip takes x·N − 1 for some x (N = 3:
  columns 0 2 5 8 ...).
- Box: scaleppm rounds each block's mean to nearest; vips shrink and gm
  -scale differ from it by at most 1. Where N does not divide the size,
  the edge blocks are averaged differently (scaleppm: over the pixels that
  exist), and pamscale, gm and ImageMagick scale by W'/W, not 1/N.
EOF
    } >"$out/peers.md"
    if [[ -n $rate ]]; then
        peers_plot "$tmp/fig" "$out/peers.png" "${sizes[@]}"
    fi
    rm -rf -- "$tmp"
}

# peers_plot FIG PNG SIZE...: scaleppm's time over the fastest peer's,
# per job and size (FIG: "JOB SIZE RATIO TARGET" lines), targets marked.
peers_plot() {
    local fig=$1 png=$2 dat plot="" i=0 n width
    shift 2
    n=$#
    width=$(awk -v n="$n" 'BEGIN { printf "%.2f", 0.8 / n }')
    dat=$(mktemp)
    awk -v sizes="$*" '
        BEGIN { ns = split(sizes, S, " ") }
        !($1 in idx) { idx[$1] = ++n; job[n] = $1 }
        { v[$1, $2] = $3; t[$1] = $4 }
        END { for (i = 1; i <= n; i++) { j = job[i]; l = j; sub(/[0-9]+$/, " &", l)
                  printf "%d \"%s\" %s", i - 1, l, t[j]
                  for (s = 1; s <= ns; s++) printf " %s", ((j, S[s]) in v) ? v[j, S[s]] : "?"
                  print "" } }' "$fig" >"$dat"
    local colours=("#4477aa" "#ee6677" "#228833" "#ccbb44")
    for size in "$@"; do
        plot+="\"$dat\" using (\$1 - 0.4 + $width * ($i + 0.5)):$((i + 4)) with boxes lc rgb \"${colours[i % 4]}\" title \"$size\", "
        i=$((i + 1))
    done
    gnuplot <<GNUPLOT
set terminal pngcairo size 1100,550 font ",11"
set output "$png"
set datafile missing "?"
set title "scaleppm's time ÷ the fastest peer's (box: ÷ the faster of vips shrink and pamscale -linear)" noenhanced
set ylabel "scaleppm ÷ fastest peer (lower is better)"
set style fill solid 0.8 border -1
set boxwidth $width
set grid ytics
set yrange [0:*]
set xrange [-0.6:7.6]
set key below noenhanced
set xtics ($(awk '{ printf "%s%s %s", (NR > 1) ? ", " : "", $2 " " $3, $1 }' "$dat"))
plot $plot \
     "$dat" using (\$1 - 0.45):3:(0.9):(0) with vectors nohead lw 3 lc rgb "black" title "target", \
     1 with lines lc rgb "gray" dt 2 title "the fastest peer"
GNUPLOT
    rm -f -- "$dat"
}
