//! Long counts that survive: shards of a plan, partial results, checkpoints and merging.
//!
//! Every engine's [`Plan`] is a deterministic list of tasks with cost estimates, so the same
//! machinery serves every engine (issue 5):
//!
//! - [`ShardSpec`] names part `I` of `K`; [`partition`] splits a plan into `K` parts of about
//!   equal *expected work* (by [`Plan::cost`]), deterministically, so `K` independent
//!   processes agree on who does what without talking to each other.
//! - [`PartialResult`] is the result file of one shard: per-task counts, identity (tool
//!   version, N, engine, plan hash) and a checksum.
//! - [`checkpoint`] saves which tasks are done, atomically and periodically, and resumes.
//! - [`merge`](mod@merge) checks that a set of result files is complete and consistent before
//!   it adds them up.
//!
//! ```
//! use nqueens::shard::{partition, ShardSpec};
//! let plan = nqueens::CountOptions::new().threads(1).plan(10).unwrap();
//! let parts = partition(plan.as_ref(), 3);
//! assert_eq!(parts.iter().map(Vec::len).sum::<usize>(), plan.len());
//! let spec: ShardSpec = "1/3".parse().unwrap();
//! assert_eq!(spec.ids(plan.as_ref()), parts[1]);
//! ```

pub mod checkpoint;
pub mod merge;
mod partial;
mod sealed;

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::error::Error;
use crate::plan::Plan;
use crate::CountOptions;

pub use checkpoint::{Checkpoint, Recorder};
pub use merge::{merge, MergeReport, Problem, ProblemKind};
pub use partial::{PartialResult, TaskCounts, SHARD_SCHEMA};
pub use sealed::{check_writable, write_atomic};

/// The version of this tool, recorded in every result and checkpoint file.
pub const TOOL_VERSION: &str = env!("CARGO_PKG_VERSION");

/// The thread count that automatic split depths of checkpointed and sharded runs are chosen
/// for, whatever the machine: the plan (and its hash) must be the same on every node of a
/// cluster and after resuming on a machine with another core count.
pub const PLAN_THREADS: usize = 64;

/// The plan `options` select for an `n`×`n` board, built for [`PLAN_THREADS`] threads so it
/// does not depend on the machine (the run itself still uses `options`' thread count).
///
/// # Errors
/// As [`CountOptions::plan`].
pub fn stable_plan(n: u32, options: &CountOptions) -> Result<Box<dyn Plan>, Error> {
    options.clone().threads(PLAN_THREADS).plan(n)
}

/// Part `index` (0-based) of `count` parts of a plan, written `I/K`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ShardSpec {
    /// Which part, `0..count`.
    pub index: usize,
    /// How many parts.
    pub count: usize,
}

impl ShardSpec {
    /// Part `index` of `count`.
    ///
    /// # Errors
    /// [`Error::Shard`] unless `count ≥ 1` and `index < count`.
    pub fn new(index: usize, count: usize) -> Result<Self, Error> {
        if count == 0 {
            return Err(Error::Shard(
                "the number of shards K must be at least 1".into(),
            ));
        }
        if index >= count {
            return Err(Error::Shard(format!(
                "shard index {index} is out of range for K = {count} (indices are 0-based: 0 to {})",
                count - 1
            )));
        }
        Ok(ShardSpec { index, count })
    }

    /// The whole plan as one shard, `0/1`.
    pub fn whole() -> Self {
        ShardSpec { index: 0, count: 1 }
    }

    /// The shard of the current Slurm array task, from `SLURM_ARRAY_TASK_ID`,
    /// `SLURM_ARRAY_TASK_MIN` and `SLURM_ARRAY_TASK_COUNT` (read through `var`, so tests need
    /// not touch the process environment).
    ///
    /// # Errors
    /// [`Error::Shard`] outside an array job, or for an array whose indices are not contiguous.
    pub fn from_slurm(var: impl Fn(&str) -> Option<String>) -> Result<Self, Error> {
        let get = |name: &str| -> Result<usize, Error> {
            let text = var(name).ok_or_else(|| {
                Error::Shard(format!(
                    "--shard auto needs a Slurm array job, but {name} is not set \
                     (submit with 'sbatch --array=0-K' or give --shard I/K)"
                ))
            })?;
            text.trim()
                .parse()
                .map_err(|_| Error::Shard(format!("{name} = '{text}' is not a whole number")))
        };
        let (id, min, count) = (
            get("SLURM_ARRAY_TASK_ID")?,
            get("SLURM_ARRAY_TASK_MIN")?,
            get("SLURM_ARRAY_TASK_COUNT")?,
        );
        if let Some(max) = var("SLURM_ARRAY_TASK_MAX").and_then(|m| m.trim().parse::<usize>().ok())
        {
            if max + 1 != min + count {
                return Err(Error::Shard(format!(
                    "--shard auto needs contiguous array indices (e.g. --array=0-{}), \
                     got {count} tasks between {min} and {max}",
                    count.saturating_sub(1)
                )));
            }
        }
        let index = id.checked_sub(min).ok_or_else(|| {
            Error::Shard(format!(
                "SLURM_ARRAY_TASK_ID {id} is below SLURM_ARRAY_TASK_MIN {min}"
            ))
        })?;
        ShardSpec::new(index, count)
    }

    /// The shard of the current Slurm array task, from the process environment.
    ///
    /// # Errors
    /// As [`ShardSpec::from_slurm`].
    pub fn from_slurm_env() -> Result<Self, Error> {
        Self::from_slurm(|name| std::env::var(name).ok())
    }

    /// The task ids of `plan` in this shard, ascending.
    pub fn ids(&self, plan: &dyn Plan) -> Vec<usize> {
        partition(plan, self.count).swap_remove(self.index)
    }
}

impl fmt::Display for ShardSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl FromStr for ShardSpec {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self, Error> {
        let bad = || Error::Shard(format!("'{s}' is not of the form I/K (e.g. 0/4)"));
        let (i, k) = s.trim().split_once('/').ok_or_else(bad)?;
        let index = i.trim().parse().map_err(|_| bad())?;
        let count = k.trim().parse().map_err(|_| bad())?;
        ShardSpec::new(index, count)
    }
}

/// Splits the tasks of `plan` into `parts` lists of about equal expected work.
///
/// Greedy "largest task first onto the least-loaded part" by [`Plan::cost`]: ties go to the
/// lower task id and the lower part index, so every process computes the same split. The
/// heaviest part exceeds the lightest by at most one task's cost. Each list is ascending.
pub fn partition(plan: &dyn Plan, parts: usize) -> Vec<Vec<usize>> {
    let parts = parts.max(1);
    let all: Vec<usize> = (0..plan.len()).collect();
    let mut out = vec![Vec::new(); parts];
    let mut loads: BinaryHeap<Reverse<(u128, usize)>> =
        (0..parts).map(|p| Reverse((0u128, p))).collect();
    for task in crate::plan::largest_first(plan, &all) {
        let Reverse((load, part)) = loads.pop().expect("parts ≥ 1");
        out[part].push(task);
        loads.push(Reverse((load + u128::from(plan.cost(task)), part)));
    }
    for list in &mut out {
        list.sort_unstable();
    }
    out
}

/// The expected work of each part of a split (sums of [`Plan::cost`]).
pub fn part_costs(plan: &dyn Plan, parts: &[Vec<usize>]) -> Vec<u128> {
    parts
        .iter()
        .map(|ids| ids.iter().map(|&t| u128::from(plan.cost(t))).sum())
        .collect()
}

#[cfg(test)]
mod tests;
