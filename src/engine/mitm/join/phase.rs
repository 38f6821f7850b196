//! The CPU time of a task's phases, read only where an estimate asks for it.

use crate::work::thread_cpu_seconds;

/// A stopwatch of one phase's CPU time that reads the clock only when `on`.
pub(crate) struct Phase(Option<f64>);

impl Phase {
    pub(crate) fn start(on: bool) -> Self {
        Phase(if on { thread_cpu_seconds() } else { None })
    }

    /// Adds the time since the start to `seconds`.
    pub(crate) fn stop(self, seconds: &mut f64) {
        if let Some(start) = self.0 {
            *seconds += thread_cpu_seconds().map_or(0.0, |now| now - start);
        }
    }
}
