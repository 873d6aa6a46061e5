# shellcheck shell=bash
# sun.sh: one session of the Sun 2002 study on one image (sourced by
# run_experiments.sh, whose options set the globals used here: image size
# cache page_cache runs threads scales order_seed out work bin spcache
# scaleppm sun_output sun_cpus; sun_study sets input, copy_block,
# sun_ncpus and sun_cpu_list for env.txt).
# shellcheck disable=SC2154  # those globals are assigned there

# sun_input: set image to the input, generating it into images/ (git-
# ignored) when none was given.
sun_input() {
    if [[ -z $image ]]; then
        image=$(sp_image_of "$ROOT" "$bin" "${size:-1280x1024}") ||
            die "cannot make the input image"
    fi
    [[ -r $image ]] || die "$image: cannot read"
}

# sun_shuffle SEED LIST: the comma-separated LIST in an order drawn from
# SEED (the same seed, the same order), one item a line.
sun_shuffle() {
    tr ',' '\n' <<<"$2" |
        awk -v seed="$1" 'BEGIN { srand(seed) } { print rand() "\t" $0 }' |
        sort -n | cut -f2
}

# sun_cost SCALE: the bytes one run of a case touches: the input, read
# (three times its size when cold: evicted, it is read from the disk at
# about a third of the rate of the page cache, as the committed cold and
# warm 12000x10000 runs show), and the output it makes (written or not).
sun_cost() {
    local n=${1#-} bytes k=1
    bytes=$(stat -c %s -- "$input")
    [[ $cache == cold ]] && k=3
    if (($1 < 0)); then
        echo $((bytes * k + bytes / (n * n)))
    else
        echo $((bytes * k + bytes * n * n))
    fi
}

# sun_eta: the seconds the cases left will take, from the lines on stdin:
# "done COST NS" for each case done (its cost, sun_cost's, and the
# nanoseconds it took) and "todo COST" for each case to come.  Every case
# is the same number of runs, each a fixed cost (a process and the cache
# check) plus a cost a byte; once the cases done differ enough in size,
# both are fitted to them by least squares, else the fixed cost is taken
# as 21 MB's worth (about 6.5 ms a run against 3.2 GB/s, measured on the
# 2-core VM that made the committed results) and the rate fitted alone.
sun_eta() {
    awk '
        $1 == "done" { n++; c[n] = $2; t[n] = $3 / 1e9
                       lo = (n == 1 || $2 < lo) ? $2 : lo
                       hi = (n == 1 || $2 > hi) ? $2 : hi }
        $1 == "todo" { m++; todo[m] = $2 }
        END {
            fixed = 21e6
            if (n >= 2 && hi >= 2 * lo) {
                for (i = 1; i <= n; i++) { mc += c[i] / n; mt += t[i] / n }
                for (i = 1; i <= n; i++) {
                    sxx += (c[i] - mc) ^ 2; sxy += (c[i] - mc) * (t[i] - mt)
                }
                b = sxy / sxx; a = mt - b * mc
            }
            if (!(a > 0 && b > 0)) {
                for (i = 1; i <= n; i++) { st += t[i]; sw += fixed + c[i] }
                b = st / sw; a = b * fixed
            }
            for (i = 1; i <= m; i++) left += a + b * todo[i]
            printf (left < 10 ? "%.1f\n" : "%.0f\n"), left
        }'
}

# sun_folio_kib FILE: the folio size (KiB) holding most of FILE's cached
# bytes, from spcache folios; "?" where the kernel hides it.
sun_folio_kib() {
    "$spcache" folios "$1" 2>/dev/null | tr ' ' '\n' |
        awk -F: '$1 ~ /^[0-9]+$/ && $1 * $2 > best { best = $1 * $2; kib = $1 }
                 END { print (kib == "" ? "?" : kib) }'
}

# sun_ready: bring $input to the state the cache setting asks for, and
# set cached, total and retries.  Warm: every page resident, re-read until
# it is (memory pressure from a parallel build can take pages); a run is
# never timed on a partly cached input.  Cold: evicted and checked.
sun_ready() {
    retries=0
    if [[ $cache == cold ]]; then
        "$spcache" evict "$input" || die "cannot evict $input"
        read -r cached total < <("$spcache" resident "$input")
        ((cached * 100 <= total)) ||
            die "eviction failed: $cached of $total pages still cached"
        return 0
    fi
    read -r cached total < <("$spcache" resident "$input")
    while ((cached < total)); do
        ((retries < 5)) ||
            die "$input: $cached of $total pages cached after 5 re-reads"
        retries=$((retries + 1))
        cat -- "$input" >/dev/null
        read -r cached total < <("$spcache" resident "$input")
    done
}

# sun_study: one session: every scale factor in an order drawn from
# order_seed, R runs per method alternating which goes first, after one
# warm-up of each; runs.csv, summary.csv, table1.md, figure1.png in $out.
sun_study() {
    scaleppm=$bin/src/scaleppm spcache=$bin/src/spcache
    sun_input
    # The input as the page cache will hold it: written by 4 KiB or 8 MiB
    # writes, then written back so that no dirty pages are left to flush.
    input=$work/input.ppm
    copy_block=8388608
    [[ $page_cache == small ]] && copy_block=4096
    "$spcache" copy "$copy_block" "$image" "$input"
    sync "$input"
    outfile=$work/out.ppm
    sun_confine
    fault_around=$("$spcache" faultaround "$input" 2>/dev/null || echo '?')
    folios=$("$spcache" folios "$input" 2>/dev/null || echo '?')

    fields=(load_ns scale_ns release_ns write_ns load_minflt load_majflt
        scale_minflt scale_majflt release_minflt release_majflt write_minflt
        write_majflt io threads)
    local header="scale,method,order,run" f
    for f in "${fields[@]}"; do header+=",$f"; done
    header+=",cache,page_cache,cached_pages,total_pages,retries,folio_kib"
    header+=",image,output,cpus"
    printf '%s\n' "$header" >"$out/runs.csv"

    mapfile -t order < <(sun_shuffle "$order_seed" "$scales")
    local scale todo i=0 start now cases=() eta
    start=$(date +%s%N)
    for scale in "${order[@]}"; do
        i=$((i + 1))
        eta=""
        if ((i > 1)); then
            eta=$({
                printf '%s\n' "${cases[@]}"
                for todo in "${order[@]:i-1}"; do
                    printf 'todo %s\n' "$(sun_cost "$todo")"
                done
            } | sun_eta)
            eta=", about $eta s of runs left"
        fi
        printf 'case %d of %d: scale %s, %d runs per method%s\n' "$i" \
            "${#order[@]}" "$scale" "$runs" "$eta" >&2
        sun_case "$scale"
        now=$(date +%s%N)
        cases+=("done $(sun_cost "$scale") $((now - start))")
        start=$now
    done
    sp_sun_report "$out"
}

# sun_confine: set sun_pin, the command prefix that runs scaleppm on the
# first sun_cpus CPUs (taskset; none when sun_cpus is empty: every CPU
# this process may use), and sun_ncpus and sun_cpu_list, what scaleppm is
# given, as a pinned process sees it.  The Ultra 30 of 2002 had one CPU.
sun_confine() {
    sun_pin=() sun_cpu_list=all
    if [[ -n $sun_cpus ]]; then
        sun_cpu_list=0
        ((sun_cpus == 1)) || sun_cpu_list=0-$((sun_cpus - 1))
        sun_pin=(taskset -c "$sun_cpu_list")
    fi
    sun_ncpus=$("${sun_pin[@]}" nproc) ||
        die "taskset -c $sun_cpu_list: cannot pin"
    [[ -z $sun_cpus || $sun_ncpus == "$sun_cpus" ]] ||
        die "--sun-cpus $sun_cpus: scaleppm would get $sun_ncpus CPUs"
}

# sun_span: the span's words for the headline: what a run writes, and the
# CPUs its threads share.
sun_span() {
    local what="no output written, as 2002"
    [[ $sun_output == file ]] &&
        what="output written to a file (its write overlaps the scale)"
    printf '%s; %s threads on %s CPU%s' "$what" "$threads" "$sun_ncpus" \
        "$( ((sun_ncpus == 1)) || echo s)"
}

# sun_settings: the session's settings for env.txt: the options, the
# image the input was copied from and the size of the writes that made
# the copy (env.txt's input: line is the copy, the file the runs read),
# the order the factors ran in and its seed, and the input's page-cache
# state as measured before the runs (pages one fault maps, the folios
# that hold it); what a run writes (output=none: scaleppm --no-output, the
# span load + scale + release has no write in or beside it; file: each run
# writes out.ppm, its write timed apart) and the CPUs scaleppm ran on.
sun_settings() {
    printf 'threads=%s runs=%s scales=%s cache=%s page_cache=%s ' \
        "$threads" "$runs" "$scales" "$cache" "$page_cache"
    printf 'output=%s timed=load+scale+release cpus=%s cpu_list=%s ' \
        "$sun_output" "$sun_ncpus" "$sun_cpu_list"
    printf 'input_copied_from=%s copy_write_bytes=%s ' "$image" "$copy_block"
    printf 'order_seed=%s order=%s fault_around_pages=%s folios=%s\n' \
        "$order_seed" "$(IFS=,; echo "${order[*]}")" "$fault_around" \
        "${folios// /,}"
}

# sun_headline DIR: the result in a few lines: read/mmap at each factor
# beside 2002's, and where the files are.
sun_headline() {
    awk -F, -v span="$(sun_span)" '
        NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
        { s = $c["scale"] + 0; r[s] = $c["ratio"]; lo[s] = $c["ratio_lo"]
          hi[s] = $c["ratio_hi"] }
        END {
            split("2 1.14 3 1.28 4 1.48 8 2.03", t, " ")
            for (i = 1; i <= 8; i += 2) sun[-t[i]] = t[i + 1]
            print "read/mmap, load + scale + release (above 1: mmap faster;"
            print "  " span "):"
            for (k = 2; k <= 15; k++) {
                s = k <= 8 ? -k : k - 7  # reduce 2..8, then enlarge 2..8
                if (!(s in r)) continue
                line = sprintf("  %-10s %6.2f (95%%: %.2f-%.2f)",
                               (s < 0 ? "reduce " (-s) : "enlarge " s), r[s],
                               lo[s], hi[s])
                if (s in sun) line = line sprintf("   Sun 2002: %.2f", sun[s])
                print line
            }
        }' "$1/summary.csv"
    printf 'table: %s/table1.md  figure: %s/figure1.png  runs: %s/runs.csv\n' \
        "$1" "$1" "$1"
}

# sun_case SCALE: the warm-ups and R alternating pairs of one factor.
sun_case() {
    local scale=$1 r folio='?'
    [[ $cache == warm ]] && folio=$(sun_folio_kib "$input")
    sun_run read "$scale" 0 warmup "$folio"
    sun_run mmap "$scale" 0 warmup "$folio"
    for ((r = 1; r <= runs; r++)); do
        if ((r % 2)); then
            sun_run read "$scale" "$r" read_first "$folio"
            sun_run mmap "$scale" "$r" read_first "$folio"
        else
            sun_run mmap "$scale" "$r" mmap_first "$folio"
            sun_run read "$scale" "$r" mmap_first "$folio"
        fi
    done
}

# sun_run METHOD SCALE RUN FIRST FOLIO: one scaleppm process (on the CPUs
# sun_confine chose); RUN 0 is the warm-up, not recorded; FIRST says which
# method ran first in the pair.  With output none (the study's case) it
# writes nothing: every row is scaled and dropped (--no-output).
sun_run() {
    local method=$1 scale=$2 run=$3 first=$4 folio=$5 line pair row f
    local -A kv=()
    local args=(--io "$method" -s "$scale" -t "$threads" --timings)
    sun_ready
    if [[ $sun_output == none ]]; then
        args+=(--no-output "$input")
    else
        # A new output each run: replacing one would add its fsyncs (see
        # --suite durable) to the write phase.
        rm -f -- "$outfile"
        args+=("$input" "$outfile")
    fi
    line=$("${sun_pin[@]}" "$scaleppm" "${args[@]}" 2>&1 >/dev/null) ||
        die "scaleppm -s $scale --io $method failed: $line"
    ((run > 0)) || return 0
    for pair in $line; do kv[${pair%%=*}]=${pair#*=}; done
    row="$scale,$method,$first,$run"
    for f in "${fields[@]}"; do
        [[ -n ${kv[$f]:-} ]] || die "no $f in scaleppm's timings: $line"
        row+=",${kv[$f]}"
    done
    printf '%s,%s,%s,%s,%s,%s,%s,%s,%s,%s\n' "$row" "$cache" "$page_cache" \
        "$cached" "$total" "$retries" "$folio" "$(basename "$image")" \
        "$sun_output" "$sun_ncpus" >>"$out/runs.csv"
}
