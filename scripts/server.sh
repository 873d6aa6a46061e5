# shellcheck shell=bash
# server.sh: run_experiments.sh --suite server (sourced): issue 29's
# experiment, the study's memory-contention claim put to `scaleppm
# serve`.  "For sufficiently large files, memory contention can become an
# issue": W requests in flight each scale a large image, loaded by read
# (a raster each), mmap (the page cache, shared by the requests for one
# file) or pread (two chunks a thread).
#
# Inputs: large PPMs (64 MiB): one file (homogeneous) and a set of 32
# different files (heterogeneous, together far above the limit), reduced
# by 8; and the Sun study's image reduced by 4 for the throughput target.
# Each cell (a group of settings, a load path, W) is a fresh server, its
# load from wrk (closed loop, -c W, one thread), the server on one CPU
# and wrk on the other (taskset, where there are two).  The server runs
# inside a memory cgroup (as root; dropped to the user nobody): the
# group's peak, its memory.stat before and after, its OOM kills; limited
# to 4 images in the "limit" groups, with --max-memory at 3 images in the
# "limit+budget" ones.  Warm: the inputs read in inside the group (the
# page cache is charged to the group that first touches it); cold:
# evicted before every cell (spcache).
#
# Then the latency without coordinated omission: spload at 80% of the best
# throughput each path reached in this session, each answer's status and
# body hash against the command line's bytes for the same options.
# Baselines at W = 8 on the Sun study's image: the command line forked per
# request (lighttpd's CGI running a shell script that execs scaleppm) and
# nginx's image_filter (libgd) on a JPEG of the same image, JPEG out: a
# different format and filter, a peer server, not the same job; and
# nginx serving the command line's answer from a file, the cost of the
# HTTP and the bytes alone.  Then the server's own account of a request
# one at a time (its Server-Timing header): the job's phases, which no
# server doing this job escapes.
#
# Rows: server.csv (a cell), server-latency.csv (an spload run),
# server-bodies.csv (a distinct answer of an spload run with the command
# line's hash), server-timing.csv (a request's phases); the report is
# spreport server.

SERVER_PATHS=(read mmap pread)
SERVER_WS=(1 2 4 8 16 32)
# The large images: W x H (64 MiB), the set's count, the job's factor.
SERVER_SIZE=4096x5460
SERVER_SET=32
SERVER_SCALE=-8
SERVER_SUN_SCALE=-4
# The groups of cells: SET CACHE MEMORY (none, limit: a cgroup limited to
# SERVER_LIMIT_IMAGES images; limit+budget: also --max-memory at
# SERVER_BUDGET_IMAGES images).
SERVER_GROUPS=("one warm none" "one warm limit+budget" "one warm limit"
    "one cold none" "set warm none" "set warm limit+budget")
SERVER_LIMIT_IMAGES=4
SERVER_BUDGET_IMAGES=3
# The latency runs' rate, in percent of the session's best throughput.
SERVER_RATE_PCT=80
SERVER_WORKERS=32
SERVER_QUEUE=64
SERVER_DEADLINE=30
# Requests one at a time whose Server-Timing is recorded, a load path.
SERVER_PHASE_REQUESTS=40

server_die() {
    printf 'run_experiments.sh: server: %s\n' "$*" >&2
    exit 1
}

# server_kv LINE KEY: the value of KEY=VALUE in LINE.
server_kv() {
    local pair
    for pair in $1; do
        [[ ${pair%%=*} == "$2" ]] && { printf '%s\n' "${pair#*=}"; return; }
    done
    printf '\n'
}

# server_free_port: a loopback port free at the moment.
server_free_port() {
    /usr/bin/python3 -c 'import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Cgroup files, v1 or v2 (seeds.sh's sp_memcg_create makes the group).
# server_cg_file DIR V1 V2: the path of whichever exists.
server_cg_file() {
    if [[ -e $1/$2 ]]; then printf '%s\n' "$1/$2"; else printf '%s\n' "$1/$3"; fi
}

