//! A batch slot's GPU buffers, made once at its capacity, with each kernel's bind group over
//! them and the timestamps around its passes; and the parameter blocks a batch uploads.

use super::capacity::{Capacity, Regions, JOB_BYTES, SIDE_BYTES};
use crate::gpu::device::Device;
use crate::gpu::kernels::PARAMS_BYTES;
use crate::gpu::layout::{Node, ARGS_WORDS, RESULT_WORDS, TABLE_WORDS, TOP_LEVELS};
use crate::gpu::shader::{BLOCK_INFO, STATS_WORDS};

/// Words after the join rows of `results` for the batch's work counters.
pub(crate) const STAT_WORDS: u32 = STATS_WORDS as u32;
/// The passes of a batch, each between two timestamps where the GPU takes them: the half
/// join, the sieve (trees and blocks), tables, routing, block count and ties.
pub(crate) const PASSES: [&str; 6] = ["half_join", "sieve", "tables", "routing", "count", "ties"];

/// The buffers of one batch.
pub(crate) struct Buffers {
    pub(crate) params: wgpu::Buffer,
    pub(crate) carried: wgpu::Buffer,
    pub(crate) jobs: wgpu::Buffer,
    pub(crate) sides: wgpu::Buffer,
    pub(crate) joins: wgpu::Buffer,
    pub(crate) scan: wgpu::Buffer,
    pub(crate) args: wgpu::Buffer,
    /// The subtrees' dispatch arguments, which the top levels keep as they list them: a
    /// buffer of its own, as a dispatch cannot read its arguments from a buffer it binds to
    /// write (tree.wgsl, `args_out`).
    pub(crate) tree_args: wgpu::Buffer,
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
pub(super) struct Groups {
    pub(super) gen: wgpu::BindGroup,
    pub(super) plan: wgpu::BindGroup,
    /// The tree's kernels, appending to lists whose dispatch arguments are in `tree_args`
    /// (the top levels) or `args` (the subtrees).
    pub(super) tree: wgpu::BindGroup,
    pub(super) tree_rest: wgpu::BindGroup,
    pub(super) tables: wgpu::BindGroup,
    pub(super) route: wgpu::BindGroup,
    pub(super) count: wgpu::BindGroup,
    pub(super) ties: wgpu::BindGroup,
    pub(super) scan: wgpu::BindGroup,
}

/// Timestamps around each pass, and where they are resolved.
pub(super) struct Timer {
    pub(super) queries: wgpu::QuerySet,
    pub(super) resolve: wgpu::Buffer,
}

/// A batch slot: buffers, bind groups and timestamps.
pub(crate) struct Slot {
    pub(crate) cap: Capacity,
    pub(crate) regions: Regions,
    pub(crate) buffers: Buffers,
    pub(super) groups: Groups,
    pub(super) timer: Option<Timer>,
}

/// Parameter blocks a batch uses: its `Batch` block, then one per scan dispatch.
const PARAM_BLOCKS: u64 = 32;

/// Bytes of each buffer of a slot, by its capacity: [`Sizes::of`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct Sizes {
    carried: u64,
    jobs: u64,
    sides: u64,
    joins: u64,
    scan: u64,
    results: u64,
    stored: u64,
    queries: u64,
    ties: u64,
    tree: u64,
    lists: u64,
    leaves: u64,
    blocks: u64,
    tables: u64,
    info: u64,
    routes: u64,
}

impl Sizes {
    /// The bytes of each buffer of a slot of capacity `cap`.
    pub(crate) fn of(cap: &Capacity) -> Self {
        let n = |x: u32| u64::from(x);
        let node = std::mem::size_of::<Node>() as u64;
        Sizes {
            carried: 8 * n(cap.words),
            jobs: JOB_BYTES * (n(cap.jobs) + 1),
            sides: SIDE_BYTES * n(cap.sides),
            joins: 96 * n(cap.joins),
            scan: 4 * Regions::new(cap).end,
            results: 4 * (n(cap.joins) * n(RESULT_WORDS) + n(STAT_WORDS)),
            stored: 8 * n(cap.stored),
            queries: 8 * n(cap.queries),
            ties: 8 * n(cap.ties),
            tree: 16 * n(cap.nodes),
            lists: node * (n(TOP_LEVELS - 1) * n(cap.level_nodes()) + n(cap.subtrees())),
            leaves: 8 * n(cap.leaves),
            blocks: 16 * n(cap.blocks),
            tables: 4 * n(TABLE_WORDS) * n(cap.blocks),
            info: 16 * BLOCK_INFO * n(cap.blocks),
            routes: 8 * n(cap.routes),
        }
    }

