#!/usr/bin/env bash
# How close the progress bar's ETA is to the time really left: runs `nqueens count N -j T`
# on a pseudo-terminal (script(1)), so the bar is drawn, stamps every redraw with the clock,
# and when the run ends prints, at each tenth of the run's wall time, the ETA then shown
# against the time that was really left (ratio = shown / real; above 1 is too long).
#
#   scripts/eta-accuracy.sh [N=19] [THREADS=2] [RUNS=1]
#   NQUEENS=path/to/nqueens (default: build and use target/release/nqueens)
#
# Nothing here is a test: times vary with the machine's load. The bar shows whole seconds,
# so a ratio at a few seconds left is coarse.
set -euo pipefail
n=${1:-19}
threads=${2:-2}
runs=${3:-1}
cd "$(dirname "$0")/.."
if [ -z "${NQUEENS:-}" ]; then
    cargo build --release -q
    NQUEENS=$PWD/target/release/nqueens
fi
command -v script >/dev/null || { echo "eta-accuracy.sh: needs script(1) (util-linux)" >&2; exit 1; }
cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs || echo unknown)
echo "<!-- $(date -u +%FT%TZ), $cpu, $(nproc) CPUs, $("$NQUEENS" --version) -->"
echo "| run | elapsed (s) | done | ETA shown (s) | really left (s) | shown / real |"
echo "|---|---|---|---|---|---|"
cmd=$(printf '%q ' "$NQUEENS" count "$n" -j "$threads")
for run in $(seq 1 "$runs"); do
    log=$(mktemp -t eta-accuracy.XXXX)
    start=$EPOCHREALTIME
    # Every redraw starts with a carriage return: one stamped record each.
    TERM=xterm-256color script -qfec "$cmd" /dev/null </dev/null |
        while IFS= read -r -d $'\r' frame; do
            printf '%s %s\n' "$EPOCHREALTIME" "$frame"
        done >"$log"
    end=$EPOCHREALTIME
    # "<stamp> ... 12.3% | ETA 1d 00:01:23 | ..." -> "<stamp> 12.3 1 00 01 23" (the days
    # empty where the ETA has none; mawk has no match groups, so sed takes the fields apart).
    sed -nE 's/^([0-9.]+) .* ([0-9.]+)% \| ETA (([0-9]+)d )?([0-9]+):([0-9]+):([0-9]+) .*/\1 \2 \4 \5 \6 \7/p' "$log" |
        awk -v start="$start" -v end="$end" -v run="$run" '
        {
            days = (NF == 6 ? $3 : 0)
            n++; ts[n] = $1 - start; share[n] = $2
            etas[n] = days * 86400 + $(NF - 2) * 3600 + $(NF - 1) * 60 + $NF
        }
        END {
            total = end - start
            k = 1
            for (tenth = 1; tenth <= 9; tenth++) {
                while (k <= n && ts[k] < tenth * total / 10) k++
                if (k > n) break
                left = total - ts[k]
                printf "| %d | %.1f | %s%% | %d | %.1f | %.2f |\n", run, ts[k], share[k],
                    etas[k], left, etas[k] / left
            }
            printf "| %d | %.1f (end) | | | | |\n", run, total
        }'
    rm -f "$log"
done
