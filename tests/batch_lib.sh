# shellcheck shell=bash
# batch_lib.sh: helpers for the batch tests (sourced after lib.sh, run in
# $WORK).  The oracle of every batch is the one-file form, `scaleppm -s N
# IN OUT`, run beforehand into a reference folder.

# sp ARGS...: run scaleppm, stdin from /dev/null; exit status in rc,
# stderr in e.
sp() {
    rc=0
    timeout 60 "$SP" "$@" 2>e </dev/null || rc=$?
}

# spin LIST ARGS...: the same with stdin from the file LIST.
spin() {
    local list=$1
    shift
    rc=0
    timeout 60 "$SP" "$@" 2>e <"$list" || rc=$?
}

# refs N REFDIR IN...: each IN scaled by N on its own into REFDIR under its
# base name (a name with a newline is fine).
refs() {
    local n=$1 dir=$2 in
    shift 2
    mkdir -p "$dir"
    for in in "$@"; do
        "$SP" -s "$n" "$in" "$dir/${in##*/}"
    done
}

# summary_re COUNTS [TAIL]: the ERE of the summary line, COUNTS such as
# '4 scaled, 1 failed', TAIL such as ', interrupted'.
summary_re() {
    local num='[0-9]+(\.[0-9]+)?'
    printf '^scaleppm: %s, %s (B|kB|MB|GB) in %s s%s$' \
        "$1" "$num" "$num" "${2:-}"
}

# holds DIR REFDIR NAMES...: empty, or why DIR does not hold exactly NAMES
# (dot files count), each byte-identical to REFDIR's file of that name.
holds() {
    local dir=$1 ref=$2 extra name
    shift 2
    extra=$(find "$dir" -mindepth 1 -maxdepth 1 -printf '%f\n' | sort |
        comm -23 - <(printf '%s\n' "$@" | sort) | tr '\n' ' ')
    if [[ -n $extra ]]; then
        printf 'left in %s: %s' "$dir" "$extra"
        return
    fi
    for name in "$@"; do
        if [[ ! -f $dir/$name ]]; then
            printf '%s/%s missing' "$dir" "$name"
            return
        elif ! cmp -s -- "$dir/$name" "$ref/$name"; then
            printf '%s/%s differs from the one-file run' "$dir" "$name"
            return
        fi
    done
}

# intact DIR REFDIR: empty, or why some file in DIR is not byte-identical
# to REFDIR's file of its name (a partial or temporary file fails).
intact() {
    local dir=$1 ref=$2 f
    while IFS= read -r -d '' f; do
        if [[ ! -f $ref/$f ]] || ! cmp -s -- "$dir/$f" "$ref/$f"; then
            printf '%s/%s is not a whole output' "$dir" "$f"
            return
        fi
    done < <(find "$dir" -mindepth 1 -maxdepth 1 -printf '%f\0')
}

# stderr_is RC ERE...: empty, or why the last run did not exit RC with one
# stderr line matching each ERE, in order.
stderr_is() {
    local want=$1 i=0 line
    shift
    if ((rc != want)); then
        printf 'exit %d, want %d; stderr: %s' "$rc" "$want" "$(tr '\n' '|' <e)"
        return
    fi
    if (($(wc -l <e) != $#)); then
        printf '%d stderr lines, want %d: %s' "$(wc -l <e)" $# \
            "$(tr '\n' '|' <e)"
        return
    fi
    while IFS= read -r line; do
        i=$((i + 1))
        if ! grep -Eq -- "${!i}" <<<"$line"; then
            printf 'stderr line %d "%s" does not match "%s"' \
                "$i" "$line" "${!i}"
            return
        fi
    done <e
}

# entries DIR: how many names DIR holds (dot files too).
entries() {
    find "$1" -mindepth 1 -maxdepth 1 -printf x | wc -c
}
