//! Work counters: what a task did, in units that do not depend on the machine.
//!
//! Timings differ from CPU to CPU and from run to run; the number of keys built, pairs
//! visited and routing tests made do not. An engine that keeps counters returns them from
//! [`crate::Plan::solve_counted`], so the cost of a count can be compared across machines and
//! commits without timing noise (`nqueens estimate --json` scales them to the whole plan).
//! Counting is off in [`crate::Plan::solve`]: the counters are only gathered when asked for.

use std::time::Instant;

use serde::Serialize;

/// The work one or more tasks did (counters add up over tasks).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Work {
    /// Quarter placements read (both classes, all four quarters).
    pub quarter_placements: u64,
    /// Pairs of north and south quarter words tested while building halves.
    pub half_pairs_tested: u64,
    /// Half-board keys built (both sides, every pass).
    pub keys_built: u64,
    /// Extra passes over the query side's halves (it is rebuilt once per stored portion).
    pub regenerations: u64,
    /// Pieces a large task's stored side was split into at generation (0: not split).
    pub pieces: u64,
    /// Keys put into a sieve (a key stored twice for its weight counts twice).
    pub stored_keys: u64,
    /// Keys queried against a sieve.
    pub queries: u64,
    /// Σ stored keys × queries over every sieve and query portion: the pairs a sieve decides.
    pub pair_product: u64,
    /// Blocks of 512 stored keys bit-sliced.
    pub blocks_built: u64,
    /// (query, block) pairs the block count ran: 512 key pairs each.
    pub visited_pairs: u64,
    /// (query, key) pairs compared one by one (keys too few for a block).
    pub direct_pairs: u64,
    /// (stored key, query) pairs found disjoint, unweighted (a key stored twice for its
    /// weight counts twice): per visited pair, the matcher's hit rate.
    pub hits: u64,
    /// Tests that routed or filtered a query (trie nodes and leaves).
    pub routing_tests: u64,
    /// GPU table build: keys read and tested, one key's chunk (or class) each (0 on the CPU).
    pub table_key_tests: u64,
    /// GPU table build: chunks of 32 entries built, over every block (0 on the CPU).
    pub table_chunks: u64,
    /// GPU routing: global atomic read-modify-writes made to count and place routes (0 on
    /// the CPU).
    pub route_atomics: u64,
    /// GPU tree build: keys and sampled queries read to choose split and skip bits, and
    /// keys partitioned (0 on the CPU).
    pub tree_tests: u64,
    /// CPU seconds spent preparing quarter lists.
    pub quarter_seconds: f64,
    /// CPU seconds spent building halves.
    pub half_seconds: f64,
    /// CPU seconds spent building sieves (ranking, sorting, bit-slicing).
    pub sieve_seconds: f64,
    /// CPU seconds spent matching queries against sieves.
    pub match_seconds: f64,
    /// GPU seconds the block count kernel ran, by the GPU's own timestamps (0 on the CPU,
    /// and on a GPU that cannot take timestamps).
    pub count_kernel_seconds: f64,
    /// Command buffers submitted to the GPU (a batch's, on the join that led it).
    pub gpu_submits: u64,
    /// Times the host blocked waiting for the GPU.
    pub gpu_waits: u64,
    /// Dispatches, copies and clears recorded for the GPU.
    pub gpu_steps: u64,
    /// Of those, the ones that split a tree level's largest nodes across workgroups (none
    /// for batches whose fills are all small).
    pub gpu_wide_steps: u64,
    /// Bytes uploaded to the GPU.
    pub gpu_bytes_up: u64,
    /// Of those, the quarter words made resident on the GPU: each is uploaded once a run, so
    /// that a sample's share overstates a whole run's (which never passes the resident room).
    pub gpu_resident_bytes: u64,
    /// Bytes read back from the GPU.
    pub gpu_bytes_down: u64,
    /// Keys and queries a sieve tree built on the host scanned (none: the GPU builds them).
    pub host_tree_keys: u64,
    /// Joins a GPU run made on the CPU instead: they carried more quarter words than one
    /// of its batches holds (cutting a join keeps every word it reads).
    pub host_joins: u64,
    /// GPU seconds of the half join, by the GPU's timestamps (a batch's seconds of each
    /// pass are shared among its joins by the pass's work).
    pub gpu_half_join_seconds: f64,
    /// GPU seconds of the sieve: trees and blocks.
    pub gpu_sieve_seconds: f64,
    /// GPU seconds of the blocks' tables.
    pub gpu_tables_seconds: f64,
    /// GPU seconds of routing the queries to blocks.
    pub gpu_routing_seconds: f64,
    /// GPU seconds of even N's tied halves.
    pub gpu_ties_seconds: f64,
    /// Batches the GPU ran: one command buffer each.
    pub gpu_batches: u64,
    /// Sets of quarter words carried up to the GPU: a join's, each time it ran (a join run
    /// again after it found no room, whole or as parts, carries every word of the whole),
    /// once a batch however many of its parts or portions the batch holds; a set kept on the
    /// GPU for a join that runs in several batches, once.
    pub gpu_word_sets: u64,
    /// Dependent steps of those batches: every dispatch (wgpu's own checks of indirect
    /// arguments included, where they are on), and each group of uploads, clears and copies,
    /// each of which the next waits for.
    pub gpu_dependent_steps: u64,
    /// GPU tree build, top levels: nodes taken, a workgroup each.
    pub gpu_top_nodes: u64,
    /// Their accesses: keys and sampled queries read or written in GPU memory, every pass
    /// counted (a partition's count and its move into the other key buffer are two).
    pub gpu_top_accesses: u64,
    /// Keys their moves wrote: a move reads and writes each key, where the accesses count
    /// it once (tiles' moves not included: their keys are the tiles').
    pub gpu_top_writes: u64,
    /// Tiles of 4,096 keys the top levels' largest nodes were split into across workgroups.
    pub gpu_wide_tiles: u64,
    /// Subtrees built, a workgroup each, depth first.
    pub gpu_subtrees: u64,
    /// Their node iterations, each a chain of barriers (a two-block leaf's rounds of
    /// ordering included).
    pub gpu_rest_iterations: u64,
    /// Their accesses (two-block leaves' included).
    pub gpu_rest_accesses: u64,
    /// Keys their moves and copies back wrote, each also one of their accesses.
    pub gpu_rest_writes: u64,
    /// Block count visits times the chunks of their block's tables (a visit reads each
    /// chunk's entry), of the joins whose visits `visited_pairs` counts: what the count's
    /// cost follows beside its visits.
    pub gpu_visit_chunks: u64,
    /// Leaves of two blocks the subtrees ordered.
    pub gpu_pair_leaves: u64,
    /// Their rounds (a skip bit chosen and the keys partitioned on it, each).
    pub gpu_pair_rounds: u64,
    /// Their accesses.
    pub gpu_pair_accesses: u64,
    /// Routing invocations that walked queries.
    pub gpu_route_walkers: u64,
    /// Half join pairs the GPU's write pass tested: those of its work items with keys in
    /// the range their join keeps (all of a whole join's; a portion's own range).
    pub gpu_pairs_written: u64,
    /// Half join jobs (a run of north words against a run of south ones) the batches held:
    /// what each work item searches for its own (the span model's search).
    pub gpu_jobs: u64,
    /// Blocks' tables the block count's workgroups loaded.
    pub gpu_count_loads: u64,
    /// Half join pairs tested by the parts of joins cut for room (a share of
    /// `half_pairs_tested`): each part makes all its join's pairs again to keep its own
    /// keys, work a GPU whose batches hold those joins whole does not do.
    pub gpu_part_pairs: u64,
    /// Stored keys of the joins cut for room, once a cut: what a GPU holding them whole
    /// moves at its trees' roots, where their parts' trees began below.
    pub gpu_cut_keys: u64,
    /// The tree's work of those joins' tries (their shares of their batches' counters, tree
    /// work shared by keys): the top levels' accesses and writes. A GPU holding those joins
    /// whole builds their trees once, as their parts and roots do.
    pub gpu_tried_top_accesses: u64,
    /// The tries' tiles of top levels split across workgroups (of `gpu_wide_tiles`).
    pub gpu_tried_wide_tiles: u64,
    /// The tries' subtrees' accesses and writes.
    pub gpu_tried_rest_accesses: u64,
    /// Peak (the most of any one batch; peaks combine by the largest, never by the sum): the
    /// top levels' chain, each level's busiest workgroup's accesses added over the levels.
    pub gpu_top_chain_peak: u64,
    /// Peak: top levels a batch built level by level (for a run's first batches, packed by
    /// bounds, the levels its nodes needed: up to the first whose nodes all were subtrees,
    /// that one included).
    pub gpu_top_levels_peak: u64,
    /// Peak: of those, the levels, from the roots, that split their largest nodes across
    /// workgroups (for the first batches, that held a node past the slot's `wide_keys`).
    pub gpu_wide_levels_peak: u64,
    /// Peak: node iterations of one subtree's workgroup.
    pub gpu_rest_iterations_peak: u64,
    /// Peak: accesses of one subtree's workgroup.
    pub gpu_rest_accesses_peak: u64,
    /// Peak: rounds of one two-block leaf.
    pub gpu_pair_rounds_peak: u64,
    /// Peak: accesses of one two-block leaf.
    pub gpu_pair_accesses_peak: u64,
    /// Peak: routing tests one invocation made in one walk of its queries (a chain of
    /// dependent loads).
    pub gpu_route_tests_peak: u64,
    /// Peak: blocks' tables one block count workgroup loaded.
    pub gpu_count_loads_peak: u64,
    /// Peak: blocks of one fill.
    pub gpu_fill_blocks_peak: u64,
    /// Peak: joins of one batch.
    pub gpu_batch_joins_peak: u64,
    /// Peak: the stored keys of one join cut for room (its first try's): with the three
    /// below, what a batch holding it whole needs room for.
    pub gpu_cut_stored_peak: u64,
    /// Peak: the queries of one join cut for room (its first try's).
    pub gpu_cut_queries_peak: u64,
    /// Peak: the blocks of one join cut for room (its parts' together, or its first try's
    /// estimate where that is more).
    pub gpu_cut_blocks_peak: u64,
    /// Peak: the routes of one join cut for room (its parts' together, or its first try's).
    pub gpu_cut_routes_peak: u64,
    /// The GPU's critical path by the span model (`nqueens::gpu`'s), over the batches this
    /// run formed, with a dependent step of at least 5 µs.
    pub gpu_span_5us_seconds: f64,
    /// The same with a dependent step of at least 30 µs.
    pub gpu_span_30us_seconds: f64,
    /// The same work at the whole GPU's width: the span's floor.
    pub gpu_full_width_seconds: f64,
}

