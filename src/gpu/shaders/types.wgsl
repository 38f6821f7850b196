// The structs the host and every kernel share (the host prepends this file, after the
// constants it writes from Rust; `src/gpu/layout.rs` holds the same structs as `#[repr(C)]`
// types, and a test checks that both lay them out alike).

// One job of the half join: a run of north quarter words × a run of south ones (one column
// split and class of one side of a join).
struct Job {
    north: u32,
    north_len: u32,
    south: u32,
    south_len: u32,
    // The job's first work item (items are (job, north word, tile of south words)).
    first_item: u32,
    // Its side in `sides` (the low JOB_SIDE_BITS), then its keys' tag (JOB_TAG_BITS, put
    // at the side's tag_at) and class (from JOB_CLASS_SHIFT).
    side_tag: u32,
}

// What every job of one side of a join shares.
struct Side {
    forbid: vec2<u32>,
    exact_mask: vec2<u32>,
    exact_bits: vec2<u32>,
    // Bits every half of the side carries (its fixed diagonals).
    extra: vec2<u32>,
    // The join, and the side's role in it (ROLE_*).
    join: u32,
    role: u32,
    // The first key bit of its jobs' tags.
    tag_at: u32,
    pad: u32,
}

// One join of a batch, as the host packs it.
struct JoinDesc {
    // The first job of each role (west, east, tied west, tied east), and past the last.
    jobs: vec4<u32>,
    jobs_end: u32,
    // JOIN_* flags.
    flags: u32,
    // The most stored keys one fill of this join holds; a portion's first stored key
    // (JOIN_PORTION: it stores keys lo to lo + cap of its stored side).
    cap: u32,
    lo: u32,
    // Each west class's weight.
    factors: vec4<u32>,
    // The key bits that count.
    live: vec2<u32>,
    // Even N's tied halves: the key bits compared, and the marks (east First, east Second,
    // west First, west Second).
    below: vec2<u32>,
    marks: array<vec2<u32>, 4>,
}

// One join's sieve fill, as the batch's kernels lay it out on the GPU.
struct Fill {
    // Ranges of the stored and query arenas.
    stored: u32,
    stored_end: u32,
    queries: u32,
    queries_end: u32,
    // The tree's first node and past its last; its first leaf slot and leaves.
    root: u32,
    tree_end: u32,
    leaf_base: u32,
    leaves: u32,
    // The fill's first block and blocks; FILL_* status flags.
    block_base: u32,
    blocks: u32,
    pad0: u32,
    status: u32,
    live: vec2<u32>,
    // Slots reserved for its tree: nodes and leaves.
    node_cap: u32,
    leaf_cap: u32,
    stored_w: vec4<u32>,
    query_w: vec4<u32>,
}

// Where a batch's data lies and how much room there is: the same for every dispatch of a
// batch (the uniform block of each batch kernel). Offsets of `scan` regions are in words.
struct Batch {
    joins: u32,
    jobs: u32,
    items: u32,
    tile: u32,
    // Regions of `scan`: each item's keys (scanned to its first key), each job's
    // destination, each leaf slot's first block, each block's routes (scanned to its first)
    // and cursor, each join's tied halves (TIE_* words).
    items_at: u32,
    dest_at: u32,
    leaf_blocks_at: u32,
    block_routes_at: u32,
    block_cursor_at: u32,
    ties_at: u32,
    // Where the counters start in `results`; each fill's tree counters (TREE_* words) in
    // `scan`.
    result_stats: u32,
    tree_at: u32,
    // Room in each arena, and in each top level's list of nodes to build.
    stored_cap: u32,
    queries_cap: u32,
    ties_cap: u32,
    level_cap: u32,
    node_cap: u32,
    leaf_cap: u32,
    block_cap: u32,
    route_cap: u32,
    // The tree's shape: most keys in a leaf, keys sampled at a node to choose its bit,
    // queries sampled per fill.
    leaf_keys: u32,
    key_sample: u32,
    query_sample: u32,
    // The tree's top level this dispatch builds (tree.wgsl), the top levels recorded, and
    // room in the list of subtrees.
    level: u32,
    top_levels: u32,
    subtree_cap: u32,
    // At this level, nodes of more than `wide` keys are split across workgroups (0: none
    // are); where its wide splits (WIDE_WORDS words per node of the level) and its tiles
    // (TILE_WORDS each: the node's workgroup in the level, then its keys in each of the
    // node's four parts) lie in `scan`; room for its tiles.
    wide: u32,
    wide_at: u32,
    tiles_at: u32,
    tile_cap: u32,
    // The most keys of a subtree's node held in registers (subtrees.wgsl; 0: none).
    held: u32,
}

// A tree node to build (tree.wgsl): its keys (a range of `stored`), its slot, the node a
// walk goes to after its subtree, the bits its path split on, those of them whose child
// with the bit it took (a sampled query with one of them never reaches it), and its fill.
struct Node {
    keys: vec2<u32>,
    node: u32,
    next: u32,
    used: vec2<u32>,
    taken: vec2<u32>,
    fill: u32,
    pad: u32,
}

// One dispatch of an in-place scan (scan.wgsl), over `scan`'s words.
struct ScanParams {
    // First value of the range.
    off: u32,
    // Values in the range.
    len: u32,
    // Where the segment sums go (reduce) or come from (down).
    sums: u32,
    pad: u32,
}
