//! The indicatif progress bars: [`progress_bar`] makes every one; [`Bar`] shows a count as a
//! library [`Progress`] observer, [`BenchBar`] a benchmark as a [`BenchObserver`].
//!
//! It is ticked once per started and finished task from the executor, never from inside the
//! search, and it is hidden unless stderr is a terminal and `--quiet` was not given.
//!
//! Progress and ETA are by estimated *cost*, not by task count: plans run their
//! biggest tasks first, so counting tasks says "90% done" long before the end. [`Eta`]
//! calibrates the plan's cost units against the time finished tasks took on their thread,
//! credits tasks in flight with the time they have run, and says "estimating…" until a
//! task has finished.

use std::collections::HashMap;
use std::io::IsTerminal;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};
use nqueens::bench::BenchObserver;
use nqueens::Progress;

/// Steps of the drawn bar (cost fraction × this).
const BAR_STEPS: u64 = 10_000;

/// What the bar knows about the run, behind one lock.
#[derive(Debug, Default)]
struct State {
    eta: Eta,
    found: u128,
    tasks: usize,
    finished: usize,
}

/// A progress bar showing work done by estimated cost, tasks done and in flight, the running
/// count and an ETA.
pub(crate) struct Bar {
    bar: ProgressBar,
    state: Mutex<State>,
}

impl Bar {
    /// A bar on stderr, hidden when `quiet` or when stderr is not a terminal.
    pub(crate) fn new(quiet: bool) -> Self {
        // wide_msg: cut to the terminal's width instead of wrapping onto a second line.
        let template = "{spinner} {elapsed_precise} [{bar:20}] {wide_msg}";
        Bar {
            bar: progress_bar(quiet, BAR_STEPS, template),
            state: Mutex::new(State::default()),
        }
    }

    /// Removes the bar from the terminal.
    pub(crate) fn finish(&self) {
        self.bar.finish_and_clear();
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Redraws the message from the current state.
    fn redraw(&self, s: &State) {
        let now = Instant::now();
        self.bar
            .set_position((s.eta.fraction(now) * BAR_STEPS as f64) as u64);
        let eta = s.eta.remaining(now).map_or_else(
            || "estimating…".to_string(),
            |d| format!("ETA {}", clock(d)),
        );
        self.bar.set_message(format!(
            "{:.1}% of est. work | {eta} | {}/{} tasks, {} running | {} solutions",
            100.0 * s.eta.fraction(now),
            s.finished,
            s.tasks,
            s.eta.in_flight(),
            s.found
        ));
    }
}

/// The one place progress bars are made (hyperfine's `output/progress_bar.rs`): a bar of
/// `len` steps on stderr drawn with `template`, or a hidden one when `quiet` or when stderr is
/// not a terminal.
pub(crate) fn progress_bar(quiet: bool, len: u64, template: &str) -> ProgressBar {
    if quiet || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let style = ProgressStyle::with_template(template)
        .expect("the template is valid")
        .progress_chars("=> ");
    ProgressBar::new(len).with_style(style)
}

impl Progress for Bar {
    fn start(&self, tasks: usize, _plan_len: usize) {
        let mut s = self.state();
        s.tasks = tasks;
        self.redraw(&s);
        drop(s);
        self.bar.enable_steady_tick(Duration::from_millis(200));
    }

    fn start_work(&self, cost: u128) {
        self.state().eta.total = cost;
    }

    fn task_started(&self, task: usize, cost: u64) {
        let mut s = self.state();
        s.eta.started(task, cost, Instant::now());
        self.redraw(&s);
    }

    fn task_done(&self, _task: usize, count: u128) {
        let mut s = self.state();
        s.found = s.found.saturating_add(count);
        s.finished += 1;
    }

    fn work_done(&self, task: usize, _cost: u64) {
        let mut s = self.state();
        s.eta.finished(task, Instant::now());
        self.redraw(&s);
    }
}

/// The benchmark's progress bar: one step per count.
pub(crate) struct BenchBar(ProgressBar);

impl BenchBar {
    /// A bar on stderr, hidden when `quiet` or when stderr is not a terminal.
    pub(crate) fn new(quiet: bool) -> Self {
        let bar = progress_bar(
            quiet,
            0,
            "{spinner} {elapsed_precise} [{bar:30}] {pos}/{len} {msg}",
        );
        if !bar.is_hidden() {
            bar.enable_steady_tick(Duration::from_millis(200));
        }
        BenchBar(bar)
    }

