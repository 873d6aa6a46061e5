#!/usr/bin/env bash
# batch_options_test.sh: the options of a batch (scaleppm -o ... IN...):
# --fail-fast, -q, --format, the %s pattern and %%, --timings=json (one
# object a file), SIGINT and SIGTERM mid-batch, and the same bytes at -t 1,
# 2 and 4 for each --io and --read-buffer, and --read-buffer's page
# faults; at the end, the runner itself:
# one SIGTERM with a job blocked on a FIFO, no thread to start, ulimit -s
# 16, and a --timings record for a file that failed.  Every output is compared with
# the one-file run `scaleppm -s N IN OUT`.  batch_test.sh has the hostile
# files, collisions, odd names, a full filesystem and kill -9.
#
# usage: bash tests/batch_options_test.sh PATH/TO/scaleppm [PATH/TO/genimage]
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$here/lib.sh"
# shellcheck source-path=SCRIPTDIR source=batch_lib.sh
. "$here/batch_lib.sh"
setup "usage: batch_options_test.sh PATH/TO/scaleppm [PATH/TO/genimage]" "$@"
cd "$WORK"
# Cleanup: the processes started here (by pid), then $WORK.
bg_pid='' writer_pids=()
cleanup() {
    local pid
    for pid in $bg_pid "${writer_pids[@]}"; do
        kill -KILL "$pid" 2>/dev/null || true
    done
    rm -rf -- "$WORK"
}
trap cleanup EXIT

mkdir in
noise 31 17 255 1 3 >in/a.ppm
noise 23 19 65535 4 1 >in/b.pgm
noise 40 9 255 7 3 >in/c.ppm
noise 7 30 1023 10 3 >in/d.ppm
noise 64 48 255 13 3 >in/big.ppm
printf 'P4\n16 3\n\377\0\125\252\17\360' >in/e.pbm
noise 5 4 255 16 1 >in/x.y.pgm
cp in/c.ppm in/noext
printf 'P6\n0 0\n255\n' >in/bad.ppm
all=(big.ppm a.ppm b.pgm e.pbm d.ppm x.y.pgm c.ppm noext)
refs 2 ref "${all[@]/#/in/}"
refs -3 ref3 "${all[@]/#/in/}"

# --- --fail-fast and -q -----------------------------------------------------
rm -rf out && mkdir out
sp -t 1 --fail-fast -s 2 -o out/ in/a.ppm in/bad.ppm in/c.ppm in/d.ppm \
    in/big.ppm
why=$(stderr_is 1 '^scaleppm: in/bad.ppm: .*bad PNM header' \
    "$(summary_re '1 scaled, 1 failed, 3 not done')")
[[ -n $why ]] || why=$(holds out ref a.ppm)
result '-t 1 --fail-fast: the file before kept, none after started' "$why"

rm -rf out && mkdir out
sp -q -s 2 -o out/ in/a.ppm in/bad.ppm in/c.ppm
why=$(stderr_is 1 '^scaleppm: in/bad.ppm: .*bad PNM header')
[[ -n $why ]] || why=$(holds out ref a.ppm c.ppm)
result '-q: the error line, no summary' "$why"
rm -rf out && mkdir out
sp --quiet -s 2 -o out/ in/a.ppm in/c.ppm
why=$(stderr_is 0)
[[ -n $why ]] || why=$(holds out ref a.ppm c.ppm)
result '--quiet, all scaled: nothing on stderr' "$why"

