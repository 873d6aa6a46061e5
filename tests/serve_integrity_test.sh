#!/usr/bin/env bash
# serve_integrity_test.sh: what `scaleppm serve` answers for a file that
# changes or is cut while it is served, and what an answer may hold
# (issue 37): a mapped file cut under its job is a 500 and the server
# goes on.  Each server listens on a free loopback port and is stopped at
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
expect_status 'and the server goes on' 200 /healthz
stop_server

finish
