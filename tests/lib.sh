# shellcheck shell=bash
# lib.sh: shared helpers for the test scripts (sourced, not run).
#
# Each check prints one line on stdout: "ok - WHAT", "FAIL - WHAT: WHY" or
# "skip - WHAT: WHY"; finish() prints "N passed, N failed[, N skipped]" and
# returns non-zero when anything failed.  Inputs are made in $WORK, a mktemp
# directory removed on exit.

npass=0
nfail=0
nskip=0

# IO_PATHS: the load paths a file can take (--io), the default first
# (--io auto takes pread for a regular file): the one list every script
# that tries the paths loops over, as fx_io (tests/shared.h) is the Check
# suites'.  A new path is one more word here and one more entry there.
# shellcheck disable=SC2034  # used by the scripts that source this
IO_PATHS=(pread read mmap)

pass() {
    npass=$((npass + 1))
    printf 'ok - %s\n' "$1"
}

fail() {
    nfail=$((nfail + 1))
    printf 'FAIL - %s: %s\n' "$1" "$2"
}

skip() {
    nskip=$((nskip + 1))
    printf 'skip - %s: %s\n' "$1" "$2"
}

# check WHAT CMD...: pass when CMD succeeds; on failure the first line CMD
# wrote to stderr is the reason.
check() {
    local what=$1 why
    shift
    if "$@" 2>"$WORK/.check.err"; then
        pass "$what"
    else
        why=$(head -n 1 "$WORK/.check.err")
        fail "$what" "${why:-command failed: $*}"
    fi
}

# result WHAT WHY: pass when WHY is empty, else fail with it.
result() {
    if [[ -z $2 ]]; then
        pass "$1"
    else
        fail "$1" "$2"
    fi
}

# finish: the closing line; the exit status of the script.
finish() {
    if ((nskip > 0)); then
        printf '%d passed, %d failed, %d skipped\n' "$npass" "$nfail" "$nskip"
    else
        printf '%d passed, %d failed\n' "$npass" "$nfail"
    fi
    ((nfail == 0))
}

# unprivileged: set the array as_user to a command prefix that runs
# scaleppm ($SP) as nobody (65534): nothing for a user who is not root,
# setpriv or runuser for root; empty when neither can.
# shellcheck disable=SC2034  # as_user is the caller's
unprivileged() {
    as_user=()
    if ((EUID != 0)); then
        as_user=(env)
    elif have setpriv && setpriv --reuid=65534 --regid=65534 --clear-groups \
        "$SP" --version >/dev/null 2>&1; then
        as_user=(setpriv --reuid=65534 --regid=65534 --clear-groups)
    elif have runuser && runuser -u nobody -- "$SP" --version >/dev/null 2>&1; then
        as_user=(runuser -u nobody --)
    fi
}

# unprivileged_alone: as unprivileged, but as a user id no process has
# (setpriv only), for a limit counted over the user's processes (ulimit
# -u): another test or program running as nobody would use it up.  Sets
# as_user, empty when none can be had.
# shellcheck disable=SC2034  # as_user is the caller's
unprivileged_alone() {
    local uid held
    as_user=()
    if ((EUID != 0)) || ! have setpriv; then
        unprivileged
        return
    fi
    # The real user ids of every process (the one the limit counts by); a
    # process that ends while it is read is skipped.
    held=" $({ cat /proc/[0-9]*/status 2>/dev/null || true; } |
        awk '$1 == "Uid:" { print $2 }' | sort -u | tr '\n' ' ')"
    for ((uid = 40000 + $$ % 20000; uid < 65000; uid += 7)); do
        [[ $held != *" $uid "* ]] || continue
        setpriv --reuid="$uid" --regid="$uid" --clear-groups \
            "$SP" --version >/dev/null 2>&1 || return 0
        as_user=(setpriv --reuid="$uid" --regid="$uid" --clear-groups)
        return 0
    done
}

have() {
    command -v "$1" >/dev/null 2>&1
}

# alive PID: PID is running (not gone, not a zombie waiting to be reaped).
alive() {
    local stat
    read -r stat 2>/dev/null <"/proc/$1/stat" || return 1
    stat=${stat##*) }
    [[ ${stat%% *} != Z ]]
}

# abspath PATH: PATH made absolute, so the scripts can cd into $WORK.
abspath() {
    case $1 in
    /*) printf '%s\n' "$1" ;;
    *) printf '%s/%s\n' "$PWD" "$1" ;;
    esac
}

# setup SCRIPT_USAGE "$@": check the arguments, make $WORK, require netpbm.
# Sets SP (scaleppm) and GEN (genimage, empty when it is not usable).
setup() {
    local usage=$1
    shift
    if (($# < 1)) || [[ $1 == -h || $1 == --help ]]; then
        printf '%s\n' "$usage"
        exit 2
    fi
    SP=$(abspath "$1")
    GEN=${2:+$(abspath "$2")}
    if [[ ! -x $SP ]]; then
        printf 'not executable: %s\n' "$SP" >&2
        exit 2
    fi
    if [[ -n $GEN ]] && ! { [[ -x $GEN ]] && "$GEN" 3 2 >/dev/null 2>&1; }; then
        GEN=
    fi
    local tool
    for tool in pamenlarge pamcut pamfile pgmnoise rgb3toppm pnmnoraw \
        pamtopnm pamdepth; do
        if ! have "$tool"; then
            printf 'netpbm is required: %s not found\n' "$tool" >&2
            exit 2
        fi
    done
    WORK=$(mktemp -d "${TMPDIR:-/tmp}/scaleppm-test.XXXXXX")
    # shellcheck disable=SC2064  # expand WORK now, while it is set
    trap "rm -rf -- '$WORK'" EXIT
    trap 'exit 130' INT TERM
}

# noise W H MAXVAL SEED CHANNELS > FILE: deterministic noise from netpbm, a
# raw PGM (1 channel) or PPM (3).  Every sample is independent, so a pixel
# taken from the wrong place is very unlikely to go unnoticed.
noise() {
    local w=$1 h=$2 m=$3 seed=$4 ch=$5
    if ((ch == 1)); then
        pgmnoise -maxval="$m" -randomseed="$seed" "$w" "$h"
    else
        rgb3toppm \
            <(pgmnoise -maxval="$m" -randomseed="$seed" "$w" "$h") \
            <(pgmnoise -maxval="$m" -randomseed=$((seed + 1)) "$w" "$h") \
            <(pgmnoise -maxval="$m" -randomseed=$((seed + 2)) "$w" "$h")
    fi
}

# same A B: A and B are byte-identical (cmp's complaint on stderr if not).
same() {
    cmp -- "$1" "$2" >&2
}
