#!/usr/bin/env bash
# experiments_test.sh BUILD_DIR: run_experiments.sh --quick end to end: the
# Sun study warm and cold (every file is there, runs.csv has its columns and
# one row a run, summary.csv's ratios are what runs.csv's times give), with
# no output written, with an output file and on one CPU (each case said in
# runs.csv, env.txt and table1.md), and each iobench suite (its files, and
# every measured row verified).
set -euo pipefail

build=${1:?usage: experiments_test.sh BUILD_DIR}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# shellcheck source=tests/lib.sh
. "$root/tests/lib.sh"

# ratio_check RUNS SUMMARY: for each scale, mean(read)/mean(mmap) of
# load+scale+release in RUNS against SUMMARY's ratio; prints mismatches.
ratio_check() {
    awk -F, '
        FNR == 1 { for (i = 1; i <= NF; i++) c[FILENAME, $i] = i; next }
        FILENAME == ARGV[1] {
            t = $c[FILENAME, "load_ns"] + $c[FILENAME, "scale_ns"] + $c[FILENAME, "release_ns"]
            s = $c[FILENAME, "scale"]; m = $c[FILENAME, "method"]
            sum[s, m] += t; n[s, m]++; next }
        { s = $c[FILENAME, "scale"]; r = $c[FILENAME, "ratio"]; seen++
          want = (sum[s, "read"] / n[s, "read"]) / (sum[s, "mmap"] / n[s, "mmap"])
          if (r - want > 1e-3 * want || want - r > 1e-3 * want)
              printf "scale %s: ratio %s, runs.csv gives %.4f; ", s, r, want }
        END { if (seen == 0) print "no ratios" }' "$1" "$2"
}

