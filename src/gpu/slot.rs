//! A batch slot: the GPU buffers one batch of joins lives in, sized once from a memory
//! budget, with its bind groups made once; and how one batch is recorded into a single
//! command buffer (uploads, every stage, and the copy of its results) with no readback in
//! between: each stage's sizes stay on the GPU ([`super::layout`], `plan.wgsl`).

use super::kernels::{Kernel, PARAMS_BYTES};
use super::layout::{
    Batch, Job, JoinDesc, Node, ScanParams, Side, ARGS_COUNT, ARGS_PAIRS, ARGS_ROUTE,
    ARGS_SUBTREES, ARGS_TABLES, ARGS_TIES, ARGS_WORDS, BLOCK_KEYS, DEST_WORDS, GROUP_SIZE,
    HEAD_WORDS, JOB_SIDE_MASK, RESULT_WORDS, SCAN_SEGMENT, SUBTREE_KEYS, TABLE_WORDS, TILE,
    TOP_LEVELS, TREE_WORDS, WIDE_KEYS, WIDE_TILE, WIDE_WORDS,
};
use super::shader::{BLOCK_INFO, STATS_WORDS};
use super::Device;

/// Keys sampled at a tree node to choose its bit (as the CPU trie's).
pub(crate) const KEY_SAMPLE: u32 = 512;
/// Queries sampled per fill to choose its tree's bits: half the CPU trie's 8,192, as every
/// node reads them. By `examples/gpu_work` on 13 tasks of N = 20..24 (counters), 4,096 made
/// a third fewer tree tests and the same visits within ±1% but for two tasks (−8%, −2%);
/// 2,048 made up to 3% more visits at N = 24.
pub(crate) const QUERY_SAMPLE: u32 = 4096;
/// Most keys in a tree leaf: one block.
pub(crate) const LEAF_KEYS: u32 = BLOCK_KEYS;
/// Words after the join rows of `results` for the batch's work counters.
pub(crate) const STAT_WORDS: u32 = STATS_WORDS as u32;
/// The passes of a batch, each between two timestamps where the GPU takes them: the half
/// join, the sieve (trees and blocks), tables, routing, block count and ties.
pub(crate) const PASSES: [&str; 6] = ["half_join", "sieve", "tables", "routing", "count", "ties"];

/// Bytes of a job and of a side.
const JOB_BYTES: u64 = std::mem::size_of::<Job>() as u64;
const SIDE_BYTES: u64 = std::mem::size_of::<Side>() as u64;

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
        let blocks = share(0.42, table_bytes + 16 * BLOCK_INFO + 24, table_bytes);
        let mut cap = Capacity {
            joins: share(0.004, 96 + 96 + 64 + 16, 96).min(1 << 14),
            jobs: share(0.05, JOB_BYTES + 4 * u64::from(DEST_WORDS), JOB_BYTES),
            // A job names its side in JOB_SIDE_BITS.
            sides: share(0.005, SIDE_BYTES, SIDE_BYTES).min(JOB_SIDE_MASK + 1),
            items: share(0.04, 4, 4),
            words: share(0.08, 8, 8),
            stored: share(0.12, 16, 8),
            queries: share(0.07, 8, 8),
            ties: share(0.02, 8, 8),
            nodes: share(0.02, 16, 16),
            leaves: share(0.01, 12, 8),
            blocks,
            routes: share(0.14, 8, 8),
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
    fn new(cap: &Capacity) -> Self {
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
    }
}

/// The top levels of the trees a batch builds level by level (tree.wgsl), for fills of
/// at most `largest` keys: enough for a node to come down to `SUBTREE_KEYS` keys where
/// splits are as uneven as a third to two thirds, and at least one (the roots).
pub(crate) fn top_levels(largest: u64) -> u32 {
    let halvings = (largest as f64 / f64::from(SUBTREE_KEYS)).log2().max(0.0);
    (1 + (halvings / (1.5f64).log2()).ceil() as u32).min(TOP_LEVELS)
}

/// The top levels, from the roots, that split their nodes of more than `wide_keys` keys
/// across workgroups, for fills of at most `largest` keys: while a node may still hold
/// more, where splits are as uneven as a quarter to three quarters. A larger node at a
/// later level is partitioned by its own workgroup, as every node once was.
pub(crate) fn wide_levels(largest: u64, wide_keys: u32) -> u32 {
    if largest <= u64::from(wide_keys) {
        return 0;
    }
    let shrinks = (largest as f64 / f64::from(wide_keys)).log2() / (4.0f64 / 3.0).log2();
    (1 + shrinks.ceil() as u32).min(top_levels(largest))
}

