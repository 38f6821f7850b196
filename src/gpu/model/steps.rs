//! One batch, step by step, as the GPU runs it: every step the next one waits on (wgpu puts
//! a barrier between two dispatches that share a read-write buffer, and every kernel of a
//! batch writes `scan` or `results`), each lasting the longest of the step latency, its
//! longest workgroup, and its work spread over the whole GPU. The list follows what
//! `slot/record.rs` records; debug builds (every GPU test, on lavapipe in CI) check each
//! batch's recorded steps against it (`feeder/run.rs`).

use super::rates::*;
use crate::gpu::layout::{
    PACKED_QUADS, PLACE_GROUPS, SCAN_SEGMENT, TILE, TILE_WORDS, TOP_DEPTH, TOP_GROUP, TOP_LEVELS,
    TOP_QUADS, WIDE_TILE,
};
use crate::gpu::shader::ROUTES_PER_GROUP;

/// What the span model reads of one batch: sizes the host knows, the kernels' work counters
/// (sums over the batch) and their peaks (the most of one workgroup or invocation).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Shape {
    pub(crate) joins: f64,
    pub(crate) jobs: f64,
    /// Work items of the half join (a north word and a tile of 32 south words each).
    pub(crate) items: f64,
    /// Pairs its write pass tests: those of the items with keys their join keeps (a
    /// portion's items outside its range only look up their job).
    pub(crate) written_pairs: f64,
    pub(crate) bytes_up: f64,
    /// Uploads into buffers already written by another upload of the batch (each waits).
    pub(crate) extra_uploads: f64,
    /// Values of the scan over the blocks' route counts: the slot's room, not the need.
    pub(crate) block_scan: f64,
    /// The top levels built level by level, and of those the ones split across workgroups.
    pub(crate) top_levels: u32,
    pub(crate) wide_levels: u32,
    /// Each top level's nodes, accesses, busiest workgroup's accesses and tiles.
    pub(crate) levels: [Level; TOP_LEVELS as usize],
    pub(crate) subtrees: f64,
    pub(crate) rest_iterations: f64,
    pub(crate) rest_accesses: f64,
    /// Keys the subtrees wrote, each also one of their accesses (a pass counts one access
    /// of a key it reads and writes).
    pub(crate) rest_writes: f64,
    pub(crate) rest_iterations_peak: f64,
    pub(crate) rest_accesses_peak: f64,
    pub(crate) blocks: f64,
    pub(crate) fill_blocks_peak: f64,
    pub(crate) queries: f64,
    pub(crate) routing_tests: f64,
    pub(crate) route_tests_peak: f64,
    /// Routes, each one (query, block) visit of the block count.
    pub(crate) routes: f64,
    /// Routes times the chunks of their blocks' tables.
    pub(crate) visit_chunks: f64,
    pub(crate) count_loads: f64,
    pub(crate) count_loads_peak: f64,
    pub(crate) tie_groups: f64,
    pub(crate) tie_pairs: f64,
    /// Whether wgpu checks each indirect dispatch's arguments with a dispatch of its own.
    pub(crate) validation: bool,
    /// Whether the passes are timed (a resolve and a copy more).
    pub(crate) timed: bool,
}

/// One top level of the tree: its nodes, their accesses (a pass over a key one, a move's
/// read and write included), the busiest workgroup's, its tiles, and the keys its
/// workgroups' moves wrote.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct Level {
    pub(crate) nodes: f64,
    pub(crate) accesses: f64,
    pub(crate) accesses_peak: f64,
    pub(crate) tiles: f64,
    pub(crate) writes: f64,
}

/// One dependent step: its pass (`slot::PASSES`' index; the copies at the ends count with
/// the first and last), its longest workgroup's seconds and its seconds at the whole GPU's
/// width.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Step {
    pub(crate) pass: usize,
    pub(crate) longest: f64,
    pub(crate) full: f64,
}

impl Step {
    /// Its seconds at `latency` a step.
    pub(crate) fn seconds(&self, latency: f64) -> f64 {
        latency.max(self.longest).max(self.full)
    }
}

const HALF_JOIN: usize = 0;
const SIEVE: usize = 1;
const TABLES: usize = 2;
const ROUTING: usize = 3;
const COUNT: usize = 4;
const TIES: usize = 5;

/// A step whose longest workgroup takes `longest` seconds and whose work takes `full` at the
/// whole GPU's width.
fn step(pass: usize, longest: f64, full: f64) -> Step {
    Step {
        pass,
        longest,
        full,
    }
}

