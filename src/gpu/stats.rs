//! A batch's work counters as the host reads them back: the kernels' sums and peaks
//! ([`Stat`], [`LevelStat`]), the results rows, and what the host knows of the batch, turned
//! into [`Work`] and into the span model's view of the batch ([`Shape`]).

use super::layout::{
    FILL_ERRORS, FILL_SWAPPED, GROUP_SIZE, RESULT_BLOCKS, RESULT_ROUTES, RESULT_SIZES,
    RESULT_STATUS, RESULT_TESTS, SUBTREE_KEYS, TIE_EAST, TOP_LEVELS,
};
use super::model::{span, Level, Shape, LATENCIES};
use super::shader::{LevelStat, Stat};
use crate::work::Work;

/// What the host knows of a batch it recorded.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct Recorded {
    pub(crate) joins: u32,
    pub(crate) jobs: u32,
    pub(crate) items: u32,
    pub(crate) bytes_up: u64,
    /// Uploads into a buffer another upload of the batch wrote first.
    pub(crate) extra_uploads: u32,
    /// The dependent steps it recorded, wgpu's checks of indirect dispatches left out.
    pub(crate) steps: u64,
    pub(crate) top_levels: u32,
    pub(crate) wide_levels: u32,
    /// Whether its levels were chosen by the nodes of batches before it (the first batches'
    /// are bounds).
    pub(crate) learned: bool,
    /// The slot's `wide_keys`: a node past it needs a level's wide steps.
    pub(crate) wide_keys: u32,
    /// Values of the scan over the blocks' route counts.
    pub(crate) block_scan: u32,
    /// Whether wgpu checks indirect dispatches' arguments with dispatches of its own.
    pub(crate) validation: bool,
    pub(crate) timed: bool,
}

/// The 64-bit value of counter slot `slot`.
fn sum(stats: &[u32], slot: u32) -> u64 {
    let at = 2 * slot as usize;
    u64::from(stats[at]) | u64::from(stats[at + 1]) << 32
}

/// The peak in counter slot `slot` (its low word).
fn peak(stats: &[u32], slot: u32) -> u64 {
    u64::from(stats[2 * slot as usize])
}

/// The most keys of one node at each top level of the batch's trees (0 past the levels
/// it built one by one): the high word of the level's accesses peak (tree.wgsl `top`).
pub(crate) fn level_keys_peaks(stats: &[u32]) -> [u64; TOP_LEVELS as usize] {
    std::array::from_fn(|d| {
        let at = 2 * LevelStat::AccessesPeak.slot(d as u32) as usize + 1;
        u64::from(stats[at])
    })
}

/// The top levels a batch's trees needed built one by one, and of those the ones that needed
/// wide steps, by the largest node it built at each level (`peaks`): about what a feeder that
/// had learned its nodes records (`feeder/levels.rs`), whatever this one recorded. Levels up
/// to the first whose nodes were all subtrees, that one included (past the levels it built:
/// one more); those, from the roots, that held a node past the slot's `wide_keys`.
fn needed_levels(peaks: &[u64], recorded: &Recorded) -> (u32, u32) {
    let built = (recorded.top_levels as usize).min(peaks.len());
    let small = |d: usize| peaks[d] <= u64::from(SUBTREE_KEYS);
    let top = if built == 0 || small(0) {
        1
    } else {
        (1..built)
            .find(|&d| small(d))
            .map_or(built + 1, |d| d + 1)
            .min(TOP_LEVELS as usize)
    };
    let wide = peaks[..built]
        .iter()
        .take_while(|&&k| k > u64::from(recorded.wide_keys))
        .count();
    (top as u32, wide.min(top) as u32)
}