/// The buffers of one batch.
pub(crate) struct Buffers {
    pub(crate) params: wgpu::Buffer,
    pub(crate) carried: wgpu::Buffer,
    pub(crate) jobs: wgpu::Buffer,
    pub(crate) sides: wgpu::Buffer,
    pub(crate) joins: wgpu::Buffer,
    pub(crate) scan: wgpu::Buffer,
    pub(crate) args: wgpu::Buffer,
    pub(crate) results: wgpu::Buffer,
    pub(crate) fills: wgpu::Buffer,
    pub(crate) stored: wgpu::Buffer,
    pub(crate) temp: wgpu::Buffer,
    pub(crate) queries: wgpu::Buffer,
    pub(crate) ties: wgpu::Buffer,
    pub(crate) tree: wgpu::Buffer,
    pub(crate) lists: wgpu::Buffer,
    pub(crate) leaves: wgpu::Buffer,
    pub(crate) blocks: wgpu::Buffer,
    pub(crate) tables: wgpu::Buffer,
    pub(crate) info: wgpu::Buffer,
    pub(crate) routes: wgpu::Buffer,
    /// Where the results (and timestamps) are copied to be read.
    pub(crate) readback: wgpu::Buffer,
}

/// Each kernel's bind group over a slot's buffers.
struct Groups {
    gen: wgpu::BindGroup,
    plan: wgpu::BindGroup,
    tree: wgpu::BindGroup,
    tables: wgpu::BindGroup,
    route: wgpu::BindGroup,
    count: wgpu::BindGroup,
    ties: wgpu::BindGroup,
    scan: wgpu::BindGroup,
}

/// Timestamps around each pass, and where they are resolved.
struct Timer {
    queries: wgpu::QuerySet,
    resolve: wgpu::Buffer,
}

/// A batch slot: buffers, bind groups and timestamps.
pub(crate) struct Slot {
    pub(crate) cap: Capacity,
    pub(crate) regions: Regions,
    pub(crate) buffers: Buffers,
    groups: Groups,
    timer: Option<Timer>,
}

/// Parameter blocks a batch uses: its `Batch` block, then one per scan dispatch.
const PARAM_BLOCKS: u64 = 32;

