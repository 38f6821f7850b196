// Routing: each query walks its fill's tree. At a node splitting on bit b, the child whose
// keys have b is visited only by a query without b; the other child always. At a leaf, a
// query meets each block whose keys' AND it shares no bit with. `count_routes` counts each
// block's queries (and each fill's tests); once those counts are scanned into
// offsets, `write_routes` writes each block's queries, packed onto the block's mixed bits
// (the query's class in the top two bits; on odd slots each pair of chunks exchanged, the
// block count's bank swizzle, count.wgsl), in no particular order.
//
// One query an invocation, two walks. A walk is a chain of dependent loads (a node, then
// the child it names), so the routing steps last as long as their longest walk: each
// invocation walks one query, once in `count_routes` and once in `write_routes`.
//
// Global atomics. A workgroup gathers the blocks its queries meet in a histogram in
// workgroup memory (a hash table of ROUTE_SLOTS blocks, open addressing): `count_routes`
// adds each block's count to the block's total with one global atomic and keeps the
// histogram (block, slot, count) in `kept`, and `write_routes` puts it back in workgroup
// memory as it was, reserves each block's routes with one global atomic and hands them out
// from workgroup memory as it walks. A block that finds no free slot within ROUTE_PROBES
// counts and reserves route by route with global atomics; a workgroup whose histogram
// finds no room in `kept` walks its queries twice in `write_routes`, first counting them
// again (exact either way; every global atomic made is counted in STAT_ROUTE_ATOMICS).
//
// `kept`: the histograms, in the partition scratch of the tree build (free by now): first
// a header for each of the dispatch's workgroups (where its histogram starts, KEPT_NONE
// where it found no room; its length), then the histograms, each taking its room with one
// global atomic on scan[HEAD_KEPT].

@group(0) @binding(0) var<uniform> p: Batch;
// binding 1: `results` (results.wgsl): each fill's tests, and the work counters.
@group(0) @binding(2) var<storage, read> fills: array<Fill>;
@group(0) @binding(3) var<storage, read> tree: array<vec4<u32>>;
@group(0) @binding(4) var<storage, read> queries: array<vec2<u32>>;
@group(0) @binding(5) var<storage, read> info: array<vec4<u32>>;
@group(0) @binding(6) var<storage, read_write> scan: array<atomic<u32>>;
@group(0) @binding(7) var<storage, read_write> routes: array<vec2<u32>>;
@group(0) @binding(8) var<storage, read_write> kept: array<vec2<u32>>;

const EMPTY: u32 = 0xffffffffu;
// Where a walk ends (tree.wgsl's NONE).
const LAST: u32 = 0xffffffffu;
// A histogram that found no room in `kept`.
const KEPT_NONE: u32 = 0xffffffffu;

// What a walk does at each block met.
const COUNT: u32 = 0u;
const TALLY: u32 = 1u;
const EMIT: u32 = 2u;

// The histogram: each slot's block, its routes (counted up, then handed out down), and
// where its reserved routes start (before and after, the sums of `add_up`); and how many
// slots are taken.
var<workgroup> slot_block: array<atomic<u32>, ROUTE_SLOTS>;
var<workgroup> slot_count: array<atomic<u32>, ROUTE_SLOTS>;
var<workgroup> slot_base: array<u32, ROUTE_SLOTS>;
var<workgroup> taken: atomic<u32>;

