#!/usr/bin/env bash
# serve_integrity_test.sh: what `scaleppm serve` answers for a file that
# changes or is cut while it is served, and what an answer may hold
# (issue 37): a body that may be torn (its file rewritten in place while
# read) carries no validator; a mapped file cut under its job is a 500
# and the server goes on; an answer's bytes are bounded (--max-output, 413
# before the job, HEAD as GET) and counted in --max-memory for as long as
# its response holds them.  Each server listens on a free loopback port and is stopped at
# the end.
#
# usage: bash tests/serve_integrity_test.sh PATH/TO/scaleppm [PATH/TO/genimage]
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$here/lib.sh"
# shellcheck source-path=SCRIPTDIR source=serve_lib.sh
. "$here/serve_lib.sh"
setup "usage: serve_integrity_test.sh PATH/TO/scaleppm [PATH/TO/genimage]" "$@"
cd "$WORK"

if ! have curl; then
    skip 'serve integrity' 'curl not installed'
    finish
    exit
fi

# shellcheck disable=SC2064  # expand WORK now, while it is set
trap "stop_server; rm -rf -- '$WORK'" EXIT

mkdir root
noise 700 700 255 9 3 >big.ppm

# header NAME FILE: the value of the header NAME in the headers FILE.
header() {
    sed -n "s/^$1: \(.*\)\r\$/\1/p" "$2"
}

# A file rewritten in place while it is served (`cp new.ppm torn.ppm` as
# the issue saw it): the request is made when its first half holds the
# new image's bytes and its second half the old's.  The body is torn
# (neither version scaled), and the stamp, set as the write began, names
# the new version: the answer carries no ETag and no Last-Modified, and
# Cache-Control: no-store.  The open follows the write within the racy
# window (two seconds: request.h's SP_RACY_NS), which is checked, else
# skipped.  Once the file is a minute old its answers have validators.
noise 61 47 255 3 3 >old.ppm
noise 61 47 255 13 3 >new.ppm
"$SP" -s -2 old.ppm old-2.ppm
"$SP" -s -2 new.ppm new-2.ppm
cp old.ppm root/torn.ppm
touch -d '-1 min' root/torn.ppm
start_server --root root --workers 1 -q
curl -s -D settled.h -o settled.body "$URL/torn.ppm?s=-2"
etag=$(header ETag settled.h)
result 'a file a minute old: a strong ETag, Last-Modified' "$(
    [[ $etag =~ ^\"[0-9a-f]+\"$ && -n $(header Last-Modified settled.h) ]] ||
        echo "ETag '$etag'")"
half=$(($(stat -c %s old.ppm) / 2))
t0=$EPOCHREALTIME
dd if=new.ppm of=root/torn.ppm bs="$half" count=1 conv=notrunc status=none
curl -s -D torn.h -o torn.body -H "If-None-Match: $etag" "$URL/torn.ppm?s=-2"
t1=$EPOCHREALTIME
result 'rewritten in place while served: the body is torn' "$(
    if cmp -s torn.body old-2.ppm || cmp -s torn.body new-2.ppm; then
        echo 'one version whole'
    elif [[ $(head -c 2 torn.body) != P6 ]]; then
        echo 'not an image'
    fi)"
if awk -v a="$t0" -v b="$t1" 'BEGIN { exit !(b - a < 1.9) }'; then
    result 'a torn body: no ETag, no Last-Modified' \
        "$(grep -i -m 1 -e '^ETag:' -e '^Last-Modified:' torn.h || true)"
    result 'a torn body: Cache-Control: no-store' \
        "$([[ $(header Cache-Control torn.h) == no-store ]] ||
            header Cache-Control torn.h)"
else
    skip 'a torn body: no validator' 'the request took over 1.9 s'
fi
dd if=new.ppm of=root/torn.ppm bs="$half" skip=1 seek=1 conv=notrunc \
    status=none