impl Slot {
    /// A slot of capacity `cap` on `dev`, reading resident words from `resident`.
    pub(crate) fn new(dev: &Device, cap: Capacity, resident: &wgpu::Buffer) -> Self {
        let regions = Regions::new(&cap);
        let storage = wgpu::BufferUsages::STORAGE;
        let input = storage | wgpu::BufferUsages::COPY_DST;
        let make = |label: &'static str, bytes: u64, usage: wgpu::BufferUsages| {
            dev.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size: bytes.max(16).next_multiple_of(16),
                usage,
                mapped_at_creation: false,
            })
        };
        let n = |x: u32| u64::from(x);
        let result_bytes = 4 * (n(cap.joins) * n(RESULT_WORDS) + n(STAT_WORDS));
        let buffers = Buffers {
            params: make(
                "params",
                PARAM_BLOCKS * PARAMS_BYTES,
                wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            ),
            carried: make("carried words", 8 * n(cap.words), input),
            jobs: make("jobs", JOB_BYTES * (n(cap.jobs) + 1), input),
            sides: make("sides", SIDE_BYTES * n(cap.sides), input),
            joins: make("joins", 96 * n(cap.joins), input),
            scan: make("scan", 4 * regions.end, input),
            args: make(
                "dispatch arguments",
                4 * n(ARGS_WORDS),
                storage | wgpu::BufferUsages::INDIRECT,
            ),
            results: make(
                "results",
                result_bytes,
                input | wgpu::BufferUsages::COPY_SRC,
            ),
            fills: make("fills", 96 * n(cap.joins), storage),
            stored: make("stored keys", 8 * n(cap.stored), storage),
            // The tree build's partition scratch, and routing's kept histograms after it.
            temp: make("partition scratch", 8 * n(cap.stored), storage),
            queries: make("queries", 8 * n(cap.queries), storage),
            ties: make("tied halves", 8 * n(cap.ties), storage),
            tree: make("tree nodes", 16 * n(cap.nodes), storage),
            lists: make(
                "tree nodes to build",
                std::mem::size_of::<Node>() as u64
                    * (n(TOP_LEVELS - 1) * n(cap.level_nodes())
                        + n(cap.subtrees())
                        + n(cap.pairs())),
                storage,
            ),
            leaves: make("leaves", 8 * n(cap.leaves), storage),
            blocks: make("blocks", 16 * n(cap.blocks), storage),
            tables: make("tables", 4 * n(TABLE_WORDS) * n(cap.blocks), storage),
            info: make("block info", 16 * BLOCK_INFO * n(cap.blocks), storage),
            routes: make("routes", 8 * n(cap.routes), storage),
            readback: make(
                "readback",
                result_bytes + 16 * PASSES.len() as u64,
                wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            ),
        };
        let groups = Groups::new(dev, &buffers, resident);
        let timer = dev
            .device
            .features()
            .contains(wgpu::Features::TIMESTAMP_QUERY)
            .then(|| Timer {
                queries: dev.device.create_query_set(&wgpu::QuerySetDescriptor {
                    label: Some("pass timestamps"),
                    ty: wgpu::QueryType::Timestamp,
                    count: 2 * PASSES.len() as u32,
                }),
                resolve: make(
                    "timestamps",
                    16 * PASSES.len() as u64,
                    wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
                ),
            });
        Slot {
            cap,
            regions,
            buffers,
            groups,
            timer,
        }
    }

    /// Whether the slot's passes are timed.
    pub(crate) fn timed(&self) -> bool {
        self.timer.is_some()
    }

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
            result_stats: cap.joins * RESULT_WORDS,
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
            top_levels: top_levels(packed.largest),
            subtree_cap: cap.subtrees(),
            pair_cap: cap.pairs(),
            wide: if level < wide_levels(packed.largest, cap.wide_keys) {
                cap.wide_keys
            } else {
                0
            },
            wide_at: r.wide_at,
            tiles_at: r.tiles_at,
            tile_cap: cap.tiles(),
        }
    }

    /// Records `packed` into `encoder`: its uploads (through `belt`), every stage, and the
    /// copy of its results rows (and timestamps) for reading; returns the bytes it uploads
    /// (its steps are [`batch_steps`]).
    pub(crate) fn record(
        &self,
        dev: &Device,
        encoder: &mut wgpu::CommandEncoder,
        belt: &mut wgpu::util::StagingBelt,
        packed: &Packed,
    ) -> u64 {
        let b = &self.buffers;
        let mut params = Params::default();
        params.push(bytemuck::bytes_of(&self.uniform(packed, 0)));
        let levels = top_levels(packed.largest);
        let level_params: Vec<u32> = (0..levels)
            .map(|d| match d {
                0 => 0,
                _ => params.push(bytemuck::bytes_of(&self.uniform(packed, d))),
            })
            .collect();
        let wide = wide_levels(packed.largest, self.cap.wide_keys) as usize;
        let k = &dev.kernels;
        let scans = [
            scan_steps(&mut params, self.regions.items_at, packed.items + 1),
            scan_steps(
                &mut params,
                self.regions.block_routes_at,
                self.cap.blocks + 1,
            ),
        ];
        let uploads: [(&wgpu::Buffer, &[u8]); 5] = [
            (&b.params, &params.bytes),
            (&b.jobs, bytemuck::cast_slice(&packed.jobs)),
            (&b.sides, bytemuck::cast_slice(&packed.sides)),
            (&b.joins, bytemuck::cast_slice(&packed.joins)),
            (&b.carried, bytemuck::cast_slice(&packed.words)),
        ];
        let up: u64 = uploads
            .into_iter()
            .map(|(target, bytes)| upload(encoder, belt, target, 0, bytes))
            .sum();
        self.clear(encoder, packed);
        let joins = packed.joins.len() as u32;
        let jobs = packed.jobs.len() as u32 - 1;
        let g = &self.groups;
        let items = packed.items.div_ceil(GROUP_SIZE);
        self.pass(encoder, 0, |pass| {
            k.count_pairs.dispatch(pass, &g.gen, 0, items);
            run_scan(pass, k, &g.scan, &scans[0]);
            k.join_sizes.dispatch(pass, &g.plan, 0, 1);
            k.job_dest
                .dispatch(pass, &g.plan, 0, jobs.div_ceil(GROUP_SIZE));
            k.write_pairs.dispatch(pass, &g.gen, 0, items);
        });
        self.pass(encoder, 1, |pass| {
            // Each level's dispatch has a workgroup for each node its list can hold (a
            // dispatch that read its length would be two steps, not one), and so for each
            // tile the level may hand out.
            for (d, &at) in level_params.iter().enumerate() {
                let nodes = if d == 0 {
                    joins
                } else {
                    self.cap.level_nodes()
                };
                k.tree_top.dispatch(pass, &g.tree, at, nodes);
                if d < wide {
                    let tiles = self.cap.tiles();
                    k.wide_count.dispatch(pass, &g.tree, at, tiles);
                    k.wide_scan.dispatch(pass, &g.tree, at, nodes);
                    k.wide_move.dispatch(pass, &g.tree, at, tiles);
                    k.wide_back.dispatch(pass, &g.tree, at, tiles);
                }
            }
            k.subtree_args.dispatch(pass, &g.plan, 0, 1);
            k.tree_rest
                .dispatch_indirect(pass, &g.tree, 0, &b.args, ARGS_SUBTREES);
            k.pair_args.dispatch(pass, &g.plan, 0, 1);
            k.tree_pairs
                .dispatch_indirect(pass, &g.tree, 0, &b.args, ARGS_PAIRS);
            k.alloc_blocks.dispatch(pass, &g.plan, 0, 1);
            k.place_blocks.dispatch(pass, &g.plan, 0, joins);
        });
        self.pass(encoder, 2, |pass| {
            k.tables
                .dispatch_indirect(pass, &g.tables, 0, &b.args, ARGS_TABLES);
        });
        self.pass(encoder, 3, |pass| {
            k.count_routes
                .dispatch_indirect(pass, &g.route, 0, &b.args, ARGS_ROUTE);
            run_scan(pass, k, &g.scan, &scans[1]);
            k.plan_routes.dispatch(pass, &g.plan, 0, 1);
            k.write_routes
                .dispatch_indirect(pass, &g.route, 0, &b.args, ARGS_ROUTE);
        });
        self.pass(encoder, 4, |pass| {
            k.count
                .dispatch_indirect(pass, &g.count, 0, &b.args, ARGS_COUNT);
        });
        self.pass(encoder, 5, |pass| {
            k.ties
                .dispatch_indirect(pass, &g.ties, 0, &b.args, ARGS_TIES);
        });
        let rows = 4 * u64::from(joins * RESULT_WORDS);
        let stats_at = 4 * u64::from(self.cap.joins * RESULT_WORDS);
        encoder.copy_buffer_to_buffer(&b.results, 0, &b.readback, 0, rows);
        encoder.copy_buffer_to_buffer(
            &b.results,
            stats_at,
            &b.readback,
            rows,
            4 * u64::from(STAT_WORDS),
        );
        if let Some(t) = &self.timer {
            let n = 2 * PASSES.len() as u32;
            encoder.resolve_query_set(&t.queries, 0..n, &t.resolve, 0);
            let at = rows + 4 * u64::from(STAT_WORDS);
            encoder.copy_buffer_to_buffer(&t.resolve, 0, &b.readback, at, 8 * u64::from(n));
        }
        up
    }

    /// Zeroes what a batch adds to or reads before writing: its results rows and counters,
    /// the item counts' closing zero, and each block's route count and cursor.
    fn clear(&self, encoder: &mut wgpu::CommandEncoder, packed: &Packed) {
        let b = &self.buffers;
        let r = &self.regions;
        let rows = 4 * u64::from(packed.joins.len() as u32 * RESULT_WORDS);
        encoder.clear_buffer(&b.results, 0, Some(rows));
        let stats_at = 4 * u64::from(self.cap.joins * RESULT_WORDS);
        encoder.clear_buffer(&b.results, stats_at, Some(4 * u64::from(STAT_WORDS)));
        encoder.clear_buffer(&b.scan, 0, Some(4 * u64::from(HEAD_WORDS)));
        let closing = 4 * u64::from(r.items_at + packed.items);
        encoder.clear_buffer(&b.scan, closing, Some(4));
        let blocks = u64::from(self.cap.blocks) + 1;
        encoder.clear_buffer(&b.scan, 4 * u64::from(r.block_routes_at), Some(4 * blocks));
        encoder.clear_buffer(&b.scan, 4 * u64::from(r.block_cursor_at), Some(4 * blocks));
    }

    /// Records pass number `i` (of [`PASSES`]), between two timestamps where there are.
    fn pass(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        i: u32,
        record: impl FnOnce(&mut wgpu::ComputePass<'_>),
    ) {
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
        record(&mut pass);
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

/// A batch's parameter blocks, one per [`PARAMS_BYTES`].
#[derive(Default)]
struct Params {
    bytes: Vec<u8>,
}

impl Params {
    /// Adds one block; returns its offset.
    fn push(&mut self, block: &[u8]) -> u32 {
        let at = self.bytes.len();
        assert!(block.len() as u64 <= PARAMS_BYTES, "parameters fit a block");
        assert!(
            (at as u64) < PARAM_BLOCKS * PARAMS_BYTES,
            "a batch has room for its parameter blocks"
        );
        self.bytes.extend_from_slice(block);
        self.bytes.resize(at + PARAMS_BYTES as usize, 0);
        at as u32
    }
}

/// The kernel of one step of an in-place scan (scan.wgsl).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ScanKernel {
    /// Each segment's sum, written after the values.
    Reduce,
    /// Each segment scanned, from its scanned sum.
    Down,
    /// A range of one segment, scanned alone.
    Single,
}

/// One dispatch of an in-place scan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct ScanStep {
    kernel: ScanKernel,
    /// Where its parameters lie among the batch's blocks.
    params_at: u32,
    groups: u32,
}

