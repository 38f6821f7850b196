// Routing: each query walks its fill's tree. At a node splitting on bit b, the child whose
// keys have b is visited only by a query without b; the other child always. At a leaf, a
// query meets each block whose keys' AND it shares no bit with. `count_routes` counts each
// block's queries (and each workgroup's tests); once those counts are scanned into
// offsets, `write_routes` writes each block's queries, packed onto the block's mixed bits
// (the query's class in the top two bits), in no particular order.

struct RouteParams {
    // Queries in this dispatch, from `first`.
    queries: u32,
    first: u32,
    fills: u32,
    // Regions of `scan`: each leaf's first block; each block's queries (scanned into its
    // first); each block's cursor; each workgroup's tests.
    leaf_blocks: u32,
    block_queries: u32,
    block_cursor: u32,
    tests: u32,
    pad: u32,
}

struct Fill {
    stored: u32,
    stored_end: u32,
    queries: u32,
    queries_end: u32,
    root: u32,
    leaf_base: u32,
    leaves: u32,
    // Past the fill's last tree node.
    tree_end: u32,
    live: vec2<u32>,
    pad2: vec2<u32>,
    stored_w: vec4<u32>,
    query_w: vec4<u32>,
}

@group(0) @binding(0) var<uniform> p: RouteParams;
@group(0) @binding(1) var<storage, read> fills: array<Fill>;
@group(0) @binding(2) var<storage, read> tree: array<vec4<u32>>;
@group(0) @binding(3) var<storage, read> queries: array<vec2<u32>>;
@group(0) @binding(4) var<storage, read> info: array<vec4<u32>>;
@group(0) @binding(5) var<storage, read_write> scan: array<atomic<u32>>;
@group(0) @binding(6) var<storage, read_write> routes: array<vec2<u32>>;

const LEAF: u32 = 0x80000000u;

var<workgroup> tests_of: array<u32, 256>;

// The fill whose queries hold query i.
fn fill_of_query(i: u32) -> u32 {
    var lo = 0u;
    var hi = p.fills;
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

// Walks query i's tree; with `emit`, writes its routes, else counts them. Returns the
// tests made. The nodes of a tree are in preorder, each split followed by the subtree
// with its bit and then the one without: a query that may enter the first steps to the
// next node, else jumps to the second, and after a leaf the next node is where the walk
// goes on. So the walk needs no stack.
fn route(i: u32, emit: bool) -> u32 {
    let raw = queries[i];
    let f = fills[fill_of_query(i)];
    let q = raw & f.live;
    let cls = (raw.y >> 29u) & 3u;
    var at = f.root;
    var tests = 0u;
    loop {
        if (at >= f.tree_end) {
            break;
        }
        let node = tree[at];
        tests = tests + 1u;
        if ((node.x & LEAF) == 0u) {
            at = select(at + 1u, node.y, has_bit(q, node.x));
            continue;
        }
        at = at + 1u;
        let leaf = node.x & ~LEAF;
        let b1 = atomicLoad(&scan[p.leaf_blocks + leaf + 1u]);
        for (var b = atomicLoad(&scan[p.leaf_blocks + leaf]); b < b1; b = b + 1u) {
            let bits = info[2u * b];
            tests = tests + 1u;
            if (!disjoint(q, bits.xy)) {
                continue;
            }
            if (emit) {
                let slot = atomicLoad(&scan[p.block_queries + b])
                    + atomicAdd(&scan[p.block_cursor + b], 1u);
                var packed = pack60(q, bits.zw);
                packed.y = packed.y | (cls << 30u);
                routes[slot] = packed;
            } else {
                atomicAdd(&scan[p.block_queries + b], 1u);
            }
        }
    }
    return tests;
}

@compute @workgroup_size(256)
fn count_routes(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let g = flat_group(wg);
    let i = g * 256u + li;
    var tests = 0u;
    if (i < p.queries) {
        tests = route(p.first + i, false);
    }
    tests_of[li] = tests;
    workgroupBarrier();
    var stride = 128u;
    loop {
        if (stride == 0u) {
            break;
        }
        if (li < stride) {
            tests_of[li] = tests_of[li] + tests_of[li + stride];
        }
        workgroupBarrier();
        stride = stride / 2u;
    }
    if (li == 0u) {
        atomicStore(&scan[p.tests + g], tests_of[0]);
    }
}

@compute @workgroup_size(256)
fn write_routes(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let i = flat_group(wg) * 256u + li;
    if (i < p.queries) {
        route(p.first + i, true);
    }
}