touch -d '-1 min' root/torn.ppm
curl -s -D new.h -o new.body -H "If-None-Match: $etag" "$URL/torn.ppm?s=-2"
result 'the rewrite done, a minute old: the new bytes, a new ETag' "$(
    cmp -s new.body new-2.ppm && [[ -n $(header ETag new.h) &&
        $(header ETag new.h) != "$etag" ]] || echo "ETag '$(header ETag new.h)'")"
stop_server

# A mapped file cut while its job reads it: the SIGBUS of the job's next
# row is the guard's (input/guard.c), which the workers must not block;
# the answer is 500 and the server goes on.  The job (an enlarge by 8 into
# a PNG at zlib's level 9: seconds) is frozen with the server (SIGSTOP)
# as soon as its mapping shows, the file is cut to one page, and the
# server continued: the rows it has left to read are gone.
start_server --root root --workers 1 --allow-io -q
cp big.ppm root/cut.ppm
curl -s -o cut.body -w '%{http_code}' \
    "$URL/cut.ppm?s=8&format=png&compression=9&io=mmap" >cut.code &
cut_pid=$!
: >cut.body
why=
until grep -q '/cut\.ppm$' "/proc/$server_pid/maps"; do
    kill -0 "$cut_pid" 2>/dev/null || { why='never mapped'; break; }
done
kill -STOP "$server_pid"
truncate -s 4096 root/cut.ppm
kill -CONT "$server_pid"
wait "$cut_pid" || true
[[ -n $why || $(cat cut.code) == 500 ]] ||
    why="$(cat cut.code): $(head -c 100 cut.body)"
result 'a mapped file cut under its job: 500' "$why"
code=$(status /healthz || true)
result 'and the server goes on' "$([[ $code == 200 ]] || echo "$code")"
stop_server

# held: whether the server holds bytes for its jobs and answers
# (--max-memory's count: scaleppm_memory_held_bytes in /metrics).
held() {
    local n
    n=$(curl -s "$URL/metrics" | sed -n 's/^scaleppm_memory_held_bytes //p')
    [[ ${n:-0} != 0 ]]
}

# --max-output: an answer planned over it (from the header: 1400x1400x3
# bytes, over 1 MiB) is 413 before its job, for HEAD as for GET; one under
# it is served.
start_server --root root --workers 1 --max-output 1M -q
cp big.ppm root/big.ppm
expect_status '413 over --max-output' 413 '/big.ppm?s=2'
result 'the 413 names --max-output' "$(grep -q -- --max-output body ||
    head -c 100 body)"
result '413 over --max-output: HEAD as GET' "$(
    code=$(status '/big.ppm?s=2' -I) && [[ $code == 413 ]] || echo "$code")"
expect_status 'under --max-output: 200' 200 '/big.ppm?s=-2'
stop_server

# The default --max-output: a HEAD of 40 bytes asking a 640x480 image
# enlarged by 64 (3.8 GB) is 413 before its job.  The server may write
# files of 64 MiB at most (ulimit -f): a job that wrote that answer would
# die of SIGXFSZ, the server with it.
noise 640 480 255 21 3 >root/vga.ppm
ulimit -S -f $((64 * 1024))
start_server --root root --workers 1 -q
ulimit -S -f unlimited
result 'the default --max-output: HEAD s=64 of 640x480 is 413' "$(
    code=$(status '/vga.ppm?s=64' -I) && [[ $code == 413 ]] || echo "$code")"
expect_status 'and the server goes on' 200 /healthz
stop_server

# --max-memory counts an answer's bytes while its response holds them:
# a client that reads a 2800x2800x3 answer (23.5 MB of a 26 MiB budget)
# at a kilobyte a second holds them, and the same request beside it is
# 503; once that client is gone, the bytes are given back and it is
# served.  Each step waits for its event: the answer held (its headers
# sent, its bytes counted), then given back (the count back to zero).
start_server --root root --workers 2 --max-memory 26M -q
rm -f slow.head
curl -s --limit-rate 1k -D slow.head -o /dev/null "$URL/big.ppm?s=4" &
slow_pid=$!
give_up=$((SECONDS + 60))
until { [[ -s slow.head ]] && held; } || ((SECONDS > give_up)); do :; done
expect_status 'an answer held by a slow reader: 503 beside it' 503 \
    '/big.ppm?s=4'