/// The dispatches of an exclusive scan of `len` words of `scan` from word `off`, in place
/// (segment sums after them), with their parameters pushed to `params`.
fn scan_steps(params: &mut Params, off: u32, len: u32) -> Vec<ScanStep> {
    let block = |p: &mut Params, sums: u32| {
        let scan = ScanParams {
            off,
            len,
            sums,
            pad: 0,
        };
        p.push(bytemuck::bytes_of(&scan))
    };
    let step = |kernel, params_at, groups| ScanStep {
        kernel,
        params_at,
        groups,
    };
    if len <= SCAN_SEGMENT {
        return vec![step(ScanKernel::Single, block(params, 0), 1)];
    }
    let segments = len.div_ceil(SCAN_SEGMENT);
    let sums = off + len;
    let reduce = step(ScanKernel::Reduce, block(params, sums), segments);
    let down = step(ScanKernel::Down, block(params, sums), segments);
    let mut steps = vec![reduce];
    let inner = scan_steps(params, sums, segments);
    steps.extend(inner);
    steps.push(down);
    steps
}

fn run_scan(
    pass: &mut wgpu::ComputePass<'_>,
    k: &super::kernels::Kernels,
    group: &wgpu::BindGroup,
    steps: &[ScanStep],
) {
    for step in steps {
        let kernel: &Kernel = match step.kernel {
            ScanKernel::Reduce => &k.scan_reduce,
            ScanKernel::Down => &k.scan_down,
            ScanKernel::Single => &k.scan_single,
        };
        kernel.dispatch(pass, group, step.params_at, step.groups);
    }
}

