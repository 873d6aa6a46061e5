#!/usr/bin/env bash
# batch_test.sh: a batch (scaleppm -o DIR/ IN...) against what hurts it: a
# hostile file in the middle, two inputs that would write one output, 5000
# odd names through --files-from -, a full filesystem mid-batch, and kill -9
# at seeded moments followed by --skip-existing.  Each output must be
# byte-identical to the one-file run `scaleppm -s N IN OUT`; a failure is
# one stderr line naming the file; nothing partial or temporary is left.
# batch_options_test.sh has the options (--fail-fast, -q, --format, the %s
# pattern, --timings=json, SIGINT, threads and I/O paths).
#
# The full filesystem needs root to mount a tmpfs; it is skipped otherwise.
#
# usage: bash tests/batch_test.sh PATH/TO/scaleppm [PATH/TO/genimage]
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$here/lib.sh"
# shellcheck source-path=SCRIPTDIR source=batch_lib.sh
. "$here/batch_lib.sh"
setup "usage: batch_test.sh PATH/TO/scaleppm [PATH/TO/genimage]" "$@"
cd "$WORK"
bg_pid=''
mounted=''
cleanup() {
    [[ -z $bg_pid ]] || kill -KILL "$bg_pid" 2>/dev/null || true
    [[ -z $mounted ]] || umount "$mounted" 2>/dev/null ||
        umount -l "$mounted" 2>/dev/null || true
    rm -rf -- "$WORK"
}
trap cleanup EXIT

mkdir in
noise 31 17 255 1 3 >in/a.ppm
noise 23 19 65535 4 1 >in/b.pgm
noise 40 9 255 7 3 >in/c.ppm
noise 7 30 1023 10 3 >in/d.ppm
noise 50 40 255 13 3 >in/big.ppm
printf 'P6\n0 0\n255\n' >in/bad.ppm
# Larger than bad.ppm claims, smaller than big.ppm: a buffer kept from the
# image before must not make up its missing bytes.
{ printf 'P6\n50 40\n255\n'; head -c 3000 in/big.ppm; } >in/short.ppm
good=(a.ppm b.pgm c.ppm d.ppm big.ppm)
refs 2 ref "${good[@]/#/in/}"

# --- a hostile file in the middle ----------------------------------------
for t in 1 2; do
    for io in "${IO_PATHS[@]}"; do
        rm -rf out && mkdir out
        sp -t "$t" --io "$io" -s 2 -o out/ in/a.ppm in/b.pgm in/bad.ppm \
            in/c.ppm in/big.ppm in/short.ppm in/d.ppm
        # Two files are scaled side by side with -t 2, so the two errors
        # come in either order: sorted here, the summary kept last.
        { head -n -1 e | LC_ALL=C sort; tail -n 1 e; } >e.sorted
        mv e.sorted e
        why=$(stderr_is 1 '^scaleppm: in/bad.ppm: .*bad PNM header' \
            '^scaleppm: in/short.ppm: .*truncated' \
            "$(summary_re '5 scaled, 2 failed')")
        [[ -n $why ]] || why=$(holds out ref "${good[@]}")
        result "-t $t --io $io: bad, short mid-batch: others done, exit 1" \
            "$why"
    done
done

# --- two inputs that would write one output -------------------------------
mkdir x y
cp in/a.ppm x/s.ppm
cp in/c.ppm y/s.ppm
cp in/b.pgm x/s.pgm
collide() {
    local what=$1
    shift
    rm -rf out && mkdir out
    sp -s 2 "$@"
    why=$(stderr_is 2 \
        "^scaleppm: '[^']+' and '[^']+' would both write '[^']+' \\(see scaleppm --help\\)$")
    [[ -n $why ]] || why=$(holds out ref)
    result "$what: exit 2, nothing written" "$why"
}
collide 'x/s.ppm and y/s.ppm into out/' -o out/ in/a.ppm x/s.ppm y/s.ppm
collide 'x/s.ppm and x/s.pgm into out/%s.png' -o out/%s.png x/s.ppm x/s.pgm
collide 'x/s.ppm and x/s.pgm with --format ppm' -o out/ --format ppm \
    x/s.ppm x/s.pgm
