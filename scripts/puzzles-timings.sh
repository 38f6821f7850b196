#!/usr/bin/env bash
# Timings for the companion puzzles: place/verify at n = 10^8, min-conflicts at
# n = 10^6, two-colour on full boards n = 12, 13, 14. Needs hyperfine; writes ~0.9 GB to $TMP.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
bin="$PWD/target/release/nqueens"
tmp="${TMPDIR:-/tmp}/nqueens-puzzles"
mkdir -p "$tmp"
for n in 12 13 14; do
  { echo "$n"; for _ in $(seq "$n"); do printf '1 %.0s' $(seq "$n"); echo; done; } > "$tmp/full$n.txt"
done
echo "== host: $(nproc) logical CPUs, load: $(cut -d' ' -f1-3 /proc/loadavg)"
hyperfine -N -r 5 --output=null "$bin place -q 100000000"
hyperfine -r 3 "$bin place -q 100000000 > $tmp/p8.txt"
hyperfine -N -r 3 "$bin verify -q $tmp/p8.txt"
hyperfine -N -r 5 --output=null -L seed 1,2,3 "$bin place -q 1000000 --method min-conflicts --seed {seed}"
hyperfine -N -r 10 --output=null "$bin two-colour -q $tmp/full12.txt"
hyperfine -N -r 3 --output=null "$bin two-colour -q $tmp/full13.txt"
hyperfine -N -r 1 --output=null "$bin two-colour -q $tmp/full14.txt"
rm -f "$tmp/p8.txt"