/// `groups` workgroups of `each` seconds: the longest is one, the full width all of them
/// over the GPU's slots.
fn even(pass: usize, groups: f64, each: f64) -> Step {
    step(pass, each, groups.ceil() * each / SLOTS)
}

/// The dependent steps of `shape`'s batch, in the order they run.
pub(crate) fn steps(shape: &Shape) -> Vec<Step> {
    let mut out = Vec::new();
    half_join(shape, &mut out);
    sieve(shape, &mut out);
    later(shape, &mut out);
    out
}

/// Uploads, clears, the half join and its bookkeeping.
fn half_join(s: &Shape, out: &mut Vec<Step>) {
    let up = s.bytes_up / BYTES_UP_PER_SECOND;
    out.push(step(HALF_JOIN, 0.0, up));
    for _ in 0..s.extra_uploads as u64 {
        out.push(step(HALF_JOIN, 0.0, 0.0));
    }
    let pairs = s.items * f64::from(TILE);
    let search = job_search(s);
    out.push(step(HALF_JOIN, search + PAIR_RUN, pairs / PAIRS_PER_SECOND));
    scan(HALF_JOIN, s.items + 1.0, out);
    out.push(plan_step(HALF_JOIN, s.joins));
    // A batch without jobs (its joins all found empty) dispatches neither.
    if s.jobs > 0.0 {
        out.push(even(HALF_JOIN, s.jobs / GROUP, 8.0 * DEPENDENT_LOAD));
    }
    // Every item looks up its job; those with keys to keep test their pairs again.
    let lookups = s.items * search / (GROUP * SLOTS);
    let written = s.written_pairs / PAIRS_PER_SECOND;
    if s.items > 0.0 {
        out.push(step(HALF_JOIN, search + PAIR_RUN, written.max(lookups)));
    }
}

/// Seconds of a half join item's search for its job among all the batch's: a chain of
/// dependent loads (a warp's items, whose paths mostly coincide, load together).
fn job_search(s: &Shape) -> f64 {
    (s.jobs + 1.0).log2().ceil() * DEPENDENT_LOAD
}

/// The steps of an in-place scan of `len` values.
fn scan(pass: usize, len: f64, out: &mut Vec<Step>) {
    let segment = f64::from(SCAN_SEGMENT);
    if len <= segment {
        out.push(even(pass, 1.0, SCAN_GROUP));
        return;
    }
    let segments = (len / segment).ceil();
    out.push(even(pass, segments, SCAN_GROUP));
    scan(pass, segments, out);
    out.push(even(pass, segments, SCAN_GROUP));
}

/// A one-workgroup bookkeeping step over every join, 256 at a time.
fn plan_step(pass: usize, joins: f64) -> Step {
    step(pass, (joins / GROUP).ceil().max(1.0) * PLAN_CHUNK, 0.0)
}

/// The work of a tree step: its workgroups' accesses (a pass over a key one, as `ACCESS`
/// was fitted), the keys they wrote, the busiest workgroup's accesses after its node
/// iterations, and all the workgroups' iterations.
struct TreeWork {
    accesses: f64,
    writes: f64,
    peak: f64,
    iterations: f64,
    total_iterations: f64,
}

/// A tree step of `w`: the whole GPU makes `rate` reads or writes a second (HBM's for the
/// top levels, L2's where a workgroup's keys stay in the cache), and a pass that moves a
/// key makes two.
fn tree_step(w: TreeWork, rate: f64) -> Step {
    let busiest = w.iterations * NODE + w.peak / GROUP * ACCESS;
    let all = w.total_iterations * NODE + w.accesses / GROUP * ACCESS;
    step(
        SIEVE,
        busiest,
        (all / SLOTS).max((w.accesses + w.writes) / rate),
    )
}

/// The rounds a top node's workgroup chooses its pass's cuts in: its own bit, then each
/// depth's, `TOP_GROUP` nodes a round (a read of the sample each).
fn top_choices() -> f64 {
    let groups: u32 = (1..TOP_DEPTH)
        .map(|d| (1u32 << d).div_ceil(TOP_GROUP))
        .sum();
    f64::from(1 + groups)
}

