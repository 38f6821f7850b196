//! The [`Recorder`] of a running count: it collects finished tasks into a [`Checkpoint`],
//! saves it periodically and at the end ([`run`]), and makes the last save before the
//! process ends ([`Recorder::close`]); [`recheck_saved`] re-solves saved blocks through it.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use rayon::ThreadPool;

use super::blocks::{BadBlock, SavedCheck};
use super::checkpoint::{Checkpoint, Lock};
use super::done::DoneSet;
use super::partial::Digest;
use super::sealed;
use super::ShardSeq;
use crate::error::Error;
use crate::plan::{self, Plan, Progress, TaskSeq};
use crate::recheck::{self, Fault, Recheck};
use crate::tap::{Hook, Tap};
use crate::work::CpuClock;

/// Collects finished tasks into a [`Checkpoint`] and saves it (when given a path).
#[derive(Debug)]
pub(crate) struct Recorder {
    path: Option<PathBuf>,
    state: Mutex<Checkpoint>,
    dirty: AtomicBool,
    stop: AtomicBool,
    /// Held for every save; `true` once [`Recorder::close`] made the last one.
    save_lock: Mutex<bool>,
    /// Tasks done in the last checkpoint written (what a resume would start from).
    saved_tasks: AtomicU64,
    failure: Mutex<Option<Error>>,
    started: Instant,
    /// The process CPU clock, from the same moment as `started`.
    cpu: CpuClock,
    base_elapsed: f64,
    /// The checkpoint's lock, which follows each saved file (see [`Lock::follow`]).
    lock: Option<Lock>,
}

impl Recorder {
    /// A recorder starting from `checkpoint`, saving to `path` (`None`: keep it in memory).
    pub(crate) fn new(path: Option<PathBuf>, checkpoint: Checkpoint) -> Self {
        Recorder {
            path,
            base_elapsed: checkpoint.elapsed_s,
            saved_tasks: AtomicU64::new(checkpoint.tasks_done),
            state: Mutex::new(checkpoint),
            dirty: AtomicBool::new(false),
            stop: AtomicBool::new(false),
            save_lock: Mutex::new(false),
            failure: Mutex::new(None),
            started: Instant::now(),
            cpu: CpuClock::start(),
            lock: None,
        }
    }

    /// This recorder, holding `lock` (the checkpoint's) until dropped and moving its lock by
    /// identity to each file it saves.
    pub(crate) fn with_lock(mut self, lock: Option<Lock>) -> Self {
        self.lock = lock;
        self
    }

    fn state(&self) -> MutexGuard<'_, Checkpoint> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Records a finished task; a task of another shard or an overflowing total stops the
    /// run (and [`run`] returns the error).
    pub(crate) fn record(&self, task: usize, count: u128) {
        if let Err(e) = self.state().record(task, count) {
            *self.failure.lock().unwrap_or_else(|e| e.into_inner()) = Some(e);
            self.request_stop();
        }
        self.dirty.store(true, Ordering::Release);
    }

    /// Records that a finished task's count was confirmed on the second code path.
    pub(crate) fn record_rechecked(&self, task: usize) {
        let mut state = self.state();
        if let Some(round) = state
            .identity
            .shard
            .round(task)
            .and_then(|r| u32::try_from(r).ok())
        {
            state.rechecked.0.insert(round);
        }
        self.dirty.store(true, Ordering::Release);
    }

    /// Drops a task recorded with count `count` (its two code paths disagreed), so neither
    /// this run nor a resumed one trusts it.
    pub(crate) fn forget(&self, task: usize, count: u128) {
        self.state().forget(task, count);
        self.dirty.store(true, Ordering::Release);
    }

    /// A copy of the current state, with the elapsed time brought up to date.
    pub(crate) fn snapshot(&self) -> Checkpoint {
        let mut cp = self.state().clone();
        cp.elapsed_s = sealed::millis(self.elapsed().as_secs_f64());
        cp
    }

    /// Time spent on this run so far, over all sessions.
    pub(crate) fn elapsed(&self) -> Duration {
        Duration::from_secs_f64(self.base_elapsed) + self.started.elapsed()
    }

    /// The process CPU time over [`Recorder::elapsed`]: `None` for a resumed count (the
    /// checkpoint keeps no CPU time of the earlier runs) or without a process clock.
    pub(crate) fn cpu(&self) -> Option<Duration> {
        (self.base_elapsed == 0.0)
            .then(|| self.cpu.elapsed())
            .flatten()
    }

