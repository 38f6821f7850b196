//! A count that survives being stopped and can be one shard of many: the one entry point that
//! ties a [`Plan`], its [`ShardSpec`], a checkpoint and the recheck together, so a caller
//! only says what it wants (see [`ResumableCount`]).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use super::blocks::SavedCheck;
use super::checkpoint::{self, Checkpoint};
use super::recorder::{self, Recorder};
use super::{stable_plan, Digest, PartialResult, ShardSpec, ShardTotals, TOOL_VERSION};
use crate::error::Error;
use crate::plan::{thread_pool, Plan, Progress};
use crate::recheck::run_checked;
use crate::{Count, CountOptions};

/// How often a checkpoint is saved unless [`Resume::every`] says otherwise.
pub const DEFAULT_SAVE_PERIOD: Duration = Duration::from_secs(5);

/// Where a resumable count keeps its state, and which part of the plan it counts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resume {
    /// The checkpoint file to resume from and save to (`None`: nothing is saved).
    pub checkpoint: Option<PathBuf>,
    /// The time between checkpoint saves.
    pub every: Duration,
    /// The part of the plan to count.
    pub shard: ShardSpec,
}

impl Default for Resume {
    fn default() -> Self {
        Resume {
            checkpoint: None,
            every: DEFAULT_SAVE_PERIOD,
            shard: ShardSpec::whole(),
        }
    }
}

/// A checkpointed and/or sharded count of N-Queens solutions.
///
/// [`ResumableCount::new`] builds the plan (nothing is touched on disk), [`open`](Self::open)
/// locks and loads the checkpoint, [`count`](Self::count) solves what is left. Another thread
/// may [`interrupt`](Self::interrupt) a count at any time: the finished tasks are saved and
/// a later run with the same [`Resume`] goes on from there.
///
/// ```
/// use nqueens::shard::{Resume, ResumableCount};
/// use nqueens::{CountOptions, NoProgress};
///
/// let count = ResumableCount::new(8, &CountOptions::new(), Resume::default())?;
/// let count = count.open()?;
/// let total = count.count(&NoProgress)?;
/// assert_eq!(count.finish(total)?.total, 92);
/// # Ok::<(), nqueens::Error>(())
/// ```
pub struct ResumableCount {
    plan: Arc<dyn Plan>,
    options: CountOptions,
    resume: Resume,
    /// Set by [`ResumableCount::open`].
    opened: Option<Opened>,
}

/// What [`ResumableCount::open`] adds.
struct Opened {
    /// Holds the checkpoint's lock until dropped: a second run on it is refused.
    recorder: Recorder,
    /// Tasks taken from the checkpoint at the start.
    resumed: u64,
    /// The nqueens version that wrote the checkpoint resumed (this one's for a fresh start).
    written_by: String,
}

impl ResumableCount {
    /// Plans the count of `n` with `options` (engines whose plan depends on the thread count
    /// are given a fixed one, so every run and every shard agrees on the tasks).
    ///
    /// # Errors
    /// As [`stable_plan`].
    pub fn new(n: u32, options: &CountOptions, resume: Resume) -> Result<Self, Error> {
        Ok(ResumableCount {
            plan: Arc::from(stable_plan(n, options)?),
            options: options.clone(),
            resume,
            opened: None,
        })
    }

    /// Runs on `threads` worker threads instead of those of its options (fewer, say, to fit
    /// in memory); the plan, made for a fixed thread count, stays the same.
    pub fn with_threads(mut self, threads: usize) -> Self {
        self.options = std::mem::take(&mut self.options).threads(threads);
        self
    }

    /// The plan counted.
    pub fn plan(&self) -> &dyn Plan {
        self.plan.as_ref()
    }

    /// The part of the plan counted.
    pub fn shard(&self) -> ShardSpec {
        self.resume.shard
    }

    /// The number of tasks in this count's shard.
    pub fn shard_tasks(&self) -> usize {
        self.resume.shard.len(self.plan.len())
    }

