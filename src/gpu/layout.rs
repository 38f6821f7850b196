//! What the host and the kernels share, defined once: the structs a batch uploads (as
//! `#[repr(C)]` types whose WGSL twins are `shaders/types.wgsl`; a test checks the two lay
//! out alike), and the constants every shader reads, written into the shader text from
//! here ([`prelude`]).

use bytemuck::{Pod, Zeroable};

/// Invocations of every workgroup of the batch's kernels (`@workgroup_size(GROUP_SIZE)`):
/// their workgroup arrays, strides and reductions are sized by it.
pub(crate) const GROUP_SIZE: u32 = 256;
/// Workgroups per row of a dispatch: a dimension holds at most 65,535 of them.
pub(crate) const ROW: u32 = 32768;
/// Values of one segment of an in-place scan (scan.wgsl): four an invocation.
pub(crate) const SCAN_SEGMENT: u32 = 4 * GROUP_SIZE;
/// Keys of one bit-sliced block.
pub(crate) const BLOCK_KEYS: u32 = 512;
// The table build takes two keys of a block an invocation (tables.wgsl).
const _: () = assert!(BLOCK_KEYS == 2 * GROUP_SIZE);
/// A tree node's tag for a leaf (the rest of its first word is the leaf's number).
pub(crate) const LEAF: u32 = 0x8000_0000;
/// Words of the chunk tables in a block's tables (12 chunks of 32 entries of 16 words);
/// the block's key sets follow them: the exception set, then each class's.
pub(crate) const CHUNK_WORDS: u32 = 12 * 512;
/// Words of a row pair of the chunk tables: two chunks' 32 entries of 16 words, side by
/// side (the bank swizzle, count.wgsl).
pub(crate) const PAIR_WORDS: u32 = 2 * 512;
// The block count loads a block's row pairs four words an invocation a round, with no test
// of the end (count.wgsl).
const _: () = assert!(PAIR_WORDS.is_multiple_of(4 * GROUP_SIZE));
/// Words of one block's tables: its chunk tables and key sets (tables.wgsl).
pub(crate) const TABLE_WORDS: u32 = CHUNK_WORDS + 16 + 4 * 16;
/// East tied halves a ties workgroup takes (its loop stays below the driver's 65,535).
pub(crate) const TIE_EAST: u32 = 4096;
/// South words per work item of the half join.
pub(crate) const TILE: u32 = 32;
/// Key bits that carry a half's class (0..3) on the GPU: no key of any board the engine
/// takes reaches them (N = 28: 54 diagonal bits, 3 tags and 4 marks, bits 0..60).
pub(crate) const CLASS_SHIFT: u32 = 61;
/// Bits of a job's `side_tag` that name its side ([`Job::side_tag`]): a batch holds at most
/// 2^22 sides ([`Capacity`](super::slot::Capacity)).
pub(crate) const JOB_SIDE_BITS: u32 = 22;
/// The side's bits of a job's `side_tag`.
pub(crate) const JOB_SIDE_MASK: u32 = (1 << JOB_SIDE_BITS) - 1;
/// Bits of a job's tag, above its side in `side_tag`: the transposes' 3 tag and 4 mark bits.
pub(crate) const JOB_TAG_BITS: u32 = 7;
/// Where a job's class starts in its `side_tag` (two bits, above its tag).
pub(crate) const JOB_CLASS_SHIFT: u32 = 30;

/// A side's role in its join: the stored candidates (west), the queries (east), and the
/// tied halves of each (even N's transposes).
pub(crate) const ROLE_WEST: u32 = 0;
pub(crate) const ROLE_EAST: u32 = 1;
pub(crate) const ROLE_TIED_WEST: u32 = 2;
pub(crate) const ROLE_TIED_EAST: u32 = 3;

