#!/usr/bin/env bash
# Speed check: the symmetry engine against the mirror engine and the C yardstick, side by
# side with hyperfine. Each round runs every command once, in turn (the machines are shared and
# noisy), and the medians over the rounds are printed, wall-clock and user CPU.
#
# usage: scripts/symmetry-speed.sh [N ...]     (default: 16 17)
# env:   ROUNDS=5  BASELINE=/tmp/bl/baseline_mirror  OUT=bench/runs/<date>-<host>-symmetry
set -euo pipefail
cd "$(dirname "$0")/.."

sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(16 17)
rounds=${ROUNDS:-5}
baseline=${BASELINE:-/tmp/bl/baseline_mirror}
out=${OUT:-bench/runs/$(date +%Y-%m-%d)-$(hostname -s)-symmetry}
mkdir -p "$out"

cargo build --release --quiet
bin=target/release/nqueens

for n in "${sizes[@]}"; do
  cmds=(
    "$bin -q -j1 count $n --engine symmetry"
    "$bin -q -j2 count $n --engine symmetry"
    "$bin -q -j1 count $n --engine mirror"
  )
  [ -x "$baseline" ] && cmds+=("$baseline $n 1")
  for r in $(seq "$rounds"); do
    hyperfine -N --runs 1 --style none --export-json "$out/n$n-round$r.json" "${cmds[@]}" >/dev/null
  done
done

python3 - "$out" "${sizes[@]}" <<'PY'
import json, statistics, sys, glob, os
out, sizes = sys.argv[1], sys.argv[2:]
print(f"load average at the end: {os.getloadavg()}")
for n in sizes:
    runs = {}
    for f in sorted(glob.glob(f"{out}/n{n}-round*.json")):
        for r in json.load(open(f))["results"]:
            w, u = runs.setdefault(r["command"], ([], []))
            w.extend(r["times"]); u.append(r["user"])
    med = {c: (statistics.median(w), statistics.median(u)) for c, (w, u) in runs.items()}
    names = list(med)
    sym1 = next(c for c in names if "-j1" in c and "symmetry" in c)
    print(f"\nN = {n} ({len(runs[sym1][0])} rounds): median wall s / user s, and the ratio vs symmetry -j1")
    for c in names:
        w, u = med[c]
        print(f"  {c:60s} {w:8.3f} {u:8.3f}   wall x{w / med[sym1][0]:.2f}  user x{u / med[sym1][1]:.2f}")
PY
