# shellcheck shell=bash
# What a user of scripts/chaos.sh's run does once the faults are over: 'nqueens status',
# rerun exactly the shards it names, and 'nqueens merge'; then the verdict.

# json_list FILE FIELD: the items of a JSON array of numbers or strings, one a line.
json_list() {
    grep -o "\"$2\":\[[^]]*\]" "$1" | sed 's/^[^[]*\[//; s/\]$//' | tr ',' '\n' | tr -d '"' |
        sed '/^$/d'
}
json_number() { grep -o "\"$2\":[0-9]*" "$1" | head -n 1 | cut -d: -f2; }
# expand RANGES...: "3-5" "8" as 3 4 5 8, one a line.
expand() {
    local x
    for x in "$@"; do
        case $x in
            *-*) seq "${x%-*}" "${x#*-}" ;;
            *) echo "$x" ;;
        esac
    done
}

# status_step NAME: runs 'nqueens status --json' into LOG; 0 or 3 (damaged files named)
# pass, and nothing may be running now.
status_step() {
    local log=$logs/$1
    run_step "$log" "$bin" status "$run" --json --max-array-size 7
    case $rc in
        0 | 3) ;;
        *) fail "status exited $rc: $(last_words "$log")"; return 1 ;;
    esac
    local running stopped in_progress
    running=$(json_list "$log.out" running | wc -l)
    [ "$running" = 0 ] || fail "status calls $running shards running, with no process left"
    in_progress=$(json_number "$log.out" in_progress)
    stopped=$(grep -o '"process":"stopped"' "$log.out" | wc -l)
    [ "$stopped" = "${in_progress:-0}" ] ||
        fail "status calls $stopped of ${in_progress:-0} shards in progress stopped; all are"
    mapfile -t unfinished < <(expand $(json_list "$log.out" unfinished))
}

