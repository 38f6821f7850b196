# shellcheck shell=bash
# The faults of scripts/chaos.sh: one round's plan, drawn from the seed, and each shard's
# scenario. A scenario leaves, for the checks that follow: done/S (the shard's result file is
# there and intact), saved/S (tasks its checkpoint held when its last run was killed),
# other/S (another version wrote its checkpoint last), and flipped/S.ckpt.{was,now} or
# flipped/S.json.{was,now} (the shard's checkpoint or result before and after a bit of it was
# flipped on purpose).

# Shard scenarios and how often each is drawn (out of the sum).
kinds=(none kill9 sigterm duplicate flip version stale-temp deleted)
weights=(26 18 10 10 10 10 8 8)

# The shard's own files.
ckpt_of() { echo "$run/checkpoints/shard-$1.ckpt"; }
out_of() { echo "$run/shards/shard-$1.json"; }
# count_cmd S: this shard's count, as a job script would run it (a save every 5 ms so that
# kills land during saves too).
count_cmd() {
    echo count "$n" -e "$engine" -j1 --shard "$1/$k" --checkpoint "$(ckpt_of "$1")" \
        --out "$(out_of "$1")" --checkpoint-every 0.005
}

# run_round R: one round, from the plan to the merge.
run_round() {
    round=$1
    draw 4; n=$((14 + r))
    draw 29; k=$((12 + r))
    local engines=(mirror symmetry mitm)
    draw 3; engine=${engines[$r]}
    # Mirror at N = 17 takes a minute of CPU per round; the other engines count it.
    [ "$n" = 17 ] && [ "$engine" = mirror ] && engine=symmetry
    draw 3; local with_disk=$((r == 0))
    run=$scratch/round-$round/run
    logs=$scratch/round-$round/logs
    marks=$scratch/round-$round/marks
    mkdir -p "$run" "$logs" "$marks"/{done,saved,other,flipped}
    disk_kind=none
    if [ "$with_disk" = 1 ] && ! mount_disk "$run"; then
        echo "chaos: round $round: no small disk could be mounted (not root?): no disk fault"
        echo "disk-unavailable" >>"$scratch/faults"
    fi
    mkdir -p "$run/shards" "$run/checkpoints"
    plan_faults
    echo "chaos: round $round: N=$n K=$k engine=$engine disk=$disk_kind; shards: $(summary)"
    fault_phase
    user_flow
    unmount_disk
}

# plan_faults: per shard, a scenario and its draws (delays in thousandths of the time a shard
# takes, a byte's place in thousandths, a bit, a variant).
plan_faults() {
    local i total=0 w
    for w in "${weights[@]}"; do total=$((total + w)); done
    plan_kind=() plan_delay=() plan_place=() plan_bit=() plan_variant=()
    for i in $(seq 0 $((k - 1))); do
        draw "$total"
        local pick=$r j=0
        while [ "$pick" -ge "${weights[$j]}" ]; do pick=$((pick - weights[j])); j=$((j + 1)); done
        [ "$i" = 0 ] && j=0
        plan_kind[i]=${kinds[$j]}
        draw 1200; plan_delay[i]=$r
        draw 1000; plan_place[i]=$r
        draw 8; plan_bit[i]=$r
        draw 2; plan_variant[i]=$r
    done
    draw 1000; fill_at=$r
    draw 500; fill_hold=$((100 + r))
}

summary() {
    local kind c out=
    for kind in "${kinds[@]}"; do
        c=0
        for x in "${plan_kind[@]}"; do [ "$x" = "$kind" ] && c=$((c + 1)); done
        [ "$c" -gt 0 ] && out+="$kind $c, "
    done
    echo "${out%, }"
}

# fault_phase: shard 0 alone (it times a shard), then the others three at a time, with the
# disk filling at a drawn instant while they run.
fault_phase() {
    now_ms
    local t0=$ms i filler=
    shard=0 scenario 0 2>>"$logs/shell.err"
    now_ms
    shard_ms=$((ms - t0 + 1))
    if [ "$disk_kind" != none ]; then
        local at=$((fill_at * shard_ms * (k - 1) / 3 / 1000))
        (sleep_ms "$at" && fill_disk "$run" "$fill_hold") &
        filler=$!
        fault disk-full
    fi
    for i in $(seq 1 $((k - 1))); do
        while [ "$(jobs -rp | wc -l)" -ge 4 ]; do wait -n; done
        (shard=$i scenario "$i") 2>>"$logs/shell.err" &
    done
    wait
    [ -z "$filler" ] || wait "$filler" 2>/dev/null
}

