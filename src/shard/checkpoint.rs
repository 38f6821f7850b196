//! Checkpoints: which tasks of a run are done and their counts, saved so a run can resume.
//!
//! A [`Recorder`] collects each finished task (it is a [`Progress`] observer that forwards to
//! another one, e.g. the progress bar) and [`run`] saves its state every few seconds and at the
//! end, with the crash-safe write of [`super::write_atomic`]. A killed run loses at most the
//! tasks finished since the last save and those in flight. Loading refuses a file for another
//! run (N, engine, tool version, plan hash or shard) and a file that is truncated or fails its
//! checksum; such a file is never overwritten.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::sealed::{self, Sealed};
use super::{ShardSpec, TaskCounts, TOOL_VERSION};
use crate::error::Error;
use crate::plan::{self, Plan, Progress};

/// The schema tag of a checkpoint file.
pub const CHECKPOINT_SCHEMA: &str = "nqueens.checkpoint/1";

/// The saved state of a run.
///
/// JSON fields: `schema` ([`CHECKPOINT_SCHEMA`]), `version`, `n`, `engine`, `plan`,
/// `plan_hash`, `plan_tasks`, `shard`, `done` (`[[id, "count"], ...]`), `elapsed_s` (summed
/// over sessions), `checksum`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Checkpoint {
    /// Schema tag, [`CHECKPOINT_SCHEMA`].
    pub schema: String,
    /// Version of nqueens that wrote it.
    pub version: String,
    /// Board size.
    pub n: u32,
    /// Engine name.
    pub engine: String,
    /// Plan parameters, for people.
    pub plan: String,
    /// [`Plan::fingerprint`] of the plan.
    pub plan_hash: String,
    /// Number of tasks in the whole plan.
    pub plan_tasks: usize,
    /// The shard being computed (`0/1` for a whole run).
    pub shard: ShardSpec,
    /// Finished tasks and their weighted counts.
    pub done: TaskCounts,
    /// Wall-clock seconds spent so far, over all sessions.
    pub elapsed_s: f64,
    /// Finished tasks also re-solved on the portable code path with the same count
    /// (`--recheck`; issue 12). Omitted when empty, so older files keep their checksum.
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub rechecked: BTreeSet<usize>,
    /// `sha256:…` over the rest of the file.
    pub checksum: String,
}

impl Sealed for Checkpoint {
    fn checksum_mut(&mut self) -> &mut String {
        &mut self.checksum
    }
}

impl Checkpoint {
    /// An empty checkpoint for `shard` of `plan`.
    pub fn new(plan: &dyn Plan, shard: ShardSpec) -> Self {
        Checkpoint {
            schema: CHECKPOINT_SCHEMA.to_string(),
            version: TOOL_VERSION.to_string(),
            n: plan.n(),
            engine: plan.engine().to_string(),
            plan: plan.describe(),
            plan_hash: plan.fingerprint(),
            plan_tasks: plan.len(),
            shard,
            done: TaskCounts::default(),
            elapsed_s: 0.0,
            rechecked: BTreeSet::new(),
            checksum: String::new(),
        }
    }

    /// Reads `path`: `None` if it does not exist.
    ///
    /// # Errors
    /// [`Error::CheckpointCorrupt`] if it cannot be read, is truncated, is not a checkpoint
    /// or fails its checksum.
    pub fn load(path: &Path) -> Result<Option<Self>, Error> {
        if !path.exists() {
            return Ok(None);
        }
        let corrupt = |message: String| Error::CheckpointCorrupt {
            path: path.to_path_buf(),
            message,
        };
        sealed::load(path, CHECKPOINT_SCHEMA)
            .map(Some)
            .map_err(corrupt)
    }

    /// Loads `path` if it exists and checks it belongs to this run; else a fresh checkpoint.
    ///
    /// # Errors
    /// As [`Checkpoint::load`], and [`Error::CheckpointMismatch`] for another run's file.
    pub fn resume_or_new(path: &Path, plan: &dyn Plan, shard: ShardSpec) -> Result<Self, Error> {
        let fresh = Checkpoint::new(plan, shard);
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
        let mut out = Vec::new();
        let mut check = |what: &str, saved: String, now: String| {
            if saved != now {
                out.push(format!(
                    "it is for {what} {saved}, this run is {what} {now}"
                ));
            }
        };
        check("N =", self.n.to_string(), other.n.to_string());
        check("engine", self.engine.clone(), other.engine.clone());
        check("nqueens", self.version.clone(), other.version.clone());
        check("shard", self.shard.to_string(), other.shard.to_string());
        if out.is_empty() && self.plan_hash != other.plan_hash {
            out.push(format!(
                "its plan ({}, hash {}) differs from this run's ({}, hash {})",
                self.plan, self.plan_hash, other.plan, other.plan_hash
            ));
        }
        out
    }

    /// Seals this checkpoint and writes it to `path` atomically.
    ///
    /// # Errors
    /// [`Error::Io`] if the file cannot be written.
    pub fn save(&mut self, path: &Path) -> Result<(), Error> {
        sealed::save(self, path)
    }

    /// The tasks of `ids` not yet done.
    pub fn remaining(&self, ids: &[usize]) -> Vec<usize> {
        ids.iter()
            .copied()
            .filter(|t| !self.done.0.contains_key(t))
            .collect()
    }
}

/// Collects finished tasks into a [`Checkpoint`] and saves it (when given a path).
#[derive(Debug)]
pub struct Recorder {
    path: Option<PathBuf>,
    state: Mutex<Checkpoint>,
    dirty: AtomicBool,
    stop: AtomicBool,
    save_lock: Mutex<()>,
    started: Instant,
    base_elapsed: f64,
}

