#!/usr/bin/env bash
# Chaos test of sharded runs: each round cuts a count of N = 14..17 into 12-40 shards and
# runs them with faults drawn from the seed: kill -9 and SIGTERM at random instants (saves
# every 5 ms, so some land during one), the same shard started twice at once, the run's
# disk filling up mid-run, a checkpoint or result with a flipped byte, a checkpoint written
# or resumed by a binary of another version, stale temporary files, finished result files
# deleted. Then it does what a user would: 'nqueens status', rerun exactly the shards it
# names (moving aside a checkpoint or result that a rerun refuses as damaged, as the
# messages say),
# and 'nqueens merge'. Every step has a time limit.
#
#   scripts/chaos.sh --seed S --rounds R [--bin PATH] [--other-bin PATH] [--limit SECONDS]
#                    [--keep]
#
# --bin: the nqueens under test (default: target/release/nqueens, built first).
# --other-bin: a build of another version for the version faults (default: this tree built
#   once more under target/chaos-other with its package version changed; without cargo,
#   the version faults are left out and the verdict says so).
# --limit: seconds any one command may take (default 120); beyond it, a hang.
#
# Exit status: 0 when every round merged to the known total with every fault ending in its
# expected message; 1 on any lost shard or work, wrong or missing total, panic, hang or
# unexpected message; 2 on bad arguments. The last line is the verdict, with the faults
# injected by kind.
set -uo pipefail

seed=1 rounds=3 bin= other= limit=120 keep=no
while [ $# -gt 0 ]; do
    case $1 in
        --seed) seed=$2; shift 2 ;;
        --rounds) rounds=$2; shift 2 ;;
        --bin) bin=$2; shift 2 ;;
        --other-bin) other=$2; shift 2 ;;
        --limit) limit=$2; shift 2 ;;
        --keep) keep=yes; shift ;;
        -h | --help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) echo "chaos: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    esac
done
[[ $seed =~ ^[0-9]+$ && $rounds =~ ^[0-9]+$ && $limit =~ ^[0-9]+$ ]] ||
    { echo "chaos: --seed, --rounds and --limit take whole numbers" >&2; exit 2; }

cd "$(dirname "$0")/.."
# Failures go to fd 3, the script's stderr: the background steps' own stderr goes to a log,
# since bash reports there every process this script kills.
exec 3>&2
repo=$PWD
here=$(dirname "$0")
# shellcheck source=scripts/chaos/lib.sh
source "$here/chaos/lib.sh"
# shellcheck source=scripts/chaos/faults.sh
source "$here/chaos/faults.sh"
# shellcheck source=scripts/chaos/user.sh
source "$here/chaos/user.sh"

scratch=$(mktemp -d /tmp/nqueens-chaos.XXXXXX)
touch "$scratch"/{failures,faults,merges}
cleanup() {
    unmount_disk
    if [ "$keep" = yes ] || [ "$failures" -gt 0 ]; then
        echo "chaos: files kept in $scratch"
    else
        rm -rf "$scratch"
    fi
}
trap cleanup EXIT

prepare_binaries
rng_seed "$seed"
started=$SECONDS
for round in $(seq "$rounds"); do
    run_round "$round"
done
verdict $((SECONDS - started))
