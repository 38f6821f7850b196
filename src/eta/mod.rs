//! The time left of a count, from estimated costs calibrated by measured task times.
//!
//! The plan's cost model ranks tasks but weighs them loosely, and the same way at every N:
//! the smaller tasks, which a run takes last, take more time per cost unit than the largest,
//! which it takes first. The whole run took 1.8 times its first sixteenth's time per unit at
//! N = 20, 1.3 times at N = 19 and 1.1 at N = 18; at N = 29 the plan as a whole took twice
//! the largest tasks'. So [`Eta`] prices the work left at the pace the finished tasks of the
//! largest-first front measured, rising linearly from the first task to
//! [`LATER_TASKS_SLOWER`] times that at the last ([`Eta::by_front`]), which makes the whole
//! run twice the first task's pace. (The pace of the work done alone promised 0.4 to 1.0
//! times the time left at N = 17 to 20.)
//!
//! A run also first solves one task from each of a few slices of equal cost, drawn by cost
//! ([`nqueens::probe`]). Until a task of the front has finished (at N = 29 that takes
//! minutes), they say what they can ([`Eta::by_slices`]): each slice's work at its probe's
//! pace, and the upper end of a one-sided 95% interval from their spread, since at N = 29
//! one task's seconds per cost unit ranged over a factor of 13 within a slice. A probe under
//! [`RELIABLE_PROBE_SECONDS`] times a cache fill or a wait for the CPU rather than its work,
//! and prices nothing. Once the front has a pace of its own, the probes are left out: as the
//! first tasks to run they pay for filling the caches the rest share, and at N = 23 on a busy
//! machine even those over a tenth of a second took up to 13 times the front's time per unit.

use std::collections::HashMap;
use std::time::{Duration, Instant};

/// The longest time left an ETA holds (about 3·10^10 years): far past any count, yet within
/// what a [`Duration`] takes; the line says "over" it rather than a smaller figure.
pub(crate) const ETA_CAP_SECONDS: f64 = 1e18;

/// How many times the first task's time per cost unit the last task of a run takes, in the
/// pace [`Eta::by_front`] prices the work left at (see the [module docs](self)).
const LATER_TASKS_SLOWER: f64 = 3.0;

/// The shortest probe whose time prices its slice. Shorter ones (under a millisecond at
/// N = 19) time a cache fill or a wait for the CPU as much as their work: at N = 19 on a
/// busy machine two of sixteen took 30 and 100 times the others' pace.
const RELIABLE_PROBE_SECONDS: f64 = 0.1;

/// z of a one-sided 95% bound.
const Z95: f64 = 1.645;

/// Time left from estimated costs, calibrated by measured task times.
#[derive(Debug, Default)]
pub(crate) struct Eta {
    /// Estimated cost of every task of the run.
    pub total: u128,
    /// Estimated cost of the finished tasks.
    done: u128,
    /// Thread-seconds the finished tasks took.
    busy: f64,
    /// Tasks in flight: when they started and their cost.
    running: HashMap<usize, (Instant, u64)>,
    /// The most tasks seen in flight at once (the run's parallelism).
    parallel: usize,
    /// The tasks solved first, by task: the slice of equal cost each stands for.
    probe_slice: HashMap<usize, usize>,
    /// The slices of equal cost the probes stand for.
    slices: usize,
    /// Estimated cost of the finished probes (work off the largest-first front).
    probes_done: u128,
    /// Thread-seconds the finished probes took.
    probes_busy: f64,
    /// The finished probes long enough to price their slice.
    probed: Vec<Probe>,
}

/// A finished probe: its slice and seconds per cost unit.
#[derive(Debug, Clone, Copy)]
struct Probe {
    slice: usize,
    pace: f64,
}

impl Eta {
    /// An ETA for a run of estimated cost `total`.
    #[cfg(test)]
    pub(crate) fn with_total(total: u128) -> Self {
        Eta {
            total,
            ..Eta::default()
        }
    }

