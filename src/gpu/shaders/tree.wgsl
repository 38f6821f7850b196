// Each fill's sieve tree, one workgroup per fill, built as the CPU's trie builds its own:
// every stored key is partitioned, node by node, on the bit that rules out the most pairs
// there, (keys with it among at most KEY_SAMPLE keys of the node, by stride) × (sampled
// queries that reach the node with it), until a node holds at most `leaf_keys` keys. The
// child whose keys have the bit is met only by the queries without it (so it gets those of
// the node's sampled queries), the other by them all. Partitions are stable (a prefix scan
// per node), so a tree depends on its keys only, not on the timing of invocations.
//
// Nodes are written in preorder, each split followed by the subtree with its bit, then the
// one without it (`route.wgsl` walks them without a stack): [bit, node without it, node with
// it, 0], or [LEAF | leaf, 0, 0, 0]. A leaf's keys are a range of the fill's stored keys,
// now grouped by leaf: (first key, keys) in `leaves`. Every loop is bounded by the data.

@group(0) @binding(0) var<uniform> p: Batch;
@group(0) @binding(1) var<storage, read_write> fills: array<Fill>;
@group(0) @binding(2) var<storage, read_write> stored: array<vec2<u32>>;
@group(0) @binding(3) var<storage, read_write> temp: array<vec2<u32>>;
@group(0) @binding(4) var<storage, read> queries: array<vec2<u32>>;
@group(0) @binding(5) var<storage, read_write> sample: array<vec2<u32>>;
@group(0) @binding(6) var<storage, read_write> tree: array<vec4<u32>>;
@group(0) @binding(7) var<storage, read_write> leaves: array<vec2<u32>>;

const NONE: u32 = 0xffffffffu;
// A path splits on each key bit at most once: at most 61 levels below the root, and the
// stack holds one pending child per level.
const STACK: u32 = 66u;

// Nodes waiting to be built: (first key, past the last, sampled queries that reach it,
// the split whose node-without-the-bit entry it fills), and the bits its path used.
var<workgroup> stack: array<vec4<u32>, STACK>;
var<workgroup> stack_used: array<vec2<u32>, STACK>;
var<workgroup> key_bits: array<atomic<u32>, 64>;
var<workgroup> query_bits: array<atomic<u32>, 64>;
var<workgroup> part: array<u32, 256>;
// The node being built (as a stack entry, with its index in place of the parent), its
// path's bits, what to do with it (BUILD_*) and its bit.
var<workgroup> cur: vec4<u32>;
var<workgroup> cur_used: vec2<u32>;
var<workgroup> mode: u32;
var<workgroup> chosen: u32;
// Entries on the stack; nodes, leaves and blocks made so far.
var<workgroup> depth: u32;
var<workgroup> made: vec3<u32>;

const BUILD_LEAF: u32 = 0u;
const BUILD_SPLIT: u32 = 1u;
const BUILD_DONE: u32 = 2u;

// The exclusive prefix of `v` over the workgroup, and the workgroup's total.
fn excl_scan(li: u32, v: u32) -> vec2<u32> {
    part[li] = v;
    workgroupBarrier();
    for (var stride = 1u; stride < 256u; stride = stride * 2u) {
        var add = 0u;
        if (li >= stride) {
            add = part[li - stride];
        }
        workgroupBarrier();
        part[li] = part[li] + add;
        workgroupBarrier();
    }
    let total = part[255];
    let before = part[li] - v;
    workgroupBarrier();
    return vec2<u32>(before, total);
}

// Adds the set bits of k to `key_bits` (keys) or `query_bits`.
fn count_key(k: vec2<u32>) {
    var x = k.x;
    for (var i = 0u; i < 32u && x != 0u; i = i + 1u) {
        atomicAdd(&key_bits[firstTrailingBit(x)], 1u);
        x = x & (x - 1u);
    }
    var y = k.y;
    for (var i = 0u; i < 32u && y != 0u; i = i + 1u) {
        atomicAdd(&key_bits[32u + firstTrailingBit(y)], 1u);
        y = y & (y - 1u);
    }
}

