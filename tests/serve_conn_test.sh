#!/usr/bin/env bash
# serve_conn_test.sh: `scaleppm serve`'s connections, signals and
# messages (docs/serve.md): a 400 naming the key and what its value must
# be, 415 for a file that is no image, an If-Modified-Since in the future
# ignored, 431 at once for a query of too many pairs, /readyz answered
# 503 on new connections during a drain, /healthz answered under a
# slowloris (--header-timeout), every signal that would end the server
# draining it, SIGUSR1 reopening --log.  Each server listens on a free
# loopback port and is stopped at the end; the slow connections are a
# few, on loopback, for seconds.
#
# usage: bash tests/serve_conn_test.sh PATH/TO/scaleppm [PATH/TO/genimage]
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$here/lib.sh"
# shellcheck source-path=SCRIPTDIR source=serve_lib.sh
. "$here/serve_lib.sh"
setup "usage: serve_conn_test.sh PATH/TO/scaleppm [PATH/TO/genimage]" "$@"
cd "$WORK"

if ! have curl; then
    skip 'serve_conn' 'curl not installed'
    finish
    exit
fi

# slow_pid: a slow client running in the background, ended with the
# script however it ends.
slow_pid=
stop_slow() {
    [[ -n $slow_pid ]] || return 0
    kill "$slow_pid" 2>/dev/null || true
    wait "$slow_pid" 2>/dev/null || true
    slow_pid=
}
# shellcheck disable=SC2064  # expand WORK now, while it is set
trap "stop_slow; stop_server; rm -rf -- '$WORK'" EXIT

mkdir root
noise 61 47 255 3 3 >root/rgb.ppm

# A starting server is never seen dead: `scaleppm serve` execs the web
# front's program from its main thread.  Exec'd from another thread, the
# main thread is a zombie until the exec completes, and a supervisor (or
# this suite's alive()) that reads /proc/PID/stat then sees Z: with the
# exec on a command thread, 54 of 100 starts were seen so.  Each start
# is read as fast as Python reads it until /proc/PID/exe is the web
# front's program.
if have python3; then
    result 'a starting server is never seen dead (20 starts)' "$(
        python3 - "$SP" "$WORK/root" <<'PY'
