#!/bin/bash
# Submit an nqueens count as Slurm job arrays of K shards in all, plus a merge job after them.
#
#   scripts/slurm/submit.sh N K OUTDIR [sbatch options for the arrays...] [-- count flags...]
#
# e.g. NQUEENS=$PWD/target/release/nqueens scripts/slurm/submit.sh 20 16 runs/n20 \
#          --cpus-per-task=8 --time=02:00:00 -- --engine mitm
#
# Prints "ARRAY_JOB_IDS MERGE_JOB_ID" (array ids joined by commas). K may exceed the cluster's
# MaxArraySize (read from 'scontrol show config', else 1001; MAX_ARRAY_SIZE overrides it): the
# shards are submitted as arrays of at most that many tasks, task T of the array at offset O
# counting shard O + T. The merge job's output (and OUTDIR/merged.json) holds the total.
# OUTDIR/submit.args records the submission, so 'nqueens status OUTDIR' can print the lines
# that rerun exactly the unfinished shards. NQUEENS (the binary; default: 'nqueens' on PATH)
# is passed to the jobs. Do not pass --export: the shard variables travel in it.
set -euo pipefail
if [ $# -lt 3 ]; then
    sed -n '2,15s/^# \{0,1\}//p' "$0" >&2
    exit 2
fi
n=$1 k=$2 outdir=$3
shift 3
sbatch_opts=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
    sbatch_opts+=("$1")
    shift
done
[ "${1:-}" = "--" ] && shift
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$outdir"
outdir=$(cd "$outdir" && pwd)
export NQUEENS=${NQUEENS:-nqueens}
# MaxArraySize from the cluster's configuration, else Slurm's default, 1001: a missing or
# failing scontrol (or one that hangs without a controller) must not end the script here.
if [ -z "${MAX_ARRAY_SIZE:-}" ]; then
    config=$(timeout 10 scontrol show config 2>/dev/null) || config=
    max=$(sed -n 's/^MaxArraySize *= *\([0-9][0-9]*\).*/\1/p' <<<"$config")
    if [ -z "$max" ] || [ "$max" -lt 1 ]; then
        echo "submit.sh: MaxArraySize not read from 'scontrol show config': arrays of at most 1001 tasks (set MAX_ARRAY_SIZE to say otherwise)" >&2
        max=1001
    fi
else
    max=$MAX_ARRAY_SIZE
fi
case $max in
    '' | *[!0-9]* | 0)
        echo "submit.sh: MAX_ARRAY_SIZE='$max' is not a number of tasks from 1" >&2
        exit 2
        ;;
esac
sbatch_opts=(--output="$outdir/count-%A_%a.out" "${sbatch_opts[@]}")
{
    printf 'script\t%s\nn\t%s\noutdir\t%s\n' "$here/count-array.sbatch" "$n" "$outdir"
    printf 'env\tNQUEENS=%s\n' "$NQUEENS"
    for o in "${sbatch_opts[@]}"; do printf 'sbatch\t%s\n' "$o"; done
    for a in "$@"; do printf 'count\t%s\n' "$a"; done
} >"$outdir/.submit.args.tmp"
mv "$outdir/.submit.args.tmp" "$outdir/submit.args"
arrays=()
for ((offset = 0; offset < k; offset += max)); do
    size=$((k - offset < max ? k - offset : max))
    id=$(sbatch --parsable --array="0-$((size - 1))" \
        --export="ALL,SHARD_OFFSET=$offset,SHARD_COUNT=$k" \
        "${sbatch_opts[@]}" "$here/count-array.sbatch" "$n" "$outdir" "$@")
    arrays+=("${id%%;*}")
done
after=$(IFS=:; echo "${arrays[*]}")
merge=$(sbatch --parsable --dependency="afterok:$after" --output="$outdir/merge.out" \
    "$here/merge.sbatch" "$outdir")
merge=${merge%%;*}
echo "$(IFS=,; echo "${arrays[*]}") $merge"
