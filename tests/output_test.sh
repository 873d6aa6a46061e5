#!/usr/bin/env bash
# output_test.sh: where scaleppm's output goes and what it may replace:
# descriptors the shell opened (/dev/stdout with >>, /dev/fd/N, process
# substitution), a replaced file's hard links, owner, mode and write
# permission, links in a sticky directory (fs.protected_symlinks), the
# file size limit, a directory made read-only mid-run, special files, and
# names with a newline in one-line messages.
#
# As root, the unprivileged cases need setpriv or runuser to drop to
# nobody; each is skipped, saying why, when that cannot be had.
#
# usage: bash tests/output_test.sh PATH/TO/scaleppm [PATH/TO/genimage]
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$here/lib.sh"
setup "usage: output_test.sh PATH/TO/scaleppm [PATH/TO/genimage]" "$@"
cd "$WORK"
trap 'chmod -R u+w "$WORK" 2>/dev/null; rm -rf -- "$WORK"' EXIT

# sp ARGS...: run scaleppm; exit status in rc, stderr in e.
sp() {
    rc=0
    timeout 60 "$SP" "$@" 2>e </dev/null || rc=$?
}

# failed PREFIX WORDS: empty, or why the last run is not a failure with
# exit 1 and one stderr line starting PREFIX that matches the ERE WORDS.
failed() {
    if ((rc != 1)); then
        printf 'exit %d, want 1; stderr: %s' "$rc" "$(head -n 1 e)"
    elif [[ $(wc -l <e) != 1 ]]; then
        printf '%s lines on stderr: %s' "$(wc -l <e)" "$(tr '\n' '|' <e)"
    elif [[ $(head -n 1 e) != "$1"* ]]; then
        printf 'stderr "%s" does not start "%s"' "$(head -n 1 e)" "$1"
    elif ! grep -Eq -- "$2" e; then
        printf 'stderr "%s" does not match "%s"' "$(head -n 1 e)" "$2"
    fi
}

# only DIR NAMES...: empty, or what DIR holds beyond NAMES.
only() {
    local dir=$1 extra
    shift
    extra=$(find "$dir" -mindepth 1 -maxdepth 1 -printf '%f\n' | sort |
        comm -23 - <(printf '%s\n' "$@" | sort) | tr '\n' ' ')
    [[ -z $extra ]] || printf 'left in %s: %s' "$dir" "$extra"
}

noise 31 17 255 1 3 >c.ppm
"$SP" -s 2 c.ppm c2.ppm
printf 'old\n' >old_ref

# --- descriptors the shell opened ------------------------------------------
printf 'head\n' >all.ppm
rc=0
"$SP" -s 2 c.ppm /dev/stdout >>all.ppm 2>e || rc=$?
why=''
((rc == 0)) || why="exit $rc: $(head -n 1 e)"
[[ -n $why ]] || cmp -s all.ppm <(printf 'head\n'; cat c2.ppm) ||
    why='all.ppm is not its old line followed by the image'
result '/dev/stdout >> all.ppm appends' "$why"

# Standard output is known by what it is: its other names, and the
# file's own name (`f >> f`), append too.
printf 'head\n' >all2.ppm
why=''
for name in //dev/stdout /dev//stdout /dev/./stdout /proc/thread-self/fd/1 \
    all2.ppm; do
    rc=0
    "$SP" -s 2 c.ppm "$name" >>all2.ppm 2>e || rc=$?
    ((rc == 0)) || why+="$name: exit $rc: $(head -n 1 e); "
done
rc=0
# shellcheck disable=SC2016  # $$ is the exec'd scaleppm's own PID
bash -c 'exec "$0" -s 2 c.ppm "/proc/$$/fd/1"' "$SP" >>all2.ppm 2>e || rc=$?
((rc == 0)) || why+="/proc/PID/fd/1: exit $rc: $(head -n 1 e); "
[[ -n $why ]] || cmp -s all2.ppm <(printf 'head\n'
    for _ in 1 2 3 4 5 6; do cat c2.ppm; done) ||
    why='all2.ppm is not its old line followed by six images'
result 'other names of standard output, and its own name, append' "$why"