# scenario S: shard S's fault, from the plan.
scenario() {
    local i=$1 kind=${plan_kind[$1]}
    local delay=$((plan_delay[$1] * ${shard_ms:-200} / 1000))
    local log=$logs/s$i
    case $kind in
        none) clean_run "$i" "$log" ;;
        kill9 | sigterm) stop_run "$i" "$log" "$kind" "$delay" "$bin" ;;
        duplicate) duplicate_run "$i" "$log" ;;
        flip) flip_run "$i" "$log" "$delay" ;;
        version) version_run "$i" "$log" "$delay" ;;
        stale-temp) stale_run "$i" "$log" ;;
        deleted) deleted_run "$i" "$log" ;;
    esac
}

# judge S LOG [EXPECTED...]: what the step's exit says. 0 marks the shard done; a full disk
# (during a disk fault) and the EXPECTED outcomes pass; anything else is a failure.
judge() {
    local i=$1 log=$2
    shift 2
    case $rc in
        0) touch "$marks/done/$i"; rm -f "$marks/saved/$i"; return 0 ;;
        124) return 1 ;;
    esac
    local e
    for e in "$@"; do
        case $e:$rc in
            sigterm:130) said "$log" 'interrupted; progress saved to' && return 0 ;;
            # Before the handler is installed (the first instants) SIGTERM ends the process
            # as it would any program; it had not saved, so nothing is lost.
            sigterm:143) [ ! -s "$log.err" ] && fault sigterm-before-the-handler && return 0 ;;
            locked:1) said "$log" 'in use by another nqueens process' && return 0 ;;
            killed:137) return 0 ;;
        esac
    done
    # A full disk (during a disk fault) stops a run with 1, or with 130 where a SIGTERM came
    # and its save then failed on the full disk (the last good checkpoint kept).
    if [ "$disk_kind" != none ] && { [ "$rc" = 1 ] || [ "$rc" = 130 ]; } &&
        said "$log" 'No space left on device|cannot write|saving the checkpoint'; then
        fault stopped-by-full-disk
        return 0
    fi
    fail "'$(basename "$log")' exited $rc: $(last_words "$log")"
    return 1
}

clean_run() {
    # shellcheck disable=SC2046
    run_step "$2" "$bin" $(count_cmd "$1")
    judge "$1" "$2"
}

# stop_run S LOG KIND DELAY BINARY: the shard's run is sent KIND after DELAY ms; what its
# checkpoint then holds is what a rerun must resume from.
stop_run() {
    local i=$1 log=$2 kind=$3 signal=KILL
    [ "$kind" = sigterm ] && signal=TERM
    rm -f "$marks/done/$i"
    # shellcheck disable=SC2046
    spawn "$log" "$5" $(count_cmd "$i")
    sleep_ms "$4"
    if kill -s "$signal" "$pid" 2>/dev/null; then
        await "$pid" "$log"
        if [ "$rc" = 0 ]; then
            judge "$i" "$log"
            return
        fi
        fault "$kind"
        if compgen -G "$run/checkpoints/.shard-$i.ckpt.*.tmp" >/dev/null; then
            fault "$kind-during-a-save"
        fi
        judge "$i" "$log" killed sigterm || return
        # Killed after it wrote its result (renamed into place whole), on its way out: done.
        if [ -f "$(out_of "$i")" ]; then
            touch "$marks/done/$i"
            fault "$kind-after-the-result"
            return
        fi
        local saved
        saved=$(grep -o '"tasks_done":[0-9]*' "$(ckpt_of "$i")" 2>/dev/null | cut -d: -f2)
        echo "${saved:-0}" >"$marks/saved/$i"
    else
        await "$pid" "$log"
        judge "$i" "$log"
        fault "$kind-came-too-late"
    fi
}

