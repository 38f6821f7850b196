//! A batch slot's capacity: how much one batch holds of each arena, sized once from a
//! memory budget within what one binding of the device holds, and where each region of
//! its `scan` buffer lies.

use crate::gpu::device::Device;
use crate::gpu::layout::{
    Job, Side, BLOCK_KEYS, DEST_WORDS, HEAD_WORDS, JOB_SIDE_MASK, SCAN_SEGMENT, SUBTREE_KEYS,
    TABLE_WORDS, TOP_LEVELS, TREE_WORDS, WIDE_KEYS, WIDE_TILE, WIDE_WORDS,
};
use crate::gpu::shader::BLOCK_INFO;

/// Bytes of a job and of a side.
pub(super) const JOB_BYTES: u64 = std::mem::size_of::<Job>() as u64;
pub(super) const SIDE_BYTES: u64 = std::mem::size_of::<Side>() as u64;

/// How much one batch holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Capacity {
    pub(crate) joins: u32,
    pub(crate) jobs: u32,
    pub(crate) sides: u32,
    pub(crate) items: u32,
    /// Carried quarter words.
    pub(crate) words: u32,
    pub(crate) stored: u32,
    pub(crate) queries: u32,
    pub(crate) ties: u32,
    pub(crate) nodes: u32,
    pub(crate) leaves: u32,
    pub(crate) blocks: u32,
    pub(crate) routes: u32,
    /// The most keys of a top-level node partitioned by one workgroup (`WIDE_KEYS`; tests
    /// change it to split more nodes, or none, across workgroups).
    pub(crate) wide_keys: u32,
}

impl Capacity {
    /// Room in each top level's list of tree nodes to build (tree.wgsl): the nodes of a
    /// level that go on to the next hold more than `SUBTREE_KEYS` keys each, all disjoint.
    pub(crate) fn level_nodes(&self) -> u32 {
        self.stored.div_ceil(SUBTREE_KEYS) + 1
    }

    /// Room in the list of subtrees: each fill's root, and two per split of a top level,
    /// within half of what one dispatch takes (appends that race may pass it by a few).
    pub(crate) fn subtrees(&self) -> u32 {
        let splits = TOP_LEVELS * self.level_nodes();
        (self.joins + 2 * splits).min(1 << 15)
    }

    /// Nodes of one top level, each a workgroup of its dispatch: the fills' roots at the
    /// first, a list's room after it.
    pub(crate) fn top_nodes(&self) -> u32 {
        self.joins.max(self.level_nodes())
    }

    /// Room for the tiles of one top level's nodes split across workgroups (tree.wgsl):
    /// their keys, all disjoint, in tiles of `WIDE_TILE`, each node's last one partial.
    pub(crate) fn tiles(&self) -> u32 {
        self.stored.div_ceil(WIDE_TILE) + self.stored / self.wide_keys.max(1) + 1
    }

    /// Room in the list of leaves of two blocks (tree.wgsl): each holds more than a block's
    /// keys, all disjoint.
    pub(crate) fn pairs(&self) -> u32 {
        self.stored / (BLOCK_KEYS + 1) + 1
    }

    /// The capacity of `budget` bytes, each buffer within what one binding of `dev` holds.
    pub(crate) fn of_budget(dev: &Device, budget: u64) -> Self {
        let bind = dev
            .limits
            .max_storage_buffer_binding_size
            .min(dev.limits.max_buffer_size);
        Self::of(budget, bind)
    }

