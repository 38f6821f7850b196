// The half join of a batch: each job pairs a run of north quarter words with a run of south
// ones (one column split and class of one side of one join); a pair is a half when its words
// are disjoint and avoid the side's forbidden bits, and its key is their OR with the job's
// extra bits. Work items are (job, north word, tile of south words), numbered across every
// job of the batch. `count_pairs` writes each item's number of halves; once those are
// scanned into offsets and each job's destination is known (`job_dest`), `write_pairs`
// writes the keys in item order, which is the CPU's order: north word by north word, and
// counts the pairs it tested (STAT_PAIRS_WRITTEN: a portion's items outside its range test
// none).

@group(0) @binding(0) var<uniform> p: Batch;
// Quarter words: those the batch carries, and those resident on the GPU for the whole run.
@group(0) @binding(1) var<storage, read> carried: array<vec2<u32>>;
@group(0) @binding(2) var<storage, read> resident: array<vec2<u32>>;
@group(0) @binding(3) var<storage, read> jobs: array<Job>;
@group(0) @binding(4) var<storage, read> sides: array<Side>;
@group(0) @binding(5) var<storage, read_write> scan: array<u32>;
@group(0) @binding(6) var<storage, read_write> stored: array<vec2<u32>>;
@group(0) @binding(7) var<storage, read_write> queries: array<vec2<u32>>;
@group(0) @binding(8) var<storage, read_write> ties: array<vec2<u32>>;

// Quarter word `at`: carried by the batch where it is marked so, else resident.
fn word(at: u32) -> vec2<u32> {
    if ((at & CARRIED) != 0u) {
        return carried[at & ~CARRIED];
    }
    return resident[at];
}

// The job holding `item`: the last whose first item is not above it (the job list ends
// with an empty job whose first item is the number of items).
fn find_job(item: u32) -> u32 {
    var lo = 0u;
    var hi = p.jobs;
    loop {
        if (hi - lo <= 1u) {
            break;
        }
        let mid = (lo + hi) / 2u;
        if (jobs[mid].first_item <= item) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    return lo;
}

// x shifted left by b bits (below 64) into 64.
fn shl64(x: u32, b: u32) -> vec2<u32> {
    if (b == 0u) {
        return vec2<u32>(x, 0u);
    }
    if (b >= 32u) {
        return vec2<u32>(0u, x << (b - 32u));
    }
    return vec2<u32>(x << b, x >> (32u - b));
}

// The bits every key of job j of side d carries: the side's, the job's tag and class.
fn job_extra(j: Job, d: Side) -> vec2<u32> {
    let tag = shl64(extractBits(j.side_tag, JOB_SIDE_BITS, JOB_TAG_BITS), d.tag_at);
    let cls = shl64(j.side_tag >> JOB_CLASS_SHIFT, CLASS_SHIFT);
    return d.extra | tag | cls;
}

// The key of north word n and south word s under a job of side d whose keys carry `extra`,
// and whether it is a half.
fn half(n: vec2<u32>, s: vec2<u32>, extra: vec2<u32>, d: Side) -> vec3<u32> {
    let key = n | s | extra;
    let ok = disjoint(n | d.forbid, s) && all((key & d.exact_mask) == d.exact_bits);
    return vec3<u32>(key, select(0u, 1u, ok));
}

// Item `item`'s job, north word and first and last south words.
fn item_span(item: u32) -> vec4<u32> {
    let jid = find_job(item);
    let j = jobs[jid];
    let tiles = (j.south_len + p.tile - 1u) / p.tile;
    let local = item - j.first_item;
    let ni = local / tiles;
    let s0 = (local % tiles) * p.tile;
    let s1 = min(s0 + p.tile, j.south_len);
    return vec4<u32>(jid, j.north + ni, j.south + s0, j.south + s1);
}

@compute @workgroup_size(GROUP_SIZE)
fn count_pairs(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let item = flat_group(wg) * GROUP_SIZE + li;
    if (item == p.items) {
        // The closing zero the scan of the counts ends with, their total (the host sizes
        // this dispatch for items + 1).
        scan[p.items_at + item] = 0u;
    }
    if (item >= p.items) {
        return;
    }
    let span = item_span(item);
    let j = jobs[span.x];
    let d = sides[j.side_tag & JOB_SIDE_MASK];
    let extra = job_extra(j, d);
    let n = word(span.y);
    var kept = 0u;
    if (disjoint(n, d.forbid)) {
        for (var s = span.z; s < span.w; s = s + 1u) {
            kept = kept + half(n, word(s), extra, d).z;
        }
    }
    scan[p.items_at + item] = kept;
}

// Pairs this workgroup's write pass tested, for the work counters.
var<workgroup> written: atomic<u32>;

@compute @workgroup_size(GROUP_SIZE)
fn write_pairs(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    if (li == 0u) {
        atomicStore(&written, 0u);
    }
    workgroupBarrier();
    let item = flat_group(wg) * GROUP_SIZE + li;
    if (item < p.items) {
        atomicAdd(&written, write_item(item));
    }
    workgroupBarrier();
    if (li == 0u) {
        stat_add(STAT_PAIRS_WRITTEN, atomicLoad(&written));
    }
}

// Writes the keys of work item `item` that its job keeps; returns the pairs it tested (none
// where its job keeps none of its keys: a portion's items outside its range).
fn write_item(item: u32) -> u32 {
    let span = item_span(item);
    let j = jobs[span.x];
    let at = p.dest_at + DEST_WORDS * span.x;
    let dest = scan[at];
    let arena = dest >> DEST_SHIFT;
    // The job's keys from `skip` on, `keep` of them, are written from `dest`'s offset.
    let skip = scan[at + 1u];
    let keep = scan[at + 2u];
    // This item's first key within its job, and past its last.
    var k = scan[p.items_at + item] - scan[p.items_at + j.first_item];
    let k_end = scan[p.items_at + item + 1u] - scan[p.items_at + j.first_item];
    let past = k >= skip && k - skip >= keep;
    if (arena == DEST_NONE || k_end <= skip || past) {
        return 0u;
    }
    let d = sides[j.side_tag & JOB_SIDE_MASK];
    let extra = job_extra(j, d);
    let n = word(span.y);
    if (!disjoint(n, d.forbid)) {
        return 0u;
    }
    let base = dest & DEST_OFFSET;
    for (var s = span.z; s < span.w; s = s + 1u) {
        let h = half(n, word(s), extra, d);
        if (h.z == 1u) {
            if (k >= skip && k - skip < keep) {
                let out = base + k - skip;
                if (arena == DEST_STORED) {
                    stored[out] = h.xy;
                } else if (arena == DEST_QUERIES) {
                    queries[out] = h.xy;
                } else {
                    ties[out] = h.xy;
                }
            }
            k = k + 1u;
        }
    }
    return span.w - span.z;
}