# duplicate_run S LOG: the same shard submitted twice at once: one runs, the other is
# refused by the checkpoint's lock, or (if the first was over by then) resumes its finished
# checkpoint.
duplicate_run() {
    local i=$1 log=$2 a b rc_a
    fault duplicate
    # shellcheck disable=SC2046
    spawn "$log.a" "$bin" $(count_cmd "$i")
    a=$pid
    # shellcheck disable=SC2046
    spawn "$log.b" "$bin" $(count_cmd "$i")
    b=$pid
    await "$a" "$log.a"
    rc_a=$rc
    judge "$i" "$log.a" locked
    await "$b" "$log.b"
    judge "$i" "$log.b" locked
    if [ "$rc_a" = 0 ] && [ "$rc" = 0 ] &&
        ! said "$log.a" 'resuming from .*: 0 of' && ! said "$log.b" 'resuming from .*: 0 of'; then
        fail "both copies of shard $i counted it from the start at once"
    fi
    if said "$log.a" 'in use by another' || said "$log.b" 'in use by another'; then
        fault duplicate-refused
    fi
    # A refused copy exits 1 after the other finished; the shard is done if either was.
    if [ "$rc_a" = 0 ] || [ "$rc" = 0 ]; then touch "$marks/done/$i"; fi
}

# flip_run S LOG DELAY: a byte of the shard's checkpoint (killed part-way) or of its finished
# result file flipped; the first must be refused on resume, the second by status and merge.
flip_run() {
    local i=$1 log=$2
    if [ "${plan_variant[$i]}" = 0 ]; then
        stop_run "$i" "$log" kill9 "$3" "$bin"
        [ -f "$marks/done/$i" ] && return
        [ -f "$(ckpt_of "$i")" ] || return
        flip_byte "$(ckpt_of "$i")" "${plan_place[$i]}" "${plan_bit[$i]}" \
            "$marks/flipped/$i.ckpt" || return
        fault flipped-checkpoint
    else
        clean_run "$i" "$log" || return
        flip_byte "$(out_of "$i")" "${plan_place[$i]}" "${plan_bit[$i]}" \
            "$marks/flipped/$i.json" || return
        rm -f "$marks/done/$i"
        fault flipped-result
    fi
}

# version_run S LOG DELAY: the other version starts the shard and is killed (this one
# resumes it in the reruns), or this one starts it and the other version resumes it.
version_run() {
    local i=$1 log=$2
    if [ -z "$other" ]; then
        clean_run "$i" "$log"
        fault version-left-out
        return
    fi
    if [ "${plan_variant[$i]}" = 0 ]; then
        stop_run "$i" "$log" kill9 "$3" "$other"
        [ -f "$marks/done/$i" ] || touch "$marks/other/$i"
        fault checkpoint-of-another-version
    else
        stop_run "$i" "$log" kill9 "$3" "$bin"
        [ -f "$marks/done/$i" ] && return
        # shellcheck disable=SC2046
        run_step "$log.other" "$other" $(count_cmd "$i")
        judge "$i" "$log.other" || return
        if [ "$rc" = 0 ] && [ -s "$marks/saved/$i" ] && [ "$(cat "$marks/saved/$i")" -gt 0 ] &&
            ! said "$log.other" "written by nqueens $version"; then
            fail "nqueens $other_version resumed shard $i without saying it was written by $version"
        fi
        fault resumed-by-another-version
    fi
}

# stale_run S LOG: temporary files of an interrupted write left beside the shard's files.
stale_run() {
    local i=$1
    echo "half a checkpoint" >"$run/checkpoints/.shard-$i.ckpt.Xc4h1z.tmp"
    echo '{"schema":"nqueens.shard/2","n":' >"$run/shards/.shard-$i.json.q9Zr2k.tmp"
    fault stale-temp
    clean_run "$i" "$2"
}

# deleted_run S LOG: the shard's result file deleted after it finished (and, one time in
# two, its checkpoint too).
deleted_run() {
    local i=$1
    clean_run "$i" "$2" || return
    rm -f "$(out_of "$i")" "$marks/done/$i"
    [ "${plan_variant[$i]}" = 1 ] && rm -f "$(ckpt_of "$i")"
    fault deleted-result
}
