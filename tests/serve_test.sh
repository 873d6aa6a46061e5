#!/usr/bin/env bash
# serve_test.sh: `scaleppm serve` (docs/serve.md) driven by curl: every
# answer compared with the command line's bytes for the same options,
# every status code it gives, 304s, HEAD, traversal attempts over HTTP,
# 503 with Retry-After from a full queue, past a deadline (queued, and
# a running job cancelled) and past --max-memory, /metrics, a slow
# client, descriptors steady, a file cut while served, read's heap
# steady, pread's pages reused, a Unix socket, and a SIGTERM that lets the requests in flight
# finish.  Each server listens on a free loopback port (one on a
# Unix socket) and is stopped at the end; nothing is written under its
# $TMPDIR ($WORK/tmp, checked empty): answers are made in memory.
#
# usage: bash tests/serve_test.sh PATH/TO/scaleppm [PATH/TO/genimage]
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$here/lib.sh"
# shellcheck source-path=SCRIPTDIR source=serve_lib.sh
. "$here/serve_lib.sh"
setup "usage: serve_test.sh PATH/TO/scaleppm [PATH/TO/genimage]" "$@"
cd "$WORK"

if ! have curl; then
    skip 'serve' 'curl not installed'
    finish
    exit
fi

# shellcheck disable=SC2064  # expand WORK now, while it is set
trap "stop_server; rm -rf -- '$WORK'" EXIT

mkdir root
noise 61 47 255 3 3 >root/rgb.ppm
noise 40 33 255 5 1 >root/gray.pgm
noise 30 20 65535 7 3 >root/deep.ppm
printf 'not an image\n' >root/text.ppm
head -c 500 root/rgb.ppm >root/cut.ppm
printf 'P6\n100000 100000\n255\n' >root/huge.ppm
# sparse: as long as its header says, so that only the pixel limit
# refuses it
truncate -s $((21 + 3 * 100000 * 100000)) root/huge.ppm
mkdir root/sub
cp root/gray.pgm 'root/sub/a b+c.pgm'
mkfifo root/fifo
printf 'secret\n' >outside.ppm
ln -s ../outside.ppm root/out
ln -s "$WORK/outside.ppm" root/out_abs
# A minute old: a file changed within two seconds of its open gets no
# validator (request.h's SP_RACY_NS), and these answers must have theirs.
touch -d '-1 min' root/rgb.ppm

# Usage errors: exit 2, one line naming the option, no server.
for args in '--workers 0' '--workers 1025' '-t 0' '--timeout 0' \
    '--drain x' '--max-per-client -1' '--max-connections 0' \
    '--listen [::1:80' '--listen []:80' '--listen 127.0.0.1' '--queue -1' \
    '--deadline 1e9'; do
    rc=0
    # shellcheck disable=SC2086  # ARGS is split on purpose
    "$SP" serve --root root $args 2>usage.err || rc=$?
    result "usage error: $args" "$( [[ $rc == 2 && $(wc -l <usage.err) == 1 ]] &&
        grep -q -- "${args%% *}" usage.err || echo "exit $rc: $(head -n 1 usage.err)")"
done

start_server --root root --workers 2 --queue 4

expect_status 'healthz' 200 /healthz
expect_status 'readyz' 200 /readyz

# The command line's bytes, for every output format and a few options.
same_as_cli() {
    local what=$1 query=$2 in=$3 ext=$4
    shift 4
    "$SP" "$@" "root/$in" "cli.$ext" 2>/dev/null
    if [[ $(status "/$in?$query") != 200 ]]; then
        fail "$what" "status $(cat body)"
    else
        check "$what" same body "cli.$ext"
    fi
}
for ext in pnm ppm pgm pam png jpg jpeg bmp tga; do
    same_as_cli "GET rgb.ppm s=-2 as $ext" "s=-2&format=$ext" rgb.ppm "$ext" \
        -s -2