# server_cg_stat DIR: "RSS CACHE MAPPED_FILE PGMAJFAULT" of memory.stat
# (v2: anon, file, file_mapped, pgmajfault).
server_cg_stat() {
    awk '$1 == "rss" || $1 == "anon" { r = $2 }
        $1 == "cache" || $1 == "file" { c = $2 }
        $1 == "mapped_file" || $1 == "file_mapped" { m = $2 }
        $1 == "pgmajfault" { f = $2 }
        END { printf "%s %s %s %s\n", r == "" ? 0 : r, c == "" ? 0 : c,
            m == "" ? 0 : m, f == "" ? 0 : f }' "$1/memory.stat"
}

# server_cg_ooms DIR: the group's OOM kills so far.
server_cg_ooms() {
    awk '$1 == "oom_kill" { n = $2 } END { print n + 0 }' \
        "$(server_cg_file "$1" memory.oom_control memory.events)"
}

# server_cg_reset DIR: the group's peak set back to its usage (v1: write
# 0 to max_usage; v2 from Linux 6.12: any write to memory.peak).
server_cg_reset() {
    local f
    f=$(server_cg_file "$1" memory.max_usage_in_bytes memory.peak)
    echo 0 >"$f" 2>/dev/null || true
}

server_cg_usage() {
    cat "$(server_cg_file "$1" memory.usage_in_bytes memory.current)"
}

server_cg_peak() {
    cat "$(server_cg_file "$1" memory.max_usage_in_bytes memory.peak)" \
        2>/dev/null || echo ""
}

# server_launch CG LOG CMD...: CMD in the background, on CPU 1 where
# there are two, inside the cgroup CG when there is one, as the user
# nobody when this is root; sets srv_pid.  Every step execs, so srv_pid
# is CMD's process.
server_launch() {
    local cg=$1 log=$2 pre=()
    shift 2
    rm -f -- "$log"  # the last server's, which names its port
    ((cpus >= 2)) && pre+=(taskset -c 1)
    ((EUID == 0)) && pre+=(setpriv --reuid=nobody --regid=nogroup
        --clear-groups)
    # shellcheck disable=SC2016  # $$ and $1 are the child shell's
    sh -c '[ -z "$1" ] || echo $$ >"$1/cgroup.procs" || exit 1
        shift; exec "$@"' sh "$cg" "${pre[@]}" "$@" >/dev/null 2>"$log" &
    srv_pid=$!
}

# server_stop: SIGTERM to the server (SIGKILL after 30 s), and its exit
# status into srv_exit (137: killed, as the OOM killer kills).
server_stop() {
    local i
    srv_exit=0
    kill -TERM "$srv_pid" 2>/dev/null || true
    for ((i = 0; i < 600; i++)); do
        kill -0 "$srv_pid" 2>/dev/null || break
        sleep 0.05
    done
    kill -KILL "$srv_pid" 2>/dev/null || true
    wait "$srv_pid" 2>/dev/null || srv_exit=$?
}

# server_wait_port LOG: the port that scaleppm serve says it listens on,
# into port.
server_wait_port() {
    local i
    for ((i = 0; i < 200; i++)); do
        port=$(sed -n 's|.*listening on http://127\.0\.0\.1:\([0-9]*\)/$|\1|p' \
            "$1" 2>/dev/null)
        [[ -n $port ]] && return 0
        kill -0 "$srv_pid" 2>/dev/null || break
        sleep 0.05
    done
    printf 'server: no port in %s: %s\n' "$1" "$(tail -n 2 "$1")" >&2
    return 1
}

# server_wait_http PORT: until PORT answers HTTP (the baselines).
server_wait_http() {
    local i
    for ((i = 0; i < 200; i++)); do
        curl -s -o /dev/null "http://127.0.0.1:$1/" && return 0
        sleep 0.05
    done
    return 1
}

# server_503s PORT: the 503s scaleppm serve has answered (/metrics).
server_503s() {
    curl -s --max-time 5 "http://127.0.0.1:$1/metrics" 2>/dev/null |
        awk '/^scaleppm_requests_total\{code="503"\}/ { print $2 }'
}

# server_hwm: the server's peak resident set in KiB (VmHWM).
server_hwm() {
    awk '/^VmHWM:/ { print $2 }' "/proc/$srv_pid/status" 2>/dev/null
}