    /// The size of the largest result file this shard can have (every count at its widest),
    /// so a caller can check up front that it fits where it will be written.
    pub fn largest_result_len(&self) -> usize {
        let tasks = self.shard_tasks();
        let widest = ShardTotals {
            tasks,
            total: u128::MAX,
            digest: Digest(u128::MAX),
        };
        let elapsed = Duration::from_secs(999_999_999);
        let mut result = PartialResult::new(self.plan(), self.shard(), widest, elapsed);
        result.rechecked = tasks;
        result.sealed_json().len()
    }

    /// Locks and loads the checkpoint (if any), or starts afresh, and saves it once, so a
    /// checkpoint that cannot be written fails now, not hours from now.
    ///
    /// # Errors
    /// [`Error::CheckpointLocked`] if another process holds the checkpoint, an error of
    /// [`Checkpoint::resume_or_new`], or [`Error::Io`] if the first save fails.
    pub fn open(mut self) -> Result<Self, Error> {
        let path = self.resume.checkpoint.clone();
        let lock = path.as_deref().map(checkpoint::lock).transpose()?;
        let mut start = match &path {
            Some(path) => Checkpoint::resume_or_new(path, self.plan(), self.shard())?,
            None => Checkpoint::new(self.plan(), self.shard())?,
        };
        let resumed = start.tasks_done;
        // From now on this version writes the file; the one that started it is told. The
        // plan's description is this session's too where it counts tasks: a shard started on
        // a GPU and finished on the CPU (the same plan hash) is labelled by what finished
        // it. A finished checkpoint keeps its label: opening it counts nothing.
        let written_by = std::mem::replace(&mut start.identity.version, TOOL_VERSION.into());
        if start.remaining() > 0 {
            start.identity.plan = self.plan().describe();
        }
        let recorder = Recorder::new(path, start).with_lock(lock);
        recorder.save()?;
        self.opened = Some(Opened {
            recorder,
            resumed,
            written_by,
        });
        Ok(self)
    }

    /// The recorder of an opened count.
    fn recorder(&self) -> &Recorder {
        let opened = self.opened.as_ref();
        &opened.expect("ResumableCount::open comes first").recorder
    }

    /// The tasks taken from the checkpoint when it was opened.
    pub fn resumed(&self) -> u64 {
        self.opened.as_ref().map_or(0, |o| o.resumed)
    }

    /// The nqueens version that wrote the resumed checkpoint, if another than this one (the
    /// plan hash is equal: a checkpoint of another plan is refused).
    pub fn resumed_from_version(&self) -> Option<&str> {
        let opened = self.opened.as_ref()?;
        (opened.resumed > 0 && opened.written_by != TOOL_VERSION)
            .then_some(opened.written_by.as_str())
    }

    /// The saved tasks that were finished under checkpoint schema 2, which kept no per-block
    /// sums: the recheck of saved tasks cannot search them.
    pub fn inherited(&self) -> u64 {
        self.recorder().snapshot().blocks.inherited.len()
    }

    /// The tasks of the shard not yet finished.
    pub fn remaining(&self) -> usize {
        self.recorder().snapshot().remaining()
    }

    /// The tasks whose counts are saved in the checkpoint.
    pub fn saved_tasks(&self) -> u64 {
        self.recorder().saved_tasks()
    }

    /// The saved tasks a recheck can search (those not [`inherited`](Self::inherited)).
    pub fn searchable(&self) -> u64 {
        self.saved_tasks().saturating_sub(self.inherited())
    }

    /// The checkpoint file, if any.
    pub fn checkpoint(&self) -> Option<&Path> {
        self.resume.checkpoint.as_deref()
    }