/// The tree's top levels, subtrees and leaves of two blocks, and the blocks' placing.
fn sieve(s: &Shape, out: &mut Vec<Step>) {
    // A top node's workgroup chooses its pass's cuts round by round (an iteration each)
    // before its one partition.
    let depth = top_choices();
    for (d, level) in s.levels.iter().enumerate().take(s.top_levels as usize) {
        let work = TreeWork {
            accesses: level.accesses,
            writes: level.writes,
            peak: level.accesses_peak,
            iterations: depth,
            total_iterations: level.nodes * depth,
        };
        out.push(tree_step(work, ACCESSES_PER_SECOND));
        if (d as u32) < s.wide_levels {
            wide(level, out);
        }
    }
    // The subtrees and their leaves of two blocks (each round of ordering one an iteration),
    // an indirect dispatch whose arguments the top levels kept.
    validation(s, SIEVE, out);
    let work = TreeWork {
        accesses: s.rest_accesses,
        writes: s.rest_writes,
        peak: s.rest_accesses_peak,
        iterations: s.rest_iterations_peak,
        total_iterations: s.rest_iterations,
    };
    out.push(tree_step(work, L2_ACCESSES_PER_SECOND));
    out.push(plan_step(SIEVE, s.joins));
    out.push(place_blocks(s));
}

/// `place_blocks`: `PLACE_GROUPS` workgroups a fill, each a run of its leaves 256 at a time
/// (a leaf is a block or two), after adding up the blocks of the leaves before its run
/// (sequential accesses, one a round of 256 leaves).
fn place_blocks(s: &Shape) -> Step {
    let chunk = 10.0 * BARRIER + 2.0 * DEPENDENT_LOAD;
    let groups = f64::from(PLACE_GROUPS);
    let chunks = (s.fill_blocks_peak / GROUP).ceil().max(1.0);
    let each = (chunks / groups).ceil();
    let longest = each * chunk + (chunks - each) * ACCESS + 10.0 * BARRIER;
    // The runs before a workgroup's: on average half of the fill's.
    let before = s.blocks * (groups - 1.0) / 2.0 / groups;
    let all = ((s.blocks / GROUP).ceil() * chunk + before / GROUP * ACCESS) / SLOTS;
    step(SIEVE, longest, all)
}

/// The two steps of a top level whose largest nodes are split in tiles across workgroups:
/// each tile's keys counted (a scan of their packed counts, `PACKED_QUADS` vectors), and
/// moved to the other key buffer (each tile first summing its node's counts of each part,
/// at most all the level's, `TILE_WORDS - 1` words a tile, in two scans a vector of four
/// parts, then its keys read, held, placed by one scan of packed counts and written).
fn wide(level: &Level, out: &mut Vec<Step>) {
    let per = f64::from(WIDE_TILE) / GROUP;
    let keys = level.tiles * f64::from(WIDE_TILE);
    let packed_scan = f64::from(PACKED_QUADS) * 10.0 * BARRIER;
    let read = per * ACCESS + packed_scan;
    out.push(step(
        SIEVE,
        read,
        (level.tiles * read / SLOTS).max(keys / ACCESSES_PER_SECOND),
    ));
    let words = f64::from(TILE_WORDS - 1);
    let scans = 2.0 * f64::from(TOP_QUADS);
    let sums = words * (level.tiles / GROUP).ceil() * ACCESS + scans * SCAN_GROUP;
    let moved = sums + per * 2.0 * ACCESS + packed_scan;
    let all = (level.tiles * moved / SLOTS).max(2.0 * keys / ACCESSES_PER_SECOND);
    out.push(step(SIEVE, moved, all));
}

/// wgpu's check of an indirect dispatch's arguments, where it is on: one workgroup, a step
/// of its own.
fn validation(s: &Shape, pass: usize, out: &mut Vec<Step>) {
    if s.validation {
        out.push(step(pass, 0.0, 0.0));
    }
}

