// Bit-slices each block of up to 512 sorted keys on its mixed bits (those some but not all
// of its keys have): the keys are packed onto those bits, cut into chunks of 5, and for
// every chunk and each of its 32 values m the table keeps the 512-bit set of keys that
// share no bit with m. A query that shares no bit with the block's AND then meets exactly
// the keys in the AND of its chunks' sets. Beside the tables, a block keeps the set of its
// keys of each class (their weights differ), and its AND, mixed bits and chunk count.

@group(0) @binding(0) var<uniform> p: Batch;
@group(0) @binding(1) var<storage, read> fills: array<Fill>;
@group(0) @binding(2) var<storage, read> sorted: array<vec2<u32>>;
@group(0) @binding(3) var<storage, read> blocks: array<vec4<u32>>;
@group(0) @binding(4) var<storage, read> scan: array<u32>;
@group(0) @binding(5) var<storage, read_write> tables: array<u32>;
@group(0) @binding(6) var<storage, read_write> info: array<vec4<u32>>;


var<workgroup> packed: array<vec2<u32>, 512>;
var<workgroup> class_of: array<u32, 512>;
var<workgroup> red_and: array<vec2<u32>, 256>;
var<workgroup> red_or: array<vec2<u32>, 256>;

// The AND and OR of the block's live keys (every thread gets them).
fn and_or(li: u32, a: vec2<u32>, o: vec2<u32>) -> vec4<u32> {
    red_and[li] = a;
    red_or[li] = o;
    workgroupBarrier();
    var stride = 128u;
    loop {
        if (stride == 0u) {
            break;
        }
        if (li < stride) {
            red_and[li] = red_and[li] & red_and[li + stride];
            red_or[li] = red_or[li] | red_or[li + stride];
        }
        workgroupBarrier();
        stride = stride / 2u;
    }
    return vec4<u32>(red_and[0], red_or[0]);
}

@compute @workgroup_size(256)
fn build(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let b = flat_group(wg);
    if (b >= scan[HEAD_BLOCKS]) {
        return;
    }
    let d = blocks[b];
    let f = fills[d.w];
    var a = vec2<u32>(0xffffffffu);
    var o = vec2<u32>(0u);
    for (var i = li; i < 512u; i = i + 256u) {
        if (i < d.y) {
            let k = sorted[d.x + i];
            packed[i] = k & f.live;
            class_of[i] = (k.y >> 29u) & 3u;
            a = a & packed[i];
            o = o | packed[i];
        }
    }
    let ao = and_or(li, a, o);
    let all_of = ao.xy;
    let mixed = ao.zw & ~all_of;
    let chunks = (countOneBits(mixed.x) + countOneBits(mixed.y) + 4u) / 5u;
    for (var i = li; i < d.y; i = i + 256u) {
        packed[i] = pack60(packed[i], mixed);
    }
    workgroupBarrier();
    let base = b * TABLE_WORDS;
    // Entry (chunk c, value m, lane w): bit j set when key 32w + j has none of m's bits.
    for (var e = li; e < chunks * 512u; e = e + 256u) {
        let c = e / 512u;
        let m = (e / 16u) % 32u;
        let w = e % 16u;
        var word = 0u;
        for (var j = 0u; j < 32u; j = j + 1u) {
            let i = w * 32u + j;
            if (i < d.y && (chunk5(packed[i], c) & m) == 0u) {
                word = word | (1u << j);
            }
        }
        tables[base + e] = word;
    }
    if (li < 64u) {
        let cls = li / 16u;
        let w = li % 16u;
        var word = 0u;
        for (var j = 0u; j < 32u; j = j + 1u) {
            let i = w * 32u + j;
            if (i < d.y && class_of[i] == cls) {
                word = word | (1u << j);
            }
        }
        tables[base + CLASS_SETS + li] = word;
    }
    if (li == 0u) {
        info[2u * b] = vec4<u32>(all_of, mixed);
        info[2u * b + 1u] = vec4<u32>(chunks, d.w, d.y, d.z);
    }
}
