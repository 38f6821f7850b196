#!/usr/bin/env bash
# A frontier count checked end to end, the way a cluster runs one: K shards of N, each with
# `count --shard I/K --checkpoint F --out F`, then `merge`, which checks every shard file
# and compares the total with the published value (OEIS A000170; exit 3 on a mismatch).
# Shard 0 is interrupted once (SIGINT after INTERRUPT_S seconds, default 5) and resumed
# from its checkpoint, so the resume path is part of the check.
#
#   scripts/frontier-check.sh N K [count flags, e.g. -j1 -e mitm]
#   NQUEENS=path/to/nqueens (default: build and use target/release/nqueens)
#   OUTDIR=folder for shards and checkpoints (default: a new temporary folder, kept)
#
# Prints one line per shard (seconds, exit status) and merge's verdict; exits with merge's
# status (0: the total matches OEIS).
set -euo pipefail
n=${1:?usage: frontier-check.sh N K [count flags]}
k=${2:?usage: frontier-check.sh N K [count flags]}
shift 2
cd "$(dirname "$0")/.."
if [ -z "${NQUEENS:-}" ]; then
    cargo build --release --quiet
    NQUEENS=$PWD/target/release/nqueens
fi
out=${OUTDIR:-$(mktemp -d -t "frontier-$n-$k.XXXX")}
mkdir -p "$out/shards" "$out/checkpoints"
echo "N = $n, K = $k, flags: ${*:-none}; files in $out; $("$NQUEENS" --version)"
started=$(date +%s)
shard() {
    "$NQUEENS" count "$n" --shard "$1/$k" -q "${@:2}" \
        --checkpoint "$out/checkpoints/shard-$1.ckpt" \
        --out "$out/shards/shard-$1.json" >/dev/null
}
for i in $(seq 0 $((k - 1))); do
    t0=$(date +%s.%N)
    note=""
    if [ "$i" -eq 0 ]; then
        # 130: interrupted after saving the checkpoint; the same command resumes.
        rc=0
        timeout --signal=INT "${INTERRUPT_S:-5}" bash -c "$(declare -f shard); $(declare -p n k out NQUEENS); shard 0 $*" || rc=$?
        if [ "$rc" -eq 130 ] || [ "$rc" -eq 124 ]; then
            note=" (interrupted once, resumed from its checkpoint)"
            shard 0 "$@"
        elif [ "$rc" -ne 0 ]; then
            echo "shard 0/$k failed with status $rc"
            exit "$rc"
        fi
    else
        shard "$i" "$@"
    fi
    printf 'shard %d/%d done in %.1f s%s\n' "$i" "$k" "$(echo "$(date +%s.%N) - $t0" | bc)" "$note"
done
echo "all shards in $(($(date +%s) - started)) s; merging"
rc=0
"$NQUEENS" merge "$out/shards" || rc=$?
"$NQUEENS" merge "$out/shards" --json -q >"$out/merged.json" || true
echo "merge exit status $rc; report in $out/merged.json"
exit "$rc"
