#!/usr/bin/env bash
# The GPU span model's targets, from work counters on any adapter (Mesa's lavapipe included:
# counters do not depend on the driver, and nothing here reads a clock), with an H100's
# slots (NQUEENS_GPU_SLOT_MIB=12800 unless set: what an 80 GB GPU gets by default). Prints one table, a row per target:
#
#   - `count 21 --gpu`: the span at most 8 s at a dependent step of 5 µs, 12 s at 30 µs;
#     `count 22 --gpu`: at most 45 s at both; batches at most 1,500 and 2,000 (`estimate N
#     --gpu -j 16`: a count of 16 workers);
#   - `estimate 24 --gpu -j 16` and `estimate 26 --gpu -j 16`: GPU idle share at most 0.30;
#   - `estimate 27 --gpu` at most 300 and `estimate 28 --gpu` at most 4,000 H100-hours by the
#     span at 30 µs (sampled tasks that do not finish within the time limit leave the row
#     undetermined: a GPU finishes them; on lavapipe with 2 vCPUs two sampled tasks of
#     N = 27 took 23 minutes, N = 28's 32: `--only 27,28 --samples 2 --time-limit 3600s`);
#   - a whole `count N --gpu` (N = 18 by default; --count-n) at most 32 dependent steps a
#     batch, and exact.
#
# Build first:  cargo build --release --features gpu --bin nqueens
#   bash scripts/span-check.sh [--bin DIR] [--seed S] [--samples K] [--time-limit T]
#                              [--count-n N] [--only LIST] [--out RAW_DIR]
# --only takes a comma list of rows to run (21,22,24,26,27,28,count). The exit status is 1
# if a target is missed or a count is wrong, 0 otherwise (undetermined rows included).
set -uo pipefail

bin=target/release seed=7 samples=64 limit=600s count_n=18 only=21,22,24,26,27,28,count raw=
while [ $# -gt 0 ]; do
    case "$1" in
    --bin) bin=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    --samples) samples=$2; shift 2 ;;
    --time-limit) limit=$2; shift 2 ;;
    --count-n) count_n=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    --out) raw=$2; shift 2 ;;
    -h | --help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; exit 2 ;;
    *) echo "span-check: unknown argument '$1'" >&2; exit 2 ;;
    esac
done
nq=$bin/nqueens
[ -x "$nq" ] || { echo "span-check: no nqueens binary at '$nq' (use --bin DIR)" >&2; exit 2; }
raw=${raw:-$(mktemp -d)}
mkdir -p "$raw"
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-$raw}"
export NQUEENS_GPU_SLOT_MIB="${NQUEENS_GPU_SLOT_MIB:-12800}"

wanted() { [[ ",$only," == *",$1,"* ]]; }
# A number from one-line JSON: the value of "KEY", or of "KEY":{"estimate": ...}.
json_num() {
    sed -n -e "s/.*\"$2\":{\"estimate\":\([-0-9.eE+]*\).*/\1/p" \
        -e "t" -e "s/.*\"$2\":\([-0-9.eE+]*\).*/\1/p" "$1" | head -n 1
}
# The span model's two figures: "step_5us step_30us" of KEY's object.
span_pair() {
    sed -n "s/.*\"$2\":{\"step_5us\":\([-0-9.eE+]*\),\"step_30us\":\([-0-9.eE+]*\)}.*/\1 \2/p" "$1" |
        head -n 1
}
calc() { awk "BEGIN { x = $1; if (x == x + 0) printf \"%.4g\", x; else print \"-\" }" 2>/dev/null || echo -; }
# "yes" where $1 <= $2, "NO" where not, "-" where either is missing.
within() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "") print "-"; else print (a + 0 <= b + 0) ? "yes" : "NO" }'; }

rows=()
row() { rows+=("$(printf '| %s | %s | %s | %s |' "$1" "$2" "$3" "$4")"); }

# estimate N --gpu -j 16 into $raw/est-N.json; 0 where it answered.
estimate() {
    echo "span-check: estimate $1 --gpu -j 16 (seed $seed, $samples samples, limit $limit)" >&2
    "$nq" estimate "$1" --gpu -j 16 --seed "$seed" --samples "$samples" --time-limit "$limit" \
        --calibrate 1s --json -q >"$raw/est-$1.json" 2>"$raw/est-$1.err"
}

for n in 21 22; do
    wanted "$n" || continue
    if estimate "$n"; then
        read -r s5 s30 <<<"$(span_pair "$raw/est-$n.json" gpu_span_seconds)"
        b=$(json_num "$raw/est-$n.json" gpu_model_batches)
        if [ "$n" = 21 ]; then t5=8 t30=12 tb=1500; else t5=45 t30=45 tb=2000; fi
        row "count $n --gpu: span at 5 µs, s" "$(calc "$s5")" "≤ $t5" "$(within "$s5" $t5)"
        row "count $n --gpu: span at 30 µs, s" "$(calc "$s30")" "≤ $t30" "$(within "$s30" $t30)"
        row "count $n --gpu: batches of 16 workers" "$(calc "$b")" "≤ $tb" "$(within "$b" $tb)"
    else
        row "count $n --gpu: span" "FAILED (see $raw/est-$n.err)" "-" "NO"
    fi
done

for n in 24 26; do
    wanted "$n" || continue
    if estimate "$n"; then
        idle=$(json_num "$raw/est-$n.json" gpu_idle_share)
        row "estimate $n --gpu -j 16: GPU idle share" "$(calc "$idle")" "≤ 0.30" "$(within "$idle" 0.30)"
    else
        row "estimate $n --gpu -j 16: GPU idle share" "FAILED (see $raw/est-$n.err)" "-" "NO"
    fi
done

for n in 27 28; do
    wanted "$n" || continue
    target=$([ "$n" = 27 ] && echo 300 || echo 4000)
    if estimate "$n"; then
        read -r _ s30 <<<"$(span_pair "$raw/est-$n.json" gpu_span_seconds)"
        h=$(calc "${s30:-0} / 3600")
        row "estimate $n --gpu: H100-hours by the span at 30 µs" "$h" "≤ $target" "$(within "$h" $target)"
    else
        row "estimate $n --gpu: H100-hours by the span at 30 µs" \
            "undetermined (no answer within $limit; see $raw/est-$n.err)" "≤ $target" "-"
    fi
done

if wanted count; then
    declare -A known=([14]=365596 [15]=2279184 [16]=14772512 [17]=95815104 [18]=666090624)
    echo "span-check: count $count_n --gpu -j 2" >&2
    if "$nq" count "$count_n" --gpu -j 2 --json -q >"$raw/count.json" 2>"$raw/count.err"; then
        got=$(sed -n 's/.*"total":"\([0-9]*\)".*/\1/p' "$raw/count.json")
        steps=$(json_num "$raw/count.json" gpu_dependent_steps)
        batches=$(json_num "$raw/count.json" gpu_batches)
        a=$(calc "$steps / $batches")
        exact=$([ "$got" = "${known[$count_n]:-}" ] && echo exact || echo "WRONG: $got")
        row "count $count_n --gpu: dependent steps a batch ($exact)" "$a ($batches batches)" "≤ 32" \
            "$([ "$exact" = exact ] && within "$a" 32 || echo NO)"
    else
        row "count $count_n --gpu" "FAILED (see $raw/count.err)" "-" "NO"
    fi
fi

echo
echo "| target | value | bound | met |"
echo "|---|---|---|---|"
printf '%s\n' "${rows[@]}"
echo
echo "raw outputs: $raw"
if printf '%s\n' "${rows[@]}" | grep -q '| NO |$'; then
    exit 1
fi