# server_ready CACHE CG FILE...: the FILEs evicted (spcache); warm: then
# read in by a process inside CG, so that the group is charged for their
# page cache (it is charged to the group that first touches it).
server_ready() {
    local cache=$1 cg=$2 f
    shift 2
    for f; do "$spcache" evict "$f" || server_die "$f: cannot evict"; done
    [[ $cache == cold ]] && return 0
    # shellcheck disable=SC2016  # $$ and $1 are the child shell's
    sh -c '[ -z "$1" ] || echo $$ >"$1/cgroup.procs" || exit 1
        shift; exec cat -- "$@"' sh "$cg" "$@" >/dev/null
}

# server_wrk PORT W TARGET...: wrk's closed loop (-c W, one thread, on
# CPU 0) for secs seconds, its KEY=VALUE line (server.lua).
server_wrk() {
    local port=$1 w=$2 pre=()
    shift 2
    ((cpus >= 2)) && pre=(taskset -c 0)
    "${pre[@]}" wrk -t 1 -c "$w" -d "${secs}s" --timeout 40s \
        -s "$SP_SCRIPTS/server.lua" "http://127.0.0.1:$port" -- "$@" |
        grep '^requests='
}

# server_cell SET CACHE MEMORY CONTENDER W PORT TARGET...: the load
# (server_wrk) on the server started by the caller (srv_pid, its group
# cg), then the server stopped; a row into server.csv.
server_cell() {
    local set=$1 cache=$2 memory=$3 who=$4 w=$5 port=$6 line st0 st1
    local start peak hwm ooms0 ooms1 s503 n err k secs=$seconds
    shift 6
    # W = 32 of the large images takes seconds a request: one more second
    ((w >= 32)) && secs=$((seconds + 1))
    if [[ -n $cg ]]; then
        server_cg_reset "$cg"
        start=$(server_cg_usage "$cg") st0=$(server_cg_stat "$cg")
        ooms0=$(server_cg_ooms "$cg")
    fi
    line=$(server_wrk "$port" "$w" "$@") || line=""
    s503=""
    [[ $who == scaleppm-* ]] && s503=$(server_503s "$port")
    hwm=$(server_hwm)
    # memory.stat with the jobs that wrk left in flight; the peak and
    # the OOM kills once the server is gone
    [[ -z $cg ]] || st1=$(server_cg_stat "$cg")
    server_stop
    if [[ -n $cg ]]; then
        peak=$(server_cg_peak "$cg") ooms1=$(server_cg_ooms "$cg")
    fi
    n=$(server_kv "$line" requests)
    err=$(server_kv "$line" connect)
    err=$((${err:-1} + $(server_kv "$line" read)0 / 10 +
        $(server_kv "$line" write)0 / 10))
    local -a a b
    read -r -a a <<<"${st0:-0 0 0 0}"
    read -r -a b <<<"${st1:-0 0 0 0}"
    local e d
    e=$(server_kv "$line" status) d=$(server_kv "$line" duration_us)
    local -a row=("$set" "${files[$set]}" "${bytes[$set]}" "$cache" "$memory"
        "${limit[$memory]}" "${budget[$memory]}" "$who" "$w" 1 "$secs"
        "${n:-0}" "$e" "$s503" "$err")
    for k in timeout p50_us p90_us p99_us p999_us max_us; do
        row+=("$(server_kv "$line" "$k")")
    done
    row+=("$((${ooms1:-0} - ${ooms0:-0}))" "$srv_exit" "$start" "$peak" "$hwm"
        "$((b[0] - a[0]))" "$((b[1] - a[1]))" "$((b[2] - a[2]))"
        "$((b[3] - a[3]))" req/s
        "$(awk -v n="${n:-0}" -v e="${e:-0}" -v d="${d:-0}" \
            'BEGIN { printf "%.2f", (d > 0 ? (n - e) * 1e6 / d : 0) }')")
    (IFS=,; printf '%s\n' "${row[*]}") >>"$out/server.csv"
}

# server_scaleppm MEMORY LOG: scaleppm serve on the root, in the group
# cg, with --max-memory where MEMORY says; sets srv_pid and port.
server_scaleppm() {
    local memory=$1 log=$2 args=()
    [[ $memory == limit+budget ]] && args+=(--max-memory "${budget[$memory]}")
    TMPDIR=$tmp/srvtmp server_launch "$cg" "$log" "$sp" serve --root "$www" \
        --listen 127.0.0.1:0 --allow-io --quiet --workers "$SERVER_WORKERS" \
        --queue "$SERVER_QUEUE" --deadline "$SERVER_DEADLINE" "${args[@]}"
    server_wait_port "$log"
}