# --- --format, the %s pattern, -o DIR without its slash ----------------------
mkdir fref
why=''
for fmt in pnm ppm pgm pam png jpg jpeg bmp tga pbm; do
    ins=(in/a.ppm in/b.pgm in/x.y.pgm)
    [[ $fmt != pbm ]] || ins=(in/e.pbm)
    names=()
    for f in "${ins[@]}"; do
        b=${f##*/}
        names+=("${b%.*}.$fmt")
        "$SP" -s 2 "$f" "fref/${b%.*}.$fmt"
    done
    rm -rf out && mkdir out
    sp -s 2 -o out/ --format "$fmt" "${ins[@]}"
    w=$(stderr_is 0 "$(summary_re "${#ins[@]} scaled")")
    [[ -n $w ]] || w=$(holds out fref "${names[@]}")
    [[ -z $w ]] || why+="--format $fmt: $w; "
done
result '--format EXT for each type: DIR/base.EXT, as the one-file run' "$why"
sp -s 2 -o out/ --format gif in/a.ppm
why=$(stderr_is 2 '^scaleppm: ')
result '--format gif: exit 2' "$why"

"$SP" -s 2 in/a.ppm fref/a_small.png
"$SP" -s 2 in/x.y.pgm fref/x.y_small.png
"$SP" -s 2 in/noext fref/noext_small.png
rm -rf out && mkdir out
sp -s 2 -o 'out/%s_small.png' in/a.ppm in/x.y.pgm in/noext
why=$(stderr_is 0 "$(summary_re '3 scaled')")
[[ -n $why ]] ||
    why=$(holds out fref a_small.png x.y_small.png noext_small.png)
result "-o 'out/%s_small.png': the base name less its last extension" "$why"

cp ref/a.ppm 'fref/100%_a.ppm'
rm -rf out && mkdir out
sp -s 2 -o 'out/100%%_%s.ppm' in/a.ppm
why=$(stderr_is 0 "$(summary_re '1 scaled')")
[[ -n $why ]] || why=$(holds out fref '100%_a.ppm')
result "-o 'out/100%%_%s.ppm': %% is a %" "$why"

rm -rf out && mkdir out
sp -s 2 -o out/none.ppm in/a.ppm in/c.ppm
why=$(stderr_is 2 '^scaleppm: ')
[[ -n $why ]] || why=$(holds out ref)
result '-o naming no directory and no %s: exit 2, nothing written' "$why"

why=''
for pat in 'out/%d_%s.ppm' 'out/%n%s.ppm' 'out/%s%' 'out/%s_%s.ppm'; do
    rm -rf out && mkdir out
    sp -s 2 -o "$pat" in/a.ppm
    ((rc == 0 || rc == 2)) || why+="$pat: exit $rc; "
    ((rc != 0)) || [[ $(entries out) == 1 ]] || why+="$pat: no one output; "
done
result 'other % sequences: taken literally or refused, never a crash' "$why"

rm -rf out && mkdir out
sp -s 2 -o out in/a.ppm in/c.ppm
why=$(stderr_is 0 "$(summary_re '2 scaled')")
[[ -n $why ]] || why=$(holds out ref a.ppm c.ppm)
result '-o DIR naming an existing directory, no slash' "$why"

# --- missing folders, a mirrored tree (%r, --relative-to) -------------------
rm -rf out
sp -s 2 -o out/ in/a.ppm in/c.ppm
why=$(stderr_is 0 "$(summary_re '2 scaled')")
[[ -n $why ]] || why=$(holds out ref a.ppm c.ppm)
result '-o DIR/ missing: made, as mkdir -p' "$why"

rm -rf out
sp -s 2 -o 'out/x/y/%s_small.png' in/a.ppm
why=$(stderr_is 0 "$(summary_re '1 scaled')")
[[ -n $why ]] || why=$(holds out/x/y fref a_small.png)
result "-o 'out/x/y/%s_small.png', out/ missing: its folders made" "$why"

rm -rf out && printf 'x' >out
sp -s 2 -o out/sub/ in/a.ppm in/c.ppm
why=$(stderr_is 1 "^scaleppm: out: Not a directory: cannot make the \
output's folder$")
result "-o out/sub/ with out a file: one line, exit 1" "$why"
rm -f out

# Photo trees repeat their file names: mirrored, they batch.
for t in A B; do
    mkdir -p "tree/$t/contents/images" "tref/$t/contents/images"
done
cp in/a.ppm tree/A/contents/images/2560x1600.ppm
cp in/c.ppm tree/B/contents/images/2560x1600.ppm
cp ref/a.ppm tref/A/contents/images/2560x1600.ppm
cp ref/c.ppm tref/B/contents/images/2560x1600.ppm
trees=(tree/A/contents/images/2560x1600.ppm
    tree/B/contents/images/2560x1600.ppm)
rm -rf out
sp -s 2 --relative-to tree -o out/ "${trees[@]}"
why=$(stderr_is 0 "$(summary_re '2 scaled')")
for t in A B; do
    [[ -n $why ]] || why=$(holds "out/$t/contents/images" \
        "tref/$t/contents/images" 2560x1600.ppm)
done
result '--relative-to tree -o out/: the tree mirrored, folders made' "$why"

rm -rf out
sp -s 2 -o 'out/%r_2.ppm' "${trees[@]/#/./}"
why=$(stderr_is 0 "$(summary_re '2 scaled')")
[[ -n $why ]] ||
    cmp -s out/tree/B/contents/images/2560x1600_2.ppm ref/c.ppm ||
    why='out/tree/B/contents/images/2560x1600_2.ppm is not c.ppm scaled'
result "-o 'out/%r_2.ppm': %r below the current directory" "$why"

why=''
for bad in in/a.ppm tree/A/../../in/a.ppm "$WORK/in/a.ppm"; do
    rm -rf out
    sp -s 2 --relative-to tree -o out/ "${trees[0]}" "$bad"
    w=$(stderr_is 2 "^scaleppm: '[^']+': not below 'tree', or '\.\.' in its \
path below it: its output would leave the tree \(see scaleppm --help\)$")
    [[ -n $w || ! -e out ]] || w='out/ made'
    [[ -z $w ]] || why+="$bad: $w; "
done
result '--relative-to: an input outside, or with .. below: exit 2' "$why"

why=''
sp -s 2 --relative-to tree in/a.ppm out.ppm
[[ $rc == 2 ]] && grep -q 'relative-to is for a batch' e ||
    why="without -o: exit $rc: $(head -n 1 e)"
sp -s 2 --relative-to tree -o 'out/%s.ppm' in/a.ppm
[[ $rc == 2 ]] && grep -q 'relative-to: for -o DIR/ or a pattern with %r' e ||
    why+="a pattern without %r: exit $rc: $(head -n 1 e)"
result '--relative-to without -o, or with no %r: exit 2' "$why"
rm -rf out tree tref

# --- --timings=json: one object a file ---------------------------------------
rm -rf out && mkdir out
sp --timings=json -s 2 -o out/ in/a.ppm in/b.pgm in/c.ppm
why=''
((rc == 0)) || why="exit $rc: $(head -n 1 e)"
[[ -n $why ]] || why=$(python3 -c 'import json, sys
lines = open("e").read().splitlines()
objs = [json.loads(x) for x in lines[:-1]]
if len(objs) != 3 or not all(isinstance(o, dict) for o in objs):
    sys.exit(f"{len(objs)} objects before the summary, want 3")
for name in ("in/a.ppm", "in/b.pgm", "in/c.ppm"):
    n = sum(name in json.dumps(o) for o in objs)
    if n != 1:
        print(f"{name} is in {n} objects")
' 2>&1) || true
[[ -n $why ]] || tail -n 1 e | grep -Eq -- "$(summary_re '3 scaled')" ||
    why="summary: $(tail -n 1 e)"
result '--timings=json: one object a file naming it, then the summary' \
    "$why"

# --- the same bytes at any thread count, I/O path and read buffer -----------
why=''
for n in 2 -3; do
    r=ref
    [[ $n == 2 ]] || r=ref3
    for t in 1 2 4; do
        for io in 'read fresh' 'read reuse' mmap pread; do
            read -r path rb <<<"$io"
            rm -rf out && mkdir out
            sp -t "$t" --io "$path" ${rb:+--read-buffer "$rb"} -s "$n" \
                -o out/ \
                "${all[@]/#/in/}"
            w=$(stderr_is 0 "$(summary_re "${#all[@]} scaled")")
            [[ -n $w ]] || w=$(holds out "$r" "${all[@]}")
            [[ -z $w ]] || why+="-s $n -t $t --io $io: $w; "
        done
    done
done
result 'the same bytes at -t 1, 2, 4, each --io, --read-buffer either way' \
    "$why"

# --- --read-buffer does what it says --------------------------------------
# One worker reads 4 inputs of 1.5 MB by --io read.  The first loads into
# new pages either way: its load's page faults (--timings=json) are what a
# raster of new pages costs.  With reuse, as by default, the 3 after it
# load into its buffer, at few faults; with fresh each into new pages.
mkdir rb
noise 1024 1536 255 21 1 >rb/1.pgm
for i in 2 3 4; do cp rb/1.pgm "rb/$i.pgm"; done
# load_faults [OPTION...]: the load_minflt of the first file, then the sum
# of the 3 after it; '-1 -1' when the batch failed.
load_faults() {
    rm -rf rbout && mkdir rbout
    sp --timings=json --io read -t 1 -s -8 "$@" -o rbout/ rb/1.pgm rb/2.pgm \
        rb/3.pgm rb/4.pgm
    if ((rc != 0)); then
        printf -- '-1 -1\n'
        return
    fi
    grep -o '"load_minflt":[0-9]*' e |
        awk -F: 'NR == 1 { a = $2 } NR > 1 { s += $2 } END { print a + 0, s + 0 }'
}
read -r new reuse < <(load_faults --read-buffer reuse)
read -r _ fresh < <(load_faults --read-buffer fresh)
read -r _ plain < <(load_faults)
if ((new < 0 || fresh < 0 || plain < 0)); then
    fail '--read-buffer' "a batch failed: $(head -n 1 e)"
elif ((new < 32)); then
    skip '--read-buffer: faults' "a raster of new pages loads at $new faults: too few to tell"
else
    why=''
    if ((2 * fresh < 3 * new)); then
        why="fresh: $fresh faults loading 3 rasters, one of new pages $new"
    elif ((2 * reuse > fresh || 2 * plain > fresh)); then
        why="faults loading 3 rasters: reuse $reuse, by default $plain, fresh $fresh"
    fi
    result '--read-buffer: reuse (the default) loads into the kept buffer, fresh into new pages' \
        "$why"
fi

# An output that is another input of the batch: a.ppm writes a_x.ppm,
# itself an input.  Refused, or read as it was; never an answer that
# depends on the thread count.
mkdir chain0
cp in/big.ppm chain0/a.ppm
cp in/c.ppm chain0/a_x.ppm
why=''
seen=''
for t in 1 2 4; do
    rm -rf chain && cp -r chain0 chain
    sp -t "$t" -s 2 -o 'chain/%s_x.ppm' chain/a.ppm chain/a_x.ppm
    got="exit $rc $(cksum <chain/a_x_x.ppm 2>/dev/null || true)"
    [[ -z $seen || $got == "$seen" ]] || why="-t $t: $got; before: $seen"
    seen=$got
done
result 'an output that is another input: the same at -t 1, 2, 4' "$why"

# --- SIGINT and SIGTERM mid-batch --------------------------------------------
# Eight inputs, and last a FIFO whose writer never writes: the batch (two
# workers) writes the eight outputs and waits on the FIFO for as long as
# the script likes; the signal goes then, whatever the machine's load.
mkdir kin kref
for i in $(seq 1 8); do
    noise 120 100 255 $((60 + i)) 3 >"kin/k$i.ppm"
    "$SP" -s 4 --compression 9 "kin/k$i.ppm" "kref/k$i.png"
done
mkfifo kin/k9.ppm stall
# The writers, each there once its FIFO's first reader comes.
sleep infinity >kin/k9.ppm &
writer_pids+=("$!")
sleep infinity >stall &
writer_pids+=("$!")

# reading PID FIFO: PID has FIFO (in $WORK) open.
reading() {
    local fd
    for fd in /proc/"$1"/fd/*; do
        [[ $(readlink "$fd" 2>/dev/null) != "$WORK/$2" ]] || return 0
    done
    return 1
}

for sig in INT TERM; do
    rm -rf kout && mkdir kout
    # A background job starts with SIGINT ignored: env restores it.
    env --default-signal=INT "$SP" -t 2 -s 4 --compression 9 \
        -o kout/%s.png kin/k*.ppm 2>e </dev/null &
    bg_pid=$!
    until [[ -e kout/k8.png ]] && (($(entries kout) == 8)) &&
        reading "$bg_pid" kin/k9.ppm; do
        alive "$bg_pid" || break
        sleep 0.01
    done
    kill -s "$sig" "$bg_pid" 2>/dev/null || true
    rc=0
    wait "$bg_pid" || rc=$?
    bg_pid=''
    why=$(intact kout kref)
    [[ -n $why ]] || why=$(stderr_is $((128 + $(kill -l "$sig"))) \
        "$(summary_re '8 scaled, 1 not done' ', interrupted')")
    result "SIG$sig mid-batch: finished kept, none partial, summary, death by SIG$sig" \
        "$why"
done

# --- the batch runner: a stalled job, no thread, a small stack, records ----
# One SIGTERM (timeout, systemd, Slurm) ends a batch whose only worker is
# blocked reading a FIFO whose writer never writes: the tally said,
# nothing left, death by SIGTERM.  The signal goes once the worker has the
# FIFO open; a batch still running a minute after it fails.
rm -rf out && mkdir out
"$SP" -s 2 -t 1 -o out/ stall in/a.ppm 2>e </dev/null &
bg_pid=$!
until reading "$bg_pid" stall || ! alive "$bg_pid"; do
    sleep 0.01
done
kill -TERM "$bg_pid" 2>/dev/null || true
deadline=$((SECONDS + 60))
while alive "$bg_pid" && ((SECONDS < deadline)); do
    sleep 0.01
done
kill -KILL "$bg_pid" 2>/dev/null || true
rc=0
wait "$bg_pid" || rc=$?
bg_pid=''
why=$(stderr_is 143 "$(summary_re '0 scaled, 2 not done' ', interrupted')")
[[ -n $why || $(entries out) == 0 ]] ||
    why="left in out: $(find out -mindepth 1 -printf '%f ')"
result "one SIGTERM, a job blocked on a FIFO: death by SIGTERM, the tally said" "$why"

# No thread can be started (ulimit -u for a user of its own; root is not
# held to it): a batch runs on its one thread, as a one-file run does.
unprivileged_alone
if ((${#as_user[@]} == 0)); then
    skip 'a batch with no thread to start' \
        'running as root and setpriv cannot drop to a user of its own'
else
    chmod 0755 "$WORK"
    rm -rf out && mkdir out && chmod 0777 out
    rc=0
    # shellcheck disable=SC2016 # expanded by the inner bash
    # (LeakSanitizer's check needs a thread of its own: not here)
    ASAN_OPTIONS=${ASAN_OPTIONS:-}:detect_leaks=0 \
        timeout 60 bash -c 'ulimit -u 1 && exec "$@"' bash "${as_user[@]}" \
        "$SP" -t 1 -s 2 -o out/ in/a.ppm in/c.ppm 2>e </dev/null || rc=$?
    why=$(stderr_is 0 "$(summary_re '2 scaled')")
    [[ -n $why ]] || why=$(holds out ref a.ppm c.ppm)
    result 'no thread can be started (ulimit -u 1): the batch runs alone' "$why"
fi

# A sanitizer's frames are several times a plain build's: 16 KiB of stack
# is no test of them.
if have nm && nm -- "$SP" 2>/dev/null | grep -E '__(asan|tsan)_init' >/dev/null; then
    skip 'ulimit -s 16' 'a sanitizer build: its stack frames are larger'
else
    # ulimit -s 16: the command, its jobs and its messages run on threads
    # with a stack of their own, not on the main thread's, which
    # RLIMIT_STACK bounds (one fprintf overflowed 16 KiB).  How deep the
    # main thread starts varies (ASLR): 4 runs.
    why=''
    for try in 1 2 3 4; do
        rm -rf out && mkdir out
        rc=0
        # shellcheck disable=SC2016 # expanded by the inner bash
        timeout 60 bash -c 'ulimit -s 16 && exec "$@"' bash "$SP" -t 1 -s -3 \
            -o out/ in/big.ppm in/a.ppm 2>e </dev/null || rc=$?
        why=$(stderr_is 0 "$(summary_re '2 scaled')")
        [[ -n $why ]] || why=$(holds out ref3 big.ppm a.ppm)
        [[ -z $why ]] || break
        rm -rf out && mkdir out
        rc=0
        # shellcheck disable=SC2016 # expanded by the inner bash
        timeout 60 bash -c 'ulimit -s 16 && exec "$@"' bash "$SP" -s 2 \
            -o out/ in/a.ppm in/c.ppm in/d.ppm 2>e </dev/null || rc=$?
        why=$(stderr_is 0 "$(summary_re '3 scaled')")
        [[ -n $why ]] || why=$(holds out ref a.ppm c.ppm d.ppm)
        [[ -z $why ]] || break
    done
    result "ulimit -s 16: the batch runs, one thread and the default (run $try)" "$why"

    # And its messages: a usage error, a clash and a mirrored tree build their
    # lines on the heap (an escaped usage line took 24 KiB of stack: SIGSEGV);
    # a one-file job runs on a stack of its own (libnetpbm's message about a
    # bad header overflowed the main thread's).
    why=''
    mkdir -p tree/sub && cp in/a.ppm tree/sub/a.ppm
    printf 'P6\n2 x\n' >tree/badh.ppm
    for try in 1 2 3 4; do
        for args in '-s x' '-s 2 -o out/%s.ppm in/a.ppm tree/sub/a.ppm' \
            '-s 2 --relative-to tree -o out/ tree/sub/a.ppm' \
            '-s 2 in/a.ppm out/one.ppm' '-s 2 tree/badh.ppm out/one.ppm'; do
            rc=0
            # shellcheck disable=SC2016,SC2086 # expanded by the inner bash; split
            timeout 60 bash -c 'ulimit -s 16 && exec "$@"' bash "$SP" $args \
                2>e </dev/null || rc=$?
            ((rc <= 2)) || why="scaleppm $args: exit $rc"
            [[ -n $why ]] || [[ $(wc -l <e) -le 1 ]] || why="scaleppm $args: $(cat e)"
        done
        [[ -z $why ]] || break
    done
    result "ulimit -s 16: a usage error, a clash, a mirrored tree, one file (run $try)" "$why"
    rm -rf tree out
fi

# --timings: a record for every file, a failed one with its status and
# error, in a batch and in a one-file run; JSON that parses.
# records_ok FILE N BAD: empty, or why FILE's JSON lines are not N records,
# each status "ok" but BAD's, status "error" with an error text.
records_ok() {
    python3 -c 'import json, sys
recs = [json.loads(x) for x in open(sys.argv[1]) if x.startswith("{")]
if len(recs) != int(sys.argv[2]):
    sys.exit(f"{len(recs)} records, want {sys.argv[2]}")
for r in recs:
    name, status = r.get("input"), r.get("status")
    bad = name == sys.argv[3]
    if status != ("error" if bad else "ok"):
        sys.exit(f"{name}: status {status}")
    if bad and not r.get("error"):
        sys.exit(f"{sys.argv[3]}: no error text")
' "$@" 2>&1 || true
}
rm -rf out && mkdir out
sp --timings=json -s 2 -o out/ in/a.ppm in/bad.ppm in/c.ppm
why=$(records_ok e 3 in/bad.ppm)
[[ -n $why ]] || ((rc == 1)) || why="exit $rc, want 1"
[[ -n $why ]] || grep -q '^scaleppm: in/bad.ppm: ' e || why='no error line'
result '--timings=json, a file fails: a record each, the failed one with its error' "$why"
sp --timings -s 2 -o out/ in/bad.ppm
why=''
grep -Eq '^input="in/bad.ppm" .* status=error error="[^"]+"$' e ||
    why="no text record with the error: $(tr '\n' '|' <e)"
result '--timings (text), a file fails: its record, with the error' "$why"
sp --timings=json -s 2 in/bad.ppm out/one.ppm
why=$(records_ok e 1 in/bad.ppm)
[[ -n $why ]] || ((rc == 1)) || why="exit $rc, want 1"
result '--timings=json, a one-file run fails: its record, with the error' "$why"

# A file --skip-existing leaves alone has its record too: status skipped.
rm -rf out && mkdir out
sp -q -s 2 -o out/ in/a.ppm
sp --timings=json --skip-existing -s 2 -o out/ in/a.ppm in/c.ppm
why=$(python3 -c 'import json, sys
recs = {r["input"]: r["status"] for r in map(json.loads,
        (x for x in open(sys.argv[1]) if x.startswith("{")))}
if recs != {"in/a.ppm": "skipped", "in/c.ppm": "ok"}:
    sys.exit("records: %r" % recs)' e 2>&1) || true
[[ -n $why ]] || ((rc == 0)) || why="exit $rc"
result '--timings=json --skip-existing: a record for the file skipped' "$why"

# A record names its files whatever bytes they hold: C1 controls (raw and
# in UTF-8), a bidirectional override, ESC, quotes and backslashes escaped
# as JSON, so that the record is valid JSON, one line, and a terminal acts
# on none of it; printable UTF-8 as it is.
odd=$'in/c1\x9b\xc2\x9b[2J\u202e\e]0;x\a"\\é.ppm'
cp in/a.ppm "$odd"
sp --timings=json -s 2 "$odd" /dev/null
why=$(python3 -c 'import json, sys
raw = open(sys.argv[1], "rb").read()
if any(b < 0x20 and b != 0x0a or b == 0x7f for b in raw) or b"\x9b" in raw \
        or "\u202e".encode() in raw:
    sys.exit("a control byte raw on stderr: %r" % raw)
name = json.loads(raw.decode("utf-8"))["input"]
for c in ("\x9b", "\u202e", "\x1b", "\"", "\\", "\u00e9"):
    if c not in name:
        sys.exit("%r not in the input named %r" % (c, name))
' e 2>&1) || true
[[ -n $why ]] || ((rc == 0)) || why="exit $rc: $(cat e)"
result '--timings=json: control bytes in a name escaped, the record valid' "$why"
rm -f "$odd"

# A batch refused for its outputs leaves no folder it made for them, and
# keeps those that were there; an output that is a FIFO is no whole
# output to --skip-existing, and is not waited on to find that out.
rm -rf nd && mkdir -p nd/kept
sp -s 2 -o 'nd/kept/new/deeper/%s.ppm' in/a.ppm ./in/a.ppm
why=$(stderr_is 2 "would both write")
[[ -n $why ]] || [[ $(find nd | sort | tr '\n' ' ') == 'nd nd/kept ' ]] ||
    why="left: $(find nd | tr '\n' ' ')"
result 'a batch refused for a clash: the folders it made removed' "$why"
rm -rf nd && mkdir nd && mkfifo nd/a.ppm
for skip in '' --skip-existing; do
    rc=0
    timeout 10 "$SP" -s 2 $skip -o nd/ in/c.ppm in/a.ppm 2>e </dev/null ||
        rc=$?
    why=$(stderr_is 2 "^scaleppm: 'nd/a.ppm' is there and not a regular file")
    [[ -n $why || ! -e nd/c.ppm ]] || why='nd/c.ppm written'
    result "a batch's output that is a FIFO ${skip:-alone}: refused, not waited on" "$why"
done
rm -rf nd

# A pattern that gives an input no file name (IN ends in '/'), and a
# format that is not written: refused before any file, saying why.
rm -rf nd
for pat in 'nd/%s' '%s'; do
    rc=0
    "$SP" -s 2 -o "$pat" in/a.ppm in/ 2>e </dev/null || rc=$?
    why=$(stderr_is 2 "^scaleppm: 'in/': its output's file name would be empty \('${pat%"%s"}', from -o '$pat'; ")
    [[ -n $why || ! -e nd/a.ppm ]] || why='nd/a.ppm written'
    result "a pattern that names no file (-o '$pat'): refused, the name said to be empty" "$why"
done
rc=0
"$SP" -s 2 -o 'nd/%s.gif' in/a.ppm 2>e </dev/null || rc=$?
why=$(stderr_is 2 "^scaleppm: nd/a.gif: unsupported output format: the extensions written are .pnm .pam .pbm .pgm .ppm .png .jpg .jpeg .bmp .tga \(none: PNM\)$")
result "a pattern of a format not written: refused, the ones written listed" "$why"
rm -rf nd

# A FIFO made at an output's name after the batch's check: made while the
# worker waits for its input (a FIFO held open here, its data not yet
# written), it is refused at the output's open, which never waits, in one
# line, and left there.  Without a reader its open would wait forever.
# children_hold PID PATH: whether a child of PID holds PATH open.
children_hold() {
    local c fd
    # shellcheck disable=SC2013 # the file is a list of words
    for c in $(cat /proc/"$1"/task/*/children 2>/dev/null); do
        for fd in /proc/"$c"/fd/*; do
            [[ $(readlink "$fd" 2>/dev/null) != "$2" ]] || return 0
        done
    done
    return 1
}
rm -rf nd && mkdir nd && mkfifo nd/in.ppm
exec {held}<>nd/in.ppm
rc=0
timeout 10 "$SP" -t 1 -s 2 -o nd/out/ nd/in.ppm 2>e </dev/null {held}>&- &
bg_pid=$!
for ((i = 0; i < 1000; i++)); do
    ! children_hold "$bg_pid" "$PWD/nd/in.ppm" || break
    sleep 0.01
done
mkfifo nd/out/in.ppm
cat in/a.ppm >&"$held"
exec {held}>&-
wait "$bg_pid" || rc=$?
bg_pid=''
why=$(stderr_is 1 "^scaleppm: nd/out/in.ppm: refused: a FIFO, not a regular file" \
    "$(summary_re '0 scaled, 1 failed')")
[[ -n $why || -p nd/out/in.ppm ]] || why='the FIFO is gone'
result "a FIFO made at a batch's output after its check: refused at once" "$why"
rm -rf nd

finish