# env_check NAME ENV DIR INPUT...: ENV (an env.txt) names the machine
# (the kernel's release and build, the CPU and its microcode, the
# hypervisor), the build of the binary that ran (compiler, flags of the
# program and its core library, build time), the fault-around probed in
# DIR (an extended regex: the first input's folder), and each INPUT (an
# extended regex of its path) on an input: line with its size and
# format (where pamfile names one: none for iobench's data files), its
# file system and its folios.
env_check() {
    local name=$1 env=$2 dir=$3 in miss="" n
    shift 3
    grep -qF "machine: kernel $(uname -r), build $(uname -v); cpu " "$env" ||
        miss+="no machine line with uname -r and -v; "
    grep -qE '^machine: .*\), microcode [^;]+; hypervisor [^ ].*' "$env" ||
        miss+="no CPU model, microcode or hypervisor; "
    grep -qE '^compiler: /[^ ]+ \(.+\)$' "$env" || miss+="no compiler; "
    grep -qE '^build type: [A-Za-z]+, flags: .*-O.*; core library: .*-O' \
        "$env" || miss+="no flags; "
    grep -qE '^built: [0-9]{4}-[0-9]{2}-[0-9]{2} [0-9:]{8} UTC$' "$env" ||
        miss+="no build time; "
    grep -qE "^fault-around, measured: [0-9]+ pages a read fault \(a cached 8 MiB file in $dir, on " \
        "$env" || miss+="fault-around not probed in $dir; "
    for in in "$@"; do
        grep -qE "^input: $in, [0-9]+ bytes(, [A-Z]|$)" "$env" ||
            miss+="no input: line for $in; "
    done
    n=$(grep -c '^filesystem of the input: ' "$env") || true
    ((n == $#)) || miss+="$n filesystem lines for $# inputs; "
    n=$(grep -cE '^folios of the cached input, measured \(KiB:count\): .' "$env") || true
    ((n == $#)) || miss+="$n folio lines for $# inputs; "
    result "$name: env.txt names the machine, the build and the inputs read" \
        "$miss"
}

for cache in warm cold; do
    out=$work/$cache
    if ! "$root/run_experiments.sh" --quick --bin "$build" --cache "$cache" \
        --page-cache small --out "$out" >"$work/$cache.log" 2>&1; then
        result "run_experiments.sh --quick --cache $cache" \
            "exit $?: $(tail -n 3 "$work/$cache.log" | tr '\n' ' ')"
        continue
    fi
    result "run_experiments.sh --quick --cache $cache" ""
    for f in runs.csv summary.csv table1.md figure1.png env.txt; do
        result "$cache: $f written" "$([[ -s $out/$f ]] || echo missing)"
    done
    result "$cache: figure1.png is a PNG" \
        "$(head -c 4 "$out/figure1.png" | od -An -c | grep -q 'P   N   G' ||
            echo 'no PNG signature')"
    want="scale,method,order,run,load_ns,scale_ns,release_ns,write_ns,load_minflt,load_majflt,scale_minflt,scale_majflt,release_minflt,release_majflt,write_minflt,write_majflt,io,threads,cache,page_cache,cached_pages,total_pages,retries,folio_kib,image,output,cpus"
    result "$cache: runs.csv columns" \
        "$([[ $(head -n 1 "$out/runs.csv") == "$want" ]] || echo 'header differs')"
    rows=$(($(wc -l <"$out/runs.csv") - 1))
    result "$cache: runs.csv has 3 scales x 2 methods x 2 runs rows" \
        "$( ((rows == 12)) || echo "$rows rows")"
    result "$cache: every run used the asked I/O path and cache" \
        "$(awk -F, -v cache="$cache" 'NR > 1 && ($17 != $2 || $19 != cache) { print "row " NR ": " $0; exit }' "$out/runs.csv")"
    result "$cache: runs alternate (odd read first, even mmap first)" \
        "$(awk -F, 'NR > 1 && (($4 % 2) ? "read_first" : "mmap_first") != $3 { print "row " NR; exit }' "$out/runs.csv")"
    srows=$(($(wc -l <"$out/summary.csv") - 1))
    result "$cache: summary.csv has one row a scale" \
        "$( ((srows == 3)) || echo "$srows rows")"
    result "$cache: summary ratios agree with runs.csv" \
        "$(ratio_check "$out/runs.csv" "$out/summary.csv")"
    result "$cache: table1.md names the cache state" \
        "$(grep -q "cache=$cache, page_cache=small" "$out/table1.md" || echo 'not found')"
    # the input: line is the copy the runs read, beside the fault-around
    # probe; the settings say what it was copied from, in 4 KiB writes
    tmp="${TMPDIR:-/tmp}/scaleppm-exp\.[^/ ]+"
    env_check "$cache" "$out/env.txt" "$tmp" "$tmp/input\.ppm"
    result "$cache: env.txt names the image copied and the writes' size" \
        "$(grep -qE "^settings: .* input_copied_from=$root/images/gen320x256\.ppm copy_write_bytes=4096 " \
            "$out/env.txt" || echo 'not found')"
    result "$cache: table1.md has a row a scale" \
        "$(n=$(grep -cE '^\| -?[0-9]+\*? \| [0-9]+/[0-9]+ \|' "$out/table1.md"); ((n == 3)) || echo "$n rows")"
done

# The study's span: no output written (scaleppm --no-output), the write
# phase zero in every row; --sun-output file, the second case, writes one
# each run; --sun-cpus 1 runs scaleppm on one CPU.  Each says so in
# runs.csv, env.txt's settings and table1.md's heading.
ncpu=$(nproc)
span_check() {
    local name=$1 output=$2 cpus=$3 list=$4 words=$5 out=$work/$1
    result "$name: every run's output and CPUs in runs.csv" \
        "$(awk -F, -v o="$output" -v c="$cpus" 'NR > 1 && ($26 != o || $27 != c) { print "row " NR ": " $26 "," $27; exit }' "$out/runs.csv" 2>/dev/null)"
    result "$name: the write phase $([[ $output == none ]] && echo zero || echo timed)" \
        "$(awk -F, -v o="$output" 'NR > 1 && (o == "none" ? ($8 != 0 || $15 != 0 || $16 != 0) : !($8 > 0)) { print "row " NR ": write_ns " $8; exit }' "$out/runs.csv" 2>/dev/null)"
    result "$name: env.txt's settings say what was written and the CPUs" \
        "$(grep -qE "^settings: .* output=$output timed=load\+scale\+release cpus=$cpus cpu_list=$list " "$out/env.txt" 2>/dev/null || echo 'not found')"
    result "$name: table1.md's heading names the case" \
        "$(grep -qF "mmap/scale/free ($words" "$out/table1.md" 2>/dev/null || echo "no \"$words\"")"
}
span_check warm none "$ncpu" all "no output written, as 2002; $ncpu CPU"
for kase in "output --sun-output file" "onecpu --sun-cpus 1"; do
    read -r name opt val <<<"$kase"
    "$root/run_experiments.sh" --quick --bin "$build" "$opt" "$val" \
        --out "$work/$name" >"$work/$name.log" 2>&1 ||
        result "run_experiments.sh --quick $opt $val" \
            "exit $?: $(tail -n 3 "$work/$name.log" | tr '\n' ' ')"
done
span_check output file "$ncpu" all "output written to a file; $ncpu CPU"
span_check onecpu none 1 0 "no output written, as 2002; 1 CPU)"
for bad in "--sun-output bogus" "--sun-cpus 0" "--sun-cpus $((ncpu + 1))" \
    "--suite paths --sun-output file"; do
    # shellcheck disable=SC2086  # the words are the options
    "$root/run_experiments.sh" --quick --bin "$build" $bad \
        --out "$work/bad" >"$work/bad.log" 2>&1 && rc=0 || rc=$?
    result "run_experiments.sh $bad: refused, nothing run" \
        "$( ((rc == 1)) && [[ ! -e $work/bad ]] || echo "exit $rc: $(head -n 1 "$work/bad.log")")"
done

# Cold runs start with the input evicted, and that was checked.
result "cold: no input page cached before any run" \
    "$(awk -F, 'NR > 1 && $21 * 100 > $22 { print "row " NR ": " $21 " of " $22 " pages cached"; exit }' "$work/cold/runs.csv" 2>/dev/null)"
result "warm: every input page cached before every run" \
    "$(awk -F, 'NR > 1 && $21 != $22 { print "row " NR ": " $21 " of " $22; exit }' "$work/warm/runs.csv" 2>/dev/null)"
result "warm: re-reads counted, folio size measured (4 KiB writes: 4)" \
    "$(awk -F, 'NR > 1 && ($23 !~ /^[0-5]$/ || ($24 != 4 && $24 != "?")) { print "row " NR ": " $23 ", " $24; exit }' "$work/warm/runs.csv" 2>/dev/null)"
result "env.txt records the order's seed, the order and fault-around" \
    "$(grep -qE 'order_seed=[0-9]+ order=-?[0-9]+(,-?[0-9]+)* fault_around_pages=' "$work/warm/env.txt" || echo 'not found')"

# The factors run in an order drawn from --seed: the same seed, the same
# order; the orders of other seeds are not all the same.
orders="" k=0
for seed in 1 1 2 3 4; do
    k=$((k + 1))
    "$root/run_experiments.sh" --quick --bin "$build" --runs 1 \
        --scales -2,-3,-4,2,3 --seed "$seed" --out "$work/seed-$k" \
        >/dev/null 2>&1 || true
    orders+="$(sed -n 's/.* order=\([^ ]*\) .*/\1/p' "$work/seed-$k/env.txt");"
done
IFS=';' read -r -a o <<<"$orders"
result "--seed: the same seed gives the same order" \
    "$([[ -n ${o[0]} && ${o[0]} == "${o[1]}" ]] || echo "${o[0]} then ${o[1]}")"
result "--seed: other seeds give other orders" \
    "$([[ ${o[2]} != "${o[1]}" || ${o[3]} != "${o[1]}" || ${o[4]} != "${o[1]}" ]] || echo "all ${o[1]}")"

# A run never writes over another's results: an --out that holds
# anything is refused before a run starts, and what it holds is kept.
"$root/run_experiments.sh" --quick --bin "$build" --out "$work/seed-1" \
    >"$work/again.log" 2>&1 && echo "the run went on" >>"$work/again.log"
result "--out: a folder with results is refused, what it holds kept" \
    "$(if grep -q 'not empty; results are never written over' \
        "$work/again.log" && [[ $(sed -n 's/.* order=\([^ ]*\) .*/\1/p' \
        "$work/seed-1/env.txt") == "${o[0]}" ]]; then :; else
        cat "$work/again.log"; fi)"

# The time left that the study prints (sun_eta), on cases timed as the
# committed machine times them (a fixed 6.5 ms and 3.2 GB/s a run, 22
# runs a case; 1280x1024; the orders of 30 seeds): within 25% of the
# truth from the first tenth of the run on; and never 0 while a case is
# left.
input=$work/eta.ppm cache=warm
head -c 3932175 /dev/zero >"$input"
# shellcheck source=scripts/sun.sh
. "$root/scripts/sun.sh"
eta_worst() {
    local seed order i s cost t total elapsed lines left truth worst=0
    for seed in $(seq 1 30); do
        mapfile -t order < <(sun_shuffle "$seed" "-2,-3,-4,-5,-6,-7,-8,2,3,4,5,6,7,8")
        local -a costs=() times=()
        total=0
        for s in "${order[@]}"; do
            cost=$(sun_cost "$s")
            t=$(awk -v c="$cost" 'BEGIN { printf "%d", 22 * (6.5e-3 + c / 3.2e9) * 1e9 }')
            costs+=("$cost") times+=("$t") total=$((total + t))
        done
        elapsed=0 lines=()
        for ((i = 1; i < ${#order[@]}; i++)); do
            elapsed=$((elapsed + times[i - 1]))
            lines+=("done ${costs[i - 1]} ${times[i - 1]}")
            ((elapsed * 10 >= total)) || continue
            left=$({ printf '%s\n' "${lines[@]}"; printf 'todo %s\n' "${costs[@]:i}"; } | sun_eta)
            truth=$(((total - elapsed) / 1000000))
            worst=$(awk -v l="$left" -v t="$truth" -v w="$worst" \
                'BEGIN { e = l * 1000 / t - 1; e = e < 0 ? -e : e
                         if (l + 0 == 0) e = 9; print (e > w ? e : w) }')
        done
    done
    echo "$worst"
}
worst=$(eta_worst)
result "the time left: within 25% from the first tenth of the run" \
    "$(awk -v w="$worst" 'BEGIN { if (w > 0.25) print "worst error " w }')"

# The three load paths side by side (--suite paths --quick): two images,
# eight jobs warm and three cold each, three paths, two rounds.
if "$root/run_experiments.sh" --suite paths --quick --bin "$build" \
    --out "$work/paths" >"$work/paths.log" 2>&1; then
    result "run_experiments.sh --suite paths --quick" ""
    csv=$work/paths/paths.csv
    result "paths: CSV header" \
        "$([[ $(head -n 1 "$csv") == size,job,cache,io,round,span_ns,load_ns,scale_ns,release_ns,minflt,wall_ns,maxrss_kb,threads ]] ||
            echo 'header differs')"
    result "paths: 2 x (8 + 3) jobs x 3 paths x 2 rounds rows" \
        "$(n=$(($(wc -l <"$csv") - 1)); ((n == 132)) || echo "$n rows")"
    result "paths: every row's span is its load + scale + release" \
        "$(awk -F, 'NR > 1 && $6 != $7 + $8 + $9 { print "row " NR; exit }' "$csv")"
    result "paths: each path once a round" \
        "$(awk -F, 'NR > 1 { n[$1 $2 $3 $5 $4]++ } END { for (k in n) if (n[k] != 1) { print k; exit } }' "$csv")"
    result "paths: a table row a job, warm and cold" \
        "$(n=$(grep -cE '^\| [^|]* \| (reduce|box|enlarge|copy)' "$work/paths/paths.md"); ((n == 22)) || echo "$n rows")"
    env_check paths "$work/paths/env.txt" "$root/images" \
        "$root/images/gen320x256\.ppm" "$root/images/gen64x64\.ppm"
else
    result "run_experiments.sh --suite paths --quick" \
        "$(tail -n 3 "$work/paths.log" | tr '\n' ' ')"
fi

# The default threads against -t 1..8 (--suite threads --quick, 1
# round): 2 images, 5 + 3 jobs, 3 outputs, 2 loads, 5 variants, and the
# two pipe targets' peers (where they are installed).
if "$root/run_experiments.sh" --suite threads --quick --runs 1 \
    --bin "$build" --out "$work/threads" >"$work/threads.log" 2>&1; then
    result "run_experiments.sh --suite threads --quick" ""
    csv=$work/threads/threads.csv
    result "threads: CSV header" \
        "$([[ $(head -n 1 "$csv") == image,job,output,load,contender,round,wall_ns,rss_kb ]] ||
            echo 'header differs')"
    result "threads: (5 + 3) jobs x 3 outputs x 2 loads x 5 variants" \
        "$(n=$(grep -cvE '^image|,(vips-zoom|pamenlarge|floor-[a-z]+),' "$csv"); ((n == 240)) || echo "$n rows")"
    result "threads: a table row a case" \
        "$(n=$(grep -cE '^\| [0-9]+x[0-9]+ \| [a-z]+ [0-9] \| (pipe|tmpfs|disk) ' "$work/threads/threads.md"); ((n == 48)) || echo "$n rows")"
    env_check threads "$work/threads/env.txt" "$root/images" \
        "$root/images/gen320x256\.ppm" "$root/images/gen2000x1500\.ppm"
else
    result "run_experiments.sh --suite threads --quick" \
        "$(tail -n 3 "$work/threads.log" | tr '\n' ' ')"
fi

# The batch against its peers and the study's set (--suite batch
# --quick, 2 rounds): 20 images reduced and 3 enlarged by 5 contenders,
# the batch alone on 200 names; 2 sets x 2 caches x 4 loads of 8 images.
# As session 2: the contenders' rotation goes on from session 1's 2
# rounds.
if "$root/run_experiments.sh" --suite batch --quick --bin "$build" \
    --session 2 --out "$work/batch" >"$work/batch.log" 2>&1; then
    result "run_experiments.sh --suite batch --quick" ""
    b=$work/batch
    for f in batch.csv batch-set.csv batch-set-runs.csv batch.md batch.png \
        batch-set.png env.txt; do
        result "batch: $f written" "$([[ -s $b/$f ]] || echo missing)"
    done
    h1=image,files,job,contender,round,wall_ns,rss_kb
    h2=set,files,cache,load,round,wall_ns,rss_kb,retries
    h3=set,cache,load,round,file,span_ns,load_ns,scale_ns,release_ns
    h3+=,write_ns,minflt,majflt,threads
    result "batch: CSV headers" \
        "$([[ $(head -n 1 "$b/batch.csv") == "$h1" &&
            $(head -n 1 "$b/batch-set-runs.csv") == "$h2" &&
            $(head -n 1 "$b/batch-set.csv") == "$h3" ]] ||
            echo 'a header differs')"
    result "batch: (5 + 5 + 1) contenders x 2 rounds, each once a round" \
        "$(awk -F, 'NR > 1 { n++; k[$1 $2 $3 $4 "," $5]++ }
            END { if (n != 22) print n " rows"
                  for (x in k) if (k[x] != 1) { print x; exit } }' \
            "$b/batch.csv")"
    result "batch: the order rotated by one a round, on from session 1" \
        "$(awk -F, '$2 == 20 && !(($5) in first) { first[$5] = $4 }
            END { if (first[1] != "parallel" || first[2] != "gm-mogrify")
                      print first[1] ", " first[2] }' "$b/batch.csv")"
    result "batch: env.txt records the start, the session and the warm-up" \
        "$(grep -q '^started: ' "$b/env.txt" &&
            grep -q '^session: k=2 order_seed=[0-9]* rotation_offset=2$' \
                "$b/env.txt" && grep -q ' warmup_rounds=1 ' "$b/env.txt" ||
            echo 'not found')"
    result "batch: the warm-up round is not recorded" \
        "$(awk -F, 'NR > 1 && $5 == 0 { print "row " NR; exit }' \
            "$b/batch.csv")"
    result "batch: 2 sets x 2 caches x 4 loads x 2 rounds of 8 images" \
        "$(n=$(($(wc -l <"$b/batch-set-runs.csv") - 1))
            m=$(($(wc -l <"$b/batch-set.csv") - 1))
            ((n == 32 && m == 256)) || echo "$n processes, $m images")"
    result "batch: every image's span is its load + scale + release" \
        "$(awk -F, 'NR > 1 && ($6 != $7 + $8 + $9 || $13 < 1) {
                print "row " NR; exit }' "$b/batch-set.csv")"
    result "batch: the tables' rows" \
        "$(n=$(grep -cE '^\| (320x256|600x400)? ?\|' "$b/batch.md")
            m=$(grep -cE '^\| (homo|hetero)geneous \| (warm|cold) \|' \
                "$b/batch.md")
            ((n == 10 + 2 && m == 16)) ||
                echo "$n peer and memory rows, $m set rows")"
    result "batch: env.txt records the suite's settings" \
        "$(grep -q 'settings: suite=batch runs=2 quick=1 reduce=320x256x20' \
            "$b/env.txt" || echo 'not found')"
    env_check batch "$b/env.txt" "$root/images" "$root/images/gen320x256\.ppm"