collide 'the same input twice' -o out/ in/a.ppm in/c.ppm in/a.ppm
# Outputs compared by the file they lead to, not as strings: a link in
# out/ to another output (not yet written), a linked directory.
rm -rf out && mkdir out
ln -s a.ppm out/c.ppm
sp -s 2 -o out/ in/a.ppm in/c.ppm
why=$(stderr_is 2 "^scaleppm: 'in/a.ppm' and 'in/c.ppm' would both write \
'out/a.ppm', also named 'out/c.ppm' \\(see scaleppm --help\\)$")
[[ -n $why || ($(entries out) == 1 && -L out/c.ppm) ]] ||
    why='out/ changed'
result 'out/c.ppm -> a.ppm: a.ppm and c.ppm clash: exit 2, nothing written' \
    "$why"
rm -rf d_a d_c && mkdir d_a && ln -s d_a d_c
sp -s 2 -o 'd_%s/x.ppm' in/a.ppm in/c.ppm
why=$(stderr_is 2 "^scaleppm: 'in/a.ppm' and 'in/c.ppm' would both write \
'd_a/x.ppm', also named 'd_c/x.ppm' \\(see scaleppm --help\\)$")
[[ -n $why ]] || (($(entries d_a) == 0)) || why='d_a/ changed'
result "d_c -> d_a: 'd_%s/x.ppm' clashes: exit 2, nothing written" "$why"
rm -rf d_a d_c

# Control bytes in the names a clash line or a folder's failure names
# are escaped: one line, and nothing that a terminal would act on.  (C1
# bytes, as \x9b, are msg.c's to escape: issue 25 item 8.)
ctl=$'e\e]0;T\a\r2J'
mkdir -p "x/$ctl" "y/$ctl"
cp in/a.ppm "x/$ctl/s.ppm"
cp in/c.ppm "y/$ctl/s.ppm"
sp -s 2 -o "out/$ctl/%s.ppm" "x/$ctl/s.ppm" "y/$ctl/s.ppm"
why=$(stderr_is 2 "^scaleppm: 'x/e.*' would both write 'out/e.*'")
[[ -n $why ]] || ! LC_ALL=C grep -q $'[\x01-\x1f\x7f]' e ||
    why="a control byte on stderr: $(od -c e | head -n 2 | tr '\n' ' ')"
result 'control bytes in clashing names: escaped, one line' "$why"
printf 'x' >"plain$ctl"
sp -s 2 -o "plain$ctl/sub/" in/a.ppm
why=$(stderr_is 1 "^scaleppm: plain.*: Not a directory: cannot make")
[[ -n $why ]] || ! LC_ALL=C grep -q $'[\x01-\x1f\x7f]' e ||
    why="a control byte on stderr: $(od -c e | head -n 2 | tr '\n' ' ')"
result 'control bytes in a folder that cannot be made: escaped' "$why"
rm -rf "x/$ctl" "y/$ctl" "plain$ctl" out

printf 'y/s.ppm\n' >list
collide 'one on the command line, one in the list' -o out/ \
    --files-from list x/s.ppm
sp -s 2 -o out/ in/a.ppm x/s.ppm -
why=$(stderr_is 2 '^scaleppm: ')
[[ -n $why ]] || why=$(holds out ref)
result "'-' in a batch is refused: exit 2, nothing written" "$why"

cp in/a.ppm ./-dash.ppm
cp ref/a.ppm ref/-dash.ppm
rm -rf out && mkdir out
sp -s 2 -o out/ -- -dash.ppm
why=$(stderr_is 0 "$(summary_re '1 scaled')")
[[ -n $why ]] || why=$(holds out ref -dash.ppm)
result "after --, '-dash.ppm' is an input" "$why"

# An output named '-' is a file, never standard output.
cp in/a.ppm ./-.ppm
sp -s 2 -o '%s' -- -.ppm >stdout.got
why=$(stderr_is 0 "$(summary_re '1 scaled')")
[[ -n $why || ! -s stdout.got ]] || why='written to standard output'
[[ -n $why ]] || cmp -s ./- ref/a.ppm || why="./- is not a's output"
result "-o '%s' with the input '-.ppm': the file ./-, not standard output" \
    "$why"
rm -f ./- ./-.ppm stdout.got

# Nor an output that is standard output under its own name: written
# through the shell's descriptor it could not appear whole or not at all.
rm -rf out && mkdir out
sp -s 2 -o out/ in/a.ppm in/c.ppm >out/a.ppm
why=$(stderr_is 2 "^scaleppm: 'out/a.ppm' is a descriptor scaleppm was given")
[[ -n $why || ! -s out/a.ppm ]] || why='out/a.ppm written'
[[ -n $why || ! -e out/c.ppm ]] || why='out/c.ppm written'
result 'a batch output that is standard output: exit 2, nothing written' \
    "$why"

