# shellcheck shell=bash
# report.sh: the reports (through spreport) and the environment record of
# an experiment run (sourced by run_experiments.sh and the suites).

# spreport SUBCOMMAND ARGS...: the one program of the statistics, tables
# and figures (scripts/spreport/); the shell only runs the experiments.
# Debian's python3, which has numpy and matplotlib.
spreport() {
    PYTHONPATH=$SP_SCRIPTS${PYTHONPATH:+:$PYTHONPATH} /usr/bin/python3 \
        -m spreport "$@"
}
SP_SCRIPTS=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# sp_sun_report DIR: DIR's summary.csv, table1.md and figure1.png from its
# runs.csv.
sp_sun_report() {
    spreport sun --quiet "$1"
}

# sp_read_ahead_kb PATH: the read_ahead_kb of the block device holding
# PATH (a partition's is its disk's), or "n/a".
sp_read_ahead_kb() {
    local dev sys
    dev=$(stat -c '%d' "$1")
    sys=/sys/dev/block/$((dev >> 8)):$((dev & 255))
    if [[ -r $sys/queue/read_ahead_kb ]]; then
        cat "$sys/queue/read_ahead_kb"
    elif [[ -r $sys/../queue/read_ahead_kb ]]; then
        cat "$sys/../queue/read_ahead_kb"
    else
        echo n/a
    fi
}

# sp_tree_state: "clean", or "dirty: N files differ from the commit" (the
# figures then come from code no commit holds).
sp_tree_state() {
    local n
    n=$(git -C "$ROOT" status --porcelain 2>/dev/null | wc -l) || n='?'
    if [[ $n == 0 ]]; then echo clean; else echo "dirty: $n files differ from the commit"; fi
}

# sp_fault_around BUILD_DIR DIR: the pages one read fault maps on a fresh
# mapping of a cached 8 MiB file, measured (spcache) in DIR, the input's
# folder, where it can be written, else in $TMPDIR; the line says where.
# The probe's name ends in .ppm: in images/ git ignores it.
sp_fault_around() {
    local dir=$2 probe
    [[ -d $dir && -w $dir ]] || dir=${TMPDIR:-/tmp}
    probe=$(mktemp --suffix=.ppm "$dir/scaleppm-probe.XXXXXX") || return 0
    head -c 8388608 /dev/zero >"$probe"
    printf 'fault-around, measured: %s pages a read fault (a cached 8 MiB file in %s, on %s)\n' \
        "$("$1/src/spcache" faultaround "$probe" 2>/dev/null || echo '?')" \
        "$dir" "$(df -PT "$dir" | awk 'NR == 2 { print $2 " " $1 }')"
    rm -f -- "$probe"
}

# sp_input_lines BUILD_DIR IMAGE: IMAGE as the runs read it: its size and
# format (netpbm's, or JPEG or PNG by its first bytes), its file system, and the folios
# holding its cached pages, measured (spcache) when the record is written.
sp_input_lines() {
    local what
    what=$(pamfile "$2" 2>/dev/null | cut -d: -f2- |
        sed 's/^[[:space:]]*//') || true  # not a PNM file: no format
    if [[ -z $what ]]; then  # JPEG or PNG, by the first bytes; else none
        case $(head -c 4 -- "$2" | od -An -tx1 | tr -d ' \n') in
        ffd8ff*) what="JPEG (by its first bytes)" ;;
        89504e47) what="PNG (by its first bytes)" ;;
        esac
    fi
    printf 'input: %s, %s bytes%s\n' "$2" "$(stat -c %s "$2")" \
        "${what:+, $what}"
    printf 'filesystem of the input: %s\n' \
        "$(df -PT "$2" | awk 'NR == 2 { print $2 " on " $1 " at " $7 }')"
    printf 'folios of the cached input, measured (KiB:count): %s\n' \
        "$("$1/src/spcache" folios "$2" 2>/dev/null || echo '? (needs root)')"
}

