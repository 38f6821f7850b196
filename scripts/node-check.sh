#!/usr/bin/env bash
# Node check: what slows a full many-core machine, in one run of a few minutes, with nothing
# but a built nqueens binary and bash (no cargo, compiler, jq or python on the node). Prints
# one markdown table and a verdict:
#
#   1. `nqueens bench` (quick) at 1 thread, the physical cores and every logical CPU: each
#      row counts the workload once per thread; efficiency, how busy the threads were, and
#      their per-core speed (CPU time per copy against one thread's).
#   2. `count N -jT` against a -j1 sample of the same work (one shard of K, times K).
#   3. The per-core speed of `count 18 -j1` alone, beside T-1 copies of itself, beside T-1
#      vector loops (the matcher's inner loop in first-level cache: only the cores are
#      shared, i.e. SMT siblings and the chip's clock) and beside T-1 memory streams (only
#      memory bandwidth and the last-level cache are shared). RUNS rounds, the conditions
#      alternating within each round; medians with the range. The loops are the binary's
#      own hidden `nqueens load` subcommand.
#
# usage: scripts/node-check.sh
# env:   NQUEENS=path/to/nqueens   (default: target/release/nqueens if built, else on PATH)
#        THREADS=T                 (default: every logical CPU)
#        RUNS=5                    (rounds of the count 18 conditions)
#        COUNT_N, SHARDS           (default 20 and 8; 21 and 64 from 64 threads on)
#        STREAM_MIB=64             (each memory stream's buffer, less where memory is short)
#        OUT=dir                   (raw results; default a new temporary folder, kept)
set -euo pipefail
cd "$(dirname "$0")/.."

bin=${NQUEENS:-}
if [ -z "$bin" ]; then
  if [ -x target/release/nqueens ]; then bin=target/release/nqueens; else bin=$(command -v nqueens || true); fi
fi
[ -n "$bin" ] && [ -x "$bin" ] || { echo "node-check: no nqueens binary (set NQUEENS=path)" >&2; exit 1; }
threads=${THREADS:-$(getconf _NPROCESSORS_ONLN)}
runs=${RUNS:-5}
if [ "$threads" -ge 64 ]; then count_n=${COUNT_N:-21} shards=${SHARDS:-64}; else count_n=${COUNT_N:-20} shards=${SHARDS:-8}; fi
out=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/node-check.XXXXXX")}
mkdir -p "$out"
others=$((threads - 1))
load_limit=900 # seconds: a load left behind ends by itself

# Physical cores: distinct (core, socket) pairs, where lscpu can say.
phys=$(lscpu -p=CORE,SOCKET 2>/dev/null | grep -v '^#' | sort -u | wc -l || true)
[ "${phys:-0}" -gt 0 ] || phys=$threads

# Each memory stream's buffer: STREAM_MIB, or less so that all of them take at most a quarter
# of the available memory.
avail_mib=$(awk '/^MemAvailable:/ {print int($2 / 1024)}' /proc/meminfo 2>/dev/null || echo 0)
stream_mib=${STREAM_MIB:-64}
if [ "$others" -gt 0 ] && [ "${avail_mib:-0}" -gt 0 ] && [ $((stream_mib * others)) -gt $((avail_mib / 4)) ]; then
  stream_mib=$((avail_mib / 4 / others))
  [ "$stream_mib" -ge 1 ] || stream_mib=1
fi

# The value of "name": in a one-line JSON object on stdin (numbers, or strings without quotes).
field() { sed -n "s/.*\"$1\":\"\{0,1\}\([^\",}]*\).*/\1/p"; }

# "1 thread", "2 threads".
plural() { if [ "$1" = 1 ]; then echo "$1 $2"; else echo "$1 $2s"; fi; }

# Seconds as text with three decimals, or - when empty.
secs() { awk -v x="${1:-}" 'BEGIN { if (x == "" || x == "null") print "-"; else printf "%.3f", x }'; }

# Percent of a ratio a/b (with a factor), or - .
pct() { awk -v a="${1:-}" -v b="${2:-}" 'BEGIN { if (a == "" || b == "" || a == "null" || b == "null" || b + 0 == 0) print "-"; else printf "%.0f%%", 100 * a / b }'; }

