// The block count: each workgroup takes the next COUNT_ROUTES routes (block by block, as
// the routes lie), loads each block's tables into workgroup memory in turn, and counts for
// each of its routed queries the keys it shares no bit with: 16 invocations per query, each
// ANDing one 32-key word of the query's entry in every chunk. Each key class's count is
// weighted by its weight (and the query's class by its own) and summed over 64 bits; when
// the blocks pass from one fill to the next, the workgroup adds its sums to the fill's
// results row.

@group(0) @binding(0) var<uniform> p: Batch;
// binding 1: `results` (results.wgsl).
@group(0) @binding(2) var<storage, read> fills: array<Fill>;
@group(0) @binding(3) var<storage, read> tables: array<u32>;
@group(0) @binding(4) var<storage, read> info: array<vec4<u32>>;
@group(0) @binding(5) var<storage, read> scan: array<u32>;
@group(0) @binding(6) var<storage, read> routes: array<vec2<u32>>;

var<workgroup> t: array<u32, TABLE_WORDS>;
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
        if (scan[p.block_routes_at + mid] <= r) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    return lo;
}

// Adds the workgroup's sums (each invocation's `v`) to fill `fid`'s results row.
fn flush(li: u32, fid: u32, v: vec4<u32>) {
    red[li] = v;
    workgroupBarrier();
    for (var stride = 128u; stride > 0u; stride = stride / 2u) {
        if (li < stride) {
            let x = red[li];
            let y = red[li + stride];
            red[li] = vec4<u32>(add64v(x.xy, y.xy), add64v(x.zw, y.zw));
        }
        workgroupBarrier();
    }
    if (li == 0u) {
        add64_at(row(fid) + RESULT_WEIGHTED, red[0].xy);
        add64_at(row(fid) + RESULT_HITS, red[0].zw);
    }
    workgroupBarrier();
}

@compute @workgroup_size(256)
fn count(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let g = flat_group(wg);
    let total = min(scan[HEAD_ROUTES], p.route_cap);
    let lo = g * COUNT_ROUTES;
    let hi = min(lo + COUNT_ROUTES, total);
    let n = scan[HEAD_BLOCKS];
    var acc = vec2<u32>(0u);
    var hits = vec2<u32>(0u);
    let lane = li % 16u;
    var b = block_of(lo, n);
    var fid = NO_FILL;
    // Bounded by the blocks: the loop ends at the workgroup's last route or the last block.
    loop {
        if (lo >= hi || b >= n) {
            break;
        }
        let start = scan[p.block_routes_at + b];
        if (start >= hi) {
            break;
        }
        let end = scan[p.block_routes_at + b + 1u];
        let desc = info[2u * b + 1u];
        if (desc.y != fid) {
            if (fid != NO_FILL) {
                flush(li, fid, vec4<u32>(acc, hits));
                acc = vec2<u32>(0u);
                hits = vec2<u32>(0u);
            }
            fid = desc.y;
        }
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
    if (fid != NO_FILL) {
        flush(li, fid, vec4<u32>(acc, hits));
    }
}
