//! The hardware benchmark: a fixed, versioned workload counted at several thread counts, every
//! count verified against the published values, and a host description.
//!
//! People burn in machines with N-Queens because the answer is known: a fast run that is wrong
//! reveals a bad CPU, memory or overclock. [`run`] stops at the first wrong count. With a
//! [`Recheck`], a fraction of every count's tasks is also re-solved on the portable code path
//! (the same mechanism as `count --recheck`), which catches a fault even where it would not
//! change a total enough to notice, and names the task.

use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::recheck::{Fault, Recheck};
use crate::{count, known, CountOptions, Error};

/// Schema tag of a [`BenchReport`].
pub const BENCH_SCHEMA: &str = "nqueens.bench/1";

/// Workload sizes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Size {
    /// A few seconds on 2 cores.
    Quick,
    /// About a minute on 2 cores.
    Standard,
    /// Several minutes on 2 cores; for burn-in.
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
    /// Board sizes counted, in order, per round and thread count.
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
        version: 2,
        engine: "mitm".to_string(),
        sizes,
    }
}

/// What the benchmark ran on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostInfo {
    /// CPU model name, with the numbers that tell models apart (see [`crate::cpu::name`]).
    pub cpu: String,
    /// Logical CPUs.
    pub logical_cores: usize,
    /// Physical cores.
    pub physical_cores: usize,
    /// SIMD and bit-manipulation features detected at run time.
    pub features: Vec<String>,
    /// The kernel code path chosen for this CPU.
    pub code_path: String,
    /// The matcher's instruction-set level (see [`crate::engine::matcher_level`]).
    #[serde(default)]
    pub isa: String,
    /// Operating system.
    pub os: String,
    /// CPU architecture.
    pub arch: String,
    /// nqueens version.
    pub version: String,
    /// Git commit nqueens was built from (`unknown` outside a checkout).
    pub commit: String,
}

impl HostInfo {
    /// Describes this machine.
    pub fn detect() -> Self {
        HostInfo {
            cpu: crate::cpu::name(),
            logical_cores: num_cpus::get(),
            physical_cores: num_cpus::get_physical(),
            features: cpu_features(),
            code_path: crate::engine::code_paths(),
            isa: crate::engine::matcher_level().to_string(),
            os: std::env::consts::OS.to_string(),
            arch: std::env::consts::ARCH.to_string(),
            version: env!("CARGO_PKG_VERSION").to_string(),
            commit: env!("NQUEENS_GIT_COMMIT").to_string(),
        }
    }
}

/// The features that matter to the engines, as detected now.
fn cpu_features() -> Vec<String> {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::is_x86_feature_detected as has;
        let table = [
            ("popcnt", has!("popcnt")),
            ("bmi1", has!("bmi1")),
            ("bmi2", has!("bmi2")),
            ("avx2", has!("avx2")),
            ("avx512f", has!("avx512f")),
            ("avx512vpopcntdq", has!("avx512vpopcntdq")),
        ];
        table
            .iter()
            .filter(|(_, on)| *on)
            .map(|(name, _)| name.to_string())
            .collect()
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        Vec::new()
    }
}

/// Results at one thread count (the best round).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThreadResult {
    /// Worker threads.
    pub threads: usize,
    /// Wall-clock seconds for the whole workload (best round).
    pub wall_s: f64,
    /// Solutions counted in one round (decimal string).
    pub solutions: String,
    /// Subproblems (tasks) solved in one round.
    pub subproblems: u64,
    /// Solutions per second.
    pub solutions_per_s: f64,
    /// Subproblems per second.
    pub subproblems_per_s: f64,
    /// Wall time at the smallest thread count divided by this one's.
    pub speedup: f64,
    /// Speed-up divided by the thread ratio (1.0 = perfect scaling).
    pub efficiency: f64,
}

