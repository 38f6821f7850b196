//! How one batch is recorded into a single command buffer: its uploads, every stage, and
//! the copy of its results, with no readback in between (each stage's sizes stay on the
//! GPU: [`crate::gpu::layout`], `plan.wgsl`); and the steps that makes.

use std::sync::Arc;

use super::buffers::{Params, Slot, PASSES, STAT_WORDS};
use super::scan::{run_scan, scan_steps};
use crate::gpu::device::Device;
use crate::gpu::layout::{
    Batch, Job, JoinDesc, Side, ARGS_COUNT, ARGS_ROUTE, ARGS_SUBTREES, ARGS_TABLES, ARGS_TIES,
    ARGS_WORDS, BLOCK_KEYS, GROUP_SIZE, HELD_KEYS, PLACE_GROUPS, RESULT_WORDS, SUBTREE_KEYS, TILE,
    TOP_LEVELS,
};
use crate::gpu::words::Words;

/// Keys sampled at a tree node to choose its bit (as the CPU trie's).
pub(crate) const KEY_SAMPLE: u32 = 512;
/// Queries sampled per fill to choose its tree's bits: half the CPU trie's 8,192, as every
/// node reads them. By `examples/gpu_work` on 13 tasks of N = 20..24 (counters), 4,096 made
/// a third fewer tree tests and the same visits within ±1% but for two tasks (−8%, −2%);
/// 2,048 made up to 3% more visits at N = 24.
pub(crate) const QUERY_SAMPLE: u32 = 4096;
/// Most keys in a tree leaf: one block.
pub(crate) const LEAF_KEYS: u32 = BLOCK_KEYS;

/// Steps a batch records whatever its joins, for the throughput sum (the span model counts
/// them one by one, [`Recording`]): the uploads as one, 15 dispatches (scans of more than
/// one `SCAN_SEGMENT` add two or four), the results' copy and the timestamps' resolve and
/// copy; the tree's top levels come on top ([`batch_steps`]).
pub(crate) const STEPS_PER_BATCH: u64 = 20;

/// The steps of a batch whose trees are built `top_levels` levels from the roots level
/// by level: one dispatch each.
pub(crate) fn batch_steps(top_levels: u32) -> u64 {
    STEPS_PER_BATCH + u64::from(top_levels)
}

/// The steps each top level adds where it splits its largest nodes across workgroups
/// ([`Slot::record`]): their tiles counted, and moved to the other key buffer (each tile
/// summing the counts before it).
pub(crate) const WIDE_STEPS: u64 = 2;

/// What recording a batch gave: the bytes it uploads and its dependent steps (dispatches,
/// copies and the uploads as one), wgpu's own checks of indirect dispatches left out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Recording {
    pub(crate) bytes_up: u64,
    pub(crate) steps: u64,
}

/// One batch as the host packed it: its joins' descriptions, jobs (ending with an empty
/// job whose first item is the number of items), sides and carried words.
#[derive(Debug, Default)]
pub(crate) struct Packed {
    pub(crate) joins: Vec<JoinDesc>,
    pub(crate) jobs: Vec<Job>,
    pub(crate) sides: Vec<Side>,
    pub(crate) words: Vec<u64>,
    pub(crate) items: u32,
    /// The stored keys its largest fill is expected to hold: how many top levels of the
    /// trees are built level by level.
    pub(crate) largest: u64,
    /// The top levels of its trees built one by one, at most [`top_levels`] of `largest`,
    /// and of those, from the roots, the ones that split their nodes of more than the slot's
    /// `wide_keys` across workgroups (the feeder's guesses from the batches before).
    pub(crate) top: u32,
    pub(crate) wide: u32,
    /// Sets of carried quarter words uploaded: a join's, once however many of its parts
    /// follow it in the batch (they share its words).
    pub(crate) word_sets: u64,
    /// The last set added, by its address (its join holds it while the batch packs), and
    /// where it starts in `words`.
    last_words: Option<(usize, u32)>,
}

impl Packed {
    /// Empties it, keeping its room (a batch's words are megabytes: new buffers for each
    /// came in fresh pages).
    pub(crate) fn clear(&mut self) {
        self.joins.clear();
        self.jobs.clear();
        self.sides.clear();
        self.words.clear();
        self.items = 0;
        self.largest = 0;
        self.top = 0;
        self.wide = 0;
        self.word_sets = 0;
        self.last_words = None;
    }

    /// Where `words` start in the batch's carried words if the join added last carries the
    /// same set: the parts of a cut join and the portions of a side come one after another,
    /// and each carries every word of the whole.
    pub(crate) fn shared_words(&self, words: &Arc<Words>) -> Option<u32> {
        let key = Arc::as_ptr(words) as usize;
        self.last_words.filter(|&(k, _)| k == key).map(|(_, at)| at)
    }

    /// Adds `words`, or finds them already added by the join before; returns where they
    /// start.
    pub(crate) fn carry(&mut self, words: &Arc<Words>) -> u32 {
        if let Some(at) = self.shared_words(words) {
            return at;
        }
        let at = self.words.len() as u32;
        self.words.extend_from_slice(words);
        self.word_sets += 1;
        self.last_words = Some((Arc::as_ptr(words) as usize, at));
        at
    }
}