else
    result "run_experiments.sh --suite batch --quick" \
        "$(tail -n 3 "$work/batch.log" | tr '\n' ' ')"
fi

# The paths' study on compressed inputs (--suite compressed --quick, 1
# round): 2 images x 3 formats x 2 caches x 2 jobs x 3 paths.
if "$root/run_experiments.sh" --suite compressed --quick --runs 1 \
    --bin "$build" --out "$work/compressed" >"$work/compressed.log" 2>&1
then
    result "run_experiments.sh --suite compressed --quick" ""
    csv=$work/compressed/compressed.csv
    result "compressed: CSV header" \
        "$([[ $(head -n 1 "$csv") == input,format,size,job,cache,io,round,span_ns,load_ns,scale_ns,release_ns,minflt,wall_ns,maxrss_kb,threads,io_used ]] ||
            echo 'header differs')"
    result "compressed: 2 x 3 x 2 x 2 x 3 rows, span = load + scale + release" \
        "$(awk -F, 'NR > 1 { n++; if ($8 != $9 + $10 + $11) print "row " NR }
            END { if (n != 72) print n " rows" }' "$csv" | head -n 1)"
    result "compressed: mmap mapped every format" \
        "$(awk -F, 'NR > 1 && $6 == "mmap" && $16 != "mmap" { print "row " NR; exit }' "$csv")"
    result "compressed: a table row a case" \
        "$(n=$(grep -cE '^\| ([^|]+ )?\| (ppm|jpeg|png) \| reduce' \
            "$work/compressed/compressed.md"); ((n == 24)) || echo "$n rows")"
    # every file the runs read, each image as PPM, JPEG and PNG, in the
    # suite's scratch folder
    t='/[^ ]*/scaleppm-compressed\.[A-Za-z0-9]+'
    env_check compressed "$work/compressed/env.txt" "$t" "$t/sun\.ppm" \
        "$t/sun\.jpg" "$t/sun\.png" "$t/photo\.ppm" "$t/photo\.jpg" \
        "$t/photo\.png"
