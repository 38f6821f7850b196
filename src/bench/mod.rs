//! The hardware benchmark: a fixed, versioned workload counted at several thread counts, every
//! count verified against the published values, and a host description.
//!
//! A row at T threads counts the workload T times at once ([`copies`]; at most once per
//! logical CPU), so each thread has
//! the same work in every row and a machine that scales perfectly shows 100% efficiency in
//! every row, on 2 threads or 256. Each row records its wall-clock and process CPU time:
//! CPU time per copy that grows with the threads means each core ran slower (shared caches,
//! memory, SMT siblings); wall time that grows while CPU time does not means threads waited.
//!
//! People burn in machines with N-Queens because the answer is known: a fast run that is wrong
//! reveals a bad CPU, memory or overclock. [`run`] stops at the first wrong count. With a
//! [`Recheck`], a fraction of the tasks is also re-solved on the portable code path
//! (the same mechanism as `count --recheck`), which catches a fault even where it would not
//! change a total enough to notice, and names the task.

mod copies;
mod host;
pub mod load;
mod measure;
mod rows;

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::recheck::{Fault, Recheck};
use crate::CountOptions;
pub use host::HostInfo;
pub use measure::run;

/// Schema tag of a [`BenchReport`].
pub const BENCH_SCHEMA: &str = "nqueens.bench/1";

/// Workload sizes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Size {
    /// A few seconds a row (N = 16, 17, 18).
    Quick,
    /// Half a minute a row (N = 18, 19, 19).
    Standard,
    /// Several minutes a row (N = 19, 20, 20); for burn-in.
    Long,
    /// A fraction of a second: for the tool's own tests, which need a real, verified run of
    /// every code path but not a measurement (as hyperfine's debug mode).
    Tiny,
}

/// A fixed list of counts. Scores are comparable across machines only for the same name and
/// version: the version changes whenever the sizes or the engine change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Workload {
    /// `quick`, `standard` or `long` (or `tiny`, for tests).
    pub name: Size,
    /// Workload version.
    pub version: u32,
    /// Engine used for every count.
    pub engine: String,
    /// Board sizes counted, in order, per round and thread count (each as many times as
    /// the row has threads).
    pub sizes: Vec<u32>,
}

/// The workload of a given size.
pub fn workload(size: Size) -> Workload {
    // The fastest engine (mitm) on sizes whose counts are in the known tables, so every
    // timed count is also checked.
    let sizes = match size {
        Size::Quick => vec![16, 17, 18],
        Size::Standard => vec![18, 19, 19],
        Size::Long => vec![19, 20, 20],
        Size::Tiny => vec![10, 11, 12],
    };
    Workload {
        name: size,
        // 3: a row counts the workload once per thread (2: once per row).
        version: 3,
        engine: "mitm".to_string(),
        sizes,
    }
}

/// The seconds the largest count of a workload of `size` is meant to take where its sizes
/// are probed ([`probed_workload`]).
fn probe_budget(size: Size) -> f64 {
    match size {
        Size::Quick => 2.0,
        Size::Standard => 15.0,
        Size::Long => 60.0,
        Size::Tiny => 0.2,
    }
}

/// How much longer a count of N + 1 takes than one of N before two probes say (the mitm
/// engine's growth per step at N = 16..20 on a CPU is 5 to 8).
const FIRST_GROWTH: f64 = 8.0;

/// The workload of `size` for a device whose speed is not known in advance (a GPU, which may
/// be a software driver): the same three rows of consecutive sizes, ending at the largest
/// N not past the size's own whose count `probe` predicts within the size's budget. `probe(n)`
/// counts N = n once and returns its wall seconds; it is tried from `first` up, each next N
/// predicted from the last two (a probe's counts are verified like the rows' by the caller).
/// The workload keeps its name; its sizes say what was counted.
///
/// # Errors
/// The first error of `probe`.
pub fn probed_workload<E>(
    size: Size,
    first: u32,
    mut probe: impl FnMut(u32) -> Result<f64, E>,
) -> Result<Workload, E> {
    let mut w = workload(size);
    let last = *w.sizes.iter().max().expect("a workload has sizes");
    if last <= first {
        return Ok(w);
    }
    let budget = probe_budget(size);
    let (mut n, mut before) = (first, None);
    loop {
        let t = probe(n)?;
        let growth = before.map_or(FIRST_GROWTH, |b: f64| (t / b.max(1e-3)).max(2.0));
        if n >= last || t * growth > budget {
            break;
        }
        before = Some(t);
        n += 1;
    }
    let shift = last - n;
    w.sizes = w
        .sizes
        .iter()
        .map(|&s| s.saturating_sub(shift).max(first))
        .collect();
    Ok(w)
}

