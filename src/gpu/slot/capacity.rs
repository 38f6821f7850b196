//! A batch slot's capacity: how much one batch holds of each arena, sized once from a
//! memory budget within what one binding of the device holds, and where each region of
//! its `scan` buffer lies.

use crate::gpu::device::Device;
use crate::gpu::layout::{
    Job, Side, DEST_WORDS, HEAD_WORDS, HELD_KEYS, JOB_SIDE_MASK, SCAN_SEGMENT, SUBTREE_KEYS,
    TABLE_WORDS, TILE_WORDS, TOP_LEVELS, TOP_PARTS, TREE_WORDS, WIDE_KEYS, WIDE_TILE, WIDE_WORDS,
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
    /// The most keys of a subtree's node held in registers (`HELD_KEYS`, at most; tests
    /// set 0 to build every subtree through memory).
    pub(crate) held_keys: u32,
}

impl Capacity {
    /// Room in each top level's list of tree nodes to build (tree.wgsl): the nodes of a
    /// level that go on to the next hold more than `SUBTREE_KEYS` keys each, all disjoint.
    pub(crate) fn level_nodes(&self) -> u32 {
        self.stored.div_ceil(SUBTREE_KEYS) + 1
    }

    /// Room in the list of subtrees: each fill's root, and `TOP_PARTS` per node of a top
    /// level (its pass splits up to `TOP_DEPTH` levels), so that the list never runs out.
    /// Its dispatch lays its workgroups out in rows (`ROW`), so no dispatch bounds it: the
    /// bound of 32,768 it had (one row) was fewer than a batch can make, and a list that runs
    /// out leaves its fills unfinished, their joins cut.
    pub(crate) fn subtrees(&self) -> u32 {
        let nodes = TOP_LEVELS * self.level_nodes();
        self.joins + TOP_PARTS * nodes
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

    /// The capacity of `budget` bytes, each buffer within what one binding of `dev` holds.
    pub(crate) fn of_budget(dev: &Device, budget: u64) -> Self {
        Self::within(binding(dev), budget)
    }

    /// The capacity of `budget` bytes, each buffer within a binding of `bind` bytes (a
    /// binding's limit as a device states it).
    pub(crate) fn of(budget: u64, bind: u64) -> Self {
        Self::within(rounded(bind), budget)
    }

    /// The capacity of `budget` bytes, each buffer within `bind` bytes (a binding's
    /// limit, less the rounding of buffers to 16 bytes: [`binding`]).
    pub(crate) fn within(bind: u64, budget: u64) -> Self {
        let s = &SHARES;
        let n = |share: &Share| share.elements(budget, bind);
        let mut cap = Capacity {
            joins: n(&s.joins),
            jobs: n(&s.jobs),
            sides: n(&s.sides),
            items: n(&s.items),
            words: n(&s.words),
            stored: n(&s.stored),
            queries: n(&s.queries),
            ties: n(&s.ties),
            nodes: n(&s.nodes),
            leaves: n(&s.leaves),
            blocks: n(&s.blocks),
            routes: n(&s.routes),
            wide_keys: WIDE_KEYS,
            held_keys: HELD_KEYS,
        };
        // The jobs' buffer holds one more, their end.
        cap.jobs = cap.jobs.min((bind / JOB_BYTES - 1) as u32);
        // `scan` holds the items' counts beside other regions, in one binding: fewer items
        // where a large budget meets a small binding (a software driver's 128 MiB). Past
        // that, the jobs' destinations and the leaves' blocks, each up to half a binding
        // once their own buffers fill theirs: fewer jobs and leaves.
        while 4 * Regions::new(&cap).end > bind {
            if cap.items > 64 {
                cap.items /= 2;
            } else if cap.jobs.max(cap.leaves) > 64 {
                cap.jobs = (cap.jobs / 2).max(64);
                cap.leaves = (cap.leaves / 2).max(64);
            } else {
                break;
            }
        }
        cap
    }

    /// The largest budget that gives a larger capacity than a smaller one, with buffers
    /// within `bind` bytes ([`binding`]): past it every arena is as large as a binding (or
    /// its own cap) allows, and more bytes would go unused.
    pub(crate) fn most_budget(bind: u64) -> u64 {
        let s = &SHARES;
        [
            s.joins, s.jobs, s.sides, s.items, s.words, s.stored, s.queries, s.ties, s.nodes,
            s.leaves, s.blocks, s.routes,
        ]
        .iter()
        .map(|share| share.full(bind))
        .max()
        .unwrap_or(0)
    }
}

/// What one binding of `dev` holds, less the rounding of a buffer to 16 bytes (a binding's
/// limit need not be a multiple of it).
pub(crate) fn binding(dev: &Device) -> u64 {
    rounded(
        dev.limits
            .max_storage_buffer_binding_size
            .min(dev.limits.max_buffer_size),
    )
}

/// A binding's limit `bind` less the rounding of a buffer to 16 bytes.
fn rounded(bind: u64) -> u64 {
    bind / 16 * 16 - 16
}

/// An arena's share of a slot's budget: its part of it, the bytes one element takes in all
/// the arena's buffers and in its largest one (which one binding holds), and its own cap.
#[derive(Debug, Clone, Copy)]
struct Share {
    part: f64,
    bytes: u64,
    per: u64,
    cap: u32,
}

impl Share {
    const fn new(part: f64, bytes: u64, per: u64) -> Self {
        Share {
            part,
            bytes,
            per,
            cap: u32::MAX >> 2,
        }
    }