# The average clock of the logical CPUs now, in MHz, or - where the kernel does not say.
clock() { awk '/^cpu MHz/ {s += $4; n++} END { if (n) printf "%.0f", s / n; else print "-" }' /proc/cpuinfo 2>/dev/null || echo -; }

pids=()
start_loads() { # KIND: start T-1 loads of that kind
  pids=()
  local i
  for ((i = 0; i < others; i++)); do
    "$bin" load "$1" --seconds "$load_limit" --mib "$stream_mib" >/dev/null 2>&1 &
    pids+=($!)
  done
  sleep 0.5
}
stop_loads() {
  local pid
  for pid in ${pids[@]+"${pids[@]}"}; do kill "$pid" 2>/dev/null || true; done
  for pid in ${pids[@]+"${pids[@]}"}; do wait "$pid" 2>/dev/null || true; done
  pids=()
}
trap stop_loads EXIT

echo "node-check: $bin, $threads threads ($phys physical cores), raw results in $out" >&2

# 1. bench, rows at 1 thread, the physical cores and every logical CPU.
rows=1
[ "$phys" -gt 1 ] && [ "$phys" -lt "$threads" ] && rows="$rows,$phys"
[ "$threads" -gt 1 ] && rows="$rows,$threads"
echo "node-check: bench -j $rows" >&2
"$bin" bench --size quick -q -j "$rows" --json >"$out/bench.json"
cpu_name=$(sed -n 's/.*"host":{"cpu":"\([^"]*\)".*/\1/p' "$out/bench.json")
isa=$(field isa <"$out/bench.json")
commit=$(field commit <"$out/bench.json")

# 2. count N -jT, and a -j1 sample: shard 0 of K.
echo "node-check: count $count_n -j$threads, and shard 0/$shards of it on one thread" >&2
"$bin" count "$count_n" -q -j "$threads" --json >"$out/count-full.json"
# --force: shard.json is this script's own scratch, perhaps of another N or K from an earlier run
# in the same OUT, which count would otherwise refuse to replace.
"$bin" count "$count_n" -q -j 1 --shard "0/$shards" --out "$out/shard.json" --force --json >"$out/count-sample.json"

# 3. count 18 -j1 alone and beside T-1 loads, RUNS alternating rounds.
conditions=(alone count vector memory)
: >"$out/count18.tsv"
for ((r = 1; r <= runs; r++)); do
  for c in "${conditions[@]}"; do
    echo "node-check: round $r/$runs, count 18 -j1 $c" >&2
    [ "$c" = alone ] || [ "$others" -eq 0 ] || start_loads "$c"
    "$bin" count 18 -q -j 1 --json >"$out/count18.json" &
    fg=$!
    sleep 1
    mhz=$(clock)
    wait "$fg"
    stop_loads
    printf '%s\t%s\t%s\t%s\n' "$c" "$(field elapsed_s <"$out/count18.json")" \
      "$(field cpu_s <"$out/count18.json")" "$mhz" >>"$out/count18.tsv"
  done
done

