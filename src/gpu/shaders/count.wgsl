// The block count: each workgroup takes the next ROUTES routes (block by block, as the
// routes lie), loads each block's tables into workgroup memory in turn, and counts for each
// of its routed queries the keys it shares no bit with: 16 invocations per query (a
// half-warp), each ANDing one 32-key word of the query's entry in every chunk. Routes are
// read STAGE at a time into workgroup memory, one per invocation. The loop over a stage's
// routes is generated for each chunk count and weighing mode, unrolled (`visit`, appended
// from src/gpu/shader.rs) and chosen once per block.
//
// Weights. A key's weight is its class's stored weight times its query's class's weight;
// the classes partition a block's keys, so the table build picks per block the cheapest of
// four modes (tables.wgsl, `weighing`), and a visit costs one popcount more than its hits
// at most:
//   plain:     one stored weight, one query weight: weighted = W·hits, per block;
//   exception: two stored weights, one query weight: the keys of the second weight are a
//              set X (a word per invocation, in a register), weighted = W·(hits − x) + E·x
//              with x the hits in X;
//   queries:   one stored weight, the queries' weights by class: each visit adds its hits
//              times its query's weight, read from a packed word with extractBits (never a
//              dynamic vector index);
//   general:   anything else (three or more stored weights, or both sides weighted): the
//              four class sets, one popcount each (a run-time chunk loop: only small even N
//              meet it).
//
// Sums. An invocation's routes are those r ≡ lo + its half-warp (mod 16) of the
// workgroup's ROUTES: at most ROUTES / 16 = 128 visits, each of at most 32 hits, so its
// hits stay below 2^12 + 1, and with weights of at most 255 each (the host checks) its
// weighted sum below 128 · 32 · 255 · 255 < 2^28: u32 counters are exact. They are
// widened when the workgroup adds them up in 64 bits, into its fill's results row: at the
// end, and wherever its blocks pass from one fill of the batch to the next.
//
// Bank swizzle. Tables lie in row pairs: chunks 2k and 2k + 1 share 32 rows of 32 words,
// entry m of chunk 2k in words 0..15 of row m (banks 0..15), of chunk 2k + 1 in words
// 16..31 (banks 16..31). The two half-warps of a warp work on different queries, so their
// entries differ; to keep them on different banks the odd half-warp reads chunk 2k + 1
// where the even one reads chunk 2k, and the other way round: its routes are written with
// each pair's chunks exchanged (route.wgsl, `swizzle`, on odd route slots: the odd
// half-warps' routes), and it reads word 16 + lane where the even one reads lane (`l0`,
// `l1`). A last chunk without a pair is written to both halves of its rows (tables.wgsl).

@group(0) @binding(0) var<uniform> p: Batch;
// binding 1: `results` (results.wgsl): each fill's weighted count and hits.
@group(0) @binding(2) var<storage, read> fills: array<Fill>;
@group(0) @binding(3) var<storage, read> tables: array<u32>;
@group(0) @binding(4) var<storage, read> info: array<vec4<u32>>;
@group(0) @binding(5) var<storage, read> scan: array<u32>;
@group(0) @binding(6) var<storage, read> routes: array<vec2<u32>>;

// One block's chunk tables; between fills, the workgroup's sums.
var<workgroup> t: array<u32, CHUNK_WORDS>;
// Where the STAGE routes a workgroup reads at once (one per invocation) are read to:
// routes are read once each, from memory, and a half-warp reading its own would wait on
// each in turn (on an H200 the count ran 2.6 times slower so than from L2).
var<workgroup> staged: array<vec2<u32>, STAGE>;

// Loop limit. A software driver stops loops after 65,535 rounds, silently (lavapipe: it
// counts more than one invocation's rounds, src/gpu/shader.rs `ROUTES_PER_GROUP`). There
// (VISIT_TALLY = 1) each invocation counts the routes it visits in the visit loops
// themselves, and a workgroup one of whose invocations visited fewer than its share marks
// every fill its routes reach stopped (`mark_stopped`, generated without a loop): the host
// runs each of their joins again alone in a batch (where it was with others: a workgroup
// that meets many small fills' blocks may be stopped whoever they are), and cuts one
// stopped alone. A flag set on the loop's way out would show nothing: the
// compiler knows every exit of the loop sets it. On a GPU, VISIT_TALLY is 0 and the tally
// costs nothing.
var<private> visits: u32;
var<workgroup> stopped: atomic<u32>;

