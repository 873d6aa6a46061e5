#!/usr/bin/env bash
# faults_test.sh: scaleppm when the world fails it: outputs that cannot be
# written (/dev/full with a tiny image and through a .png link, a directory
# it may not write in, a full filesystem, a closed stdout), SIGINT, SIGTERM
# and SIGHUP in the middle of a write, --max-pixels, an allocation that
# cannot succeed, and an input truncated or rewritten by another process
# while it is mapped and scaled.  cli_test.sh has the first /dev/full
# cases and EFBIG.
#
# Every failure must exit 1 (never 128 or more), print one line naming the
# file, leave no output and no temporary file, an existing output as it
# was, and the input as it was (checksum).  A signal is the exception: the
# same line and nothing left, then death by that signal (128 + N), so that
# a shell loop stops.
#
# As root, the unwritable directory needs setpriv or runuser to drop to
# nobody, and the full filesystem needs a tmpfs mount (plain, or inside
# unshare -m); each is skipped, saying why, when it cannot be had.
#
# usage: bash tests/faults_test.sh PATH/TO/scaleppm [PATH/TO/genimage]
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$here/lib.sh"
setup "usage: faults_test.sh PATH/TO/scaleppm [PATH/TO/genimage]" "$@"
cd "$WORK"
mkdir od

# A sanitizer's allocator aborts on a request it cannot serve; the real one
# returns NULL, which is what is tested here.
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}allocator_may_return_null=1
# A fatal signal ends scaleppm from its handler, by design without joining
# the worker threads; ThreadSanitizer runs a handler only at
# the thread's next intercepted call, often the join at the end of the run,
# and then reports the finished, unjoined worker as a leak.
export TSAN_OPTIONS=${TSAN_OPTIONS:+$TSAN_OPTIONS:}allocator_may_return_null=1:report_thread_leaks=0
sanitized=''
if have nm && nm -- "$SP" 2>/dev/null | grep -E '__(asan|tsan)_init' >/dev/null; then
    sanitized=yes
fi

# Cleanup: the processes started here (by pid), the tmpfs, then $WORK.
bg_pids=()
mounted=''
cleanup() {
    local pid
    for pid in "${bg_pids[@]}"; do
        kill -KILL "$pid" 2>/dev/null || true
    done
    if [[ -n $mounted ]]; then
        umount "$mounted" 2>/dev/null || umount -l "$mounted" 2>/dev/null || true
    fi
    rm -rf -- "$WORK"
}
trap cleanup EXIT

# nap SECONDS: sleep without a fork (a read that times out on a FIFO that
# nobody writes).
mkfifo tick
exec 7<>tick
nap() {
    read -r -t "$1" -u 7 || true
}

# mapped PID NAME: PID has a file whose path ends in /NAME mapped.
mapped() {
    local line
    while read -r line; do
        [[ $line != *"/$2" ]] || return 0
    done 2>/dev/null <"/proc/$1/maps"
    return 1
}

# sp ARGS...: run scaleppm; exit status in rc, stdout in o, stderr in e.
sp() {
    rc=0
    timeout 60 "$SP" "$@" >o 2>e </dev/null || rc=$?
}

lines() {
    wc -l <"$1" | tr -d ' '
}

# temps DIR: the temporary files ('.NAME.XXXXXX') left in DIR, if any.
temps() {
    find "$1" -maxdepth 1 -name '.?*.??????' -printf '%f '
}

# failed PREFIX WORDS: empty, or why the last run is not a failure with
# exit 1 and one stderr line starting PREFIX that matches the ERE WORDS.
failed() {
    if ((rc >= 128)); then
        printf 'killed by signal %d' $((rc - 128))
    elif ((rc != 1)); then
        printf 'exit %d, want 1; stderr: %s' "$rc" "$(head -n 1 e)"
    elif [[ $(lines e) != 1 ]]; then
        printf '%s lines on stderr: %s' "$(lines e)" "$(tr '\n' '|' <e)"
    elif [[ $(head -n 1 e) != "$1"* ]]; then
        printf 'stderr "%s" does not start "%s"' "$(head -n 1 e)" "$1"
    elif ! grep -Eq -- "$2" e; then
        printf 'stderr "%s" does not match "%s"' "$(head -n 1 e)" "$2"
    fi
}

# signalled SIG PREFIX WORDS: empty, or why the last run did not print one
# stderr line starting PREFIX that matches the ERE WORDS, then die of SIG.
signalled() {
    local want
    want=$((128 + $(kill -l "$1")))
    if ((rc != want)); then
        printf 'exit %d, want %d (death by SIG%s); stderr: %s' "$rc" \
            "$want" "$1" "$(head -n 1 e)"
    else
        local rc=1  # the rest as failed() checks it
        failed "$2" "$3"
    fi
}