/// One row: the results at one thread count (its best round).
///
/// The measurements are `threads`, the work (`copies` of the workload, with their
/// `solutions` and `subproblems`), `wall_s` and `cpu_s`; the other fields follow from them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThreadResult {
    /// Worker threads.
    pub threads: usize,
    /// Times the row counted the workload (reports of workload version 2 and before
    /// counted it once a row).
    #[serde(default = "one")]
    pub copies: usize,
    /// Wall-clock seconds for the row (best round).
    pub wall_s: f64,
    /// Process CPU seconds for the row, all threads together (`None` where not measured).
    #[serde(default)]
    pub cpu_s: Option<f64>,
    /// Solutions counted in the row, all copies (decimal string).
    pub solutions: String,
    /// Subproblems (tasks) solved in the row, all copies.
    pub subproblems: u64,
    /// Solutions per second.
    pub solutions_per_s: f64,
    /// Subproblems per second.
    pub subproblems_per_s: f64,
    /// Solutions per second over those at the smallest thread count.
    pub speedup: f64,
    /// Speed-up divided by the thread ratio (1.0 = perfect scaling).
    pub efficiency: f64,
    /// CPU time over wall time × threads: how much of the time the threads were running
    /// (below 1.0: they waited).
    #[serde(default)]
    pub busy: Option<f64>,
    /// CPU seconds per copy at the smallest thread count over this row's (below 1.0: each
    /// core ran slower than alone).
    #[serde(default)]
    pub core_speed: Option<f64>,
}

/// The copies a row read from an older report counted: one.
fn one() -> usize {
    1
}

/// A finished benchmark.
///
/// JSON fields: `schema` (`"nqueens.bench/1"`), `workload` {`name`, `version`, `engine`,
/// `sizes`}, `host` {`cpu`, `logical_cores`, `physical_cores`, `features`, `code_path`, `isa`, `os`,
/// `arch`, `version`, `commit`}, `rounds` (all verified), `verified` (true when every count
/// matched its published value), `interrupted` (only when stopped early), `rechecked`, `gpu` (only when a GPU joined), `results` (one row per thread count:
/// `threads`, `copies`, `wall_s`, `cpu_s`, `solutions`, `subproblems`, `solutions_per_s`,
/// `subproblems_per_s`, and `speedup`, `efficiency`, `busy` and `core_speed`, relative to
/// the smallest thread count; see [`ThreadResult`]), and `score`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BenchReport {
    /// Schema tag, [`BENCH_SCHEMA`].
    pub schema: String,
    /// The workload that ran.
    pub workload: Workload,
    /// The machine it ran on.
    pub host: HostInfo,
    /// Rounds completed, each verified (an interrupted run's rows may include some of the
    /// round after these).
    pub rounds: u32,
    /// Whether every count matched its published value (OEIS A000170). Reports written
    /// before this field existed read as `false`.
    #[serde(default)]
    pub verified: bool,
    /// Whether the run was stopped before its rounds were done (Ctrl-C, SIGTERM): the rows
    /// it finished. Absent from the JSON of a run that was not.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub interrupted: bool,
    /// Tasks re-solved on the portable code path with the same count, over the whole run
    /// (0 without a recheck).
    #[serde(default)]
    pub rechecked: usize,
    /// The GPU the joins ran on (`bench --gpu`; absent: the CPU). Its threads feed it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu: Option<String>,
    /// One entry per thread count.
    pub results: Vec<ThreadResult>,
    /// [`score`] of the results.
    pub score: f64,
}

/// The single score: millions of solutions per second at the best thread count. Comparable
/// across machines for the same workload name and version.
pub fn score(results: &[ThreadResult]) -> f64 {
    results
        .iter()
        .map(|r| r.solutions_per_s / 1e6)
        .fold(0.0, f64::max)
}

/// How long and at which thread counts to run.
#[derive(Debug, Clone, PartialEq)]
pub struct BenchConfig {
    /// The workload.
    pub workload: Workload,
    /// Thread counts, in order.
    pub threads: Vec<usize>,
    /// Rounds to run at least.
    pub rounds: u32,
    /// Keep running rounds until this much time has passed.
    pub duration: Option<Duration>,
    /// Re-solve this fraction of one copy's tasks in every row's count of each board, drawn
    /// from all its copies, on the portable code path.
    pub recheck: Option<Recheck>,
    /// Test hook: a fault in the fast code path of every count (see [`Fault`]).
    pub fault: Option<Fault>,
    /// The options every plan is built from, the workload setting its engine and the widest
    /// row its threads: a GPU to join on, if any (`CountOptions::new()` for the CPU).
    pub base: CountOptions,
}