// The block holding route r: the last of the `n` blocks whose first route is not after r.
fn block_of(r: u32, n: u32) -> u32 {
    var lo = 0u;
    var hi = n;
    loop {
        if (hi - lo <= 1u) {
            break;
        }
        let mid = (lo + hi) / 2u;
        if (scan[p.block_routes_at + mid] <= r) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    return lo;
}

// The general mode: the invocation's (hits, weighted) over the staged routes j0, j0 + 16,
// … < n of a block of `chunks` chunks whose class sets start at tables[at + CLASS_SETS].
fn visit_general(
    chunks: u32,
    j0: u32,
    n: u32,
    l0: u32,
    l1: u32,
    at: u32,
    desc: vec4<u32>,
    wts: vec4<u32>,
) -> vec2<u32> {
    let s = vec4<u32>(
        tables[at + CLASS_SETS],
        tables[at + CLASS_SETS + 16u],
        tables[at + CLASS_SETS + 32u],
        tables[at + CLASS_SETS + 48u],
    );
    var h = 0u;
    var a = 0u;
    for (var j = j0; j < n; j = j + 16u) {
        let q = staged[j];
        var w = 0xffffffffu;
        for (var c = 0u; c < chunks; c = c + 1u) {
            let m = chunk5(q, c);
            w = w & t[(c >> 1u) * PAIR_WORDS + m * 32u + select(l0, l1, (c & 1u) == 1u)];
        }
        let k = countOneBits(vec4<u32>(w) & s);
        h = h + countOneBits(w);
        visits = visits + VISIT_TALLY;
        a = a + (k.x * wts.x + k.y * wts.y + k.z * wts.z + k.w * wts.w)
            * extractBits(desc.z, (q.y >> 27u) & 24u, 8u);
    }
    return vec2<u32>(h, a);
}

// Adds the workgroup's sums (each invocation's `weighted` and `hits`) to fill `fid`'s
// results row, in 64 bits, summed in t (its last table read first).
fn flush(li: u32, fid: u32, weighted: u32, hits: u32) {
    workgroupBarrier();
    t[4u * li] = weighted;
    t[4u * li + 1u] = 0u;
    t[4u * li + 2u] = hits;
    t[4u * li + 3u] = 0u;
    workgroupBarrier();
    for (var stride = GROUP_SIZE / 2u; stride > 0u; stride = stride / 2u) {
        if (li < stride) {
            let x = 4u * li;
            let y = 4u * (li + stride);
            let a = add64v(vec2<u32>(t[x], t[x + 1u]), vec2<u32>(t[y], t[y + 1u]));
            let h = add64v(vec2<u32>(t[x + 2u], t[x + 3u]), vec2<u32>(t[y + 2u], t[y + 3u]));
            t[x] = a.x;
            t[x + 1u] = a.y;
            t[x + 2u] = h.x;
            t[x + 3u] = h.y;
        }
        workgroupBarrier();
    }
    if (li == 0u) {
        add64_at(row(fid) + RESULT_WEIGHTED, vec2<u32>(t[0], t[1]));
        add64_at(row(fid) + RESULT_HITS, vec2<u32>(t[2], t[3]));
    }
    workgroupBarrier();
}

@compute @workgroup_size(GROUP_SIZE)
fn count(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let g = flat_group(wg);
    let lo = g * ROUTES;
    let hi = min(lo + ROUTES, min(scan[HEAD_ROUTES], p.route_cap));
    let n = scan[HEAD_BLOCKS];
    let lane = li & 15u;
    let half = li >> 4u;
    // This invocation's word of an even chunk's entry and of an odd one's (the swizzle).
    let l0 = lane | ((half & 1u) << 4u);
    let l1 = l0 ^ 16u;
    var weighted = 0u;
    var hits = 0u;
    var fid = NO_FILL;
    var b = block_of(lo, n);
    // The fills this workgroup's routes reach, found before any loop could be stopped.
    var fills = vec2<u32>(1u, 0u);
    if (VISIT_TALLY == 1u && lo < hi && b < n) {
        fills = vec2<u32>(info[INFO * b + 1u].y, info[INFO * block_of(hi - 1u, n) + 1u].y);
    }
    if (li == 0u) {
        atomicStore(&stopped, 0u);
    }
    // Blocks whose tables this workgroup loaded: its longest stretch is these loads.
    var loads = 0u;
    // Its visits times their blocks' chunks (each visit reads an entry of every chunk), of
    // fills with no error: the visits a results row counts (a fill past the routes' room
    // has some of its routes counted here, and is cut and joined again).
    var chunk_visits = 0u;
    var live = false;
    loop {
        if (lo >= hi || b >= n) {
            break;
        }
        let start = scan[p.block_routes_at + b];
        if (start >= hi) {
            break;
        }
        let end = scan[p.block_routes_at + b + 1u];
        if (end == start) {
            // A block no query met: passed over without loading its tables.
            b = b + 1u;
            continue;
        }
        let desc = info[INFO * b + 1u];
        // A new fill: the sums so far are the last one's (and the u32 bounds start afresh).
        if (desc.y != fid) {
            if (fid != NO_FILL) {
                flush(li, fid, weighted, hits);
                weighted = 0u;
                hits = 0u;
            }
            fid = desc.y;
            live = (atomicLoad(&results[row(fid) + RESULT_STATUS]) & FILL_ERRORS) == 0u;
        }
        let wts = info[INFO * b + 2u];
        let chunks = desc.x & 0xffu;
        let at = b * TABLE_WORDS;
        workgroupBarrier();
        // Whole row pairs (a last unpaired chunk fills both halves of its rows), four
        // words an invocation a round: a row pair is a whole number of rounds (the host
        // checks).
        let words = (chunks + 1u) / 2u * PAIR_WORDS;
        loads = loads + 1u;
        for (var i = li; i < words; i = i + 4u * GROUP_SIZE) {
            t[i] = tables[at + i];
            t[i + GROUP_SIZE] = tables[at + i + GROUP_SIZE];
            t[i + 2u * GROUP_SIZE] = tables[at + i + 2u * GROUP_SIZE];
            t[i + 3u * GROUP_SIZE] = tables[at + i + 3u * GROUP_SIZE];
        }
        workgroupBarrier();
        // The block's routes, STAGE at a time: each invocation loads one (so a stage's
        // loads are all in flight at once), then each half-warp takes those r ≡ lo + half
        // (mod 16), the j0-th of the stage and every 16th after it.
        let first = max(lo, start);
        let last = min(hi, end);
        chunk_visits = chunk_visits + select(0u, (last - first) * chunks, live);
        let j0 = (lo + half - first) & 15u;
        for (var s = first; s < last; s = s + STAGE) {
            workgroupBarrier();
            if (s + li < last) {
                staged[li] = routes[s + li];
            }
            workgroupBarrier();
            let n = min(last - s, STAGE);
            let v = visit(desc.x >> 8u, chunks, j0, n, l0, l1, at + lane, desc, wts);
            hits = hits + v.x;
            weighted = weighted + v.y;
        }
        b = b + 1u;
    }
    if (fid != NO_FILL) {
        flush(li, fid, weighted, hits);
    }
    if (li == 0u && lo < hi) {
        stat_add(STAT_COUNT_LOADS, loads);
        stat_max(STAT_COUNT_LOADS_PEAK, loads);
        stat_add(STAT_VISIT_CHUNKS, chunk_visits);
    }
    // Each of the workgroup's routes is visited by the 16 invocations of one half-warp.
    let share = select(0u, (hi - lo - half + 15u) / 16u, hi > lo + half);
    if (VISIT_TALLY == 1u && visits != share) {
        atomicStore(&stopped, 1u);
    }
    workgroupBarrier();
    if (atomicLoad(&stopped) == 1u) {
        mark_stopped(fills.x, fills.y, li);
    }
}
