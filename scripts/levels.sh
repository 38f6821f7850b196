#!/usr/bin/env bash
# Times the matcher at every instruction-set level this CPU has (through NQUEENS_ISA), one
# thread, next to optional yardsticks, alternating the commands round by round (the machines
# are shared and noisy), and prints a markdown table of medians of user CPU seconds (robust to
# other load on the machine where wall time is not) and of wall seconds.
#
# usage: scripts/levels.sh [N ...]                 (default: 16 17 18)
# env:   RUNS=5
#        LEVELS="portable popcnt avx2 avx512bw avx512"   (levels this CPU lacks are skipped)
#        BASE=/path/to/another nqueens binary      (e.g. a build of the previous main, at its
#                                                    own best level)
#        PEER="/path/to/counter_{n} 1"             (any other counter; {n} is replaced by N)
#        OUT=bench/runs/<date>-<host>-levels       (raw times and the table are written there)
set -euo pipefail
cd "$(dirname "$0")/.."

sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(16 17 18)
runs=${RUNS:-5}
levels=${LEVELS:-portable popcnt avx2 avx512bw avx512}
out=${OUT:-bench/runs/$(date +%Y-%m-%d)-$(hostname -s)-levels}
mkdir -p "$out"

cargo build --release --quiet
bin=target/release/nqueens

# Only the levels this CPU has: a capped run reports the level it used.
have=()
for level in $levels; do
  used=$(NQUEENS_ISA=$level "$bin" count 8 --json 2>/dev/null | sed 's/.*"isa":"\([a-z0-9]*\)".*/\1/')
  [ "$used" = "$level" ] && have+=("$level")
done

# "user wall" seconds of one command, discarding its output.
timed() {
  local TIMEFORMAT='%U %R'
  { time "$@" >/dev/null 2>&1; } 2>&1
}

raw=$out/times.tsv
: >"$raw"
for n in "${sizes[@]}"; do
  for r in $(seq "$runs"); do
    for level in "${have[@]}"; do
      printf '%s\tnqueens %s\t%s\n' "$n" "$level" "$(NQUEENS_ISA=$level timed "$bin" count "$n" -q -j 1)" >>"$raw"
    done
    if [ -n "${BASE:-}" ]; then
      printf '%s\tbase\t%s\n' "$n" "$(timed "$BASE" count "$n" -q -j 1)" >>"$raw"
    fi
    if [ -n "${PEER:-}" ]; then
      # shellcheck disable=SC2086 # PEER is a command line
      printf '%s\tpeer\t%s\n' "$n" "$(timed ${PEER//\{n\}/$n})" >>"$raw"
    fi
  done
done

{
  echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'); $(nproc) logical CPUs"
  echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown); $runs alternating rounds; medians"
  echo
  echo "| N | command | user s (median) | wall s (median) | user vs peer |"
  echo "|---|---|---|---|---|"
  sort -t$'\t' -k1,1n -k2,2 "$raw" | awk -F'\t' '
    { split($3, t, " "); key = $1 "\t" $2; u[key] = u[key] " " t[1]; w[key] = w[key] " " t[2]
      if (!(key in seen)) { seen[key] = 1; order[++k] = key } }
    function median(list,   a, m, i, j, x) {
      m = split(list, a, " ")
      for (i = 2; i <= m; i++) { x = a[i] + 0; for (j = i - 1; j >= 1 && a[j] + 0 > x; j--) a[j + 1] = a[j]; a[j + 1] = x }
      return m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
    }
    END {
      for (i = 1; i <= k; i++) { split(order[i], p, "\t"); mu[order[i]] = median(u[order[i]]); if (p[2] == "peer") peer[p[1]] = mu[order[i]] }
      for (i = 1; i <= k; i++) { split(order[i], p, "\t")
        ratio = (p[1] in peer && mu[order[i]] > 0) ? sprintf("%.2f×", peer[p[1]] / mu[order[i]]) : ""
        printf "| %s | %s | %.2f | %.2f | %s |\n", p[1], p[2], mu[order[i]], median(w[order[i]]), ratio }
    }'
} | tee "$out/table.md"