/// The batch's counters from its `stats` words, its results `rows` and what the host
/// `recorded`: the kernels' sums and peaks as [`Work`], and its shape for the span model.
pub(crate) fn read(stats: &[u32], rows: &[&[u32]], recorded: &Recorded) -> (Work, Shape) {
    let s = |stat: Stat| sum(stats, stat as u32);
    let p = |stat: Stat| peak(stats, stat as u32);
    let high = |stat: Stat| u64::from(stats[2 * stat as usize + 1]);
    let mut levels = [Level::default(); TOP_LEVELS as usize];
    for (d, level) in levels.iter_mut().enumerate() {
        let at = |k: LevelStat| k.slot(d as u32);
        *level = Level {
            nodes: sum(stats, at(LevelStat::Nodes)) as f64,
            accesses: sum(stats, at(LevelStat::Accesses)) as f64,
            accesses_peak: peak(stats, at(LevelStat::AccessesPeak)) as f64,
            tiles: sum(stats, at(LevelStat::Tiles)) as f64,
            writes: 0.0,
        };
    }
    spread_writes(&mut levels, s(Stat::TopWrites) as f64);
    let rowed = Rows::of(rows);
    let shape = Shape {
        joins: f64::from(recorded.joins),
        jobs: f64::from(recorded.jobs),
        items: f64::from(recorded.items),
        written_pairs: s(Stat::PairsWritten) as f64,
        bytes_up: recorded.bytes_up as f64,
        extra_uploads: f64::from(recorded.extra_uploads),
        block_scan: f64::from(recorded.block_scan),
        top_levels: recorded.top_levels,
        wide_levels: recorded.wide_levels,
        levels,
        subtrees: s(Stat::Subtrees) as f64,
        rest_iterations: s(Stat::RestIterations) as f64,
        rest_accesses: s(Stat::RestAccesses) as f64,
        rest_writes: s(Stat::RestWrites) as f64,
        rest_iterations_peak: high(Stat::RestAccessesPeak) as f64,
        rest_accesses_peak: p(Stat::RestAccessesPeak) as f64,
        blocks: rowed.blocks as f64,
        fill_blocks_peak: rowed.fill_blocks_peak as f64,
        queries: rowed.queries as f64,
        routing_tests: rowed.tests as f64,
        route_tests_peak: p(Stat::RouteTestsPeak) as f64,
        routes: rowed.routes as f64,
        count_loads: s(Stat::CountLoads) as f64,
        count_loads_peak: p(Stat::CountLoadsPeak) as f64,
        visit_chunks: s(Stat::VisitChunks) as f64,
        tie_groups: rowed.tie_groups as f64,
        tie_pairs: rowed.tie_pairs as f64,
        validation: recorded.validation,
        timed: recorded.timed,
    };
    let spans = LATENCIES.map(|latency| span(&shape, latency));
    let chain: f64 = levels.iter().map(|l| l.accesses_peak).sum();
    // What the batch recorded, or for one packed by bounds (which records more than a
    // count's later batches), what its nodes needed.
    let (top, wide) = if recorded.learned {
        (recorded.top_levels, recorded.wide_levels)
    } else {
        needed_levels(&level_keys_peaks(stats), recorded)
    };
    let work = Work {
        table_key_tests: s(Stat::TableKeyTests),
        table_chunks: s(Stat::TableChunks),
        route_atomics: s(Stat::RouteAtomics),
        tree_tests: s(Stat::TreeTests),
        gpu_batches: 1,
        gpu_dependent_steps: spans[0].steps,
        gpu_top_nodes: levels.iter().map(|l| l.nodes as u64).sum(),
        gpu_top_accesses: levels.iter().map(|l| l.accesses as u64).sum(),
        gpu_top_writes: s(Stat::TopWrites),
        gpu_wide_tiles: levels.iter().map(|l| l.tiles as u64).sum(),
        gpu_subtrees: s(Stat::Subtrees),
        gpu_rest_iterations: s(Stat::RestIterations),
        gpu_rest_accesses: s(Stat::RestAccesses),
        gpu_rest_writes: s(Stat::RestWrites),
        gpu_pair_leaves: s(Stat::PairLeaves),
        gpu_pair_rounds: s(Stat::PairRounds),
        gpu_pair_accesses: s(Stat::PairAccesses),
        gpu_route_walkers: s(Stat::RouteWalkers),
        gpu_pairs_written: s(Stat::PairsWritten),
        gpu_count_loads: s(Stat::CountLoads),
        gpu_visit_chunks: s(Stat::VisitChunks),
        gpu_top_chain_peak: chain as u64,
        gpu_top_levels_peak: u64::from(top),
        gpu_wide_levels_peak: u64::from(wide),
        gpu_rest_iterations_peak: high(Stat::RestAccessesPeak),
        gpu_rest_accesses_peak: p(Stat::RestAccessesPeak),
        gpu_pair_rounds_peak: high(Stat::PairAccessesPeak),
        gpu_pair_accesses_peak: p(Stat::PairAccessesPeak),
        gpu_route_tests_peak: p(Stat::RouteTestsPeak),
        gpu_count_loads_peak: p(Stat::CountLoadsPeak),
        gpu_fill_blocks_peak: rowed.fill_blocks_peak,
        gpu_batch_joins_peak: u64::from(recorded.joins),
        gpu_span_5us_seconds: spans[0].seconds,
        gpu_span_30us_seconds: spans[1].seconds,
        gpu_full_width_seconds: spans[0].full,
        ..Work::default()
    };
    (work, shape)
}