# --- 5000 odd names through --files-from - --------------------------------
# Hard links of one tiny image; the names have spaces (leading too),
# leading dashes, non-ASCII and invalid UTF-8, and with -0 newlines.
mkdir many
noise 3 2 255 21 3 >tiny.ppm
"$SP" -s 2 tiny.ppm tiny2.ppm
odd=(' lead %d.ppm' '-%d.ppm' '--%d x.ppm' 'sp ace %d.ppm' $'\xc3\xbc %d.ppm'
    $'\xff%d.ppm' '%d.ppm' $'new\nline %d.ppm')
for i in $(seq 0 4999); do
    # shellcheck disable=SC2059  # the format is the table's
    printf -v name -- "${odd[i % 8]}" "$i"
    printf '%s\0' "$name"
done >list0
# One process for the 5000 links, not 5000 ln.
python3 -c 'import os, sys
for n in sys.stdin.buffer.read().split(b"\0")[:-1]:
    os.link(b"tiny.ppm", b"many/" + n)' <list0
find many -mindepth 1 -printf '%f\0' | sort -z >want0
# From inside many/, so that a name's leading dash leads the name read.
rm -rf out && mkdir out
(cd many && spin ../list0 -t 2 -s 2 -o ../out/ --files-from - -0 &&
    mv e ../e && printf '%d' "$rc" >../rc)
rc=$(<rc)
why=$(stderr_is 0 "$(summary_re '5000 scaled')")
[[ -n $why ]] || find out -mindepth 1 -printf '%f\0' | sort -z |
    cmp -s - want0 || why='out/ does not hold the 5000 names'
sum=$(md5sum <tiny2.ppm | cut -c1-32)
n=0
[[ -n $why ]] || n=$(find out -type f -print0 | xargs -0 md5sum -z |
    grep -zc "^$sum ") || true
[[ -n $why ]] || ((n == 5000)) || why="$((5000 - n)) outputs differ"
result '5000 odd names, newlines too, through --files-from - -0' "$why"

# One a line: the same names but those with a newline.
LC_ALL=C grep -azv '^new' list0 | tr '\0' '\n' >list1
rm -rf out && mkdir out
(cd many && spin ../list1 -s 2 -o ../out/ --files-from - &&
    mv e ../e && printf '%d' "$rc" >../rc)
rc=$(<rc)
why=$(stderr_is 0 "$(summary_re '4375 scaled')")
[[ -n $why ]] || ((
    $(find out -type f | wc -l) == 4375)) || why='not 4375 outputs'
result '4375 odd names one a line through --files-from -' "$why"

# --- a full filesystem mid-batch -----------------------------------------
# Eight outputs of 230 kB each into a 1 MiB tmpfs: the first few fit.
mkdir fill full
for i in 1 2 3 4 5 6 7 8; do
    noise 40 40 255 $((30 + i)) 3 >"fill/f$i.ppm"
done
refs 8 fillref fill/f*.ppm
if ((EUID != 0)); then
    skip 'a full filesystem mid-batch' 'not root: cannot mount a tmpfs'
elif ! mount -t tmpfs -o size=1m tmpfs full 2>/dev/null; then
    skip 'a full filesystem mid-batch' 'mount -t tmpfs refused'
