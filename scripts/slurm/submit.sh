#!/bin/bash
# Submit an nqueens count as a K-task Slurm array plus a merge job that runs after it.
#
#   scripts/slurm/submit.sh N K OUTDIR [sbatch options for the array...] [-- count flags...]
#
# e.g. NQUEENS=$PWD/target/release/nqueens scripts/slurm/submit.sh 20 16 runs/n20 \
#          --cpus-per-task=8 --time=02:00:00 -- --engine mirror
#
# Prints "ARRAY_JOB_ID MERGE_JOB_ID". The merge job's output (and OUTDIR/merged.json) holds the
# total. NQUEENS (the binary; default: 'nqueens' on PATH) is passed to the jobs.
set -euo pipefail
if [ $# -lt 3 ]; then
    sed -n '2,10s/^# \{0,1\}//p' "$0" >&2
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
export NQUEENS=${NQUEENS:-nqueens}
array=$(sbatch --parsable --array="0-$((k - 1))" --output="$outdir/count-%a.out" \
    "${sbatch_opts[@]}" "$here/count-array.sbatch" "$n" "$outdir" "$@")
array=${array%%;*}
merge=$(sbatch --parsable --dependency="afterok:$array" --output="$outdir/merge.out" \
    "$here/merge.sbatch" "$outdir")
merge=${merge%%;*}
echo "$array $merge"