/// A finished benchmark.
///
/// JSON fields: `schema` (`"nqueens.bench/1"`), `workload` {`name`, `version`, `engine`,
/// `sizes`}, `host` {`cpu`, `logical_cores`, `physical_cores`, `features`, `code_path`, `isa`, `os`,
/// `arch`, `version`, `commit`}, `rounds` (all verified), `verified` (true when every count
/// matched its published value), `results` (one per thread count: `threads`, `wall_s`,
/// `solutions`, `subproblems`, `solutions_per_s`, `subproblems_per_s`, `speedup`,
/// `efficiency`, both relative to the smallest thread count), and `score`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BenchReport {
    /// Schema tag, [`BENCH_SCHEMA`].
    pub schema: String,
    /// The workload that ran.
    pub workload: Workload,
    /// The machine it ran on.
    pub host: HostInfo,
    /// Rounds completed, each verified.
    pub rounds: u32,
    /// Whether every count matched its published value (OEIS A000170). Reports written
    /// before this field existed read as `false`.
    #[serde(default)]
    pub verified: bool,
    /// Tasks re-solved on the portable code path with the same count, over the whole run
    /// (0 without a recheck).
    #[serde(default)]
    pub rechecked: usize,
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
    /// Re-solve this fraction of every count's tasks on the portable code path.
    pub recheck: Option<Recheck>,
    /// Test hook: a fault in the fast code path of every count (see [`Fault`]).
    pub fault: Option<Fault>,
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
    /// Round (1-based).
    pub round: u32,
    /// What was counted.
    pub got: u128,
    /// What OEIS says.
    pub expected: u128,
}

/// How a benchmark ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// Every round verified.
    Verified(Box<BenchReport>),
    /// A count was wrong; the run stopped there.
    Wrong(WrongCount),
}

/// Observes a benchmark: told before each count.
pub trait BenchObserver: Sync {
    /// Count `index` of `total` (round, threads, N) is about to start.
    fn count_started(&self, _index: usize, _total: Option<usize>, _label: &str) {}
}

/// Ignores everything.
impl BenchObserver for () {}

/// Runs the benchmark.
pub fn run(config: &BenchConfig, observer: &dyn BenchObserver) -> Result<Outcome, Error> {
    let started = Instant::now();
    let mut best: Vec<Option<Sample>> = vec![None; config.threads.len()];
    let mut rechecked = 0;
    let mut round = 0;
    let per_round = config.threads.len() * config.workload.sizes.len();
    let planned = config
        .duration
        .is_none()
        .then(|| per_round * config.rounds as usize);
    while round < config.rounds || config.duration.is_some_and(|d| started.elapsed() < d) {
        round += 1;
        for (slot, &threads) in best.iter_mut().zip(&config.threads) {
            let index = (round as usize - 1) * per_round;
            match run_sizes(config, threads, round, index, planned, observer)? {
                Round::Counted {
                    sample,
                    rechecked: checked,
                } => {
                    keep_best(slot, sample);
                    rechecked += checked;
                }
                Round::Wrong(wrong) => return Ok(Outcome::Wrong(wrong)),
            }
        }
    }
    let results = summarise(&config.threads, &best);
    Ok(Outcome::Verified(Box::new(BenchReport {
        schema: BENCH_SCHEMA.to_string(),
        workload: config.workload.clone(),
        host: HostInfo::detect(),
        rounds: round,
        // A wrong count returns `Outcome::Wrong` above, so every count here was checked.
        verified: true,
        rechecked,
        score: score(&results),
        results,
    })))
}

/// The counts of one round at one thread count, added up.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Sample {
    /// Wall-clock seconds.
    wall_s: f64,
    /// Solutions found.
    solutions: u128,
    /// Tasks (subproblems) solved.
    tasks: u64,
}

/// How one round at one thread count went.
enum Round {
    /// Every count matched: the round's sample and the tasks it rechecked.
    Counted { sample: Sample, rechecked: usize },
    /// The first wrong count.
    Wrong(WrongCount),
}