/// Tables, routing, the block count, ties and the copies back.
fn later(s: &Shape, out: &mut Vec<Step>) {
    validation(s, TABLES, out);
    out.push(even(TABLES, s.blocks, TABLE_GROUP));
    // Routing: a walk of each query that counts each block's queries (and keeps each
    // workgroup's histogram of them), then one that places them (once the histogram is put
    // back). A workgroup whose histogram found no room counts its queries again first;
    // the slot's room makes that rare, and it is left out.
    let walk = s.route_tests_peak * DEPENDENT_LOAD;
    let tests = s.routing_tests / ROUTING_TESTS_PER_SECOND;
    validation(s, ROUTING, out);
    out.push(step(ROUTING, walk, tests));
    scan(ROUTING, s.block_scan, out);
    out.push(plan_step(ROUTING, s.joins));
    validation(s, ROUTING, out);
    out.push(step(ROUTING, walk, tests));
    validation(s, COUNT, out);
    // A block count workgroup takes up to ROUTES_PER_GROUP routes and loads the tables of
    // each block they reach; its visits are priced as visits of the chunks the rates were
    // measured at.
    let priced = rated_visits(s);
    let per_route = if s.routes > 0.0 {
        priced / s.routes
    } else {
        1.0
    };
    let routes_each = s.routes.min(ROUTES_PER_GROUP as f64) * per_route;
    let busiest = s.count_loads_peak * TABLE_LOAD + routes_each / VISITS_PER_GROUP_SECOND;
    let all = (priced / VISITS_PER_GROUP_SECOND + s.count_loads * TABLE_LOAD) / SLOTS;
    out.push(step(COUNT, busiest, all.max(priced / VISITS_PER_SECOND)));
    validation(s, TIES, out);
    let ties = even(TIES, s.tie_groups, TIE_GROUP);
    out.push(step(
        TIES,
        ties.longest,
        ties.full.max(s.tie_pairs / TIE_PAIRS_PER_SECOND),
    ));
    // The counters' and rows' copy back, and the timestamps' resolve and copy.
    let copies = if s.timed { 3 } else { 1 };
    for _ in 0..copies {
        out.push(step(TIES, 0.0, 0.0));
    }
}

/// The batch's visits as that many visits of [`VISIT_RATE_CHUNKS`] chunks: each visit's
/// fixed part, and a share of a visit a chunk (the chunks it reads).
fn rated_visits(s: &Shape) -> f64 {
    let fixed = 1.0 - VISIT_RATE_CHUNKS * VISIT_CHUNK_SHARE;
    s.routes * fixed + s.visit_chunks * VISIT_CHUNK_SHARE
}

/// What one batch costs by its steps, at one step latency.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct Span {
    /// Its critical path, seconds.
    pub(crate) seconds: f64,
    /// Its work at the whole GPU's width (the span's floor), seconds.
    pub(crate) full: f64,
    /// The critical path of each pass (`slot::PASSES` order).
    pub(crate) passes: [f64; 6],
    /// Its dependent steps.
    pub(crate) steps: u64,
}

