# shellcheck shell=bash
# peers.sh: run_experiments.sh --suite peers (sourced): scaleppm against the
# tools a user would otherwise reach for (netpbm, libvips, GraphicsMagick,
# ImageMagick) on the same jobs, each a fresh process timed by sprun:
# verification first, then R rounds of every (job, tool) pair, then the
# scale phase alone against the memory floor and its thread scaling, then
# the report (peers.md, peers.png, written by spreport).  See peers_suite.
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
        convert-im6.q16; do
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
        in=$(sp_image_of "$root" "$bin" "$size") ||
            peers_die "genimage $size failed"
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
                    tool=${tools[(i + r - 1 + ${sp_offset:-0}) % k]}
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
    # One rate a copy, comma-separated; spreport takes their median.
    rate=$("$sprun" --memcpy) || peers_die "sprun --memcpy failed"
    rate=${rate//$'\n'/,}
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
    local -a files=()
    for size in "${sizes[@]}"; do files+=("${inputs[$size]}"); done
    sp_write_env "$out/env.txt" "" "$bin" \
        "suite=peers quick=$quick runs=$runs sizes=${sizes[*]} outputs=/dev/shm (tmpfs) memcpy_bytes_per_s=$rate specs=$(IFS=,; echo "${specs[*]}") inputs=${files[*]} " \
        "${files[@]}"
    cat "$out/peers.md"
)

# peers_report OUT MEMCPY_RATES SIZE:BPP...: peers.md and peers.png from
# OUT's peers.csv, peers-scale.csv and peers-verify.tsv, through spreport;
# MEMCPY_RATES: sprun --memcpy's rates, comma-separated.  Without them
# (verification failed, nothing timed) only the verification.
peers_report() {
    local out=$1 rate=$2 spec job tool cmds size args=()
    shift 2
    for spec in "$@"; do args+=(--input "$spec"); done
    [[ -n $rate ]] && args+=(--memcpy "$rate")
    size=${1%%:*}
    cmds=$(mktemp)
    # The commands as the report shows them, for the first input.
    {
        printf 'job\ttool\tcommand\n'
        for job in "${PEERS_JOBS[@]}"; do
            for tool in $(peers_tools "$job"); do
                printf '%s\t%s\t%s\n' "$job" "$tool" "$(peers_command_text \
                    "$job" "$tool" "${size%x*}" "${size#*x}")"
            done
        done
    } >"$cmds"
    spreport peers "${args[@]}" --commands "$cmds" "$out" ||
        { rm -f -- "$cmds"; peers_die "the report failed"; }
    rm -f -- "$cmds"
}