    /// Removes the bar from the terminal.
    pub(crate) fn finish(&self) {
        self.0.finish_and_clear();
    }
}

impl BenchObserver for BenchBar {
    fn count_started(&self, index: usize, total: Option<usize>, label: &str) {
        if let Some(total) = total {
            self.0.set_length(total as u64);
        }
        self.0.set_position(index as u64);
        self.0.set_message(label.to_string());
    }
}

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
}

impl Eta {
    /// Task `task` of cost `cost` started at `at`.
    pub(crate) fn started(&mut self, task: usize, cost: u64, at: Instant) {
        self.running.insert(task, (at, cost));
        self.parallel = self.parallel.max(self.running.len());
    }

    /// Task `task` finished at `at`.
    pub(crate) fn finished(&mut self, task: usize, at: Instant) {
        if let Some((start, cost)) = self.running.remove(&task) {
            self.done += u128::from(cost);
            self.busy += at.duration_since(start).as_secs_f64();
        }
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
        let rate = self.rate().unwrap_or(0.0);
        let partial: f64 = self
            .running
            .values()
            .map(|&(start, cost)| (rate * now.duration_since(start).as_secs_f64()).min(cost as f64))
            .sum();
        self.done as f64 + partial
    }

    /// The fraction of the estimated work done at `now`, 0 to 1.
    pub(crate) fn fraction(&self, now: Instant) -> f64 {
        if self.total == 0 {
            return 0.0;
        }
        (self.done_at(now) / self.total as f64).clamp(0.0, 1.0)
    }

    /// Time left at `now`, or `None` while there is no measured rate yet.
    pub(crate) fn remaining(&self, now: Instant) -> Option<Duration> {
        let rate = self.rate()?;
        let threads = self.parallel.max(1) as f64;
        let left = (self.total as f64 - self.done_at(now)).max(0.0);
        let secs = left / (rate * threads);
        secs.is_finite()
            .then(|| Duration::from_secs_f64(secs.min(1e9)))
    }
}

/// A duration as `1d 02:03:04` or `02:03:04`.
fn clock(d: Duration) -> String {
    let s = d.as_secs();
    let (days, h, m, sec) = (s / 86_400, s / 3600 % 24, s / 60 % 60, s % 60);
    if days > 0 {
        format!("{days}d {h:02}:{m:02}:{sec:02}")
    } else {
        format!("{h:02}:{m:02}:{sec:02}")
    }
}

/// A rate with a metric suffix, e.g. `35.9 M`.
pub(crate) fn human(x: f64) -> String {
    const UNITS: [(f64, &str); 4] = [(1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")];
    UNITS
        .iter()
        .find(|(scale, _)| x >= *scale)
        .map_or_else(|| format!("{x:.0}"), |(s, u)| format!("{:.1} {u}", x / s))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_eta_says_nothing_until_a_task_finishes() {
        let t0 = Instant::now();
        let mut eta = Eta {
            total: 1000,
            ..Eta::default()
        };
        eta.started(0, 400, t0);
        eta.started(1, 400, t0);
        assert_eq!(eta.remaining(t0 + Duration::from_secs(60)), None);
        assert_eq!(eta.in_flight(), 2);
    }

    #[test]
    fn the_eta_is_by_cost_calibrated_by_measured_time() {
        let t0 = Instant::now();
        let mut eta = Eta {
            total: 1000,
            ..Eta::default()
        };
        // Two threads: a task of cost 100 takes 10 s (10 units/s per thread).
        eta.started(0, 100, t0);
        eta.started(1, 500, t0);
        eta.finished(0, t0 + Duration::from_secs(10));
        eta.started(2, 400, t0 + Duration::from_secs(10));
        let now = t0 + Duration::from_secs(10);
        // Done: 100 + 100 credited to task 1 = 200 of 1000; 800 left at 2 × 10 units/s.
        assert!((eta.fraction(now) - 0.2).abs() < 1e-9);
        assert_eq!(eta.remaining(now), Some(Duration::from_secs(40)));
    }

    #[test]
    fn clocks_show_days_past_a_day() {
        assert_eq!(clock(Duration::from_secs(3723)), "01:02:03");
        assert_eq!(clock(Duration::from_secs(90_000)), "1d 01:00:00");
    }

    #[test]
    fn rates_get_metric_suffixes() {
        assert_eq!(human(12.0), "12");
        assert_eq!(human(35_900_000.0), "35.9 M");
        assert_eq!(human(2.5e9), "2.5 G");
    }
}
