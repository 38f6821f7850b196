//! [`Tap`]: a progress observer that passes every event on to another one and adds its own
//! work to finished tasks (recording them in a checkpoint, queueing them for a recheck).

use crate::plan::Progress;

/// What a [`Tap`] adds to the observer it wraps.
pub(crate) trait Hook: Sync {
    /// Task `task` finished with `count`, before the wrapped observer hears of it.
    fn before_done(&self, _task: usize, _count: u128) {}
    /// Task `task` finished with `count`, after the wrapped observer heard of it.
    fn after_done(&self, _task: usize, _count: u128) {}
    /// Whether the workers should stop, whatever the wrapped observer says.
    fn should_stop(&self) -> bool {
        false
    }
}

/// Forwards every event to `inner`, with `hook`'s work around each finished task.
pub(crate) struct Tap<'a, H> {
    /// The observer every event goes on to.
    pub(crate) inner: &'a dyn Progress,
    /// The work added.
    pub(crate) hook: H,
}

impl<H: Hook> Progress for Tap<'_, H> {
    fn start(&self, tasks: usize, plan_len: usize) {
        self.inner.start(tasks, plan_len);
    }

    fn start_work(&self, cost: u128) {
        self.inner.start_work(cost);
    }

    fn probes(&self, slices: usize, probes: &[(usize, usize)]) {
        self.inner.probes(slices, probes);
    }

    fn task_started(&self, task: usize, cost: u64) {
        self.inner.task_started(task, cost);
    }

    fn task_done(&self, task: usize, count: u128) {
        self.hook.before_done(task, count);
        self.inner.task_done(task, count);
        self.hook.after_done(task, count);
    }

    fn work_done(&self, task: usize, cost: u64) {
        self.inner.work_done(task, cost);
    }

    fn should_stop(&self) -> bool {
        self.hook.should_stop() || self.inner.should_stop()
    }
}