    /// Writes the current state to the checkpoint file (no-op without one, or once
    /// [`Recorder::close`]d). Safe to call from any thread; saves never interleave. A failed
    /// save leaves the last good file in place.
    ///
    /// # Errors
    /// [`Error::Io`] if the file cannot be written.
    pub(crate) fn save(&self) -> Result<(), Error> {
        let closed = self.save_lock.lock().unwrap_or_else(|e| e.into_inner());
        if *closed {
            return Ok(());
        }
        self.save_now()
    }

    /// Makes the last save and refuses every later one (they return at once without
    /// writing), so the process can end right after this returns without cutting a save
    /// short: no temporary file is left and the file on disk is this final state.
    /// Waits for a save in progress on another thread.
    ///
    /// # Errors
    /// [`Error::Io`] if the file cannot be written (the last good one stays).
    pub(crate) fn close(&self) -> Result<(), Error> {
        let mut closed = self.save_lock.lock().unwrap_or_else(|e| e.into_inner());
        if *closed {
            return Ok(());
        }
        *closed = true;
        self.save_now()
    }

    /// Saves; the caller holds `save_lock`.
    fn save_now(&self) -> Result<(), Error> {
        let Some(path) = &self.path else {
            return Ok(());
        };
        self.dirty.store(false, Ordering::Release);
        let mut snapshot = self.snapshot();
        snapshot.save(path)?;
        if let Some(lock) = &self.lock {
            lock.follow(path);
        }
        self.saved_tasks
            .store(snapshot.tasks_done, Ordering::Release);
        Ok(())
    }

    /// The tasks done in the checkpoint file as last written (or as loaded, before the first
    /// save): what a resumed run starts from.
    pub(crate) fn saved_tasks(&self) -> u64 {
        self.saved_tasks.load(Ordering::Acquire)
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
    pub(crate) fn request_stop(&self) {
        self.stop.store(true, Ordering::Release);
    }

    /// Whether a stop was requested.
    pub(crate) fn is_stopping(&self) -> bool {
        self.stop.load(Ordering::Acquire)
    }

    /// Whether `counts` of the finished tasks `tasks` of block `block` add up to its saved
    /// total and digest.
    pub(crate) fn matches(&self, block: usize, tasks: &[usize], counts: &[u128]) -> bool {
        let state = self.state();
        let (total, digest) = sum_pairs(tasks, counts);
        (state.blocks.totals[block], state.blocks.digests[block]) == (total, digest)
    }

    /// Replaces the counts of block `block`, whose finished tasks are `tasks`, with `counts`
    /// (solved again) if they differ from the saved ones, and marks the tasks rechecked.
    /// Returns the saved and the new sum when they differed.
    ///
    /// # Errors
    /// [`Error::Overflow`] if the new total does not fit.
    pub(crate) fn replace(
        &self,
        block: usize,
        tasks: &[usize],
        counts: &[u128],
    ) -> Result<Option<(u128, u128)>, Error> {
        let mut state = self.state();
        let now = sum_pairs(tasks, counts);
        let saved = (state.blocks.totals[block], state.blocks.digests[block]);
        let shard = state.identity.shard;
        let rounds = tasks.iter().filter_map(|&t| shard.round(t));
        for round in rounds.filter_map(|r| u32::try_from(r).ok()) {
            state.rechecked.0.insert(round);
        }
        self.dirty.store(true, Ordering::Release);
        if saved == now {
            return Ok(None);
        }
        state.total = (state.total - saved.0)
            .checked_add(now.0)
            .ok_or_else(|| Error::Overflow("the checkpoint's total".into()))?;
        state.digest.0 = state
            .digest
            .0
            .wrapping_sub(saved.1 .0)
            .wrapping_add(now.1 .0);
        state.blocks.totals[block] = now.0;
        state.blocks.digests[block] = now.1;
        Ok(Some((saved.0, now.0)))
    }

    /// A progress observer that records into this recorder and forwards to `inner`.
    pub(crate) fn observer<'a>(&'a self, inner: &'a dyn Progress) -> Tap<'a, &'a Recorder> {
        Tap { inner, hook: self }
    }
}

/// The sum (wrapping, as [`super::blocks::Blocks`] keeps it) and digest of `(task, count)`
/// pairs.
fn sum_pairs(tasks: &[usize], counts: &[u128]) -> (u128, Digest) {
    let mut sum = (0u128, Digest::default());
    for (&task, &count) in tasks.iter().zip(counts) {
        sum.0 = sum.0.wrapping_add(count);
        sum.1.add(task, count);
    }
    sum
}

