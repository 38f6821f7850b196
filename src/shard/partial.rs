//! The result file of one shard ([`PartialResult`]) and per-task counts ([`TaskCounts`]).

use std::collections::{BTreeMap, BTreeSet};
use std::ops::AddAssign;
use std::path::Path;
use std::time::Duration;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::sealed::{self, decimal, Sealed};
use super::{ShardSpec, TOOL_VERSION};
use crate::error::Error;
use crate::plan::Plan;

/// The schema tag of a shard result file.
pub const SHARD_SCHEMA: &str = "nqueens.shard/1";

/// Weighted counts of finished tasks, by task id.
///
/// In JSON: `[[id, "count"], ...]` in ascending id order (counts as decimal strings).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TaskCounts(pub BTreeMap<usize, u128>);

impl TaskCounts {
    /// The sum of the counts.
    pub fn total(&self) -> u128 {
        self.0.values().sum()
    }

    /// The number of tasks recorded.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether no task is recorded.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl Serialize for TaskCounts {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.iter().map(|(id, c)| (id, c.to_string())))
    }
}

impl<'de> Deserialize<'de> for TaskCounts {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error as _;
        let pairs = Vec::<(usize, String)>::deserialize(d)?;
        let mut map = BTreeMap::new();
        for (id, text) in pairs {
            let count = text
                .parse()
                .map_err(|_| D::Error::custom(format!("task {id}: '{text}' is not a count")))?;
            if map.insert(id, count).is_some() {
                return Err(D::Error::custom(format!("task {id} is listed twice")));
            }
        }
        Ok(TaskCounts(map))
    }
}

/// The result of one shard: what was counted (tool version, N, engine, plan hash, shard
/// `I/K`, the task ids covered with their counts), how long it took and where, sealed with a
/// checksum.
///
/// JSON fields: `schema` ([`SHARD_SCHEMA`]), `version`, `n`, `engine`, `plan` (parameters, for
/// people), `plan_hash`, `plan_tasks` (tasks in the whole plan), `shard` (`{index, count}`),
/// `tasks` (`[[id, "count"], ...]`), `total` (decimal string), `elapsed_s`, `host`,
/// `checksum` (`sha256:…` of the file's JSON with `checksum` empty).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PartialResult {
    /// Schema tag, [`SHARD_SCHEMA`].
    pub schema: String,
    /// Version of nqueens that computed it.
    pub version: String,
    /// Board size.
    pub n: u32,
    /// Engine name.
    pub engine: String,
    /// Plan parameters, e.g. `split depth 5`.
    pub plan: String,
    /// [`Plan::fingerprint`] of the plan.
    pub plan_hash: String,
    /// Number of tasks in the whole plan.
    pub plan_tasks: usize,
    /// Which shard this is.
    pub shard: ShardSpec,
    /// The tasks covered and their weighted counts.
    pub tasks: TaskCounts,
    /// Sum of `tasks`.
    #[serde(with = "decimal")]
    pub total: u128,
    /// Seconds of wall-clock time spent (summed over resumed sessions).
    pub elapsed_s: f64,
    /// Host name of the machine that finished it.
    pub host: String,
    /// Tasks of this shard also re-solved on the portable code path with the same count
    /// (`--recheck`; issue 12). Omitted when empty, so older files keep their checksum.
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub rechecked: BTreeSet<usize>,
    /// `sha256:…` over the rest of the file.
    pub checksum: String,
}

impl Sealed for PartialResult {
    fn checksum_mut(&mut self) -> &mut String {
        &mut self.checksum
    }
}

impl PartialResult {
    /// The result of shard `shard` of `plan`, with the counts of its tasks.
    pub fn new(plan: &dyn Plan, shard: ShardSpec, tasks: TaskCounts, elapsed: Duration) -> Self {
        PartialResult {
            schema: SHARD_SCHEMA.to_string(),
            version: TOOL_VERSION.to_string(),
            n: plan.n(),
            engine: plan.engine().to_string(),
            plan: plan.describe(),
            plan_hash: plan.fingerprint(),
            plan_tasks: plan.len(),
            shard,
            total: tasks.total(),
            tasks,
            elapsed_s: sealed::millis(elapsed.as_secs_f64()),
            host: gethostname::gethostname().to_string_lossy().into_owned(),
            rechecked: BTreeSet::new(),
            checksum: String::new(),
        }
    }

    /// Seals the result and writes it to `path` atomically.
    ///
    /// # Errors
    /// [`Error::Io`] if the file cannot be written.
    pub fn save(&mut self, path: &Path) -> Result<(), Error> {
        sealed::save(self, path)
    }

    /// Reads a result file and checks its schema, checksum and internal consistency; the
    /// error says what is wrong, for people.
    pub fn load(path: &Path) -> Result<Self, String> {
        let result: PartialResult = sealed::load(path, SHARD_SCHEMA)?;
        ShardSpec::new(result.shard.index, result.shard.count).map_err(|e| e.to_string())?;
        if result.tasks.total() != result.total {
            return Err("its total is not the sum of its task counts".into());
        }
        if let Some((&last, _)) = result.tasks.0.last_key_value() {
            if last >= result.plan_tasks {
                return Err(format!(
                    "task id {last} is outside the plan ({} tasks)",
                    result.plan_tasks
                ));
            }
        }
        Ok(result)
    }

    /// Whether the stored checksum matches the contents.
    pub fn is_intact(&mut self) -> bool {
        sealed::is_intact(self)
    }
}

/// Adds another part of the same plan: its task counts, total and time.
///
/// Both sides must come from the same plan with disjoint tasks; [`super::merge()`] checks
/// that before it adds anything. The identity fields of `self` are kept and its checksum is
/// cleared (the sum is a new result; seal it with [`PartialResult::save`]).
impl AddAssign<&PartialResult> for PartialResult {
    fn add_assign(&mut self, rhs: &PartialResult) {
        debug_assert_eq!(self.plan_hash, rhs.plan_hash);
        self.tasks
            .0
            .extend(rhs.tasks.0.iter().map(|(&k, &v)| (k, v)));
        self.total += rhs.total;
        self.rechecked.extend(&rhs.rechecked);
        self.elapsed_s = sealed::millis(self.elapsed_s + rhs.elapsed_s);
        self.checksum.clear();
    }
}