impl Groups {
    fn new(dev: &Device, b: &Buffers, resident: &wgpu::Buffer) -> Self {
        let k = &dev.kernels;
        let d = &dev.device;
        let p = &b.params;
        Groups {
            gen: k.count_pairs.bind(
                d,
                p,
                &[
                    &b.carried, resident, &b.jobs, &b.sides, &b.scan, &b.stored, &b.queries,
                    &b.ties,
                ],
            ),
            plan: k.join_sizes.bind(
                d,
                p,
                &[
                    &b.results, &b.jobs, &b.joins, &b.scan, &b.fills, &b.leaves, &b.blocks,
                    &b.sides, &b.args,
                ],
            ),
            tree: k.tree_top.bind(
                d,
                p,
                &[
                    &b.fills, &b.stored, &b.temp, &b.queries, &b.tree, &b.leaves, &b.scan,
                    &b.lists, &b.results,
                ],
            ),
            tables: k.tables.bind(
                d,
                p,
                &[
                    &b.fills, &b.stored, &b.blocks, &b.scan, &b.tables, &b.info, &b.results,
                ],
            ),
            route: k.count_routes.bind(
                d,
                p,
                &[
                    &b.results, &b.fills, &b.tree, &b.queries, &b.info, &b.scan, &b.routes,
                    &b.temp,
                ],
            ),
            count: k.count.bind(
                d,
                p,
                &[&b.results, &b.fills, &b.tables, &b.info, &b.scan, &b.routes],
            ),
            ties: k.ties.bind(d, p, &[&b.results, &b.joins, &b.scan, &b.ties]),
            scan: k.scan_single.bind(d, p, &[&b.scan]),
        }
    }
}