else
    mounted=$WORK/full
    sp -t 2 -s 8 -o full/ fill/f*.ppm
    why=$(intact full fillref)
    have=$(entries full)
    # The line may name the input or the output that could not be written.
    failed=$(grep -Ec '^scaleppm: (fill|full)/f[1-8]\.ppm: .*No space' e) ||
        true
    [[ -n $why ]] || ((rc == 1)) || why="exit $rc, want 1"
    [[ -n $why ]] || ((have > 0 && have < 8)) || why="$have outputs fit"
    [[ -n $why ]] || ((failed == 8 - have)) ||
        why="$have written and $failed named as failed: $(tr '\n' '|' <e)"
    [[ -n $why ]] || tail -n 1 e | grep -Eq -- \
        "$(summary_re "$have scaled, $failed failed")" ||
        why="summary: $(tail -n 1 e)"
    for f in full/*; do
        [[ -n $why || ! -e $f ]] || ! grep -Eq "(fill|full)/${f#full/}:" e ||
            why="${f#full/} is both written and named as failed"
    done
    result 'ENOSPC mid-batch: finished intact, failing named, none partial' \
        "$why"
    umount full
    mounted=''
fi

# --- kill -9 at seeded moments, then --skip-existing ----------------------
# PNG at deflate effort 9: a batch long enough to be killed in, on the CPU
# rather than the disk.  The moment is a seeded count of outputs in place
# (more may be by the time the signal lands), not a time: a loaded machine
# moves it nowhere.
mkdir kin kref
for i in $(seq 1 48); do
    noise 120 100 255 $((60 + i)) 3 >"kin/k$i.ppm"
    "$SP" -s 4 --compression 9 "kin/k$i.ppm" "kref/k$i.png"
done
kill9=("$SP" -t 2 -s 4 --compression 9 -o kout/%s.png)
RANDOM=17
between=0
for _ in 1 2 3 4; do
    rm -rf kout && mkdir kout
    at=$((RANDOM % 47 + 1))
    "${kill9[@]}" kin/k*.ppm 2>/dev/null </dev/null &
    bg_pid=$!
    while (($(entries kout) < at)) && alive "$bg_pid"; do
        sleep 0.01
    done
    kill -KILL "$bg_pid" 2>/dev/null || true
    wait "$bg_pid" 2>/dev/null || true
    bg_pid=''
    why=$(intact kout kref)
    done_before=$(entries kout)
    ((done_before == 0 || done_before == 48)) || between=$((between + 1))
    if [[ -z $why ]]; then
        rc=0
        "${kill9[@]}" --skip-existing kin/k*.ppm 2>e </dev/null || rc=$?
        counts="$((48 - done_before)) scaled, $done_before skipped"
        ((done_before != 0)) || counts='48 scaled'
        why=$(stderr_is 0 "$(summary_re "$counts")")
    fi
    [[ -n $why ]] || why=$(intact kout kref)
    have=$(entries kout)
    [[ -n $why ]] || ((have == 48)) || why="$have outputs of 48"
    result "kill -9 after $at outputs ($done_before done), --skip-existing: whole" \
        "$why"
done
((between > 0)) ||
    skip 'kill -9 mid-batch' \
        'no try was killed between the first and last output'

# --- a crash before writeback, then --skip-existing ------------------------
# A new output is not fsynced: a crash can bring its name back on an empty
# or short file, or (on some filesystems) on zeros.  --skip-existing makes
# such an output again and skips only a whole one, in every format.
mkdir cin
noise 30 20 255 90 3 >cin/one.ppm
{ noise 9 7 255 91 3; noise 5 6 255 92 3; } >cin/two.ppm
for ext in ppm pam png jpg bmp tga; do
    for in in one two; do
        [[ $ext != ppm && $in == two ]] && continue  # stb: one image
        rm -rf cout && mkdir cout
        "$SP" -s 2 "cin/$in.ppm" "cout/whole.$ext"
        size=$(stat -c %s "cout/whole.$ext")
        cp "cout/whole.$ext" "cout/empty.$ext"
        : >"cout/empty.$ext"
        head -c $((size - 1)) "cout/whole.$ext" >"cout/short.$ext"
        head -c $((size / 2)) "cout/whole.$ext" >"cout/half.$ext"
        head -c "$size" /dev/zero >"cout/zeros.$ext"
        mkdir -p cref
        for k in whole empty short half zeros; do
            cp "cout/whole.$ext" "cref/$k.$ext"
            cp "cin/$in.ppm" "cin/$k.ppm"
        done
        touch -d '2000-01-01' "cout/whole.$ext"
        sp -s 2 --skip-existing -o "cout/%s.$ext" \
            cin/{whole,empty,short,half,zeros}.ppm
        why=$(stderr_is 0 "$(summary_re '4 scaled, 1 skipped')")
        [[ -n $why ]] || why=$(holds cout cref \
            {whole,empty,short,half,zeros}."$ext")
        [[ -n $why ]] || [[ $(stat -c %Y "cout/whole.$ext") == \
            "$(date -d 2000-01-01 +%s)" ]] || why="the whole one was redone"
        result "--skip-existing .$ext ($in image$([[ $in == two ]] && echo s)): empty, short, zeros redone, whole skipped" "$why"
        rm -rf cref
    done
done

finish
