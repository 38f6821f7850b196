//! The batches a count would form, from an estimate's sampled work: how many tasks share one
//! (as many as the workers keep in flight, or as the slot's room takes), and what such a
//! batch looks like to the span model.

use std::collections::BTreeMap;

use super::rates::VISIT_RATE_CHUNKS;
use super::steps::{Level, Shape};
use crate::gpu::feeder::{CUT_SHARE, FEED_DEPTH, MARGIN};
use crate::gpu::join::TASKS_IN_FLIGHT;
use crate::gpu::layout::{GROUP_SIZE, TIE_EAST, TILE, TOP_LEVELS};
use crate::gpu::resident::{KEEP_PARTS_WORDS, KEEP_WORDS};
use crate::gpu::slot::Capacity;

/// One stratum of a plan: its tasks, and its work counters, sums scaled to the stratum and
/// peaks (`…_peak`) as the most of one sampled task's batches.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StratumWork {
    /// Tasks in the stratum.
    pub tasks: f64,
    /// Counters by name: sums over the stratum, peaks over its sample.
    pub counters: BTreeMap<&'static str, f64>,
}

impl StratumWork {
    /// A counter's value, 0 where the sample has none.
    pub(super) fn get(&self, name: &str) -> f64 {
        self.counters.get(name).copied().unwrap_or(0.0)
    }

    /// A counter's mean per task.
    fn per_task(&self, name: &str) -> f64 {
        self.get(name) / self.tasks.max(1.0)
    }
}

/// How a stratum's tasks go into batches.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Packing {
    /// Tasks a batch holds (below 1: a task takes `1 / tasks` batches, its joins cut).
    pub(crate) tasks: f64,
    pub(crate) batches: f64,
    /// Joins a task runs: one where it fits a batch; else its first, which finds no room,
    /// and the parts it is cut into, each aiming at `CUT_SHARE` of the room.
    pub(crate) joins: f64,
    /// Sets of quarter words a task carries up: one a join, but a batch's parts of one cut
    /// join share theirs (its first, then one a batch of its parts), and a set kept on the
    /// GPU goes up once for all its joins (`resident::Resident::keep`).
    pub(crate) word_sets: f64,
    /// Of those, the ones kept: uploads into the resident words, a dependent step each.
    pub(crate) kept_sets: f64,
}

/// How many of `s`'s tasks share a batch of capacity `cap` when `workers` workers each keep
/// `TASKS_IN_FLIGHT` tasks' joins in flight: the fewer of what the workers hand over while
/// a batch runs and what the slot's arenas hold, by the feeder's estimates.
pub(crate) fn packing(s: &StratumWork, cap: &Capacity, workers: usize) -> Packing {
    // Where the GPU is the bottleneck a batch takes what the workers handed over while the
    // one before it ran: about their tasks in flight over the batches in flight.
    let handed = workers.max(1) as f64 * TASKS_IN_FLIGHT as f64 / FEED_DEPTH as f64;
    let room = |held: u32, name: &str| {
        let need = s.per_task(name) * MARGIN;
        if need > 0.0 {
            f64::from(held) / need
        } else {
            f64::INFINITY
        }
    };
    let fits = [
        room(cap.stored, "stored_keys"),
        room(cap.queries, "queries"),
        room(cap.blocks, "blocks_built"),
        room(cap.routes, "visited_pairs"),
    ];
    let tasks = fits.into_iter().fold(handed, f64::min);
    // A set this large is kept from its first batch on, cut or not; a smaller one once its
    // join is cut, for its parts.
    let words = bytes_per_set(s) / 8.0;
    let kept_whole = words >= KEEP_WORDS as f64;
    if tasks >= 1.0 {
        return Packing {
            tasks,
            batches: (s.tasks / tasks).ceil(),
            joins: 1.0,
            word_sets: 1.0,
            kept_sets: if kept_whole { 1.0 } else { 0.0 },
        };
    }
    let batches_a_task = (1.0 / tasks).ceil();
    let (word_sets, kept_sets) = if kept_whole {
        (1.0, 1.0)
    } else if words >= KEEP_PARTS_WORDS as f64 {
        (2.0, 1.0)
    } else {
        (1.0 + batches_a_task, 0.0)
    };
    Packing {
        tasks,
        batches: s.tasks * batches_a_task,
        joins: 1.0 + (1.0 / (tasks * CUT_SHARE)).ceil(),
        word_sets,
        kept_sets,
    }
}

/// The bytes one set of carried words takes up, with its joins' jobs, by the sample. A
/// sample on a software driver, whose bindings hold 128 MiB, cuts a large task into many
/// more joins than a GPU's slot does, each carrying every word of the whole: its uploads per
/// task are not a GPU's.
fn bytes_per_set(s: &StratumWork) -> f64 {
    let carried = s.per_task("gpu_bytes_up") - s.per_task("gpu_resident_bytes");
    carried / s.per_task("gpu_word_sets").max(1.0)
}