/// The top levels of the trees a batch builds level by level (tree.wgsl), for fills of
/// at most `largest` keys: enough for a node to come down to `SUBTREE_KEYS` keys where
/// splits are as uneven as a third to two thirds, and at least one (the roots).
pub(crate) fn top_levels(largest: u64) -> u32 {
    let halvings = (largest as f64 / f64::from(SUBTREE_KEYS)).log2().max(0.0);
    (1 + (halvings / (1.5f64).log2()).ceil() as u32).min(TOP_LEVELS)
}

impl Slot {
    /// The batch's uniform block for `packed`, for the dispatches of tree level `level`
    /// (the same for every other dispatch).
    fn uniform(&self, packed: &Packed, level: u32) -> Batch {
        let (cap, r) = (&self.cap, &self.regions);
        Batch {
            joins: packed.joins.len() as u32,
            jobs: packed.jobs.len() as u32 - 1,
            items: packed.items,
            tile: TILE,
            items_at: r.items_at,
            dest_at: r.dest_at,
            leaf_blocks_at: r.leaf_blocks_at,
            block_routes_at: r.block_routes_at,
            block_cursor_at: r.block_cursor_at,
            ties_at: r.ties_at,
            result_stats: 0,
            tree_at: r.tree_at,
            stored_cap: cap.stored,
            queries_cap: cap.queries,
            ties_cap: cap.ties,
            level_cap: cap.level_nodes(),
            node_cap: cap.nodes,
            leaf_cap: cap.leaves,
            block_cap: cap.blocks,
            route_cap: cap.routes,
            leaf_keys: LEAF_KEYS,
            key_sample: KEY_SAMPLE,
            query_sample: QUERY_SAMPLE,
            level,
            top_levels: packed.top,
            subtree_cap: cap.subtrees(),
            wide: if level < packed.wide {
                cap.wide_keys
            } else {
                0
            },
            wide_at: r.wide_at,
            tiles_at: r.tiles_at,
            tile_cap: cap.tiles(),
            held: cap.held_keys.min(HELD_KEYS),
        }
    }

    /// Records `packed` into `encoder`: its uploads (through `belt`), every stage, and the
    /// copy of its results rows (and timestamps) for reading; returns the bytes it uploads
    /// and the dependent steps it recorded.
    pub(crate) fn record(
        &self,
        dev: &Device,
        encoder: &mut wgpu::CommandEncoder,
        belt: &mut wgpu::util::StagingBelt,
        packed: &Packed,
    ) -> Recording {
        let b = &self.buffers;
        let mut params = Params::default();
        params.push(bytemuck::bytes_of(&self.uniform(packed, 0)));
        let levels = packed.top;
        let level_params: Vec<u32> = (0..levels)
            .map(|d| match d {
                0 => 0,
                _ => params.push(bytemuck::bytes_of(&self.uniform(packed, d))),
            })
            .collect();
        let wide = packed.wide as usize;
        let k = &dev.kernels;
        let scans = [
            scan_steps(&mut params, self.regions.items_at, packed.items + 1),
            scan_steps(
                &mut params,
                self.regions.block_routes_at,
                self.cap.blocks + 1,
            ),
        ];
        // No subtrees yet: the top levels that list them raise it.
        let mut tree_args = [0u32; ARGS_WORDS as usize];
        tree_args[ARGS_SUBTREES as usize + 2] = 1;
        let uploads: [(&wgpu::Buffer, &[u8]); 6] = [
            (&b.params, &params.bytes),
            (&b.tree_args, bytemuck::cast_slice(&tree_args)),
            (&b.jobs, bytemuck::cast_slice(&packed.jobs)),
            (&b.sides, bytemuck::cast_slice(&packed.sides)),
            (&b.joins, bytemuck::cast_slice(&packed.joins)),
            (&b.carried, bytemuck::cast_slice(&packed.words)),
        ];
        let up: u64 = uploads
            .into_iter()
            .map(|(target, bytes)| upload(encoder, belt, target, 0, bytes))
            .sum();
        let joins = packed.joins.len() as u32;
        let jobs = packed.jobs.len() as u32 - 1;
        let g = &self.groups;
        let items = packed.items.div_ceil(GROUP_SIZE);
        let mut steps = 0;
        steps += self.pass(encoder, 0, |pass| {
            // One invocation more than items: it writes the counts' closing zero.
            let counted = (packed.items + 1).div_ceil(GROUP_SIZE);
            k.count_pairs.dispatch(pass, &g.gen, 0, counted)
                + run_scan(pass, k, &g.scan, &scans[0])
                + k.join_sizes.dispatch(pass, &g.plan, 0, 1)
                + k.job_dest
                    .dispatch(pass, &g.plan, 0, jobs.div_ceil(GROUP_SIZE))
                + k.write_pairs.dispatch(pass, &g.gen, 0, items)
        });
        steps += self.pass(encoder, 1, |pass| {
            let mut n = 0;
            // Each level's dispatch has a workgroup for each node its list can hold (a
            // dispatch that read its length would be two steps, not one), and so for each
            // tile the level may hand out.
            for (d, &at) in level_params.iter().enumerate() {
                let nodes = if d == 0 {
                    joins
                } else {
                    self.cap.level_nodes()
                };
                n += k.tree_top.dispatch(pass, &g.tree, at, nodes);
                if d < wide {
                    let tiles = self.cap.tiles();
                    n += k.wide_count.dispatch(pass, &g.tree, at, tiles)
                        + k.wide_move.dispatch(pass, &g.tree, at, tiles);
                }
            }
            n + k
                .tree_rest
                .dispatch_indirect(pass, &g.tree_rest, 0, &b.tree_args, ARGS_SUBTREES)
                + k.alloc_blocks.dispatch(pass, &g.plan, 0, 1)
                + k.place_blocks
                    .dispatch(pass, &g.plan, 0, joins * PLACE_GROUPS)
        });
        steps += self.pass(encoder, 2, |pass| {
            k.tables
                .dispatch_indirect(pass, &g.tables, 0, &b.args, ARGS_TABLES)
        });
        steps += self.pass(encoder, 3, |pass| {
            k.count_routes
                .dispatch_indirect(pass, &g.route, 0, &b.args, ARGS_ROUTE)
                + run_scan(pass, k, &g.scan, &scans[1])
                + k.plan_routes.dispatch(pass, &g.plan, 0, 1)
                + k.write_routes
                    .dispatch_indirect(pass, &g.route, 0, &b.args, ARGS_ROUTE)
        });
        steps += self.pass(encoder, 4, |pass| {
            k.count
                .dispatch_indirect(pass, &g.count, 0, &b.args, ARGS_COUNT)
        });
        steps += self.pass(encoder, 5, |pass| {
            k.ties
                .dispatch_indirect(pass, &g.ties, 0, &b.args, ARGS_TIES)
        });
        // The counters and the batch's rows lie together: one copy, one step.
        let read = 4 * u64::from(STAT_WORDS + joins * RESULT_WORDS);
        encoder.copy_buffer_to_buffer(&b.results, 0, &b.readback, 0, read);
        steps += 1;
        if let Some(t) = &self.timer {
            let n = 2 * PASSES.len() as u32;
            encoder.resolve_query_set(&t.queries, 0..n, &t.resolve, 0);
            encoder.copy_buffer_to_buffer(&t.resolve, 0, &b.readback, read, 8 * u64::from(n));
            steps += 2;
        }
        // The uploads go to distinct buffers: together, one step.
        Recording {
            bytes_up: up,
            steps: steps + 1,
        }
    }

