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

# sp_cache_state BUILD_DIR IMAGE: the page cache as this run found it,
# measured (spcache): the pages one read fault maps on a fresh mapping of
# a cached 8 MiB file (the fault-around, or the folio it falls in), and
# the folios holding IMAGE's cached pages where there is an IMAGE.
sp_cache_state() {
    local spcache=$1/src/spcache probe
    probe=$(mktemp "${TMPDIR:-/tmp}/scaleppm-probe.XXXXXX") || return 0
    head -c 8388608 /dev/zero >"$probe"
    printf 'fault-around, measured: %s pages a read fault (a cached 8 MiB file in %s)\n' \
        "$("$spcache" faultaround "$probe" 2>/dev/null || echo '?')" \
        "${TMPDIR:-/tmp}"
    rm -f -- "$probe"
    if [[ -f $2 ]]; then
        printf 'folios of the cached input, measured (KiB:count): %s\n' \
            "$("$spcache" folios "$2" 2>/dev/null || echo '? (needs root)')"
    fi
}

# sp_write_env FILE IMAGE BUILD_DIR SETTINGS: what the figures depend on.
sp_write_env() {
    local file=$1 image=$2 build=$3 settings=$4
    {
        printf 'date: %s\n' "$(date -u '+%Y-%m-%d %H:%M:%S UTC')"
        printf 'host: %s\n' "$(hostname)"
        printf 'cpu: %s\n' "$(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo)"
        printf 'cores: %s online\n' "$(nproc)"
        printf 'memory: %s kB\n' "$(awk '/MemTotal/ { print $2 }' /proc/meminfo)"
        printf 'kernel: %s\n' "$(uname -srmv)"
        printf 'page size: %s\n' "$(getconf PAGESIZE)"
        printf 'transparent hugepages: %s; shmem: %s\n' \
            "$(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null || echo n/a)" \
            "$(cat /sys/kernel/mm/transparent_hugepage/shmem_enabled 2>/dev/null || echo n/a)"
        if [[ -f $image ]]; then
            printf 'input: %s, %s bytes, %s\n' "$image" "$(stat -c %s "$image")" \
                "$(pamfile "$image" | cut -d: -f2- | sed 's/^[[:space:]]*//')"
            printf 'filesystem of the input: %s\n' \
                "$(df -PT "$image" | awk 'NR == 2 { print $2 " on " $1 " at " $7 }')"
        fi
        printf 'filesystem of the working copy: %s\n' \
            "$(df -PT "${TMPDIR:-/tmp}" | awk 'NR == 2 { print $2 " on " $1 " at " $7 }')"
        printf 'read_ahead_kb of the working copy'"'"'s device: %s\n' \
            "$(sp_read_ahead_kb "${TMPDIR:-/tmp}")"
        sp_cache_state "$build" "$image"
        printf 'compiler: %s\n' "$(sed -n 's/^CMAKE_C_COMPILER:[A-Z]*=//p' "$build/CMakeCache.txt") ($(cc --version | head -n 1))"
        printf 'build type: %s, flags: %s %s\n' \
            "$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$build/CMakeCache.txt")" \
            "$(sed -n 's/^CMAKE_C_FLAGS:[A-Z]*=//p' "$build/CMakeCache.txt")" \
            "$(sed -n 's/^CMAKE_C_FLAGS_RELEASE:[A-Z]*=//p' "$build/CMakeCache.txt")"
        printf 'scaleppm: %s, sha256 %s\n' "$("$build/src/scaleppm" --version)" \
            "$(sha256sum <"$build/src/scaleppm" | cut -d' ' -f1)"
        printf 'commit: %s\n' "$(git -C "$ROOT" rev-parse HEAD 2>/dev/null || echo unknown)"
        printf 'tree: %s\n' "$(sp_tree_state)"
        printf 'settings: %s\n' "$settings"
    } >"$file"
}

# sp_suite_report SUITE CSV MD PNG: an iobench suite's Markdown table and
# figure from its rows.
sp_suite_report() {
    spreport iobench "$@"
}