/// Records every finished task before the wrapped observer hears of it; a requested stop
/// stops the workers.
impl Hook for &Recorder {
    fn before_done(&self, task: usize, count: u128) {
        self.record(task, count);
    }

    fn should_stop(&self) -> bool {
        self.stop.load(Ordering::Acquire)
    }
}

/// The tasks of a shard not yet done (the done set as of the start of the run).
struct Pending {
    seq: ShardSeq,
    done: DoneSet,
}

impl TaskSeq for Pending {
    fn positions(&self) -> usize {
        self.seq.positions()
    }
    fn task(&self, position: usize) -> Option<usize> {
        if self.done.contains(position) {
            None
        } else {
            self.seq.task(position)
        }
    }
    /// The shard's workload less its done tasks. Tasks run largest first, so a done set is
    /// a prefix of the shard and a few stragglers: the prefix is costed by the plan's runs,
    /// and only the stragglers are visited.
    fn workload(&self, plan: &dyn Plan) -> (usize, u128) {
        let (tasks, cost) = self.seq.workload(plan);
        let prefix = self.done.prefix();
        let cut = self.seq.task(prefix).unwrap_or(self.seq.plan_len);
        let below = |id: usize| self.seq.spec.len(id.min(cut));
        let prefix_cost = plan::cost_by_runs(plan, |ids| below(ids.end) - below(ids.start));
        let stragglers: u128 = self
            .done
            .from(prefix)
            .filter_map(|round| self.seq.task(round))
            .map(|task| u128::from(plan.cost(task)))
            .sum();
        let done = usize::try_from(self.done.len()).unwrap_or(usize::MAX);
        let done_cost = prefix_cost + stragglers;
        (tasks.saturating_sub(done), cost.saturating_sub(done_cost))
    }
    /// The shard's position near `id`, or the first after it not yet done.
    fn position_near(&self, id: usize) -> Option<usize> {
        let near = self.seq.position_near(id)?;
        (near..self.positions().min(near + crate::probe::NEAR)).find(|&p| self.task(p).is_some())
    }
    fn first_pending(&self) -> usize {
        self.done.prefix()
    }
}

/// Solves the tasks of the recorder's shard that it does not already hold, saving the
/// checkpoint every `every` and at the end; returns the sum of the counts of all of the
/// shard's tasks (resumed ones included).
///
/// # Errors
/// [`Error::Interrupted`] if a stop was requested (the finished tasks are saved first),
/// [`Error::Io`] if a save fails (the run stops: a run that cannot be saved should not go on),
/// [`Error::Overflow`] if the total does not fit.
pub(crate) fn run(
    plan: &dyn Plan,
    pool: &rayon::ThreadPool,
    recorder: &Recorder,
    every: Duration,
    progress: &dyn Progress,
) -> Result<u128, Error> {
    let todo = {
        let state = recorder.state();
        Pending {
            seq: state.identity.shard.seq(plan),
            done: state.done.clone(),
        }
    };
    let finished = (Mutex::new(false), Condvar::new());
    let (outcome, saver) = std::thread::scope(|scope| {
        let saver = scope.spawn(|| periodic_saves(recorder, every, &finished));
        let outcome = crate::probe::execute_probed(plan, &todo, pool, &recorder.observer(progress));
        *finished.0.lock().unwrap_or_else(|e| e.into_inner()) = true;
        finished.1.notify_all();
        (outcome, saver.join())
    });
    saver.unwrap_or_else(|panic| std::panic::resume_unwind(panic))?;
    recorder.save()?;
    if let Some(e) = recorder
        .failure
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .take()
    {
        return Err(e);
    }
    outcome?;
    let state = recorder.state();
    if state.remaining() > 0 {
        return Err(Error::Interrupted);
    }
    Ok(state.total)
}