done
same_as_cli 'GET with no format: PNM of the input type' 's=3' gray.pgm pnm -s 3
same_as_cli 'box reduce' 's=-3&filter=box' rgb.ppm ppm -s -3 --filter box
same_as_cli 'JPEG quality' 's=-2&format=jpeg&quality=40' rgb.ppm jpg -s -2 \
    --quality 40
same_as_cli '16-bit input' 's=2&format=png' deep.ppm png -s 2
# Issue 28's options, each as its command line option.
same_as_cli 'fit=WxH' 'fit=20x20&format=png' rgb.ppm png --fit 20x20
same_as_cli 'width=' 'width=25' rgb.ppm ppm --width 25
same_as_cli 'height=' 'height=9&format=pgm' gray.pgm pgm --height 9
same_as_cli 'a fit inside the box: copied' 'fit=200x200' gray.pgm pgm \
    --fit 200x200
same_as_cli 'fit=WxH&enlarge' 'fit=200x200&enlarge&format=png' gray.pgm png \
    --fit 200x200 --enlarge
same_as_cli 'a later width= overrides fit=' 'fit=30x30&width=12' rgb.ppm ppm \
    --fit 30x30 --width 12
same_as_cli 'a fit of a 16-bit input' 'fit=17x17&format=png' deep.ppm png \
    --fit 17x17
for level in 0 9; do
    same_as_cli "compression=$level" "s=-2&format=png&compression=$level" \
        rgb.ppm png -s -2 --compression "$level"
done
for ss in 444 422 420; do
    same_as_cli "subsample=$ss" "s=2&format=jpg&subsample=$ss&quality=70" \
        rgb.ppm jpg -s 2 --subsample "$ss" --quality 70
done
"$SP" --fit 20x20 root/rgb.ppm cli.jpg
status '/rgb.ppm?fit=20x20&format=jpg' >/dev/null
curl -s -o fitjpg "$URL/rgb.ppm?fit=20x20&format=jpg"
check 'a fit to JPEG, answered twice alike' same fitjpg body
check 'a fit to JPEG: the command line'"'"'s bytes' same body cli.jpg
"$SP" -s 2 'root/sub/a b+c.pgm' cli.pgm
status '/sub/a%20b+c.pgm?s=2' >/dev/null
check 'an escaped name (a space; + is a +)' same body cli.pgm

# Content types, HEAD, validators.
ctype=$(curl -s -o /dev/null -w '%{content_type}' "$URL/rgb.ppm?s=-2&format=png")
result 'Content-Type image/png' "$([[ $ctype == image/png ]] || echo "$ctype")"
curl -s -D get.h -o get.body "$URL/rgb.ppm?s=-2&format=png"
curl -s -I -o head.h "$URL/rgb.ppm?s=-2&format=png"
len=$(sed -n 's/^Content-Length: \([0-9]*\)\r$/\1/p' head.h)
result 'HEAD: the length of the GET body' \
    "$([[ $len == "$(wc -c <get.body)" ]] || echo "$len")"
result 'Server-Timing: load, scale, release, write' \
    "$(grep -q '^Server-Timing: load;dur=[0-9.]*, scale;dur=[0-9.]*, release;dur=[0-9.]*, write;dur=[0-9.]*'$'\r''$' get.h ||
        grep '^Server-Timing' get.h || echo none)"
etag=$(sed -n 's/^ETag: \(.*\)\r$/\1/p' get.h)
result 'a strong ETag' "$([[ $etag =~ ^\"[0-9a-f]+\"$ ]] || echo "$etag")"
expect_status '304 on If-None-Match' 304 '/rgb.ppm?s=-2&format=png' \
    -H "If-None-Match: $etag"
expect_status '304 on a weak match in a list' 304 '/rgb.ppm?s=-2&format=png' \
    -H "If-None-Match: \"x\", W/$etag"
expect_status '304 on If-None-Match: *' 304 '/rgb.ppm?s=-2&format=png' \
    -H 'If-None-Match: *'
