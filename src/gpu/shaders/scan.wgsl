// Exclusive prefix sums of u32 values, in place, in segments of SCAN_SEGMENT (four values
// an invocation): `reduce` writes each segment's sum after the data, those sums are
// scanned the same way (one level up), and `down` scans each segment and adds its
// segment's offset. A range of at most one segment is scanned by `single` alone. Callers
// append a 0 to a range, so that its last value becomes the range's total.

// `ScanParams`: types.wgsl.
@group(0) @binding(0) var<uniform> p: ScanParams;
@group(0) @binding(1) var<storage, read_write> data: array<u32>;

var<workgroup> part: array<u32, GROUP_SIZE>;

// Exclusive scan of the GROUP_SIZE thread sums in `part`; returns this thread's offset and
// leaves the workgroup's total in its last entry + that thread's value (read before the
// call).
fn scan_part(li: u32, mine: u32) -> u32 {
    part[li] = mine;
    workgroupBarrier();
    var stride = 1u;
    loop {
        if (stride >= GROUP_SIZE) {
            break;
        }
        var add = 0u;
        if (li >= stride) {
            add = part[li - stride];
        }
        workgroupBarrier();
        part[li] = part[li] + add;
        workgroupBarrier();
        stride = stride * 2u;
    }
    return part[li] - mine;
}

// The four values of thread li in segment g, 0 past the range.
fn load4(g: u32, li: u32) -> vec4<u32> {
    var v = vec4<u32>(0u);
    let base = g * SCAN_SEGMENT + li * 4u;
    for (var i = 0u; i < 4u; i = i + 1u) {
        if (base + i < p.len) {
            v[i] = data[p.off + base + i];
        }
    }
    return v;
}

// Writes thread li's four values of segment g as an exclusive scan from `start`.
fn store4(g: u32, li: u32, v: vec4<u32>, start: u32) {
    let base = g * SCAN_SEGMENT + li * 4u;
    var run = start;
    for (var i = 0u; i < 4u; i = i + 1u) {
        if (base + i < p.len) {
            data[p.off + base + i] = run;
        }
        run = run + v[i];
    }
}

@compute @workgroup_size(GROUP_SIZE)
fn reduce(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let g = flat_group(wg);
    let v = load4(g, li);
    let total = scan_part(li, v.x + v.y + v.z + v.w);
    if (li == GROUP_SIZE - 1u) {
        data[p.sums + g] = total + v.x + v.y + v.z + v.w;
    }
}

@compute @workgroup_size(GROUP_SIZE)
fn down(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let g = flat_group(wg);
    let v = load4(g, li);
    let before = scan_part(li, v.x + v.y + v.z + v.w);
    store4(g, li, v, data[p.sums + g] + before);
}

@compute @workgroup_size(GROUP_SIZE)
fn single(@builtin(local_invocation_index) li: u32) {
    let v = load4(0u, li);
    let before = scan_part(li, v.x + v.y + v.z + v.w);
    store4(0u, li, v, before);
}
