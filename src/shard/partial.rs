//! The result file of one shard ([`PartialResult`]) and the digest of per-task counts
//! ([`Digest`]).
//!
//! A result file holds no per-task list (a shard of N = 27 may hold millions of
//! tasks): it records how many tasks it covers, their total and an order-independent digest
//! of every `(task, count)` pair, so two runs of one shard can be compared exactly and
//! `merge` can check completeness from the shard layout alone.

use std::ops::AddAssign;
use std::path::Path;
use std::time::Duration;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use sha2::Sha256;

use super::identity::Identity;
use super::sealed::{self, decimal, Sealed};
use super::ShardSpec;
use crate::error::Error;
use crate::plan::Plan;

/// The schema tag of a shard result file.
pub const SHARD_SCHEMA: &str = "nqueens.shard/2";

/// The longest run time a file may claim, in seconds (about 31 700 years).
pub(super) const MAX_ELAPSED_S: f64 = 1e12;

/// An order-independent digest of a set of `(task, count)` pairs: the sum, modulo 2^128, of
/// the first 16 bytes of SHA-256 of each pair. Adding the same pairs in any order, or
/// adding two digests of disjoint sets, gives the same value.
///
/// In JSON: 32 hex digits.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Digest(pub u128);

impl Digest {
    /// The digest of one finished task.
    pub fn of(task: usize, count: u128) -> Self {
        use sha2::Digest as _;
        let mut h = Sha256::new();
        h.update((task as u64).to_le_bytes());
        h.update(count.to_le_bytes());
        let bytes: [u8; 16] = h.finalize()[..16].try_into().expect("16 bytes");
        Digest(u128::from_le_bytes(bytes))
    }

    /// Adds one finished task.
    pub fn add(&mut self, task: usize, count: u128) {
        *self += Digest::of(task, count);
    }
}

impl AddAssign for Digest {
    fn add_assign(&mut self, rhs: Digest) {
        self.0 = self.0.wrapping_add(rhs.0);
    }
}

impl Serialize for Digest {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(&format_args!("{:032x}", self.0))
    }
}

impl<'de> Deserialize<'de> for Digest {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        if text.len() != 32 {
            return Err(serde::de::Error::custom("a digest has 32 hex digits"));
        }
        u128::from_str_radix(&text, 16)
            .map(Digest)
            .map_err(|_| serde::de::Error::custom(format!("'{text}' is not a digest")))
    }
}

/// Whether a count is zero (for `skip_serializing_if`).
fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// Checks a claimed run time: finite, not negative, not absurd.
pub(crate) fn check_elapsed(seconds: f64) -> Result<(), String> {
    if seconds.is_finite() && (0.0..=MAX_ELAPSED_S).contains(&seconds) {
        Ok(())
    } else {
        Err(format!(
            "its elapsed_s {seconds} is not a time from 0 to {MAX_ELAPSED_S:e} seconds"
        ))
    }
}

/// The result of one shard: what was counted (tool version, N, engine, plan hash, shard
/// `I/K`, how many tasks, their total and digest), how long it took and where, sealed with
/// a checksum.
///
/// JSON fields: `schema` ([`SHARD_SCHEMA`]), `version`, `n`, `engine`, `plan` (parameters, for
/// people), `plan_hash`, `plan_tasks` (tasks in the whole plan), `shard` (`{index, count}`),
/// `tasks` (tasks covered: all of the shard's), `total` (decimal string), `digest` (32 hex
/// digits, see [`Digest`]), `elapsed_s`, `host`, `cpu` (omitted by older versions),
/// `rechecked` (omitted when zero), `checksum` (`sha256:…` of the file's JSON
/// with `checksum` empty).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PartialResult {
    /// Schema tag, [`SHARD_SCHEMA`].
    schema: String,
    /// The run it belongs to: version of nqueens that computed it, N, engine, plan, shard.
    #[serde(flatten)]
    pub identity: Identity,
    /// The number of tasks covered.
    pub tasks: usize,
    /// Sum of the tasks' weighted counts.
    #[serde(with = "decimal")]
    pub total: u128,
    /// Digest of every `(task, count)` pair covered.
    pub digest: Digest,
    /// Seconds of wall-clock time spent (summed over resumed sessions).
    pub elapsed_s: f64,
    /// Host name of the machine that finished it.
    pub host: String,
    /// CPU of the machine that finished it (see [`crate::cpu::name`]), so the shards of a
    /// cluster of mixed nodes can be told apart. Files of older versions have none (empty).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub cpu: String,
    /// How many tasks of this shard were also re-solved on the portable code path with the
    /// same count (`--recheck`). A count, not a list, so the file stays small; omitted
    /// when zero.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub rechecked: usize,
    /// `sha256:…` over the rest of the file.
    checksum: String,
}