    /// Records pass number `i` (of [`PASSES`]), between two timestamps where there are.
    fn pass(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        i: u32,
        record: impl FnOnce(&mut wgpu::ComputePass<'_>) -> u64,
    ) -> u64 {
        let timestamp_writes = self
            .timer
            .as_ref()
            .map(|t| wgpu::ComputePassTimestampWrites {
                query_set: &t.queries,
                beginning_of_pass_write_index: Some(2 * i),
                end_of_pass_write_index: Some(2 * i + 1),
            });
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some(PASSES[i as usize]),
            timestamp_writes,
        });
        record(&mut pass)
    }
}

/// Copies `bytes` into `target` from byte `offset` through the staging belt; returns how
/// many.
pub(crate) fn upload(
    encoder: &mut wgpu::CommandEncoder,
    belt: &mut wgpu::util::StagingBelt,
    target: &wgpu::Buffer,
    offset: u64,
    bytes: &[u8],
) -> u64 {
    let len = (bytes.len() as u64).next_multiple_of(wgpu::COPY_BUFFER_ALIGNMENT);
    let Some(size) = wgpu::BufferSize::new(len) else {
        return 0;
    };
    let mut view = belt.write_buffer(encoder, target, offset, size);
    view.slice(..bytes.len()).copy_from_slice(bytes);
    len
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::layout::ROLE_WEST;
    use crate::gpu::request::Request;

    /// The parts of a cut join, one after another in a batch, carry their words once; a
    /// set that is not the last one added is carried again (exact, only larger).
    #[test]
    fn parts_of_one_join_carry_their_words_once_a_batch() {
        let whole = Request::of_keys(&[1, 2, 3, 4], &[8; 6], JoinDesc::default());
        let parts = whole.cut(ROLE_WEST, 2);
        assert!(parts.len() >= 2, "{}", parts.len());
        let other = Request::of_keys(&[5], &[6], JoinDesc::default());
        let mut packed = Packed::default();
        let first = packed.carry(&parts[0].words);
        assert_eq!(packed.carry(&parts[1].words), first);
        assert_eq!(packed.words.len(), whole.words.len());
        assert_eq!(packed.carry(&other.words) as usize, whole.words.len());
        assert_eq!(packed.word_sets, 2);
        packed.carry(&parts[0].words);
        assert_eq!(packed.word_sets, 3);
        packed.clear();
        assert_eq!(packed.shared_words(&parts[1].words), None);
        assert_eq!(packed.word_sets, 0);
    }
}