# server_targets SET IO SCALE: the request targets of SET loaded by IO.
server_targets() {
    local f
    for f in "${names[@]}"; do
        [[ $1 == one && $f != "${names[0]}" ]] && continue
        [[ $1 == sun ]] && f=$sun
        printf '/%s?s=%s&io=%s\n' "$f" "$3" "$2"
        [[ $1 == sun ]] && break
    done
}

# server_group SET CACHE MEMORY: a group's cells, W by W, the paths in an
# order rotated by one each W (from the session's seed).
server_group() {
    local set=$1 cache=$2 memory=$3 k w io port log=$tmp/server.log
    local -a targets inputs
    if [[ $memory != none && $cgroups == no ]]; then
        printf 'server: %s %s %s: skipped (no memory cgroup: %s)\n' \
            "$set" "$cache" "$memory" "$cg_why" >&2
        return 0
    fi
    inputs=("$www/${names[0]}")
    [[ $set == set ]] && inputs=("${names[@]/#/$www/}")
    cg=""
    if [[ $cgroups == yes ]]; then
        cg=$(sp_memcg_create "${limit[$memory]}") ||
            server_die "cannot make a memory cgroup"
    fi
    for ((k = 0; k < ${#SERVER_WS[@]}; k++)); do
        w=${SERVER_WS[k]}
        for io in "${SERVER_PATHS[@]:$(((k + seed) % 3))}" \
            "${SERVER_PATHS[@]:0:$(((k + seed) % 3))}"; do
            printf 'server: %s %s %s, %s, W=%s\n' "$set" "$cache" \
                "$memory" "$io" "$w" >&2
            # one file: read in again each cell; the set: once a group
            [[ $set == one || $cache == cold || $k$io == "0${SERVER_PATHS[seed % 3]}" ]] &&
                server_ready "$cache" "$cg" "${inputs[@]}"
            server_scaleppm "$memory" "$log" ||
                server_die "scaleppm serve did not start"
            mapfile -t targets < <(server_targets "$set" "$io" "$SERVER_SCALE")
            server_cell "$set" "$cache" "$memory" "scaleppm-$io" "$w" \
                "$port" "${targets[@]}"
        done
    done
    [[ -z $cg ]] || sp_memcg_remove "$cg" || true
}

# server_cli_hash FILE IO SCALE: the hash of the command line's output.
server_cli_hash() {
    "$sp" --io "$2" -s "$3" -- "$1" - | "$spload" --hash /dev/stdin
}

# server_best SET IO: the best 2xx throughput of scaleppm-IO on SET,
# warm, no limit, in this session.
server_best() {
    awk -F, -v s="$1" -v who="scaleppm-$2" '
        NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
        $col["set"] == s && $col["cache"] == "warm" &&
        $col["memory"] == "none" && $col["contender"] == who &&
        $(col["rps"]) > best { best = $(col["rps"]) }
        END { print best + 0 }' "$out/server.csv"
}

# server_latency SET IO SCALE: spload at SERVER_RATE_PCT of the best
# throughput, on a fresh server (no limit); a row into server-latency.csv,
# each distinct answer into server-bodies.csv with the command line's
# hash for its file and options.
server_latency() {
    local set=$1 io=$2 scale=$3 best rate port res line target status hash
    local nb n k cli f bodies=0 bad=0 log=$tmp/server.log pre=()
    local -a targets
    best=$(server_best "$set" "$io")
    rate=$(awk -v b="$best" -v p="$SERVER_RATE_PCT" \
        'BEGIN { r = b * p / 100; printf "%.2f", r < 1 ? 1 : r }')
    printf 'server: %s, %s, open loop at %s/s\n' "$set" "$io" "$rate" >&2
    [[ $set == sun ]] || server_ready warm "$cg" "$www/${names[0]}"
    server_scaleppm none "$log" || server_die "no server"
    mapfile -t targets < <(server_targets "$set" "$io" "$scale")
    ((cpus >= 2)) && pre=(taskset -c 0)
    res=$("${pre[@]}" "$spload" -r "$rate" -d "$lat_seconds" -c 64 -t 40 \
        "127.0.0.1:$port" "${targets[@]}") || server_die "spload failed"
    server_stop
    while read -r _ target status hash nb n; do
        f=${target%%\?*}
        cli=${cli_hash["${f#/}|$io|$scale"]:-}
        if [[ -z $cli ]]; then
            cli=$(server_cli_hash "$www${f}" "$io" "$scale")
            cli_hash["${f#/}|$io|$scale"]=$cli
        fi
        bodies=$((bodies + 1))
        [[ $status != 200 || $hash == "$cli" ]] || bad=$((bad + 1))
        printf '%s,scaleppm-%s,1,%s,%s,%s,%s,%s,%s\n' "$set" "$io" \
            "$target" "$status" "$hash" "$nb" "$n" "$cli" \
            >>"$out/server-bodies.csv"
    done < <(grep '^body ' <<<"$res")
    line=$(head -n 1 <<<"$res")
    local -a row=("$set" "scaleppm-$io" 1 "$rate" "$lat_seconds")
    for k in due 'done' errors timeouts s2xx s503 sother waited; do
        row+=("$(server_kv "$line" "$k")")
    done
    for k in p50_ns p90_ns p99_ns p999_ns max_ns lag_p50_ns lag_p99_ns \
        lag_max_ns; do
        row+=("$(($(server_kv "$line" "$k") / 1000))")
    done
    row+=("$bodies" "$bad" us)
    (IFS=,; printf '%s\n' "${row[*]}") >>"$out/server-latency.csv"
}

# server_cgi_start PORT: lighttpd on PORT, its CGI (scale.cgi) a shell
# script that execs the command line for each request: the CGI way;
# sets srv_pid.
server_cgi_start() {
    local port=$1 d=$tmp/cgi
    mkdir -p "$d/www"
    cat >"$d/www/scale.cgi" <<CGI
#!/bin/sh
# GET /scale.cgi?s=N: the Sun study's image scaled by the command line.
s=\${QUERY_STRING#s=}
case \$s in -[0-9] | [0-9]) ;; *) printf 'Status: 400\r\n\r\n'; exit 0 ;; esac
printf 'Content-Type: image/x-portable-pixmap\r\n\r\n'
exec '$sp' -s "\$s" -- '$www/$sun' -
CGI
    chmod 755 "$d" "$d/www" "$d/www/scale.cgi"
    cat >"$d/lighttpd.conf" <<CONF
server.document-root = "$d/www"
server.bind = "127.0.0.1"
server.port = $port
server.modules = ("mod_cgi")
cgi.assign = (".cgi" => "")
server.errorlog = "$d/error.log"
server.pid-file = "$d/lighttpd.pid"
server.max-connections = 256
CONF
    chown -R nobody "$d" 2>/dev/null || true
    server_launch "$cg" "$d/stderr" lighttpd -D -f "$d/lighttpd.conf"
    server_wait_http "$port" || server_die "lighttpd did not start: $(cat "$d/stderr")"
}

# server_nginx_start PORT KIND: nginx on PORT (one process, no master);
# sets srv_pid.  KIND image-filter: its image_filter module resizing a
# JPEG of the Sun study's image to a quarter of its size (libgd), as
# JPEG.  KIND static: the command line's own answer for the Sun study's
# job, made once before, served from a file (sendfile): what answering
# these bytes over HTTP costs with no job at all, the floor under any
# server's.
server_nginx_start() {
    local port=$1 kind=$2 d=$tmp/nginx-$2 w h t
    read -r w h < <(head -c 64 -- "$www/$sun" | tr -s ' \n' '  ' |
        awk '{ print $2, $3 }')
    mkdir -p "$d/www/f" "$d/logs"
    if [[ $kind == static ]]; then
        "$sp" -s "$SERVER_SUN_SCALE" -- "$www/$sun" "$d/www/f/sun.ppm" ||
            server_die "the command line failed on $www/$sun"
    else
        cjpeg -quality 90 "$www/$sun" >"$d/www/f/sun.jpg"
    fi
    {
        printf 'daemon off;\nmaster_process off;\nworker_processes 1;\n'
        printf 'pid %s/nginx.pid;\nerror_log %s/logs/error.log;\n' "$d" "$d"
        [[ $kind == static ]] ||
            printf 'load_module modules/ngx_http_image_filter_module.so;\n'
        printf 'events { worker_connections 512; }\nhttp {\n'
        printf '    access_log off;\n    sendfile on;\n'
        for t in client_body proxy fastcgi uwsgi scgi; do
            printf '    %s_temp_path %s/%s;\n' "$t" "$d" "$t"
        done
        printf '    server {\n        listen 127.0.0.1:%s;\n' "$port"
        printf '        root %s/www;\n        location /f/ {\n' "$d"
        if [[ $kind != static ]]; then
            printf '            image_filter resize %s %s;\n' \
                "$((w / 4))" "$((h / 4))"
            printf '            image_filter_buffer 64M;\n'
            printf '            image_filter_jpeg_quality 90;\n'
        fi
        printf '        }\n    }\n}\n'
    } >"$d/nginx.conf"
    chown -R nobody "$d" 2>/dev/null || true
    server_launch "$cg" "$d/stderr" nginx -p /usr/share/nginx \
        -c "$d/nginx.conf"
    server_wait_http "$port" || server_die "nginx did not start: $(cat "$d/stderr")"
}

# server_phases IO: where one request's time goes in the server: a fresh
# scaleppm serve answers the Sun study's job by IO one request at a time
# (curl, on CPU 0), SERVER_PHASE_REQUESTS of them after 5 not recorded;
# each answer's Server-Timing header (load, scale, release, write: the
# job's phases) a row into server-timing.csv.
server_phases() {
    local io=$1 k line log=$tmp/server.log pre=() target
    ((cpus >= 2)) && pre=(taskset -c 0)
    printf 'server: sun, %s, phases of %s requests one at a time\n' "$io" \
        "$phase_requests" >&2
    server_scaleppm none "$log" || server_die "no server"
    target=$(server_targets sun "$io" "$SERVER_SUN_SCALE")
    for ((k = -5; k < phase_requests; k++)); do
        line=$("${pre[@]}" curl -s -o /dev/null -D - \
            "http://127.0.0.1:$port$target" | tr -d '\r' |
            sed -n 's/^[Ss]erver-[Tt]iming: //p')
        ((k >= 0)) || continue
        [[ -n $line ]] || server_die "no Server-Timing from $target"
        awk -v io="$io" -v k="$((k + 1))" -F', ' '
            { for (i = 1; i <= NF; i++) { split($i, a, ";dur=")
                  ms[a[1]] = a[2] }
              printf "sun,scaleppm-%s,1,%d,%s,%s,%s,%s,%.3f,ms\n", io, k,
                  ms["load"], ms["scale"], ms["release"], ms["write"],
                  ms["load"] + ms["scale"] + ms["release"] + ms["write"] }' \
            <<<"$line" >>"$out/server-timing.csv"
    done
    server_stop
}

# server_sun: the Sun study's image reduced by 4 at W = 8 (and W = 1 but
# in --quick: sun_ws):
# scaleppm serve on each path, the CGI and nginx; no limit.
server_sun() {
    local w io port log=$tmp/server.log
    local -a targets
    cg=""
    if [[ $cgroups == yes ]]; then
        cg=$(sp_memcg_create "${limit[none]}") || server_die "no cgroup"
    fi
    server_ready warm "$cg" "$www/$sun"
    for w in "${sun_ws[@]}"; do
        for io in "${SERVER_PATHS[@]}"; do
            printf 'server: sun, %s, W=%s\n' "$io" "$w" >&2
            server_scaleppm none "$log" || server_die "no server"
            mapfile -t targets < <(server_targets sun "$io" \
                "$SERVER_SUN_SCALE")
            server_cell sun warm none "scaleppm-$io" "$w" "$port" \
                "${targets[@]}"
        done
        printf 'server: sun, CGI, W=%s\n' "$w" >&2
        port=$(server_free_port)
        server_cgi_start "$port"
        server_cell sun warm none cgi "$w" "$port" \
            "/scale.cgi?s=$SERVER_SUN_SCALE"
        if ((nginx)); then
            printf 'server: sun, nginx image_filter, W=%s\n' "$w" >&2
            port=$(server_free_port)
            server_nginx_start "$port" image-filter
            server_cell sun warm none nginx-image-filter "$w" "$port" \
                /f/sun.jpg
        fi
        command -v nginx >/dev/null || continue
        printf 'server: sun, nginx static (the answer from a file), W=%s\n' \
            "$w" >&2
        port=$(server_free_port)
        server_nginx_start "$port" static
        server_cell sun warm none nginx-static "$w" "$port" /f/sun.ppm
    done
    for io in "${SERVER_PATHS[@]}"; do
        server_phases "$io"
    done
    for io in "${SERVER_PATHS[@]}"; do
        server_latency sun "$io" "$SERVER_SUN_SCALE"
    done
    [[ -z $cg ]] || sp_memcg_remove "$cg" || true
}

# server_inputs ROOT BIN: the inputs, generated once into ROOT/images/
# (the folder served): the Sun study's image and the large images, the
# first of them the homogeneous file; sets www, names, sun, files, bytes.
server_inputs() {
    local root=$1 bin=$2 w=${size%x*} h=${size#*x} k f
    www=$root/images
    f=$(sp_image_of "$root" "$bin" 1280x1024) || server_die "no 1280x1024"
    sun=${f##*/}
    names=()
    for ((k = 0; k < nset; k++)); do
        # different heights: different files, contents and answers
        f=$(sp_image_of "$root" "$bin" "${w}x$((h - k))") ||
            server_die "cannot make the inputs"
        names+=("${f##*/}")
    done
    # the server runs as nobody: the inputs readable by all
    chmod a+r -- "$www/$sun" "${names[@]/#/$www/}"
    files=([one]=1 [set]=$nset [sun]=1)
    bytes=([one]=$(stat -c %s -- "$www/${names[0]}")
        [set]=$(stat -c %s -- "$www/${names[0]}")
        [sun]=$(stat -c %s -- "$www/$sun"))
}

# server_cgroups: whether a memory cgroup can be made here (cgroups=yes),
# else why not (cg_why).
server_cgroups() {
    local d
    cgroups=no
    if ((EUID != 0)); then
        cg_why="a memory cgroup needs root"
    elif ! d=$(sp_memcg_create 1073741824 2>/dev/null); then
        cg_why="no cgroup memory controller could be used"
    else
        sp_memcg_remove "$d" || true
        cgroups=yes
    fi
}

# server_cleanup TMP: the server, if one runs, its cgroup, and the
# scratch folder TMP (srv_pid and cg are the suite's subshell's).
server_cleanup() {
    [[ -z ${srv_pid:-} ]] || kill -KILL "$srv_pid" 2>/dev/null || true
    [[ -z ${cg:-} || ! -d $cg ]] || sp_memcg_remove "$cg" || true
    rm -rf -- "$1"
}

# server_headers: the CSV files' first lines.
server_headers() {
    printf '%s\n' "set,files,image_bytes,cache,memory,limit_bytes,\
max_memory,contender,w,round,seconds,requests,non2xx,s503,errors,\
timeouts,p50_us,p90_us,p99_us,p999_us,max_us,oom_kills,server_exit,\
start_bytes,peak_bytes,hwm_kb,rss_delta,cache_delta,mapped_file_delta,\
pgmajfault_delta,unit,rps" >"$out/server.csv"
    printf '%s\n' "set,contender,round,rate,seconds,due,done,errors,\
timeouts,s2xx,s503,sother,waited,p50_us,p90_us,p99_us,p999_us,max_us,\
lag_p50_us,lag_p99_us,lag_max_us,bodies,mismatched,unit" \
        >"$out/server-latency.csv"
    printf 'set,contender,round,target,status,hash,bytes,count,cli_hash\n' \
        >"$out/server-bodies.csv"
    printf '%s\n' "set,contender,round,request,load_ms,scale_ms,release_ms,\
write_ms,job_ms,unit" >"$out/server-timing.csv"
}

# server_suite ROOT BIN OUT QUICK SEED: the suite into OUT: server.csv,
# server-latency.csv, server-bodies.csv, server.md and env.txt.  Runs in
# a subshell: its scratch folder, cgroup and server go with it.
server_suite() (
    local root=$1 bin out quick=$4 seed=$5 t spec mem
    bin=$(cd -- "$2" && pwd) out=$(cd -- "$3" && pwd)
    local sp=$bin/src/scaleppm spload=$bin/src/spload spcache=$bin/src/spcache
    local tmp www sun cgroups cg_why="" cpus nginx=1 srv_exit=0
    cg="" srv_pid=""  # not local: server_cleanup reads them at exit
    local size=$SERVER_SIZE nset=$SERVER_SET seconds=2 lat_seconds=3
    local phase_requests=$SERVER_PHASE_REQUESTS
    local -a names groups=("${SERVER_GROUPS[@]}") sun_ws=(1 8)
    local -A files bytes limit budget cli_hash
    for t in "$sp" "$spload" "$spcache"; do
        [[ -x $t ]] || server_die "$t: not built"
    done
    for t in wrk lighttpd curl cjpeg setpriv taskset; do
        command -v "$t" >/dev/null || server_die "$t: not installed"
    done
    if ! command -v nginx >/dev/null ||
        [[ ! -e /usr/share/nginx/modules/ngx_http_image_filter_module.so ]]; then
        nginx=0
        printf 'server: no nginx with image_filter: that baseline is not run\n' >&2
    fi
    if ((quick)); then
        size=640x546 nset=4 seconds=1 lat_seconds=1 SERVER_WS=(1 4)
        groups=("one warm none" "one warm limit+budget" "set warm none")
        sun_ws=(8) phase_requests=5
    fi
    cpus=$(nproc)
    ((cpus >= 2)) || printf 'server: one CPU: client and server share it\n' >&2
    tmp=$(mktemp -d "${TMPDIR:-/tmp}/scaleppm-server.XXXXXX")
    # shellcheck disable=SC2064  # expand the folder now
    trap "server_cleanup '$tmp'" EXIT
    trap 'exit 130' INT TERM
    mkdir -p -- "$tmp/srvtmp"
    chmod 755 "$tmp"
    chmod 1777 "$tmp/srvtmp"
    server_cgroups
    [[ $cgroups == yes ]] || printf 'server: %s: the memory-limited groups are skipped, and no cgroup figures are taken\n' "$cg_why" >&2
    server_inputs "$root" "$bin"
    limit=([none]=$(($(awk '/MemTotal/ { print $2 }' /proc/meminfo) * 1024))
        [limit]=$((SERVER_LIMIT_IMAGES * bytes[one]))
        [limit+budget]=$((SERVER_LIMIT_IMAGES * bytes[one])))
    budget=([none]=0 [limit]=0
        [limit+budget]=$((SERVER_BUDGET_IMAGES * bytes[one])))
    if ((quick)); then  # room for the server itself beside tiny images
        limit[limit]=$((limit[limit] + (48 << 20)))
        limit[limit+budget]=$((limit[limit+budget] + (48 << 20)))
    fi
    server_headers
    for spec in "${groups[@]}"; do
        # shellcheck disable=SC2086  # the spec's words are the arguments
        server_group $spec
    done
    server_sun
    cg=""
    if [[ $cgroups == yes ]]; then
        cg=$(sp_memcg_create "${limit[none]}") || server_die "no cgroup"
    fi
    for spec in one set; do
        for t in "${SERVER_PATHS[@]}"; do
            server_latency "$spec" "$t" "$SERVER_SCALE"
        done
    done
    [[ -z $cg ]] || sp_memcg_remove "$cg" || true
    cg=""
    spreport server "$out" || server_die "the report failed; rows in $out"
    mem=""
    ((quick)) && mem=" quick_limit_extra=50331648"
    sp_write_env "$out/env.txt" "$www/${names[0]}" "$bin" "suite=server \
quick=$quick seed=$seed size=$size set=$nset seconds=$seconds \
latency_seconds=$lat_seconds phase_requests=$phase_requests ws=$(IFS=,; echo "${SERVER_WS[*]}") \
workers=$SERVER_WORKERS queue=$SERVER_QUEUE deadline=$SERVER_DEADLINE \
limit_images=$SERVER_LIMIT_IMAGES budget_images=$SERVER_BUDGET_IMAGES\
$mem cgroups=$cgroups cpus=$cpus nginx=$nginx \
wrk=$(wrk -v 2>&1 | awk 'NR == 1 { print $2 }') \
lighttpd=$(lighttpd -v 2>&1 | awk -F'[/ ]' 'NR == 1 { print $2 }')"
    cat "$out/server.md"
)