    /// The largest buffer, which one binding must hold (the fills' and the partition
    /// scratch's are the joins' and the stored keys' sizes).
    pub(crate) fn largest(&self) -> u64 {
        [
            self.carried,
            self.jobs,
            self.sides,
            self.joins,
            self.scan,
            self.results,
            self.stored,
            self.queries,
            self.ties,
            self.tree,
            self.lists,
            self.leaves,
            self.blocks,
            self.tables,
            self.info,
            self.routes,
        ]
        .into_iter()
        .max()
        .unwrap_or(0)
    }
}

impl Slot {
    /// A slot of capacity `cap` on `dev`, reading resident words from `resident`.
    pub(crate) fn new(dev: &Device, cap: Capacity, resident: &wgpu::Buffer) -> Self {
        let regions = Regions::new(&cap);
        let z = Sizes::of(&cap);
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
        let buffers = Buffers {
            params: make(
                "params",
                PARAM_BLOCKS * PARAMS_BYTES,
                wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            ),
            carried: make("carried words", z.carried, input),
            jobs: make("jobs", z.jobs, input),
            sides: make("sides", z.sides, input),
            joins: make("joins", z.joins, input),
            scan: make("scan", z.scan, input),
            args: make(
                "dispatch arguments",
                4 * u64::from(ARGS_WORDS),
                storage | wgpu::BufferUsages::INDIRECT,
            ),
            tree_args: make(
                "tree dispatch arguments",
                4 * u64::from(ARGS_WORDS),
                input | wgpu::BufferUsages::INDIRECT,
            ),
            results: make("results", z.results, input | wgpu::BufferUsages::COPY_SRC),
            fills: make("fills", z.joins, storage),
            stored: make("stored keys", z.stored, storage),
            // The tree build's partition scratch, and routing's kept histograms after it.
            temp: make("partition scratch", z.stored, storage),
            queries: make("queries", z.queries, storage),
            ties: make("tied halves", z.ties, storage),
            tree: make("tree nodes", z.tree, storage),
            lists: make("tree nodes to build", z.lists, storage),
            leaves: make("leaves", z.leaves, storage),
            blocks: make("blocks", z.blocks, storage),
            tables: make("tables", z.tables, storage),
            info: make("block info", z.info, storage),
            routes: make("routes", z.routes, storage),
            readback: make(
                "readback",
                z.results + 16 * PASSES.len() as u64,
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
}

/// A batch's parameter blocks, one per [`PARAMS_BYTES`].
#[derive(Default)]
pub(super) struct Params {
    pub(super) bytes: Vec<u8>,
}

impl Params {
    /// Adds one block; returns its offset.
    pub(super) fn push(&mut self, block: &[u8]) -> u32 {
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

impl Groups {
    fn new(dev: &Device, b: &Buffers, resident: &wgpu::Buffer) -> Self {
        let k = &dev.kernels;
        let d = &dev.device;
        let p = &b.params;
        // The tree's kernels, with `args_out` where the list they append to keeps its
        // dispatch arguments.
        let tree = |args_out: &wgpu::Buffer| {
            k.tree_top.bind(
                d,
                p,
                &[
                    &b.fills, &b.stored, &b.temp, &b.queries, &b.tree, &b.leaves, &b.scan,
                    &b.lists, args_out, &b.results,
                ],
            )
        };
        Groups {
            gen: k.count_pairs.bind(
                d,
                p,
                &[
                    &b.carried, resident, &b.jobs, &b.sides, &b.scan, &b.stored, &b.queries,
                    &b.ties, &b.results,
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
            tree: tree(&b.tree_args),
            tree_rest: tree(&b.args),
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
                    &b.results, &b.fills, &b.tree, &b.queries, &b.info, &b.scan, &b.routes, &b.temp,
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