/// The default thread counts: 1, 2, 4, ... and finally `max` itself.
pub fn default_threads(max: usize) -> Vec<usize> {
    let mut list: Vec<usize> = std::iter::successors(Some(1usize), |t| t.checked_mul(2))
        .take_while(|&t| t < max)
        .collect();
    list.push(max.max(1));
    list
}

/// A count that disagreed with the published value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WrongCount {
    /// Board size.
    pub n: u32,
    /// Thread count of the failing run.
    pub threads: usize,
    /// Times the board was counted in that run (the totals below are for all of them).
    pub copies: usize,
    /// Round (1-based; 0 for the untimed warm-up before the first).
    pub round: u32,
    /// What was counted.
    pub got: u128,
    /// What OEIS says, times `copies`.
    pub expected: u128,
}

/// How a benchmark ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// Every round verified.
    Verified(Box<BenchReport>),
    /// A count was wrong; the run stopped there.
    Wrong(WrongCount),
    /// Stopped on request ([`BenchObserver::should_stop`]): the rows finished before, every
    /// count verified (`interrupted` set; no rows if none finished).
    Interrupted(Box<BenchReport>),
}

/// Observes a benchmark: told before each count and after each round, and asked whether to
/// stop.
pub trait BenchObserver: Sync {
    /// Count `index` of `total` (round, threads, N) is about to start.
    fn count_started(&self, _index: usize, _total: Option<usize>, _label: &str) {}
    /// Round `round` (1-based) is over, every count of it verified.
    fn round_verified(&self, _round: u32) {}
    /// Whether to stop (Ctrl-C): asked between tasks; see [`run`].
    fn should_stop(&self) -> bool {
        false
    }
}

/// Ignores everything.
impl BenchObserver for () {}

/// The copies of the workload a row at `threads` threads counts: one per thread, but no more
/// than this machine's logical CPUs, so that a row of more threads than CPUs (which can only
/// read a lower efficiency) lasts no longer than the row of every CPU.
pub fn copies(threads: usize) -> usize {
    threads.clamp(1, num_cpus::get().max(1))
}

/// Speed ratios of `b` over `a` per thread count present in both (b's solutions/s divided
/// by a's): above 1 means `b` is faster.
pub fn compare(a: &BenchReport, b: &BenchReport) -> Vec<(usize, f64)> {
    a.results
        .iter()
        .filter_map(|ra| {
            let rb = b.results.iter().find(|r| r.threads == ra.threads)?;
            Some((
                ra.threads,
                rb.solutions_per_s / ra.solutions_per_s.max(1e-12),
            ))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probed_sizes_end_where_the_next_count_would_pass_the_budget() {
        // Counts that take 1 ms at N = 13 and grow sixfold: N = 17 takes 1.3 s, and 18 is
        // predicted at 7.8 s, past quick's 2 s.
        let mut probed = Vec::new();
        let w = probed_workload(Size::Quick, 13, |n| {
            probed.push(n);
            Ok::<_, ()>(1e-3 * 6f64.powi(n as i32 - 13))
        })
        .unwrap();
        assert_eq!(w.sizes, [15, 16, 17]);
        assert_eq!(probed, [13, 14, 15, 16, 17]);
        // A fast device reaches the size's own and probes no further.
        let w = probed_workload(Size::Quick, 13, |_| Ok::<_, ()>(1e-4)).unwrap();
        assert_eq!(w, workload(Size::Quick));
        // A slow one stays at the first sizes; an error stops the probes.
        let w = probed_workload(Size::Quick, 13, |_| Ok::<_, ()>(5.0)).unwrap();
        assert_eq!(w.sizes, [13, 13, 13]);
        assert_eq!(
            probed_workload(Size::Quick, 13, |_| Err::<f64, _>("lost")),
            Err("lost")
        );
    }
    use crate::known;

    #[test]
    fn default_thread_counts_double_up_to_the_maximum() {
        assert_eq!(default_threads(1), vec![1]);
        assert_eq!(default_threads(2), vec![1, 2]);
        assert_eq!(default_threads(6), vec![1, 2, 4, 6]);
        assert_eq!(default_threads(8), vec![1, 2, 4, 8]);
    }

    #[test]
    fn every_workload_size_has_published_values() {
        for size in [Size::Quick, Size::Standard, Size::Long, Size::Tiny] {
            assert!(workload(size)
                .sizes
                .iter()
                .all(|&n| known::total(n).is_some()));
        }
    }
}