    /// The run solves `probes` (`(slice, task)`) first, each standing for one of `slices`
    /// slices of equal cost of the run, slice 0 the largest tasks.
    pub(crate) fn probes(&mut self, slices: usize, probes: &[(usize, usize)]) {
        self.slices = slices;
        self.probe_slice = probes
            .iter()
            .filter(|p| p.0 < slices)
            .map(|&(slice, task)| (task, slice))
            .collect();
    }

    /// Task `task` of cost `cost` started at `at`.
    pub(crate) fn started(&mut self, task: usize, cost: u64, at: Instant) {
        self.running.insert(task, (at, cost));
        self.parallel = self.parallel.max(self.running.len());
    }

    /// Task `task` finished at `at`.
    pub(crate) fn finished(&mut self, task: usize, at: Instant) {
        let Some((start, cost)) = self.running.remove(&task) else {
            return;
        };
        let seconds = at.duration_since(start).as_secs_f64();
        if let Some(&slice) = self.probe_slice.get(&task) {
            self.probes_done += u128::from(cost);
            self.probes_busy += seconds;
            if seconds >= RELIABLE_PROBE_SECONDS {
                let pace = seconds / cost.max(1) as f64;
                self.probed.push(Probe { slice, pace });
            }
        }
        self.done += u128::from(cost);
        self.busy += seconds;
    }

    /// Tasks in flight.
    pub(crate) fn in_flight(&self) -> usize {
        self.running.len()
    }

    /// Cost units one thread does per second, once a task has finished.
    fn rate(&self) -> Option<f64> {
        (self.done > 0 && self.busy > 0.0).then(|| self.done as f64 / self.busy)
    }

    /// Estimated cost already done at `now`: finished tasks, plus the share of each task in
    /// flight its running time stands for at the measured rate (never more than its cost).
    fn done_at(&self, now: Instant) -> f64 {
        self.done as f64 + self.credit(now, |_| true)
    }

    /// The share of the tasks in flight that `of` picks that their running time stands for
    /// at the measured rate (never more than their cost).
    fn credit(&self, now: Instant, of: impl Fn(usize) -> bool) -> f64 {
        let rate = self.rate().unwrap_or(0.0);
        self.running
            .iter()
            .filter(|(&task, _)| of(task))
            .map(|(_, &(start, cost))| {
                (rate * now.duration_since(start).as_secs_f64()).min(cost as f64)
            })
            .sum()
    }

    /// Whether `task` is one of the largest-first front's (not a probe).
    fn is_front(&self, task: usize) -> bool {
        !self.probe_slice.contains_key(&task)
    }

    /// The fraction of the estimated work done at `now`, 0 to 1.
    pub(crate) fn fraction(&self, now: Instant) -> f64 {
        if self.total == 0 {
            return 0.0;
        }
        (self.done_at(now) / self.total as f64).clamp(0.0, 1.0)
    }

    /// Time left at `now`: [`Eta::by_front`] once a task of the front has finished, else
    /// [`Eta::by_slices`], over the threads seen at work; `None` before either can say.
    pub(crate) fn remaining(&self, now: Instant) -> Option<Duration> {
        let threads = self.parallel.max(1) as f64;
        let thread_seconds = match self.by_front(now) {
            Some(front) => front,
            None => self.by_slices(now)?,
        };
        let secs = thread_seconds / threads;
        secs.is_finite()
            .then(|| Duration::from_secs_f64(secs.min(ETA_CAP_SECONDS)))
    }

    /// The largest-first front: the cost done less the probes (solved out of order).
    fn front(&self) -> f64 {
        (self.done - self.probes_done.min(self.done)) as f64
    }

