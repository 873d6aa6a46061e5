#!/usr/bin/env bash
# recipes_test.sh: the README's example of a batch's output, made again and
# compared line by line (the time aside); and the recipes for more than one
# machine (docs/many-machines.md), run here as they are written there: GNU
# parallel over chunks of a file list (lines, NUL-separated, and -X), its
# host list naming only this machine (1/:), and scripts/slurm-batch.sh with
# the array's variables set by hand.  Each recipe's command must be in
# docs/many-machines.md word for word; each
# output must be byte-identical to the one-file run, and a second run of a
# recipe skips everything.  Without GNU parallel its recipes are skipped.
#
# usage: bash tests/recipes_test.sh PATH/TO/scaleppm PATH/TO/genimage SRCDIR
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$here/lib.sh"
# shellcheck source-path=SCRIPTDIR source=batch_lib.sh
. "$here/batch_lib.sh"
usage="usage: recipes_test.sh PATH/TO/scaleppm PATH/TO/genimage SRCDIR"
(($# == 3)) || {
    printf '%s\n' "$usage"
    exit 2
}
src=$(abspath "$3")
setup "$usage" "$1" "$2"
cd "$WORK"

# The recipes run `scaleppm` and `scripts/slurm-batch.sh` from here.
mkdir bin
ln -s "$SP" bin/scaleppm
export PATH=$WORK/bin:$PATH
ln -s "$src/scripts" scripts
printf '1/:\n' >hosts.txt

# The README's example of a batch's output: the ```console block that holds
# "$ scaleppm -s -4 -o small/ photos/*.ppm" is run, command by command, on
# the inputs the README describes (six 640x480 images from genimage and one
# file cut short), and what it prints must be the block's lines, but for
# the time in the summary.
example='scaleppm -s -4 -o small/ photos/*.ppm'
shown=$(awk -v cmd="\$ $example" '
    /^```console$/ { inblk = 1; n = 0; found = 0; next }
    inblk && /^```$/ {
        if (found) { for (i = 1; i <= n; i++) print line[i]; exit }
        inblk = 0; next
    }
    inblk { line[++n] = $0; if ($0 == cmd) found = 1 }' "$src/README.md")
if [[ -z $shown ]]; then
    fail "the README's batch example" "no \`\`\`console block in README.md \
holds: \$ $example"
elif [[ -z $GEN ]]; then
    skip "the README's batch example" 'genimage is not usable'
else
    mkdir -p example/photos
    for i in 1 2 3 4 5 6; do
        "$GEN" -o "example/photos/p$i.ppm" 640 480
    done
    printf 'P6\n10 10\n255\nshort' >example/photos/bad.ppm
    # Each "$ COMMAND" line is echoed, then run with the status of the one
    # before it, so that "echo $?" shows scaleppm's.
    script='rc=0'$'\n'
    while IFS= read -r line; do
        [[ $line == '$ '* ]] || continue
        # shellcheck disable=SC2016  # $rc and $? are the script's
        printf -v script '%sprintf "%%s\\n" %q\n(exit "$rc"); %s 2>&1; rc=$?\n' \
            "$script" "$line" "${line#'$ '}"
    done <<<"$shown"
    ran=$(cd example && bash -c "$script" 2>&1) || true
    time_re='s/ in [0-9]+(\.[0-9]+)? s$/ in TIME s/'
    why=$(diff <(sed -E "$time_re" <<<"$shown") \
        <(sed -E "$time_re" <<<"$ran") | head -n 6 | tr '\n' ' ') || true
    result "the README's batch example prints the lines it shows" \
        "${why:+shown (<) and printed (>) differ: $why}"
    grep -Eq "$(summary_re '6 scaled, 1 failed')" <<<"$ran" ||
        fail "the README's batch example: its summary's shape" "$ran"
fi

mkdir photos
names=()
for i in $(seq 1 12); do
    case $((i % 4)) in
    0) name="-lead $i.ppm" ;;
    1) name="sp ace $i.ppm" ;;
    2) name=$'\xc3\xbc'"$i.ppm" ;;
    3) name="p$i.ppm" ;;
    esac
    noise $((20 + i)) $((10 + i)) 255 $((3 * i)) 3 >"photos/$name"
    names+=("$name")