impl Recorder {
    /// A recorder starting from `checkpoint`, saving to `path` (`None`: keep it in memory).
    pub fn new(path: Option<PathBuf>, checkpoint: Checkpoint) -> Self {
        Recorder {
            path,
            base_elapsed: checkpoint.elapsed_s,
            state: Mutex::new(checkpoint),
            dirty: AtomicBool::new(false),
            stop: AtomicBool::new(false),
            save_lock: Mutex::new(()),
            started: Instant::now(),
        }
    }

    /// The checkpoint file, if any.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    fn state(&self) -> MutexGuard<'_, Checkpoint> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Records a finished task.
    pub fn record(&self, task: usize, count: u128) {
        self.state().done.0.insert(task, count);
        self.dirty.store(true, Ordering::Release);
    }

    /// Records that a finished task's count was confirmed on the second code path.
    pub fn record_rechecked(&self, task: usize) {
        self.state().rechecked.insert(task);
        self.dirty.store(true, Ordering::Release);
    }

    /// Drops a task's count (its two code paths disagreed), so neither this run nor a
    /// resumed one trusts it.
    pub fn forget(&self, task: usize) {
        let mut state = self.state();
        state.done.0.remove(&task);
        state.rechecked.remove(&task);
        self.dirty.store(true, Ordering::Release);
    }

    /// A copy of the current state, with the elapsed time brought up to date.
    pub fn snapshot(&self) -> Checkpoint {
        let mut cp = self.state().clone();
        cp.elapsed_s = sealed::millis(self.elapsed().as_secs_f64());
        cp
    }

    /// Time spent on this run so far, over all sessions.
    pub fn elapsed(&self) -> Duration {
        Duration::from_secs_f64(self.base_elapsed) + self.started.elapsed()
    }

    /// Writes the current state to the checkpoint file (no-op without one). Safe to call
    /// from any thread, e.g. a signal handler's; saves never interleave.
    ///
    /// # Errors
    /// [`Error::Io`] if the file cannot be written.
    pub fn save(&self) -> Result<(), Error> {
        let Some(path) = &self.path else {
            return Ok(());
        };
        let _one_at_a_time = self.save_lock.lock().unwrap_or_else(|e| e.into_inner());
        self.dirty.store(false, Ordering::Release);
        self.snapshot().save(path)
    }

    /// Saves only if a task finished since the last save.
    fn save_if_dirty(&self) -> Result<(), Error> {
        if self.dirty.load(Ordering::Acquire) {
            self.save()
        } else {
            Ok(())
        }
    }

    /// Asks the workers to take no new tasks.
    pub fn request_stop(&self) {
        self.stop.store(true, Ordering::Release);
    }

    /// A progress observer that records into this recorder and forwards to `inner`.
    pub fn observer<'a>(&'a self, inner: &'a dyn Progress) -> Observer<'a> {
        Observer {
            recorder: self,
            inner,
        }
    }
}

/// Records every finished task, then passes it on to another observer.
pub struct Observer<'a> {
    recorder: &'a Recorder,
    inner: &'a dyn Progress,
}

impl Progress for Observer<'_> {
    fn start(&self, tasks: usize, plan_len: usize) {
        self.inner.start(tasks, plan_len);
    }

    fn task_done(&self, task: usize, count: u128) {
        self.recorder.record(task, count);
        self.inner.task_done(task, count);
    }

    fn should_stop(&self) -> bool {
        self.recorder.stop.load(Ordering::Acquire) || self.inner.should_stop()
    }
}

/// Solves the tasks of `ids` that `recorder` does not already hold, saving the checkpoint
/// every `every` and at the end; returns the sum of the counts of all of `ids` (resumed ones
/// included).
///
/// # Errors
/// [`Error::Interrupted`] if a stop was requested (the finished tasks are saved first),
/// [`Error::Io`] if a save fails (the run stops: a run that cannot be saved should not go on).
pub fn run(
    plan: &dyn Plan,
    ids: &[usize],
    pool: &rayon::ThreadPool,
    recorder: &Recorder,
    every: Duration,
    progress: &dyn Progress,
) -> Result<u128, Error> {
    let todo = recorder.state().remaining(ids);
    let finished = (Mutex::new(false), Condvar::new());
    let (outcome, saver) = std::thread::scope(|scope| {
        let saver = scope.spawn(|| periodic_saves(recorder, every, &finished));
        let outcome = plan::execute(plan, &todo, pool, &recorder.observer(progress));
        *finished.0.lock().unwrap_or_else(|e| e.into_inner()) = true;
        finished.1.notify_all();
        (outcome, saver.join())
    });
    saver.unwrap_or_else(|panic| std::panic::resume_unwind(panic))?;
    recorder.save()?;
    outcome?;
    let state = recorder.state();
    Ok(ids.iter().map(|t| state.done.0[t]).sum())
}

/// Saves `recorder` every `every` until `finished` is set; on a failed save, stops the run.
fn periodic_saves(
    recorder: &Recorder,
    every: Duration,
    finished: &(Mutex<bool>, Condvar),
) -> Result<(), Error> {
    let mut done = finished.0.lock().unwrap_or_else(|e| e.into_inner());
    loop {
        // Waiting *while* not finished checks the flag first: a run that ends before this
        // thread first takes the lock must not wait out a whole period (issue 12, item 4).
        let (guard, _) = finished
            .1
            .wait_timeout_while(done, every, |finished| !*finished)
            .unwrap_or_else(|e| e.into_inner());
        done = guard;
        if *done {
            return Ok(());
        }
        if let Err(e) = recorder.save_if_dirty() {
            recorder.request_stop();
            return Err(e);
        }
    }
}
