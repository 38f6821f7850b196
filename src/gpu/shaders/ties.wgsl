// The tied pairs of the transposes at even N, which the tags keep out of every block count
// and which weigh half their class's factor: each west half marked First meets the east
// halves marked Second, and each marked Second the east ones marked First, compared one by
// one on their key bits. Each join's tied halves lie in the ties arena, west then east
// (TIE_* words in `scan`); a workgroup takes GROUP_SIZE west halves of one join against a
// run of TIE_EAST east ones (Mesa's CPU driver stops a loop after 65535 rounds in one
// invocation) and adds its sums to the join's results row.

@group(0) @binding(0) var<uniform> p: Batch;
// binding 1: `results` (results.wgsl).
@group(0) @binding(2) var<storage, read> joins: array<JoinDesc>;
@group(0) @binding(3) var<storage, read> scan: array<u32>;
@group(0) @binding(4) var<storage, read> keys: array<vec2<u32>>;

var<workgroup> red: array<vec4<u32>, GROUP_SIZE>;

// The join holding tie workgroup g: the last whose first workgroup is not after g.
fn join_of_group(g: u32) -> u32 {
    var lo = 0u;
    var hi = p.joins;
    loop {
        if (hi - lo <= 1u) {
            break;
        }
        let mid = (lo + hi) / 2u;
        if (scan[p.ties_at + mid * TIE_WORDS + 3u] <= g) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    return lo;
}

@compute @workgroup_size(GROUP_SIZE)
fn ties(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let g = flat_group(wg);
    if (g >= scan[HEAD_TIE_GROUPS]) {
        return;
    }
    let j = join_of_group(g);
    let at = p.ties_at + j * TIE_WORDS;
    let base = scan[at];
    let west = scan[at + 1u];
    let east = scan[at + 2u];
    let local = g - scan[at + 3u];
    let west_groups = (west + GROUP_SIZE - 1u) / GROUP_SIZE;
    let d = joins[j];
    let i = (local % west_groups) * GROUP_SIZE + li;
    let e0 = base + west + (local / west_groups) * TIE_EAST;
    let e1 = min(e0 + TIE_EAST, base + west + east);
    var acc = vec2<u32>(0u);
    var hits = vec2<u32>(0u);
    if (i < west) {
        let w = keys[base + i];
        var partner = vec2<u32>(0u);
        if (!disjoint(w, d.marks[2])) {
            partner = d.marks[1];
        } else if (!disjoint(w, d.marks[3])) {
            partner = d.marks[0];
        }
        let cls = (w.y >> 29u) & 3u;
        // Half the class's factor; the factor-4 class (3) has no tied halves.
        let factor = select(select(select(0u, d.factors.z, cls == 2u), d.factors.y, cls == 1u),
            d.factors.x, cls == 0u);
        let weight = factor / 2u;
        let wb = w & d.below;
        if ((partner.x | partner.y) != 0u) {
            for (var e = e0; e < e1; e = e + 1u) {
                let k = keys[e];
                if (!disjoint(k, partner) && disjoint(wb, k & d.below)) {
                    hits = add64(hits, 1u);
                    acc = add64(acc, weight);
                }
            }
        }
    }
    red[li] = vec4<u32>(acc, hits);
    workgroupBarrier();
    for (var stride = GROUP_SIZE / 2u; stride > 0u; stride = stride / 2u) {
        if (li < stride) {
            let x = red[li];
            let y = red[li + stride];
            red[li] = vec4<u32>(add64v(x.xy, y.xy), add64v(x.zw, y.zw));
        }
        workgroupBarrier();
    }
    if (li == 0u) {
        add64_at(row(j) + RESULT_WEIGHTED, red[0].xy);
        add64_at(row(j) + RESULT_HITS, red[0].zw);
    }
}
