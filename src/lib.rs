//! # nqueens
//!
//! A fast, trustworthy N-Queens toolkit: a parallel counter of solutions for boards up to
//! 32×32 (totals in `u128`), checked against the published values, plus the companion puzzles.
//!
//! The counter is a thin layer over [`count()`]:
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

pub mod bench;
pub mod cpu;
pub mod engine;
pub mod error;
pub mod estimate;
#[cfg(feature = "gpu")]
pub mod gpu;
pub mod known;
pub mod memory;
pub mod plan;
pub mod probe;
pub mod puzzles;
pub mod recheck;
pub mod report;
pub mod shard;
pub mod subsample;
pub mod work;

mod count;
mod env;
mod tap;

pub(crate) use count::finish;
pub use count::{
    count, count_plan, count_plan_in, count_with_progress, Count, CountOptions, Stopwatch,
    MAX_THREADS,
};
pub use error::{Error, MAX_N, MIN_N};
pub use plan::{NoProgress, Plan, Progress};
pub use work::Work;

/// The README's code samples are compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
