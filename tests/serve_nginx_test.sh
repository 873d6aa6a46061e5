#!/usr/bin/env bash
# serve_nginx_test.sh: contrib/nginx/scaleppm.conf, the reverse-proxy
# example of docs/serve.md, run as it is written but for its ports and
# cache directory: nginx (Debian's, as the current user, its prefix and
# logs in a temporary directory) in front of two `scaleppm serve`
# replicas on loopback.  Through the proxy: the command line's bytes, a
# cache miss then a hit, the ETag and a 304, HEAD, traversal refused;
# both replicas used; one replica down and the other still serves; both
# down and a cached answer is still served.  Skipped when nginx is not
# installed (scripts/setup.sh installs nginx-light).
#
# usage: bash tests/serve_nginx_test.sh PATH/TO/scaleppm [PATH/TO/genimage]
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$here/lib.sh"
# shellcheck source-path=SCRIPTDIR source=serve_lib.sh
. "$here/serve_lib.sh"
setup "usage: serve_nginx_test.sh PATH/TO/scaleppm [PATH/TO/genimage]" "$@"
cd "$WORK"

nginx=$(PATH=$PATH:/usr/sbin:/sbin command -v nginx || true)
if [[ -z $nginx ]] || ! have curl; then
    skip 'nginx in front of scaleppm serve' \
        'nginx (Debian: nginx-light) or curl not installed'
    finish
    exit
fi

pids=() ports=()
# stop_all: the replicas still running, then nginx.
stop_all() {
    local n
    for n in "${!pids[@]}"; do
        server_pid=${pids[n]} server_log=$WORK/r$n/server.log
        stop_server
    done
    if [[ -s nginx/nginx.pid ]]; then
        kill -QUIT "$(cat nginx/nginx.pid)" 2>/dev/null || true
    fi
}
# shellcheck disable=SC2064  # expand WORK now, while it is set
trap "stop_all; rm -rf -- '$WORK'" EXIT

mkdir root
noise 64 48 255 3 3 >root/rgb.ppm
noise 50 37 255 5 1 >root/gray.pgm
# A minute old: a file changed within two seconds of its open gets no
# validator (request.h's SP_RACY_NS), and these answers must have theirs.
touch -d '-1 min' root/rgb.ppm root/gray.pgm
printf 'secret\n' >outside.ppm