noise 120 90 255 1 3 >c.ppm
noise 1 1 255 4 3 >tiny.ppm
c_sum=$(cksum <c.ppm)
tiny_sum=$(cksum <tiny.ppm)

# --- /dev/full: errors that only the final flush or close can see --------
sp -s 1 tiny.ppm /dev/full
why=$(failed 'scaleppm: /dev/full: ' 'No space left')
result '1x1 image to /dev/full: the error at fclose is caught' "$why"

ln -s /dev/full full.png
sp -s 2 c.ppm full.png
why=$(failed 'scaleppm: full.png: ' 'No space left')
[[ -n $why || -L full.png ]] || why='the link was replaced'
result '.png to /dev/full through a link: exit 1, No space left' "$why"

ln -s /dev/full full.jpg
sp -s 1 tiny.ppm full.jpg
why=$(failed 'scaleppm: full.jpg: ' 'No space left')
result 'tiny .jpg to /dev/full through a link: exit 1, No space left' "$why"

rc=0
timeout 60 "$SP" -s 1 tiny.ppm - >/dev/full 2>e || rc=$?
why=$(failed 'scaleppm: -: ' 'No space left')
result '1x1 image on stdout to /dev/full: the error at fclose(stdout)' "$why"

# --- a closed stdout: a quiet end, as netpbm's tools and coreutils --------
# The output (2 MB) is far more than a pipe holds, so the reader is gone
# before it is all written whichever runs first.  scaleppm sees EPIPE (it
# ignores SIGPIPE while it writes, to clean up), then dies of SIGPIPE
# with nothing said: a shell is silent about that in a pipeline.
for reader in 'head -c 1' true; do
    set +o pipefail
    # shellcheck disable=SC2086  # the reader's words are meant to split
    timeout 60 "$SP" -s 8 c.ppm - 2>e | $reader >/dev/null
    rc=${PIPESTATUS[0]}
    set -o pipefail
    why=''
    ((rc == 128 + 13)) || why="exit $rc, want death by SIGPIPE (141)"
    [[ -n $why || ! -s e ]] || why="stderr: $(head -n 1 e)"
    result "stdout is a pipe whose reader ($reader) exits: SIGPIPE, no message" "$why"
done

# --- an unprivileged user and a directory it may not write in -------------
unprivileged
if ((${#as_user[@]} == 0)); then
    skip 'output in a directory without write permission' \
        'running as root and neither setpriv nor runuser can drop to nobody'
else
    chmod 0755 "$WORK"
    mkdir ro
    printf 'keep me\n' >ro/keep.ppm
    chmod 0666 ro/keep.ppm  # the file is writable, its directory is not
    chmod 0555 ro
    for target in ro/new.ppm ro/keep.ppm ro/new.png; do
        rc=0
        timeout 60 "${as_user[@]}" "$SP" -s 2 c.ppm "$target" >o 2>e \
            </dev/null || rc=$?
        why=$(failed "scaleppm: $target: " 'Permission denied')
        [[ -n $why || $target == ro/keep.ppm || ! -e $target ]] ||
            why='an output file was created'
        [[ -n $why || $(cat ro/keep.ppm) == 'keep me' ]] ||
            why='the existing file was changed'
        [[ -n $why || -z $(temps ro) ]] || why="temporary files left: $(temps ro)"
        result "unwritable directory: $target: exit 1, Permission denied" "$why"
    done
    chmod 0755 ro
fi

# --- a full filesystem: a 1 MiB tmpfs -------------------------------------
# fullfs_cases DIR: mount a 1 MiB tmpfs on DIR, run the cases, write what
# they did into fullfs.out, unmount.  Returns 3 when it cannot mount.  It
# runs in this shell or, when plain mount is refused, inside unshare -m, so
# it records results instead of judging them.
fullfs_cases() {
    local dir=$1 rc out
    mount -t tmpfs -o size=1m tmpfs "$dir" 2>/dev/null || return 3
    printf 'keep me\n' >"$dir/keep.ppm"
    : >fullfs.out
    for out in new.ppm keep.ppm new.png fits.ppm; do
        rc=0
        case $out in
        new.png) "$SP" -s 1 noise.ppm "$dir/$out" 2>e.$out || rc=$? ;;
        fits.ppm) "$SP" -s 2 c.ppm "$dir/$out" 2>e.$out || rc=$? ;;
        *) "$SP" -s 8 c.ppm "$dir/$out" 2>e.$out || rc=$? ;;
        esac
        printf '%s %s %s\n' "$out" "$rc" \
            "$(find "$dir" -mindepth 1 -printf '%f,' | tr '\n' ' ')" >>fullfs.out
    done
    cksum <"$dir/keep.ppm" >fullfs.keep
    cksum <"$dir/fits.ppm" >fullfs.fits 2>/dev/null || true
    umount "$dir"
}
noise 700 700 255 7 3 >noise.ppm  # 1.5 MB, and a PNG of noise is as big
"$SP" -s 2 c.ppm fits_ref.ppm
mkdir full
how=''
mounted=$WORK/full
fs_rc=0
fullfs_cases "$WORK/full" || fs_rc=$?
if mountpoint -q "$WORK/full" 2>/dev/null; then
    umount -l "$WORK/full"
