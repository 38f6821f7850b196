#!/usr/bin/env bash
# A real single-node Slurm cluster test of sharded counting.
#
# Installs Debian's slurmctld, slurmd, slurm-client and munge, starts them without systemd,
# submits the project's own scripts/slurm/submit.sh: K shards of 'nqueens count N' as job
# arrays of at most MaxArraySize tasks (the cluster is set to MAX_ARRAY_SIZE, 4 by default, so
# K = 10 needs three arrays) plus the dependent merge job (--dependency=afterok), checks that
# the merged total equals the single-process total, deletes some shard results and reruns
# exactly those with the lines 'nqueens status' prints, and stops the daemons it started.
#
#   sudo scripts/slurm-ci-test.sh            # N=14, K=10, MaxArraySize=4
#   N=13 K=4 MAX_ARRAY_SIZE=1001 scripts/slurm-ci-test.sh
#
# Exit status: 0 passed; 1 the project failed (wrong total, failed job, refused merge);
# 75 the Slurm bring-up failed for reasons outside the project (no root, package download,
# daemons that do not start): it says so loudly and never passes silently.
set -euo pipefail

N=${N:-14}
K=${K:-10}
MAX_ARRAY_SIZE=${MAX_ARRAY_SIZE:-4}
TIMEOUT=${TIMEOUT:-300}
cd "$(dirname "$0")/.."
repo=$PWD
scratch=$(mktemp -d /tmp/nqueens-slurm.XXXXXX)
export SLURM_CONF=$scratch/slurm.conf
started_munge=no
made_policy=no
passed=no

say() { echo "slurm-ci: $*"; }