/// The span of `shape`'s batch at `latency` a step.
pub(crate) fn span(shape: &Shape, latency: f64) -> Span {
    let mut out = Span::default();
    for st in steps(shape) {
        let t = st.seconds(latency);
        out.seconds += t;
        out.full += st.full;
        out.passes[st.pass] += t;
        out.steps += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A batch of a few joins whose every step is short: latency-bound at both latencies.
    fn small() -> Shape {
        Shape {
            joins: 4.0,
            jobs: 40.0,
            items: 2000.0,
            written_pairs: 2000.0 * f64::from(TILE),
            bytes_up: 1e5,
            block_scan: 54_000.0,
            top_levels: 2,
            levels: [Level {
                nodes: 4.0,
                accesses: 4.0 * 20_000.0,
                accesses_peak: 20_000.0,
                tiles: 0.0,
                writes: 0.0,
            }; TOP_LEVELS as usize],
            subtrees: 8.0,
            rest_iterations: 80.0,
            rest_accesses: 1e5,
            rest_iterations_peak: 12.0,
            rest_accesses_peak: 2e4,
            blocks: 100.0,
            fill_blocks_peak: 30.0,
            queries: 1e4,
            routing_tests: 1e5,
            route_tests_peak: 10.0,
            routes: 2e5,
            visit_chunks: 2e6,
            count_loads: 100.0,
            count_loads_peak: 4.0,
            timed: true,
            ..Shape::default()
        }
    }

    #[test]
    fn a_step_lasts_its_latency_its_longest_workgroup_or_its_work_at_full_width() {
        let st = step(COUNT, 3e-6, 7e-6);
        assert_eq!(st.seconds(5e-6), 7e-6);
        assert_eq!(st.seconds(30e-6), 30e-6);
        assert_eq!(step(COUNT, 9e-6, 1e-6).seconds(5e-6), 9e-6);
    }

    #[test]
    fn every_dependent_step_counts_once_and_the_span_is_their_sum() {
        let s = small();
        let at5 = span(&s, 5e-6);
        let at30 = span(&s, 30e-6);
        assert_eq!(at5.steps, steps(&s).len() as u64);
        assert_eq!(at5.steps, at30.steps);
        // Every step takes at least the latency, and the passes add up to the whole.
        assert!(at30.seconds >= 30e-6 * at30.steps as f64 - 1e-12);
        assert!((at5.passes.iter().sum::<f64>() - at5.seconds).abs() < 1e-12);
        assert!(at5.full <= at5.seconds);
        // wgpu's checks of the six indirect dispatches are a step each.
        let checked = span(
            &Shape {
                validation: true,
                ..s.clone()
            },
            5e-6,
        );
        assert_eq!(checked.steps, at5.steps + 6);
        // A level split across workgroups adds its two steps.
        let wide = span(
            &Shape {
                wide_levels: 1,
                ..s
            },
            5e-6,
        );
        assert_eq!(wide.steps, at5.steps + 2);
    }

    #[test]
    fn an_item_searches_the_batch_jobs_not_its_items() {
        let write = |jobs: f64| {
            let s = Shape {
                jobs,
                items: 1e8,
                written_pairs: 0.0,
                ..small()
            };
            let mut out = Vec::new();
            half_join(&s, &mut out);
            out.last().expect("the write step").full
        };
        // A search of 2^16 jobs is 17 loads, of 10^8 (a sample from before jobs were
        // counted: one an item) 27; every item searches.
        let each = 1e8 / (GROUP * SLOTS) * DEPENDENT_LOAD;
        assert!((write(65_536.0) - 17.0 * each).abs() < 1e-12);
        assert!((write(1e8) - 27.0 * each).abs() < 1e-12);
    }

    #[test]
    fn a_long_workgroup_lengthens_its_step_whatever_the_rest_do() {
        let s = small();
        let base = span(&s, 5e-6).seconds;
        let long = Shape {
            route_tests_peak: 10_000.0,
            ..s
        };
        // Two walks of 10,000 dependent loads of 100 ns (one a step), less the two
        // latencies they replace.
        let added = span(&long, 5e-6).seconds - base;
        let walk = 10_000.0 * DEPENDENT_LOAD;
        assert!((added - (2.0 * walk - 2.0 * 5e-6)).abs() < 1e-9, "{added}");
    }

    #[test]
    fn a_large_fills_blocks_are_placed_by_several_workgroups() {
        let s = Shape {
            fill_blocks_peak: 35_535.0,
            blocks: 40_000.0,
            ..small()
        };
        // One workgroup alone walked its 139 rounds of 256 leaves in turn.
        let alone = (35_535.0f64 / GROUP).ceil() * (10.0 * BARRIER + 2.0 * DEPENDENT_LOAD);
        let placed = place_blocks(&s);
        assert!(placed.longest < alone / 4.0, "{placed:?}");
        assert!(placed.full < placed.longest);
    }

    #[test]
    fn a_visit_costs_by_its_chunks_as_the_visit_rates_were_measured() {
        let count = |chunks: f64| {
            let s = Shape {
                routes: 1e9,
                visit_chunks: chunks * 1e9,
                ..small()
            };
            let mut out = Vec::new();
            later(&s, &mut out);
            out.into_iter()
                .find(|st| st.pass == COUNT)
                .expect("the block count's step")
                .full
        };
        // At the chunks the rate was measured at, its rate; at 11 chunks, the slower
        // rate measured there; fewer chunks, less.
        assert!((count(10.0) - 1e9 / VISITS_PER_SECOND).abs() < 1e-12);
        assert!((count(11.0) / count(10.0) - 22.8 / 21.6).abs() < 1e-9);
        assert!(count(8.0) < 0.9 * count(10.0));
        assert!(count(1.0) > 0.4 * count(10.0));
    }

    #[test]
    fn a_key_a_tree_pass_moves_is_read_and_written_at_the_memory_rate() {
        // The subtrees' step, its accesses at L2's rate: 5e9 of them take 10 ms.
        let rest = |writes: f64| {
            let s = Shape {
                rest_accesses: 5e9,
                rest_writes: writes,
                ..small()
            };
            let mut out = Vec::new();
            sieve(&s, &mut out);
            out.into_iter()
                .find(|st| st.full > 5e-3)
                .expect("the subtrees' step")
        };
        let (read, moved) = (rest(0.0), rest(2e9));
        assert!((read.full - 5e9 / L2_ACCESSES_PER_SECOND).abs() < 1e-12);
        assert!((moved.full - 7e9 / L2_ACCESSES_PER_SECOND).abs() < 1e-12);
        // Its busiest workgroup is timed by its passes, as `ACCESS` was fitted.
        assert_eq!(read.longest, moved.longest);
    }
}
