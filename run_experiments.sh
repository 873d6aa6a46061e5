#!/usr/bin/env bash
# run_experiments.sh: reproduce the Sun Microsystems 2002 study "A Performance
# Comparison of read and mmap" on this machine: Table 1 and Figure 1.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=scripts/setup.sh
. "$ROOT/scripts/setup.sh"
# shellcheck source=scripts/report.sh
. "$ROOT/scripts/report.sh"
# shellcheck source=scripts/peers.sh
. "$ROOT/scripts/peers.sh"
# shellcheck source=scripts/durable.sh
. "$ROOT/scripts/durable.sh"
# shellcheck source=scripts/paths.sh
. "$ROOT/scripts/paths.sh"
# shellcheck source=scripts/threads.sh
. "$ROOT/scripts/threads.sh"
# shellcheck source=scripts/batch.sh
. "$ROOT/scripts/batch.sh"
# shellcheck source=scripts/photos.sh
. "$ROOT/scripts/photos.sh"
# shellcheck source=scripts/compressed.sh
. "$ROOT/scripts/compressed.sh"
# shellcheck source=scripts/sun.sh
. "$ROOT/scripts/sun.sh"
# shellcheck source=scripts/server.sh
. "$ROOT/scripts/server.sh"
# shellcheck source=scripts/reference.sh
. "$ROOT/scripts/reference.sh"
# shellcheck source=scripts/seeds.sh
. "$ROOT/scripts/seeds.sh"

usage() {
    cat <<'USAGE'
usage: run_experiments.sh [--suite NAME] [options]
       run_experiments.sh --reference [--quick] [--out DIR]

With no options: the Sun 2002 study "A Performance Comparison of read and
mmap" on this machine.  scaleppm loads the study's 1280x1024 image with
read() or with mmap(), scales it by each factor with 10 threads and
releases it, writing no output, as the study did; the time of load +
scale + release is compared, read against mmap.  At the end it prints read/mmap for each factor beside 2002's (above
1: mmap was faster) and where the files are.  A few seconds to a minute.