fi
mounted=''
if ((fs_rc == 0)); then
    how='tmpfs'
elif ((fs_rc == 3)) && have unshare && unshare -m true 2>/dev/null; then
    fs_rc=0
    # shellcheck disable=SC2016  # expanded by the inner bash
    SP=$SP unshare -m --propagation private bash -c \
        "$(declare -f fullfs_cases)"'; fullfs_cases "$1"' _ "$WORK/full" ||
        fs_rc=$?
    how='tmpfs in unshare -m'
fi
if ((fs_rc != 0 && fs_rc != 3)); then
    fail "a full filesystem (${how:-tmpfs})" "the cases did not complete (status $fs_rc)"
    how=''
elif ((fs_rc == 3)); then
    how=''
fi
if [[ -z $how ]]; then
    ((fs_rc != 3)) ||
        skip 'a full filesystem' 'cannot mount a tmpfs (not root, no unshare -m)'
else
    printf 'keep me\n' >keep_ref.ppm
    while read -r out rc entries; do
        cp "e.$out" e
        case $out in
        fits.ppm)
            why=''
            ((rc == 0)) || why="exit $rc: $(head -n 1 e)"
            [[ -n $why || $(cat fullfs.fits) == "$(cksum <fits_ref.ppm)" ]] ||
                why='the output is wrong'
            result "full filesystem ($how): an output that fits is written" "$why"
            continue
            ;;
        esac
        why=$(failed "scaleppm: $WORK/full/$out: " 'No space left')
        [[ -n $why || $entries == 'keep.ppm,' ]] ||
            why="left in the filesystem: $entries"
        [[ -n $why || $(cat fullfs.keep) == "$(cksum <keep_ref.ppm)" ]] ||
            why='the existing output was changed'
        result "full filesystem ($how): $out: exit 1, No space left, nothing left" "$why"
    done <fullfs.out
fi

# --- signals in the middle of a write --------------------------------------
# scaleppm -s 2 reads a stream of two images from a FIFO that this script
# writes: the first image whole and the second's header.  Its output then
# holds the first image's scaled bytes in the unnamed file it writes
# (O_TMPFILE: /proc/PID/fd shows it as DIR/#N), and it waits for the rest
# of the second, for as long as the script likes: the signal goes in that
# state, whatever the machine's load.  Each case in its own directory, so
# that what one leaves does not fail the next.

