// The tied pairs of the transposes at even N, which the tags keep out of every block count
// and which weigh half their class's factor: each west half marked First meets the east
// halves marked Second, and each marked Second the east ones marked First, compared one by
// one on their key bits. West halves are keys [0, west) of `keys`, east ones [west, end);
// a workgroup takes 256 west halves against a run of EAST east ones (Mesa's CPU driver stops
// a loop after 65535 rounds in one invocation).

struct TieParams {
    west: u32,
    end: u32,
    // Workgroups per run of east keys.
    west_groups: u32,
    pad1: u32,
    // The marks (east First, east Second, west First, west Second).
    east_first: vec2<u32>,
    east_second: vec2<u32>,
    west_first: vec2<u32>,
    west_second: vec2<u32>,
    // The key bits compared, and each west class's weight.
    below: vec2<u32>,
    pad2: vec2<u32>,
    weights: vec4<u32>,
}

@group(0) @binding(0) var<uniform> p: TieParams;
@group(0) @binding(1) var<storage, read> keys: array<vec2<u32>>;
@group(0) @binding(2) var<storage, read_write> sums: array<vec4<u32>>;

var<workgroup> red: array<vec4<u32>, 256>;

const EAST: u32 = 4096u;

@compute @workgroup_size(256)
fn ties(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let g = flat_group(wg);
    let i = (g % p.west_groups) * 256u + li;
    let e0 = p.west + (g / p.west_groups) * EAST;
    let e1 = min(e0 + EAST, p.end);
    var acc = vec2<u32>(0u);
    var hits = vec2<u32>(0u);
    if (i < p.west) {
        let w = keys[i];
        var partner = vec2<u32>(0u);
        if (!disjoint(w, p.west_first)) {
            partner = p.east_second;
        } else if (!disjoint(w, p.west_second)) {
            partner = p.east_first;
        }
        let weight = p.weights[(w.y >> 29u) & 3u];
        let wb = w & p.below;
        if ((partner.x | partner.y) != 0u) {
            for (var e = e0; e < e1; e = e + 1u) {
                let k = keys[e];
                if (!disjoint(k, partner) && disjoint(wb, k & p.below)) {
                    hits = add64(hits, 1u);
                    acc = add64(acc, weight);
                }
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
