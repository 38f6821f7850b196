//! Checkpoints: which tasks of a run are done, their total and digest, saved so a run can
//! resume.
//!
//! While a [`ResumableCount`](super::ResumableCount) runs, a recorder collects each finished
//! task (it is a [`Progress`](crate::plan::Progress) observer that forwards to another one,
//! e.g. the progress bar) and saves its state every few seconds and at the end, with the crash-safe write of [`super::write_atomic`]. A
//! killed run loses at most the tasks finished since the last save and those in flight.
//! Loading refuses a file for another run (N, engine, plan hash or shard; another tool
//! version with the same plan hash is the same run), a
//! file that is truncated, oversized or fails its checksum, and one whose fields are out of
//! range; such a file is never overwritten. A checkpoint of the previous schema
//! ([`CHECKPOINT_SCHEMA_2`]) is checked the same way and upgraded, so a run survives an
//! upgrade of nqueens: its finished tasks are kept as [`Inherited`](super::blocks::Inherited).
//!
//! The done set is a run-compressed bitmap ([`roaring`]) of *rounds* (positions in the
//! shard's task sequence, see [`ShardSpec::task`]). Tasks run largest first in round order, so
//! a done set is a prefix plus at most a few scattered rounds per session: a handful of runs
//! whatever the plan size. [`lock`] keeps two processes off one checkpoint.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::blocks::Blocks;
use super::identity::Identity;
use super::partial::{check_elapsed, Digest};
use super::schema2::CheckpointV2;
use super::sealed::{self, decimal, Sealed};
use super::ShardSpec;
use crate::error::Error;
use crate::plan::Plan;

pub use super::done::DoneSet;
pub use super::lock::{holder, lock, Holder, Lock};

/// The schema tag of a checkpoint file (what is written).
pub const CHECKPOINT_SCHEMA: &str = "nqueens.checkpoint/3";

/// The schema tag of the checkpoints of nqueens before per-block sums: still read, upgraded
/// in memory and saved again as [`CHECKPOINT_SCHEMA`].
pub const CHECKPOINT_SCHEMA_2: &str = "nqueens.checkpoint/2";

/// The saved state of a run.
///
/// JSON fields: `schema` ([`CHECKPOINT_SCHEMA`]), `version`, `n`, `engine`, `plan`,
/// `plan_hash`, `plan_tasks`, `shard`, `done` (see [`DoneSet`]), `tasks_done` (its size),
/// `total` (decimal string: the sum of the done tasks' counts), `digest` (of their
/// `(task, count)` pairs, see [`Digest`]), `elapsed_s` (summed over sessions), `rechecked`,
/// `blocks` (the same total and digest per block of rounds, see [`Blocks`]), `checksum`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Checkpoint {
    /// Schema tag, [`CHECKPOINT_SCHEMA`].
    pub(super) schema: String,
    /// The run it belongs to: version of nqueens that wrote it, N, engine, plan, shard.
    #[serde(flatten)]
    pub identity: Identity,
    /// The shard's rounds that are done.
    pub done: DoneSet,
    /// The number of rounds done (`done`'s size, stored for people and as a check).
    pub tasks_done: u64,
    /// Sum of the done tasks' weighted counts.
    #[serde(with = "decimal")]
    pub total: u128,
    /// Digest of the done tasks' `(task, count)` pairs.
    pub digest: Digest,
    /// Wall-clock seconds spent so far, over all sessions.
    pub elapsed_s: f64,
    /// Rounds of finished tasks also re-solved on the portable code path with the same count
    /// (`--recheck`), as a bitmap like `done`. Omitted when empty.
    #[serde(default, skip_serializing_if = "DoneSet::is_empty")]
    pub rechecked: DoneSet,
    /// The total and digest per block of rounds, so a wrong saved count can be found and
    /// replaced on resume (see [`Blocks`]).
    pub blocks: Blocks,
    /// `sha256:…` over the rest of the file.
    pub(super) checksum: String,
}

impl Sealed for Checkpoint {
    fn checksum_mut(&mut self) -> &mut String {
        &mut self.checksum
    }
}