# user_flow: status, the shards it names against those this script knows are unfinished, a
# merge that must refuse, the reruns, status again, and the merge that must be exact.
user_flow() {
    shard=
    status_step status-1 || return
    local expected_left=() i
    for i in $(seq 0 $((k - 1))); do
        [ -f "$marks/done/$i" ] && continue
        # A result whose flipped bit changed no value may be read as whole.
        if [ -f "$marks/flipped/$i.json.now" ] && [[ " ${unfinished[*]} " != *" $i "* ]] &&
            same_meaning "$marks/flipped/$i.json"; then
            fault flipped-without-a-change
            continue
        fi
        expected_left+=("$i")
    done
    if [ "${unfinished[*]}" != "${expected_left[*]}" ]; then
        fail "status names shards [${unfinished[*]}] unfinished; unfinished are [${expected_left[*]}]"
    fi
    if [ ${#unfinished[@]} -gt 0 ]; then
        run_step "$logs/merge-early" "$bin" merge "$run/shards"
        [ "$rc" = 3 ] && [ ! -s "$logs/merge-early.out" ] ||
            fail "a merge with shards missing exited $rc and printed '$(cat "$logs/merge-early.out")'"
    fi
    for i in "${unfinished[@]}"; do
        while [ "$(jobs -rp | wc -l)" -ge 2 ]; do wait -n; done
        (shard=$i rerun "$i") 2>>"$logs/shell.err" &
    done
    wait
    status_step status-2 || return
    [ ${#unfinished[@]} = 0 ] || fail "after the reruns, status still names [${unfinished[*]}]"
    grep -q '"complete":true' "$logs/status-2.out" || fail "status does not say complete"
    [ "$rc" = 0 ] || fail "status after the reruns exited $rc: $(grep -o '"message":"[^"]*"' "$logs/status-2.out" | head -n 3)"
    run_step "$logs/merge" "$bin" merge "$run/shards"
    local total
    total=$(cat "$logs/merge.out" 2>/dev/null)
    if [ "$rc" = 0 ] && [ "$total" = "${known[$n]}" ]; then
        echo "exact" >>"$scratch/merges"
        echo "chaos: round $round: status named ${#expected_left[@]} unfinished shards; reran them; merged total $total = A000170($n)"
    else
        fail "merge exited $rc with '$total' (A000170($n) = ${known[$n]}): $(last_words "$logs/merge")"
    fi
}

# rerun S: the shard's count again, as a rerun line runs it. It must say how much it resumed
# (no less than its checkpoint held when killed) and, for another version's checkpoint, say
# so; a checkpoint or result it refuses as damaged must be one this script flipped, and is
# moved aside.
rerun() {
    local i=$1 log=$logs/rerun-$1
    # shellcheck disable=SC2046
    run_step "$log" "$bin" $(count_cmd "$i")
    local flipped=$marks/flipped/$i.ckpt
    if [ "$rc" != 0 ] && said "$log" 'unusable.*move it away'; then
        rm -f "$marks/saved/$i"
        set_aside "$i" checkpoint ckpt "$(ckpt_of "$i")"
    elif [ -f "$flipped.now" ]; then
        if same_meaning "$flipped" ckpt; then
            fault flipped-without-a-change
        else
            fail "shard $i's checkpoint, with a flipped bit that changes it, was resumed (rc $rc)"
        fi
    fi
    # A result file a rerun will not replace (status named it damaged or foreign).
    if [ "$rc" != 0 ] && said "$log" 'exists and is not a shard result file'; then
        set_aside "$i" result json "$(out_of "$i")"
    fi
    [ "$rc" = 0 ] || { fail "the rerun of shard $i exited $rc: $(last_words "$log")"; return; }
    fault rerun
    check_resumed "$i" "$log"
}

# set_aside S WHAT EXT FILE: shard S's WHAT (checkpoint or result, flipped marks ending in
# EXT), which its rerun refused as damaged, must be one this script flipped; FILE is moved
# aside, as the messages say, and the shard rerun into rerun's LOG.
set_aside() {
    local i=$1 what=$2 ext=$3 file=$4
    if [ -f "$marks/flipped/$i.$ext.now" ]; then
        fault "damaged-$what-refused"
    else
        fail "shard $i's $what was refused as damaged, though no byte of it was flipped: $(last_words "$log")"
    fi
    mkdir -p "$scratch/round-$round/aside"
    mv "$file" "$scratch/round-$round/aside/"
    # shellcheck disable=SC2046
    run_step "$log.again" "$bin" $(count_cmd "$i")
    log=$log.again
}

# check_resumed S LOG: the tasks the rerun found saved are no fewer than the checkpoint held
# after the kill, and another version's checkpoint is named as such.
check_resumed() {
    local i=$1 log=$2 saved kept=0 left all
    saved=$(cat "$marks/saved/$i" 2>/dev/null)
    read -r left all < <(sed -n "s/.*resuming from '.*': \([0-9]*\) of \([0-9]*\) tasks left.*/\1 \2/p" "$log.err")
    [ -n "${all:-}" ] && kept=$((all - left))
    if [ -n "$saved" ] && [ "$kept" -lt "$saved" ]; then
        fail "LOST WORK: shard $i's checkpoint held $saved tasks after the kill; the rerun resumed $kept"
    fi
    if [ -f "$marks/other/$i" ] && [ "$kept" -gt 0 ] &&
        ! said "$log" "written by nqueens $other_version"; then
        fail "the rerun of shard $i resumed nqueens $other_version's checkpoint without saying so"
    fi
}

# verdict SECONDS: the faults by kind and whether every merge was exact; the exit status.
verdict() {
    failures=$(wc -l <"$scratch/failures" 2>/dev/null || echo 0)
    local exact
    exact=$(wc -l <"$scratch/merges" 2>/dev/null || echo 0)
    local disk_note=
    [ "$(tally disk-unavailable)" -gt 0 ] && disk_note=" (no small disk could be mounted in $(tally disk-unavailable) rounds)"
    local version_note=
    [ -z "$other" ] && version_note=" (left out: $other_why)"
    echo "chaos: faults injected: kill -9 $(tally kill9) ($(tally kill9-during-a-save) during a save)," \
        "SIGTERM $(tally sigterm)," \
        "duplicate submissions $(tally duplicate) ($(tally duplicate-refused) refused by the lock)," \
        "full disk $(tally disk-full)$disk_note ($(tally stopped-by-full-disk) runs stopped by it)," \
        "flipped bytes $(($(tally flipped-checkpoint) + $(tally flipped-result))) ($(tally flipped-checkpoint) in checkpoints, $(tally damaged-checkpoint-refused) refused on resume; $(tally damaged-result-refused) results not replaced by a rerun, moved aside; $(tally flipped-without-a-change) changed no value and were read as the same file)," \
        "another version $(($(tally checkpoint-of-another-version) + $(tally resumed-by-another-version)))$version_note," \
        "stale temporary files $(tally stale-temp), deleted results $(tally deleted-result);" \
        "kills and signals that came after the shard finished: $(($(tally kill9-came-too-late) + $(tally sigterm-came-too-late))), after its result was written: $(($(tally kill9-after-the-result) + $(tally sigterm-after-the-result)));" \
        "reruns $(tally rerun)"
    if [ "$failures" = 0 ] && [ "$exact" = "$rounds" ]; then
        echo "chaos: PASS: seed $seed, $rounds rounds in $1 s: every merged total equals A000170, nothing lost, no panic, no hang"
        return 0
    fi
    echo "chaos: FAIL: seed $seed, $rounds rounds in $1 s: $exact of $rounds merges exact, $failures failures:"
    sed 's/^/chaos:   /' "$scratch/failures" 2>/dev/null | head -n 20
    exit 1
}