/// [`JoinDesc::flags`]: the east side may be stored where the west one is smaller and
/// fits; the join has tied halves; a west side past one fill is refused (not counted); the
/// join stores only a portion of its stored side, keys `lo` to `lo + cap` in the CPU's
/// order (a side past a fill is stored a portion at a time, as the CPU stores it), and that
/// side is the east one.
pub(crate) const JOIN_SWAP: u32 = 1;
pub(crate) const JOIN_TIES: u32 = 2;
pub(crate) const JOIN_REFUSE: u32 = 4;
pub(crate) const JOIN_PORTION: u32 = 8;
pub(crate) const JOIN_EAST_STORED: u32 = 16;

/// A fill's status: a side without halves (the join counts 0); the stored side too large
/// for one fill, refused or to be cut into portions; no room left in the batch for its
/// keys, blocks or routes (redone in a later batch); its tree not finished (a list of
/// nodes to build ran out of room, or a software driver stopped a subtree's loops: the join
/// is cut); a software driver stopped a block count workgroup that met its routes, and
/// maybe other fills' (redone alone in a batch, then cut). Any of these is an error bit.
pub(crate) const FILL_EMPTY: u32 = 1;
pub(crate) const FILL_REFUSED: u32 = 2;
pub(crate) const FILL_TOO_LARGE: u32 = 4;
pub(crate) const FILL_OVER_KEYS: u32 = 8;
pub(crate) const FILL_OVER_BLOCKS: u32 = 16;
pub(crate) const FILL_OVER_ROUTES: u32 = 32;
pub(crate) const FILL_UNFINISHED: u32 = 64;
pub(crate) const FILL_STOPPED: u32 = 128;
pub(crate) const FILL_ERRORS: u32 = 0xffff;
/// Not an error: the east side is stored.
pub(crate) const FILL_SWAPPED: u32 = 0x1_0000;
/// Not an error either: above this shift, the bit its tree's root split on, plus one (0:
/// the root did not split), so that a join past a batch's blocks is split as
/// its tree splits it.
pub(crate) const FILL_ROOT_SHIFT: u32 = 24;

/// A job's destination: arena (`DEST_*`) above `DEST_SHIFT`, offset below.
pub(crate) const DEST_SHIFT: u32 = 30;
pub(crate) const DEST_STORED: u32 = 0;
pub(crate) const DEST_QUERIES: u32 = 1;
pub(crate) const DEST_TIES: u32 = 2;
pub(crate) const DEST_NONE: u32 = 3;

/// Words per job of the destinations region of `scan`: where its first key kept goes
/// (`DEST_*` and offset), how many of its keys are skipped first and how many are kept
/// after them (all but a portion's stored keys: none and all).
pub(crate) const DEST_WORDS: u32 = 3;

/// Words per join of the ties region of `scan`: first tied half, west ones, east ones,
/// first workgroup.
pub(crate) const TIE_WORDS: u32 = 4;

/// A join's row of results: weighted count and hits (64-bit), routing tests (64-bit), the
/// four sides' keys (west, east, tied west, tied east), blocks, routes and status.
pub(crate) const RESULT_WORDS: u32 = 13;
pub(crate) const RESULT_WEIGHTED: u32 = 0;
pub(crate) const RESULT_HITS: u32 = 2;
pub(crate) const RESULT_TESTS: u32 = 4;
pub(crate) const RESULT_SIZES: u32 = 6;
pub(crate) const RESULT_BLOCKS: u32 = 10;
pub(crate) const RESULT_ROUTES: u32 = 11;
pub(crate) const RESULT_STATUS: u32 = 12;

/// The header of `scan`: the batch's queries, blocks, routes and tie workgroups, the room
/// the routing workgroups' histograms have taken (route.wgsl), the lengths of the lists of
/// tree nodes to build (tree.wgsl: top levels 1 to `TOP_LEVELS - 1`, the subtrees, and the
/// leaves of two blocks), and the tiles each top level hands out to split its largest
/// nodes across workgroups.
pub(crate) const HEAD_QUERIES: u32 = 0;
pub(crate) const HEAD_BLOCKS: u32 = 1;
pub(crate) const HEAD_ROUTES: u32 = 2;
pub(crate) const HEAD_TIE_GROUPS: u32 = 3;
pub(crate) const HEAD_KEPT: u32 = 5;
pub(crate) const HEAD_LISTS: u32 = 16;
pub(crate) const HEAD_TILES: u32 = HEAD_LISTS + TOP_LEVELS;
pub(crate) const HEAD_WORDS: u32 = HEAD_TILES + TOP_LEVELS;
// `join_sizes` zeroes the header a word an invocation (plan.wgsl).
const _: () = assert!(HEAD_WORDS <= GROUP_SIZE);

