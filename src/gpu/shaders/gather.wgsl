// Small copies the host reads back: the scanned offset at the start of every job (and the
// total after the last), and strided samples of keys.

struct GatherParams {
    // Values to write.
    len: u32,
    // For offsets: where the scanned item counts start; for samples: the stride.
    src: u32,
    // For samples: the first key.
    first: u32,
    // Where the values go in `out`.
    to: u32,
}

struct Job {
    north: u32,
    north_len: u32,
    south: u32,
    south_len: u32,
    forbid: vec2<u32>,
    extra: vec2<u32>,
    exact_mask: vec2<u32>,
    exact_bits: vec2<u32>,
    first_item: u32,
    tiles: u32,
    pad0: u32,
    pad1: u32,
}

@group(0) @binding(0) var<uniform> p: GatherParams;
@group(0) @binding(1) var<storage, read> jobs: array<Job>;
@group(0) @binding(2) var<storage, read> scan: array<u32>;
@group(0) @binding(3) var<storage, read> keys: array<vec2<u32>>;
@group(0) @binding(4) var<storage, read_write> out: array<vec2<u32>>;

// out[j].x: the offset of job j's first key; the entry after the last job: the total
// (the item counts end with an appended 0, scanned to the total).
@compute @workgroup_size(256)
fn job_offsets(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let j = flat_group(wg) * 256u + li;
    if (j >= p.len) {
        return;
    }
    out[p.to + j] = vec2<u32>(scan[p.src + jobs[j].first_item], 0u);
}

// out[to + i] = keys[first + i * stride].
@compute @workgroup_size(256)
fn sample(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let i = flat_group(wg) * 256u + li;
    if (i >= p.len) {
        return;
    }
    out[p.to + i] = keys[p.first + i * p.src];
}