/// Shares the top levels' `writes` among them by their accesses (a level's moves are most of
/// its accesses; the kernels count the writes of all the levels together).
fn spread_writes(levels: &mut [Level], writes: f64) {
    let accesses: f64 = levels.iter().map(|l| l.accesses).sum();
    if accesses > 0.0 {
        for level in levels {
            level.writes = writes * level.accesses / accesses;
        }
    }
}

/// What the results rows of a batch add up to, over its joins that were counted.
#[derive(Debug, Default)]
struct Rows {
    blocks: u64,
    fill_blocks_peak: u64,
    queries: u64,
    tests: u64,
    routes: u64,
    tie_groups: u64,
    tie_pairs: u64,
}

impl Rows {
    fn of(rows: &[&[u32]]) -> Self {
        let mut out = Rows::default();
        for row in rows {
            let word = |at: u32| u64::from(row[at as usize]);
            // Blocks and routes a join measured count even where it ran out of room: its
            // steps ran with them.
            let blocks = word(RESULT_BLOCKS);
            out.blocks += blocks;
            out.fill_blocks_peak = out.fill_blocks_peak.max(blocks);
            out.routes += word(RESULT_ROUTES);
            out.tests += word(RESULT_TESTS) | word(RESULT_TESTS + 1) << 32;
            if row[RESULT_STATUS as usize] & FILL_ERRORS != 0 {
                continue;
            }
            let sizes = |i: u32| word(RESULT_SIZES + i);
            let swapped = row[RESULT_STATUS as usize] & FILL_SWAPPED != 0;
            out.queries += if swapped { sizes(0) } else { sizes(1) };
            let (west, east) = (sizes(2), sizes(3));
            out.tie_pairs += west * east;
            out.tie_groups +=
                west.div_ceil(u64::from(GROUP_SIZE)) * east.div_ceil(u64::from(TIE_EAST));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::layout::RESULT_WORDS;
    use crate::gpu::shader::STATS_WORDS;

    #[test]
    fn the_levels_a_batch_needed_follow_its_largest_nodes_not_what_it_recorded() {
        let peaks = [500_000, 300_000, 140_000, 60_000, 20_000, 9_000, 0, 0];
        let recorded = |top_levels| Recorded {
            top_levels,
            wide_keys: 1 << 17,
            ..Recorded::default()
        };
        // Level 5's nodes were all subtrees: six levels; three held a node past 2^17.
        assert_eq!(needed_levels(&peaks, &recorded(8)), (6, 3));
        assert_eq!(needed_levels(&peaks, &recorded(12)), (6, 3));
        // Built three levels, the last still splitting: one more at least.
        assert_eq!(needed_levels(&peaks, &recorded(3)), (4, 3));
        // Roots small enough to be subtrees: the roots' level alone.
        assert_eq!(needed_levels(&[10_000, 0], &recorded(2)), (1, 0));
    }

    /// Each counter is read from its own slot: sums over two words, peaks from the low one,
    /// every level's into its own level.
    #[test]
    fn each_counter_comes_from_its_own_slot() {
        let mut stats = vec![0u32; STATS_WORDS as usize];
        for (i, stat) in Stat::ALL.iter().enumerate() {
            stats[2 * *stat as usize] = 10 + i as u32;
            stats[2 * *stat as usize + 1] = 1;
        }
        for d in 0..TOP_LEVELS {
            for k in LevelStat::ALL {
                stats[2 * k.slot(d) as usize] = 1000 * (d + 1) + k as u32;
            }
        }
        let row = vec![0u32; RESULT_WORDS as usize];
        let recorded = Recorded {
            joins: 1,
            top_levels: 3,
            ..Recorded::default()
        };
        let (work, shape) = read(&stats, &[&row], &recorded);
        let high = 1u64 << 32;
        assert_eq!(work.gpu_subtrees, high + 10 + Stat::Subtrees as u64);
        // A peak ignores the high word, where a slot of two peaks keeps its second.
        assert_eq!(work.gpu_route_tests_peak, 10 + Stat::RouteTestsPeak as u64);
        assert_eq!(work.gpu_rest_iterations_peak, 1);
        assert_eq!(shape.levels[2].accesses_peak, 3002.0);
        assert_eq!(shape.levels[15].tiles, 16003.0);
        let peaks: u64 = (1..=u64::from(TOP_LEVELS)).map(|d| 1000 * d + 2).sum();
        assert_eq!(work.gpu_top_chain_peak, peaks);
        assert_eq!(work.gpu_batches, 1);
        assert!(work.gpu_span_30us_seconds > work.gpu_span_5us_seconds);
        assert!(work.gpu_span_5us_seconds >= work.gpu_full_width_seconds);
    }
}
