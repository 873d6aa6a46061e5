#!/usr/bin/env bash
# serve_soak_test.sh: a soak of `scaleppm serve`: 10,000 requests drawn
# at random from a mix (every output format, reduces, enlarges and fits,
# HEAD, 304s, 404s, 405s, traversal attempts, /healthz and /metrics) sent
# by eight keep-alive clients (serve_soak.py), with no answer other than
# the one expected and every 200 the command line's bytes; then the
# server's descriptors as many as before, and its resident memory
# steady (a leak of a request's struct would show), and nothing written
# under its $TMPDIR (answers are made in memory).
#
# usage: bash tests/serve_soak_test.sh PATH/TO/scaleppm [PATH/TO/genimage]
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$here/lib.sh"
# shellcheck source-path=SCRIPTDIR source=serve_lib.sh
. "$here/serve_lib.sh"
setup "usage: serve_soak_test.sh PATH/TO/scaleppm [PATH/TO/genimage]" "$@"
cd "$WORK"

# shellcheck disable=SC2064  # expand WORK now, while it is set
trap "stop_server; rm -rf -- '$WORK'" EXIT

COUNT=10000
CLIENTS=8

mkdir root root/sub
noise 64 48 255 3 3 >root/rgb.ppm
noise 50 37 255 5 1 >root/gray.pgm
noise 24 20 65535 7 3 >root/deep.ppm
cp root/gray.pgm root/sub/g.pgm
printf 'secret\n' >outside.ppm
ln -s ../outside.ppm root/out
# A minute old: a file changed within two seconds of its open gets no
# validator (request.h's SP_RACY_NS), and these answers must have theirs.
touch -d '-1 min' root/rgb.ppm

# want CODE METHOD PATH [CLI_ARGS...]: a manifest line; with CLI_ARGS, the
# command line's output for them (the last is the input under root/, the
# output's extension given by $ext) is the body expected.
n=0
want() {
    local code=$1 method=$2 path=$3
    shift 3
    if (($#)); then
        n=$((n + 1))
        "$SP" "${@:1:$#-1}" "root/${*: -1}" "cli$n.$ext"
        printf '%s %s %s %s\n' "$code" "$method" "$path" "$WORK/cli$n.$ext"
    else
        printf '%s %s %s\n' "$code" "$method" "$path"
    fi >>manifest
}

: >manifest
for ext in ppm png jpg bmp tga pam; do
    for s in -3 -2 2; do
        want 200 GET "/rgb.ppm?s=$s&format=$ext" -s "$s" rgb.ppm
        want 304 GET "/rgb.ppm?s=$s&format=$ext"
    done
    want 200 HEAD "/rgb.ppm?s=-2&format=$ext" -s -2 rgb.ppm
    want 200 GET "/rgb.ppm?fit=20x20&format=$ext" --fit 20x20 rgb.ppm
done
ext=pgm
want 200 GET '/gray.pgm?s=3' -s 3 gray.pgm
want 200 GET '/sub/g.pgm?s=-2&filter=box' -s -2 --filter box gray.pgm
ext=png
want 200 GET '/deep.ppm?s=2&format=png&compression=1' -s 2 --compression 1 \
    deep.ppm
ext=jpg
want 200 GET '/gray.pgm?width=30&format=jpg&subsample=444' --width 30 \
    --subsample 444 gray.pgm
want 200 GET /healthz
want 200 GET /metrics
want 404 GET '/missing.ppm?s=2'
want 404 HEAD '/sub/missing.ppm?s=2'
want 405 DELETE '/rgb.ppm?s=2'
want 400 GET '/rgb.ppm?s=0'
want 400 GET '/rgb.ppm?s=2&s=3'
for path in /../outside.ppm /%2e%2e/outside.ppm /sub/../../outside.ppm \
    /sub%2f..%2f..%2foutside.ppm '/..\outside.ppm' /%c0%ae%c0%ae/outside.ppm \
    /rgb.ppm%00.png //outside.ppm; do
    want 400 GET "$path?s=2"
done
want 403 GET '/out?s=2'
want 403 GET '/sub?s=2'

if ! have curl; then
    skip 'serve soak' 'curl not installed'
    finish
    exit
fi

# rss_kib: the server's resident set, in KiB.
rss_kib() {
    sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\) kB$/\1/p' "/proc/$server_pid/status"
}

start_server --root root --workers 2 --queue 64 -q
address=${URL#http://}
# A first run of a thousand: the allocator's arenas and the threads'
# stacks made, so that what follows measures growth, not the start.
/usr/bin/python3 "$here/serve_soak.py" "$address" manifest 1000 "$CLIENTS" \
    >/dev/null
quiet || true
fds=$(fd_count) rss=$(rss_kib)
start=$(date +%s)
if counts=$(/usr/bin/python3 "$here/serve_soak.py" "$address" manifest \
    "$COUNT" "$CLIENTS" 2>soak.err); then
    pass "$COUNT mixed requests as expected ($counts) in $(($(date +%s) - start)) s"
else
    fail "$COUNT mixed requests as expected" "$(head -n 1 soak.err)"
fi
quiet || true
after=$(fd_count) grown=$(($(rss_kib) - rss))
result "descriptors steady after the soak ($fds, $after)" \
    "$([[ $after == "$fds" ]] || echo differ)"
# A sanitizer's allocator keeps freed memory in quarantine (and its
# shadow): there, LeakSanitizer at the exit is the check, not the RSS.
if sanitized; then
    skip 'resident memory steady after the soak' 'a sanitizer build'
else
    result "resident memory steady after the soak (grown $grown KiB)" \
        "$( ((grown < 4096)) || echo 'more than 4 MiB')"
fi
# In flight: the /metrics request itself, nothing else.
inflight=$(curl -s "$URL/metrics" | sed -n 's/^scaleppm_in_flight //p')
result 'nothing in flight after the soak but /metrics' \
    "$([[ $inflight == 1 ]] || echo "$inflight")"
stop_server
result 'nothing written under TMPDIR' \
    "$(find tmp -mindepth 1 | head -n 3)"

finish