import os, subprocess, sys
sp, root = sys.argv[1], sys.argv[2]
for start in range(20):
    p = subprocess.Popen([sp, "serve", "--root", root, "-q",
                          "--listen", "127.0.0.1:0"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    seen = None
    while seen is None:
        try:
            with open(f"/proc/{p.pid}/stat") as f:
                state = f.read().rsplit(") ", 1)[1][0]
        except OSError:
            state = "gone"
        if state in ("Z", "gone"):
            seen = state
            break
        try:
            if os.readlink(f"/proc/{p.pid}/exe").endswith("scaleppm-serve"):
                break
        except OSError:
            pass
    p.terminate()
    p.wait()
    if seen is not None:
        print(f"start {start + 1}: the process read as {seen}")
        break
PY
    )"
fi
printf 'not an image\n' >root/text.ppm
: >root/empty.ppm
printf 'GIF89a\001\000\001\000\000\000\000;' >root/pixel.gif
# settled: a file modified within two seconds of its open has no validator
touch -d '-1 min' root/*

# The new options' bad values: exit 2, one line naming the option; a log
# that cannot be opened: exit 1, one line naming it, no server.
for args in '--header-timeout x' '--header-timeout -1' '--log'; do
    rc=0
    # shellcheck disable=SC2086  # ARGS is split on purpose
    "$SP" serve --root root $args 2>usage.err || rc=$?
    result "usage error: $args" "$([[ $rc == 2 && $(wc -l <usage.err) == 1 ]] &&
        grep -q -- "${args%% *}" usage.err || echo "exit $rc: $(head -n 1 usage.err)")"
done
rc=0
"$SP" serve --root root --listen 127.0.0.1:0 --log "$WORK/none/access.log" \
    2>usage.err || rc=$?
result 'a log that cannot be opened: exit 1, one line' \
    "$([[ $rc == 1 && $(wc -l <usage.err) == 1 ]] &&
        grep -q -- "--log '$WORK/none/access.log'" usage.err ||
        echo "exit $rc: $(head -n 1 usage.err)")"

start_server --root root --workers 2

# no_report WHAT: no sanitizer's report in the log of a server that
# stop_server did not stop.
no_report() {
    result "$1: no sanitizer report" \
        "$(grep -m 1 -e Sanitizer -e 'runtime error:' server.log || true)"
}

# body_has WHAT WORDS: the last answer's body holds WORDS.
body_has() {
    result "$1" "$(grep -qF -- "$2" body || echo "body: $(head -c 200 body)")"
}

# The 400 names the pair and what its value must be.
expect_status '400 a bad value' 400 '/rgb.ppm?s=2&quality=abc&format=jpg'
body_has '400 names the key, its value and what it takes' \
    'quality=abc: expected 1 to 100'
expect_status '400 an unknown key' 400 '/rgb.ppm?s=2&size=3'
body_has '400 names the unknown key and the keys known' \
    'size=3: an unknown key (scale, fit,'
expect_status '400 a key twice' 400 '/rgb.ppm?s=2&s=3'
body_has '400 names the key given twice' 's=3: given twice'
expect_status '400 a bad scale' 400 '/rgb.ppm?s=0'
body_has '400 says what s takes' 's=0: expected a non-zero integer'

# A file that is no image scaleppm reads is 415, not 500.
expect_status '415 text' 415 '/text.ppm?s=2'
body_has '415 says why' 'no PNM or PAM (P1 to P7), JPEG or PNG magic'
expect_status '415 an empty file' 415 '/empty.ppm?s=2'
expect_status '415 a GIF' 415 '/pixel.gif?s=2'

# If-Modified-Since after the server's clock is ignored (RFC 9110
# 13.1.3): the body, not a 304; the file's own date is 304.
future=$(date -u -d '+1 day' '+%a, %d %b %Y %H:%M:%S GMT')
past=$(date -u -r root/rgb.ppm '+%a, %d %b %Y %T GMT')
expect_status 'If-Modified-Since tomorrow: 200' 200 '/rgb.ppm?s=2' \
    -H "If-Modified-Since: $future"
expect_status "If-Modified-Since the file's date: 304" 304 \
    '/rgb.ppm?s=2' -H "If-Modified-Since: $past"

# A query of more pairs than any request can use is 431 at once (the
# library's own 431 was lost, and the connection hung until --timeout);
# one under the bound is read as a query.
pairs() {
    local i q=s=2
    for ((i = 1; i < $1; i++)); do q+="&k$i=1"; done
    printf '%s' "$q"
}
code=$(curl -s -o body -w '%{http_code}' --max-time 10 \
    "$URL/rgb.ppm?$(pairs 500)" || true)
result '431 for a query of 500 pairs, at once' \
    "$([[ $code == 431 ]] || echo "status $code: $(head -c 100 body)")"
body_has '431 says the bound' '431 a query of more than 64 pairs'
expect_status '400 for 64 pairs (the first unknown key named)' 400 \
    "/rgb.ppm?$(pairs 64)"
expect_status 'the server serves on after a 431' 200 '/rgb.ppm?s=2'
stop_server

# During a drain new connections are still answered: /readyz 503 and an
# image 503, both with Connection: close, while a request in flight (a
# client reading slowly) holds the drain open; it ends when that request
# does.
noise 1000 1000 255 5 3 >root/large.ppm
start_server --root root --workers 2 --drain 60
# 27 MB: more than the sockets' buffers hold, so that the answer is in
# flight until the client has read most of it
curl -s -o /dev/null -D slow.headers --limit-rate 4K "$URL/large.ppm?s=3" &
slow_pid=$!
for ((i = 0; i < 1200; i++)); do
    grep -q '^HTTP/1.1 200' slow.headers 2>/dev/null && break
    sleep 0.05
done
kill -TERM "$server_pid"
for ((i = 0; i < 1200; i++)); do
    grep -q 'stopping' server.log && break
    sleep 0.05
done
# the log's line comes just before the drain begins: a /readyz between
# the two is still 200
for ((i = 0; i < 100; i++)); do
    code=$(curl -s -o body -D ready.headers -w '%{http_code}' --max-time 10 \
        "$URL/readyz" || true)
    [[ $code == 200 ]] || break
done
result 'draining: a new connection'"'"'s /readyz is 503' \
    "$([[ $code == 503 ]] || echo "status $code")"
result 'draining: with Connection: close' \
    "$(grep -qi '^connection: close' ready.headers || echo 'not sent')"
code=$(status '/rgb.ppm?s=2' --max-time 10 || true)
result 'draining: a new image request is 503' \
    "$([[ $code == 503 ]] || echo "status $code")"
code=$(status /healthz --max-time 10 || true)
result 'draining: /healthz 200' "$([[ $code == 200 ]] || echo "status $code")"
result 'draining: the server waits for the request in flight' \
    "$(kill -0 "$server_pid" 2>/dev/null || echo 'it exited')"
stop_slow
for ((i = 0; i < 200; i++)); do
    kill -0 "$server_pid" 2>/dev/null || break
    sleep 0.05
done
kill -KILL "$server_pid" 2>/dev/null && fail 'draining: the server ends' 'killed'
rc=0
wait "$server_pid" || rc=$?
server_pid=
result 'draining: exit 0 once the request in flight is gone' \
    "$([[ $rc == 0 ]] || echo "exit $rc")"
no_report 'draining'

# Slowloris: more connections than --max-connections, each sending a
# header a byte a second, which would reset --timeout at every byte:
# --header-timeout closes each one its deadline after its accept, so that
# /healthz, waiting in the listen backlog behind them, is answered within
# two rounds of it (on a loaded machine, within the bound below).
start_server --root root --workers 1 --max-connections 4 \
    --header-timeout 1 -q
(
    trap '' PIPE
    exec 2>/dev/null  # the writes after the server closes them fail
    hostport=${URL#http://}
    fds=()
    for ((i = 0; i < 8; i++)); do
        exec {fd}<>"/dev/tcp/${hostport%:*}/${hostport##*:}"
        fds+=("$fd")
    done
    : >slow.ready
    for ((t = 0; t < 60; t++)); do
        for fd in "${fds[@]}"; do printf 'G' 1>&"$fd" || true; done
        sleep 1
    done
) &
slow_pid=$!
for ((i = 0; i < 1200; i++)); do
    [[ -e slow.ready ]] && break
    sleep 0.05
done
took=$(curl -s -o body -w '%{http_code} %{time_total}' --max-time 30 \
    "$URL/healthz" || true)
stop_slow
result "slowloris: /healthz answered within 10 s ($took s)" \
    "$([[ $took == 200\ * ]] && awk -v t="${took#* }" 'BEGIN { exit !(t < 10) }' ||
        echo "$took")"
expect_status 'slowloris: the server serves on' 200 '/rgb.ppm?s=2'
stop_server

# Every signal that would end a process, but those a fault raises, drains
# the server as SIGTERM does and leaves nothing behind; but SIGTERM,
# SIGINT and SIGHUP, which exit 0, it then dies of (128 + N, as the
# command line).  SIGPIPE and SIGXFSZ are ignored.
ulimit -c 0  # SIGQUIT's default dumps a core
for sig in QUIT USR2 ALRM VTALRM PROF XCPU IO PWR STKFLT RTMIN RTMIN+3 \
    RTMAX; do
    start_server --root root --workers 1 -q
    expect_status "SIG$sig: a request before" 200 '/rgb.ppm?s=2'
    kill -s "$sig" "$server_pid"
    rc=0
    {  # no word from the shell of the death it waits for
        for ((i = 0; i < 200; i++)); do
            kill -0 "$server_pid" || break
            sleep 0.05
        done
        kill -KILL "$server_pid" && fail "SIG$sig: the end" 'killed'
        wait "$server_pid" || rc=$?
    } 2>/dev/null
    server_pid=
    want=$((128 + $(kill -l "$sig")))
    result "SIG$sig: drained, then dead of it" \
        "$([[ $rc == "$want" ]] && grep -q ': stopping (draining' \
            server.log || echo "exit $rc, not $want: $(tail -n 1 server.log)")"
    result "SIG$sig: nothing left behind" "$(find tmp -mindepth 1 | head -n 1)"
    no_report "SIG$sig"
done
start_server --root root --workers 1 -q
kill -PIPE "$server_pid"
kill -XFSZ "$server_pid"
expect_status 'SIGPIPE and SIGXFSZ ignored' 200 '/rgb.ppm?s=2'
stop_server

# SIGUSR1 opens the access log again: rotated by renaming, the log goes on
# in a new file at its old name, from the first request after the signal.
for name in before renamed after; do cp root/rgb.ppm "root/$name.ppm"; done
start_server --root root --workers 1 --log "$WORK/access.log"
expect_status 'the access log: a request' 200 '/before.ppm?s=2'
mv access.log access.log.1
expect_status 'the access log: a request after the rename' 200 \
    '/renamed.ppm?s=2'
kill -USR1 "$server_pid"
for ((i = 0; i < 200; i++)); do
    [[ -e access.log ]] && break
    sleep 0.05
done
expect_status 'the access log: a request after SIGUSR1' 200 '/after.ppm?s=2'
expect_status 'the access log: /healthz after SIGUSR1' 200 /healthz
stop_server
# logged FILE PATH...: FILE's lines are a 200 for each PATH, in order;
# else FILE's lines.
logged() {
    local file=$1
    shift
    [[ $(sed 's/^GET \([^ ]*\) 200 .*/\1/' "$file" | tr '\n' ' ') == "$* " ]] ||
        tr '\n' '|' <"$file"
}
result 'the access log: the lines before SIGUSR1 in the renamed file' \
    "$(logged access.log.1 /before.ppm /renamed.ppm)"
result 'the access log: the lines after it in a new file at its name' \
    "$(logged access.log /after.ppm /healthz)"
result 'the access log: not on standard error' \
    "$(! grep -q '^GET ' server.log || echo 'it is')"
result 'the access log: SIGUSR1 does not stop the server' \
    "$(grep 'stopping' server.log | grep -v SIGTERM || true)"

finish