/// One batch of `s`'s tasks packed by `p`: its sums, the stratum's per task times the tasks
/// it holds (a share of one where a task is cut), its peaks the stratum's.
pub(crate) fn shape(s: &StratumWork, p: Packing) -> Shape {
    let share = if p.tasks >= 1.0 {
        p.tasks
    } else {
        1.0 / (1.0 / p.tasks).ceil()
    };
    let sum = |name: &str| s.per_task(name) * share;
    let peak = |name: &str| s.get(name);
    let top_levels = (peak("gpu_top_levels_peak") as u32).min(TOP_LEVELS);
    let wide_levels = (peak("gpu_wide_levels_peak") as u32).min(top_levels);
    let mut levels = [Level::default(); TOP_LEVELS as usize];
    // The sample keeps the levels' sums and the chain of their busiest workgroups, not
    // each level's: spread evenly over the levels.
    let l = f64::from(top_levels.max(1));
    for (d, level) in levels.iter_mut().enumerate().take(top_levels as usize) {
        *level = Level {
            nodes: sum("gpu_top_nodes") / l,
            accesses: sum("gpu_top_accesses") / l,
            accesses_peak: peak("gpu_top_chain_peak") / l,
            tiles: if (d as u32) < wide_levels {
                sum("gpu_wide_tiles") / f64::from(wide_levels)
            } else {
                0.0
            },
            // A sample from before writes were counted: none, as it was priced.
            writes: sum("gpu_top_writes") / l,
        };
    }
    // Each half join work item tests a north word against a tile of south words.
    let items = sum("half_pairs_tested") / f64::from(TILE);
    // A sample from before the write pass counted its pairs: all of them, as it was priced.
    let written_pairs = if s.counters.contains_key("gpu_pairs_written") {
        sum("gpu_pairs_written")
    } else {
        sum("half_pairs_tested")
    };
    let tie_pairs = sum("direct_pairs");
    // A sample from before jobs were counted: as many as items, the most there can be.
    let jobs = if s.counters.contains_key("gpu_jobs") {
        sum("gpu_jobs")
    } else {
        items
    };
    Shape {
        joins: share * p.joins,
        jobs,
        items,
        written_pairs,
        bytes_up: bytes_per_set(s) * share * p.word_sets,
        // Each kept set an upload into the resident words, after the first upload.
        extra_uploads: (share * p.kept_sets).ceil(),
        block_scan: 0.0,
        top_levels,
        wide_levels,
        levels,
        subtrees: sum("gpu_subtrees"),
        rest_iterations: sum("gpu_rest_iterations"),
        rest_accesses: sum("gpu_rest_accesses"),
        rest_writes: sum("gpu_rest_writes"),
        rest_iterations_peak: peak("gpu_rest_iterations_peak"),
        rest_accesses_peak: peak("gpu_rest_accesses_peak"),
        blocks: sum("blocks_built"),
        fill_blocks_peak: peak("gpu_fill_blocks_peak"),
        queries: sum("queries"),
        routing_tests: sum("routing_tests"),
        route_tests_peak: peak("gpu_route_tests_peak"),
        routes: sum("visited_pairs"),
        // A sample from before visits' chunks were counted: every block of the chunks the
        // visit rates were measured at, as it was priced.
        visit_chunks: if s.counters.contains_key("gpu_visit_chunks") {
            sum("gpu_visit_chunks")
        } else {
            VISIT_RATE_CHUNKS * sum("visited_pairs")
        },
        count_loads: sum("gpu_count_loads"),
        count_loads_peak: peak("gpu_count_loads_peak"),
        tie_groups: (tie_pairs / f64::from(GROUP_SIZE * TIE_EAST)).ceil(),
        tie_pairs,
        validation: false,
        timed: true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stratum(tasks: f64, per_task: &[(&'static str, f64)]) -> StratumWork {
        StratumWork {
            tasks,
            counters: per_task
                .iter()
                .map(|&(name, v)| {
                    (
                        name,
                        if name.ends_with("_peak") {
                            v
                        } else {
                            v * tasks
                        },
                    )
                })
                .collect(),
        }
    }

    #[test]
    fn a_batch_holds_what_the_workers_hand_over_unless_the_slot_is_full_first() {
        let cap = Capacity::of(3 << 30, u64::from(u32::MAX));
        let light = stratum(100_000.0, &[("blocks_built", 1.0), ("visited_pairs", 10.0)]);
        let p = packing(&light, &cap, 16);
        assert_eq!(p.tasks, 16.0 * TASKS_IN_FLIGHT as f64 / FEED_DEPTH as f64);
        assert_eq!(p.batches, (100_000.0 / p.tasks).ceil());
        // Routes fill the slot first: the margin's worth fewer tasks than the room.
        let routes = f64::from(cap.routes) / 100.0;
        let heavy = stratum(1000.0, &[("visited_pairs", routes)]);
        let p = packing(&heavy, &cap, 16);
        assert!((p.tasks - 100.0 / MARGIN).abs() < 1e-9, "{p:?}");
        // A task past a whole batch takes several, each a share of it.
        let huge = stratum(10.0, &[("blocks_built", 3.0 * f64::from(cap.blocks))]);
        let p = packing(&huge, &cap, 16);
        assert_eq!(p.batches, 10.0 * (3.0 * MARGIN).ceil());
        let s = shape(&huge, p);
        assert!((s.blocks - 3.0 * f64::from(cap.blocks) / (3.0 * MARGIN).ceil()).abs() < 1e-6);
        // Its first join finds no room; its parts aim at a share of the room each.
        let parts = (3.0 * MARGIN / CUT_SHARE).ceil();
        assert_eq!(p.joins, 1.0 + parts);
        // Its parts in one batch share their words: one set a batch, and its first's.
        assert_eq!(p.word_sets, 1.0 + (3.0 * MARGIN).ceil());
    }

    /// A sample on a software driver cut its tasks into many joins, each carrying the same
    /// words; a GPU's batch carries them once a task it holds, or once for a cut task's
    /// parts in it.
    #[test]
    fn uploads_follow_the_joins_a_gpu_runs_not_the_samples() {
        let cap = Capacity::of(3 << 30, u64::from(u32::MAX));
        // Twenty sets of words a task on the sample, a megabyte each; a GPU's batch holds
        // tasks whole.
        let cut = stratum(
            100_000.0,
            &[
                ("blocks_built", 100.0),
                ("gpu_word_sets", 20.0),
                ("gpu_bytes_up", 20e6),
            ],
        );
        let p = packing(&cut, &cap, 16);
        assert!(p.tasks >= 1.0 && p.word_sets == 1.0, "{p:?}");
        let s = shape(&cut, p);
        assert!((s.bytes_up - p.tasks * 1e6).abs() < 1e-3, "{}", s.bytes_up);
        assert_eq!(s.joins, p.tasks);
        // A task past a batch, its sets of `set` bytes: its first join carries the words,
        // then its parts once a batch where the set is small; a larger one is kept on the
        // GPU for the parts once they are cut, and one of 8 MiB and more from the first join
        // on, each kept set an upload of its own.
        let huge = |set: f64| {
            let s = stratum(
                10.0,
                &[
                    ("visited_pairs", 3.0 * f64::from(cap.routes)),
                    ("gpu_word_sets", 40.0),
                    ("gpu_bytes_up", 40.0 * set),
                ],
            );
            let p = packing(&s, &cap, 16);
            let batches_a_task = (1.0 / p.tasks).ceil();
            let b = shape(&s, p);
            let sets = b.bytes_up * batches_a_task / set;
            assert!((sets - sets.round()).abs() < 1e-9, "{sets}");
            (sets.round(), b.extra_uploads, batches_a_task)
        };
        let (sets, extra, batches_a_task) = huge(1e5);
        assert_eq!((sets, extra), (1.0 + batches_a_task, 0.0));
        assert!(batches_a_task > 2.0);
        assert_eq!(huge(1e6), (2.0, 1.0, batches_a_task));
        assert_eq!(huge(1e7), (1.0, 1.0, batches_a_task));
        // Resident words are not carried.
        let resident = stratum(
            100_000.0,
            &[
                ("gpu_word_sets", 2.0),
                ("gpu_bytes_up", 3e6),
                ("gpu_resident_bytes", 1e6),
            ],
        );
        let p = packing(&resident, &cap, 16);
        assert!((shape(&resident, p).bytes_up - p.tasks * 1e6).abs() < 1e-3);
    }

    #[test]
    fn a_batch_shape_scales_sums_and_keeps_peaks() {
        let s = stratum(
            1000.0,
            &[
                ("visited_pairs", 50.0),
                ("gpu_route_tests_peak", 700.0),
                ("gpu_top_levels_peak", 3.0),
                ("gpu_top_chain_peak", 3000.0),
                ("gpu_top_accesses", 90.0),
            ],
        );
        let p = Packing {
            tasks: 10.0,
            batches: 100.0,
            joins: 1.0,
            word_sets: 1.0,
            kept_sets: 0.0,
        };
        let b = shape(&s, p);
        assert_eq!(b.routes, 500.0);
        assert_eq!(b.route_tests_peak, 700.0);
        assert_eq!(b.top_levels, 3);
        assert_eq!(b.levels[0].accesses_peak, 1000.0);
        assert_eq!(b.levels[2].accesses, 300.0);
        assert_eq!(b.levels[3].accesses, 0.0);
    }
}
