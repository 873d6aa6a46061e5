# shellcheck shell=bash
# serve_lib.sh: the helpers of the scripts that drive `scaleppm serve`
# (serve_test.sh, serve_soak_test.sh): a server started on a free port
# and stopped, and a request's status checked.  Sourced after lib.sh's
# setup, from $WORK; the caller's EXIT trap calls stop_server.

server_pid='' server_log=''
# stop_server: SIGTERM to the server started last, and its exit waited
# for (SIGKILL after a minute, and a failure: a drain that long is a
# hang, not a busy machine); a sanitizer's report in its log (server_log)
# is a failure.
stop_server() {
    local deadline=$((SECONDS + 60))
    [[ -n $server_pid ]] || return 0
    kill -TERM "$server_pid" 2>/dev/null || true
    while alive "$server_pid" && ((SECONDS < deadline)); do
        sleep 0.05
    done
    if alive "$server_pid"; then
        kill -KILL "$server_pid" 2>/dev/null || true
        fail 'the server stops at SIGTERM' 'killed'
    fi
    wait "$server_pid" 2>/dev/null || true
    server_pid=
    if [[ -f $server_log ]] && grep -q -e 'Sanitizer' -e 'runtime error:' \
        "$server_log"; then
        fail 'the server: no sanitizer report' \
            "$(grep -m 1 -e 'Sanitizer' -e 'runtime error:' "$server_log")"
    fi
}

# start_server ARGS...: scaleppm serve ARGS listening on $LISTEN (by
# default a free loopback port), its log in server.log; sets URL once it
# listens, from the address the server prints.
start_server() {
    local url=
    mkdir -p "$WORK/tmp"
    rm -f server.log  # the last server's, which names its port
    TMPDIR=$WORK/tmp "$SP" serve --listen "${LISTEN:-127.0.0.1:0}" "$@" \
        2>server.log &
    server_pid=$! server_log=$PWD/server.log
    # until it says where it listens, or has ended
    while alive "$server_pid"; do
        url=$(sed -n 's|.*listening on \(http://.*:[0-9]*\)/$|\1|p' \
            server.log 2>/dev/null || true)
        [[ -z $url ]] || break
        sleep 0.05
    done
    if [[ -z $url ]]; then
        printf 'the server did not start: %s\n' "$(head -n 1 server.log)" >&2
        exit 1
    fi
    URL=$url
}

# status PATH [CURL_ARGS...]: the status code of GET PATH, as sent.
status() {
    local path=$1
    shift
    curl -s --path-as-is -o body -w '%{http_code}' "$@" "$URL$path"
}

# expect_status WHAT CODE PATH [CURL_ARGS...]: PATH answers CODE with a
# one-line body.
expect_status() {
    local what=$1 code=$2 path=$3 got why=
    shift 3
    got=$(status "$path" "$@")
    if [[ $got != "$code" ]]; then
        why="$path: $got, not $code ($(head -c 100 body))"
    elif [[ $code != 200 && $code != 304 && -s body ]] &&
        [[ $(wc -l <body) != 1 ]]; then
        why="$path: the body is not one line"
    fi
    result "$what" "$why"
}

# fd_count: the server's open descriptors.
fd_count() {
    find "/proc/$server_pid/fd" -mindepth 1 | wc -l
}

# connections: how many of the server's sockets are TCP connections (not
# listening: state 0A in /proc/net/tcp).
connections() {
    find "/proc/$server_pid/fd" -lname 'socket:*' -printf '%l\n' |
        tr -dc '0-9\n' |
        awk 'FILENAME == "-" { mine[$1]; next }
             FNR > 1 && ($10 in mine) && $4 != "0A"' - /proc/net/tcp \
            /proc/net/tcp6 | wc -l
}

# quiet: until the server holds no connection (a client's goes when the
# server sees it closed, not when the client exits), so that its
# descriptors can be counted; a minute at most (one kept is a leak).
quiet() {
    local deadline=$((SECONDS + 60))
    until (($(connections) == 0)); do
        ((SECONDS < deadline)) || return 1
        sleep 0.05
    done
}

# wait_metric NAME N: until /metrics shows NAME at N (a minute at most: a
# sanitizer's build is slow), so that a test acts in a state it names,
# however busy the machine.
wait_metric() {
    local i
    for ((i = 0; i < 1200; i++)); do
        # grep reads the whole answer: with -q it could leave before
        # curl's last write, and pipefail take curl's error for a "no"
        curl -s "$URL/metrics" | grep -x "$1 $2" >/dev/null && return 0
        sleep 0.05
    done
    return 1
}

# wait_running N: until N jobs run on a worker, so that a test acts while
# a job runs, or once it is done.
wait_running() {
    wait_metric scaleppm_jobs_running "$1"
}

# sanitized: whether the server is a sanitizer's build (its allocator
# keeps freed memory, and maps shadow memory of its own).
sanitized() {
    grep -q -e __asan_init -e __tsan_init "$(dirname "$SP")/scaleppm-serve"
}
