// The half join: each job pairs a run of north quarter words with a run of south ones (one
// column split and class of a half); a pair is a half when its words are disjoint and avoid
// the job's forbidden bits, and its key is their OR with the job's extra bits. Work items
// are (job, north word, tile of south words). `count_pairs` writes each item's number of
// halves; once those are scanned into offsets, `write_pairs` writes the keys of a range of
// items in item order, which is the CPU's order: north word by north word.

struct GenParams {
    // Items in this dispatch, from `first`.
    items: u32,
    // Jobs in the job list.
    jobs: u32,
    // South words per tile.
    tile: u32,
    // The offset (after the scan) of item `first`: where this range's keys start.
    base: u32,
    // The first item of the range.
    first: u32,
    // Where the item counts start in `scan`.
    counts: u32,
    pad0: u32,
    pad1: u32,
}

struct Job {
    north: u32,
    north_len: u32,
    south: u32,
    south_len: u32,
    forbid: vec2<u32>,
    extra: vec2<u32>,
    exact_mask: vec2<u32>,
    exact_bits: vec2<u32>,
    // The job's first item, and its tiles of south words.
    first_item: u32,
    tiles: u32,
    pad0: u32,
    pad1: u32,
}

@group(0) @binding(0) var<uniform> p: GenParams;
@group(0) @binding(1) var<storage, read> words: array<vec2<u32>>;
@group(0) @binding(2) var<storage, read> jobs: array<Job>;
@group(0) @binding(3) var<storage, read_write> scan: array<u32>;
@group(0) @binding(4) var<storage, read_write> keys: array<vec2<u32>>;

// The job holding `item`: the last whose first item is not above it.
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

// The key of north word n and south word s under job j, and whether it is a half.
fn half(n: vec2<u32>, s: vec2<u32>, j: Job) -> vec3<u32> {
    let key = n | s | j.extra;
    let ok = disjoint(n | j.forbid, s) && all((key & j.exact_mask) == j.exact_bits);
    return vec3<u32>(key, select(0u, 1u, ok));
}

// Item `item`'s job, north word and first and last south words.
fn item_span(item: u32) -> vec4<u32> {
    let jid = find_job(item);
    let j = jobs[jid];
    let local = item - j.first_item;
    let ni = local / j.tiles;
    let s0 = (local % j.tiles) * p.tile;
    let s1 = min(s0 + p.tile, j.south_len);
    return vec4<u32>(jid, j.north + ni, j.south + s0, j.south + s1);
}

@compute @workgroup_size(256)
fn count_pairs(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let i = flat_group(wg) * 256u + li;
    if (i >= p.items) {
        return;
    }
    let item = p.first + i;
    let span = item_span(item);
    let j = jobs[span.x];
    let n = words[span.y];
    var kept = 0u;
    if (disjoint(n, j.forbid)) {
        for (var s = span.z; s < span.w; s = s + 1u) {
            kept = kept + half(n, words[s], j).z;
        }
    }
    scan[p.counts + item] = kept;
}

@compute @workgroup_size(256)
fn write_pairs(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let i = flat_group(wg) * 256u + li;
    if (i >= p.items) {
        return;
    }
    let item = p.first + i;
    let span = item_span(item);
    let j = jobs[span.x];
    let n = words[span.y];
    if (!disjoint(n, j.forbid)) {
        return;
    }
    var out = scan[p.counts + item] - p.base;
    for (var s = span.z; s < span.w; s = s + 1u) {
        let h = half(n, words[s], j);
        if (h.z == 1u) {
            keys[out] = h.xy;
            out = out + 1u;
        }
    }
}
