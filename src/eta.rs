//! The time left of a count, from estimated costs calibrated by measured task times.
//!
//! The plan's cost model ranks tasks but weighs them loosely: at N = 29 one task's seconds
//! per cost unit ranged over a factor of 13 within a slice of the plan, and the largest
//! tasks, which a run takes first, take fewer per unit than the plan as a whole. So a run
//! first solves one task from each of a few slices of equal cost, drawn by cost
//! ([`nqueens::probe`]), and [`Eta`] prices the work left in each slice at what that slice's
//! tasks took (its probe, then the tasks of the largest-first front as it passes through).
//! Until every slice has finished tasks, their spread says how far off that price may be,
//! and the ETA is the upper end, not the middle: the time left is below it about 19 times in
//! 20. Nor is it ever below what the finished tasks' rate alone would say.

use std::collections::HashMap;
use std::time::{Duration, Instant};

/// The longest time left an ETA holds (about 3·10^10 years): far past any count, yet within
/// what a [`Duration`] takes; the line says "over" it rather than a smaller figure.
pub(crate) const ETA_CAP_SECONDS: f64 = 1e18;

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
    /// What the finished tasks of each slice took, slice 0 the largest tasks.
    slices: Vec<Slice>,
    /// Estimated cost of the finished probes (work off the largest-first front).
    probes_done: u128,
    /// Seconds per cost unit of each finished probe.
    probe_paces: Vec<f64>,
}