# sp_read_lines BUILD_DIR WHAT FILE...: the files a run read that it
# deletes before env.txt is written (iobench's), recorded while they are
# there: a line naming WHAT read them, sp_input_lines of each, and the
# fault-around probed in the first one's folder; with no FILE, a line
# saying WHAT read none.
sp_read_lines() {
    local build=$1 what=$2 f
    shift 2
    if (($# == 0)); then
        printf '%s read no file\n' "$what"
        return 0
    fi
    printf '%s read, recorded when it ended (deleted since):\n' "$what"
    for f in "$@"; do
        sp_input_lines "$build" "$f"
    done
    sp_fault_around "$build" "$(dirname -- "$1")"
}

# sp_hypervisor: the hypervisor the kernel reports: /sys/hypervisor/type
# (Xen), else the kernel log's "Hypervisor detected" (KVM, VMware,
# Hyper-V), else systemd-detect-virt --vm, else the CPU's hypervisor flag
# (one is there, unnamed); "none reported" where nothing names one.
sp_hypervisor() {
    local h=""
    [[ -r /sys/hypervisor/type ]] && h=$(cat /sys/hypervisor/type 2>/dev/null)
    if [[ -n $h ]]; then
        printf '%s (/sys/hypervisor/type)\n' "$h"
        return
    fi
    h=$(dmesg 2>/dev/null | sed -n 's/.*Hypervisor detected: //p' |
        tail -n 1) || true
    if [[ -n $h ]]; then
        printf '%s (the kernel log)\n' "$h"
    elif h=$(systemd-detect-virt --vm 2>/dev/null) && [[ -n $h ]]; then
        printf '%s (systemd-detect-virt)\n' "$h"
    elif grep -qw hypervisor /proc/cpuinfo 2>/dev/null; then
        echo "present, unnamed (the CPU's hypervisor flag)"
    else
        echo "none reported"
    fi
}

# sp_machine: the machine's identity on one line: the kernel's release
# and build, the CPU's model (family, model, stepping) and microcode, the
# hypervisor.  Runs compare like for like only where it is the same.
sp_machine() {
    local cpu
    cpu=$(awk -F'[[:space:]]*: ' '
        $1 == "model name" { m = $2 } $1 == "cpu family" { f = $2 }
        $1 == "model" { n = $2 } $1 == "stepping" { s = $2 }
        $1 == "microcode" { u = $2 } /^$/ { exit }
        END { printf "%s (family %s, model %s, stepping %s), microcode %s",
                     m == "" ? "?" : m, f == "" ? "?" : f, n == "" ? "?" : n,
                     s == "" ? "?" : s, u == "" ? "?" : u }' /proc/cpuinfo)
    printf 'kernel %s, build %s; cpu %s; hypervisor %s\n' "$(uname -r)" \
        "$(uname -v)" "$cpu" "$(sp_hypervisor)"
}

# sp_build_lines BUILD_DIR: how the scaleppm that ran was built: the
# compiler CMake used and its version, the flags its sources and its core
# library's were compiled with (the build's own flags.make, else
# CMakeCache's), the binary's build time (its modification time), version
# and sha256.
sp_build_lines() {
    local build=$1 cc type flags dir=$1/src/CMakeFiles
    cc=$(sed -n 's/^CMAKE_C_COMPILER:[A-Z]*=//p' "$build/CMakeCache.txt")
    type=$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$build/CMakeCache.txt")
    printf 'compiler: %s (%s)\n' "$cc" "$("${cc:-cc}" --version 2>/dev/null | head -n 1)"
    if [[ -r $dir/scaleppm.dir/flags.make ]]; then
        flags="$(sed -n 's/^C_FLAGS = //p' "$dir/scaleppm.dir/flags.make"); core library: $(sed -n 's/^C_FLAGS = //p' "$dir/scaleppm_core.dir/flags.make" 2>/dev/null); defines: $(sed -n 's/^C_DEFINES = //p' "$dir/scaleppm.dir/flags.make")"
    else
        flags="$(sed -n 's/^CMAKE_C_FLAGS:[A-Z]*=//p' "$build/CMakeCache.txt") $(sed -n "s/^CMAKE_C_FLAGS_${type^^}:[A-Z]*=//p" "$build/CMakeCache.txt")"
    fi
    printf 'build type: %s, flags: %s\n' "$type" "$flags"
    printf 'built: %s\n' "$(date -u -r "$build/src/scaleppm" '+%Y-%m-%d %H:%M:%S UTC')"
    printf 'scaleppm: %s, sha256 %s\n' "$("$build/src/scaleppm" --version)" \
        "$(sha256sum <"$build/src/scaleppm" | cut -d' ' -f1)"
}

# sp_offset: where the contenders' rotation of this session starts: round
# r's order begins at the contender (r - 1 + sp_offset) mod their number
# (run_experiments.sh --session: (K - 1) x runs, the rounds of the
# sessions before it).
: "${sp_offset:=0}"

# sp_write_env FILE IMAGE BUILD_DIR SETTINGS [IMAGE...]: what the figures
# depend on; started (when the invocation began: sp_started) and the
# session's index, order seed and rotation offset where
# run_experiments.sh set them.  IMAGE (and each after SETTINGS): a file the runs read, as
# they read it (a copy, not what it was copied from); "" for none.  The
# fault-around is probed beside the first.
sp_write_env() {
    local file=$1 build=$3 settings=$4 image
    local -a images=()
    for image in "$2" "${@:5}"; do
        if [[ -f $image ]]; then images+=("$image"); fi
    done
    {
        [[ -z ${sp_started:-} ]] || printf 'started: %s\n' "$sp_started"
        printf 'date: %s\n' "$(date -u '+%Y-%m-%d %H:%M:%S UTC')"
        printf 'host: %s\n' "$(hostname)"
        printf 'machine: %s\n' "$(sp_machine)"
        printf 'cpu: %s\n' "$(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo)"
        printf 'cores: %s online\n' "$(nproc)"
        printf 'memory: %s kB\n' "$(awk '/MemTotal/ { print $2 }' /proc/meminfo)"
        printf 'kernel: %s\n' "$(uname -srmv)"
        printf 'page size: %s\n' "$(getconf PAGESIZE)"
        printf 'transparent hugepages: %s; shmem: %s\n' \
            "$(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null || echo n/a)" \
            "$(cat /sys/kernel/mm/transparent_hugepage/shmem_enabled 2>/dev/null || echo n/a)"
        for image in "${images[@]}"; do
            sp_input_lines "$build" "$image"
        done
        printf 'filesystem of the working copy: %s\n' \
            "$(df -PT "${TMPDIR:-/tmp}" | awk 'NR == 2 { print $2 " on " $1 " at " $7 }')"
        printf 'read_ahead_kb of the working copy'"'"'s device: %s\n' \
            "$(sp_read_ahead_kb "${TMPDIR:-/tmp}")"
        sp_fault_around "$build" "$(dirname -- "${images[0]:-${TMPDIR:-/tmp}/.}")"
        sp_build_lines "$build"
        printf 'commit: %s\n' "$(git -C "$ROOT" rev-parse HEAD 2>/dev/null || echo unknown)"
        printf 'tree: %s\n' "$(sp_tree_state)"
        printf 'settings: %s\n' "$settings"
        [[ -z ${sp_session:-} ]] || printf 'session: k=%s order_seed=%s %s\n' \
            "$sp_session" "${order_seed:-}" "rotation_offset=${sp_offset:-0}"
    } >"$file"
}

# sp_suite_inputs CSV BUILD_DIR: the images a suite's rows name in their
# first column (WxH, as paths.csv, durable.csv and threads.csv have it),
# as sp_image_of finds them, once each.
sp_suite_inputs() {
    local size
    awk -F, 'NR > 1 && $1 ~ /^[0-9]+x[0-9]+$/ { print $1 }' "$1" | sort -u |
        while read -r size; do sp_image_of "$ROOT" "$2" "$size"; done
}

# sp_suite_report SUITE CSV MD PNG: an iobench suite's Markdown table and
# figure from its rows.
sp_suite_report() {
    spreport iobench "$@"
}