else
    result "run_experiments.sh --suite compressed --quick" \
        "$(tail -n 3 "$work/compressed.log" | tr '\n' ' ')"
fi

# Issue 28's targets (--suite photos --quick, 2 rounds): 8 generated
# images; the encoders on 2 images (the thumbnails where --fit exists).
if "$root/run_experiments.sh" --suite photos --quick --runs 2 \
    --bin "$build" --out "$work/photos" >"$work/photos.log" 2>&1; then
    result "run_experiments.sh --suite photos --quick" ""
    p=$work/photos
    result "photos: 8 images listed" \
        "$(n=$(($(wc -l <"$p/photos.csv") - 1)); ((n == 8)) || echo "$n")"
    result "photos: 2 images x 7 encoders x 2 rounds, each once a round" \
        "$(awk -F, 'NR > 1 { n++; k[$1 "," $2 "," $3]++ }
            END { if (n != 28) print n " rows"
                  for (x in k) if (k[x] != 1) { print x; exit } }' \
            "$p/photos-encode.csv")"
    result "photos: the thumbnails run where --fit exists, else said" \
        "$(n=$(($(wc -l <"$p/photos-thumbs.csv") - 1))
            if "$build/src/scaleppm" --help | grep -- --fit >/dev/null; then
                ((n == 4)) || echo "$n thumbnail rows"
            else
                grep -q 'thumbs=skipped-no-fit' "$p/env.txt" ||
                    echo 'not said in env.txt'
            fi)"
    result "photos: a table row an encoder and a targets line" \
        "$(n=$(grep -cE '^\| ([^|]+ )?\| (scaleppm-|pamtopng|magick|gm|vips)' \
            "$p/photos.md"); ((n == 14)) || echo "$n rows"
            grep -qE '^Targets met: [0-9]+ of [0-9]+' "$p/photos.md" ||
                echo 'no targets line')"
    t='/[^ ]*/scaleppm-photos\.[A-Za-z0-9]+'
    env_check photos "$p/env.txt" "$root/images" \
        "$root/images/sun1280x1024\.ppm" "$t/big\.ppm" \
        "$t/photos/[^,]+\.(jpg|jpeg|png)"