fn count_query(k: vec2<u32>) {
    var x = k.x;
    for (var i = 0u; i < 32u && x != 0u; i = i + 1u) {
        atomicAdd(&query_bits[firstTrailingBit(x)], 1u);
        x = x & (x - 1u);
    }
    var y = k.y;
    for (var i = 0u; i < 32u && y != 0u; i = i + 1u) {
        atomicAdd(&query_bits[32u + firstTrailingBit(y)], 1u);
        y = y & (y - 1u);
    }
}

// The bit to split the node `c` on (its path used `used`), or NONE: the one with the most
// (sampled keys with it) × (sampled queries with it), among those some but not all of the
// sampled keys have; the lowest of equals.
fn choose(li: u32, f: Fill, c: vec4<u32>, used: vec2<u32>) -> u32 {
    if (li < 64u) {
        atomicStore(&key_bits[li], 0u);
        atomicStore(&query_bits[li], 0u);
    }
    workgroupBarrier();
    let n = c.y - c.x;
    let step = max(n / p.key_sample, 1u);
    let sampled = (n + step - 1u) / step;
    let mask = f.live & ~used;
    for (var i = li; i < sampled; i = i + 256u) {
        count_key(stored[c.x + i * step] & mask);
    }
    for (var i = li; i < c.z; i = i + 256u) {
        count_query(sample[f.sample + i] & mask);
    }
    workgroupBarrier();
    if (li == 0u) {
        var best = NONE;
        var score = 0u;
        for (var b = 0u; b < 64u; b = b + 1u) {
            let k = atomicLoad(&key_bits[b]);
            let s = k * atomicLoad(&query_bits[b]);
            if (k > 0u && k < sampled && s > score) {
                best = b;
                score = s;
            }
        }
        chosen = best;
    }
    return workgroupUniformLoad(&chosen);
}

// Moves the keys of `stored[lo, hi)` without `bit` to the front, in order, and those with it
// after them, in order; returns how many are without it.
fn part_stored(li: u32, lo: u32, hi: u32, bit: u32) -> u32 {
    let chunk = (hi - lo + 255u) / 256u;
    let a = min(lo + li * chunk, hi);
    let b = min(a + chunk, hi);
    var zeros = 0u;
    for (var i = a; i < b; i = i + 1u) {
        zeros = zeros + select(1u, 0u, has_bit(stored[i], bit));
    }
    let s = excl_scan(li, zeros);
    var z = lo + s.x;
    var o = lo + s.y + (a - lo - s.x);
    for (var i = a; i < b; i = i + 1u) {
        let k = stored[i];
        if (has_bit(k, bit)) {
            temp[o] = k;
            o = o + 1u;
        } else {
            temp[z] = k;
            z = z + 1u;
        }
    }
    storageBarrier();
    for (var i = a; i < b; i = i + 1u) {
        stored[i] = temp[i];
    }
    storageBarrier();
    return s.y;
}

// The same for the fill's sampled queries `sample[at, at + n)`, with the scratch after the
// fill's `qs` samples.
fn part_sample(li: u32, at: u32, qs: u32, n: u32, bit: u32) -> u32 {
    let chunk = (n + 255u) / 256u;
    let a = min(li * chunk, n);
    let b = min(a + chunk, n);
    var zeros = 0u;
    for (var i = a; i < b; i = i + 1u) {
        zeros = zeros + select(1u, 0u, has_bit(sample[at + i], bit));
    }
    let s = excl_scan(li, zeros);
    let scratch = at + qs;
    var z = s.x;
    var o = s.y + (a - s.x);
    for (var i = a; i < b; i = i + 1u) {
        let k = sample[at + i];
        if (has_bit(k, bit)) {
            sample[scratch + o] = k;
            o = o + 1u;
        } else {
            sample[scratch + z] = k;
            z = z + 1u;
        }
    }
    storageBarrier();
    for (var i = a; i < b; i = i + 1u) {
        sample[at + i] = sample[scratch + i];
    }
    storageBarrier();
    return s.y;
}

