// The block count: a workgroup loads one block's tables into workgroup memory and counts,
// for a share of the queries routed to the block, the keys each shares no bit with: 16
// invocations per query, each ANDing one 32-key word of the query's entry in every chunk.
// Each key class's count is weighted by its weight (and the query's class by its own),
// summed over 64 bits, and written per workgroup with the unweighted hits.

struct CountParams {
    // Workgroups per block (each takes a share of its queries), and blocks dispatched.
    parts: u32,
    blocks: u32,
    // Regions of `scan`: each block's first routed query (the block after the last one
    // ends the routes), and the total number of blocks.
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
    pad: u32,
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

var<workgroup> t: array<u32, 6208>;
var<workgroup> red: array<vec4<u32>, 256>;

@compute @workgroup_size(256)
fn count(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let g = flat_group(wg);
    let b = g / p.parts;
    let part = g % p.parts;
    var acc = vec2<u32>(0u);
    var hits = vec2<u32>(0u);
    if (b < scan[p.total_blocks]) {
        let desc = info[2u * b + 1u];
        let chunks = desc.x;
        let f = fills[desc.y];
        let base = b * TABLE_WORDS;
        for (var i = li; i < chunks * 512u; i = i + 256u) {
            t[i] = tables[base + i];
        }
        if (li < 64u) {
            t[CLASS_SETS + li] = tables[base + CLASS_SETS + li];
        }
        workgroupBarrier();
        let start = scan[p.block_queries + b];
        let len = scan[p.block_queries + b + 1u] - start;
        let lo = start + len * part / p.parts;
        let hi = start + len * (part + 1u) / p.parts;
        let lane = li % 16u;
        for (var r = lo + li / 16u; r < hi; r = r + 16u) {
            var q = routes[r];
            let wq = f.query_w[q.y >> 30u];
            q.y = q.y & 0x3fffffffu;
            var w = 0xffffffffu;
            for (var c = 0u; c < chunks; c = c + 1u) {
                w = w & t[c * 512u + chunk5(q, c) * 16u + lane];
            }
            for (var cls = 0u; cls < 4u; cls = cls + 1u) {
                let n = countOneBits(w & t[CLASS_SETS + cls * 16u + lane]);
                hits = add64(hits, n);
                acc = add64(acc, n * f.stored_w[cls] * wq);
            }
        }
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