/// The indirect dispatch arguments (three words each, in a buffer of their own) of
/// routing, tables, the block count, ties, and the tree's subtrees.
pub(crate) const ARGS_ROUTE: u32 = 0;
pub(crate) const ARGS_TABLES: u32 = 4;
pub(crate) const ARGS_COUNT: u32 = 8;
pub(crate) const ARGS_TIES: u32 = 12;
pub(crate) const ARGS_SUBTREES: u32 = 16;
pub(crate) const ARGS_WORDS: u32 = 20;

/// The most top levels of a tree a batch builds level by level (tree.wgsl): the lists
/// of nodes to build are those of levels 1 to `TOP_LEVELS - 1`, then the subtrees'.
pub(crate) const TOP_LEVELS: u32 = 16;
/// The most keys of a node built within one subtree's workgroup (tree.wgsl): larger ones
/// are split level by level, a workgroup each. Small enough for a software driver's loop
/// limit (a subtree of 16,384 keys stays well within lavapipe's 65,535 iterations).
pub(crate) const SUBTREE_KEYS: u32 = 1 << 14;
/// The most keys of a node one workgroup partitions at a top level that splits its large
/// nodes across workgroups (tree.wgsl, `wide_*`): a larger one is partitioned in tiles of
/// `WIDE_TILE` keys, a workgroup each, in two dispatches. Not tuned on a GPU: one
/// workgroup reads a node of this size twice over (some 1,000 loads an invocation), long
/// against the two steps it takes to spread the node instead.
pub(crate) const WIDE_KEYS: u32 = 1 << 17;
/// The most keys of a subtree's node built with its keys held in registers (subtrees.wgsl),
/// `HELD_EACH` an invocation: read once, written once, the partitions below it renumbering
/// them. More an invocation would spill a GPU's registers (it holds 16 sampled queries too).
pub(crate) const HELD_EACH: u32 = 16;
pub(crate) const HELD_KEYS: u32 = HELD_EACH * GROUP_SIZE;
/// The tree's levels one top pass splits (top.wgsl: a node, and its large children and
/// theirs, with one move of its keys), the parts it moves keys into, and the keys it samples
/// by stride to choose them (512 a node of the deepest level, on average). A pass reads and
/// writes each key of its node three times at the memory's rate whatever its depth, so a
/// deeper pass moves a key fewer times down to its subtree: four levels a pass priced N =
/// 28 at 4,419 H100-hours by the span, three 4,563 and five 4,637 (fewer moves still, but
/// a costlier sieve by the model).
pub(crate) const TOP_DEPTH: u32 = 4;
pub(crate) const TOP_PARTS: u32 = 1 << TOP_DEPTH;
pub(crate) const TOP_SAMPLE: u32 = 512 << TOP_DEPTH;
/// A pass's part counts, four to a vector (top.wgsl's `Parts`), and packed two to a word,
/// four words to a vector (wide.wgsl's `Packed`).
pub(crate) const TOP_QUADS: u32 = TOP_PARTS / 4;
pub(crate) const PACKED_QUADS: u32 = TOP_PARTS / 8;
/// The nodes of one depth of a pass whose sampled bits one read of the sample counts (the
/// tree's `bits` holds four nodes'): a depth of more nodes reads its sample again for each
/// four.
pub(crate) const TOP_GROUP: u32 = 4;
/// The levels of the root's pass whose cuts a results row carries where its tree stopped
/// past the room (a byte each in two words: seven cuts), and the parts the host splits it
/// into at most in one round.
pub(crate) const ROOT_DEPTH: u32 = 3;
pub(crate) const ROOT_PARTS: u32 = 1 << ROOT_DEPTH;
/// Keys of one tile of a node split across workgroups: 16 an invocation.
pub(crate) const WIDE_TILE: u32 = 4096;
/// Words per node of a level's region of wide splits in `scan`: its first tile, its tiles
/// (0: not split across workgroups), and its pass's cuts and their slots (top.wgsl:
/// `TOP_PARTS` each, a heap's nodes from 1).
pub(crate) const WIDE_WORDS: u32 = 2 + 2 * TOP_PARTS;
pub(crate) const WIDE_FIRST: u32 = 0;
pub(crate) const WIDE_TILES: u32 = 1;
pub(crate) const WIDE_CUTS: u32 = 2;
pub(crate) const WIDE_SLOTS: u32 = 2 + TOP_PARTS;
/// Words per tile of a wide node: its node's number in the level, then the keys of each
/// part of the node's pass in it, two to a word (a tile's keys fit in 16 bits).
pub(crate) const TILE_WORDS: u32 = 1 + TOP_PARTS / 2;
const _: () =
    assert!(TOP_PARTS.is_multiple_of(8) && ROOT_DEPTH <= TOP_DEPTH && WIDE_TILE < 1 << 16);