/// The counters of [`Work`] by name, with their values as floats (for scaling and reports).
pub type Counters = Vec<(&'static str, f64)>;

impl Work {
    /// Adds `other` to `self`, counter by counter (a peak takes the larger).
    pub fn add(&mut self, other: &Work) {
        for (mine, theirs) in self.counts_mut().into_iter().zip(other.counts()) {
            *mine += theirs;
        }
        for (mine, theirs) in self.peaks_mut().into_iter().zip(other.peaks()) {
            *mine = (*mine).max(theirs);
        }
        for (mine, theirs) in self.seconds_mut().into_iter().zip(other.seconds()) {
            *mine += theirs;
        }
    }

    /// Every counter by name, as floats: the counts, the peaks (named `…_peak`: see
    /// [`is_peak`]), then the seconds.
    pub fn counters(&self) -> Counters {
        let counts = COUNT_NAMES
            .iter()
            .zip(self.counts())
            .map(|(&name, v)| (name, v as f64));
        let peaks = PEAK_NAMES
            .iter()
            .zip(self.peaks())
            .map(|(&name, v)| (name, v as f64));
        let seconds = SECONDS_NAMES.iter().copied().zip(self.seconds());
        counts.chain(peaks).chain(seconds).collect()
    }

    fn peaks(&self) -> [u64; 15] {
        [
            self.gpu_top_chain_peak,
            self.gpu_top_levels_peak,
            self.gpu_wide_levels_peak,
            self.gpu_rest_iterations_peak,
            self.gpu_rest_accesses_peak,
            self.gpu_pair_rounds_peak,
            self.gpu_pair_accesses_peak,
            self.gpu_route_tests_peak,
            self.gpu_count_loads_peak,
            self.gpu_fill_blocks_peak,
            self.gpu_batch_joins_peak,
            self.gpu_cut_stored_peak,
            self.gpu_cut_queries_peak,
            self.gpu_cut_blocks_peak,
            self.gpu_cut_routes_peak,
        ]
    }

    fn peaks_mut(&mut self) -> [&mut u64; 15] {
        [
            &mut self.gpu_top_chain_peak,
            &mut self.gpu_top_levels_peak,
            &mut self.gpu_wide_levels_peak,
            &mut self.gpu_rest_iterations_peak,
            &mut self.gpu_rest_accesses_peak,
            &mut self.gpu_pair_rounds_peak,
            &mut self.gpu_pair_accesses_peak,
            &mut self.gpu_route_tests_peak,
            &mut self.gpu_count_loads_peak,
            &mut self.gpu_fill_blocks_peak,
            &mut self.gpu_batch_joins_peak,
            &mut self.gpu_cut_stored_peak,
            &mut self.gpu_cut_queries_peak,
            &mut self.gpu_cut_blocks_peak,
            &mut self.gpu_cut_routes_peak,
        ]
    }

    fn counts(&self) -> [u64; 50] {
        [
            self.quarter_placements,
            self.half_pairs_tested,
            self.keys_built,
            self.regenerations,
            self.pieces,
            self.stored_keys,
            self.queries,
            self.pair_product,
            self.blocks_built,
            self.visited_pairs,
            self.direct_pairs,
            self.hits,
            self.routing_tests,
            self.table_key_tests,
            self.table_chunks,
            self.route_atomics,
            self.tree_tests,
            self.gpu_submits,
            self.gpu_waits,
            self.gpu_steps,
            self.gpu_wide_steps,
            self.gpu_bytes_up,
            self.gpu_resident_bytes,
            self.gpu_bytes_down,
            self.host_tree_keys,
            self.host_joins,
            self.gpu_batches,
            self.gpu_word_sets,
            self.gpu_dependent_steps,
            self.gpu_top_nodes,
            self.gpu_top_accesses,
            self.gpu_wide_tiles,
            self.gpu_subtrees,
            self.gpu_rest_iterations,
            self.gpu_rest_accesses,
            self.gpu_pair_leaves,
            self.gpu_pair_rounds,
            self.gpu_pair_accesses,
            self.gpu_route_walkers,
            self.gpu_pairs_written,
            self.gpu_jobs,
            self.gpu_count_loads,
            self.gpu_part_pairs,
            self.gpu_cut_keys,
            self.gpu_top_writes,
            self.gpu_rest_writes,
            self.gpu_visit_chunks,
            self.gpu_tried_top_accesses,
            self.gpu_tried_wide_tiles,
            self.gpu_tried_rest_accesses,
        ]
    }

    fn counts_mut(&mut self) -> [&mut u64; 50] {
        [
            &mut self.quarter_placements,
            &mut self.half_pairs_tested,
            &mut self.keys_built,
            &mut self.regenerations,
            &mut self.pieces,
            &mut self.stored_keys,
            &mut self.queries,
            &mut self.pair_product,
            &mut self.blocks_built,
            &mut self.visited_pairs,
            &mut self.direct_pairs,
            &mut self.hits,
            &mut self.routing_tests,
            &mut self.table_key_tests,
            &mut self.table_chunks,
            &mut self.route_atomics,
            &mut self.tree_tests,
            &mut self.gpu_submits,
            &mut self.gpu_waits,
            &mut self.gpu_steps,
            &mut self.gpu_wide_steps,
            &mut self.gpu_bytes_up,
            &mut self.gpu_resident_bytes,
            &mut self.gpu_bytes_down,
            &mut self.host_tree_keys,
            &mut self.host_joins,
            &mut self.gpu_batches,
            &mut self.gpu_word_sets,
            &mut self.gpu_dependent_steps,
            &mut self.gpu_top_nodes,
            &mut self.gpu_top_accesses,
            &mut self.gpu_wide_tiles,
            &mut self.gpu_subtrees,
            &mut self.gpu_rest_iterations,
            &mut self.gpu_rest_accesses,
            &mut self.gpu_pair_leaves,
            &mut self.gpu_pair_rounds,
            &mut self.gpu_pair_accesses,
            &mut self.gpu_route_walkers,
            &mut self.gpu_pairs_written,
            &mut self.gpu_jobs,
            &mut self.gpu_count_loads,
            &mut self.gpu_part_pairs,
            &mut self.gpu_cut_keys,
            &mut self.gpu_top_writes,
            &mut self.gpu_rest_writes,
            &mut self.gpu_visit_chunks,
            &mut self.gpu_tried_top_accesses,
            &mut self.gpu_tried_wide_tiles,
            &mut self.gpu_tried_rest_accesses,
        ]
    }

    fn seconds(&self) -> [f64; 13] {
        [
            self.quarter_seconds,
            self.half_seconds,
            self.sieve_seconds,
            self.match_seconds,
            self.count_kernel_seconds,
            self.gpu_half_join_seconds,
            self.gpu_sieve_seconds,
            self.gpu_tables_seconds,
            self.gpu_routing_seconds,
            self.gpu_ties_seconds,
            self.gpu_span_5us_seconds,
            self.gpu_span_30us_seconds,
            self.gpu_full_width_seconds,
        ]
    }

    fn seconds_mut(&mut self) -> [&mut f64; 13] {
        [
            &mut self.quarter_seconds,
            &mut self.half_seconds,
            &mut self.sieve_seconds,
            &mut self.match_seconds,
            &mut self.count_kernel_seconds,
            &mut self.gpu_half_join_seconds,
            &mut self.gpu_sieve_seconds,
            &mut self.gpu_tables_seconds,
            &mut self.gpu_routing_seconds,
            &mut self.gpu_ties_seconds,
            &mut self.gpu_span_5us_seconds,
            &mut self.gpu_span_30us_seconds,
            &mut self.gpu_full_width_seconds,
        ]
    }

    /// The GPU seconds of each pass of a batch (the GPU engine's, `--features gpu`), by pass name.
    pub fn gpu_pass_seconds(&self) -> [(&'static str, f64); 6] {
        [
            ("half_join", self.gpu_half_join_seconds),
            ("sieve", self.gpu_sieve_seconds),
            ("tables", self.gpu_tables_seconds),
            ("routing", self.gpu_routing_seconds),
            ("count", self.count_kernel_seconds),
            ("ties", self.gpu_ties_seconds),
        ]
    }
}

/// Each GPU pass, as [`Work::gpu_pass_seconds`] names it, and the counter of its seconds in
/// [`Work::counters`].
pub const GPU_PASS_COUNTERS: [(&str, &str); 6] = [
    ("half_join", "gpu_half_join_seconds"),
    ("sieve", "gpu_sieve_seconds"),
    ("tables", "gpu_tables_seconds"),
    ("routing", "gpu_routing_seconds"),
    ("count", "count_kernel_seconds"),
    ("ties", "gpu_ties_seconds"),
];

/// What a GPU did over a whole run, for `count --json`'s `"gpu"` object: the feeding
/// counters, the kernels' work and each pass's GPU seconds (from the GPU's timestamps).
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct GpuWork {
    /// Command buffers submitted.
    pub gpu_submits: u64,
    /// Times a host thread blocked on the GPU.
    pub gpu_waits: u64,
    /// Dispatches, copies and clears recorded.
    pub gpu_steps: u64,
    /// Of those, the ones that split a tree level's largest nodes across workgroups.
    #[serde(default)]
    pub gpu_wide_steps: u64,
    /// Bytes uploaded.
    pub gpu_bytes_up: u64,
    /// Of those, the quarter words made resident (once each).
    #[serde(default)]
    pub gpu_resident_bytes: u64,
    /// Bytes read back.
    pub gpu_bytes_down: u64,
    /// Keys and queries a host-side tree build scanned (0: trees are built on the GPU).
    pub host_tree_keys: u64,
    /// Joins made on the CPU instead: they carried more quarter words than a batch holds.
    #[serde(default)]
    pub host_joins: u64,
    /// Blocks the table build made.
    pub blocks_built: u64,
    /// (query, block) visits of the block count.
    pub visited_pairs: u64,
    /// Tests the routing made on its way to the blocks.
    pub routing_tests: u64,
    /// (query, key) pairs the block count found disjoint.
    pub hits: u64,
    /// Keys the table build read and tested, a chunk of one key each.
    pub table_key_tests: u64,
    /// Chunk tables built.
    pub table_chunks: u64,
    /// Global atomic read-modify-writes of the routing.
    pub route_atomics: u64,
    /// Keys and sampled queries the tree build read.
    pub tree_tests: u64,
    /// GPU seconds of each pass, by name.
    pub pass_seconds: std::collections::BTreeMap<String, f64>,
    /// Batches run.
    #[serde(default)]
    pub gpu_batches: u64,
    /// Sets of quarter words carried up (see [`Work::gpu_word_sets`]).
    #[serde(default)]
    pub gpu_word_sets: u64,
    /// The batches' dependent steps, all of them (see [`Work::gpu_dependent_steps`]).
    #[serde(default)]
    pub gpu_dependent_steps: u64,
    /// The span model's GPU seconds over the batches this run formed, by a dependent step's
    /// latency (`nqueens::gpu`'s model; modelled from this run's counters, not timed).
    #[serde(default)]
    pub gpu_span_seconds: SpanSeconds,
    /// The same work at the whole GPU's width: the span's floor.
    #[serde(default)]
    pub gpu_full_width_seconds: f64,
}

/// Seconds by the span model at each dependent step latency it reports.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, serde::Deserialize)]
pub struct SpanSeconds {
    /// With a dependent step of 5 microseconds at least.
    pub step_5us: f64,
    /// With a dependent step of 30 microseconds at least.
    pub step_30us: f64,
}

impl From<&Work> for GpuWork {
    fn from(w: &Work) -> Self {
        GpuWork {
            gpu_submits: w.gpu_submits,
            gpu_waits: w.gpu_waits,
            gpu_steps: w.gpu_steps,
            gpu_wide_steps: w.gpu_wide_steps,
            gpu_bytes_up: w.gpu_bytes_up,
            gpu_resident_bytes: w.gpu_resident_bytes,
            gpu_bytes_down: w.gpu_bytes_down,
            host_tree_keys: w.host_tree_keys,
            host_joins: w.host_joins,
            blocks_built: w.blocks_built,
            visited_pairs: w.visited_pairs,
            routing_tests: w.routing_tests,
            hits: w.hits,
            table_key_tests: w.table_key_tests,
            table_chunks: w.table_chunks,
            route_atomics: w.route_atomics,
            tree_tests: w.tree_tests,
            pass_seconds: w
                .gpu_pass_seconds()
                .iter()
                .map(|&(name, s)| (name.to_string(), s))
                .collect(),
            gpu_batches: w.gpu_batches,
            gpu_word_sets: w.gpu_word_sets,
            gpu_dependent_steps: w.gpu_dependent_steps,
            gpu_span_seconds: SpanSeconds {
                step_5us: w.gpu_span_5us_seconds,
                step_30us: w.gpu_span_30us_seconds,
            },
            gpu_full_width_seconds: w.gpu_full_width_seconds,
        }
    }
}

/// Whether the counter named `name` is a peak: the most of any one batch, which combines
/// over tasks and runs by the largest, and is never scaled like a sum.
pub fn is_peak(name: &str) -> bool {
    name.ends_with("_peak")
}

/// The names of the peaks, in [`Work::counters`] order (the field names).
const PEAK_NAMES: [&str; 15] = [
    "gpu_top_chain_peak",
    "gpu_top_levels_peak",
    "gpu_wide_levels_peak",
    "gpu_rest_iterations_peak",
    "gpu_rest_accesses_peak",
    "gpu_pair_rounds_peak",
    "gpu_pair_accesses_peak",
    "gpu_route_tests_peak",
    "gpu_count_loads_peak",
    "gpu_fill_blocks_peak",
    "gpu_batch_joins_peak",
    "gpu_cut_stored_peak",
    "gpu_cut_queries_peak",
    "gpu_cut_blocks_peak",
    "gpu_cut_routes_peak",
];

/// The names of the counts, in [`Work::counters`] order (the field names).
const COUNT_NAMES: [&str; 50] = [
    "quarter_placements",
    "half_pairs_tested",
    "keys_built",
    "regenerations",
    "pieces",
    "stored_keys",
    "queries",
    "pair_product",
    "blocks_built",
    "visited_pairs",
    "direct_pairs",
    "hits",
    "routing_tests",
    "table_key_tests",
    "table_chunks",
    "route_atomics",
    "tree_tests",
    "gpu_submits",
    "gpu_waits",
    "gpu_steps",
    "gpu_wide_steps",
    "gpu_bytes_up",
    "gpu_resident_bytes",
    "gpu_bytes_down",
    "host_tree_keys",
    "host_joins",
    "gpu_batches",
    "gpu_word_sets",
    "gpu_dependent_steps",
    "gpu_top_nodes",
    "gpu_top_accesses",
    "gpu_wide_tiles",
    "gpu_subtrees",
    "gpu_rest_iterations",
    "gpu_rest_accesses",
    "gpu_pair_leaves",
    "gpu_pair_rounds",
    "gpu_pair_accesses",
    "gpu_route_walkers",
    "gpu_pairs_written",
    "gpu_jobs",
    "gpu_count_loads",
    "gpu_part_pairs",
    "gpu_cut_keys",
    "gpu_top_writes",
    "gpu_rest_writes",
    "gpu_visit_chunks",
    "gpu_tried_top_accesses",
    "gpu_tried_wide_tiles",
    "gpu_tried_rest_accesses",
];

/// The names of the times, in [`Work::counters`] order (the field names).
const SECONDS_NAMES: [&str; 13] = [
    "quarter_seconds",
    "half_seconds",
    "sieve_seconds",
    "match_seconds",
    "count_kernel_seconds",
    "gpu_half_join_seconds",
    "gpu_sieve_seconds",
    "gpu_tables_seconds",
    "gpu_routing_seconds",
    "gpu_ties_seconds",
    "gpu_span_5us_seconds",
    "gpu_span_30us_seconds",
    "gpu_full_width_seconds",
];

/// The seconds on the CPU-time clock `clock`, where the system has it.
#[cfg(unix)]
fn cpu_clock_seconds(clock: libc::clockid_t) -> Option<f64> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec for the duration of the call.
    let rc = unsafe { libc::clock_gettime(clock, &mut ts) };
    (rc == 0).then_some(ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9)
}

/// CPU seconds used by the calling thread, where the system has a per-thread clock.
#[cfg(unix)]
pub(crate) fn thread_cpu_seconds() -> Option<f64> {
    cpu_clock_seconds(libc::CLOCK_THREAD_CPUTIME_ID)
}

/// CPU seconds used by the calling thread (not measured on this system).
#[cfg(not(unix))]
pub(crate) fn thread_cpu_seconds() -> Option<f64> {
    None
}

/// CPU seconds used so far by the whole process (every thread, user and system time), where
/// the system has a process clock.
#[cfg(unix)]
pub fn process_cpu_seconds() -> Option<f64> {
    cpu_clock_seconds(libc::CLOCK_PROCESS_CPUTIME_ID)
}

/// CPU seconds used so far by the whole process (not measured on this system).
#[cfg(not(unix))]
pub fn process_cpu_seconds() -> Option<f64> {
    None
}

/// A stopwatch of the process's CPU time: what a run used, all threads together.
#[derive(Debug, Clone, Copy)]
pub struct CpuClock(Option<f64>);

impl CpuClock {
    /// Starts the stopwatch.
    pub fn start() -> Self {
        CpuClock(process_cpu_seconds())
    }

    /// CPU time the process used since [`CpuClock::start`] (`None` without a process clock).
    pub fn elapsed(&self) -> Option<std::time::Duration> {
        let (start, now) = (self.0?, process_cpu_seconds()?);
        Some(std::time::Duration::from_secs_f64((now - start).max(0.0)))
    }
}

/// A stopwatch of this thread's CPU time, or of wall time where there is no such clock (or
/// where it is asked for).
pub(crate) struct Clock {
    cpu: Option<f64>,
    wall: Instant,
}

impl Clock {
    /// Starts the stopwatch: of this thread's CPU time, or of wall time with `wall`: work that waits on a GPU spends its
    /// time there, not on this thread's CPU.
    pub(crate) fn start_for(wall: bool) -> Self {
        Clock {
            cpu: if wall { None } else { thread_cpu_seconds() },
            wall: Instant::now(),
        }
    }

    /// Seconds since [`Clock::start`].
    pub(crate) fn seconds(&self) -> f64 {
        match (self.cpu, thread_cpu_seconds()) {
            (Some(a), Some(b)) => b - a,
            _ => self.wall.elapsed().as_secs_f64(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_gpu_pass_names_the_counter_of_its_seconds() {
        let mut w = Work::default();
        for (i, s) in w.seconds_mut().into_iter().enumerate() {
            *s = i as f64 + 1.0;
        }
        let counters: std::collections::BTreeMap<_, _> = w.counters().into_iter().collect();
        let passes = w.gpu_pass_seconds();
        assert_eq!(passes.len(), GPU_PASS_COUNTERS.len());
        for ((pass, seconds), (name, counter)) in passes.into_iter().zip(GPU_PASS_COUNTERS) {
            assert_eq!((pass, Some(&seconds)), (name, counters.get(counter)));
        }
    }

    #[test]
    fn names_follow_the_fields_and_counters_add() {
        let mut a = Work {
            keys_built: 3,
            routing_tests: 5,
            match_seconds: 0.5,
            ..Work::default()
        };
        let json = serde_json::to_value(a).unwrap();
        for (name, value) in a.counters() {
            assert_eq!(json[name].as_f64(), Some(value), "{name}");
        }
        assert_eq!(a.counters().len(), json.as_object().unwrap().len());
        let b = a;
        a.add(&b);
        assert_eq!((a.keys_built, a.routing_tests), (6, 10));
        assert_eq!(a.match_seconds, 1.0);
        // Peaks take the larger, whichever side has it.
        let c = Work {
            gpu_route_tests_peak: 7,
            gpu_batches: 1,
            ..Work::default()
        };
        let mut d = Work {
            gpu_route_tests_peak: 9,
            gpu_batches: 1,
            ..Work::default()
        };
        a.add(&c);
        d.add(&c);
        assert_eq!((a.gpu_route_tests_peak, d.gpu_route_tests_peak), (7, 9));
        assert_eq!(d.gpu_batches, 2);
        for (name, _) in a.counters() {
            assert_eq!(is_peak(name), PEAK_NAMES.contains(&name), "{name}");
        }
    }
}
