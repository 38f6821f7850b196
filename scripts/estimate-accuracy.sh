#!/usr/bin/env bash
# Compares `nqueens estimate` with measured full counts (issue 11): for each engine and N,
# the estimated core-hours (90% interval) against the CPU time of a 1-thread count.
# Usage: scripts/estimate-accuracy.sh [SAMPLES] ["engine:N ..."]
# Runs the release binary; heavy cases take minutes. Prints a markdown table.
set -euo pipefail
cd "$(dirname "$0")/.."
samples=${1:-64}
cases=${2:-"mitm:16 mitm:17 mitm:18 mitm:19 symmetry:15 symmetry:16 symmetry:17"}
cargo build --release -q
bin=target/release/nqueens
echo "| engine | N | estimate (s) | 90% interval (s) | measured CPU (s) | error |"
echo "|---|---|---|---|---|---|"
for c in $cases; do
  e=${c%%:*}; n=${c##*:}
  json=$($bin estimate "$n" -e "$e" -j1 -q --json --samples "$samples")
  read -r est low high < <(python3 -c 'import json,sys; d=json.loads(sys.argv[1])["core_hours"]; print(d["estimate"]*3600, d["low"]*3600, d["high"]*3600)' "$json")
  # --out: the same stable plan a sharded run (and the estimate) uses.
  out=$(mktemp); cpu=$( { /usr/bin/time -f "%U %S" $bin count "$n" -e "$e" -j1 -q --out "$out" > /dev/null; } 2>&1 | awk '{print $1+$2}'); rm -f "$out"
  python3 -c 'import sys; e,l,h,c=map(float,sys.argv[1:5]); print(f"| {sys.argv[5]} | {sys.argv[6]} | {e:.2f} | {l:.2f}–{h:.2f} | {c:.2f} | {100*(e-c)/c:+.0f}% |")' "$est" "$low" "$high" "$cpu" "$e" "$n"
done