/// Each fill's tree counters in `scan`: nodes, leaves and blocks handed out, leaf slots
/// reserved, whether its tree is unfinished, the keys and sampled queries its build read
/// (64-bit, low word first), and its root's bit plus one (0: the root did not split).
pub(crate) const TREE_NODES: u32 = 0;
pub(crate) const TREE_LEAVES: u32 = 1;
pub(crate) const TREE_BLOCKS: u32 = 2;
pub(crate) const TREE_RESERVED: u32 = 3;
pub(crate) const TREE_UNFINISHED: u32 = 4;
pub(crate) const TREE_TESTS: u32 = 5;
pub(crate) const TREE_ROOT: u32 = 7;
pub(crate) const TREE_WORDS: u32 = 8;
/// `TREE_UNFINISHED`'s mark of a tree its root's pass stopped: its keys pass the batch's
/// blocks' room whatever their tree (top.wgsl), so building the rest would be wasted.
pub(crate) const TREE_PAST_ROOM: u32 = 2;
/// Keys a block of a built tree holds, at most on average, for that stop: blocks hold
/// `BLOCK_KEYS`, but a leaf's last block is partial (N = 28's trees averaged 395 to 430).
/// A root above this times the blocks' room stops; one that would just have fitted is
/// split, and costs a half join more, against a tree built in vain.
pub(crate) const PAST_ROOM_KEYS: u32 = BLOCK_KEYS / 8 * 7;
/// The mark of a results row that carries its root pass's cuts (a tree stopped past the
/// room), in the top bit of its second tests word.
pub(crate) const ROOT_CUTS_MARK: u32 = 0x8000_0000;

/// Workgroups that place one fill's blocks (`place_blocks`, plan.wgsl), each a run of its
/// leaves: one alone walked a fill of 35,000 blocks in 139 rounds of barriers.
pub(crate) const PLACE_GROUPS: u32 = 8;

/// A job's word offset that points into the words its batch carries rather than the
/// resident ones.
pub(crate) const CARRIED: u32 = 1 << 31;

/// No fill (a query past the batch's).
pub(crate) const NO_FILL: u32 = u32::MAX;