show_logs() {
    for f in "$scratch"/log/*.log "$scratch"/run/*.out; do
        [ -f "$f" ] || continue
        echo "---- $f (last 30 lines)"
        tail -n 30 "$f"
    done
}

infra_fail() {
    echo "slurm-ci: *** SLURM BRING-UP FAILED (outside the project): $* ***" >&2
    echo "slurm-ci: *** the sharded-count test did NOT run; this is not a pass ***" >&2
    show_logs >&2
    exit 75
}

fail() {
    echo "slurm-ci: *** FAILED: $* ***" >&2
    show_logs >&2
    exit 1
}

stop_pidfile() {
    local pid
    [ -f "$1" ] || return 0
    pid=$(cat "$1" 2>/dev/null) || return 0
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
        kill "$pid" 2>/dev/null || true
        for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    fi
}

cleanup() {
    say "stopping the daemons"
    stop_pidfile "$scratch/run/slurmd.pid"
    stop_pidfile "$scratch/run/slurmctld.pid"
    if [ "$started_munge" = yes ]; then
        stop_pidfile /run/munge/munged.pid
    fi
    if [ "$made_policy" = yes ]; then
        rm -f /usr/sbin/policy-rc.d
    fi
    if [ "$passed" = yes ]; then
        rm -rf "$scratch"
    else
        say "logs and job files kept in $scratch"
    fi
}
trap cleanup EXIT

# --- 0. preconditions and the project's own answer --------------------------------------
[ "$(id -u)" = 0 ] || infra_fail "must run as root (it installs packages and starts daemons)"
command -v apt-get >/dev/null || infra_fail "apt-get not found (a Debian-like system is needed)"
say "building the release binary"
cargo build --release --quiet || fail "cargo build --release"
bin=$repo/target/release/nqueens
expected=$("$bin" count "$N" --quiet) || fail "single-process count of N=$N"
say "single-process total for N=$N: $expected"

# --- 1. packages (no init system: policy-rc.d keeps package scripts from starting daemons) --
if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
    chmod +x /usr/sbin/policy-rc.d
    made_policy=yes
fi
need=()
for cmd in slurmctld slurmd sbatch munged; do
    command -v "$cmd" >/dev/null || need=(slurmctld slurmd slurm-client munge)
done
if [ ${#need[@]} -gt 0 ]; then
    say "installing ${need[*]}"
    apt_opts=(-o DPkg::Lock::Timeout=120 -o Acquire::Retries=3)
    apt-get "${apt_opts[@]}" update -qq || infra_fail "apt-get update failed (network or mirror)"
    DEBIAN_FRONTEND=noninteractive apt-get "${apt_opts[@]}" install -y -qq \
        --no-install-recommends "${need[@]}" >"$scratch/apt.log" 2>&1 ||
        { tail -n 20 "$scratch/apt.log" >&2; infra_fail "apt-get install ${need[*]} failed"; }
fi

# --- 2. munge -----------------------------------------------------------------------------
if ! munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
    if [ ! -s /etc/munge/munge.key ]; then
        mungekey --create --keyfile=/etc/munge/munge.key || infra_fail "cannot create the munge key"
    fi
    chown munge:munge /etc/munge/munge.key && chmod 0400 /etc/munge/munge.key
    mkdir -p /run/munge && chown munge:munge /run/munge && chmod 0755 /run/munge
    runuser -u munge -- /usr/sbin/munged || infra_fail "munged did not start"
    started_munge=yes
    for _ in $(seq 100); do
        munge -n 2>/dev/null | unmunge >/dev/null 2>&1 && break
        sleep 0.2
    done
    munge -n | unmunge >/dev/null || infra_fail "munge credentials do not work"
fi
say "munge works; $(dpkg-query -W -f '${Package} ${Version}' slurmctld)"

# --- 3. slurm.conf for this one node --------------------------------------------------------
host=$(hostname -s)
getent hosts "$host" >/dev/null || echo "127.0.0.1 $host" >>/etc/hosts
mkdir -p "$scratch"/{state,spool,run,log}
node=$(slurmd -C | head -n 1) || infra_fail "slurmd -C failed"
cpus=$(sed -n 's/.*CPUs=\([0-9]*\).*/\1/p' <<<"$node")
mem=$(sed -n 's/.*RealMemory=\([0-9]*\).*/\1/p' <<<"$node")
[ -n "$cpus" ] && [ -n "$mem" ] || infra_fail "cannot read CPUs/RealMemory from: $node"
node=${node/RealMemory=$mem/RealMemory=$((mem * 9 / 10))}
cat >"$SLURM_CONF" <<EOF
ClusterName=nqueens-ci
SlurmctldHost=$host
SlurmUser=root
AuthType=auth/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
StateSaveLocation=$scratch/state
SlurmdSpoolDir=$scratch/spool
SlurmctldPidFile=$scratch/run/slurmctld.pid
SlurmdPidFile=$scratch/run/slurmd.pid
SlurmctldLogFile=$scratch/log/slurmctld.log
SlurmdLogFile=$scratch/log/slurmd.log
DependencyParameters=kill_invalid_depend
MinJobAge=3600
MailProg=/bin/true
MaxArraySize=$MAX_ARRAY_SIZE
ReturnToService=2
$node State=UNKNOWN
PartitionName=ci Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF

# --- 4. daemons ---------------------------------------------------------------------------
slurmctld || infra_fail "slurmctld did not start"
slurmd || infra_fail "slurmd did not start"
state=
for _ in $(seq 120); do
    state=$(sinfo -h -N -o %t 2>/dev/null | head -n 1) || true
    [ "$state" = idle ] && break
    sleep 0.5
done
[ "$state" = idle ] || infra_fail "the node did not become idle (state: '${state:-none}')"
say "cluster up: $(sinfo -h -o '%P %D nodes %c cpus %t')"

# --- 5. the project's own submission: K-task array + dependent merge --------------------
out=$scratch/run/n$N
say "MaxArraySize: $(scontrol show config | sed -n 's/^MaxArraySize *= *//p')"
ids=$(NQUEENS=$bin scripts/slurm/submit.sh "$N" "$K" "$out" --cpus-per-task=1 --time=10) ||
    fail "scripts/slurm/submit.sh failed"
read -r array merge <<<"$ids"
say "submitted array jobs $array (K=$K) and merge job $merge (afterok on all)"

job_state() {
    local id
    for id in ${1//,/ }; do scontrol -o show job "$id" 2>/dev/null; done |
        grep -o 'JobState=[A-Z_]*' | sort | uniq -c | tr '\n' ' '
}
deadline=$((SECONDS + TIMEOUT))
while :; do
    mstate=$(scontrol -o show job "$merge" | grep -o 'JobState=[A-Z_]*' | cut -d= -f2)
    case $mstate in
        COMPLETED) break ;;
        PENDING | RUNNING | CONFIGURING | COMPLETING) ;;
        *) fail "merge job $merge ended $mstate (array: $(job_state "$array"))" ;;
    esac
    [ $SECONDS -lt $deadline ] || fail "timed out after ${TIMEOUT}s (merge $mstate)"
    sleep 1
