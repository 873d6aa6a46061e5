#!/usr/bin/env bash
# serve_conn_test.sh: `scaleppm serve`'s connections, signals and
# messages (docs/serve.md): a 400 naming the key and what its value must
# be, 415 for a file that is no image, an If-Modified-Since in the future
# ignored.  Each server listens on a free loopback port and is stopped at
# the end.
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

# shellcheck disable=SC2064  # expand WORK now, while it is set
trap "stop_server; rm -rf -- '$WORK'" EXIT

mkdir root
noise 61 47 255 3 3 >root/rgb.ppm
printf 'not an image\n' >root/text.ppm
: >root/empty.ppm
printf 'GIF89a\001\000\001\000\000\000\000;' >root/pixel.gif

start_server --root root --workers 2

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
    'size=3: an unknown key (s, fit,'
expect_status '400 a key twice' 400 '/rgb.ppm?s=2&s=3'
body_has '400 names the key given twice' 's=3: given twice'
expect_status '400 a bad scale' 400 '/rgb.ppm?s=0'
body_has '400 says what s takes' 's=0: expected a non-zero integer'

# A file that is no image scaleppm reads is 415, not 500.
expect_status '415 text' 415 '/text.ppm?s=2'
body_has '415 says why' 'not a PNM image'
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

stop_server
finish