--suite sun (the default): every scale factor, in an order drawn from
--seed, R runs per I/O method alternating which goes first, each a fresh
process, after one warm-up of each.  A warm input is checked to be wholly
in the page cache before every run.  It writes runs.csv, summary.csv,
table1.md, figure1.png and env.txt (the machine, the commit, the order).

  --image FILE        the input image (default: images/sun1280x1024.ppm,
                      generated: the study's 1280x1024 24-bit PPM)
  --size WxH          generate an image of this size instead
  --threads T         scaleppm threads (default 10, the study's)
  --runs R            runs per method and scale (default 10; 7 rounds
                      for --suite peers, 3 for --suite batch, 5 for
                      --suite photos and compressed)
  --scales LIST       comma-separated factors (default -2,...,-8,2,...,8;
                      negative reduces; the study's are -2,-3,-4,-8)
  --cache warm|cold   warm (default): the input stays in the page cache;
                      cold: it is evicted before every run, and checked
  --page-cache small|large
                      how the input sits in the page cache: written with
                      4 KiB writes (small pages) or 8 MiB writes (large
                      folios, the default); see results/README.md
  --out DIR           a new or empty output folder (default: a new one,
                      runs/DATE-TIME-HOST, which git ignores)
  --session K         this is session K of several (--reference's): the
                      contenders' rotation of the pooled suites starts at
                      round offset (K - 1) x runs, so that over the
                      sessions each contender runs in every position
                      (env.txt's session line)
  --seed N            the seed of the order the factors run in (default:
                      drawn from the clock; env.txt records it)
  --sun-output none|file
                      none (default, as 2002): each run writes nothing
                      (scaleppm --no-output), so the timed load + scale +
                      release has no write in it or beside it; file:
                      each run writes its output to a file, whose write
                      overlaps the scale (a second, named case)
  --sun-cpus N        run scaleppm on the first N CPUs alone (taskset;
                      default: every CPU it may use); 1: the study's 10
                      threads on one CPU, as the Ultra 30 had
  --quick             2 runs, a 320x256 image, scales -2,-4,2: for tests
  --bin DIR           use the scaleppm build in DIR as it is: no package
                      install, no build (the tests use this)
  -h, --help          this help

--suite syscall-vs-mmap|zero-page|random-access|copy|cdb runs that
experiment of iobench (the other four published mmap experiments, and
seed 003's constant-database lookups) and writes SUITE.csv (raw rows),
SUITE.md (ours beside the source's figure) and SUITE.png; --suite all runs
the Sun study and all five. With them:
  --file-size BYTES   the test file's size (default: the experiment's;
                      the seeds': syscall-vs-mmap 4294967296, copy
                      3000000000)
  --reps N            runs of each measured cell, one row each (default 1;
                      copy 3)
  --mem-limit BYTES   syscall-vs-mmap only: run it in a memory cgroup
                      limited to BYTES (needs root); below the file's size
                      its cases are named *-memlimit
  --perf              sample where the CPU time goes (perf record) and
                      write SUITE-perf.txt, a line a function
  --quick             tiny sizes: seconds, for tests

--suite peers times scaleppm against netpbm, libvips, GraphicsMagick and
ImageMagick on images/sun1280x1024.ppm and a 12000x10000 image:
sample reduce by 2, 3, 4, 8, enlarge by 2, 4, box reduce by 2, 4. Every
tool's output is checked against scaleppm's first; then R rounds (--runs,
default 7), the scale phase against the memory floor and its thread
scaling. It writes peers.csv, peers-scale.csv, peers-verify.tsv, peers.md,
peers.png and env.txt. It takes about half an hour, so --suite all leaves
it out. With it:
  --runs R            rounds (default 7)
  --size WxH          this size alone (1280x1024: under a minute)
  --quick             320x256 and 200x150 images, 2 rounds: for tests

--suite durable times the durable replacement of an existing output (its
fsyncs) against writing a new file: scaleppm -s 1 of the 1280x1024 and the
12000x10000 images into $TMPDIR, R rounds (--runs, default 10) alternating
the two. It writes durable.csv, durable.md and env.txt. With it:
  --runs R            rounds (default 10)
  --quick             320x256 and 2000x1500 images: for tests

--suite paths runs scaleppm's three load paths, read, mmap and pread (the
default's), on the same jobs (reduce, box, enlarge, copy) of images from
64x64 to 12000x10000, warm, and the reduces cold: the study's span, the
whole process and its peak memory.  It writes paths.csv, paths.md and
env.txt. With it:
  --runs R            rounds (default 10)
  --quick             64x64 and 320x256 images: for tests

--suite threads times scaleppm's default thread count against -t 1, 2,
4 and 8 on reduce, enlarge and box jobs of the 1280x1024 and 12000x10000
images, into a pipe, a tmpfs file and a file in $TMPDIR, on a quiet
machine and with a busy loop on every CPU; and, into the pipe, enlarge 2
against vips zoom (12000x10000) and pamenlarge (1280x1024).  It writes
threads.csv, threads.md and env.txt. With it:
  --runs R            rounds (default 10)
  --quick             320x256 and 2000x1500 images: for tests

--suite batch times scaleppm's batch mode (-o DIR/) against a shell loop
of scaleppm, GNU parallel, gm mogrify and a loop of vips: 500 different
1280x1024 images reduced by 4 and 20 of 6000x4000 enlarged by 2, into a
folder, warm; the batch's peak memory for 500 and 5000 files; then the
Sun study's set of images, 100 images homogeneous (one file, many
names) and heterogeneous, loaded by read with a fresh buffer, read
reusing it, mmap and pread, warm and cold.  Inputs in $TMPDIR, outputs
on tmpfs (the enlarged ones where memory allows).  It writes batch.csv,
batch-set.csv, batch-set-runs.csv, batch.md, batch.png, batch-set.png and
env.txt.  About six minutes. With it:
  --runs R            rounds (default 3)
  --quick             20 320x256 and 3 600x400 images, 8 a set: for tests

--suite photos times scaleppm on real photographs: the
JPEGs and PNGs of Debian's wallpaper packages (installed if missing, as
root) collected into one folder (photos.csv lists them); every JPEG to a
320x320 thumbnail, scaleppm --fit against vipsthumbnail; the Sun study's
image and the largest photo written as PNG by scaleppm, pamtopng,
ImageMagick, GraphicsMagick and vips, and as JPEG and PPM by scaleppm:
time, size and peak RSS.  It writes photos.csv, photos-thumbs.csv,
photos-encode.csv, photos.md and env.txt.  A few minutes. With it:
  --runs R            rounds (default 5)
  --quick             8 generated images: for tests

--suite compressed runs the paths suite's study on compressed inputs:
read, mmap and pread loading the Sun study's image and the largest photo
as PPM, JPEG and PNG (the decode in the span), warm and cold.  It writes
compressed.csv, compressed.md and env.txt. With it:
  --runs R            rounds (default 5)
  --quick             a 320x256 image and a generated photo: for tests

--suite server puts the study's memory-contention claim to `scaleppm
serve`: W = 1 to 32 requests in flight, each reducing a 64 MiB image by
8, loaded by read, mmap or pread; one file and a set of 32; warm and
cold; with no limit, and in a memory cgroup of 4 images (as root), with
and without --max-memory; load from wrk (closed loop) and spload (open
loop at 80% of the best throughput, every answer's bytes checked against
the command line's); the Sun study's image reduced by 4 against the
command line forked per request (lighttpd CGI) and nginx's image_filter.
It writes server.csv, server-latency.csv, server-bodies.csv, server.md
and env.txt.  About six minutes. With it:
  --quick             1 MiB images, W = 1 and 4: for tests

--reference makes every committed result under results/ again from this
tree: the eight Sun-study folders (1280x1024 and 12000x10000; warm in
large folios, warm in 4 KiB pages, cold; no output written, as 2002; and
at 1280x1024, warm in large folios, the output written to a file, and the
10 threads on one CPU), then the seed suites, paths, durable, peers,
threads, batch and server, each as three separate sessions with their own
seed, interleaved: session 1 of every folder, then session 2, then 3.
Each folder replaces the committed one once complete; stability.md
compares the new verdicts with the committed ones.  Over two hours in
all, so the committed one was made in four parts (--only); with --quick,
tiny sizes into --out (for CI).
  --only LIST         remake only these folders (comma-separated; "sun":
                      every Sun-study folder and the model): for a change
                      that alters what they alone measure, or the
                      reference in parts, each from a clean clone at one
                      commit (results/README.md)
USAGE
}

die() {
    printf 'run_experiments.sh: %s\n' "$*" >&2
    exit 1
}

image="" size="" threads=10 runs="" cache=warm page_cache=large out="" bin=""
suite=sun file_size="" quick=0 order_seed="" reference=0 reps="" mem_limit=""
perf=0 reference_only="" sun_output=none sun_cpus="" session=1
scales="-2,-3,-4,-5,-6,-7,-8,2,3,4,5,6,7,8"
while (($#)); do
    case $1 in
    --image) image=${2:?--image needs a file}; shift 2 ;;
    --size) size=${2:?--size needs WxH}; shift 2 ;;
    --threads) threads=${2:?--threads needs a number}; shift 2 ;;
    --runs) runs=${2:?--runs needs a number}; shift 2 ;;
    --scales) scales=${2:?--scales needs a list}; shift 2 ;;
    --cache) cache=${2:?--cache needs warm or cold}; shift 2 ;;
    --page-cache) page_cache=${2:?--page-cache needs small or large}; shift 2 ;;
    --out) out=${2:?--out needs a folder}; shift 2 ;;
    --quick) runs=2 size=320x256 scales="-2,-4,2" quick=1; shift ;;
    --suite) suite=${2:?--suite needs a name}; shift 2 ;;
    --file-size) file_size=${2:?--file-size needs bytes}; shift 2 ;;
    --reps) reps=${2:?--reps needs a number}; shift 2 ;;
    --mem-limit) mem_limit=${2:?--mem-limit needs bytes}; shift 2 ;;
    --perf) perf=1; shift ;;
    --bin) bin=${2:?--bin needs a build folder}; shift 2 ;;
    --seed) order_seed=${2:?--seed needs a number}; shift 2 ;;
    --session) session=${2:?--session needs a number}; shift 2 ;;
    --reference) reference=1; shift ;;
    --only) reference_only=${2:?--only needs folder names}; shift 2 ;;
    --sun-output) sun_output=${2:?--sun-output needs none or file}; shift 2 ;;
    --sun-cpus) sun_cpus=${2:?--sun-cpus needs a number}; shift 2 ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; exit 2 ;;
    esac
done
[[ $cache == warm || $cache == cold ]] || die "--cache: warm or cold"
[[ $page_cache == small || $page_cache == large ]] ||
    die "--page-cache: small or large"
if [[ -z $runs ]]; then
    runs=10
    [[ $suite == peers ]] && runs=7
    [[ $suite == batch ]] && runs=3
    [[ $suite == photos || $suite == compressed ]] && runs=5
fi
[[ $runs =~ ^[1-9][0-9]*$ ]] || die "--runs: a positive number"
[[ $sun_output == none || $sun_output == file ]] ||
    die "--sun-output: none or file"
[[ -z $sun_cpus || $sun_cpus =~ ^[1-9][0-9]*$ ]] ||
    die "--sun-cpus: a positive number"
[[ -z $sun_cpus || $sun_cpus -le $(nproc) ]] ||
    die "--sun-cpus $sun_cpus: only $(nproc) CPUs here"
[[ $threads =~ ^[1-9][0-9]*$ ]] || die "--threads: a positive number"
[[ $scales =~ ^-?[0-9]+(,-?[0-9]+)*$ ]] || die "--scales: e.g. -2,-4,3"
[[ -z $size || $size =~ ^[1-9][0-9]*x[1-9][0-9]*$ ]] || die "--size: WxH"
[[ -z $image || -z $size ]] || die "--image and --size exclude each other"
[[ -z $file_size || $file_size =~ ^[1-9][0-9]*$ ]] || die "--file-size: bytes"
[[ -z $reps || $reps =~ ^[1-9][0-9]*$ ]] || die "--reps: a positive number"
[[ -z $mem_limit || $mem_limit =~ ^[1-9][0-9]*$ ]] || die "--mem-limit: bytes"
order_seed=${order_seed:-$(($(date +%s) % 1000000))}
[[ $order_seed =~ ^[0-9]+$ ]] || die "--seed: a number"
[[ $session =~ ^[1-9][0-9]*$ ]] || die "--session: a positive number"
# when this invocation began, and where its contenders' rotation starts
# (sp_write_env's started and session lines, in the sourced scripts)
# shellcheck disable=SC2034
{
    sp_started=$(date -u '+%Y-%m-%d %H:%M:%S UTC')
    sp_session=$session sp_offset=$(((session - 1) * runs))
}
iobench_suites=(syscall-vs-mmap zero-page random-access copy cdb)
case $suite in
sun | all | syscall-vs-mmap | zero-page | random-access | copy | cdb | peers | \
    durable | paths | threads | batch | photos | compressed | server) ;;
*) die "--suite: sun, syscall-vs-mmap, zero-page, random-access, copy," \
    "cdb, peers, durable, paths, threads, batch, photos, compressed," \
    "server or all" ;;
esac
[[ -z $mem_limit || $suite == syscall-vs-mmap ]] ||
    die "--mem-limit: with --suite syscall-vs-mmap only"
[[ ($sun_output == none && -z $sun_cpus) || $suite == sun || $suite == all ]] ||
    die "--sun-output, --sun-cpus: with --suite sun (or all) only"
((perf == 0)) || command -v perf >/dev/null ||
    die "--perf: perf not found (apt-get install linux-perf)"

if [[ -z $bin ]]; then
    bin=$ROOT/build-release
    sp_setup Release "$bin"
fi

[[ -z $reference_only ]] || ((reference)) || die "--only: for --reference"
if ((reference)); then
    reference_run
    exit 0
fi
# A run never writes over another's results, nor into the committed ones:
# each gets a new folder under runs/ (ignored by git) unless --out names
# one, which must be new or empty.
if [[ -n $out ]]; then
    [[ ! -e $out || -z $(ls -A -- "$out") ]] ||
        die "--out $out: not empty; results are never written over"
    mkdir -p -- "$out"
else
    mkdir -p -- "$ROOT/runs"
    base=$ROOT/runs/$(date +%Y-%m-%d-%H%M%S)-$(hostname -s) k=1
    out=$base
    until mkdir -- "$out" 2>/dev/null; do
        ((k < 100)) || die "cannot make a folder under $ROOT/runs"
        k=$((k + 1)) out=$base-$k
    done
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/scaleppm-exp.XXXXXX")
trap 'rm -rf "$work"' EXIT

# iobench_suite NAME: one of iobench's experiments, into $out; in a memory
# cgroup when --mem-limit says so.  The files it read stay (--keep) until
# they are recorded in $work/read.txt (env.txt's), then go.
iobench_suite() {
    local name=$1 args=(--dir "$work" --keep) run=() what kept=() f
    ((quick)) && args+=(--quick)
    [[ -n $file_size ]] && args+=(--size "$file_size")
    [[ -n $reps ]] && args+=(--reps "$reps")
    what="iobench ${args[*]}"
    if [[ -n $mem_limit ]]; then
        run=(sp_memlimit_run "$mem_limit")
        what+=", in a cgroup limited to $mem_limit bytes"
    fi
    if ((perf)); then
        mapfile -t -O "${#run[@]}" run < <(sp_perf_prefix "$work/$name.perf")
        what+=", under perf record"
    fi
    printf 'suite %s: %s\n' "$name" "$what" >&2
    "${run[@]}" "$bin/src/iobench" "${args[@]}" "$name" >"$out/$name.csv" ||
        die "iobench $name failed"
    for f in "$work"/iobench-*; do
        if [[ -f $f ]]; then kept+=("$f"); fi
    done
    sp_read_lines "$bin" "suite $name" "${kept[@]}" >>"$work/read.txt"
    rm -f -- "${kept[@]}"
    if ((perf)); then
        sp_perf_summary "$work/$name.perf" "$out/$name-perf.txt"
        rm -f "$work/$name.perf"
    fi
    # the rows are the result: a report that fails leaves them
    sp_suite_report "$name" "$out/$name.csv" "$out/$name.md" \
        "$out/$name.png" ||
        printf 'suite %s: the report failed; the rows are in %s\n' \
            "$name" "$out/$name.csv" >&2
    cat "$out/$name.md"
}

if [[ $suite == peers ]]; then
    peers_suite "$ROOT" "$bin" "$out" "$runs" "$quick" "$size"  # writes env.txt
    printf 'results in %s\n' "$out" >&2
    exit 0
fi
if [[ $suite == batch ]]; then
    batch_suite "$ROOT" "$bin" "$out" "$runs" "$quick" ||  # writes env.txt
        die "--suite batch failed"
    printf 'results in %s\n' "$out" >&2
    exit 0
fi
if [[ $suite == server ]]; then
    server_suite "$ROOT" "$bin" "$out" "$quick" "$order_seed" ||  # env.txt
        die "--suite server failed"
    printf 'results in %s\n' "$out" >&2
    exit 0
fi
if [[ $suite == photos || $suite == compressed ]]; then
    ((quick)) || photos_install
    "${suite}_suite" "$ROOT" "$bin" "$out" "$runs" "$quick" ||  # env.txt
        die "--suite $suite failed"
    printf 'results in %s\n' "$out" >&2
    exit 0
fi
if [[ $suite == durable || $suite == paths || $suite == threads ]]; then
    "${suite}_suite" "$ROOT" "$bin" "$out" "$runs" "$quick" ||
        die "--suite $suite failed"
    mapfile -t inputs < <(sp_suite_inputs "$out/$suite.csv" "$bin")
    sp_write_env "$out/env.txt" "" "$bin" \
        "suite=$suite runs=$runs quick=$quick" "${inputs[@]}"
    cat "$out/$suite.md"
    printf 'results in %s\n' "$out" >&2
    exit 0
fi
if [[ $suite == sun || $suite == all ]]; then
    sun_study
fi
for s in "${iobench_suites[@]}"; do
    if [[ $suite == "$s" || $suite == all ]]; then
        iobench_suite "$s"
    fi
done
settings="suite=$suite quick=$quick"
if [[ $suite == sun || $suite == all ]]; then
    settings+=" $(sun_settings)"
fi
if [[ $suite != sun ]]; then
    settings+=" file_size=${file_size:-default} reps=${reps:-default}"
    settings+=" mem_limit=${mem_limit:-none} perf=$perf"
fi
# the Sun study's input is the copy it made and read (sun_study); the
# iobench suites' files were recorded as each ended (iobench_suite)
sp_write_env "$out/env.txt" "${input:-${image:-}}" "$bin" "$settings"
if [[ -s $work/read.txt ]]; then
    cat "$work/read.txt" >>"$out/env.txt"
fi
if [[ $suite == sun || $suite == all ]]; then
    sun_headline "$out"
fi
printf 'results in %s\n' "$out" >&2
