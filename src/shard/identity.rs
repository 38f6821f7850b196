//! What a result or checkpoint file was computed for ([`Identity`]): the fields both files
//! carry after their schema tag, so they are written, read and checked in one place.

use serde::{Deserialize, Serialize};

use super::{ShardSpec, TOOL_VERSION};
use crate::plan::Plan;

/// The most tasks a plan may have in a file this tool reads (a forged `plan_tasks` beyond it
/// is refused; the largest real plan, N = 28, has well under 2^32).
const MAX_PLAN_TASKS: usize = 1 << 40;

/// The run a file belongs to: tool version, N, engine, plan and shard.
///
/// Files embed these fields at their top level (serde `flatten`), in this order, right after
/// `schema`: `version`, `n`, `engine`, `plan`, `plan_hash`, `plan_tasks`, `shard`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Identity {
    /// Version of nqueens that wrote the file.
    pub version: String,
    /// Board size.
    pub n: u32,
    /// Engine name.
    pub engine: String,
    /// Plan parameters, for people (e.g. `split depth 5`).
    pub plan: String,
    /// [`Plan::fingerprint`] of the plan.
    pub plan_hash: String,
    /// Number of tasks in the whole plan.
    pub plan_tasks: usize,
    /// The shard computed (`0/1` for a whole run).
    pub shard: ShardSpec,
}

impl Identity {
    /// The identity of shard `shard` of `plan`, as this version of nqueens runs it.
    pub fn new(plan: &dyn Plan, shard: ShardSpec) -> Self {
        Identity {
            version: TOOL_VERSION.to_string(),
            n: plan.n(),
            engine: plan.engine().to_string(),
            plan: plan.describe(),
            plan_hash: plan.fingerprint(),
            plan_tasks: plan.len(),
            shard,
        }
    }

    /// Checks the fields a file read from disk may have forged: N, engine, plan size, shard.
    pub(crate) fn check(&self) -> Result<(), String> {
        crate::error::check_n(self.n).map_err(|e| format!("its N is invalid ({e})"))?;
        if !crate::engine::ENGINES
            .iter()
            .any(|e| e.name() == self.engine)
        {
            return Err(format!(
                "its engine '{}' is not one this tool has",
                self.engine
            ));
        }
        if self.plan_tasks > MAX_PLAN_TASKS {
            return Err(format!(
                "its plan_tasks {} is beyond any real plan ({MAX_PLAN_TASKS})",
                self.plan_tasks
            ));
        }
        ShardSpec::new(self.shard.index, self.shard.count).map_err(|e| e.to_string())?;
        Ok(())
    }
}

/// The plan descriptions of a run's files as one: the description where all agree, else
/// each with its number of files (a run counted partly on a GPU, partly on CPUs).
pub(crate) fn describe_plans<'a>(plans: impl Iterator<Item = &'a str>) -> String {
    let mut seen: Vec<(&str, usize)> = Vec::new();
    for plan in plans {
        match seen.iter_mut().find(|(p, _)| *p == plan) {
            Some((_, files)) => *files += 1,
            None => seen.push((plan, 1)),
        }
    }
    match seen.as_slice() {
        [(one, _)] => one.to_string(),
        _ => seen
            .iter()
            .map(|(plan, files)| format!("{plan} ({})", crate::report::plural(*files, "file")))
            .collect::<Vec<_>>()
            .join("; "),
    }
}

/// The GPU a plan label names (`meet in the middle, quarters 8×8, GPU NAME`: a GPU joined
/// the tasks), `None` for a plan counted on the CPU.
pub(crate) fn gpu_of(plan: &str) -> Option<&str> {
    plan.rsplit_once(", GPU ").map(|(_, gpu)| gpu)
}
