# shellcheck shell=bash
# seeds.sh: sourced by run_experiments.sh; what the seed experiments need
# beyond running iobench: a memory-limited cgroup, for seed 000's caveat
# that mmap is not faster when the data does not fit in memory.
#
# The memory controller is found where it is: cgroup v2 (memory listed in
# cgroup.controllers at /sys/fs/cgroup or at /sys/fs/cgroup/unified beside
# v1) or cgroup v1 (/sys/fs/cgroup/memory).  Needs root.

# sp_memcg_create LIMIT: make a memory cgroup limited to LIMIT bytes, swap
# included, and print its folder; 1 with a message when none can be made.
sp_memcg_create() {
    local limit=$1 name="scaleppm-memlimit-$$-$RANDOM" root group dir
    for root in /sys/fs/cgroup /sys/fs/cgroup/unified; do
        if [[ ! -f $root/cgroup.controllers ]] ||
            ! grep -qw memory "$root/cgroup.controllers"; then
            continue
        fi
        # children of the root get the memory controller only when the
        # root's subtree_control lists it
        grep -qw memory "$root/cgroup.subtree_control" ||
            echo +memory >"$root/cgroup.subtree_control" || return 1
        dir=$root/$name
        mkdir "$dir" || return 1
        if ! echo "$limit" >"$dir/memory.max"; then
            rmdir "$dir"
            return 1
        fi
        [[ ! -f $dir/memory.swap.max ]] || echo 0 >"$dir/memory.swap.max"
        printf '%s\n' "$dir"
        return 0
    done
    if [[ -d /sys/fs/cgroup/memory ]]; then
        # v1: a child of the group this shell is in, so that any limit
        # above still holds
        group=$(awk -F: '$2 == "memory" { print $3 }' /proc/self/cgroup)
        dir=/sys/fs/cgroup/memory${group%/}/$name
        mkdir "$dir" || return 1
        if ! echo "$limit" >"$dir/memory.limit_in_bytes"; then
            rmdir "$dir"
            return 1
        fi
        # memsw (memory and swap together) must not be below the limit
        [[ ! -f $dir/memory.memsw.limit_in_bytes ]] ||
            echo "$limit" >"$dir/memory.memsw.limit_in_bytes" || true
        printf '%s\n' "$dir"
        return 0
    fi
    printf 'seeds.sh: no cgroup memory controller found\n' >&2
    return 1
}

# sp_memcg_remove DIR: remove the cgroup DIR (its processes have exited;
# the kernel may take a moment to let it go).
sp_memcg_remove() {
    local dir=$1 try
    for try in 1 2 3 4 5 6 7 8 9 10; do
        rmdir "$dir" 2>/dev/null && return 0
        sleep 0.2
    done
    printf 'seeds.sh: could not remove cgroup %s (try %s times)\n' \
        "$dir" "$try" >&2
    return 1
}

# sp_memlimit_run LIMIT CMD...: run CMD in a fresh memory cgroup limited to
# LIMIT bytes, then remove the group.  Returns CMD's status (1 when no
# group could be made).  CMD's process joins the group before it execs,
# so nothing it allocates escapes the limit.
sp_memlimit_run() {
    local limit=$1 dir rc=0
    shift
    dir=$(sp_memcg_create "$limit") || return 1
    # shellcheck disable=SC2016  # $$ and $1 are the child shell's
    sh -c 'echo $$ >"$1/cgroup.procs" || exit 1; shift; exec "$@"' sh \
        "$dir" "$@" || rc=$?
    sp_memcg_remove "$dir" || true
    return "$rc"
}

# sp_perf_prefix DATA: print, one word a line, the command prefix that
# samples a command's CPU time (user and kernel) into DATA with perf
# record; 1 with a message when perf is missing.
sp_perf_prefix() {
    if ! command -v perf >/dev/null 2>&1; then
        printf 'seeds.sh: perf not found (apt-get install linux-perf)\n' >&2
        return 1
    fi
    printf '%s\n' perf record -q -F 999 -o "$1" --
}

# sp_perf_summary DATA OUT: where the time sampled in DATA went, a line a
# function (with its program or the kernel), most first, into OUT: for
# seed 000, how the kernel's copy (_copy_to_iter and the copy routine
# under it) compares with the user memcpy (__memmove_*).
sp_perf_summary() {
    perf report -i "$1" --stdio --no-children --sort dso,symbol \
        --percent-limit 0.5 2>/dev/null | grep -v '^$' >"$2"
}
