//! The indicatif progress bar, as a library [`Progress`] observer.
//!
//! It is ticked once per finished task from the executor, never from inside the search, and it
//! is hidden unless stderr is a terminal and `--quiet` was not given.

use std::io::IsTerminal;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};
use nqueens::Progress;

/// A progress bar showing tasks done / total, the running count, the rate and an ETA.
pub struct Bar {
    bar: ProgressBar,
    found: Mutex<u128>,
    started: Instant,
}

impl Bar {
    /// A bar on stderr, hidden when `quiet` or when stderr is not a terminal.
    pub fn new(quiet: bool) -> Self {
        let bar = if quiet || !std::io::stderr().is_terminal() {
            ProgressBar::hidden()
        } else {
            ProgressBar::new(0).with_style(style())
        };
        Bar {
            bar,
            found: Mutex::new(0),
            started: Instant::now(),
        }
    }

    /// Removes the bar from the terminal.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

fn style() -> ProgressStyle {
    ProgressStyle::with_template(
        "{spinner} {elapsed_precise} [{bar:30}] {pos}/{len} tasks {msg} ETA {eta}",
    )
    .expect("the template is valid")
    .progress_chars("=> ")
}

impl Progress for Bar {
    fn start(&self, tasks: usize, _plan_len: usize) {
        self.bar.set_length(tasks as u64);
        self.bar.enable_steady_tick(Duration::from_millis(200));
    }

    fn task_done(&self, _task: usize, count: u128) {
        let found = {
            let mut found = self.found.lock().unwrap_or_else(|e| e.into_inner());
            *found += count;
            *found
        };
        let rate = found as f64 / self.started.elapsed().as_secs_f64().max(1e-9);
        self.bar
            .set_message(format!("| {found} solutions | {} /s |", human(rate)));
        self.bar.inc(1);
    }
}

/// A rate with a metric suffix, e.g. `35.9 M`.
pub fn human(x: f64) -> String {
    const UNITS: [(f64, &str); 4] = [(1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")];
    UNITS
        .iter()
        .find(|(scale, _)| x >= *scale)
        .map_or_else(|| format!("{x:.0}"), |(s, u)| format!("{:.1} {u}", x / s))
}

#[cfg(test)]
mod tests {
    use super::human;

    #[test]
    fn rates_get_metric_suffixes() {
        assert_eq!(human(12.0), "12");
        assert_eq!(human(35_900_000.0), "35.9 M");
        assert_eq!(human(2.5e9), "2.5 G");
    }
}