# With standard output closed, a descriptor scaleppm opens on OUT may be
# 1: OUT is still replaced, not taken for standard output.
cp old_ref closed.ppm
rc=0
"$SP" -s 2 c.ppm closed.ppm >&- 2>e || rc=$?
why=''
((rc == 0)) || why="exit $rc: $(head -n 1 e)"
[[ -n $why ]] || cmp -s closed.ppm c2.ppm || why='output differs'
result 'standard output closed: OUT written all the same' "$why"

rc=0
"$SP" -s 2 c.ppm /dev/fd/3 3>fd3.ppm 2>e || rc=$?
why=''
((rc == 0)) || why="exit $rc: $(head -n 1 e)"
[[ -n $why ]] || cmp -s fd3.ppm c2.ppm || why='output differs'
result '/dev/fd/3 opened by the shell is written' "$why"

rc=0
"$SP" -s 2 c.ppm >(cat >ps.ppm) 2>e || rc=$?
wait $!  # the process substitution's cat
why=''
((rc == 0)) || why="exit $rc: $(head -n 1 e)"
[[ -n $why ]] || cmp -s ps.ppm c2.ppm || why='the process substitution got other bytes'
result 'process substitution >(cat) gets the image' "$why"

sp -s 2 c.ppm /dev/fd/9
why=$(failed 'scaleppm: /dev/fd/9: ' 'Bad file descriptor: descriptor 9 is not open for writing')
result '/dev/fd/9, not open: exit 1, one line' "$why"

sp -s 2 c.ppm /proc/self/mem
why=$(failed 'scaleppm: /proc/self/mem: ' 'cannot create a file in its directory')
result '/proc/self/mem: exit 1, says what failed' "$why"

# --- the input as output, a terminal as output ----------------------------
# Written in place into its own input, scaleppm would read what it
# appends: refused before a byte is written, as cat refuses.
cp c.ppm self.ppm
why=''
# shellcheck disable=SC2094  # reading and writing one file is the test
for form in 'self.ppm' '< self.ppm' 'self.ppm //dev/stdout'; do
    rc=0
    case $form in
    'self.ppm') "$SP" -s 2 self.ppm >>self.ppm 2>e || rc=$? ;;
    '< self.ppm') "$SP" -s 2 <self.ppm >>self.ppm 2>e || rc=$? ;;
    *) "$SP" -s 2 self.ppm //dev/stdout >>self.ppm 2>e || rc=$? ;;
    esac
    w=$(failed 'scaleppm: ' 'refused: input file is output file$')
    [[ -n $w ]] || cmp -s self.ppm c.ppm || w='self.ppm changed'
    [[ -z $w ]] || why+="$form: $w; "
done
result 'scaleppm [IN] >> IN: refused, exit 1, one line, IN untouched' "$why"

# Binary image data is not written to a terminal (gzip refuses too); a
# terminal named as OUT is written.
cat >onterm.py <<'PY'
"""Run argv[1:] with standard output on a new terminal; print its exit
status, then what it wrote there."""
import os
import pty
import subprocess
import sys

m, s = pty.openpty()
rc = subprocess.run(sys.argv[1:], stdout=s, check=False).returncode
os.close(s)
got = b""
try:
    while chunk := os.read(m, 4096):
        got += chunk
except OSError:  # EIO: the terminal's other side is closed
    pass
print(rc, len(got))
PY
why=''
got=$(python3 onterm.py "$SP" -s 2 c.ppm 2>e) || true
[[ $got == '1 0' ]] || why="no OUT: exit and bytes '$got', want '1 0'"
[[ -n $why ]] || grep -q '^scaleppm: not writing an image to a terminal' e ||
    why="stderr: $(head -n 1 e)"
got=$(python3 onterm.py "$SP" -s 2 c.ppm /dev/stdout 2>e) || true
[[ -n $why || $got == 0\ [1-9]* ]] ||
    why="/dev/stdout: exit and bytes '$got', want 0 and some"
result 'standard output a terminal: refused without OUT, written if named' \
    "$why"

# --- what a replaced file keeps, and what refuses it -----------------------
mkdir rep
cp old_ref rep/a.ppm
ln rep/a.ppm rep/b.ppm
sp -s 2 c.ppm rep/a.ppm
why=$(failed 'scaleppm: rep/a.ppm: refused: ' 'it has 2 hard links')
[[ -n $why ]] || { cmp -s rep/a.ppm old_ref && cmp -s rep/b.ppm old_ref; } ||
    why='a linked name changed'