# replica N: a server in rN/ (its log there); sets ports[N].
replica() {
    mkdir -p "r$1"
    cd "r$1"
    start_server --root "$WORK/root" --workers 2
    cd "$WORK"
    pids[$1]=$server_pid
    server_pid=
    ports[$1]=${URL##*:}
}
replica 1
replica 2

# A free port for nginx: one the kernel picks, let go.
port=$(/usr/bin/python3 -c 'import socket; s = socket.socket();
s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')

# The example, with the test's ports and cache; each change must take.
mkdir -p nginx/cache nginx/logs
conf=$here/../contrib/nginx/scaleppm.conf
sed -e "s|127\.0\.0\.1:8081|127.0.0.1:${ports[1]}|" \
    -e "s|127\.0\.0\.1:8082|127.0.0.1:${ports[2]}|" \
    -e "s|listen 80;|listen 127.0.0.1:$port;|" \
    -e "s|/var/cache/nginx/scaleppm|$WORK/nginx/cache|" "$conf" \
    >nginx/scaleppm.conf
changed=$(diff "$conf" nginx/scaleppm.conf | grep -c '^>' || true)
result 'the example: its ports and cache replaced' \
    "$( ((changed == 4)) || echo "$changed lines changed")"
user=
((EUID != 0)) || user="user $(id -un) $(id -gn);"
cat >nginx/nginx.conf <<CONF
$user
daemon on;
pid $WORK/nginx/nginx.pid;
error_log $WORK/nginx/logs/error.log;
events { worker_connections 64; }
http {
    access_log $WORK/nginx/logs/access.log;
    client_body_temp_path $WORK/nginx/client_body;
    proxy_temp_path $WORK/nginx/proxy;
    fastcgi_temp_path $WORK/nginx/fastcgi;
    uwsgi_temp_path $WORK/nginx/uwsgi;
    scgi_temp_path $WORK/nginx/scgi;
    include $WORK/nginx/scaleppm.conf;
}
CONF
if ! "$nginx" -p "$WORK/nginx" -c "$WORK/nginx/nginx.conf" \
    -e "$WORK/nginx/logs/error.log" 2>nginx/start.err; then
    fail 'nginx starts with the example' "$(head -n 1 nginx/start.err)"
    finish
    exit
fi
for ((i = 0; i < 100; i++)); do
    [[ -s nginx/nginx.pid ]] && break
    sleep 0.05
done
pass 'nginx starts with the example'
URL=http://127.0.0.1:$port

# header NAME FILE: header NAME's value in the headers FILE.
header() {
    sed -n "s/^$1: \\(.*\\)\\r\$/\\1/Ip" "$2" | head -n 1
}

"$SP" -s -2 root/rgb.ppm cli.png
curl -s -D first.h -o first "$URL/rgb.ppm?s=-2&format=png"
check 'through the proxy: the command line'"'"'s bytes' same first cli.png
curl -s -D second.h -o second "$URL/rgb.ppm?s=-2&format=png"
check 'a second time: the same bytes' same second cli.png
result 'a miss, then a hit' "$(
    [[ $(header X-Cache-Status first.h) == MISS &&
        $(header X-Cache-Status second.h) == HIT ]] ||
        echo "$(header X-Cache-Status first.h) $(header X-Cache-Status second.h)")"
etag=$(header ETag first.h)
result 'the ETag passed through, and kept in the cache' "$(
    [[ $etag =~ ^\"[0-9a-f]+\"$ && $(header ETag second.h) == "$etag" ]] ||
        echo "$etag")"
result 'Content-Type image/png' \
    "$([[ $(header Content-Type first.h) == image/png ]] || echo other)"
expect_status '304 on If-None-Match through the proxy' 304 \
    '/rgb.ppm?s=-2&format=png' -H "If-None-Match: $etag"
len=$(curl -s -I "$URL/rgb.ppm?s=-2&format=png" | header Content-Length /dev/stdin)
result 'HEAD: the length of the body' \
    "$([[ $len == "$(wc -c <cli.png)" ]] || echo "$len")"
for path in /../outside.ppm /%2e%2e/outside.ppm /sub%2f..%2f..%2foutside.ppm \
    '/..\outside.ppm'; do
    code=$(status "$path?s=2")
    if [[ $code == 200 ]] || grep -q secret body; then
        fail "traversal through the proxy: $path" "answered $code"
    else
        pass "traversal through the proxy: $path ($code)"
    fi
done
code=$(status '/rgb.ppm?s=2' -X POST)
result 'POST refused by the proxy (limit_except: 403)' \
    "$([[ $code == 403 ]] || echo "$code")"

# Both replicas take requests (round robin), each answer the same.
why=
for s in 2 3 4 5 -3 -4; do
    "$SP" -s "$s" root/gray.pgm "cli$s.pgm"
    status "/gray.pgm?s=$s" >/dev/null
    same body "cli$s.pgm" 2>/dev/null || why="s=$s differs"
done
result 'uncached requests: the command line'"'"'s bytes' "$why"
n1=$(grep -c '^GET /gray.pgm' r1/server.log || true)
n2=$(grep -c '^GET /gray.pgm' r2/server.log || true)
result "both replicas answered ($n1, $n2)" \
    "$( ((n1 > 0 && n2 > 0)) || echo one)"

# One replica down: the other serves every request.
server_pid=${pids[1]} server_log=$WORK/r1/server.log
stop_server
unset 'pids[1]'
why=
for s in 6 7 8 -5 -6 -7; do
    "$SP" -s "$s" root/gray.pgm "cli$s.pgm"
    code=$(status "/gray.pgm?s=$s")
    [[ $code == 200 ]] && same body "cli$s.pgm" 2>/dev/null ||
        why="s=$s: $code"
done
result 'one replica down: the other serves' "$why"

# Both down: what the cache holds is still served.
server_pid=${pids[2]} server_log=$WORK/r2/server.log
stop_server
unset 'pids[2]'
curl -s -D down.h -o down "$URL/rgb.ppm?s=-2&format=png"
check 'both replicas down: a cached answer still served' same down cli.png
code=$(status '/gray.pgm?s=9')
result 'both down: an uncached request is 502' \
    "$([[ $code == 502 ]] || echo "$code")"

finish