impl Checkpoint {
    /// An empty checkpoint for `shard` of `plan`.
    ///
    /// # Errors
    /// [`Error::Shard`] if the shard has more tasks than a done set can hold (2^32).
    pub fn new(plan: &dyn Plan, shard: ShardSpec) -> Result<Self, Error> {
        if shard.len(plan.len()) > 1 << 32 {
            return Err(Error::Shard(format!(
                "shard {shard} has {} tasks, more than a checkpoint holds (2^32); use more shards",
                shard.len(plan.len())
            )));
        }
        Ok(Checkpoint {
            schema: CHECKPOINT_SCHEMA.to_string(),
            identity: Identity::new(plan, shard),
            done: DoneSet::default(),
            tasks_done: 0,
            total: 0,
            digest: Digest::default(),
            elapsed_s: 0.0,
            rechecked: DoneSet::default(),
            blocks: Blocks::new(shard.len(plan.len())),
            checksum: String::new(),
        })
    }

    /// Reads `path`: `None` if it does not exist or is an empty file. A
    /// [`CHECKPOINT_SCHEMA_2`] file is checked against its own checksum and upgraded: its
    /// finished tasks become [`Inherited`](super::blocks::Inherited).
    ///
    /// # Errors
    /// [`Error::CheckpointCorrupt`] if it cannot be read, is truncated, oversized or not a
    /// checkpoint, fails its checksum, or has a field out of range: a damaged file must never
    /// resume into a wrong count.
    pub fn load(path: &Path) -> Result<Option<Self>, Error> {
        if std::fs::symlink_metadata(path).is_err() {
            return Ok(None);
        }
        // What `mktemp` or `touch` leaves for a job script is no checkpoint yet: a save is
        // written whole and renamed into place, so no save leaves an empty file.
        if std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.len() == 0) {
            return Ok(None);
        }
        let corrupt = |message: String| Error::CheckpointCorrupt {
            path: path.to_path_buf(),
            message,
        };
        let value = sealed::read_json(path, sealed::MAX_CHECKPOINT_BYTES).map_err(corrupt)?;
        Self::from_value(value).map(Some).map_err(corrupt)
    }

    /// A checkpoint already read as JSON, with every check of [`Checkpoint::load`] (schema
    /// included).
    pub(crate) fn from_value(value: serde_json::Value) -> Result<Self, String> {
        let schema = sealed::expect_schema(&value, CHECKPOINT_SCHEMA, Some(CHECKPOINT_SCHEMA_2))?;
        let cp = if schema == CHECKPOINT_SCHEMA_2 {
            sealed::parse::<CheckpointV2>(value).map(Checkpoint::upgrade)
        } else {
            sealed::parse::<Checkpoint>(value)
        }?;
        // An upgraded file gets every check a schema 3 one does: all that schema 2 checked,
        // and blocks that add up (trivially, all inherited).
        cp.check()?;
        Ok(cp)
    }

    /// A schema 2 checkpoint as the same state in this schema: every finished task inherited
    /// (see [`Blocks::upgraded`]), no block sums, unsealed. The caller checks its fields as
    /// for any checkpoint.
    fn upgrade(v2: CheckpointV2) -> Checkpoint {
        let rounds = v2.identity.shard.len(v2.identity.plan_tasks);
        let blocks = Blocks::upgraded(rounds, v2.done.clone(), v2.total, v2.digest);
        Checkpoint {
            schema: CHECKPOINT_SCHEMA.to_string(),
            identity: v2.identity,
            done: v2.done,
            tasks_done: v2.tasks_done,
            total: v2.total,
            digest: v2.digest,
            elapsed_s: v2.elapsed_s,
            rechecked: v2.rechecked,
            blocks,
            checksum: String::new(),
        }
    }

    /// Checks that every field is in range and the done set fits the shard.
    fn check(&self) -> Result<(), String> {
        self.identity.check()?;
        let Identity {
            shard, plan_tasks, ..
        } = self.identity;
        check_elapsed(self.elapsed_s)?;
        if self.done.len() != self.tasks_done {
            return Err(format!(
                "its tasks_done {} is not the size of its done set ({})",
                self.tasks_done,
                self.done.len()
            ));
        }
        self.blocks
            .check(shard.len(plan_tasks), self.total, self.digest)?;
        let rounds = shard.len(plan_tasks) as u64;
        if !self.rechecked.0.is_subset(&self.done.0) {
            return Err("it marks tasks rechecked that are not done".into());
        }
        if !self.blocks.inherited.rounds.0.is_subset(&self.done.0) {
            return Err("it marks tasks inherited that are not done".into());
        }
        match self.done.0.max() {
            Some(last) if u64::from(last) >= rounds => Err(format!(
                "it marks round {last} done, but shard {shard} has only {rounds} tasks"
            )),
            _ => Ok(()),
        }
    }

    /// Loads `path` if it exists and checks it belongs to this run; else a fresh checkpoint.
    ///
    /// # Errors
    /// As [`Checkpoint::load`], and [`Error::CheckpointMismatch`] for another run's file.
    pub fn resume_or_new(path: &Path, plan: &dyn Plan, shard: ShardSpec) -> Result<Self, Error> {
        let fresh = Checkpoint::new(plan, shard)?;
        match Checkpoint::load(path)? {
            None => Ok(fresh),
            Some(old) => {
                let differences = old.differences(&fresh);
                if differences.is_empty() {
                    Ok(old)
                } else {
                    Err(Error::CheckpointMismatch {
                        path: path.to_path_buf(),
                        message: differences.join(", "),
                    })
                }
            }
        }
    }

    /// How this checkpoint's identity differs from `other`'s, for people (empty: the same).
    pub fn differences(&self, other: &Checkpoint) -> Vec<String> {
        let (saved, now) = (&self.identity, &other.identity);
        let mut out = Vec::new();
        let mut check = |what: &str, saved: String, now: String| {
            if saved != now {
                out.push(format!(
                    "it is for {what} {saved}, this run is {what} {now}"
                ));
            }
        };
        check("N =", saved.n.to_string(), now.n.to_string());
        check("engine", saved.engine.clone(), now.engine.clone());
        check("shard", saved.shard.to_string(), now.shard.to_string());
        // Another version alone is no difference: the plan hash names the work, so a run
        // survives an upgrade that leaves its plan alone. Where the plan did change, both
        // versions are named, since the upgrade is then the likely cause.
        if out.is_empty()
            && (saved.plan_hash != now.plan_hash || saved.plan_tasks != now.plan_tasks)
        {
            out.push(format!(
                "its plan ({}, hash {}, written by nqueens {}) differs from this run's ({}, \
                 hash {}, nqueens {})",
                saved.plan, saved.plan_hash, saved.version, now.plan, now.plan_hash, now.version
            ));
        }
        out
    }

    /// The schema tag, [`CHECKPOINT_SCHEMA`] (also for an upgraded older file).
    pub fn schema(&self) -> &str {
        &self.schema
    }

    /// The stored checksum (`sha256:…`; empty until saved).
    pub fn checksum(&self) -> &str {
        &self.checksum
    }

    /// Seals this checkpoint and writes it to `path` atomically.
    ///
    /// # Errors
    /// [`Error::Io`] if the file cannot be written.
    pub fn save(&mut self, path: &Path) -> Result<(), Error> {
        sealed::save(self, path)
    }

    /// The number of the shard's tasks not yet done.
    pub fn remaining(&self) -> usize {
        let Identity {
            shard, plan_tasks, ..
        } = self.identity;
        shard
            .len(plan_tasks)
            .saturating_sub(self.tasks_done as usize)
    }

    /// Records that task `task` finished with count `count`.
    ///
    /// # Errors
    /// [`Error::Shard`] if the task is not one of this shard's, [`Error::Overflow`] if the
    /// total no longer fits.
    pub fn record(&mut self, task: usize, count: u128) -> Result<(), Error> {
        let shard = self.identity.shard;
        let round = shard
            .round(task)
            .and_then(|r| u32::try_from(r).ok())
            .ok_or_else(|| Error::Shard(format!("task {task} is not in shard {shard}")))?;
        if self.done.0.insert(round) {
            self.total = self
                .total
                .checked_add(count)
                .ok_or_else(|| Error::Overflow("the checkpoint's total".into()))?;
            self.digest.add(task, count);
            self.blocks.add(round as usize, task, count);
            self.tasks_done += 1;
        }
        Ok(())
    }
}

impl Checkpoint {
    /// Takes back [`Checkpoint::record`] of task `task` with count `count` (no-op if the task
    /// is not recorded).
    pub fn forget(&mut self, task: usize, count: u128) {
        let Some(round) = self
            .identity
            .shard
            .round(task)
            .and_then(|r| u32::try_from(r).ok())
        else {
            return;
        };
        if self.done.0.remove(round) {
            self.total = self.total.saturating_sub(count);
            self.digest.0 = self.digest.0.wrapping_sub(Digest::of(task, count).0);
            self.blocks.remove(round as usize, task, count);
            self.tasks_done -= 1;
        }
        self.rechecked.0.remove(round);
    }
}