// The fill whose queries hold query i.
fn fill_of_query(i: u32) -> u32 {
    var lo = 0u;
    var hi = p.joins;
    loop {
        if (hi - lo <= 1u) {
            break;
        }
        let mid = (lo + hi) / 2u;
        if (fills[mid].queries <= i) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    return lo;
}

fn first_slot(b: u32) -> u32 {
    return (b * 0x9e3779b1u) >> (32u - ROUTE_SLOT_BITS);
}

// Block b's slot in the histogram, taken if it has none; EMPTY where the probed slots are
// all another block's. A slot once taken is never given up, so whoever looks for b later
// (here or in `find`) finds the same slot, or none.
fn take(b: u32) -> u32 {
    var s = first_slot(b);
    var probes = 0u;
    for (var tries = 0u; tries < 2u * ROUTE_PROBES; tries = tries + 1u) {
        let held = atomicLoad(&slot_block[s]);
        if (held == b) {
            return s;
        }
        if (held == EMPTY) {
            let r = atomicCompareExchangeWeak(&slot_block[s], EMPTY, b);
            if (r.exchanged) {
                atomicAdd(&taken, 1u);
                return s;
            }
            if (r.old_value == b) {
                return s;
            }
            if (r.old_value == EMPTY) {
                // Failed spuriously: the same slot again.
                continue;
            }
        }
        probes = probes + 1u;
        if (probes == ROUTE_PROBES) {
            break;
        }
        s = (s + 1u) & (ROUTE_SLOTS - 1u);
    }
    return EMPTY;
}

// Block b's slot, or EMPTY where it has none.
fn find(b: u32) -> u32 {
    var s = first_slot(b);
    for (var probes = 0u; probes < ROUTE_PROBES; probes = probes + 1u) {
        let held = atomicLoad(&slot_block[s]);
        if (held == b || held == EMPTY) {
            return select(EMPTY, s, held == b);
        }
        s = (s + 1u) & (ROUTE_SLOTS - 1u);
    }
    return EMPTY;
}

// Chunks 2k and 2k + 1 of a packed word exchanged, for the first `pairs` pairs (≤ 3).
fn swap_pairs(v: u32, pairs: u32) -> u32 {
    let even = 0x01f07c1fu & ((1u << (10u * pairs)) - 1u);
    let odd = even << 5u;
    return (v & ~(even | odd)) | ((v & even) << 5u) | ((v >> 5u) & even);
}

// The route of query q (class cls) to a block of mixed bits `mixed`, for slot `slot`: the
// query packed onto the block's mixed bits; on an odd slot, the chunks of each whole pair
// exchanged (the count's bank swizzle).
fn route_word(q: vec2<u32>, cls: u32, mixed: vec2<u32>, slot: u32) -> vec2<u32> {
    var packed = pack60(q, mixed);
    if ((slot & 1u) == 1u) {
        let pairs = (countOneBits(mixed.x) + countOneBits(mixed.y) + 4u) / 5u / 2u;
        let low = min(pairs, 3u);
        packed = vec2<u32>(swap_pairs(packed.x, low), swap_pairs(packed.y, pairs - low));
    }
    return vec2<u32>(packed.x, packed.y | (cls << 30u));
}

// What query q (class cls) does at block b (mixed bits `mixed`) in a walk that does
// `action`; returns the global atomics it made.
fn meet(q: vec2<u32>, cls: u32, b: u32, mixed: vec2<u32>, action: u32) -> u32 {
    if (action == EMIT) {
        let s = find(b);
        // Slots are handed out from the top; past the bottom the count wraps far above
        // any count, and the route reserves its own.
        var rank = EMPTY;
        if (s != EMPTY) {
            rank = atomicSub(&slot_count[s], 1u) - 1u;
        }
        var slot = 0u;
        var atomics = 0u;
        if (rank < 0x80000000u) {
            slot = slot_base[s] + rank;
        } else {
            slot = atomicLoad(&scan[p.block_routes_at + b])
                + atomicAdd(&scan[p.block_cursor_at + b], 1u);
            atomics = 1u;
        }
        if (slot < p.route_cap) {
            routes[slot] = route_word(q, cls, mixed, slot);
        }
        return atomics;
    }
    let s = take(b);
    if (s != EMPTY) {
        atomicAdd(&slot_count[s], 1u);
        return 0u;
    }
    if (action == COUNT) {
        atomicAdd(&scan[p.block_routes_at + b], 1u);
        return 1u;
    }
    // Tallied nowhere: written with a global atomic of its own.
    return 0u;
}

// Walks query i's tree, doing `action` at each block met. Returns the tests made, the
// global atomics, and 1 where the walk reached its end (0: a software driver stopped its
// loops). A split names its children (tree.wgsl): a query with its bit goes on to the child
// without it, any other to the child with it first; a leaf names the node a walk goes to
// after it. So the walk needs no stack and meets each node at most once.
fn route(i: u32, fid: u32, action: u32) -> vec3<u32> {
    let raw = queries[i];
    let f = fills[fid];
    let q = raw & f.live;
    let cls = (raw.y >> 29u) & 3u;
    var tests = 0u;
    var atomics = 0u;
    var at = f.root;
    for (var step = f.root; step < f.tree_end && at != LAST; step = step + 1u) {
        let node = tree[at];
        tests = tests + 1u;
        if ((node.x & LEAF) == 0u) {
            at = select(node.z, node.y, has_bit(q, node.x));
            continue;
        }
        at = node.w;
        let leaf = node.x & ~LEAF;
        let b1 = atomicLoad(&scan[p.leaf_blocks_at + leaf + 1u]);
        var b = atomicLoad(&scan[p.leaf_blocks_at + leaf]);
        for (; b < b1; b = b + 1u) {
            let bits = info[INFO * b];
            tests = tests + 1u;
            if (disjoint(q, bits.xy)) {
                atomics = atomics + meet(q, cls, b, bits.zw, action);
            }
        }
        if (b < b1) {
            return vec3<u32>(tests, atomics, 0u);
        }
    }
    return vec3<u32>(tests, atomics, select(0u, 1u, at == LAST));
}

// Query i's fill, or NO_FILL where the query is past the batch's or its fill routes
// nothing (marked as failed, or without a tree).
fn routed_fill(i: u32) -> u32 {
    if (i >= atomicLoad(&scan[HEAD_QUERIES])) {
        return NO_FILL;
    }
    let fid = fill_of_query(i);
    let f = fills[fid];
    if (i >= f.queries_end || (f.status & FILL_ERRORS) != 0u || f.tree_end == f.root) {
        return NO_FILL;
    }
    return fid;
}

// Tests of the workgroup's fills (the first ones, from `fill0`), added up here and sent
// to their results rows once; a fill past them sends its own.
var<workgroup> fill0: u32;
var<workgroup> fill_tests: array<atomic<u32>, 8>;

// The span counters of a walk of all the workgroup's queries: its invocations that walked
// a query, and the most tests one made (its dependent chain).
var<workgroup> walkers: atomic<u32>;
var<workgroup> tests_peak: atomic<u32>;

// Walks this invocation's query, if it routes somewhere: returns the global atomics; with
// `tally_tests`, adds up the tests by fill and to the span counters.
fn walk(g: u32, li: u32, action: u32, tally_tests: bool) -> u32 {
    let i = g * GROUP_SIZE + li;
    let fid = routed_fill(i);
    if (fid == NO_FILL) {
        return 0u;
    }
    let walked = route(i, fid, action);
    if (walked.z == 0u) {
        // Lavapipe stops an invocation's loops after 65,535 iterations, silently: a walk
        // cut short left routes out, so the join is not counted here but cut.
        atomicOr(&results[row(fid) + RESULT_STATUS], FILL_UNFINISHED);
    }
    if (tally_tests) {
        atomicAdd(&walkers, 1u);
        atomicMax(&tests_peak, walked.x);
        let slot = fid - fill0;
        if (fid >= fill0 && slot < 8u) {
            atomicAdd(&fill_tests[slot], walked.x);
        } else {
            add64_at(row(fid) + RESULT_TESTS, vec2<u32>(walked.x, 0u));
        }
    }
    return walked.y;
}

// Readies the workgroup's tests by fill: the first fill is that of its first query.
fn start_tests(g: u32, li: u32) {
    if (li < 8u) {
        atomicStore(&fill_tests[li], 0u);
    }
    if (li == 0u) {
        fill0 = fill_of_query(g * GROUP_SIZE);
        atomicStore(&walkers, 0u);
        atomicStore(&tests_peak, 0u);
    }
    workgroupBarrier();
}

// Sends the tests added up here to their fills' rows, and the span counters (after a
// barrier).
fn send_tests(li: u32) {
    if (li < 8u) {
        let t = atomicLoad(&fill_tests[li]);
        if (t > 0u) {
            add64_at(row(fill0 + li) + RESULT_TESTS, vec2<u32>(t, 0u));
        }
    }
    if (li == 0u) {
        stat_add(STAT_ROUTE_WALKERS, atomicLoad(&walkers));
        stat_max(STAT_ROUTE_TESTS_PEAK, atomicLoad(&tests_peak));
    }
}

fn clear_slots(li: u32) {
    for (var s = li; s < ROUTE_SLOTS; s = s + GROUP_SIZE) {
        atomicStore(&slot_block[s], EMPTY);
        atomicStore(&slot_count[s], 0u);
    }
    if (li == 0u) {
        atomicStore(&taken, 0u);
    }
    workgroupBarrier();
}

// The routing dispatch's workgroups that hold queries (each of them has a header in
// `kept`, where the histograms have room after them).
fn route_groups() -> u32 {
    return (atomicLoad(&scan[HEAD_QUERIES]) + GROUP_SIZE - 1u) / GROUP_SIZE;
}

// Where workgroup g's histogram of `n` slots goes in `kept`, its room taken with a global
// atomic and its header written; KEPT_NONE where there is no room (nor then a header,
// where `kept` cannot hold the headers). Returns it and the global atomics made.
fn keep_room(g: u32, n: u32) -> vec2<u32> {
    let groups = route_groups();
    let len = arrayLength(&kept);
    if (g >= groups || groups >= len) {
        return vec2<u32>(KEPT_NONE, 0u);
    }
    let room = len - groups;
    var at = select(KEPT_NONE, groups, n == 0u);
    var atomics = 0u;
    // Past the room, no more is taken (so the count never wraps).
    if (n > 0u && atomicLoad(&scan[HEAD_KEPT]) <= room) {
        let start = atomicAdd(&scan[HEAD_KEPT], n);
        atomics = 1u;
        if (start <= room && n <= room - start) {
            at = groups + start;
        }
    }
    kept[g] = vec2<u32>(at, n);
    return vec2<u32>(at, atomics);
}

// Workgroup g's histogram as `count_routes` kept it: (where it starts, its length); a start
// of KEPT_NONE where it found no room. A workgroup past the queries kept an empty one.
fn kept_head(g: u32) -> vec2<u32> {
    let groups = route_groups();
    if (g >= groups) {
        return vec2<u32>(0u, 0u);
    }
    if (groups >= arrayLength(&kept)) {
        return vec2<u32>(KEPT_NONE, 0u);
    }
    return kept[g];
}

// The workgroup's sum of every invocation's global atomics, in slot_base (free by then),
// added to the work counter.
fn add_up(li: u32, mine: u32) {
    workgroupBarrier();
    slot_base[li] = mine;
    workgroupBarrier();
    for (var stride = GROUP_SIZE / 2u; stride > 0u; stride = stride / 2u) {
        if (li < stride) {
            slot_base[li] = slot_base[li] + slot_base[li + stride];
        }
        workgroupBarrier();
    }
    if (li == 0u) {
        stat_add(STAT_ROUTE_ATOMICS, slot_base[0]);
    }
}

// Where the workgroup's histogram goes in `kept` (`count_routes`), its header
// (`write_routes`), and the next of its entries to write.
var<workgroup> kept_at: u32;
var<workgroup> head: vec2<u32>;
var<workgroup> entry: atomic<u32>;

@compute @workgroup_size(GROUP_SIZE)
fn count_routes(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let g = flat_group(wg);
    clear_slots(li);
    start_tests(g, li);
    var atomics = walk(g, li, COUNT, true);
    workgroupBarrier();
    send_tests(li);
    if (li == 0u) {
        let room = keep_room(g, atomicLoad(&taken));
        kept_at = room.x;
        atomics = atomics + room.y;
        atomicStore(&entry, 0u);
    }
    let at = workgroupUniformLoad(&kept_at);
    for (var s = li; s < ROUTE_SLOTS; s = s + GROUP_SIZE) {
        let b = atomicLoad(&slot_block[s]);
        if (b != EMPTY) {
            let n = atomicLoad(&slot_count[s]);
            atomicAdd(&scan[p.block_routes_at + b], n);
            atomics = atomics + 1u;
            if (at != KEPT_NONE) {
                kept[at + atomicAdd(&entry, 1u)] = vec2<u32>(b, s | (n << ROUTE_SLOT_BITS));
            }
        }
    }
    add_up(li, atomics);
}

// Reserves the routes of block b's `n` slots in the histogram's slot s (one global
// atomic).
fn reserve(s: u32, b: u32, n: u32) {
    slot_base[s] = atomicLoad(&scan[p.block_routes_at + b])
        + atomicAdd(&scan[p.block_cursor_at + b], n);
}

// Puts back the histogram `count_routes` kept (`n` slots from `at`) as it was, each
// block's routes reserved; returns the global atomics.
fn restore(at: u32, n: u32, li: u32) -> u32 {
    var atomics = 0u;
    for (var e = li; e < n; e = e + GROUP_SIZE) {
        let k = kept[at + e];
        let s = k.y & (ROUTE_SLOTS - 1u);
        let count = k.y >> ROUTE_SLOT_BITS;
        atomicStore(&slot_block[s], k.x);
        atomicStore(&slot_count[s], count);
        reserve(s, k.x, count);
        atomics = atomics + 1u;
    }
    return atomics;
}

// Counts the workgroup's queries again into the histogram and reserves each block's
// routes; returns the global atomics.
fn tally(g: u32, li: u32) -> u32 {
    _ = walk(g, li, TALLY, false);
    workgroupBarrier();
    var atomics = 0u;
    for (var s = li; s < ROUTE_SLOTS; s = s + GROUP_SIZE) {
        let b = atomicLoad(&slot_block[s]);
        if (b != EMPTY) {
            reserve(s, b, atomicLoad(&slot_count[s]));
            atomics = atomics + 1u;
        }
    }
    return atomics;
}

@compute @workgroup_size(GROUP_SIZE)
fn write_routes(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let g = flat_group(wg);
    clear_slots(li);
    if (li == 0u) {
        head = kept_head(g);
    }
    let h = workgroupUniformLoad(&head);
    var atomics = 0u;
    if (h.x == KEPT_NONE) {
        atomics = tally(g, li);
    } else {
        atomics = restore(h.x, h.y, li);
    }
    workgroupBarrier();
    atomics = atomics + walk(g, li, EMIT, false);
    add_up(li, atomics);
}