/// The finished tasks of one slice.
#[derive(Debug, Default, Clone, Copy)]
struct Slice {
    tasks: u32,
    cost: f64,
    seconds: f64,
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
        self.slices = vec![Slice::default(); slices];
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
        let slice = match self.probe_slice.get(&task) {
            Some(&slice) => {
                self.probes_done += u128::from(cost);
                self.probe_paces.push(seconds / cost.max(1) as f64);
                Some(slice)
            }
            None => self.front_slice(self.front()),
        };
        if let Some(s) = slice.and_then(|j| self.slices.get_mut(j)) {
            s.tasks += 1;
            s.cost += cost as f64;
            s.seconds += seconds;
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

    /// The fraction of the estimated work done at `now`, 0 to 1.
    pub(crate) fn fraction(&self, now: Instant) -> f64 {
        if self.total == 0 {
            return 0.0;
        }
        (self.done_at(now) / self.total as f64).clamp(0.0, 1.0)
    }

    /// Time left at `now`, or `None` while there is no measured rate yet (with probes: until
    /// one has finished).
    pub(crate) fn remaining(&self, now: Instant) -> Option<Duration> {
        let rate = self.rate()?;
        let threads = self.parallel.max(1) as f64;
        let done = self.done_at(now);
        let by_rate = (self.total as f64 - done).max(0.0) / rate;
        let by_slices = match self.slices.is_empty() {
            true => 0.0,
            false => self.by_slices(now)?,
        };
        let secs = by_rate.max(by_slices) / threads;
        secs.is_finite()
            .then(|| Duration::from_secs_f64(secs.min(ETA_CAP_SECONDS)))
    }

    /// The largest-first front: the cost done less the probes (solved out of order).
    fn front(&self) -> f64 {
        (self.done - self.probes_done.min(self.done)) as f64
    }

    /// The slice the front is in.
    fn front_slice(&self, front: f64) -> Option<usize> {
        let width = self.total as f64 / self.slices.len().max(1) as f64;
        let last = self.slices.len().checked_sub(1)?;
        Some(((front / width) as usize).min(last))
    }

    /// Thread-seconds left, the upper end of a one-sided 95% interval: each slice's work
    /// left (the run's work in cost order, done up to the front) at its finished tasks'
    /// seconds per unit, a slice without any at the probes' mean (or what its probe in
    /// flight has spent, if more); the spread of the probes' paces gives the interval. `None`
    /// until a probe finished.
    fn by_slices(&self, now: Instant) -> Option<f64> {
        let m = self.probe_paces.len() as f64;
        let mean = self.probe_paces.iter().sum::<f64>() / m;
        if !mean.is_finite() {
            return None;
        }
        // One probe says nothing of the spread: assume it as wide as the pace itself.
        let var = match self.probe_paces.len() {
            1 => mean * mean,
            _ => {
                self.probe_paces
                    .iter()
                    .map(|p| (p - mean).powi(2))
                    .sum::<f64>()
                    / (m - 1.0)
            }
        };
        let mut floor = vec![0.0f64; self.slices.len()];
        for (task, &(start, cost)) in &self.running {
            if let Some(&j) = self.probe_slice.get(task) {
                let spent = now.duration_since(start).as_secs_f64() / cost.max(1) as f64;
                floor[j] = floor[j].max(spent);
            }
        }
        let width = self.total as f64 / self.slices.len() as f64;
        let front = self.front() + self.credit(now, |t| !self.probe_slice.contains_key(&t));
        let (mut point, mut spread, mut unmeasured) = (0.0, 0.0, 0.0);
        for (j, s) in self.slices.iter().enumerate() {
            let left = ((j + 1) as f64 * width - front).clamp(0.0, width);
            if s.tasks > 0 {
                point += left * s.seconds / s.cost.max(1.0);
                spread += left * left * var / f64::from(s.tasks);
            } else {
                point += left * mean.max(floor[j]);
                spread += left * left * var;
                unmeasured += left;
            }
        }
        // The slices without tasks share the probes' mean, and its error.
        spread += unmeasured * unmeasured * var / m;
        Some(point + Z95 * spread.sqrt())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secs(s: u64) -> Duration {
        Duration::from_secs(s)
    }

    #[test]
    fn the_eta_says_nothing_until_a_task_finishes() {
        let t0 = Instant::now();
        let mut eta = Eta::with_total(1000);
        eta.started(0, 400, t0);
        eta.started(1, 400, t0);
        assert_eq!(eta.remaining(t0 + secs(60)), None);
        assert_eq!(eta.in_flight(), 2);
    }

    #[test]
    fn the_eta_is_by_cost_calibrated_by_measured_time() {
        let t0 = Instant::now();
        let mut eta = Eta::with_total(1000);
        // Two threads: a task of cost 100 takes 10 s (10 units/s per thread).
        eta.started(0, 100, t0);
        eta.started(1, 500, t0);
        eta.finished(0, t0 + secs(10));
        eta.started(2, 400, t0 + secs(10));
        let now = t0 + secs(10);
        // Done: 100 + 100 credited to task 1 = 200 of 1000; 800 left at 2 × 10 units/s.
        assert!((eta.fraction(now) - 0.2).abs() < 1e-9);
        assert_eq!(eta.remaining(now), Some(secs(40)));
    }

    /// A run of cost 1000 in two slices whose probes are done: the small tasks' slice (1)
    /// takes 1 s a unit, the large tasks' slice (0) 0.5 s.
    fn probed() -> (Eta, Instant) {
        let t0 = Instant::now();
        let mut eta = Eta::with_total(1000);
        eta.probes(2, &[(1, 10), (0, 11)]);
        eta.started(10, 10, t0);
        eta.finished(10, t0 + secs(10));
        eta.started(11, 100, t0 + secs(10));
        eta.finished(11, t0 + secs(60));
        (eta, t0 + secs(60))
    }

    #[test]
    fn the_work_left_is_priced_by_each_slice_and_bounded_above() {
        let (eta, now) = probed();
        // The finished tasks alone: 110 units in 60 s, so 890 left in 485 s. The slices:
        // 500 units at 0.5 s and 500 at 1 s, 750 s, and the spread of the two paces (sample
        // variance 0.125) gives 750 + 1.645 · √(2 · 500² · 0.125) = 1161 s.
        let left = eta.remaining(now).unwrap().as_secs_f64();
        assert!((left - 1161.2).abs() < 0.5, "{left}");
    }

    #[test]
    fn tasks_of_the_front_narrow_their_slice_to_its_own_pace() {
        let (mut eta, mut now) = probed();
        // Slice 0's tasks, costs 10 each at 0.5 s a unit: 49 of them, so slice 0 is done
        // but for 500 − 490 = 10 units; slice 1 is still whole.
        for task in 100..149 {
            eta.started(task, 10, now);
            now += secs(5);
            eta.finished(task, now);
        }
        let left = eta.remaining(now).unwrap().as_secs_f64();
        // 10 · 0.5 + 500 · 1 = 505 s, and the spread of slice 1 (measured by one probe):
        // 1.645 · √(10² · 0.125 / 50 + 500² · 0.125) = 290.8.
        assert!((left - 795.8).abs() < 0.5, "{left}");
    }

    #[test]
    fn a_probe_in_flight_raises_its_slice_and_one_probe_is_not_trusted_alone() {
        let t0 = Instant::now();
        let mut eta = Eta::with_total(1000);
        eta.probes(2, &[(1, 10), (0, 11)]);
        eta.started(10, 10, t0);
        eta.started(11, 100, t0);
        eta.finished(10, t0 + secs(5));
        // One pace known (0.5 s a unit); the probe in flight has spent 2 s a unit by now.
        let now = t0 + secs(200);
        let left = eta.remaining(now).unwrap().as_secs_f64();
        // No front task has run: 500 · 2 + 500 · 0.5 = 1250 thread-seconds, spread with the
        // pace's own size as its deviation: 1.645 · √(3 · 500² · 0.25) = 712.3; on the two
        // threads seen, 981.2 s.
        assert!((left - 981.2).abs() < 0.5, "{left}");
    }
}
