//! From timed rows to the report's table: the best sample of each thread count, and its
//! speed-up, efficiency, busy share and per-core speed against the smallest thread count.

use super::ThreadResult;

/// One timed row: every board of the workload counted `copies` times.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Sample {
    /// Wall-clock seconds.
    pub wall_s: f64,
    /// Process CPU seconds, all threads together (`None` without a process clock).
    pub cpu_s: Option<f64>,
    /// Times the workload was counted.
    pub copies: usize,
    /// Solutions found.
    pub solutions: u128,
    /// Tasks (subproblems) solved.
    pub tasks: u64,
}

impl Sample {
    /// Solutions per wall-clock second.
    fn rate(&self) -> f64 {
        self.solutions as f64 / self.wall_s.max(1e-9)
    }

    /// CPU seconds per copy of the workload.
    fn cpu_per_copy(&self) -> Option<f64> {
        Some(self.cpu_s? / self.copies.max(1) as f64)
    }
}

/// Keeps the fastest sample of a thread count (by rate: every round of a thread count
/// counts the same copies).
pub(crate) fn keep_best(slot: &mut Option<Sample>, sample: Sample) {
    if slot.is_none_or(|b| sample.rate() > b.rate()) {
        *slot = Some(sample);
    }
}

/// Per-thread-count rows, each against the smallest thread count (whatever the order given,
/// e.g. `-j 2,1`): speed-up is the ratio of solutions per second, efficiency that over the
/// ratio of threads, and core speed the ratio of CPU seconds per copy of the workload.
pub(crate) fn summarise(threads: &[usize], best: &[Option<Sample>]) -> Vec<ThreadResult> {
    let measured: Vec<(usize, Sample)> = threads
        .iter()
        .zip(best)
        .filter_map(|(&t, b)| Some((t, (*b)?)))
        .collect();
    let Some(&(base_threads, base)) = measured.iter().min_by_key(|(t, _)| *t) else {
        return Vec::new();
    };
    measured
        .into_iter()
        .map(|(t, sample)| row(t, &sample, base_threads, &base))
        .collect()
}

/// The row of `sample` at `t` threads, against `base` at `base_threads`.
fn row(t: usize, sample: &Sample, base_threads: usize, base: &Sample) -> ThreadResult {
    let wall = sample.wall_s.max(1e-9);
    let speedup = sample.rate() / base.rate();
    let core_speed = match (base.cpu_per_copy(), sample.cpu_per_copy()) {
        (Some(b), Some(s)) if s > 0.0 => Some(b / s),
        _ => None,
    };
    ThreadResult {
        threads: t,
        copies: sample.copies,
        wall_s: wall,
        cpu_s: sample.cpu_s,
        solutions: sample.solutions.to_string(),
        subproblems: sample.tasks,
        solutions_per_s: sample.rate(),
        subproblems_per_s: sample.tasks as f64 / wall,
        speedup,
        efficiency: speedup / (t as f64 / base_threads as f64),
        busy: sample.cpu_s.map(|cpu| cpu / (wall * t as f64)),
        core_speed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A sample of `copies` copies (100 solutions in 10 tasks each) in `wall_s` seconds, with
    /// `cpu_s` seconds of CPU time.
    fn took(copies: usize, wall_s: f64, cpu_s: f64) -> Option<Sample> {
        Some(Sample {
            wall_s,
            cpu_s: Some(cpu_s),
            copies,
            solutions: 100 * copies as u128,
            tasks: 10 * copies as u64,
        })
    }

    #[test]
    fn speedup_is_relative_to_the_smallest_thread_count_in_any_order() {
        let rows = summarise(&[2, 1], &[took(2, 5.0, 10.0), took(1, 4.0, 4.0)]);
        assert_eq!(rows[0].threads, 2);
        assert_eq!(rows[0].speedup, 1.6);
        assert_eq!(rows[0].efficiency, 0.8);
        assert_eq!(rows[1].speedup, 1.0);
    }

    #[test]
    fn a_row_that_waited_is_less_busy_and_one_that_ran_slower_has_a_lower_core_speed() {
        // Two threads, two copies: 5 s of wall time each way, but one run kept both threads
        // busy at 80% speed and the other ran at full speed with 20% of its time idle.
        let slower = summarise(&[1, 2], &[took(1, 4.0, 4.0), took(2, 5.0, 10.0)]);
        assert_eq!(slower[1].efficiency, 0.8);
        assert_eq!(slower[1].busy, Some(1.0));
        assert_eq!(slower[1].core_speed, Some(0.8));
        let waited = summarise(&[1, 2], &[took(1, 4.0, 4.0), took(2, 5.0, 8.0)]);
        assert_eq!(waited[1].efficiency, 0.8);
        assert_eq!(waited[1].busy, Some(0.8));
        assert_eq!(waited[1].core_speed, Some(1.0));
    }

    #[test]
    fn summary_computes_rates_and_the_best_sample_is_the_fastest() {
        let rows = summarise(&[1, 2], &[took(1, 4.0, 4.0), took(2, 5.0, 10.0)]);
        assert_eq!(rows[0].solutions_per_s, 25.0);
        assert_eq!(rows[1].solutions, "200");
        assert_eq!(rows[1].subproblems_per_s, 4.0);
        let mut best = None;
        for wall in [5.0, 4.0, 6.0] {
            keep_best(&mut best, took(1, wall, wall).unwrap());
        }
        assert_eq!(best.unwrap().wall_s, 4.0);
    }

    #[test]
    fn rows_without_cpu_time_leave_busy_and_core_speed_empty() {
        let mut one = took(1, 4.0, 4.0);
        one.as_mut().unwrap().cpu_s = None;
        let rows = summarise(&[1], &[one]);
        assert_eq!((rows[0].busy, rows[0].core_speed), (None, None));
    }
}