done
refs -4 ref photos/*

# join_lines FILE...: the files' lines, a line ending in a backslash joined
# to the next less its indent (a README wraps a long command so).
join_lines() {
    cat -- "$@" 2>/dev/null | sed -e ':a' -e '/\\$/{N;s/\\\n *//;ba}'
}

# recipe WHAT COMMAND: COMMAND is in a README word for word; run it twice
# into an empty small/: the first time every output is the one-file
# run's, the second time each file is skipped.
recipe() {
    local what=$1 cmd=$2 why='' out
    # grep reads to the end: -q would stop early, and under pipefail the
    # writer's SIGPIPE would fail the pipeline
    if ! join_lines "$src/docs/many-machines.md" |
        grep -Fx -- "$cmd" >/dev/null
    then
        fail "$what" "not a line of docs/many-machines.md: $cmd"
        return
    fi
    rm -rf small && mkdir small
    out=$(bash -c "$cmd" 2>&1) || why="exit $?: $out"
    [[ -n $why ]] || why=$(holds small ref "${names[@]}")
    [[ -n $why ]] || out=$(bash -c "$cmd" 2>&1) || why="again: exit $?: $out"
    [[ -n $why ]] ||
        grep -Eq '^scaleppm: 0 scaled, [0-9]+ skipped' <<<"$out" ||
        why="the second run did not skip: $out"
    [[ -n $why ]] || why=$(holds small ref "${names[@]}")
    result "$what" "$why"
}

if have parallel; then
    # shellcheck disable=SC2016  # $PWD is the recipe's, expanded when run
    wd='--slf hosts.txt --wd "$PWD" scaleppm -s -4 -o small/ --skip-existing'
    find photos -name '*.ppm' >list.txt
    check 'the list is made as the README makes it' grep -Fqx -- \
        "find photos -name '*.ppm' >list.txt" "$src/docs/many-machines.md"
    recipe 'parallel --pipepart: chunks of a list, one a line' \
        "parallel --pipepart -a list.txt --block -4 $wd --files-from -"
    recipe 'parallel -X -n 500: chunks of names as arguments' \
        "parallel -a list.txt -X -n 500 $wd --"
    # A name with a newline, in the NUL-separated list only.
    noise 9 9 255 99 3 >$'photos/new\nline.ppm'
    "$SP" -s -4 $'photos/new\nline.ppm' $'ref/new\nline.ppm'
    names+=($'new\nline.ppm')
    find photos -name '*.ppm' -print0 >list0.txt
    recipe 'parallel --pipepart --recend: a NUL-separated list' \
        "parallel --pipepart -a list0.txt --recend '\\0' --block -4 $wd \
--files-from - -0"
    rm -f $'photos/new\nline.ppm'
    unset 'names[-1]'
else
    skip 'the GNU parallel recipes' 'parallel is not installed'
    find photos -name '*.ppm' >list.txt
fi

# shellcheck disable=SC2016  # $i is the recipe's
recipe 'slurm-batch.sh by hand: three slices' \
    'for i in 0 1 2; do SLURM_ARRAY_TASK_ID=$i SLURM_ARRAY_TASK_COUNT=3 '\
'scripts/slurm-batch.sh list.txt -s -4 -o small/; done'

# More tasks than names, a NUL list, and Slurm's min and step: each name
# scaled once, no task fails.
find photos -name '*.ppm' -print0 >list0.txt
rm -rf small && mkdir small
why=''
for id in 1 3 5 7 9 11 13 15 17 19 21 23 25 27 29; do
    SLURM_ARRAY_TASK_ID=$id SLURM_ARRAY_TASK_COUNT=15 SLURM_ARRAY_TASK_MIN=1 \
        SLURM_ARRAY_TASK_STEP=2 SLURM_CPUS_PER_TASK=1 \
        scripts/slurm-batch.sh -0 list0.txt -s -4 -o small/ 2>e ||
        why+="task $id: exit $?: $(tail -n 1 e); "
done
[[ -n $why ]] || why=$(holds small ref "${names[@]}")
result 'slurm-batch.sh -0, 15 tasks of step 2 for 12 names' "$why"
rc=0
SLURM_ARRAY_TASK_ID=3 SLURM_ARRAY_TASK_COUNT=3 scripts/slurm-batch.sh \
    list.txt -s -4 -o small/ 2>e || rc=$?
result 'slurm-batch.sh: a task id outside the array is exit 2' \
    "$( ((rc == 2)) || printf 'exit %d' "$rc")"

finish
