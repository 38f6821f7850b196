#!/usr/bin/env bash
# The frontier table: `nqueens estimate N --json` for each N, with the step from N - 1 beside
# the solutions' own (Q(N) / Q(N - 1)), the solutions per core-second (published counts, OEIS
# A000170, up to N = 27), the largest task, the matcher's hits per visit (fitting
# (key, query) pairs per 512-key block visited, from work.counters), the tasks sampled (and
# how many solved in part), how long the estimate took and its peak memory, and the machine
# and matcher level. Prints a markdown table; the raw JSON of each N is kept in $OUT.
#
#   scripts/frontier-table.sh [N ...]        (default: 20 to 28)
#   NQUEENS=path/to/nqueens (default: build and use target/release/nqueens)
#   ARGS="-j2 --seed 7"   (extra estimate flags)   OUT=folder (default: a new temporary one)
#
# Needs python3 and GNU time (/usr/bin/time).
set -euo pipefail
cd "$(dirname "$0")/.."
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(20 21 22 23 24 25 26 27 28)
if [ -z "${NQUEENS:-}" ]; then
    cargo build --release --quiet
    NQUEENS=$PWD/target/release/nqueens
fi
out=${OUT:-$(mktemp -d -t frontier-table.XXXX)}
mkdir -p "$out"
for n in "${sizes[@]}"; do
    # shellcheck disable=SC2086
    /usr/bin/time -f "%e %M" -o "$out/$n.time" "$NQUEENS" estimate "$n" --json -q ${ARGS:-} \
        >"$out/$n.json" || echo "estimate $n failed (exit $?)" >&2
done
python3 - "$out" "${sizes[@]}" <<'EOF'
import json, sys
A000170 = {19: 4968057848, 20: 39029188884, 21: 314666222712, 22: 2691008701644, 23: 24233937684440,
           24: 227514171973736, 25: 2207893435808352, 26: 22317699616364044,
           27: 234907967154122528}
out, sizes = sys.argv[1], [int(n) for n in sys.argv[2:]]
def years_or_hours(h):
    if h >= 8766:
        return f"{h / 8766:.3g} core-years"
    return f"{h:,.0f} core-h" if h >= 100 else f"{h:.3g} core-h"
rows, prev, machine = [], None, None
for n in sizes:
    try:
        d = json.load(open(f"{out}/{n}.json"))
        took, rss = open(f"{out}/{n}.time").read().split()[-2:]
    except (OSError, ValueError):
        rows.append(f"| {n} | no answer | | | | | | | | |")
        prev = None
        continue
    machine = f"{d['cpu']}, matcher {d['isa']}"
    c = d["core_hours"]
    step = f"{c['estimate'] / prev:.1f}×" if prev else ""
    q = A000170.get(n)
    rate = f"{q / (c['estimate'] * 3600) / 1e6:.0f} M" if q else ""
    qstep = f"{q / A000170[n - 1]:.1f}×" if q and n - 1 in A000170 else ""
    p = d.get("pieces", {})
    sample = f"{d['samples']} of {d.get('samples_drawn', d['samples'])}"
    if p.get("partial_tasks"):
        sample += f", {p['partial_tasks']} in part"
    largest = d["largest_task_hours"] * 3600
    hits = ((d.get("work") or {}).get("counters") or {}).get("hits_per_visit")
    hit_rate = f"{hits:.2f}" if hits is not None else ""
    rows.append(f"| {n} | {years_or_hours(c['estimate'])} ({years_or_hours(c['low'])} – "
                f"{years_or_hours(c['high'])}) | {step} | {qstep} | {rate} | {largest:.3g} s | "
                f"{hit_rate} | {sample} | {float(took):.0f} s | {int(rss) / 1024:.0f} MB |")
    prev = c["estimate"]
print(f"Machine: {machine}\n")
print("| N | cost (90% interval) | step | Q(N) step | solutions per core-second "
      "| largest task | hits per visit | sampled tasks | estimate took | its peak RSS |")
print("|---|---|---|---|---|---|---|---|---|---|")
print("\n".join(rows))
EOF