    /// This share with a cap of its own.
    const fn at_most(self, cap: u32) -> Self {
        Share { cap, ..self }
    }

    /// The most elements one binding of `bind` bytes holds, within the cap.
    fn most(&self, bind: u64) -> u64 {
        (bind / self.per).min(u64::from(self.cap))
    }

    /// Its elements in a budget of `budget` bytes, with bindings of `bind` bytes.
    fn elements(&self, budget: u64, bind: u64) -> u32 {
        let n = (budget as f64 * self.part) as u64 / self.bytes;
        n.min(self.most(bind)).clamp(64, u64::from(self.cap)) as u32
    }

    /// The budget at which it is as large as it can be.
    fn full(&self, bind: u64) -> u64 {
        ((self.most(bind) * self.bytes) as f64 / self.part).ceil() as u64
    }
}

/// Bytes of a block's table.
const TABLE_BYTES: u64 = 4 * TABLE_WORDS as u64;

/// Each arena's share of a slot: [`Capacity::within`].
struct Shares {
    joins: Share,
    jobs: Share,
    sides: Share,
    items: Share,
    words: Share,
    stored: Share,
    queries: Share,
    ties: Share,
    nodes: Share,
    leaves: Share,
    blocks: Share,
    routes: Share,
}

/// The shares of a slot's budget. They follow what a task of N = 21 and 22 takes (`estimate
/// --gpu --json`'s counters per task, 2026-11-28): tables (25 KB a block), routes and stored
/// keys fill first; jobs, items and queries a fraction of their room; carried words only from
/// N = 24, up to 5.3 million a join at N = 27.
const SHARES: Shares = Shares {
    joins: Share::new(0.004, 96 + 96 + 64 + 16, 96).at_most(1 << 14),
    jobs: Share::new(0.04, JOB_BYTES + 4 * DEST_WORDS as u64, JOB_BYTES),
    // A job names its side in JOB_SIDE_BITS.
    sides: Share::new(0.005, SIDE_BYTES, SIDE_BYTES).at_most(JOB_SIDE_MASK + 1),
    items: Share::new(0.02, 4, 4),
    words: Share::new(0.06, 8, 8),
    stored: Share::new(0.13, 16, 8),
    queries: Share::new(0.04, 8, 8),
    ties: Share::new(0.01, 8, 8),
    nodes: Share::new(0.02, 16, 16),
    leaves: Share::new(0.01, 12, 8),
    blocks: Share::new(0.47, TABLE_BYTES + 16 * BLOCK_INFO + 24, TABLE_BYTES),
    routes: Share::new(0.19, 8, 8),
};

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
        let end = tiles_at + u64::from(TILE_WORDS) * u64::from(cap.tiles());
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::layout::ROW;
    use crate::gpu::slot::Sizes;

    /// Every budget from the smallest `NQUEENS_GPU_SLOT_MIB` takes to the largest a GPU takes
    /// (or the largest it takes at all) gives buffers that one binding holds each, with a
    /// software driver's bindings (128 MiB) and a GPU's (2 and 4 GiB): a budget of 18,880
    /// MiB once made `scan` pass lavapipe's binding, a validation error at the first batch.
    #[test]
    fn every_budget_a_gpu_takes_fits_its_bindings() {
        for bind in [128u64 << 20, 2 << 30, (4 << 30) - 1] {
            let bind = bind / 16 * 16 - 16;
            let most = Capacity::most_budget(bind).min(65_536 << 20);
            let mut mib = 16u64;
            while mib << 20 <= most {
                let cap = Capacity::within(bind, mib << 20);
                let largest = Sizes::of(&cap).largest();
                assert!(largest <= bind, "{mib} MiB in {bind}: {largest} {cap:?}");
                mib = mib * 5 / 4 + 1;
            }
            let cap = Capacity::within(bind, most);
            assert!(
                Sizes::of(&cap).largest() <= bind,
                "{most} in {bind}: {cap:?}"
            );
        }
        // A software driver takes no more than about 19 GiB: past it nothing grows.
        let most = Capacity::most_budget((128 << 20) - 16);
        assert!((16 << 30..65_536 << 20).contains(&most), "{most}");
        let past = Capacity::within((128 << 20) - 16, 2 * most);
        assert_eq!(past, Capacity::within((128 << 20) - 16, most));
    }

    /// The subtrees' list holds every subtree a batch can make (each fill's root, and up to
    /// `TOP_PARTS` from each node of each top level, whose nodes past the first hold more
    /// than `SUBTREE_KEYS` keys each), and one dispatch, in rows, holds a workgroup for each.
    #[test]
    fn the_subtrees_list_holds_all_a_batch_makes() {
        for bind in [128u64 << 20, (4 << 30) - 1] {
            let bind = bind / 16 * 16 - 16;
            for mib in [16u64, 3072, 12_800, 65_536] {
                let cap = Capacity::within(bind, mib << 20);
                let large = cap.stored / (SUBTREE_KEYS + 1);
                let most = cap.joins + TOP_PARTS * TOP_LEVELS * large;
                assert!(cap.subtrees() >= most, "{mib} MiB in {bind}: {cap:?}");
                assert!(cap.subtrees().div_ceil(ROW) <= 65_535, "{cap:?}");
            }
        }
    }
}