else
    result "run_experiments.sh --suite photos --quick" \
        "$(tail -n 3 "$work/photos.log" | tr '\n' ' ')"
fi

# Whether scaleppm has --fit, asked of a help that names it first and
# goes on past a pipe's buffer (scaleppm's own is two writes): the rest
# of the help must not be a SIGPIPE that pipefail takes for a "no".
printf '#!/bin/sh\necho "  --fit WxH"\nhead -c 1000000 /dev/zero | tr "\\0" x\n' \
    >"$work/longhelp"
chmod +x "$work/longhelp"
result "photos: --fit found in a help longer than a pipe's buffer" \
    "$(# shellcheck source=/dev/null  # its globals are not this script's
        . "$root/scripts/photos.sh"
        photos_can "$work/longhelp" --fit || echo 'not found')"

# Issue 29's experiment (--suite server --quick): 1 MiB images, W = 1
# and 4, three groups of cells (one in a memory cgroup, as root), the Sun
# study's image at W = 8 against the CGI and nginx, the open-loop runs;
# every answer's bytes the command line's.
result "spload --hash: FNV-1a 64 of \"a\" (no whole word)" \
    "$(h=$(printf a | "$build/src/spload" --hash /dev/stdin)
        [[ $h == af63dc4c8601ec8c ]] || echo "$h")"