/// The constants above as WGSL `const` declarations, for the start of every module.
pub(crate) fn prelude() -> String {
    let consts: &[(&str, u32)] = &[
        ("GROUP_SIZE", GROUP_SIZE),
        ("ROW", ROW),
        ("SCAN_SEGMENT", SCAN_SEGMENT),
        ("BLOCK_KEYS", BLOCK_KEYS),
        ("PLACE_GROUPS", PLACE_GROUPS),
        ("LEAF", LEAF),
        ("TABLE_WORDS", TABLE_WORDS),
        ("TIE_EAST", TIE_EAST),
        ("ROLE_WEST", ROLE_WEST),
        ("ROLE_EAST", ROLE_EAST),
        ("ROLE_TIED_WEST", ROLE_TIED_WEST),
        ("ROLE_TIED_EAST", ROLE_TIED_EAST),
        ("JOIN_SWAP", JOIN_SWAP),
        ("JOIN_TIES", JOIN_TIES),
        ("JOIN_REFUSE", JOIN_REFUSE),
        ("JOIN_PORTION", JOIN_PORTION),
        ("JOIN_EAST_STORED", JOIN_EAST_STORED),
        ("FILL_EMPTY", FILL_EMPTY),
        ("FILL_REFUSED", FILL_REFUSED),
        ("FILL_TOO_LARGE", FILL_TOO_LARGE),
        ("FILL_OVER_KEYS", FILL_OVER_KEYS),
        ("FILL_OVER_BLOCKS", FILL_OVER_BLOCKS),
        ("FILL_OVER_ROUTES", FILL_OVER_ROUTES),
        ("FILL_UNFINISHED", FILL_UNFINISHED),
        ("FILL_STOPPED", FILL_STOPPED),
        ("FILL_ERRORS", FILL_ERRORS),
        ("FILL_SWAPPED", FILL_SWAPPED),
        ("FILL_ROOT_SHIFT", FILL_ROOT_SHIFT),
        ("DEST_SHIFT", DEST_SHIFT),
        ("DEST_OFFSET", (1 << DEST_SHIFT) - 1),
        ("DEST_STORED", DEST_STORED),
        ("DEST_QUERIES", DEST_QUERIES),
        ("DEST_TIES", DEST_TIES),
        ("DEST_NONE", DEST_NONE),
        ("DEST_WORDS", DEST_WORDS),
        ("TIE_WORDS", TIE_WORDS),
        ("RESULT_WORDS", RESULT_WORDS),
        ("RESULT_WEIGHTED", RESULT_WEIGHTED),
        ("RESULT_HITS", RESULT_HITS),
        ("RESULT_TESTS", RESULT_TESTS),
        ("RESULT_SIZES", RESULT_SIZES),
        ("RESULT_BLOCKS", RESULT_BLOCKS),
        ("RESULT_ROUTES", RESULT_ROUTES),
        ("RESULT_STATUS", RESULT_STATUS),
        ("HEAD_QUERIES", HEAD_QUERIES),
        ("HEAD_BLOCKS", HEAD_BLOCKS),
        ("HEAD_ROUTES", HEAD_ROUTES),
        ("HEAD_TIE_GROUPS", HEAD_TIE_GROUPS),
        ("HEAD_KEPT", HEAD_KEPT),
        ("HEAD_WORDS", HEAD_WORDS),
        ("ARGS_ROUTE", ARGS_ROUTE),
        ("ARGS_TABLES", ARGS_TABLES),
        ("ARGS_COUNT", ARGS_COUNT),
        ("ARGS_TIES", ARGS_TIES),
        ("ARGS_SUBTREES", ARGS_SUBTREES),
        ("HEAD_LISTS", HEAD_LISTS),
        ("HEAD_TILES", HEAD_TILES),
        ("WIDE_TILE", WIDE_TILE),
        ("WIDE_WORDS", WIDE_WORDS),
        ("WIDE_SLOTS", WIDE_SLOTS),
        ("WIDE_FIRST", WIDE_FIRST),
        ("WIDE_TILES", WIDE_TILES),
        ("WIDE_CUTS", WIDE_CUTS),
        ("TOP_DEPTH", TOP_DEPTH),
        ("TOP_PARTS", TOP_PARTS),
        ("TOP_SAMPLE", TOP_SAMPLE),
        ("TOP_QUADS", TOP_QUADS),
        ("PACKED_QUADS", PACKED_QUADS),
        ("TOP_GROUP", TOP_GROUP),
        ("ROOT_PARTS", ROOT_PARTS),
        ("TILE_WORDS", TILE_WORDS),
        ("TOP_LEVELS", TOP_LEVELS),
        ("SUBTREE_KEYS", SUBTREE_KEYS),
        ("HELD_EACH", HELD_EACH),
        ("TREE_NODES", TREE_NODES),
        ("TREE_LEAVES", TREE_LEAVES),
        ("TREE_BLOCKS", TREE_BLOCKS),
        ("TREE_RESERVED", TREE_RESERVED),
        ("TREE_UNFINISHED", TREE_UNFINISHED),
        ("TREE_TESTS", TREE_TESTS),
        ("TREE_ROOT", TREE_ROOT),
        ("TREE_WORDS", TREE_WORDS),
        ("TREE_PAST_ROOM", TREE_PAST_ROOM),
        ("PAST_ROOM_KEYS", PAST_ROOM_KEYS),
        ("ROOT_CUTS_MARK", ROOT_CUTS_MARK),
        ("NO_FILL", NO_FILL),
        ("CARRIED", CARRIED),
        ("CLASS_SHIFT", CLASS_SHIFT),
        ("JOB_SIDE_BITS", JOB_SIDE_BITS),
        ("JOB_SIDE_MASK", JOB_SIDE_MASK),
        ("JOB_TAG_BITS", JOB_TAG_BITS),
        ("JOB_CLASS_SHIFT", JOB_CLASS_SHIFT),
    ];
    let mut out = String::from("// Written by the host (src/gpu/layout.rs).\n");
    for (name, value) in consts {
        out.push_str(&format!("const {name}: u32 = {value}u;\n"));
    }
    out
}