/// One round at one thread count.
///
/// # Errors
/// As [`count()`], including [`Error::RecheckMismatch`].
fn run_sizes(
    config: &BenchConfig,
    threads: usize,
    round: u32,
    index: usize,
    planned: Option<usize>,
    observer: &dyn BenchObserver,
) -> Result<Round, Error> {
    let options = CountOptions::new()
        .engine(&config.workload.engine)
        .threads(threads)
        .recheck(config.recheck)
        .fault(config.fault);
    let (mut wall, mut solutions, mut tasks, mut rechecked) = (0.0, 0u128, 0u64, 0);
    for (k, &n) in config.workload.sizes.iter().enumerate() {
        let label = format!("round {round}, {threads} threads, N = {n}");
        observer.count_started(index + k, planned, &label);
        let result = count(n, &options)?;
        let got = result.total;
        let expected = known::total(n).expect("workload sizes have published values");
        if got != expected {
            return Ok(Round::Wrong(WrongCount {
                n,
                threads,
                round,
                got,
                expected,
            }));
        }
        wall += result.elapsed.as_secs_f64();
        solutions += got;
        tasks += result.tasks as u64;
        rechecked += result.rechecked.unwrap_or(0);
    }
    Ok(Round::Counted {
        sample: Sample {
            wall_s: wall,
            solutions,
            tasks,
        },
        rechecked,
    })
}

/// Keeps the fastest sample of a thread count.
fn keep_best(slot: &mut Option<Sample>, sample: Sample) {
    if slot.is_none_or(|b| sample.wall_s < b.wall_s) {
        *slot = Some(sample);
    }
}

/// Per-thread-count rows with speed-up and efficiency relative to the smallest thread count
/// (whatever the order given, e.g. `-j 2,1`), so a list
/// given largest first still has a sensible baseline.
fn summarise(threads: &[usize], best: &[Option<Sample>]) -> Vec<ThreadResult> {
    let base = threads
        .iter()
        .zip(best)
        .filter_map(|(&t, b)| b.map(|b| (t, b.wall_s)))
        .min_by_key(|&(t, _)| t);
    let Some((base_threads, base_wall)) = base else {
        return Vec::new();
    };
    let base_threads = base_threads as f64;
    threads
        .iter()
        .zip(best)
        .filter_map(|(&t, b)| b.map(|b| (t, b)))
        .map(|(t, sample)| {
            let Sample {
                wall_s: wall,
                solutions,
                tasks,
            } = sample;
            let wall = wall.max(1e-9);
            let speedup = base_wall / wall;
            ThreadResult {
                threads: t,
                wall_s: wall,
                solutions: solutions.to_string(),
                subproblems: tasks,
                solutions_per_s: solutions as f64 / wall,
                subproblems_per_s: tasks as f64 / wall,
                speedup,
                efficiency: speedup / (t as f64 / base_threads),
            }
        })
        .collect()
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

    /// A sample of `wall_s` seconds for 100 solutions in 10 tasks.
    fn took(wall_s: f64) -> Option<Sample> {
        Some(Sample {
            wall_s,
            solutions: 100,
            tasks: 10,
        })
    }

    #[test]
    fn speedup_is_relative_to_the_smallest_thread_count_in_any_order() {
        let rows = summarise(&[2, 1], &[took(2.5), took(4.0)]);
        assert_eq!(rows[0].threads, 2);
        assert_eq!(rows[0].speedup, 1.6);
        assert_eq!(rows[0].efficiency, 0.8);
        assert_eq!(rows[1].speedup, 1.0);
    }

    #[test]
    fn summary_computes_speedup_and_efficiency() {
        let rows = summarise(&[1, 2], &[took(4.0), took(2.5)]);
        assert_eq!(rows[1].speedup, 1.6);
        assert_eq!(rows[1].efficiency, 0.8);
        assert_eq!(rows[0].solutions_per_s, 25.0);
        assert_eq!(score(&rows), 40.0 / 1e6);
    }
}