[[ -n $why ]] || why=$(only rep a.ppm b.ppm)
result 'a file with another hard link is refused, both names kept' "$why"
rm -rf rep

mkdir rep
cp old_ref rep/s.ppm
chmod 04755 rep/s.ppm
sp -s 2 c.ppm rep/s.ppm
why=''
((rc == 0)) || why="exit $rc: $(head -n 1 e)"
[[ -n $why || $(stat -c %a rep/s.ppm) == 755 ]] ||
    why="mode $(stat -c %a rep/s.ppm), want 755"
[[ -n $why ]] || cmp -s rep/s.ppm c2.ppm || why='output differs'
result 'a setuid file replaced: its mode less setuid' "$why"

if ((EUID == 0)); then
    cp old_ref rep/n.ppm
    chown 65534:65534 rep/n.ppm
    sp -s 2 c.ppm rep/n.ppm
    why=''
    ((rc == 0)) || why="exit $rc: $(head -n 1 e)"
    [[ -n $why || $(stat -c %u:%g rep/n.ppm) == 65534:65534 ]] ||
        why="owner $(stat -c %u:%g rep/n.ppm), want 65534:65534"
    result "as root, a replaced file keeps its owner" "$why"
else
    skip 'a replaced file keeps its owner' 'not root'
fi
rm -rf rep