/// One job of the half join (`Job` in types.wgsl).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Pod, Zeroable)]
pub(crate) struct Job {
    pub(crate) north: u32,
    pub(crate) north_len: u32,
    pub(crate) south: u32,
    pub(crate) south_len: u32,
    pub(crate) first_item: u32,
    /// Its side (the low [`JOB_SIDE_BITS`]), tag and class: [`Job::side_tag`].
    pub(crate) side_tag: u32,
}

impl Job {
    /// A job's `side_tag`: its side in the batch's `sides`, the tag its keys carry (at their
    /// side's `tag_at`: the transposes' tag and mark bits, [`JOB_TAG_BITS`] of them) and
    /// its class. A side's fixed key bits are the side's, so that a job is 24 bytes, not 32:
    /// jobs are most of what a batch uploads.
    pub(crate) fn side_tag(side: u32, tag: u32, class: u32) -> u32 {
        debug_assert!(side < 1 << JOB_SIDE_BITS && tag < 1 << JOB_TAG_BITS && class < 4);
        side | tag << JOB_SIDE_BITS | class << JOB_CLASS_SHIFT
    }

    /// Its side in the batch's `sides`.
    pub(crate) fn side(&self) -> u32 {
        self.side_tag & JOB_SIDE_MASK
    }

    /// This job of side `side` instead (the same tag and class).
    pub(crate) fn on_side(self, side: u32) -> Job {
        Job {
            side_tag: Job::side_tag(side, 0, 0) | (self.side_tag & !JOB_SIDE_MASK),
            ..self
        }
    }

    /// South tiles, and so items per north word.
    pub(crate) fn tiles(&self) -> u32 {
        self.south_len.div_ceil(TILE)
    }

    /// Work items.
    pub(crate) fn items(&self) -> u64 {
        u64::from(self.north_len) * u64::from(self.tiles())
    }

    /// Word pairs the job tests (at least its keys).
    pub(crate) fn pairs(&self) -> u64 {
        u64::from(self.north_len) * u64::from(self.south_len)
    }
}

/// What the jobs of one side of a join share (`Side` in types.wgsl).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Pod, Zeroable)]
pub(crate) struct Side {
    pub(crate) forbid: [u32; 2],
    pub(crate) exact_mask: [u32; 2],
    pub(crate) exact_bits: [u32; 2],
    /// Key bits every half of the side carries (its fixed diagonals).
    pub(crate) extra: [u32; 2],
    pub(crate) join: u32,
    pub(crate) role: u32,
    /// The first key bit of its jobs' tags.
    pub(crate) tag_at: u32,
    pub(crate) pad: u32,
}