# Median, min and max of column $2 (1-based) of the rows of condition $1.
stats() {
  awk -F'\t' -v c="$1" -v k="$2" '$1 == c && $k != "" && $k != "-" { v[++n] = $k }
    END {
      if (!n) { print "- - -"; exit }
      for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
      m = (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
      print m, v[1], v[n]
    }' "$out/count18.tsv"
}

read -r alone alone_lo alone_hi <<<"$(stats alone 3)"
read -r copies _ _ <<<"$(stats count 3)"
read -r vector _ _ <<<"$(stats vector 3)"
read -r memory _ _ <<<"$(stats memory 3)"

{
  echo "Node check: $cpu_name, $threads logical CPUs ($phys physical cores), matcher \`$isa\`, nqueens $commit, $(date +%Y-%m-%d)"
  echo
  echo "| check | wall (s) | CPU (s) | per-core speed | notes |"
  echo "|---|---|---|---|---|"
  sed 's/},{"threads"/}\n{"threads"/g' "$out/bench.json" | grep -o '"threads":.*' | while read -r row; do
    t=$(field threads <<<"$row")
    echo "| bench quick, $(plural "$t" thread) ($(plural "$(field copies <<<"$row")" copy | sed 's/copys/copies/')) | $(secs "$(field wall_s <<<"$row")") | $(secs "$(field cpu_s <<<"$row")") | $(pct "$(field core_speed <<<"$row")" 1) | efficiency $(pct "$(field efficiency <<<"$row")" 1), busy $(pct "$(field busy <<<"$row")" 1) |"
  done
  full_wall=$(field elapsed_s <"$out/count-full.json")
  full_cpu=$(field cpu_s <"$out/count-full.json")
  s_wall=$(field elapsed_s <"$out/count-sample.json")
  s_cpu=$(field cpu_s <"$out/count-sample.json")
  one_cpu=$(awk -v x="$s_cpu" -v k="$shards" 'BEGIN { printf "%.3f", x * k }')
  one_wall=$(awk -v x="$s_wall" -v k="$shards" 'BEGIN { printf "%.3f", x * k }')
  echo "| count $count_n -j1 (shard 0/$shards × $shards) | $one_wall | $one_cpu | 100% | the one-thread reference |"
  ideal=$(awk -v w="$one_wall" -v t="$threads" 'BEGIN { print w / t }')
  busy=$(awk -v c="$full_cpu" -v w="$full_wall" -v t="$threads" 'BEGIN { print c / (w * t) }')
  echo "| count $count_n -j$threads | $(secs "$full_wall") | $(secs "$full_cpu") | $(pct "$one_cpu" "$full_cpu") | efficiency $(pct "$ideal" "$full_wall"), busy $(pct "$busy" 1) |"
  for c in "${conditions[@]}"; do
    read -r w _ _ <<<"$(stats "$c" 2)"
    read -r m lo hi <<<"$(stats "$c" 3)"
    read -r mhz _ _ <<<"$(stats "$c" 4)"
    case $c in
      alone) what="count 18 -j1 alone" ;;
      count) what="… beside $(plural "$others" copy | sed 's/copys/copies/') of itself" ;;
      vector) what="… beside $(plural "$others" "vector loop") (cores shared)" ;;
      memory) what="… beside $(plural "$others" "memory stream") of $stream_mib MiB (memory shared)" ;;
    esac
    echo "| $what | $(secs "$w") | $(secs "$m") ($(secs "$lo")–$(secs "$hi")) | $(pct "$alone" "$m") | clock ${mhz} MHz, $(plural "$runs" run) |"
  done
} | tee "$out/table.md"

# The verdict: the per-core loss beside copies, and which single kind of sharing comes close.
echo | tee -a "$out/table.md"
awk -v a="$alone" -v c="$copies" -v v="$vector" -v m="$memory" -v lo="$alone_lo" -v hi="$alone_hi" 'BEGIN {
  if (a == "-" || c == "-") { print "Verdict: no per-core figures (a single thread, or no CPU times)."; exit }
  lc = 1 - a / c; lv = (v == "-") ? 0 : 1 - a / v; lm = (m == "-") ? 0 : 1 - a / m
  noise = (hi - lo) / a
  printf "Verdict: beside its copies a core runs %.0f%% slower than alone (vector loops %.0f%%, memory streams %.0f%%; the runs alone spread over %.0f%%). ", 100 * lc, 100 * lv, 100 * lm, 100 * noise
  if (lc <= 0.15) { print "No per-core loss above 15%."; exit }
  if (lv >= lc / 2 && lm >= lc / 2) print "Both shared cores (SMT siblings, the clock) and shared memory cost speed."
  else if (lv >= lc / 2) print "The cause is shared cores: SMT siblings or the clock of a full chip (see the clock column); count on physical cores."
  else if (lm >= lc / 2) print "The cause is shared memory: bandwidth or last-level cache."
  else print "Neither shared cores nor shared memory alone explains it (a mix of both, or the system)."
}' | tee -a "$out/table.md"
