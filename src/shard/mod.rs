//! Long counts that survive: shards of a plan, partial results, checkpoints and merging.
//!
//! Every engine's [`Plan`] is a deterministic list of tasks with cost estimates, so the same
//! machinery serves every engine:
//!
//! - [`ShardSpec`] names part `I` of `K`. Plans lay their tasks out largest first, and shard
//!   `I` takes one task of every round of `K` ids, snaking (`I` in even rounds, `K − 1 − I`
//!   in odd ones), so parts get about equal *expected work* (by [`Plan::cost`]). Choosing a
//!   shard is arithmetic on ids: time and memory in proportion to the shard, whatever `K`
//!   and `K` independent processes agree on who does what.
//! - [`PartialResult`] is the result file of one shard: its task count, total and a digest
//!   of its per-task counts, identity (tool version, N, engine, plan hash) and a checksum.
//! - [`checkpoint`] saves which tasks are done (a compressed bitmap), atomically,
//!   periodically and under a lock, and resumes.
//! - [`merge`](mod@merge) checks that a set of result files is complete and consistent before
//!   it adds them up.
//! - [`status`](mod@status) says how far a run is from the files of its run directory, and
//!   [`slurm`] keeps its job arrays within the cluster's `MaxArraySize`; [`scheduler`] reads
//!   the shard of a job-array task from the variables of the scheduler that runs it.
//!
//! ```
//! use nqueens::shard::ShardSpec;
//! let plan = nqueens::CountOptions::new().threads(1).plan(10).unwrap();
//! let parts: Vec<ShardSpec> = ["0/3", "1/3", "2/3"].iter().map(|s| s.parse().unwrap()).collect();
//! let sizes = parts.iter().map(|spec| spec.ids(plan.len()).count());
//! assert_eq!(sizes.sum::<usize>(), plan.len());
//! assert_eq!(parts[1].ids(plan.len()).next(), Some(1));
//! ```

pub mod blocks;
pub mod checkpoint;
mod done;
mod identity;
mod lock;
pub mod merge;
mod partial;
mod recorder;
mod resumable;
pub mod scheduler;
mod schema2;
mod sealed;
mod shell;
pub mod slurm;
pub mod status;

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::error::Error;
use crate::plan::{self, Plan, TaskSeq};
use crate::CountOptions;

pub use checkpoint::Checkpoint;
pub use identity::Identity;
pub use merge::{merge, MergeReport, Problem, ProblemKind};
pub use partial::{Digest, PartialResult, ShardTotals, SHARD_SCHEMA};
pub use resumable::{ResumableCount, Resume, DEFAULT_SAVE_PERIOD};
pub use sealed::{check_writable, is_same_file, read_at_most, write_atomic};
pub use status::{status, StaleShard, StatusOptions, StatusReport};

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
        if var("SLURM_ARRAY_TASK_ID").is_none() {
            return Err(Error::Shard(
                "not a Slurm array job: SLURM_ARRAY_TASK_ID is not set (submit with \
                 'sbatch --array=0-K', or give the shard as I/K)"
                    .into(),
            ));
        }
        let (index, count) = scheduler::slurm(&var)?;
        ShardSpec::new(index, count.expect("Slurm says K"))
    }

    /// The shard of the current job-array task of any scheduler [`scheduler`] knows (Slurm,
    /// Grid Engine, LSF, PBS Pro, Torque, Kubernetes), read through `var`; `count` is K where
    /// the user gives it (`--shard auto/K`), needed where the scheduler does not say it.
    ///
    /// # Errors
    /// As [`scheduler::shard_of`].
    pub fn from_array(
        var: impl Fn(&str) -> Option<String>,
        count: Option<usize>,
    ) -> Result<Self, Error> {
        scheduler::shard_of(var, count)
    }

    /// The shard of the current job-array task, from the process environment.
    ///
    /// # Errors
    /// As [`ShardSpec::from_array`].
    pub fn from_array_env(count: Option<usize>) -> Result<Self, Error> {
        Self::from_array(|name| std::env::var(name).ok(), count)
    }

    /// The task at round `round` of this shard, if the plan (of `plan_len` tasks) has it.
    pub fn task(&self, round: usize, plan_len: usize) -> Option<usize> {
        let offset = if round.is_multiple_of(2) {
            self.index
        } else {
            self.count - 1 - self.index
        };
        let id = round.checked_mul(self.count)?.checked_add(offset)?;
        (id < plan_len).then_some(id)
    }

    /// The round (position in this shard) of task `id`; `None` if `id` is another shard's.
    pub fn round(&self, id: usize) -> Option<usize> {
        let round = id / self.count;
        (self.task(round, usize::MAX) == Some(id)).then_some(round)
    }

    /// The number of tasks of this shard in a plan of `plan_len` tasks.
    pub fn len(&self, plan_len: usize) -> usize {
        let full = plan_len / self.count;
        full + usize::from(self.task(full, plan_len).is_some())
    }

    /// Whether this shard has no task in a plan of `plan_len` tasks.
    pub fn is_empty(&self, plan_len: usize) -> bool {
        self.len(plan_len) == 0
    }

    /// The task ids of this shard in a plan of `plan_len` tasks, ascending (largest first).
    pub fn ids(&self, plan_len: usize) -> impl Iterator<Item = usize> + '_ {
        (0..self.len(plan_len)).filter_map(move |r| self.task(r, plan_len))
    }

    /// This shard of `plan` as a [`TaskSeq`] for the executor.
    pub fn seq(&self, plan: &dyn Plan) -> ShardSeq {
        ShardSeq {
            spec: *self,
            plan_len: plan.len(),
        }
    }
}

/// The tasks of one shard, by round, without a list (see [`ShardSpec::seq`]).
#[derive(Debug, Clone, Copy)]
pub struct ShardSeq {
    /// The shard.
    pub spec: ShardSpec,
    /// Tasks in the whole plan.
    pub plan_len: usize,
}

impl TaskSeq for ShardSeq {
    fn positions(&self) -> usize {
        self.spec.len(self.plan_len)
    }
    fn task(&self, position: usize) -> Option<usize> {
        self.spec.task(position, self.plan_len)
    }
    /// By the plan's cost runs: this shard's ids below any id are counted by arithmetic
    /// ([`ShardSpec::len`]), so no task is visited.
    fn workload(&self, plan: &dyn Plan) -> (usize, u128) {
        let below = |id: usize| self.spec.len(id.min(self.plan_len));
        let cost = plan::cost_by_runs(plan, |ids| below(ids.end) - below(ids.start));
        (self.positions(), cost)
    }
    /// The round of `id`'s stride: its task is `id` or one of the ids next to it.
    fn position_near(&self, id: usize) -> Option<usize> {
        let round = id / self.spec.count;
        (round < self.positions()).then_some(round)
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

#[cfg(test)]
mod tests;