impl Sealed for PartialResult {
    fn checksum_mut(&mut self) -> &mut String {
        &mut self.checksum
    }
}

impl PartialResult {
    /// The result of shard `shard` of `plan`: `tasks` tasks with total `total` and digest
    /// `digest`.
    pub fn new(plan: &dyn Plan, shard: ShardSpec, totals: ShardTotals, elapsed: Duration) -> Self {
        let ShardTotals {
            tasks,
            total,
            digest,
        } = totals;
        PartialResult {
            schema: SHARD_SCHEMA.to_string(),
            identity: Identity::new(plan, shard),
            tasks,
            total,
            digest,
            elapsed_s: sealed::millis(elapsed.as_secs_f64()),
            host: gethostname::gethostname().to_string_lossy().into_owned(),
            cpu: crate::cpu::name(),
            rechecked: 0,
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

    /// The sealed file contents as [`PartialResult::save`] writes them: one line of JSON
    /// with its checksum, ending in a newline (e.g. to print a result whose file could not
    /// be written, so it can be saved by hand and merged).
    pub fn sealed_json(&mut self) -> String {
        sealed::seal(self);
        let mut text = serde_json::to_string(self).expect("file models always serialise");
        text.push('\n');
        text
    }

    /// Reads a result file and checks its schema, checksum and that every field is in range
    /// (N, engine, plan size, shard, task count, elapsed time).
    ///
    /// # Errors
    /// [`Error::ResultCorrupt`], whose message says what is wrong, for people.
    pub fn load(path: &Path) -> Result<Self, Error> {
        Self::load_checked(path).map_err(|message| Error::ResultCorrupt {
            path: path.to_path_buf(),
            message,
        })
    }

    /// [`PartialResult::load`], with the reason a file is refused as plain text.
    fn load_checked(path: &Path) -> Result<Self, String> {
        let value = sealed::read_json(path, sealed::MAX_SHARD_BYTES)?;
        sealed::expect_schema(&value, SHARD_SCHEMA, None)?;
        Self::from_value(value)
    }

    /// A result file already read as JSON (its schema checked), with every check of
    /// [`PartialResult::load`].
    pub(crate) fn from_value(value: serde_json::Value) -> Result<Self, String> {
        let r: PartialResult = sealed::parse(value)?;
        r.identity.check()?;
        let id = &r.identity;
        let expected = id.shard.len(id.plan_tasks);
        if r.tasks != expected {
            return Err(format!(
                "it claims {} tasks, but shard {} of a {}-task plan has {expected}",
                r.tasks, id.shard, id.plan_tasks
            ));
        }
        check_elapsed(r.elapsed_s)?;
        if r.rechecked > r.tasks {
            return Err(format!(
                "it claims {} rechecked tasks of its {}",
                r.rechecked, r.tasks
            ));
        }
        Ok(r)
    }

    /// The schema tag, [`SHARD_SCHEMA`].
    pub fn schema(&self) -> &str {
        &self.schema
    }

    /// The stored checksum (`sha256:…`; empty until saved or sealed).
    pub fn checksum(&self) -> &str {
        &self.checksum
    }

    /// Whether the stored checksum matches the contents.
    pub fn is_intact(&mut self) -> bool {
        sealed::is_intact(self)
    }
}

/// Adds another part of the same plan: its task count, total (saturating: [`super::merge()`]
/// adds totals with checked arithmetic before it ever gets here), digest and time.
///
/// Both sides must come from the same plan with disjoint tasks; [`super::merge()`] checks
/// that before it adds anything. The identity fields of `self` are kept and its checksum is
/// cleared (the sum is a new result; seal it with [`PartialResult::save`]).
impl AddAssign<&PartialResult> for PartialResult {
    fn add_assign(&mut self, rhs: &PartialResult) {
        debug_assert_eq!(self.identity.plan_hash, rhs.identity.plan_hash);
        self.tasks = self.tasks.saturating_add(rhs.tasks);
        self.total = self.total.saturating_add(rhs.total);
        self.digest += rhs.digest;
        self.rechecked = self.rechecked.saturating_add(rhs.rechecked);
        self.elapsed_s = sealed::millis(self.elapsed_s + rhs.elapsed_s);
        self.checksum.clear();
    }
}

/// What a shard's tasks add up to: how many, their total and the digest of their counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShardTotals {
    /// The tasks counted.
    pub tasks: usize,
    /// The sum of their counts.
    pub total: u128,
    /// The order-independent digest of their `(task, count)` pairs.
    pub digest: Digest,
}
