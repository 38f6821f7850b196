#!/usr/bin/env bash
# Resume after kill -9 at random moments: for each of RUNS runs, start
# 'nqueens count N --checkpoint', SIGKILL it after a random delay, up to KILLS times, then let
# it finish; the total must equal a single uninterrupted count every time.
#
#   scripts/resume-kill-test.sh [N=16] [RUNS=5] [KILLS=4] [MAX_DELAY_MS=1500]
#   ENGINE=mirror (default; slow enough that kills land mid-run) | symmetry | mitm | auto
set -euo pipefail
n=${1:-16} runs=${2:-5} kills=${3:-4} max_ms=${4:-1500}
cd "$(dirname "$0")/.."
cargo build --release --quiet
bin=$PWD/target/release/nqueens
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
engine=${ENGINE:-mirror}
expected=$("$bin" count "$n" -q --engine "$engine")
echo "N=$n: uninterrupted total $expected; $runs runs, up to $kills kill -9 each, delays 0-${max_ms} ms"
tasks() { grep -o '\],\[' "$1" 2>/dev/null | wc -l | awk '{print ($1 ? $1 + 1 : 0)}'; }
failed=0
for run in $(seq "$runs"); do
    ckpt=$tmp/run$run.ckpt
    log=""
    for _ in $(seq "$kills"); do
        "$bin" count "$n" -q --engine "$engine" --checkpoint "$ckpt" --checkpoint-every 0.05 >/dev/null &
        pid=$!
        delay=$((RANDOM % max_ms))
        sleep "$(printf '0.%03d' "$delay")"
        if kill -9 "$pid" 2>/dev/null; then
            wait "$pid" 2>/dev/null || true
            log+=" kill@${delay}ms:$(tasks "$ckpt")"
        else
            wait "$pid" || true
            log+=" (finished before ${delay}ms)"
        fi
    done
    got=$("$bin" count "$n" -q --engine "$engine" --checkpoint "$ckpt")
    plan=$(grep -o '"plan_tasks":[0-9]*' "$ckpt" | cut -d: -f2)
    verdict=ok
    [ "$got" = "$expected" ] || { verdict=WRONG; failed=1; }
    echo "run $run: tasks saved of $plan at each kill:$log; resumed total $got $verdict"
done
exit $failed