// Takes the next node off the stack (thread 0): links it to its split, and says whether it
// is a leaf (few keys, or no leaf slots to spare for its children) or may split.
fn pop(f: Fill) {
    if (depth == 0u) {
        mode = BUILD_DONE;
        return;
    }
    depth = depth - 1u;
    let e = stack[depth];
    let node = f.root + made.x;
    made.x = made.x + 1u;
    if (e.w != NONE) {
        tree[e.w].y = node;
    }
    cur = vec4<u32>(e.xyz, node);
    cur_used = stack_used[depth];
    // Each entry left on the stack becomes a leaf at least, and so do both children.
    let room = made.y + depth + 2u <= f.leaf_cap;
    mode = select(BUILD_LEAF, BUILD_SPLIT, e.y - e.x > p.leaf_keys && room);
}

// Makes the node `c` a leaf (thread 0).
fn leaf(f: Fill, c: vec4<u32>) {
    let l = f.leaf_base + made.y;
    tree[c.w] = vec4<u32>(LEAF | l, 0u, 0u, 0u);
    leaves[l] = vec2<u32>(c.x, c.y - c.x);
    made.y = made.y + 1u;
    made.z = made.z + (c.y - c.x + BLOCK_KEYS - 1u) / BLOCK_KEYS;
}

// Makes the node `c` a split on `bit` (thread 0): the child with the bit (keys from `mid`,
// the `with_q` sampled queries without the bit) is built next, then the other.
fn split(c: vec4<u32>, used: vec2<u32>, bit: u32, mid: u32, with_q: u32) {
    tree[c.w] = vec4<u32>(bit, 0u, c.w + 1u, 0u);
    var u = used;
    if (bit < 32u) {
        u.x = u.x | (1u << bit);
    } else {
        u.y = u.y | (1u << (bit - 32u));
    }
    stack[depth] = vec4<u32>(c.x, mid, c.z, c.w);
    stack_used[depth] = u;
    stack[depth + 1u] = vec4<u32>(mid, c.y, with_q, NONE);
    stack_used[depth + 1u] = u;
    depth = depth + 2u;
}

@compute @workgroup_size(256)
fn build(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let fid = flat_group(wg);
    if (fid >= p.joins) {
        return;
    }
    let f = fills[fid];
    if ((f.status & FILL_ERRORS) != 0u || f.stored == f.stored_end) {
        return;
    }
    let q = f.queries_end - f.queries;
    let qs = min(q, p.query_sample);
    let stride = max(q / max(qs, 1u), 1u);
    for (var i = li; i < qs; i = i + 256u) {
        sample[f.sample + i] = queries[f.queries + i * stride] & f.live;
    }
    if (li == 0u) {
        stack[0] = vec4<u32>(f.stored, f.stored_end, qs, NONE);
        stack_used[0] = vec2<u32>(0u);
        depth = 1u;
        made = vec3<u32>(0u);
    }
    storageBarrier();
    for (var it = 0u; it < f.node_cap; it = it + 1u) {
        // Every invocation has read the last node before thread 0 takes the next.
        workgroupBarrier();
        if (li == 0u) {
            pop(f);
        }
        let m = workgroupUniformLoad(&mode);
        if (m == BUILD_DONE) {
            break;
        }
        let c = workgroupUniformLoad(&cur);
        let used = cur_used;
        var bit = NONE;
        if (m == BUILD_SPLIT) {
            bit = choose(li, f, c, used);
        }
        if (bit == NONE) {
            if (li == 0u) {
                leaf(f, c);
            }
            continue;
        }
        let zeros = part_stored(li, c.x, c.y, bit);
        let open = part_sample(li, f.sample, qs, c.z, bit);
        if (li == 0u) {
            split(c, used, bit, c.x + zeros, open);
        }
    }
    if (li == 0u) {
        // A tree cut short (no node slot left, or a software driver's loop limit: lavapipe
        // stops an invocation's loops after 65,535 iterations in all, silently) would
        // route queries past keys: the fill counts nothing, and the host cuts the join.
        if (mode != BUILD_DONE) {
            fills[fid].status = f.status | FILL_UNFINISHED;
            return;
        }
        fills[fid].tree_end = f.root + made.x;
        fills[fid].leaves = made.y;
        fills[fid].blocks = made.z;
    }
}
