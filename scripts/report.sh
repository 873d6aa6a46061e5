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
        printf 'compiler: %s\n' "$(sed -n 's/^CMAKE_C_COMPILER:[A-Z]*=//p' "$build/CMakeCache.txt") ($(cc --version | head -n 1))"
        printf 'build type: %s, flags: %s %s\n' \
            "$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$build/CMakeCache.txt")" \
            "$(sed -n 's/^CMAKE_C_FLAGS:[A-Z]*=//p' "$build/CMakeCache.txt")" \
            "$(sed -n 's/^CMAKE_C_FLAGS_RELEASE:[A-Z]*=//p' "$build/CMakeCache.txt")"
        printf 'scaleppm: %s\n' "$("$build/src/scaleppm" --version)"
        printf 'commit: %s\n' "$(git -C "$(dirname "$build")" rev-parse HEAD 2>/dev/null || echo unknown)"
        printf 'settings: %s\n' "$settings"
    } >"$file"
}

# sp_suite_report SUITE CSV MD PNG: an iobench suite's Markdown table and
# figure from its rows.
sp_suite_report() {
    spreport iobench "$@"
}
