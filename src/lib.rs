//! # nqueens
//!
//! A fast, trustworthy N-Queens toolkit: a parallel counter of solutions for boards up to
//! 32×32 (totals in `u128`), checked against the published values, plus the companion puzzles.
//!
//! The counter is a thin layer over [`count`]:
//!
//! ```
//! let result = nqueens::count(8, &nqueens::CountOptions::new().threads(2)).unwrap();
//! assert_eq!(result.total, 92);
//! assert_eq!(result.verified, Some(true)); // agrees with OEIS A000170
//! ```
//!
//! Engines live in [`engine`], one module each behind [`engine::Engine`]; each turns N into a
//! [`plan::Plan`] of independent tasks, which [`plan::execute`] runs on a rayon pool.
#![deny(missing_docs)]

pub mod engine;
pub mod error;
pub mod estimate;
pub mod hw;
pub mod known;
pub mod plan;
pub mod puzzles;
pub mod report;
pub mod shard;

use std::time::{Duration, Instant};

pub use error::{Error, MAX_N, MIN_N};
pub use plan::{NoProgress, Plan, Progress};

/// The most worker threads a run may ask for.
pub const MAX_THREADS: usize = 4096;

/// How to count: engine, threads, split depth. Build it with the chained setters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CountOptions {
    engine: String,
    threads: usize,
    split_depth: Option<u32>,
    unique: bool,
}

impl Default for CountOptions {
    fn default() -> Self {
        CountOptions {
            engine: engine::AUTO.to_string(),
            threads: num_cpus::get(),
            split_depth: None,
            unique: false,
        }
    }
}

impl CountOptions {
    /// The defaults: automatic engine, all logical CPUs, automatic split depth.
    pub fn new() -> Self {
        Self::default()
    }

    /// Selects an engine by name (see [`engine::names`]).
    pub fn engine(mut self, name: &str) -> Self {
        self.engine = name.to_string();
        self
    }

    /// Sets the number of worker threads.
    pub fn threads(mut self, threads: usize) -> Self {
        self.threads = threads;
        self
    }

    /// Sets the number of pre-placed rows per task (`None`: automatic).
    pub fn split_depth(mut self, depth: Option<u32>) -> Self {
        self.split_depth = depth;
        self
    }

    /// Also computes the number of fundamental solutions (engines that support it).
    pub fn unique(mut self, unique: bool) -> Self {
        self.unique = unique;
        self
    }

    /// The number of worker threads, checked.
    pub fn checked_threads(&self) -> Result<usize, Error> {
        if (1..=MAX_THREADS).contains(&self.threads) {
            Ok(self.threads)
        } else {
            Err(Error::Threads {
                threads: self.threads,
                max: MAX_THREADS,
            })
        }
    }

    /// Builds the plan these options select for an `n`×`n` board.
    pub fn plan(&self, n: u32) -> Result<Box<dyn Plan>, Error> {
        let options = engine::PlanOptions {
            split_depth: self.split_depth,
            threads: self.checked_threads()?,
        };
        let plan = if self.unique && self.engine == engine::AUTO {
            engine::auto_unique(n).plan(n, &options)?
        } else {
            engine::plan(&self.engine, n, &options)?
        };
        if self.unique && !plan.has_unique() {
            return Err(Error::Unsupported {
                engine: plan.engine(),
                what: "unique counts (try --engine symmetry)".to_string(),
            });
        }
        Ok(plan)
    }
}

/// The result of a count.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Count {
    /// Board size.
    pub n: u32,
    /// Number of solutions.
    pub total: u128,
    /// Number of fundamental solutions, when asked for.
    pub unique: Option<u128>,
    /// The engine that counted.
    pub engine: &'static str,
    /// The plan's parameters, e.g. `split depth 3`.
    pub plan: String,
    /// Number of tasks in the plan.
    pub tasks: usize,
    /// Worker threads used.
    pub threads: usize,
    /// Wall-clock time of the count (plan and search).
    pub elapsed: Duration,
    /// Whether `total` agrees with OEIS A000170 (`None`: no published value).
    pub verified: Option<bool>,
    /// Whether `unique` agrees with OEIS A002562 (`None`: not computed or not published).
    pub unique_verified: Option<bool>,
}

impl Count {
    /// Whether every computed value that has a published counterpart agrees with it.
    pub fn is_consistent(&self) -> bool {
        self.verified != Some(false) && self.unique_verified != Some(false)
    }
}

/// Counts the solutions of the N-Queens puzzle on an `n`×`n` board.
///
/// # Errors
/// [`Error::BoardSize`] unless 1 ≤ n ≤ 32, [`Error::Threads`], [`Error::SplitDepth`],
/// [`Error::UnknownEngine`], or [`Error::Unsupported`] for options the engine lacks.
pub fn count(n: u32, options: &CountOptions) -> Result<Count, Error> {
    count_with_progress(n, options, &NoProgress)
}

/// Like [`count`], reporting each finished task to `progress`.
pub fn count_with_progress(
    n: u32,
    options: &CountOptions,
    progress: &dyn Progress,
) -> Result<Count, Error> {
    let start = Instant::now();
    let plan = options.plan(n)?;
    let pool = plan::thread_pool(options.threads)?;
    let total = plan::execute_seq(plan.as_ref(), &(0..plan.len()), &pool, progress)?;
    finish(plan.as_ref(), total, options, start.elapsed())
}

/// Builds the [`Count`] for a finished plan: adds the unique count if asked and checks both
/// values against the published ones.
pub fn finish(
    plan: &dyn Plan,
    total: u128,
    options: &CountOptions,
    elapsed: Duration,
) -> Result<Count, Error> {
    let n = plan.n();
    let unique = if options.unique {
        plan.unique(total)
    } else {
        None
    };
    Ok(Count {
        n,
        total,
        unique,
        engine: plan.engine(),
        plan: plan.describe(),
        tasks: plan.len(),
        threads: options.threads,
        elapsed,
        verified: known::check(known::total(n), total),
        unique_verified: unique.and_then(|u| known::check(known::unique(n), u)),
    })
}

/// The README's code samples are compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