expect_status '200 on another tag' 200 '/rgb.ppm?s=-2&format=png' \
    -H 'If-None-Match: "0000"'
expect_status '304 on If-Modified-Since' 304 '/rgb.ppm?s=-2&format=png' \
    -H "If-Modified-Since: $(date -u -r root/rgb.ppm '+%a, %d %b %Y %T GMT')"
other=$(curl -s -o /dev/null -D - "$URL/rgb.ppm?s=-3&format=png" |
    sed -n 's/^ETag: \(.*\)\r$/\1/p')
result 'another scale, another tag' "$([[ $other != "$etag" ]] || echo same)"
tag_of() {
    curl -s -o /dev/null -D - "$URL/rgb.ppm?$1" | sed -n 's/^ETag: \(.*\)\r$/\1/p'
}
tags=$(for q in fit=20x20 fit=20x21 'fit=20x20&enlarge' width=20 height=20 \
    's=-2&format=png&compression=1' 's=-2&format=png&compression=2' \
    's=-2&format=jpg&subsample=444' 's=-2&format=jpg&subsample=420'; do
    tag_of "$q"
done | sort -u | wc -l)
result 'fit, enlarge, compression, subsample: a tag each' \
    "$( ((tags == 9)) || echo "$tags tags")"
# One job however spelled (the keys' order, scale= or its alias s=, a
# default given): one tag, the canonical form's (src/job/params.c).
tags=$(for q in 's=-2&format=png' 'format=png&scale=-2' \
    'scale=-2&format=PNG&compression=6&filter=sample'; do
    tag_of "$q"
done | sort -u)
result 'one job spelled three ways: one tag, the first one' \
    "$([[ $tags == "$etag" ]] || echo "${tags//$'\n'/ }")"
touch -d '2001-01-01' root/rgb.ppm
expect_status 'the file changed: 200 again' 200 '/rgb.ppm?s=-2&format=png' \
    -H "If-None-Match: $etag"

# Every refusal.
expect_status '400 missing s' 400 '/rgb.ppm'
expect_status '400 s=0' 400 '/rgb.ppm?s=0'
expect_status '400 an unknown key' 400 '/rgb.ppm?s=2&x=1'
expect_status '400 a key twice' 400 '/rgb.ppm?s=2&s=3'
expect_status '400 a key twice, in both spellings' 400 '/rgb.ppm?s=2&scale=2'
expect_status '400 io= without --allow-io' 400 '/rgb.ppm?s=2&io=mmap'
expect_status '400 box on an enlarge' 400 '/rgb.ppm?s=2&filter=box'
expect_status '400 quality for PNG' 400 '/rgb.ppm?s=2&format=png&quality=5'
expect_status '400 an unknown format' 400 '/rgb.ppm?s=2&format=gif'
expect_status '400 s= and fit=' 400 '/rgb.ppm?s=2&fit=5x5'
expect_status '400 enlarge without a fit' 400 '/rgb.ppm?s=2&enlarge'
expect_status '400 enlarge=1' 400 '/rgb.ppm?fit=5x5&enlarge=1'
expect_status '400 fit=5' 400 '/rgb.ppm?fit=5'
expect_status '400 width=0' 400 '/rgb.ppm?width=0'
expect_status '400 compression for JPEG' 400 \
    '/rgb.ppm?s=2&format=jpg&compression=5'
expect_status '400 compression=10' 400 '/rgb.ppm?s=2&format=png&compression=10'
expect_status '400 subsample for PNG' 400 '/rgb.ppm?s=2&format=png&subsample=444'
expect_status '400 subsample=411' 400 '/rgb.ppm?s=2&format=jpg&subsample=411'
expect_status '400 PBM from colour' 400 '/rgb.ppm?s=2&format=pbm'
expect_status '403 a directory' 403 '/sub?s=2'
expect_status '403 a FIFO' 403 '/fifo?s=2'
expect_status '404 not there' 404 '/missing.ppm?s=2'
expect_status '405 POST' 405 '/rgb.ppm?s=2' -X POST
expect_status '405 DELETE' 405 '/rgb.ppm?s=2' -X DELETE
expect_status '413 a header of 10 gigapixels' 413 '/huge.ppm?s=-2'
long=$(printf 'a%.0s' {1..300})
expect_status '414 a name too long' 414 "/$long.ppm?s=2"
expect_status '500 a cut file' 500 '/cut.ppm?s=2'

# Traversal over HTTP: refused, and the secret never in a body.
n=0
# `..` plain, encoded, mixed case, half encoded, double encoded, with
# encoded and overlong slashes and backslashes, overlong UTF-8 dots, NUL,
# `.` and empty segments, and symbolic links out (relative, absolute, a
# directory's, from a subdirectory).
traversals=(
    /../outside.ppm /%2e%2e/outside.ppm /%2E%2E/outside.ppm
    /.%2e/outside.ppm /%2e./outside.ppm /sub/../../outside.ppm
    /sub%2f..%2f..%2foutside.ppm /..%2foutside.ppm /..%2Foutside.ppm
    /%2e%2e%2foutside.ppm /sub/%2e%2e/%2e%2e/outside.ppm
    /sub/..%2f..%2foutside.ppm /..%5coutside.ppm '/..\outside.ppm'
    /%5c../outside.ppm /..%255coutside.ppm /%c0%ae%c0%ae/outside.ppm
    /%e0%80%ae%e0%80%ae/outside.ppm /..%c0%afoutside.ppm /..%c1%9coutside.ppm
    /rgb.ppm%00.png /%00../outside.ppm /.%00./outside.ppm //outside.ppm
    /sub//../outside.ppm /./outside.ppm /sub/./../outside.ppm /..
    /sub/.. /%252e%252e/outside.ppm /%252e%252e%252foutside.ppm
    /out /out_abs /out/ /dirlink/outside.ppm /sub/up /etclink/passwd
)
ln -s .. root/dirlink
ln -s ../../outside.ppm root/sub/up
ln -s /etc root/etclink
n=0
for path in "${traversals[@]}"; do
    code=$(status "$path?s=2")
    if [[ $code == 200 ]] || grep -q -e secret -e '^root:' body; then
        fail "traversal $path" "answered $code"
    else
        n=$((n + 1))
    fi
done
result "$n traversal attempts over HTTP refused" \
    "$( ((n == ${#traversals[@]} && n >= 30)) || echo "$n refused")"

curl -s -o metrics "$URL/metrics"
why=
grep -qx 'scaleppm_requests_total{code="405"} 2' metrics ||
    why="405s: $(grep 'code="405"' metrics)"
grep -q '^scaleppm_request_seconds_bucket{le="+Inf"} [1-9]' metrics ||
    why='no latency histogram'
grep -q '^scaleppm_queue_length 0$' metrics || why='no queue length'
grep -q '^scaleppm_jobs_total{io="pread"} [1-9]' metrics ||
    why="no pread jobs: $(grep 'jobs_total' metrics | tr '\n' ' ')"
result '/metrics counts' "$why"

stop_server
left=$(find tmp -mindepth 1 | head -n 3)
result 'nothing written under TMPDIR' "$left"
if grep -q '^GET /rgb.ppm 200 ' server.log; then
    pass 'an access log line'
else
    fail 'an access log line' "$(tail -n 1 server.log)"
fi

# A full queue is 503 with Retry-After: one worker, no queue, and a job
# that runs until the script ends it (long.ppm enlarged by 64: 6 GB of
# raster, over 30 s of CPU here, a thousand requests' time).  The
# request to refuse goes once the job is seen running; then the job's
# input is cut, which ends it (500: changed while read), and the next
# request is served whole.
noise 700 700 255 9 3 >root/big.ppm
cp root/big.ppm root/long.ppm
touch -d '-1 min' root/long.ppm
start_server --root root --workers 1 --queue 0 --max-output 0 -q
curl -s -o long -w '%{http_code}' "$URL/long.ppm?s=64&format=png" \
    >long.code &
long_pid=$!
why=
if ! wait_running 1; then
    why='the long job was never seen running'
elif [[ $(status '/big.ppm?s=3&format=png' -D busy.h) != 503 ]]; then
    why="not 503 while the job runs: $(head -c 100 body)"
elif ! grep -q '^Retry-After: ' busy.h; then
    why='503 with no Retry-After'
fi
truncate -s 15 root/long.ppm
wait "$long_pid" || true
[[ -n $why || $(cat long.code) == 500 ]] ||
    why="the cut job: $(cat long.code) $(head -c 100 long)"
"$SP" -s 3 root/big.ppm big.png
if [[ -z $why ]] && wait_running 0 &&
    [[ $(status '/big.ppm?s=3&format=png') == 200 ]]; then
    cmp -s body big.png || why='the next answer differs'
else
    why=${why:-"the next request: $(head -c 100 body)"}
fi
result '503 + Retry-After when full, then served whole' "$why"

stop_server

# A request whose deadline passes in the queue is 503, not begun: one
# worker busy with the long job, a second request seen queued, then the
# server stopped (SIGSTOP) for longer than the deadline, so that both
# deadlines pass before it goes on.  The long job is then cancelled and
# the queued one must be refused, not begun (/metrics: one job begun).
# Should the long job's deadline pass before the second is queued (a
# machine slower than the deadline), the round proves nothing and is
# tried again with a deadline twice as long.
cp root/big.ppm root/long.ppm
touch -d '-1 min' root/long.ppm
why='no round had the second request queued within the deadline'
for deadline in 2 4 8; do
    start_server --root root --workers 1 --queue 1 --max-output 0 \
        --deadline "$deadline" -q
    curl -s -o long -w '%{http_code}' "$URL/long.ppm?s=64&format=png" \
        >long.code &
    long_pid=$!
    wait_running 1 || true
    began=$EPOCHREALTIME
    curl -s -o late -w '%{http_code}' "$URL/big.ppm?s=3&format=png" \
        >late.code &
    late_pid=$!
    wait_metric scaleppm_queue_length 1 || true
    queued=$EPOCHREALTIME
    kill -STOP "$server_pid"
    sleep $((deadline + 1))  # at least: both deadlines pass meanwhile
    kill -CONT "$server_pid"
    wait "$long_pid" "$late_pid" || true
    begun=$(curl -s "$URL/metrics" |
        awk '/^scaleppm_jobs_total/ { n += $2 } END { print n + 0 }')
    stop_server
    # in time: queued before the long job's deadline could have passed
    awk -v b="$began" -v q="$queued" -v d="$deadline" \
        'BEGIN { exit !(q - b < d) }' || continue
    why=
    [[ $(cat late.code) == 503 ]] && grep -q deadline late ||
        why="the queued request: $(cat late.code) $(head -c 100 late)"
    ((begun == 1)) || why="${why:+$why; }$begun jobs begun, not 1"
    break
done
result '503 past the deadline, not begun' "$why"

# A running job is cancelled at its deadline: one worker, a deadline of
# one second, and a job of over 30 s of CPU here (long.ppm, whole again,
# enlarged by 64 into a PNG).  The job was begun (/metrics counts it), so
# its 503 cannot be the queue's: the watch cancelled it, its worker is
# free for the next request, and its unfinished answer is gone.
cp root/big.ppm root/long.ppm
touch -d '-1 min' root/long.ppm
start_server --root root --workers 1 --deadline 1 --max-output 0 -q
code=$(status '/long.ppm?s=64&format=png' -m 60)
begun=$(curl -s "$URL/metrics" |
    awk '/^scaleppm_jobs_total/ { n += $2 } END { print n + 0 }')
why=
if [[ $code != 503 ]] || ! grep -q deadline body; then
    why="$code: $(head -c 100 body)"
elif ((begun != 1)); then
    why="$begun jobs begun, not 1"
elif ! wait_running 0; then
    why='the job still runs after its answer'
fi
result 'a running job cancelled at its deadline: 503, worker free' "$why"
expect_status 'and the next request is served' 200 '/gray.pgm?s=2'
result 'the cancelled answer wrote nothing under TMPDIR' \
    "$(find "$WORK/tmp" -type f | head -n 1)"
stop_server

# --max-memory: read holds the raster (700x700x3), two chunks of 512 KiB
# and the answer's 350x350x3 (2.9 MB, over 2560 KiB), pread only its
# chunks and the answer (2.5 MB: admitted); a second request while the
# first's answer is held by a client that does not read it (a BMP of
# 3500x3500, built whole by stb_image_write: most of 128 MiB while its
# job runs, then its 37 MB answer, more than any socket's buffers take,
# until it is sent) is turned away, and served once that client is gone.
start_server --root root --workers 2 --max-memory 2560K --allow-io -q
expect_status '413 read over --max-memory' 413 '/big.ppm?s=-2&io=read'
expect_status 'pread under --max-memory' 200 '/big.ppm?s=-2&io=pread'
stop_server
start_server --root root --workers 2 --max-memory 128M -q
hostport=${URL#http://}
exec {held}<>"/dev/tcp/${hostport%:*}/${hostport##*:}"
printf 'GET /big.ppm?s=5&format=bmp HTTP/1.1\r\nHost: x\r\n\r\n' >&"$held"
why=
if ! wait_metric 'scaleppm_jobs_total{io="pread"}' 1; then
    why="the held answer's job never ran"
elif [[ $(status '/big.ppm?s=5&format=bmp') != 503 ]] ||
    ! grep -q memory body; then
    why="not 503 while the answer is held: $(head -c 100 body)"
fi
exec {held}>&-
# until the held answer is given back: the request of /metrics alone
if [[ -z $why ]] && { ! wait_metric scaleppm_in_flight 1 ||
    [[ $(status '/big.ppm?s=5&format=bmp') != 200 ]]; }; then
    why="not served once the client is gone: $(head -c 100 body)"
fi
result '503 while the memory is held, served once it is given back' "$why"
stop_server

# A slow client holds a descriptor, never the worker: with one worker,
# a request is answered while another's body trickles out; and the
# server's descriptors are as many after a run of requests as before.
start_server --root root --workers 1 -q
curl -s --limit-rate 10k -o /dev/null "$URL/big.ppm?s=3&format=png" &
slow=$!
# its job begun, then done: its body trickles out (megabytes at 10 kB/s)
wait_running 1 || true
wait_running 0 || true
code=$(curl -s -m 10 -o /dev/null -w '%{http_code}' "$URL/gray.pgm?s=2" ||
    true)
result 'a slow client does not hold the worker' \
    "$([[ $code == 200 ]] || echo "$code")"
kill "$slow" 2>/dev/null || true
wait "$slow" 2>/dev/null || true
quiet || true
fds=$(fd_count)
for ((i = 0; i < 50; i++)); do
    curl -s -o /dev/null "$URL/gray.pgm?s=$((i % 5 + 2))" \
        -o /dev/null "$URL/missing.ppm?s=2" \
        -o /dev/null "$URL/gray.pgm?s=-2&format=png" \
        -o /dev/null --path-as-is "$URL/../x?s=2"
done
quiet || true
after=$(fd_count)
result "descriptors steady after 200 requests ($fds, $after)" \
    "$([[ $after == "$fds" ]] || echo differ)"
stop_server

# --max-per-client: a second request from the address while its first
# runs is 429 with Retry-After; /healthz and /metrics are not counted;
# once the first is done the address is served again.  The first is a
# job of over 30 s (long.ppm x64, as above), ended by cutting its input
# once the others are answered.
cp root/big.ppm root/long.ppm
touch -d '-1 min' root/long.ppm
start_server --root root --workers 2 --max-per-client 1 --max-output 0 -q
curl -s -o /dev/null "$URL/long.ppm?s=64&format=png" &
first=$!
wait_running 1 || true
expect_status '429 past --max-per-client' 429 '/gray.pgm?s=2'
retry=$(curl -s -o /dev/null -D - "$URL/gray.pgm?s=2" |
    sed -n 's/^Retry-After: \([0-9]*\)\r$/\1/p')
result '429: Retry-After' "$([[ -n $retry ]] || echo none)"
expect_status '/healthz not counted' 200 /healthz
truncate -s 15 root/long.ppm
wait "$first" || true
expect_status 'served again once the first is done' 200 '/gray.pgm?s=2'
stop_server

# --max-connections: with two connections open (idle), a third waits in
# the kernel's backlog, unanswered, until one of them closes; then it is
# answered.
start_server --root root --max-connections 2 -q
got=$(/usr/bin/python3 - "${URL##*:}" <<'PY'
import socket, sys
port = int(sys.argv[1])
held = [socket.create_connection(("127.0.0.1", port)) for _ in range(2)]
third = socket.create_connection(("127.0.0.1", port))
third.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
third.settimeout(1)
try:
    third.recv(100)
    print("answered at the limit")
except socket.timeout:
    held[0].close()
    third.settimeout(30)
    print(third.recv(100).split(b"\r\n")[0].decode())
PY
)
result '--max-connections: past it, waits; answered once one closes' \
    "$([[ $got == 'HTTP/1.1 200 OK' ]] || echo "$got")"
stop_server

# IPv6: --listen [::1]:0, the same bytes (where the loopback has IPv6).
if grep -q '^0\{31\}1 ' /proc/net/if_inet6 2>/dev/null; then
    LISTEN='[::1]:0' start_server --root root -q
    result 'IPv6: the address printed in brackets' \
        "$([[ $URL == http://\[::1\]:* ]] || echo "$URL")"
    "$SP" -s 3 root/gray.pgm cli.pgm
    status '/gray.pgm?s=3' >/dev/null
    check 'IPv6: the bytes of the command line' same body cli.pgm
    stop_server
else
    skip 'IPv6 --listen [::1]' 'no IPv6 loopback here'
fi

# A header of 10 gigapixels (30 GB of raster) is 413 on every load path
# before a byte of it is allocated or mapped: the server runs with 2 GiB
# of address space, in which a malloc or an mmap of the raster fails (a
# 500, not a 413).  Not for a sanitizer's build, whose shadow memory
# needs more address space than that.
if sanitized; then
    skip '413 before any allocation (2 GiB of address space)' \
        'a sanitizer build'
else
    ulimit -S -v $((2 * 1024 * 1024))
    start_server --root root --workers 1 --allow-io -q
    ulimit -S -v unlimited
    for io in "${IO_PATHS[@]}"; do
        expect_status "413 before any allocation: io=$io, 2 GiB of address space" \
            413 "/huge.ppm?s=-2&io=$io"
    done
    expect_status 'and the server goes on' 200 '/gray.pgm?s=2'
    stop_server
fi

# The heap holds the rasters in flight, not one a worker: 24 requests
# one at a time on read, over 8 workers, leave the server's anonymous
# memory at most 3 rasters above where it began (glibc's arena a thread
# kept the last raster each worker freed: 8).  Not for a sanitizer's
# build, whose allocator keeps what is freed.
if sanitized; then
    skip 'read: the heap holds the rasters in flight' 'a sanitizer build'
else
    raster=$(($(stat -c %s root/big.ppm)))
    start_server --root root --workers 8 --allow-io -q
    status /healthz >/dev/null
    anon0=$(sed -n 's/^RssAnon:[[:space:]]*\([0-9]*\) kB$/\1/p' \
        "/proc/$server_pid/status")
    for ((i = 0; i < 24; i++)); do
        status '/big.ppm?s=-3&io=read' >/dev/null
    done
    anon=$(sed -n 's/^RssAnon:[[:space:]]*\([0-9]*\) kB$/\1/p' \
        "/proc/$server_pid/status")
    why=
    (((anon - anon0) * 1024 <= 3 * raster)) ||
        why="grew $(((anon - anon0) / 1024)) MiB, a raster $((raster >> 10)) KiB"
    result 'read: the heap holds the rasters in flight, not one a worker' "$why"
    # A request writes into pages the one before it faulted in: 8 pread
    # jobs after 8 others fault fewer pages than one answer holds (a
    # fresh mapping for each job's work buffers faulted every page of its
    # chunk on every request).
    pread_faults() {
        curl -s "$URL/metrics" |
            sed -n 's/^scaleppm_minor_faults_total{io="pread"} //p'
    }
    for ((i = 0; i < 8; i++)); do
        status '/big.ppm?s=-3&io=pread' >/dev/null
    done
    faults0=$(pread_faults)
    for ((i = 0; i < 8; i++)); do
        status '/big.ppm?s=-3&io=pread' >/dev/null
    done
    faults=$(($(pread_faults) - faults0)) answer=$(wc -c <body)
    why=
    (($(getconf PAGESIZE) * faults < answer)) ||
        why="$faults faults over 8 jobs, an answer of $answer bytes"
    result 'pread: a request reuses the pages of the last' "$why"
    stop_server
fi

# A file cut while it is served: 500 (its bytes are not the tagged
# version's), and the server goes on.
start_server --root root --workers 1 -q
cp root/big.ppm root/shrinking.ppm
curl -s -o /dev/null -w '%{http_code}' "$URL/shrinking.ppm?s=3&format=png" \
    >shrinking.code &
cut_pid=$!
wait_running 1 || true
truncate -s 1000 root/shrinking.ppm
wait "$cut_pid" || true
result 'a file cut while served: 500' \
    "$([[ $(cat shrinking.code) == 500 ]] || cat shrinking.code)"
expect_status 'the server goes on' 200 /healthz
stop_server

# A Unix socket: the same bytes, and the socket removed at the stop.
TMPDIR=$WORK/tmp "$SP" serve --root root --listen "unix:$WORK/sock" -q \
    2>server.log &
server_pid=$!
while alive "$server_pid"; do
    grep -q 'listening on unix:' server.log 2>/dev/null && break
    sleep 0.05
done
curl -s --unix-socket "$WORK/sock" -o body 'http://localhost/gray.pgm?s=3'
"$SP" -s 3 root/gray.pgm cli.pgm
check 'a Unix socket: the bytes of the command line' same body cli.pgm
stop_server
result 'a Unix socket: removed at the stop' "$([[ ! -e sock ]] || echo there)"

# SIGTERM with requests in flight, two running and one queued: each
# finishes, whole.
start_server --root root --workers 2 --queue 2 -q
for i in 1 2 3; do
    curl -s -o "drained$i" -w '%{http_code}' "$URL/big.ppm?s=3&format=png" \
        >"drained$i.code" &
    curl_pids[i]=$!
done
# all three in: two on the workers, one in the queue (a third not yet
# accepted would be a new connection during the drain, answered 503)
{ wait_running 2 && wait_metric scaleppm_queue_length 1; } || true
kill -TERM "$server_pid"
why=
for i in 1 2 3; do
    wait "${curl_pids[i]}" || true
    [[ $(cat "drained$i.code") == 200 ]] && cmp -s "drained$i" big.png ||
        why="request $i: $(cat "drained$i.code")"
done
result 'SIGTERM: the three requests in flight finish, whole' "$why"
rc=0
wait "$server_pid" || rc=$?
server_pid=
result 'SIGTERM: exit 0' "$([[ $rc == 0 ]] || echo "$rc")"
result 'SIGTERM: no sanitizer report' \
    "$(grep -m 1 -e Sanitizer -e 'runtime error:' server.log || true)"
left=$(find tmp -mindepth 1 | head -n 3)
result 'SIGTERM: nothing left behind' "$left"

finish