/// Saves `recorder` every `every` until `finished` is set; on a failed save, stops the run.
///
/// The `finished` lock is held only to wait, never during a save: the thread that ends the run
/// takes it to set the flag, and a saver that kept it while saving (and waited again at once
/// after a tiny period) would starve that thread for ever.
fn periodic_saves(
    recorder: &Recorder,
    every: Duration,
    finished: &(Mutex<bool>, Condvar),
) -> Result<(), Error> {
    loop {
        {
            let done = finished.0.lock().unwrap_or_else(|e| e.into_inner());
            // Waiting *while* not finished checks the flag first: a run that ends before this
            // thread first takes the lock must not wait out a whole period before it exits.
            let (done, _) = finished
                .1
                .wait_timeout_while(done, every, |finished| !*finished)
                .unwrap_or_else(|e| e.into_inner());
            if *done {
                return Ok(());
            }
        }
        if let Err(e) = recorder.save_if_dirty() {
            recorder.request_stop();
            return Err(e);
        }
    }
}

/// Mixed into the recheck seed to pick blocks, so the blocks picked are not simply the
/// tasks a recheck of the same fraction picks.
const BLOCK_SALT: u64 = 0xB10C_B10C_B10C_B10C;

/// Re-solves a share of the blocks the recorder's checkpoint held at the start of this
/// session on the portable code path, and a block that disagrees with its saved counts on
/// the fast one too (with `fault`, if any). Every task solved is marked rechecked; a block
/// whose new sum or digest differs from the saved one is replaced with the new counts and
/// listed.
///
/// # Errors
/// [`Error::RecheckMismatch`] if a task's two code paths disagree now (this machine is
/// suspect; nothing is replaced), [`Error::Interrupted`] if a stop was requested.
pub(crate) fn recheck_saved(
    plan: &dyn Plan,
    pool: &ThreadPool,
    recorder: &Recorder,
    recheck: Recheck,
    fault: Option<Fault>,
) -> Result<SavedCheck, Error> {
    let seed = recheck::seed(plan) ^ BLOCK_SALT;
    let start = recorder.snapshot();
    let rounds = start.identity.shard.len(start.identity.plan_tasks);
    let mut report = SavedCheck::default();
    for block in 0..start.blocks.len() {
        if !recheck.selects(seed, block) {
            continue;
        }
        if recorder.is_stopping() {
            return Err(Error::Interrupted);
        }
        let span = start.blocks.rounds(block, rounds);
        // Inherited tasks are in no block's sums: comparing them with one would be wrong.
        let inherited = &start.blocks.inherited.rounds;
        let tasks: Vec<usize> = span
            .clone()
            .filter(|&r| start.done.contains(r) && !inherited.contains(r))
            .filter_map(|r| start.identity.shard.task(r, start.identity.plan_tasks))
            .collect();
        if tasks.is_empty() {
            continue;
        }
        // The portable path alone first (half the work); only a block that disagrees with
        // its saved counts is solved on the fast path too, so a fault of this machine is
        // not taken for a fault of the earlier one.
        let mut counts = recheck::solve_portable(plan, &tasks, pool);
        if !recorder.matches(block, &tasks, &counts) {
            counts = recheck::solve_both(plan, &tasks, fault, pool)?;
        }
        report.blocks += 1;
        report.tasks += tasks.len();
        if let Some((saved, now)) = recorder.replace(block, &tasks, &counts)? {
            let rounds = span;
            report.replaced.push(BadBlock {
                block,
                rounds,
                saved,
                now,
            });
        }
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::workload_by_task;
    use crate::shard::ShardSpec;
    use crate::CountOptions;

    #[test]
    fn pending_work_is_costed_as_task_by_task_without_visiting_the_done_prefix() {
        for (engine, n) in [("mitm", 15), ("mirror", 11)] {
            let plan = CountOptions::new().engine(engine).plan(n).unwrap();
            for (index, count) in [(0, 1), (1, 3), (4, 7), (63, 64)] {
                let seq = ShardSpec::new(index, count).unwrap().seq(plan.as_ref());
                let rounds = seq.positions();
                assert_eq!(
                    seq.workload(plan.as_ref()),
                    workload_by_task(plan.as_ref(), &seq)
                );
                let dones: [Vec<usize>; 4] = [
                    vec![],
                    (0..rounds / 2).collect(),
                    (0..rounds / 3).chain([rounds / 2, rounds - 1]).collect(),
                    (0..rounds).collect(),
                ];
                for rounds_done in dones {
                    let mut done = DoneSet::default();
                    rounds_done.iter().for_each(|&r| _ = done.insert(r));
                    let pending = Pending { seq, done };
                    assert_eq!(
                        pending.workload(plan.as_ref()),
                        workload_by_task(plan.as_ref(), &pending),
                        "{engine} {n}, shard {index}/{count}, {} done",
                        rounds_done.len()
                    );
                }
            }
        }
    }
}