/// One join of a batch (`JoinDesc` in types.wgsl).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Pod, Zeroable)]
pub(crate) struct JoinDesc {
    pub(crate) jobs: [u32; 4],
    pub(crate) jobs_end: u32,
    pub(crate) flags: u32,
    pub(crate) cap: u32,
    /// A portion's first stored key ([`JOIN_PORTION`]).
    pub(crate) lo: u32,
    pub(crate) factors: [u32; 4],
    pub(crate) live: [u32; 2],
    pub(crate) below: [u32; 2],
    pub(crate) marks: [[u32; 2]; 4],
}

/// A join's sieve fill as the kernels lay it out (`Fill` in types.wgsl): the host only
/// reads it, in tests.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Pod, Zeroable)]
pub(crate) struct Fill {
    pub(crate) stored: u32,
    pub(crate) stored_end: u32,
    pub(crate) queries: u32,
    pub(crate) queries_end: u32,
    pub(crate) root: u32,
    pub(crate) tree_end: u32,
    pub(crate) leaf_base: u32,
    pub(crate) leaves: u32,
    pub(crate) block_base: u32,
    pub(crate) blocks: u32,
    pub(crate) pad0: u32,
    pub(crate) status: u32,
    pub(crate) live: [u32; 2],
    pub(crate) node_cap: u32,
    pub(crate) leaf_cap: u32,
    pub(crate) stored_w: [u32; 4],
    pub(crate) query_w: [u32; 4],
}

/// Where a batch's data lies and how much room there is (`Batch` in types.wgsl).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Pod, Zeroable)]
pub(crate) struct Batch {
    pub(crate) joins: u32,
    pub(crate) jobs: u32,
    pub(crate) items: u32,
    pub(crate) tile: u32,
    pub(crate) items_at: u32,
    pub(crate) dest_at: u32,
    pub(crate) leaf_blocks_at: u32,
    pub(crate) block_routes_at: u32,
    pub(crate) block_cursor_at: u32,
    pub(crate) ties_at: u32,
    pub(crate) result_stats: u32,
    pub(crate) tree_at: u32,
    pub(crate) stored_cap: u32,
    pub(crate) queries_cap: u32,
    pub(crate) ties_cap: u32,
    pub(crate) level_cap: u32,
    pub(crate) node_cap: u32,
    pub(crate) leaf_cap: u32,
    pub(crate) block_cap: u32,
    pub(crate) route_cap: u32,
    pub(crate) leaf_keys: u32,
    pub(crate) key_sample: u32,
    pub(crate) query_sample: u32,
    pub(crate) level: u32,
    pub(crate) top_levels: u32,
    pub(crate) subtree_cap: u32,
    /// At this top level, nodes of more than `wide` keys are split across workgroups (0:
    /// none are); where its region of wide splits and its tiles lie in `scan`, and room for
    /// its tiles.
    pub(crate) wide: u32,
    pub(crate) wide_at: u32,
    pub(crate) tiles_at: u32,
    pub(crate) tile_cap: u32,
    /// The most keys of a subtree's node held in registers (`HELD_KEYS`; 0: none).
    pub(crate) held: u32,
}

/// A tree node to build (`Node` in types.wgsl): the host only sizes the lists of them.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Pod, Zeroable)]
pub(crate) struct Node {
    pub(crate) keys: [u32; 2],
    pub(crate) node: u32,
    pub(crate) next: u32,
    pub(crate) used: [u32; 2],
    pub(crate) taken: [u32; 2],
    pub(crate) fill: u32,
    pub(crate) pad: u32,
}

/// One dispatch of an in-place scan of `scan`'s words (`ScanParams` in types.wgsl).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Pod, Zeroable)]
pub(crate) struct ScanParams {
    /// The range's first word.
    pub(crate) off: u32,
    /// Its words.
    pub(crate) len: u32,
    /// Where its segment sums go (`reduce`) or come from (`down`).
    pub(crate) sums: u32,
    pub(crate) pad: u32,
}

