// The batch's work counters (STAT_*, then each tree level's LEVEL_*, two words each), then
// each join's row of results (RESULT_* words): the host reads both back once per batch, in
// one copy. 64-bit values are two words, low first, added to with atomics: the invocation
// whose add wraps the low word carries. `join_sizes` zeroes the counters and the rows'
// sums (plan.wgsl), so no clear waits before the batch's kernels.

@group(0) @binding(RESULTS_BINDING) var<storage, read_write> results: array<atomic<u32>>;

// Adds the 64-bit `v` to the value at words (at, at + 1).
fn add64_at(at: u32, v: vec2<u32>) {
    if ((v.x | v.y) == 0u) {
        return;
    }
    let old = atomicAdd(&results[at], v.x);
    let carry = select(0u, 1u, old + v.x < old);
    if (v.y + carry != 0u) {
        atomicAdd(&results[at + 1u], v.y + carry);
    }
}

// The first word of join j's row.
fn row(j: u32) -> u32 {
    return STATS_WORDS + j * RESULT_WORDS;
}

// Adds v to work counter `slot` (STAT_*, 64 bits; callers add once per workgroup).
fn stat_add(slot: u32, v: u32) {
    add64_at(p.result_stats + 2u * slot, vec2<u32>(v, 0u));
}

// Raises peak counter `slot` (a STAT_*_PEAK, its low word) to v.
fn stat_max(slot: u32, v: u32) {
    if (v != 0u) {
        atomicMax(&results[p.result_stats + 2u * slot], v);
    }
}

// Raises the second peak a peak counter `slot` keeps, in its high word, to v.
fn stat_max_high(slot: u32, v: u32) {
    if (v != 0u) {
        atomicMax(&results[p.result_stats + 2u * slot + 1u], v);
    }
}

// The slot of counter `kind` (LEVEL_*) of tree level `level`.
fn level_stat(level: u32, kind: u32) -> u32 {
    return STAT_LEVELS + level * LEVEL_STATS + kind;
}
