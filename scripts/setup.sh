# shellcheck shell=bash
# setup.sh: what both top-level commands do first (sourced): install the
# Debian packages that are missing, then configure and build with CMake.

# The packages the build, the tests and the experiments need.  The
# photographs of the photos and compressed suites come from Debian's
# wallpaper packages, which those suites install when they run
# (photos.sh's PHOTOS_PACKAGES), not every machine.  exiftool and lcms2's
# linkicc: tests/meta_test.sh's profiles and orientations.  nginx-light: the
# reverse proxy that tests/serve_nginx_test.sh puts in front of scaleppm
# serve.  abigail-tools: scripts/abi_check.sh's abidw and abidiff.
SP_PACKAGES=(build-essential cmake pkg-config libnetpbm-dev libstb-dev check
    netpbm libvips-tools graphicsmagick imagemagick shellcheck
    python3 python3-numpy python3-matplotlib git valgrind strace clang
    libclang-rt-14-dev libcdb-dev linux-perf parallel
    libjpeg62-turbo-dev libjpeg-turbo-progs libpng-dev zlib1g-dev libexif-dev
    libimage-exiftool-perl liblcms2-utils
    libmicrohttpd-dev curl wrk lighttpd nginx-light
    libnginx-mod-http-image-filter abigail-tools)

# sp_install: install what is missing of SP_PACKAGES; as a non-root user,
# print the command to run and exit 2.
sp_install() {
    local missing=() p
    for p in "${SP_PACKAGES[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
            grep -q 'install ok installed' || missing+=("$p")
    done
    ((${#missing[@]})) || return 0
    if ((EUID != 0)); then
        printf 'missing packages; run:\n  sudo apt-get install %s\n' \
            "${missing[*]}" >&2
        exit 2
    fi
    printf 'installing %s\n' "${missing[*]}" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >&2
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
}

# sp_build TYPE DIR [CMAKE_ARGS...]: configure and build into DIR, quietly:
# CMake's output goes to DIR/build.log, and on failure its last lines and
# the log's path to stderr.
sp_build() {
    local type=$1 dir=$2 log
    shift 2
    mkdir -p "$dir"
    log=$dir/build.log
    printf 'building %s (log: %s)\n' "${dir##*/}" "$log" >&2
    if ! { cmake -S "$ROOT" -B "$dir" -DCMAKE_BUILD_TYPE="$type" "$@" &&
        cmake --build "$dir" -j "$(nproc)"; } >"$log" 2>&1; then
        tail -n 20 "$log" >&2
        printf 'build failed; the whole log: %s\n' "$log" >&2
        exit 1
    fi
}

# sp_setup TYPE DIR [CMAKE_ARGS...]: both.
sp_setup() {
    sp_install
    sp_build "$@"
}

# sp_image_of TOP BIN SIZE: print the path of the experiments' WxH input,
# generated into TOP/images/ (git-ignored) the first time, beside its name
# and then renamed, since another run may be reading it; the 1280x1024
# one is the study's.  1 with a message when it cannot be made.
sp_image_of() {
    local top=$1 bin=$2 size=$3 in
    in=$top/images/gen$size.ppm
    [[ $size == 1280x1024 ]] && in=$top/images/sun1280x1024.ppm
    if [[ ! -s $in ]]; then
        printf 'generating %s\n' "$in" >&2
        if ! "$bin/images/genimage" -o "$in.tmp.$$" "${size%x*}" \
            "${size#*x}" >&2 || ! mv -f -- "$in.tmp.$$" "$in"; then
            rm -f -- "$in.tmp.$$"
            printf '%s: cannot generate it\n' "$in" >&2
            return 1
        fi
    fi
    printf '%s\n' "$in"
}