    /// The capacity of `budget` bytes, each buffer within a binding of `bind` bytes.
    pub(crate) fn of(budget: u64, bind: u64) -> Self {
        // Each arena's share of the budget, in elements of `bytes` bytes, within a binding
        // of `per` bytes per element.
        // A binding's limit need not be a multiple of the 16 bytes buffers are rounded to.
        let bind = bind / 16 * 16 - 16;
        let share = |part: f64, bytes: u64, per: u64| -> u32 {
            let n = (budget as f64 * part) as u64 / bytes;
            n.min(bind / per).clamp(64, u64::from(u32::MAX >> 2)) as u32
        };
        let table_bytes = 4 * u64::from(TABLE_WORDS);
        // The shares follow what a task of N = 21 and 22 takes (`estimate --gpu --json`'s
        // counters per task, 2026-11-28): tables (25 KB a block), routes and stored keys
        // fill first; jobs, items and queries a fraction of their room; carried words only
        // from N = 24, up to 5.3 million a join at N = 27.
        let blocks = share(0.47, table_bytes + 16 * BLOCK_INFO + 24, table_bytes);
        let mut cap = Capacity {
            joins: share(0.004, 96 + 96 + 64 + 16, 96).min(1 << 14),
            jobs: share(0.04, JOB_BYTES + 4 * u64::from(DEST_WORDS), JOB_BYTES),
            // A job names its side in JOB_SIDE_BITS.
            sides: share(0.005, SIDE_BYTES, SIDE_BYTES).min(JOB_SIDE_MASK + 1),
            items: share(0.02, 4, 4),
            words: share(0.06, 8, 8),
            stored: share(0.13, 16, 8),
            queries: share(0.04, 8, 8),
            ties: share(0.01, 8, 8),
            nodes: share(0.02, 16, 16),
            leaves: share(0.01, 12, 8),
            blocks,
            routes: share(0.19, 8, 8),
            wide_keys: WIDE_KEYS,
        };
        // `scan` holds the items' counts beside other regions, in one binding: fewer items
        // where a large budget meets a small binding (a software driver's 128 MiB).
        while 4 * Regions::new(&cap).end > bind && cap.items > 64 {
            cap.items /= 2;
        }
        cap
    }
}

/// Where each region of a slot's `scan` buffer starts (u32 words), and its length.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Regions {
    pub(crate) items_at: u32,
    pub(crate) dest_at: u32,
    pub(crate) leaf_blocks_at: u32,
    pub(crate) block_routes_at: u32,
    pub(crate) block_cursor_at: u32,
    pub(crate) ties_at: u32,
    pub(crate) tree_at: u32,
    pub(crate) wide_at: u32,
    pub(crate) tiles_at: u32,
    pub(crate) end: u64,
}

/// Extra u32 words an in-place scan of `len` values needs after them (its segment sums).
pub(crate) fn scan_scratch(len: u64) -> u64 {
    let segment = u64::from(SCAN_SEGMENT);
    if len <= segment {
        0
    } else {
        let segments = len.div_ceil(segment);
        segments + scan_scratch(segments)
    }
}

impl Regions {
    pub(super) fn new(cap: &Capacity) -> Self {
        let items = u64::from(cap.items) + 1;
        let blocks = u64::from(cap.blocks) + 1;
        let items_at = u64::from(HEAD_WORDS);
        let dest_at = items_at + items + scan_scratch(items);
        let leaf_blocks_at = dest_at + u64::from(DEST_WORDS * cap.jobs) + 1;
        let block_routes_at = leaf_blocks_at + u64::from(cap.leaves) + 1;
        let block_cursor_at = block_routes_at + blocks + scan_scratch(blocks);
        let ties_at = block_cursor_at + blocks;
        let tree_at = ties_at + 4 * u64::from(cap.joins);
        let wide_at = tree_at + u64::from(TREE_WORDS * cap.joins);
        let tiles_at = wide_at + u64::from(WIDE_WORDS) * u64::from(cap.top_nodes());
        let end = tiles_at + 2 * u64::from(cap.tiles());
        let w = |x: u64| u32::try_from(x).expect("a slot's scan regions fit 2^32 words");
        Regions {
            items_at: w(items_at),
            dest_at: w(dest_at),
            leaf_blocks_at: w(leaf_blocks_at),
            block_routes_at: w(block_routes_at),
            block_cursor_at: w(block_cursor_at),
            ties_at: w(ties_at),
            tree_at: w(tree_at),
            wide_at: w(wide_at),
            tiles_at: w(tiles_at),
            end,
        }
    }
}