# two words and a byte, the first word split between two reads (the
# value from the definition in spload.c, worked in Python)
result "spload --hash: words across reads, then the tail's bytes" \
    "$(h=$( (printf abc; sleep 0.2; printf defghijklmnopq) |
        "$build/src/spload" --hash /dev/stdin)
        [[ $h == 196b4e73945806f4 ]] || echo "$h")"
if "$root/run_experiments.sh" --suite server --quick --bin "$build" \
    --out "$work/server" >"$work/server.log" 2>&1; then
    result "run_experiments.sh --suite server --quick" ""
    p=$work/server
    groups=2
    grep -q 'cgroups=yes' "$p/env.txt" && groups=3
    result "server: $groups groups x 2 W x 3 paths rows, and the Sun's" \
        "$(n=$(grep -vc '^sun,' "$p/server.csv"); ((n == groups * 6 + 1)) ||
            echo "$((n - 1)) rows"
            grep -q 'cgroups=yes' "$p/env.txt" ||
                grep -q 'memory-limited groups are skipped' "$p/../server.log" ||
                echo 'no cgroup, and not said')"
    result "server: every cell answered, 2xx throughput above 0" \
        "$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
            $c["requests"] < 1 || $c["rps"] <= 0 { print "row " NR; exit }' \
            "$p/server.csv")"
    result "server: the CGI baseline ran at W = 8" \
        "$(n=$(grep -c '^sun,.*,cgi,8,' "$p/server.csv"); ((n == 1)) || echo "$n")"
    result "server: nginx serving the answer from a file, at W = 8" \
        "$(command -v nginx >/dev/null || exit 0
            n=$(grep -c '^sun,.*,nginx-static,8,' "$p/server.csv"); ((n == 1)) || echo "$n")"
    result "server: each path's phases, 5 requests, job = the phases' sum" \
        "$(awk -F, 'NR > 1 { n[$2]++
                d = $9 - ($5 + $6 + $7 + $8); if (d < 0) d = -d
                if ($9 <= 0 || $5 < 0 || d > 0.0015) bad = bad " " $2 ":" $4 }
            END { for (p in n) if (n[p] != 5) bad = bad " " p "=" n[p]
                if (length(n) != 3) bad = bad " " length(n) " paths"
                printf "%s", bad }' "$p/server-timing.csv")"
    result "server: 9 open-loop runs, no error, no differing answer" \
        "$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
            { n++ } $c["errors"] + $c["timeouts"] + $c["mismatched"] > 0 ||
            $c["bodies"] < 1 { print "row " NR; exit }
            END { if (n != 9) print n " runs" }' "$p/server-latency.csv")"
    result "server: every answer of the set checked against the command line" \
        "$(awk -F, 'NR > 1 && $1 == "set" { k[$4]++ }
            END { if (length(k) != 12) print length(k) " targets" }' \
            "$p/server-bodies.csv")"
    result "server: a targets line, and the report made again the same" \
        "$(grep -qE '^Targets met: [0-9]+ of [0-9]+' "$p/server.md" ||
            echo 'no targets line'
            cp "$p/server.md" "$work/server.md.first"
            (cd "$root/scripts" && /usr/bin/python3 -m spreport server "$p") &&
                cmp -s "$p/server.md" "$work/server.md.first" ||
                echo 'spreport server differs')"
else
    result "run_experiments.sh --suite server --quick" \
        "$(tail -n 3 "$work/server.log" | tr '\n' ' ')"
fi