done
say "array tasks: $(job_state "$array")"
say "merge job: COMPLETED"

# --- 6. checks ------------------------------------------------------------------------------
shards=$(find "$out/shards" -name 'shard-*.json' | wc -l)
[ "$shards" = "$K" ] || fail "expected $K shard files, found $shards"
merged=$(grep -o '"total":"[0-9]*"' "$out/merged.json" | grep -o '[0-9]\+') ||
    fail "no total in $out/merged.json"
say "merge job output:"
sed 's/^/    /' "$out/merge.out"
for i in $(seq 0 $((K - 1))); do
    say "shard $i: $(grep -o '"total":"[0-9]*"\|"host":"[^"]*"\|"elapsed_s":[0-9.e-]*' \
        "$out/shards/shard-$i.json" | tr '\n' ' ')"
done
[ "$merged" = "$expected" ] ||
    fail "merged total $merged differs from the single-process total $expected"
say "merged total $merged == single-process total $expected"

# A merge that lacks a shard must be refused (exit 3), on the cluster too.
mkdir -p "$scratch/run/partial/shards"
cp "$out/shards/shard-0.json" "$scratch/run/partial/shards/"
bad=$(NQUEENS=$bin sbatch --parsable --wait --output="$scratch/run/partial.out" \
    scripts/slurm/merge.sbatch "$scratch/run/partial" 2>/dev/null) && 
    fail "a merge job with $((K - 1)) missing shards succeeded"
grep -q 'missing' "$scratch/run/partial.out" || fail "the refused merge does not name the missing shards"
say "a merge job with missing shards fails as it should: $(grep -c 'missing' "$scratch/run/partial.out") lines name the missing shards"

# Shards lost after the run: 'nqueens status' names them, and its lines rerun exactly those
# (each array within MaxArraySize); the merge then gives the same total.
lost=(1 $((K / 2)) $((K - 1)))
for i in "${lost[@]}"; do rm -f "$out/shards/shard-$i.json"; done
"$bin" status "$out" >"$scratch/run/status.txt" || true
sed 's/^/    /' "$scratch/run/status.txt"
mapfile -t reruns < <(sed -n 's/^  \(sbatch .*\)/\1/p' "$scratch/run/status.txt")
[ ${#reruns[@]} -gt 0 ] || fail "status printed no rerun line for shards ${lost[*]}"
for line in "${reruns[@]}"; do
    say "rerun: $line"
    eval "${line/#sbatch /sbatch --wait --quiet }" || fail "the rerun '$line' failed"
done
shards=$(find "$out/shards" -name 'shard-*.json' | wc -l)
[ "$shards" = "$K" ] || fail "after the reruns: expected $K shard files, found $shards"
again=$("$bin" merge "$out/shards" --quiet) || fail "the merge after the reruns was refused"
[ "$again" = "$expected" ] || fail "after the reruns the total is $again, not $expected"
"$bin" status "$out" --json | grep -q '"complete":true' || fail "status does not say complete"
say "reran shards ${lost[*]} with the status lines: total $again again"
say "PASSED (N=$N, K=$K, MaxArraySize=$MAX_ARRAY_SIZE, total $merged)"
passed=yes
