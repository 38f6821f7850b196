// Routing: each query walks its fill's tree. At a node splitting on bit b, the child whose
// keys have b is visited only by a query without b; the other child always. At a leaf, a
// query meets each block whose keys' AND it shares no bit with. `count_routes` counts each
// block's queries (and each fill's tests); once those counts are scanned into offsets,
// `write_routes` writes each block's queries, packed onto the block's mixed bits (the
// query's class in the top two bits), in no particular order. Queries are numbered across
// the batch's query arena; a fill marked as failed routes nothing.

@group(0) @binding(0) var<uniform> p: Batch;
// binding 1: `results` (results.wgsl).
@group(0) @binding(2) var<storage, read> fills: array<Fill>;
@group(0) @binding(3) var<storage, read> tree: array<vec4<u32>>;
@group(0) @binding(4) var<storage, read> queries: array<vec2<u32>>;
@group(0) @binding(5) var<storage, read> info: array<vec4<u32>>;
@group(0) @binding(6) var<storage, read_write> scan: array<atomic<u32>>;
@group(0) @binding(7) var<storage, read_write> routes: array<vec2<u32>>;

var<workgroup> tests_of: array<u32, 256>;
var<workgroup> first_fill: u32;

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

// Walks query i of fill `fid`; with `emit`, writes its routes, else counts them. Returns
// the tests made. The nodes of a tree are in preorder, each split followed by the subtree
// with its bit and then the one without: a query that may enter the first steps to the
// next node, else jumps to the second, and after a leaf the next node is where the walk
// goes on. So the walk needs no stack, and it ends past the tree's last node.
fn route(i: u32, fid: u32, emit: bool) -> u32 {
    let f = fills[fid];
    let raw = queries[i];
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
        let b1 = atomicLoad(&scan[p.leaf_blocks_at + leaf + 1u]);
        for (var b = atomicLoad(&scan[p.leaf_blocks_at + leaf]); b < b1; b = b + 1u) {
            let bits = info[2u * b];
            tests = tests + 1u;
            if (!disjoint(q, bits.xy)) {
                continue;
            }
            if (emit) {
                let slot = atomicLoad(&scan[p.block_routes_at + b])
                    + atomicAdd(&scan[p.block_cursor_at + b], 1u);
                if (slot < p.route_cap) {
                    var packed = pack60(q, bits.zw);
                    packed.y = packed.y | (cls << 30u);
                    routes[slot] = packed;
                }
            } else {
                atomicAdd(&scan[p.block_routes_at + b], 1u);
            }
        }
    }
    return tests;
}

// Query i's fill, or NONE where the query is past the batch's or its fill routes nothing.
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

@compute @workgroup_size(256)
fn count_routes(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let i = flat_group(wg) * 256u + li;
    let fid = routed_fill(i);
    var tests = 0u;
    if (fid != NO_FILL) {
        tests = route(i, fid, false);
    }
    // The workgroup's tests go to its first query's fill in one sum; a query of another
    // fill (at most a few in a workgroup) adds its own.
    if (li == 0u) {
        first_fill = fid;
    }
    let mine = workgroupUniformLoad(&first_fill);
    var shared_tests = 0u;
    if (fid == mine) {
        shared_tests = tests;
    } else if (tests > 0u) {
        add64_at(row(fid) + RESULT_TESTS, vec2<u32>(tests, 0u));
    }
    tests_of[li] = shared_tests;
    workgroupBarrier();
    for (var stride = 128u; stride > 0u; stride = stride / 2u) {
        if (li < stride) {
            tests_of[li] = tests_of[li] + tests_of[li + stride];
        }
        workgroupBarrier();
    }
    if (li == 0u && mine != NO_FILL) {
        add64_at(row(mine) + RESULT_TESTS, vec2<u32>(tests_of[0], 0u));
    }
}

@compute @workgroup_size(256)
fn write_routes(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let i = flat_group(wg) * 256u + li;
    let fid = routed_fill(i);
    if (fid != NO_FILL) {
        route(i, fid, true);
    }
}
