#!/usr/bin/env bash
# How well `nqueens estimate` predicts a count: for each engine:N, the
# 1-thread CPU time of full counts of the same plan (`count N -e E -j1 --out F`, user + sys
# from /usr/bin/time) against estimates with seeds 1..SEEDS, each a 1-thread estimate with
# its 90% interval. Counts run first and last (COUNTS of them, split), estimates in between,
# so the machine's load while estimating and while counting is whatever it happens to be.
#
#   scripts/estimate-accuracy.sh [SEEDS=10] ["engine:N ..."] [COUNTS=2]
#   NQUEENS=path/to/nqueens (default: build and use target/release/nqueens)
#   RAW=file for every estimate's JSON and every count's time (default: a temporary file)
#
# Prints one markdown row per engine:N: the counts' CPU seconds, the estimates' range, how
# many intervals hold the counts' mean and every count, the worst error of the estimate
# against the counts' mean, and the measured timing spread (before the floor). Heavy: N = 20
# takes minutes per count.
set -euo pipefail
seeds=${1:-10}
cases=${2:-"mitm:17 mitm:18 mitm:19 mitm:20 symmetry:16 symmetry:17"}
counts=${3:-2}
cd "$(dirname "$0")/.."
if [ -z "${NQUEENS:-}" ]; then
    cargo build --release -q
    NQUEENS=$PWD/target/release/nqueens
fi
raw=${RAW:-$(mktemp -t estimate-accuracy.XXXX)}
cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs || echo unknown)
echo "<!-- $(date -u +%FT%TZ), $cpu, $(nproc) CPUs, $("$NQUEENS" --version), raw output: $raw -->"
echo "| engine | N | measured CPU (s) | estimates (s) | intervals holding the mean | holding every count | worst error | measured timing spread (median) |"
echo "|---|---|---|---|---|---|---|---|"
count() { # engine n: prints the CPU seconds of one full 1-thread count
    local out
    out=$(mktemp)
    # --out: the same stable plan a sharded run (and the estimate) uses.
    { /usr/bin/time -f "%U %S" "$NQUEENS" count "$2" -e "$1" -j1 -q --out "$out" >/dev/null; } 2>&1 |
        awk '{print $1 + $2}'
    rm -f "$out"
}
for c in $cases; do
    e=${c%%:*} n=${c##*:}
    measured=()
    for _ in $(seq $(((counts + 1) / 2))); do measured+=("$(count "$e" "$n")"); done
    estimates=()
    for s in $(seq "$seeds"); do
        json=$("$NQUEENS" estimate "$n" -e "$e" -j1 -q --json --seed "$s")
        echo "$e $n seed $s $json" >>"$raw"
        estimates+=("$json")
    done
    for _ in $(seq $((counts / 2))); do measured+=("$(count "$e" "$n")"); done
    echo "$e $n counts ${measured[*]}" >>"$raw"
    python3 - "$e" "$n" "${measured[*]}" "${estimates[@]}" <<'EOF'
import json, statistics, sys
engine, n, measured = sys.argv[1], sys.argv[2], [float(x) for x in sys.argv[3].split()]
runs = [json.loads(a) for a in sys.argv[4:]]
mean = statistics.mean(measured)
est = [(r["core_hours"]["estimate"] * 3600, r["core_hours"]["low"] * 3600, r["core_hours"]["high"] * 3600) for r in runs]
hits = sum(all(lo <= m <= hi for m in measured) for _, lo, hi in est)
held = sum(lo <= mean <= hi for _, lo, hi in est)
worst = max((e - mean) / mean for e, _, _ in est) if est else 0
least = min((e - mean) / mean for e, _, _ in est) if est else 0
worst = worst if abs(worst) >= abs(least) else least
spread = statistics.median(r["speed"]["measured_timing_spread"] for r in runs) * 100
central = f"{min(e for e, _, _ in est):.2f}–{max(e for e, _, _ in est):.2f}"
meas = ", ".join(f"{m:.2f}" for m in measured)
print(f"| {engine} | {n} | {meas} | {central} | {held} of {len(est)} | {hits} of {len(est)} | {100 * worst:+.0f}% | ±{spread:.1f}% |")
EOF
done