result 'the 503 names the memory' "$(grep -q memory body || echo 'another body')"
kill "$slow_pid"
wait "$slow_pid" || true
give_up=$((SECONDS + 60))
while held && ((SECONDS <= give_up)); do :; done
expect_status 'the slow reader gone: its bytes given back, 200' 200 \
    '/big.ppm?s=4'
stop_server

# No file per request: an answer is made in memory and sent from there,
# its input read through the descriptor opened beneath the root, so the
# server traced through 24 requests (each output format and load path),
# after one that opens what a process opens once, makes, links, renames
# and removes no file, opens nothing but its inputs (one openat2 a
# request, none of them creating), and never an input through
# /proc/PID/fd.  What a sanitizer's runtime does at the start (TSan makes
# and removes a file under TMPDIR; ASan reads /proc/self/cmdline) is not
# a request's.
if ! have strace || ! strace -f -o /dev/null true 2>/dev/null; then
    skip 'no file per request' 'strace not installed or not allowed'
    finish
    exit
fi
mkdir -p tmp
rm -f trace
# the log made before the server starts, so that the loop below never
# reads a file not yet there (under load the background redirect can
# come after the first read: sed failed, and set -e ended the script)
: >server.log
TMPDIR=$WORK/tmp strace -f -qq -o trace \
    -e trace=open,openat,openat2,creat,link,linkat,unlink,unlinkat,rename,renameat,renameat2,mkdir,mkdirat,memfd_create \
    "$SP" serve --root root --listen 127.0.0.1:0 --allow-io -q 2>server.log &
tracer=$!
URL=
while alive "$tracer" && [[ -z $URL ]]; do
    URL=$(sed -n 's|.*listening on \(http://.*:[0-9]*\)/$|\1|p' server.log)
    [[ -n $URL ]] || sleep 0.05
done
# one request first: what a process opens once, when first asked
# (/etc/localtime for the first date), is not a request's
codes=$(status '/big.ppm?s=-4')
calls_before=$(wc -l <trace)
for io in read mmap pread auto; do
    for fmt in pnm png jpg bmp tga ppm; do
        codes+=$(status "/big.ppm?s=-4&io=$io&format=$fmt")
    done
done
# the server's own pid, the tracer's child, stopped so that strace ends
server_pid=$(cat "/proc/$tracer/task/$tracer/children")
stop_server
wait "$tracer" || true
why=
if [[ $codes != "$(printf '200%.0s' $(seq 25))" ]]; then
    why="statuses $codes"
else
    after=$(tail -n +"$((calls_before + 1))" trace)
    bad=$(grep -v -e '+++' -e '---' -e '^[0-9]* *openat2(' \
        -e '<\.\.\. openat2 resumed>' <<<"$after" |
        head -n 1 || true)
    opens=$(grep -c 'openat2(' <<<"$after" || true)
    if [[ -n $bad ]]; then
        why="a call per request: $bad"
    elif ((opens != 24)); then
        why="$opens opens of inputs for 24 requests"
    elif grep -q -E 'O_CREAT|O_TMPFILE' <<<"$after"; then
        why="$(grep -m 1 -E 'O_CREAT|O_TMPFILE' <<<"$after")"
    elif grep -q -E '"/proc/[^"]*/fd/' trace; then
        why="$(grep -m 1 -E '"/proc/[^"]*/fd/' trace)"
    fi
fi
result 'no file made, linked, renamed or removed per request (strace)' "$why"
result 'nothing written under TMPDIR' "$(find tmp -mindepth 1 | head -n 3)"

finish