    /// Re-solves a share ([`CountOptions::recheck`]) of the blocks saved in the checkpoint on
    /// the portable code path; a block saved with a wrong count is replaced and listed.
    /// `None` when no recheck was asked for or nothing saved can be searched.
    ///
    /// # Errors
    /// [`Error::RecheckMismatch`] if a task's two code paths disagree now (this machine is
    /// suspect; nothing is replaced), [`Error::Interrupted`] after
    /// [`interrupt`](Self::interrupt), or a thread-pool error.
    pub fn recheck_saved(&self) -> Result<Option<SavedCheck>, Error> {
        let Some(recheck) = self.options.rechecking().filter(|_| self.searchable() > 0) else {
            return Ok(None);
        };
        let pool = thread_pool(self.options.workers(self.shard_tasks())?)?;
        let fault = self.options.injected_fault();
        recorder::recheck_saved(self.plan(), &pool, self.recorder(), recheck, fault).map(Some)
    }

    /// Solves the tasks of the shard the checkpoint lacks, saving every [`Resume::every`],
    /// rechecking a fraction of them when asked; returns the shard's total (resumed tasks
    /// included). A task whose two code paths disagree is dropped from the checkpoint, so a
    /// resumed run solves it again.
    ///
    /// # Errors
    /// [`Error::Interrupted`] after [`interrupt`](Self::interrupt), [`Error::Io`] if a save
    /// fails (the last good checkpoint is kept), [`Error::RecheckMismatch`], or a thread-pool
    /// error.
    pub fn count(&self, progress: &dyn Progress) -> Result<u128, Error> {
        let recorder = self.recorder();
        let pool = thread_pool(self.options.workers(self.shard_tasks())?)?;
        let outcome = run_checked(
            self.plan(),
            self.options.rechecking(),
            self.options.injected_fault(),
            progress,
            &|task| recorder.record_rechecked(task),
            |plan, progress| recorder::run(plan, &pool, recorder, self.resume.every, progress),
        );
        if let Err(Error::RecheckMismatch { task, fast, .. }) = &outcome {
            recorder.forget(*task, *fast);
            recorder.save()?;
        }
        let (total, _) = outcome?;
        total
    }

    /// Stops the count: the tasks finished so far are saved, and nothing is saved after this
    /// returns, so the process may end at once (tasks in flight are solved again on resume).
    ///
    /// # Errors
    /// [`Error::Io`] if the last save fails; the last good checkpoint is kept.
    pub fn interrupt(&self) -> Result<(), Error> {
        let recorder = self.recorder();
        recorder.request_stop();
        recorder.close()
    }

    /// The total, when every task of the shard is finished (a count whose last save failed
    /// may still be complete).
    pub fn complete_total(&self) -> Option<u128> {
        let state = self.recorder().snapshot();
        (state.remaining() == 0).then_some(state.total)
    }

    /// The whole count, as [`crate::count()`] reports it, for the `total` [`count`](Self::count)
    /// returned.
    ///
    /// # Errors
    /// [`Error::Threads`] if the thread count is out of range.
    pub fn finish(&self, total: u128) -> Result<Count, Error> {
        let recorder = self.recorder();
        let mut count = crate::finish(
            self.plan(),
            total,
            &self.options,
            recorder.elapsed(),
            recorder.cpu(),
        )?;
        count.rechecked = self
            .options
            .rechecking()
            .map(|_| recorder.snapshot().rechecked.len() as usize);
        Ok(count)
    }

    /// The process CPU time since the count was opened, all threads together: `None` for a
    /// count resumed from a checkpoint (the earlier runs' CPU time was not kept) or where the
    /// system has no process clock.
    pub fn cpu(&self) -> Option<Duration> {
        self.recorder().cpu()
    }

    /// This shard's result file, to be saved and later merged with the others.
    pub fn partial_result(&self) -> PartialResult {
        let recorder = self.recorder();
        let snapshot = recorder.snapshot();
        let totals = ShardTotals {
            tasks: snapshot.tasks_done as usize,
            total: snapshot.total,
            digest: snapshot.digest,
        };
        let mut result = PartialResult::new(self.plan(), self.shard(), totals, recorder.elapsed());
        // Labelled by what counted its tasks, as the checkpoint is.
        result.identity.plan = snapshot.identity.plan;
        result.rechecked = snapshot.rechecked.len() as usize;
        result
    }
}