# writing PID DIR: the bytes in the unnamed file PID writes in DIR, or
# nothing when it has none open there (or has ended); always status 0, so
# that set -e never ends the script on a race with the process.
writing() {
    local fd
    for fd in /proc/"$1"/fd/*; do
        if [[ $(readlink "$fd" 2>/dev/null) == "$WORK/$2/#"* ]]; then
            # The process may end in between: no size then, not an error.
            stat -L -c %s "$fd" 2>/dev/null || true
            return 0
        fi
    done
}

# Both images fit in a pipe's buffer: no write here ever blocks, even on a
# scaleppm that has ended.
noise 64 48 255 5 3 >two.ppm
second=$(wc -c <two.ppm)  # where the second image begins
one_out=$("$SP" -s 2 two.ppm - | wc -c)
noise 64 48 255 8 3 >>two.ppm
mkfifo stream

# signal_mid_write SIG TARGET DIR [PREFIX...]: scaleppm -s 2 stream
# DIR/TARGET, run under PREFIX, sent SIG once its output holds the first
# image and it waits for the second; for a signal it ignores, then given
# the rest of the stream.  rc and e as sp() leaves them; caught set when
# the signal went mid-write.
signal_mid_write() {
    local sig=$1 target=$2 dir=$3 pid w
    shift 3
    caught=''
    # Opened read and write, the FIFO blocks neither end's open; scaleppm
    # gets no copy of the writing end, so that closing it here is its end.
    exec {w}<>stream
    "$@" "$SP" -s 2 stream "$dir/$target" >o 2>e </dev/null {w}>&- &
    pid=$!
    bg_pids+=("$pid")
    head -c "$((second + 15))" two.ppm >&"$w"
    while alive "$pid" && [[ $(writing "$pid" "$dir") != "$one_out" ]]; do
        nap 0.01
    done
    if alive "$pid"; then
        kill -s "$sig" "$pid" 2>/dev/null || true
        caught=yes
        # An ignored signal is discarded as it is sent: the rest may follow.
        tail -c "+$((second + 16))" two.ppm >&"$w"
    fi
    exec {w}>&-
    rc=0
    wait "$pid" || rc=$?
}

for sig in INT TERM HUP USR1 ALRM XCPU KILL; do
    case $sig in
    INT) word=interrupted target=new.ppm ;;
    KILL) word='' target=old.ppm ;;
    *) word="terminated by SIG$sig" target=new.ppm ;;
    esac
    [[ $sig != TERM ]] || target=old.ppm
    dir=sig$sig
    mkdir "$dir"
    printf 'keep me\n' >"$dir/old.ppm"
    # A background job starts with SIGINT ignored (POSIX), and scaleppm
    # leaves it so: env gives it back its default.
    signal_mid_write "$sig" "$target" "$dir" env --default-signal=INT
    if [[ -z $caught ]]; then
        why="exit $rc before the first image was written: $(head -n 1 e)"
    elif [[ $sig == KILL ]]; then
        why=''
        ((rc == 137)) || why="exit $rc, want 137"
    else
        why=$(signalled "$sig" "scaleppm: $dir/$target: " "$word while writing; nothing written")
    fi
    if [[ -z $why && $target == old.ppm ]]; then
        [[ $(cat "$dir/old.ppm") == 'keep me' ]] ||
            why='the existing output was changed'
    elif [[ -z $why && -e $dir/$target ]]; then
        why='an output file was left'
    fi
    [[ -n $why || $(find "$dir" -mindepth 1 | wc -l) == 1 ]] ||
        why="files left: $(find "$dir" -mindepth 1 -printf '%f ')"
    result "SIG$sig while writing $target: ${word:-killed}, nothing left, death by SIG$sig" "$why"
    rm -rf "$dir"
done

# A signal ignored on entry (nohup, the SIGINT of a background job such as
# this one) stays ignored: the run goes on to the end.
mkdir sigign
signal_mid_write INT new.ppm sigign bash -c 'trap "" INT HUP; exec "$@"' bash
why=''
if [[ -z $caught ]]; then
    why="exit $rc before the first image was written: $(head -n 1 e)"
elif ((rc != 0)); then
    why="exit $rc: $(head -n 1 e)"
elif [[ $(wc -c <sigign/new.ppm) != $((2 * one_out)) ]]; then
    why='the output is not both images'
fi
result 'SIGINT ignored on entry: still ignored, the output is written' "$why"
rm -rf sigign

# The edges of the write, made exact with strace: a signal delivered as the
# syscall that creates the unnamed file returns, and as the linkat() and
# rename() that put it in place return.  None may leave a file; a message
# must not say that nothing was written when the output was.
if ! have strace || ! strace -o /dev/null true 2>/dev/null; then
    skip 'signals at the edges of the write' 'strace is not installed or cannot trace'
elif [[ -n $sanitized ]]; then
    # strace counts a syscall's calls thread by thread and acts on the first
    # thread to reach the count: a sanitizer build's loader makes its own
    # calls on the main thread, which then reaches it before the job's
    skip 'signals at the edges of the write' \
        "a sanitizer build: strace's count cannot single out the job's call"
else
    # strace_sig SIG SYSCALLS N OUT: scaleppm -s 2 c.ppm OUT, with SIG
    # delivered on the return of the Nth of SYSCALLS.  (LeakSanitizer
    # cannot run under ptrace.)
    strace_sig() {
        rc=0
        ASAN_OPTIONS=$ASAN_OPTIONS:detect_leaks=0 timeout 60 strace -f \
            -o /dev/null -e trace="$2" -e inject="$2":signal="$1":when="$3" \
            "$SP" -s 2 c.ppm "$4" >o 2>e </dev/null || rc=$?
    }
    mkdir edge
    printf 'keep me\n' >keep_me
    # Which openat creates the unnamed file: a traced run counts them.
    ASAN_OPTIONS=$ASAN_OPTIONS:detect_leaks=0 strace -f -o edge.trace \
        -e trace=openat "$SP" -s 2 c.ppm edge/count.ppm
    # strace counts a syscall's calls thread by thread (the job runs on a
    # thread of its own): the count is the creating thread's
    nth=$(awk '/openat\(/ { n[$1]++; if (/O_TMPFILE/) { print n[$1]; exit } }' \
        edge.trace)
    rm -f edge/count.ppm
    if [[ -z $nth ]]; then
        fail 'a signal as the unnamed file is created' 'no openat with O_TMPFILE seen'
    else
        strace_sig SIGTERM openat "$nth" edge/new.ppm
        why=$(signalled TERM 'scaleppm: edge/new.ppm: ' 'terminated by SIGTERM')
        [[ -z $(ls -A edge) ]] || why="${why:+$why; }files left: $(ls -A edge)"
        result 'SIGTERM as the unnamed file is created: nothing left' "$why"
    fi
    for call in linkat rename,renameat,renameat2; do
        printf 'keep me\n' >edge/old.ppm
        strace_sig SIGINT "$call" 1 edge/old.ppm
        why=''
        if ((rc != 128 + 2)); then
            why="exit $rc, want 130 (death by SIGINT)"
        elif ! cmp -s edge/old.ppm keep_me && grep -q 'nothing written' e; then
            why="the output was written, but stderr says: $(head -n 1 e)"
        elif cmp -s edge/old.ppm keep_me && ! grep -q 'nothing written' e; then
            why="the output was not written, but stderr says: $(head -n 1 e)"
        fi
        [[ -n $why || $(ls -A edge) == old.ppm ]] || why="files left: $(ls -A edge)"
        result "SIGINT as ${call%%,*}() returns: nothing left, a true message" "$why"
    done

    # No O_TMPFILE (NFS, FUSE, vfat; here the openat that asks for it
    # fails with EOPNOTSUPP): the output is written to a named
    # .NAME.XXXXXX.  Every signal whose default ends the process, the
    # real-time ones and the faults among them, removes it, says so, and
    # ends the process by that signal.  The signal comes as the first
    # fcntl() on the named file returns (a traced run counts the fcntl
    # calls before it: a sanitizer's runtime makes its own); strace takes
    # numbers, glibc's SIGRTMIN not being the kernel's.
    mkdir named
    ASAN_OPTIONS=$ASAN_OPTIONS:detect_leaks=0 strace -f -o named.trace \
        -e trace=openat,fcntl -e inject=openat:error=EOPNOTSUPP:when="$nth" \
        "$SP" -s 2 c.ppm named/count.ppm
    rm -f named/count.ppm
    kth=$(awk '/openat\(.*O_CREAT\|O_EXCL/ { made = $1 }
        /fcntl\(/ { n[$1]++; if (made == $1) { print n[$1]; exit } }' named.trace)
    if [[ -z $nth || -z $kth ]]; then
        fail 'signals with a named temporary' 'no O_TMPFILE openat, or no fcntl after the named one'
    else
        for sig in IO STKFLT PWR RTMIN RTMIN+3 SYS SEGV BUS INT; do
            if [[ -n $sanitized && ($sig == SEGV || $sig == BUS) ]]; then
                # the sanitizer's handler keeps these faults, to report them
                skip "no O_TMPFILE, SIG$sig" 'a sanitizer build reports it'
                continue
            fi
            rc=0
            (
                ulimit -c 0
                ASAN_OPTIONS=$ASAN_OPTIONS:detect_leaks=0 exec timeout 60 \
                    strace -f -o /dev/null -e trace=openat,fcntl \
                    -e inject=openat:error=EOPNOTSUPP:when="$nth" \
                    -e inject=fcntl:signal="$(kill -l "$sig")":when="$kth" \
                    "$SP" -s 2 c.ppm named/new.ppm >o 2>e </dev/null
            ) || rc=$?
            word="terminated by SIG${sig/+/[+]}"
            [[ $sig != INT ]] || word=interrupted
            why=$(signalled "$sig" 'scaleppm: named/new.ppm: ' \
                "$word while writing; nothing written")
            [[ -z $(ls -A named) ]] || why="${why:+$why; }files left: $(ls -A named)"
            result "no O_TMPFILE, SIG$sig once the named file is made: nothing left, death by SIG$sig" "$why"
            rm -f named/.??* named/*
        done
    fi
fi

# --- Ctrl-C stops a shell loop ---------------------------------------------
# bash goes on with a loop when the command it waited for exited after a
# SIGINT (the exit was the command's choice), and stops when the command
# died of it.  The first run blocks on a FIFO whose writer never writes;
# the SIGINT goes to the whole process group, as a terminal sends it.
if have setsid; then
    mkfifo silent
    sleep infinity >silent &
    bg_pids+=("$!")
    mkdir loop
    # shellcheck disable=SC2016 # expanded by the inner bash
    env --default-signal=INT setsid bash -c 'for f in silent c.ppm; do
        echo "$f" >>loop/log; "$1" -s 2 "$f" "loop/$f.ppm"; done' \
        bash "$SP" 2>e </dev/null &
    lpid=$!
    bg_pids+=("$lpid")
    # scaleppm (the loop's child) has its handlers once it has the FIFO
    # open
    opened=''
    while [[ -z $opened ]] && alive "$lpid"; do
        child=''
        read -r child _ 2>/dev/null <"/proc/$lpid/task/$lpid/children" || true
        for fd in /proc/"${child:-none}"/fd/*; do
            if [[ $(readlink "$fd" 2>/dev/null) == "$WORK/silent" ]]; then
                opened=yes
                break
            fi
        done
        [[ -n $opened ]] || nap 0.01
    done
    kill -INT -- -"$lpid" 2>/dev/null || true
    rc=0
    wait "$lpid" || rc=$?
    why=''
    ((rc == 130)) || why="the loop ended with exit $rc, want 130"
    [[ -n $why || $(cat loop/log) == silent ]] ||
        why="the loop went on: $(tr '\n' ' ' <loop/log)"
    [[ -n $why ]] || grep -q 'interrupted' e || why="stderr: $(head -n 1 e)"
    result 'Ctrl-C in a shell loop: scaleppm dies of SIGINT, the loop stops' "$why"
else
    skip 'Ctrl-C in a shell loop' 'setsid is not installed'
fi

# --- --max-pixels ------------------------------------------------------------
if [[ -n $GEN ]]; then
    "$GEN" -o wide.ppm 2000 1500
    # CPU time, not the clock's, which a loaded machine stretches
    TIMEFORMAT='%3U %3S'
    { time sp -s 1000 wide.ppm od/mp.ppm; } 2>cpu
    ms=$(awk '{ printf "%d", ($1 + $2) * 1000 }' cpu)
    why=$(failed 'scaleppm: wide.ppm: ' '--max-pixels')
    [[ -n $why ]] || grep -q '2000000x1500000' e || why="no output size: $(head -n 1 e)"
    [[ -n $why || ! -e od/mp.ppm ]] || why='an output file was created'
    [[ -n $why ]] || ((ms < 1000)) || why="took $ms ms"
    result "-s 1000 on 2000x1500: refused by the default --max-pixels in $ms ms of CPU" "$why"
else
    skip '-s 1000 on 2000x1500' 'genimage not given or not working'
fi

for bad in 0 00 -1 junk 12x '' ' 5' +5 18446744073709551616; do
    sp --max-pixels "$bad" -s 2 c.ppm od/mp.ppm
    why=''
    if ((rc != 2)); then
        why="exit $rc, want 2: $(head -n 1 e)"
    elif [[ $(lines e) != 1 ]] || ! grep -q -- '--max-pixels' e; then
        why="stderr: $(tr '\n' '|' <e)"
    elif [[ -e od/mp.ppm ]]; then
        why='an output file was created'
    fi
    result "--max-pixels '$bad': usage error (exit 2)" "$why"
done

# c.ppm is 120x90 = 10800 pixels; -s 2 makes 240x180 = 43200; -s -3 40x30.
"$SP" -s 2 c.ppm ref2.ppm
"$SP" -s -3 c.ppm ref3.ppm
mp_case() {  # mp_case LIMIT SCALE WANT_RC WORDS REF
    sp --max-pixels "$1" -s "$2" c.ppm od/mp.ppm
    if (($3 == 0)); then
        why=''
        ((rc == 0)) || why="exit $rc: $(head -n 1 e)"
        [[ -n $why ]] || cmp -s od/mp.ppm "$5" || why='output differs'
    else
        why=$(failed 'scaleppm: c.ppm: ' "$4")
        [[ -n $why || ! -e od/mp.ppm ]] || why='an output file was created'
    fi
    result "--max-pixels $1 -s $2: exit $3${4:+ ($4)}" "$why"
    rm -f od/mp.ppm
}
mp_case 43199 2 1 'the output is 240x180.*--max-pixels'
mp_case 43200 2 0 '' ref2.ppm
mp_case 18446744073709551615 2 0 '' ref2.ppm
mp_case 10799 -3 1 'the input is 120x90.*--max-pixels'
mp_case 10800 -3 0 '' ref3.ppm

# --- outputs too large, and outputs larger than the memory allowed --------
# 65536x1 16-bit RGB enlarged 65536 times: 4294967296 x 65536, 1.7 PB.  A
# PNM header holds int dimensions, so the header writer refuses it before
# anything is allocated, naming the output.
{
    printf 'P6\n65536 1\n65535\n'
    head -c 393216 /dev/zero
} >row16.ppm
sp --max-pixels 18446744073709551615 -s 65536 row16.ppm od/mem.ppm
why=$(failed 'scaleppm: od/mem.ppm: ' 'too large.*4294967296 x 65536 is too large for PNM')
[[ -n $why || ! -e od/mem.ppm ]] || why='an output file was created'
[[ -n $why || -z $(temps od) ]] || why="temporary files left: $(temps od)"
result 'an output of 1.7 PB: exit 1, the output named, too large for PNM' "$why"

# Under ulimit -v 200 MB, the 450 MB output of -s 10 is made and written a
# window at a time: it succeeds, with the bytes of a run without the limit
# and a peak resident size far below the output's.  The threads are fixed:
# each reserves its stack (ulimit -s, 8 MB by default) of address space,
# so one per CPU would not fit in 200 MB on a machine with many CPUs.  A
# sanitizer reserves terabytes of address space, so only plain builds.
if [[ -n $sanitized ]]; then
    skip 'ulimit -v 200 MB' 'a sanitizer build cannot run under ulimit -v'
elif [[ -z $GEN ]]; then
    skip 'ulimit -v 200 MB' 'genimage not given or not working'
else
    "$GEN" -o big.ppm 1500 1000
    want_sum=$("$SP" -t 4 -s 10 big.ppm - | cksum)
    rc=0
    rss_kb=''
    if [[ -x /usr/bin/time ]]; then
        (ulimit -v 204800 &&
            exec /usr/bin/time -f '%M' -o rss "$SP" -t 4 -s 10 big.ppm od/mem.ppm) \
            >o 2>e || rc=$?
        rss_kb=$(tail -n 1 rss)
        [[ $rss_kb =~ ^[0-9]+$ ]] || rss_kb=''
    else
        (ulimit -v 204800 && exec "$SP" -t 4 -s 10 big.ppm od/mem.ppm) >o 2>e ||
            rc=$?
    fi
    why=''
    if ((rc != 0)); then
        why="exit $rc: $(head -n 1 e)"
    elif [[ -s e ]]; then
        why="stderr: $(head -n 1 e)"
    elif (($(stat -c %s od/mem.ppm) < 450000000)); then
        why="the output is $(stat -c %s od/mem.ppm) bytes, want 450 MB"
    elif [[ $(cksum <od/mem.ppm) != "$want_sum" ]]; then
        why='the output differs from a run without the limit'
    elif [[ -n $(temps od) ]]; then
        why="temporary files left: $(temps od)"
    elif [[ -n $rss_kb ]] && ((rss_kb > 100 * 1024)); then
        why="peak resident size ${rss_kb} kB, want under 100 MB"
    fi
    rm -f od/mem.ppm
    result "ulimit -v 200 MB, a 450 MB output: exit 0, same bytes${rss_kb:+, peak RSS ${rss_kb} kB}" "$why"
fi

why=''
[[ $(cksum <c.ppm) == "$c_sum" && $(cksum <tiny.ppm) == "$tiny_sum" ]] ||
    why='an input was changed'
result 'the inputs are unchanged after every case' "$why"

# --- an input truncated while it is mapped ---------------------------------
# A second process cuts a 72 MB input to half (on a page boundary, so no
# page is left half zeroed) just before scaleppm starts, or while it scales.
# "While it scales" is after /proc/PID/maps shows the input mapped, and then
# a spread of delays over the length of a whole run.
# Whoever wins, the run must end as exit 0 with the right output, or exit 1
# with 'input changed while reading' or 'file is truncated' and no output:
# never a signal.
if [[ -z $GEN ]]; then
    skip 'input truncated while mapped' 'genimage not given or not working'
else
    "$GEN" -o race_src.ppm 6000 4000
    "$SP" --io read -s -2 race_src.ppm race_ref.ppm
    size=$(stat -c %s race_src.ppm)
    half=$((size / 2 / 4096 * 4096))
    # How long an untouched run takes, to spread the delays over it.
    cp race_src.ppm race.ppm
    t0=$EPOCHREALTIME
    "$SP" --io mmap -s -2 -t 4 race.ppm od/race.ppm
    t1=$EPOCHREALTIME
    span=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f", b - a }')
    won=0 early=0 changed=0 bad=0
    for run in $(seq 1 30); do
        rm -f od/race.ppm
        cp race_src.ppm race.ppm
        rc=0
        if ((run <= 10)); then
            truncate -s "$half" race.ppm &
            tpid=$!
            timeout 60 "$SP" --io mmap -s -2 -t 4 race.ppm od/race.ppm \
                >o 2>e </dev/null || rc=$?
            wait "$tpid"
        else
            # Not under timeout: its maps are scaleppm's own.
            "$SP" --io mmap -s -2 -t 4 race.ppm od/race.ppm >o 2>e </dev/null &
            pid=$!
            bg_pids+=("$pid")
            delay=$(awk -v s="$span" -v i="$run" \
                'BEGIN { printf "%.4f", s * (i - 11) / 19 }')
            until mapped "$pid" race.ppm || ! alive "$pid"; do
                :
            done
            nap "$delay"
            truncate -s "$half" race.ppm
            wait "$pid" || rc=$?
        fi
        why=''
        if ((rc == 0)); then
            won=$((won + 1))
            pamfile od/race.ppm >/dev/null 2>&1 || why='the output is not a PNM image'
            [[ -n $why ]] || cmp -s od/race.ppm race_ref.ppm ||
                why='exit 0 but the output is wrong'
        else
            why=$(failed 'scaleppm: race.ppm: ' 'input changed while reading|file is truncated')
            # Cut after the mapping was made, the file can only have changed.
            [[ -n $why ]] || ((run <= 10)) || ! grep -q 'truncated' e ||
                why="truncated after it was mapped, yet: $(head -n 1 e)"
            [[ -n $why || ! -e od/race.ppm ]] || why='an output file was created'
            if grep -q 'truncated' e; then
                early=$((early + 1))
            else
                changed=$((changed + 1))
            fi
        fi
        [[ -n $why || -z $(temps od) ]] || why="temporary files left: $(temps od)"
        if [[ -n $why ]]; then
            bad=$((bad + 1))
            fail "truncated while mapped, run $run" "$why"
        fi
    done
    printf '# race: %d won, %d truncated at load, %d changed while reading\n' \
        "$won" "$early" "$changed"
    why=''
    ((bad == 0)) || why="$bad of 30 runs went wrong (above)"
    result "input truncated while mapped, 30 runs: exit 0 and right, or exit 1 (changed/truncated), no signal" "$why"
fi

# --- an input rewritten in place while it is mapped --------------------------
# A second process writes another image of the same size over the input
# (dd conv=notrunc) once /proc/PID/maps shows it mapped (so after the
# stamp, size and times, was taken), after a spread of delays over the
# length of a run.  The input's mtime is set a day back first, so that the
# write always changes it.  Each run must end as exit 0 with the first
# image's output, whole (the write came after the last read), or exit 1
# with 'input changed while reading' and no output: never rows of both.
# (pread and read: the Check suites, which change the file at set points.)
if [[ -z $GEN ]]; then
    skip 'input rewritten while mapped' 'genimage not given or not working'
else
    "$GEN" -o mix_a.ppm 3000 2000
    hlen=$(head -n 3 mix_a.ppm | wc -c)
    # The same header; the raster moved by a byte.
    {
        head -c "$hlen" mix_a.ppm
        tail -c +$((hlen + 2)) mix_a.ppm
        printf x
    } >mix_b.ppm
    "$SP" --io read -s 2 mix_a.ppm mix_ref.ppm
    cp mix_a.ppm mix.ppm
    t0=$EPOCHREALTIME
    "$SP" --io mmap -s 2 -t 1 mix.ppm od/mix.ppm
    t1=$EPOCHREALTIME
    span=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f", b - a }')
    whole=0 changed=0 bad=0
    for run in $(seq 1 12); do
        rm -f od/mix.ppm
        cp mix_a.ppm mix.ppm
        touch -d '1 day ago' mix.ppm
        rc=0
        "$SP" --io mmap -s 2 -t 1 mix.ppm od/mix.ppm >o 2>e </dev/null &
        pid=$!
        bg_pids+=("$pid")
        delay=$(awk -v s="$span" -v i="$run" \
            'BEGIN { printf "%.4f", s * (i - 1) / 10 }')
        until mapped "$pid" mix.ppm || ! alive "$pid"; do
            :
        done
        nap "$delay"
        dd if=mix_b.ppm of=mix.ppm conv=notrunc bs=1M status=none
        wait "$pid" || rc=$?
        why=''
        if ((rc == 0)); then
            whole=$((whole + 1))
            cmp -s od/mix.ppm mix_ref.ppm ||
                why='exit 0 but the output is not the first image scaled'
        else
            changed=$((changed + 1))
            why=$(failed 'scaleppm: mix.ppm: ' 'input changed while reading')
            [[ -n $why || ! -e od/mix.ppm ]] || why='an output file was created'
        fi
        [[ -n $why || -z $(temps od) ]] || why="temporary files left: $(temps od)"
        if [[ -n $why ]]; then
            bad=$((bad + 1))
            fail "rewritten while mapped, run $run" "$why"
        fi
    done
    printf '# rewrite: %d whole, %d changed while reading\n' "$whole" "$changed"
    why=''
    ((bad == 0)) || why="$bad of 12 runs went wrong (above)"
    what='input rewritten while mapped, 12 runs: exit 0 and the first image'
    result "$what, or exit 1 (changed), never both" "$why"
fi

finish
