#!/usr/bin/env bash
# Times the release binary against the C yardstick, alternating the commands round by round
# (the machines are shared and noisy), and prints a markdown table of medians.
#
# usage: scripts/bench.sh [N ...]            (default: 14 16)
# env:   ENGINES="mirror"  THREADS="1 2"  RUNS=5
#        BASELINE=/path/to/a C yardstick binary taking "N THREADS" (default: bench/c/baseline_mirror.c,
#                 built into target/bench-c/ with $CC, if a C compiler is present; skipped otherwise)
#        CFLAGS="-O3 -march=native"         (for that build)
#        OUT=bench/runs/<date>-<host>       (raw times and the table are written there)
set -euo pipefail
cd "$(dirname "$0")/.."

sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(14 16)
engines=${ENGINES:-mirror}
threads=${THREADS:-1 2}
runs=${RUNS:-5}
out=${OUT:-bench/runs/$(date +%Y-%m-%d)-$(hostname -s)}
mkdir -p "$out"

cargo build --release --quiet
bin=target/release/nqueens

# The yardstick: $BASELINE, or the repository's own C counter (bench/README.md) when a C
# compiler is present.
baseline=${BASELINE:-}
if [ -z "$baseline" ]; then
  cc=${CC:-$(command -v cc || command -v gcc || true)}
  if [ -n "$cc" ]; then
    mkdir -p target/bench-c
    # shellcheck disable=SC2086 # CFLAGS is a list of flags
    "$cc" ${CFLAGS:--O3 -march=native} -pthread -o target/bench-c/baseline_mirror bench/c/baseline_mirror.c
    baseline=target/bench-c/baseline_mirror
  else
    echo "bench.sh: no C compiler (cc, gcc or \$CC) found and BASELINE unset: timing without the yardstick" >&2
  fi
fi

# Wall-clock seconds of one command, discarding its output.
seconds() {
  local t0 t1
  t0=$(date +%s.%N)
  "$@" >/dev/null 2>&1
  t1=$(date +%s.%N)
  echo "$t0 $t1" | awk '{printf "%.4f", $2 - $1}'
}

raw=$out/times.tsv
: >"$raw"
for n in "${sizes[@]}"; do
  for t in $threads; do
    for r in $(seq "$runs"); do
      if [ -n "$baseline" ]; then
        printf '%s\t%s\tbaseline_mirror.c\t%s\n' "$n" "$t" "$(seconds "$baseline" "$n" "$t")" >>"$raw"
      fi
      for e in $engines; do
        printf '%s\t%s\t%s\t%s\n' "$n" "$t" "$e" "$(seconds "$bin" count "$n" -q -j "$t" --engine "$e")" >>"$raw"
      done
    done
  done
done

{
  echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) logical CPUs; $(date +%Y-%m-%d); rustc $(rustc --version | cut -d' ' -f2); $runs alternating runs, medians"
  echo
  echo "| N | threads | program | median (s) | min (s) | speed-up vs yardstick |"
  echo "|---|---|---|---|---|---|"
  sort -t$'\t' -k1,1n -k2,2n -k3,3 "$raw" | awk -F'\t' '
    function median(arr, k,   i, j, tmp) {
      for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (arr[j] < arr[i]) { tmp = arr[i]; arr[i] = arr[j]; arr[j] = tmp }
      return (k % 2) ? arr[(k + 1) / 2] : (arr[k / 2] + arr[k / 2 + 1]) / 2
    }
    function flush(   m) {
      if (key == "") return
      m = median(vals, cnt)
      med[key] = m; mins[key] = vals[1]; order[++nkeys] = key
    }
    { k = $1 "\t" $2 "\t" $3; if (k != key) { flush(); key = k; cnt = 0 } vals[++cnt] = $4 }
    END {
      flush()
      for (i = 1; i <= nkeys; i++) {
        split(order[i], f, "\t")
        b = f[1] "\t" f[2] "\tbaseline_mirror.c"
        ratio = (b in med && med[order[i]] > 0) ? sprintf("%.2f×", med[b] / med[order[i]]) : "-"
        printf "| %s | %s | %s | %.3f | %.3f | %s |\n", f[1], f[2], f[3], med[order[i]], mins[order[i]], ratio
      }
    }'
} | tee "$out/table.md"

# What a reader of the run needs to repeat it (ripgrep's benchsuite/runs keep the same).
cat >"$out/README.md" <<EOF
# Benchmark run $(basename "$out")

- CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) logical CPUs
- rustc: $(rustc --version)
- commit: $(git rev-parse --short=12 HEAD 2>/dev/null || echo "not recorded (no git)")$(git diff --quiet HEAD 2>/dev/null || echo " (with uncommitted changes)")
- yardstick: ${baseline:-none}
- command: ENGINES="$engines" THREADS="$threads" RUNS=$runs scripts/bench.sh ${sizes[*]}
- files: times.tsv (N, threads, program, wall seconds per run), table.md (medians)
EOF
