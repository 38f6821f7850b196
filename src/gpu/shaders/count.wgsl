// The block count: each workgroup takes the next ROUTES routes (block by block, as the
// routes lie), loads each block's tables into workgroup memory in turn, and counts for each
// of its routed queries the keys it shares no bit with: 16 invocations per query, each
// ANDing one 32-key word of the query's entry in every chunk. Each key class's count is
// weighted by its weight (and the query's class by its own), summed over 64 bits, and
// written per workgroup with the unweighted hits.

struct CountParams {
    // Routes in all.
    total: u32,
    // Blocks there is room for.
    blocks: u32,
    // Regions of `scan`: each block's first route (the block after the last one ends the
    // routes), and the number of blocks.
    block_queries: u32,
    total_blocks: u32,
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

@group(0) @binding(0) var<uniform> p: CountParams;
@group(0) @binding(1) var<storage, read> fills: array<Fill>;
@group(0) @binding(2) var<storage, read> tables: array<u32>;
@group(0) @binding(3) var<storage, read> info: array<vec4<u32>>;
@group(0) @binding(4) var<storage, read> scan: array<u32>;
@group(0) @binding(5) var<storage, read> routes: array<vec2<u32>>;
@group(0) @binding(6) var<storage, read_write> sums: array<vec4<u32>>;

const TABLE_WORDS: u32 = 6208u;
const CLASS_SETS: u32 = 6144u;
// Routes per workgroup. A workgroup may meet a block per route; Mesa's CPU driver stops a
// loop after 65535 rounds in one invocation, and loading a table takes up to 24.
const ROUTES: u32 = 2048u;

var<workgroup> t: array<u32, 6208>;
var<workgroup> red: array<vec4<u32>, 256>;

// The block holding route r: the last of the `n` blocks whose first route is not after r.
fn block_of(r: u32, n: u32) -> u32 {
    var lo = 0u;
    var hi = n;
    loop {
        if (hi - lo <= 1u) {
            break;
        }
        let mid = (lo + hi) / 2u;
        if (scan[p.block_queries + mid] <= r) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    return lo;
}

@compute @workgroup_size(256)
fn count(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let g = flat_group(wg);
    let lo = g * ROUTES;
    let hi = min(lo + ROUTES, p.total);
    let n = scan[p.total_blocks];
    var acc = vec2<u32>(0u);
    var hits = vec2<u32>(0u);
    let lane = li % 16u;
    var b = block_of(lo, n);
    loop {
        if (lo >= hi || b >= n) {
            break;
        }
        let start = scan[p.block_queries + b];
        if (start >= hi) {
            break;
        }
        let end = scan[p.block_queries + b + 1u];
        let desc = info[2u * b + 1u];
        let chunks = desc.x;
        let f = fills[desc.y];
        let base = b * TABLE_WORDS;
        workgroupBarrier();
        for (var i = li; i < chunks * 512u; i = i + 256u) {
            t[i] = tables[base + i];
        }
        if (li < 64u) {
            t[CLASS_SETS + li] = tables[base + CLASS_SETS + li];
        }
        workgroupBarrier();
        for (var r = max(lo, start) + li / 16u; r < min(hi, end); r = r + 16u) {
            var q = routes[r];
            let wq = f.query_w[q.y >> 30u];
            q.y = q.y & 0x3fffffffu;
            var w = 0xffffffffu;
            for (var c = 0u; c < chunks; c = c + 1u) {
                w = w & t[c * 512u + chunk5(q, c) * 16u + lane];
            }
            for (var cls = 0u; cls < 4u; cls = cls + 1u) {
                let k = countOneBits(w & t[CLASS_SETS + cls * 16u + lane]);
                hits = add64(hits, k);
                acc = add64(acc, k * f.stored_w[cls] * wq);
            }
        }
        b = b + 1u;
    }
    red[li] = vec4<u32>(acc, hits);
    workgroupBarrier();
    var stride = 128u;
    loop {
        if (stride == 0u) {
            break;
        }
        if (li < stride) {
            let x = red[li];
            let y = red[li + stride];
            red[li] = vec4<u32>(add64v(x.xy, y.xy), add64v(x.zw, y.zw));
        }
        workgroupBarrier();
        stride = stride / 2u;
    }
    if (li == 0u) {
        sums[g] = red[0];
    }
}