    /// The front's work done at `now`, as a share `d` of the run, and the thread-seconds it
    /// took, both with the front's tasks in flight; `None` before any of them finished.
    fn front_at(&self, now: Instant) -> Option<(f64, f64)> {
        let running: f64 = self
            .running
            .iter()
            .filter(|(&task, _)| self.is_front(task))
            .map(|(_, &(start, _))| now.duration_since(start).as_secs_f64())
            .sum();
        let done = self.front() + self.credit(now, |t| self.is_front(t));
        let busy = self.busy - self.probes_busy + running;
        let d = (done / self.total.max(1) as f64).clamp(0.0, 1.0);
        (self.front() > 0.0 && busy > 0.0).then_some((d, busy))
    }

    /// Thread-seconds left at the pace the front measured, in a model where the pace rises
    /// linearly over the run's work from `p` at the first task to [`LATER_TASKS_SLOWER`]
    /// times `p` at the last; `None` before any task of the front finished.
    fn by_front(&self, now: Instant) -> Option<f64> {
        let (d, busy) = self.front_at(now)?;
        let (k, total) = (LATER_TASKS_SLOWER - 1.0, self.total as f64);
        // The front's work, 0 to d, took busy = p · total · (d + k·d²/2).
        let units = total * (d + k * d * d / 2.0);
        if units <= 0.0 {
            return None;
        }
        let p = busy / units;
        // The work from d to 1 takes p · total · ((1 − d) + k·(1 − d²)/2); the probes did a
        // little of it already.
        let (left_of_front, left) = (total * (1.0 - d), total - self.done_at(now));
        let share = match left_of_front > 0.0 {
            true => left.clamp(0.0, left_of_front) / left_of_front,
            false => 0.0,
        };
        Some(p * total * ((1.0 - d) + k * (1.0 - d * d) / 2.0) * share)
    }

    /// Thread-seconds left by the probes alone, the upper end of a one-sided 95% interval:
    /// each slice's work left (the run's work in cost order, done up to the front's tasks in
    /// flight) at its probe's seconds per unit; a slice whose probe is still running or too
    /// short to count at the larger of the probes' mean and what its probe in flight has
    /// spent. The spread of the probes' paces gives the interval. `None` until a probe long
    /// enough to price its slice finished.
    fn by_slices(&self, now: Instant) -> Option<f64> {
        let m = self.probed.len() as f64;
        let mean = self.probed.iter().map(|p| p.pace).sum::<f64>() / m;
        if !mean.is_finite() || self.slices == 0 {
            return None;
        }
        // One probe says nothing of the spread: assume it as wide as the pace itself.
        let var = match self.probed.len() {
            1 => mean * mean,
            _ => {
                let squares: f64 = self.probed.iter().map(|p| (p.pace - mean).powi(2)).sum();
                squares / (m - 1.0)
            }
        };
        let floor = self.probes_in_flight(now);
        let width = self.total as f64 / self.slices as f64;
        let front = self.front() + self.credit(now, |t| self.is_front(t));
        let (mut point, mut spread, mut unmeasured) = (0.0, 0.0, 0.0);
        for (j, spent) in floor.iter().enumerate() {
            let left = ((j + 1) as f64 * width - front).clamp(0.0, width);
            spread += left * left * var;
            match self.probed.iter().find(|p| p.slice == j) {
                Some(probe) => point += left * probe.pace,
                None => {
                    point += left * mean.max(*spent);
                    unmeasured += left;
                }
            }
        }
        // The slices without a probe share the probes' mean, and its error.
        spread += unmeasured * unmeasured * var / m;
        Some(point + Z95 * spread.sqrt())
    }

    /// For each slice, the seconds per cost unit its probe in flight has spent so far (0
    /// where none is in flight).
    fn probes_in_flight(&self, now: Instant) -> Vec<f64> {
        let mut floor = vec![0.0f64; self.slices];
        for (task, &(start, cost)) in &self.running {
            if let Some(&j) = self.probe_slice.get(task) {
                let spent = now.duration_since(start).as_secs_f64() / cost.max(1) as f64;
                floor[j] = floor[j].max(spent);
            }
        }
        floor
    }
}

#[cfg(test)]
mod tests;
