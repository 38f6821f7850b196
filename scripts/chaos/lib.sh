# shellcheck shell=bash
# Helpers of scripts/chaos.sh: the seeded generator, time-limited processes, the binaries,
# the small disk, and the record of faults and failures.

# A000170: the known totals the merges must give.
declare -A known=([14]=365596 [15]=2279184 [16]=14772512 [17]=95815104)

failures=0
disk_kind=none disk_mounted=
version= other_version= other_why=

# --- the seeded generator (Park-Miller: the same draws from bash 4 to 5, no overflow) ----
rng_state=1
rng_seed() {
    rng_state=$(($1 % 2147483646 + 1))
    rng_next
    rng_next
}
rng_next() { rng_state=$((rng_state * 48271 % 2147483647)); }
# draw N: sets r to a number in 0..N-1 (N at most 2^31), from the generator's high bits.
# Only the main shell draws, so that background steps never reuse or skip a draw.
draw() {
    rng_next
    r=$(((rng_state - 1) * $1 / 2147483646))
}

# --- time ----------------------------------------------------------------------------------
now_ms() { local t=${EPOCHREALTIME//[.,]/}; ms=$((t / 1000)); }
sleep_ms() { sleep "$(printf '%d.%03d' $(($1 / 1000)) $(($1 % 1000)))"; }

# --- records (steps run in background subshells, so everything goes through files) ---------
# fail MESSAGE: a failure of the project, with the round and shard it happened in.
fail() {
    local where="round $round${shard:+ shard $shard}"
    echo "$where: $*" >>"$scratch/failures"
    echo "chaos: FAIL: $where: $*" >&3
}
# fault KIND: one fault of KIND was injected (or a consequence of one seen, e.g. a refusal).
fault() { echo "$1" >>"$scratch/faults"; }
# tally KIND: how many of KIND were recorded.
tally() { grep -cx -- "$1" "$scratch/faults" 2>/dev/null || true; }

# --- processes -------------------------------------------------------------------------------
# spawn LOG COMMAND...: starts it with stdout in LOG.out and stderr in LOG.err; sets pid.
spawn() {
    local log=$1
    shift
    "$@" >"$log.out" 2>"$log.err" &
    pid=$!
}
# await PID LOG: waits for PID at most the time limit, and sets rc. A process still running
# then is a hang: it is killed, recorded as a failure, and rc is 124. A panic is a failure.
await() {
    local pid=$1 log=$2 deadline
    now_ms
    deadline=$((ms + limit * 1000))
    while kill -0 "$pid" 2>/dev/null; do
        now_ms
        if [ "$ms" -gt "$deadline" ]; then
            kill -9 "$pid" 2>/dev/null
            wait "$pid" 2>/dev/null
            rc=124
            fail "HANG: '$(basename "$log")' still running after ${limit}s"
            return
        fi
        sleep 0.01
    done
    # (Quietly: the shell would say "Killed" for each kill -9 this script sends.)
    wait "$pid" 2>/dev/null
    rc=$?
    if [ "$rc" = 101 ] || grep -q 'panicked at' "$log.err" 2>/dev/null; then
        fail "PANIC in '$(basename "$log")': $(grep -m1 'panicked' "$log.err")"
    fi
}
# run_step LOG COMMAND...: spawn and await.
run_step() {
    local log=$1
    spawn "$@"
    await "$pid" "$log"
}
# said LOG PATTERN: whether the step's stderr matches PATTERN (extended regex).
said() { grep -Eq -- "$2" "$1.err" 2>/dev/null; }
last_words() { tail -n 2 "$1.err" 2>/dev/null | tr '\n' ' '; }

# --- the binaries ------------------------------------------------------------------------------
prepare_binaries() {
    if [ -z "$bin" ]; then
        echo "chaos: building the release binary"
        cargo build --release --quiet || { echo "chaos: cargo build failed" >&2; exit 1; }
        bin=$repo/target/release/nqueens
    fi
    bin=$(realpath "$bin") && [ -x "$bin" ] || { echo "chaos: no binary at '$bin'" >&2; exit 1; }
    [ -z "$other" ] || other=$(realpath "$other")
    version=$("$bin" --version | awk '{print $2}') || { echo "chaos: '$bin' does not run" >&2; exit 1; }
    if [ -z "$other" ]; then
        build_other || { other=; other_why=${other_why:-"no build of another version"}; }
    fi
    if [ -n "$other" ]; then
        other_version=$("$other" --version | awk '{print $2}')
        if [ "$other_version" = "$version" ]; then
            other_why="--other-bin reports the same version $version"
            other=
        fi
    fi
    echo "chaos: nqueens $version at $bin; other version: ${other_version:-none ($other_why)}"
}

# build_other: this tree with its package version changed, built once under
# target/chaos-other in the profile of --bin, reusing the dependencies already built there.
build_other() {
    command -v cargo >/dev/null || { other_why="no cargo to build one"; return 1; }
    local profile=release dir=release
    case $bin in */target/debug/*) profile=dev dir=debug ;; esac
    local top=$repo/target/chaos-other
    local src=$top/src target=$top/target
    rm -rf "$src" && mkdir -p "$src" "$target/$dir"
    tar -C "$repo" --exclude=./target --exclude=./.git -cf - . | tar -C "$src" -xf - ||
        { other_why="cannot copy the tree"; return 1; }
    sed -i "0,/^version = \".*\"/s//version = \"$version-chaos\"/" "$src/Cargo.toml"
    # Only this crate is built again: without debug info or incremental files, which a
    # stand-in binary does not need (the dependencies' settings stay, so they are reused).
    printf '\n[profile.%s.package.nqueens]\ndebug = 0\n' "$profile" >>"$src/Cargo.toml"
    local from=$repo/target/$dir
    if [ ! -d "$target/$dir/deps" ] && [ -d "$from/deps" ]; then
        # The dependencies' outputs and fingerprints, not the test executables beside them:
        # hard links where they can be (a few GB of disk otherwise; only this crate, under
        # names of its own version, is built again), else copies.
        mkdir -p "$target/$dir/deps"
        local link=-al
        cp $link "$from/build" "$from/.fingerprint" "$target/$dir/" 2>/dev/null || {
            link=-a
            cp $link "$from/build" "$from/.fingerprint" "$target/$dir/" 2>/dev/null
        }
        find "$from/deps" -maxdepth 1 \( -name 'lib*' -o -name '*.d' \) \
            -exec cp $link -t "$target/$dir/deps" {} + 2>/dev/null
    fi
    echo "chaos: building nqueens $version-chaos (the other version) in $top"
    now_ms
    local t0=$ms
    CARGO_INCREMENTAL=0 CARGO_TARGET_DIR=$target cargo build --quiet --profile "$profile" \
        --bin nqueens --manifest-path "$src/Cargo.toml" || { other_why="its build failed"; return 1; }
    now_ms
    echo "chaos: built in $(((ms - t0) / 1000)) s"
    other=$target/$dir/nqueens
}

# --- the small disk ------------------------------------------------------------------------------
# mount_disk DIR: puts DIR on a small file system of its own (tmpfs, else a loop-mounted
# image); sets disk_kind to tmpfs, loop or none (then the round has no disk fault).
mount_disk() {
    local dir=$1
    mkdir -p "$dir"
    if mount -t tmpfs -o size=4m tmpfs "$dir" 2>/dev/null; then
        disk_kind=tmpfs
    elif truncate -s 8M "$scratch/disk.img" 2>/dev/null &&
        mkfs.ext4 -q -F "$scratch/disk.img" >/dev/null 2>&1 &&
        mount -o loop "$scratch/disk.img" "$dir" 2>/dev/null; then
        disk_kind=loop
    else
        disk_kind=none
        return 1
    fi
    disk_mounted=$dir
}
unmount_disk() {
    [ -n "$disk_mounted" ] || return 0
    umount "$disk_mounted" 2>/dev/null || umount -l "$disk_mounted" 2>/dev/null
    rm -f "$scratch/disk.img"
    disk_mounted=
}
# fill_disk DIR HOLD_MS: fills DIR's file system to the last byte, keeps it full for HOLD_MS,
# then frees the space (as a user who clears the disk would).
fill_disk() {
    dd if=/dev/zero of="$1/.filler" bs=64k status=none 2>/dev/null
    sleep_ms "$2"
    rm -f "$1/.filler"
}

# flip_byte FILE PERMILLE BIT COPIES: flips bit BIT of the byte at PERMILLE/1000 of FILE's
# length, keeping the file as it was in COPIES.was and as it is then in COPIES.now.
flip_byte() {
    local file=$1 size offset byte
    size=$(stat -c %s "$file") || return 1
    [ "$size" -gt 0 ] || return 1
    cp "$file" "$4.was" || return 1
    offset=$(($2 * size / 1000))
    byte=$(od -An -tu1 -j "$offset" -N1 "$file" | tr -d ' ')
    printf "$(printf '\\%03o' $((byte ^ (1 << $3))))" |
        dd of="$file" bs=1 seek="$offset" conv=notrunc status=none || return 1
    cp "$file" "$4.now"
}

# same_meaning COPIES: whether the file as it was and with its flipped bit read the same: some
# bits change no value (the case of a hex digit of a digest, some header bits of the done-set
# bitmap), and a reader may take such a file as the original. Asked of status, on each copy
# alone: the tasks done, their share of the plan's cost and their total must all be equal.
same_meaning() {
    local copy what
    for copy in was now; do
        rm -rf "$1.dir" && mkdir -p "$1.dir" && cp "$1.$copy" "$1.dir/file.${2:-json}"
        "$bin" status "$1.dir" --json --max-array-size 7 >"$1.$copy.status" 2>/dev/null ||
            return 1
    done
    for what in tasks_done done_share partial_total n engine plan_hash shards; do
        [ "$(grep -o "\"$what\":[^,]*" "$1.was.status")" = \
            "$(grep -o "\"$what\":[^,]*" "$1.now.status")" ] || return 1
    done
}