# iobench_read_check SUITE OUT: OUT/env.txt names the file SUITE read
# (recorded before iobench's --keep left it to be deleted) with the size
# its rows' file_bytes give, its file system and folios, and the
# fault-around probed in its folder; zero-page reads none; the figure's
# title, as the report makes it from the rows, names the size and the
# threads.  Prints what is wrong.
iobench_read_check() {
    local suite=$1 out=$2 env=$2/env.txt bytes dir title
    bytes=$(awk -F, 'NR > 1 && $10 != "" { print $10 }' "$out/$suite.csv" |
        sort -u)
    dir="${TMPDIR:-/tmp}/scaleppm-exp\\.[^ /]+"
    if [[ $suite == zero-page ]]; then
        [[ -z $bytes ]] || echo "file_bytes $bytes, though it reads no file"
        grep -qx 'suite zero-page read no file' "$env" ||
            echo "no line saying it read no file"
    elif [[ $(wc -w <<<"$bytes") != 1 ]]; then
        echo "file_bytes: '$bytes', not one size"
    else
        sed -n "/^suite $suite read, recorded when it ended/,\$p" "$env" |
            awk -v d="$dir" -v b="$bytes" '
                NR == 2 && $0 ~ "^input: " d "/iobench-[^ ]+, " b " bytes$" { i = 1 }
                NR == 3 && /^filesystem of the input: [^ ]+ on / { f = 1 }
                NR == 4 && /^folios of the cached input, measured \(KiB:count\): [0-9]+:[0-9]+/ { c = 1 }
                NR == 5 && $0 ~ "^fault-around, measured: [0-9]+ pages a read fault \\(a cached 8 MiB file in " d ", on " { a = 1 }
                END { if (NR == 0) print "no block of the file read"
                      else if (!i) print "no input line of " b " bytes"
                      else if (!f) print "no filesystem line"
                      else if (!c) print "no folios measured"
                      else if (!a) print "no fault-around beside the input" }'
    fi
    awk -F, 'NR > 1 && $11 != 1 { print "row " NR ": threads " $11; exit }' \
        "$out/$suite.csv"
    title=$(cd "$root/scripts" && /usr/bin/python3 -c '
import sys
from spreport import iobench
print(iobench.input_words(iobench.read_measurements(sys.argv[1])))' \
        "$out/$suite.csv")
    [[ $title == *", 1 thread" && ($suite == zero-page || $title == file\ *) ]] ||
        echo "the title would say '$title'"
}

# iobench's experiments, each --quick: its three files, the fixed header,
# and every measured row verified.
for suite in syscall-vs-mmap zero-page random-access copy cdb; do
    out=$work/$suite
    if ! "$root/run_experiments.sh" --suite "$suite" --quick --bin "$build" \
        --out "$out" >"$work/$suite.log" 2>&1; then
        result "run_experiments.sh --suite $suite --quick" \
            "$(tail -n 3 "$work/$suite.log" | tr '\n' ' ')"
        continue
    fi
    result "run_experiments.sh --suite $suite --quick" ""
    for f in "$suite.csv" "$suite.md" "$suite.png" env.txt; do
        result "$suite: $f written" "$([[ -s $out/$f ]] || echo missing)"
    done
    # the file iobench made and read, recorded as it ended: in detail in
    # iobench_read_check
    if [[ $suite == zero-page ]]; then
        env_check "$suite" "$out/env.txt" "${TMPDIR:-/tmp}"
    else
        env_check "$suite" "$out/env.txt" "${TMPDIR:-/tmp}" \
            "${TMPDIR:-/tmp}/scaleppm-exp\\.[^ /]+/iobench-[^ ]+"
    fi
    result "$suite: env.txt names the file read, its size, folios and fault-around; the title its size and threads" \
        "$(iobench_read_check "$suite" "$out")"
    result "$suite: CSV header" \
        "$([[ $(head -n 1 "$out/$suite.csv") == experiment,case,param,method,metric,value,unit,seed,check,file_bytes,threads ]] ||
            echo 'header differs')"
    result "$suite: rows, all of this experiment, every measurement checked" \
        "$(awk -F, -v s="$suite" 'NR > 1 { n++ }
            NR > 1 && ($1 != s || NF != 11) { print "row " NR ": " $0; exit }
            NR > 1 && $5 != "ratio" && $9 != "ok" { print "row " NR " not checked: " $0; exit }
            END { if (n == 0) print "no rows" }' "$out/$suite.csv")"
    # One table row a measurement (experiment, case, param, method,
    # metric), however many repeats of it the CSV holds.
    result "$suite: one table row a measurement" \
        "$(rows=$(grep -c '^| [a-z]' "$out/$suite.md")
            csv=$(tail -n +2 "$out/$suite.csv" | cut -d, -f1-5 | sort -u | wc -l)
            ((rows == csv + 1)) || echo "$rows table rows (with the header), $csv measurements")"
done

# has_rows CSV CASE METRIC PARAMS METHOD...: for each method and param
# (space-separated), a checked row of CASE and METRIC; prints what is
# missing.
has_rows() {
    local csv=$1 kase=$2 metric=$3 params=$4
    shift 4
    awk -F, -v k="$kase" -v m="$metric" -v ps="$params" -v ms="$*" '
        $2 == k && $5 == m && $9 == "ok" { seen[$3, $4] = 1 }
        END { np = split(ps, p, " "); nm = split(ms, me, " ")
              for (i = 1; i <= np; i++) for (j = 1; j <= nm; j++)
                  if (!((p[i], me[j]) in seen))
                      printf "no %s %s %s row at %s; ", k, me[j], m, p[i] }' "$csv"
}

# The seed-like-for-like additions, each method and case there and
# checked.
blocks="4096 8192 16384 65536 1048576"
csv=$work/syscall-vs-mmap/syscall-vs-mmap.csv
for kase in seq-warm rand-warm seq-cold rand-cold; do
    result "syscall-vs-mmap: $kase has read, mmap and fread" \
        "$(has_rows "$csv" "$kase" throughput "$blocks" read mmap fread)"
done
copies=(read mmap_memcpy anon_memcpy)
[[ $(uname -m) == x86_64 ]] && copies+=(mmap_movsb)
result "syscall-vs-mmap: copy bandwidth rows (kernel copy, user copies)" \
    "$(has_rows "$csv" bandwidth bandwidth "$blocks" "${copies[@]}")"
csv=$work/random-access/random-access.csv
for kase in random-read iterate; do
    result "random-access: $kase has pread, mmap and fread" \
        "$(has_rows "$csv" "$kase" latency 0 pread mmap fread)"
done
for kase in write-resident write-nonresident; do
    result "random-access: $kase has pwrite, mmap and fwrite" \
        "$(has_rows "$csv" "$kase" latency 0 pwrite mmap fwrite)"
done
csv=$work/copy/copy.csv
for kase in copy copy-nofsync; do
    result "copy: case $kase, every method" \
        "$(has_rows "$csv" "$kase" real 0 cp mmap_copy mmap_copy_seq \
            mmap_copy_willneed copy_file_range
            has_rows "$csv" "$kase" real 1048576 read_write mmap_write \
                mmap_write_seq)"
done
csv=$work/cdb/cdb.csv
for kase in warm cold; do
    result "cdb: $kase lookups each way, against the seed's 1200 ns and 25x" \
        "$(has_rows "$csv" "$kase" latency 20000 seek mmap)$(awk -F, -v k="$kase" '
            $2 == k && $4 == "seek" && $8 != 1200 { print "seek seed " $8 }
            $2 == k && $4 == "seek/mmap" && $8 != 25 { print "ratio seed " $8 }' "$csv")"
