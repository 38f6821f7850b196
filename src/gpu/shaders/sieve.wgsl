// The sieve of the stored keys: each key walks its fill's tree (chosen on the host from a
// sample) to a leaf, the keys are grouped by leaf, each leaf is cut into blocks of 512, and
// each block is bit-sliced on its own mixed bits (those some but not all of its keys have).
//
// Regions of `scan` (offsets in SieveParams): per leaf, its key count (scanned into its
// first key), a cursor, and its block count (scanned into its first block).

struct SieveParams {
    // Stored keys, leaves and fills in this sieve.
    keys: u32,
    leaves: u32,
    fills: u32,
    // Blocks dispatched (at least the blocks there are).
    blocks: u32,
    // Regions of `scan`.
    leaf_keys: u32,
    leaf_cursor: u32,
    leaf_blocks: u32,
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

@group(0) @binding(0) var<uniform> p: SieveParams;
@group(0) @binding(1) var<storage, read> fills: array<Fill>;
@group(0) @binding(2) var<storage, read> tree: array<vec4<u32>>;
@group(0) @binding(3) var<storage, read> keys: array<vec2<u32>>;
@group(0) @binding(4) var<storage, read_write> leaf_of: array<u32>;
@group(0) @binding(5) var<storage, read_write> scan: array<atomic<u32>>;
@group(0) @binding(6) var<storage, read_write> sorted: array<vec2<u32>>;
@group(0) @binding(7) var<storage, read_write> blocks: array<vec4<u32>>;

const LEAF: u32 = 0x80000000u;

// The fill whose stored keys hold key i.
fn fill_of_key(i: u32) -> u32 {
    var lo = 0u;
    var hi = p.fills;
    loop {
        if (hi - lo <= 1u) {
            break;
        }
        let mid = (lo + hi) / 2u;
        if (fills[mid].stored <= i) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    return lo;
}

// Each key's leaf, and the leaves' key counts.
@compute @workgroup_size(256)
fn classify(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let i = flat_group(wg) * 256u + li;
    if (i >= p.keys) {
        return;
    }
    let f = fills[fill_of_key(i)];
    let k = keys[i] & f.live;
    var node = tree[f.root];
    loop {
        if ((node.x & LEAF) != 0u) {
            break;
        }
        node = tree[select(node.y, node.z, has_bit(k, node.x))];
    }
    let leaf = node.x & ~LEAF;
    leaf_of[i] = leaf;
    atomicAdd(&scan[p.leaf_keys + leaf], 1u);
}

// Keys grouped by leaf (in no particular order within a leaf).
@compute @workgroup_size(256)
fn scatter(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let i = flat_group(wg) * 256u + li;
    if (i >= p.keys) {
        return;
    }
    let leaf = leaf_of[i];
    let at = atomicLoad(&scan[p.leaf_keys + leaf]) + atomicAdd(&scan[p.leaf_cursor + leaf], 1u);
    sorted[at] = keys[i];
}

// Each leaf's number of blocks.
@compute @workgroup_size(256)
fn count_blocks(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let l = flat_group(wg) * 256u + li;
    if (l >= p.leaves) {
        return;
    }
    let n = atomicLoad(&scan[p.leaf_keys + l + 1u]) - atomicLoad(&scan[p.leaf_keys + l]);
    atomicStore(&scan[p.leaf_blocks + l], (n + 511u) / 512u);
}

// Each block's keys: (first key, keys, leaf, 0).
@compute @workgroup_size(256)
fn describe_blocks(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let l = flat_group(wg) * 256u + li;
    if (l >= p.leaves) {
        return;
    }
    let first = atomicLoad(&scan[p.leaf_keys + l]);
    let n = atomicLoad(&scan[p.leaf_keys + l + 1u]) - first;
    let b0 = atomicLoad(&scan[p.leaf_blocks + l]);
    for (var b = 0u; b * 512u < n; b = b + 1u) {
        blocks[b0 + b] = vec4<u32>(first + b * 512u, min(512u, n - b * 512u), l, 0u);
    }
}