unprivileged
if ((${#as_user[@]} == 0)); then
    skip 'unprivileged cases' 'running as root and cannot drop to nobody'
else
    chmod 0755 "$WORK"
    chmod 0644 c.ppm
    mkdir -m 0777 ro
    cp old_ref ro/r.ppm
    chmod 0444 ro/r.ppm
    [[ $EUID != 0 ]] || chown 65534:65534 ro/r.ppm
    rc=0
    timeout 60 "${as_user[@]}" "$SP" -s 2 c.ppm ro/r.ppm 2>e </dev/null || rc=$?
    why=$(failed 'scaleppm: ro/r.ppm: ' 'Permission denied')
    [[ -n $why ]] || cmp -s ro/r.ppm old_ref || why='the read-only file changed'
    [[ -n $why ]] || why=$(only ro r.ppm)
    result 'a read-only file is not replaced (as cat > would not)' "$why"

    # A directory made read-only while the output is written: nothing is
    # left in it (the output was never named there).  scaleppm reads a
    # stream of two images from a FIFO: once the unnamed file it writes is
    # in the directory, and while it waits for the second image, the
    # directory loses its write permission; then the rest comes.
    mkdir -m 0755 late
    [[ $EUID != 0 ]] || chown 65534:65534 late
    mkfifo -m 0644 late.fifo
    # Read and write, the FIFO blocks neither open; scaleppm gets no copy
    # of the writing end, so that closing it here is its end.
    exec {w}<>late.fifo
    "${as_user[@]}" "$SP" -s 2 late.fifo late/out.ppm 2>e </dev/null {w}>&- &
    pid=$!
    { cat c.ppm; head -c 15 c.ppm; } >&"$w"  # the second's header
    until [[ -n $(find /proc/"$pid"/fd -lname "$WORK/late/#*" 2>/dev/null) ]]; do
        alive "$pid" || break
        sleep 0.01
    done
    chmod 0555 late
    tail -c +16 c.ppm >&"$w"
    exec {w}>&-
    rc=0
    wait "$pid" || rc=$?
    chmod 0755 late
    why=$(failed 'scaleppm: late/out.ppm: ' 'Permission denied')
    [[ -n $why ]] || why=$(only late)
    result 'a directory made read-only mid-run: exit 1, nothing left' "$why"
fi

# --- a link in a sticky world-writable directory --------------------------
# Another user's link there: scaleppm does what the shell's > does, which
# with fs.protected_symlinks on (root following nobody's link) is a
# refusal, and with it off is writing through the link.
if ((EUID == 0)); then
    mkdir -m 1777 sticky
    cp old_ref victim.ppm
    ln -s "$WORK/victim.ppm" sticky/out.ppm
    chown -h 65534:65534 sticky/out.ppm
    if (cat c2.ppm >sticky/out.ppm) 2>/dev/null; then
        kernel=follows
        cp old_ref victim.ppm
    else
        kernel=refuses
    fi
    sp -s 2 c.ppm sticky/out.ppm
    if [[ $kernel == refuses ]]; then
        why=$(failed 'scaleppm: sticky/out.ppm: ' 'Permission denied')
        [[ -n $why ]] || cmp -s victim.ppm old_ref || why='the victim was replaced'
    else
        why=''
        ((rc == 0)) || why="exit $rc: $(head -n 1 e)"
        [[ -n $why ]] || cmp -s victim.ppm c2.ppm || why='the link target was not written'
    fi
    [[ -n $why || -L sticky/out.ppm ]] || why='the link was replaced'
    [[ -n $why ]] || why=$(only sticky out.ppm)
    result "another user's link in a sticky directory: the kernel $kernel, so does scaleppm" "$why"
else
    skip 'a link in a sticky directory' 'not root'
fi

# --- the file size limit ---------------------------------------------------
mkdir fsz
cp old_ref fsz/old.ppm
for target in fsz/new.ppm fsz/old.ppm; do
    rc=0
    (ulimit -f 8 && exec "$SP" -s 8 c.ppm "$target") 2>e </dev/null || rc=$?
    why=$(failed "scaleppm: $target: " 'File too large')
    [[ -n $why ]] || cmp -s fsz/old.ppm old_ref || why='the old file changed'
    [[ -n $why ]] || why=$(only fsz old.ppm)
    result "ulimit -f: $target: exit 1 (not SIGXFSZ), File too large, nothing left" "$why"
done

# --- into a pipe ----------------------------------------------------------
# A pipe on standard output is given the rows' own pages (vmsplice), so
# what a reader gets must not change when scaleppm goes on: the same bytes
# as the file, at any thread count and I/O path, and also for a reader
# that moves the pages on into pipes of its own (splice) and reads them
# only after scaleppm has exited.  Four items of two threads' slots are
# reused many times over in the 6 MiB output.
cat >hold.py <<'PY'
"""Move standard input's pipe buffers into pipes of our own (splice, no
copy), and read them only at end of input, into the file argv[1]."""
import fcntl
import os
import select
import sys

F_SETPIPE_SZ = 1031
held = []


def another():
    r, w = os.pipe()
    fcntl.fcntl(w, F_SETPIPE_SZ, 1 << 20)
    held.append((r, w))
    return w


w = another()
while True:
    select.select([0], [], [])
    try:
        n = os.splice(0, w, 1 << 20, flags=os.SPLICE_F_NONBLOCK)
    except BlockingIOError:  # ours is full
        if len(held) == 256:
            sys.exit("hold.py: 256 pipes full")
        w = another()
        continue
    if n == 0:
        break
with open(sys.argv[1], "wb") as out:
    for r, w in held:
        os.close(w)
        while (b := os.read(r, 1 << 16)):
            out.write(b)
PY
noise 640 480 255 7 3 >p.ppm
"$SP" -s 3 p.ppm p3.ppm
why=''
for io in "${IO_PATHS[@]}"; do
    for t in 1 2 4; do
        "$SP" --io "$io" -t "$t" -s 3 p.ppm - 2>e | cat >piped.ppm
        cmp -s piped.ppm p3.ppm || why+="--io $io -t $t differs; "
    done
done
result 'into a pipe: the same bytes at -t 1, 2, 4, each --io' "$why"
why=''
if python3 -c 'import os; os.splice' 2>/dev/null; then
    for t in 1 2 4; do
        "$SP" -t "$t" -s 3 p.ppm - 2>e | python3 hold.py held.ppm
        cmp -s held.ppm p3.ppm || why+="-t $t differs; "
    done
    result 'into a pipe whose reader splices its pages on: the same bytes' \
        "$why"
else
    skip 'a reader that splices' 'python3 has no os.splice'
fi

# --- a newline in a name stays on one line ---------------------------------
sp -s 2 $'no\nsuch.ppm' out.ppm
why=$(failed 'scaleppm: no\nsuch.ppm: ' 'No such file')
result 'a newline in a file name is escaped: one line' "$why"

finish