done

# --reps N: N rows of every key, one a repeat.
for exp in cdb zero-page; do
    if "$build/src/iobench" --dir "$work" --quick --reps 2 "$exp" \
        >"$work/reps-$exp.csv" 2>"$work/reps-$exp.log"; then
        result "iobench --reps 2 $exp: two rows of every key" \
            "$(awk -F, 'NR > 1 { n[$1 "," $2 "," $3 "," $4 "," $5]++ }
                END { for (k in n) if (n[k] != 2) { print k ": " n[k] " rows"; exit } }' \
                "$work/reps-$exp.csv")"
    else
        result "iobench --reps 2 $exp" "$(head -n 1 "$work/reps-$exp.log")"
    fi
done

# Larger than memory: syscall-vs-mmap in a cgroup whose limit is two thirds
# of the file, which names its cases *-memlimit; the group is gone
# afterwards.  32 MiB leaves room for a sanitizer build's own memory.
# shellcheck source=scripts/seeds.sh
. "$root/scripts/seeds.sh"
if ((EUID != 0)) || ! probe=$(sp_memcg_create 67108864 2>/dev/null); then
    skip "syscall-vs-mmap under a memory limit" "no memory cgroup to make (root?)"
else
    sp_memcg_remove "$probe"
    out=$work/memlimit
    # the groups of other runs on this machine (a server suite's) are theirs
    groups_before=$(find /sys/fs/cgroup -maxdepth 6 -name 'scaleppm-memlimit-*' \
        2>/dev/null | sort)
    if "$root/run_experiments.sh" --suite syscall-vs-mmap --bin "$build" \
        --file-size 50331648 --mem-limit 33554432 --out "$out" \
        >"$work/memlimit.log" 2>&1; then
        result "syscall-vs-mmap --mem-limit: cases *-memlimit, checked" \
            "$(has_rows "$out/syscall-vs-mmap.csv" rand-cold-memlimit throughput \
                "$blocks" read mmap fread)"
        result "syscall-vs-mmap --mem-limit: the cgroup is removed" \
            "$(comm -13 <(printf '%s\n' "$groups_before") <(find /sys/fs/cgroup \
                -maxdepth 6 -name 'scaleppm-memlimit-*' 2>/dev/null | sort))"
    else
        result "run_experiments.sh --suite syscall-vs-mmap --mem-limit" \
            "$(tail -n 3 "$work/memlimit.log" | tr '\n' ' ')"
    fi
fi

# --perf: where the CPU time went, a line a function.
if ! command -v perf >/dev/null 2>&1; then
    skip "run_experiments.sh --suite syscall-vs-mmap --perf" "no perf"
elif "$root/run_experiments.sh" --suite syscall-vs-mmap --quick --perf \
    --bin "$build" --out "$work/perf" >"$work/perf.log" 2>&1; then
    result "syscall-vs-mmap --perf: a profile with the user memcpy in it" \
        "$(grep -q 'memmove\|memcpy' "$work/perf/syscall-vs-mmap-perf.txt" ||
            echo "no memmove or memcpy line")"
else
    result "run_experiments.sh --suite syscall-vs-mmap --perf" \
        "$(tail -n 3 "$work/perf.log" | tr '\n' ' ')"
fi

# The durable-replacement suite: both sizes, both cases, alternating, and a
# table row a size whose figures are the medians of its rows.
out=$work/durable
if ! "$root/run_experiments.sh" --suite durable --quick --runs 2 --bin "$build" \
    --out "$out" >"$work/durable.log" 2>&1; then
    result "run_experiments.sh --suite durable --quick" \
        "$(tail -n 3 "$work/durable.log" | tr '\n' ' ')"
else
    result "run_experiments.sh --suite durable --quick" ""
    result "durable: rows alternate, 2 sizes x 2 cases x 2 rounds" \
        "$(awk -F, 'NR > 1 { n++; k[$1] = k[$1] $2 "," }
            END { if (n != 8) print n " rows"
                  for (s in k) if (k[s] != "new,replace,replace,new,") print s ": " k[s] }' \
            "$out/durable.csv")"
    result "durable: the table's medians are the rows'" \
        "$(awk -F, 'NR > 1 && $1 == "320x256" { t[$2] += $4 / 2e6 }
            END { printf "%.1f %.1f\n", t["new"], t["replace"] }' "$out/durable.csv" |
            { read -r n r; grep -q "^| 320x256 | 245775 | 2 | $n | $r |" "$out/durable.md" ||
                echo "no row '| 320x256 | 245775 | 2 | $n | $r |'"; })"
    env_check durable "$out/env.txt" "$root/images" "$root/images/gen320x256\.ppm" \
        "$root/images/gen2000x1500\.ppm"
fi

# Bad options are usage errors.
for args in "--cache tepid" "--runs 0" "--scales x" "--size 10" "--suite nope" \
    "--file-size 1k" "--reps 0" "--suite copy --mem-limit 1000"; do
    # shellcheck disable=SC2086
    "$root/run_experiments.sh" --bin "$build" $args >/dev/null 2>&1 && rc=0 || rc=$?
    result "run_experiments.sh $args is refused" "$( ((rc != 0)) || echo 'exit 0')"
done

finish