/// A 64-bit value as the two u32 words of a WGSL `vec2<u32>` (low first).
pub(crate) fn split(x: u64) -> [u32; 2] {
    [x as u32, (x >> 32) as u32]
}

/// The 64-bit value at word `at` of a results row (two words, low first: [`split`]'s).
pub(crate) fn wide(row: &[u32], at: u32) -> u64 {
    unsplit([row[at as usize], row[at as usize + 1]])
}

/// The 64-bit value of two words, low first: the inverse of [`split`].
pub(crate) fn unsplit(w: [u32; 2]) -> u64 {
    u64::from(w[0]) | u64::from(w[1]) << 32
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A struct's name, size and (field, offset) pairs, in order.
    macro_rules! layout {
        ($t:ident; $($f:ident),+) => {
            (
                stringify!($t),
                std::mem::size_of::<$t>(),
                vec![$((stringify!($f), std::mem::offset_of!($t, $f))),+],
            )
        };
    }

    /// A job moved to another side keeps its tag and class, and a side of the most bits
    /// leaves them alone.
    #[test]
    fn a_jobs_side_tag_and_class_come_apart_as_they_went_in() {
        let job = Job {
            side_tag: Job::side_tag(5, 0b101_0011, 3),
            ..Job::default()
        };
        let moved = job.on_side(JOB_SIDE_MASK);
        assert_eq!(moved.side(), JOB_SIDE_MASK);
        let (tag, class) = (
            moved.side_tag >> JOB_SIDE_BITS,
            moved.side_tag >> JOB_CLASS_SHIFT,
        );
        assert_eq!((tag & 0x7f, class), (0b101_0011, 3));
        assert_eq!(moved.on_side(5), job);
    }

    /// Each struct's WGSL twin, by naga's layouter: the same size, fields and offsets.
    #[test]
    fn the_host_structs_lay_out_as_their_wgsl_twins() {
        let source = format!("{}{}", prelude(), include_str!("shaders/types.wgsl"));
        let module = naga::front::wgsl::parse_str(&source).expect("types.wgsl parses");
        let mut layouter = naga::proc::Layouter::default();
        layouter
            .update(module.to_ctx())
            .expect("types.wgsl lays out");
        let rust = [
            layout!(Job; north, north_len, south, south_len, first_item, side_tag),
            layout!(Side; forbid, exact_mask, exact_bits, extra, join, role, tag_at, pad),
            layout!(JoinDesc; jobs, jobs_end, flags, cap, lo, factors, live, below, marks),
            layout!(Fill; stored, stored_end, queries, queries_end, root, tree_end, leaf_base,
                leaves, block_base, blocks, pad0, status, live, node_cap, leaf_cap, stored_w,
                query_w),
            layout!(Batch; joins, jobs, items, tile, items_at, dest_at, leaf_blocks_at,
                block_routes_at, block_cursor_at, ties_at, result_stats, tree_at, stored_cap,
                queries_cap, ties_cap, level_cap, node_cap, leaf_cap, block_cap, route_cap,
                leaf_keys, key_sample, query_sample, level, top_levels, subtree_cap, wide,
                wide_at, tiles_at, tile_cap, held),
            layout!(Node; keys, node, next, used, taken, fill, pad),
            layout!(ScanParams; off, len, sums, pad),
        ];
        for (name, size, fields) in rust {
            let (handle, ty) = module
                .types
                .iter()
                .find(|(_, t)| t.name.as_deref() == Some(name))
                .unwrap_or_else(|| panic!("{name} in types.wgsl"));
            let naga::TypeInner::Struct { members, span } = &ty.inner else {
                panic!("{name} is a struct");
            };
            assert_eq!(*span as usize, size, "{name}'s size");
            assert_eq!(layouter[handle].size as usize, size, "{name}'s size");
            let wgsl: Vec<(&str, usize)> = members
                .iter()
                .map(|m| (m.name.as_deref().unwrap_or(""), m.offset as usize))
                .collect();
            assert_eq!(wgsl, fields, "{name}'s fields");
        }
    }
}
