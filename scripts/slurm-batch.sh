#!/usr/bin/env bash
#SBATCH --job-name=scaleppm
#SBATCH --cpus-per-task=8
#SBATCH --output=scaleppm-%A_%a.log
# slurm-batch.sh: one task of a Slurm job array: its slice of a file list,
# scaled by one scaleppm batch with --skip-existing (so a task that is run
# again does only what is missing).  See usage() for how to call it.
set -euo pipefail

usage() {
    cat <<'EOF'
usage: sbatch --array=0-K scripts/slurm-batch.sh [-0] LIST SCALEPPM_ARGS...
       SLURM_ARRAY_TASK_ID=I SLURM_ARRAY_TASK_COUNT=K+1 \
           scripts/slurm-batch.sh [-0] LIST SCALEPPM_ARGS...

Task I of the array takes the I-th of K+1 contiguous slices of LIST (one
name a line, or NUL-separated with -0) and runs
    scaleppm -t CPUS --skip-existing SCALEPPM_ARGS... --files-from - -0
on it, SCALEPPM_ARGS holding -s N and -o DIR/ or -o PATTERN.  Names are
as the task's working directory sees them: give absolute names, or submit
from the folder the list is relative to, on a filesystem every node sees.

Environment: SLURM_ARRAY_TASK_ID (required), SLURM_ARRAY_TASK_COUNT,
SLURM_ARRAY_TASK_MIN and SLURM_ARRAY_TASK_STEP (Slurm sets them; by hand
they default to 1, 0 and 1), SLURM_CPUS_PER_TASK (default: nproc),
SCALEPPM (the program, default scaleppm).
Exit status: scaleppm's (0 all scaled or skipped, 1 some failed, 2 usage).
EOF
}

die() {
    printf 'slurm-batch.sh: %s\n' "$1" >&2
    exit 2
}

nul=''
case ${1:-} in
-h | --help)
    usage
    exit 0
    ;;
-0)
    nul=yes
    shift
    ;;
esac
(($# >= 2)) || {
    usage >&2
    exit 2
}
list=$1
shift
[[ -r $list ]] || die "cannot read the list '$list'"
id=${SLURM_ARRAY_TASK_ID:?set SLURM_ARRAY_TASK_ID (see --help)}
count=${SLURM_ARRAY_TASK_COUNT:-1}
first=${SLURM_ARRAY_TASK_MIN:-0}
step=${SLURM_ARRAY_TASK_STEP:-1}
index=$(((id - first) / step))
((count >= 1 && index >= 0 && index < count)) ||
    die "task $id is not one of $count (min $first, step $step)"

if [[ -n $nul ]]; then
    mapfile -d '' -t names <"$list"
else
    mapfile -t names <"$list"
fi
# Contiguous slices whose sizes differ by at most one.
n=${#names[@]}
from=$((n * index / count))
to=$((n * (index + 1) / count))
printf 'slurm-batch.sh: task %d of %d: names %d to %d of %d\n' \
    "$index" "$count" "$from" "$((to - 1))" "$n" >&2
((to > from)) || exit 0
printf '%s\0' "${names[@]:from:to-from}" |
    "${SCALEPPM:-scaleppm}" -t "${SLURM_CPUS_PER_TASK:-$(nproc)}" \
        --skip-existing "$@" --files-from - -0
