//! The indicatif progress bars: [`progress_bar`] makes every one; [`Bar`] shows a count as a
//! library [`Progress`] observer, [`BenchBar`] a benchmark as a [`BenchObserver`].
//!
//! It is ticked once per started and finished task from the executor, never from inside the
//! search, and it is hidden unless stderr is a terminal and `--quiet` was not given.
//!
//! Progress and ETA are by estimated *cost*, not by task count: plans run their
//! biggest tasks first, so counting tasks says "90% done" long before the end. The time left
//! is [`Eta`]'s: the work left at the pace the finished tasks measured, allowing for the
//! later, smaller tasks' higher pace per unit of estimated cost.
//!
//! The line fits the terminal's width: as it narrows, [`line_for_width`] drops the wording,
//! the bar, the running count, the tasks in flight, the tasks done and the ETA, in that order,
//! whole fields, never cut mid-word; the share done goes last. A terminal that cannot redraw
//! a line in place (`TERM=dumb`: an editor's shell, a serial console) gets plain lines
//! instead, one every [`LINE_EVERY`] at most ([`Show`]).

use std::ffi::OsStr;
use std::io::IsTerminal;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};
use nqueens::bench::BenchObserver;
use nqueens::Progress;

use crate::eta::{Eta, ETA_CAP_SECONDS};

/// Columns before the message: the spinner, a blank, the elapsed time (`00:00:00`) and a
/// blank.
const PREFIX: usize = 11;

/// The terminal width assumed when it cannot be read.
const DEFAULT_WIDTH: usize = 80;

/// How often at most a terminal without redrawing gets a progress line.
const LINE_EVERY: Duration = Duration::from_secs(10);

/// How progress shows on stderr.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Show {
    /// Nothing: `--quiet`, or stderr is not a terminal.
    Nothing,
    /// A bar redrawn in place.
    Bar,
    /// Plain lines now and then, for a terminal that cannot redraw one (`TERM=dumb`): no
    /// carriage returns, escape sequences or spinner.
    Lines,
}

impl Show {
    /// How progress shows with `quiet` on this process's stderr and `TERM`.
    pub(crate) fn here(quiet: bool) -> Show {
        let term = std::env::var_os("TERM");
        Show::of(quiet, std::io::stderr().is_terminal(), term.as_deref())
    }

    /// How progress shows with `quiet`, whether stderr is a `terminal`, and `term`.
    fn of(quiet: bool, terminal: bool, term: Option<&OsStr>) -> Show {
        if quiet || !terminal {
            Show::Nothing
        } else if term == Some(OsStr::new("dumb")) {
            Show::Lines
        } else {
            Show::Bar
        }
    }
}

/// What the bar knows about the run, behind one lock.
#[derive(Debug, Default)]
struct State {
    eta: Eta,
    found: u128,
    tasks: usize,
    finished: usize,
    /// When the last plain line was printed ([`Show::Lines`]).
    printed: Option<Instant>,
}

/// A progress bar showing work done by estimated cost, tasks done and in flight, the running
/// count and an ETA.
pub(crate) struct Bar {
    bar: ProgressBar,
    show: Show,
    started: Instant,
    state: Mutex<State>,
}

impl Bar {
    /// A bar on stderr, hidden when `quiet` or when stderr is not a terminal.
    pub(crate) fn new(quiet: bool) -> Self {
        // The message is made to fit (`line_for_width`); wide_msg also cuts it to the
        // terminal's width should the elapsed time outgrow its 8 columns.
        let template = "{spinner} {elapsed_precise} {wide_msg}";
        Bar {
            bar: progress_bar(quiet, 0, template),
            show: Show::here(quiet),
            started: Instant::now(),
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

    /// Redraws the message from the current state, for the terminal's current width, or
    /// prints a plain line if one is due.
    fn redraw(&self, s: &mut State) {
        match self.show {
            Show::Nothing => {}
            Show::Bar => {
                let width = console::Term::stderr()
                    .size_checked()
                    .map_or(DEFAULT_WIDTH, |(_, columns)| usize::from(columns));
                self.bar.set_message(line_for_width(&fields(s), width));
            }
            Show::Lines => {
                let now = Instant::now();
                if s.printed
                    .is_some_and(|t| now.duration_since(t) < LINE_EVERY)
                {
                    return;
                }
                s.printed = Some(now);
                eprintln!("nqueens: {}", plain_line(&fields(s), now - self.started));
            }
        }
    }
}

/// The fields of the line for the state `s`, now.
fn fields(s: &State) -> Fields {
    let now = Instant::now();
    Fields {
        fraction: s.eta.fraction(now),
        eta: s.eta.remaining(now),
        finished: s.finished,
        tasks: s.tasks,
        running: s.eta.in_flight(),
        found: s.found,
    }
}

/// A progress line for a terminal that cannot redraw: the time since the start, then every
/// field but the bar.
pub(crate) fn plain_line(fields: &Fields, elapsed: Duration) -> String {
    // The fourth form is the fullest without the bar.
    let [_, _, _, full, ..] = forms(fields);
    format!("{} {full}", clock(elapsed))
}

/// What the progress line shows.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Fields {
    /// Share of the estimated work done, 0 to 1.
    pub fraction: f64,
    /// Time left; `None` while there is no measured rate yet.
    pub eta: Option<Duration>,
    /// Tasks finished.
    pub finished: usize,
    /// Tasks in the run.
    pub tasks: usize,
    /// Tasks in flight.
    pub running: usize,
    /// Solutions found so far.
    pub found: u128,
}

/// The message after the spinner and elapsed time for a terminal `width` columns wide: the
/// fullest form of the line that fits. Fields go whole, never cut mid-word; where not even
/// the share done fits, the message is empty.
pub(crate) fn line_for_width(fields: &Fields, width: usize) -> String {
    let room = width.saturating_sub(PREFIX);
    forms(fields)
        .into_iter()
        .find(|line| line.chars().count() <= room)
        .unwrap_or_default()
}

/// The forms of the line, fullest first. Each drops or shortens what matters least of the
/// one before: the wording, then the bar, the solutions, the tasks in flight, the tasks
/// done, the ETA; the share done goes last.
fn forms(f: &Fields) -> [String; 10] {
    let share = format!("{:.1}%", 100.0 * f.fraction);
    let eta = f.eta.map_or_else(
        || "estimating…".to_string(),
        |d| format!("ETA {}", clock(d)),
    );
    let tasks = format!("{}/{}", f.finished, f.tasks);
    let running = format!("{} running", f.running);
    let found = format!("{} solutions", f.found);
    let (wide, narrow) = (bar(f.fraction, 20), bar(f.fraction, 10));
    [
        format!("{wide} {share} of est. work | {eta} | {tasks} tasks, {running} | {found}"),
        format!("{wide} {share} | {eta} | {tasks} tasks, {running} | {found}"),
        format!("{narrow} {share} | {eta} | {tasks} tasks, {running} | {found}"),
        format!("{share} | {eta} | {tasks} tasks, {running} | {found}"),
        format!("{narrow} {share} | {eta} | {tasks} tasks, {running}"),
        format!("{share} | {eta} | {tasks} tasks, {running}"),
        format!("{share} | {eta} | {tasks} tasks"),
        format!("{share} | {eta} | {tasks}"),
        format!("{share} | {eta}"),
        share,
    ]
}

/// A bar of `width` cells for `fraction` done, in brackets: `[====>     ]`.
fn bar(fraction: f64, width: usize) -> String {
    let filled = ((fraction.clamp(0.0, 1.0) * width as f64) as usize).min(width);
    let head = usize::from(filled < width && filled > 0);
    let body = "=".repeat(filled - head) + &">".repeat(head);
    format!("[{body:<width$}]")
}

/// The one place progress bars are made (hyperfine's `output/progress_bar.rs`): a bar of
/// `len` steps on stderr drawn with `template`, or a hidden one unless [`Show::Bar`].
pub(crate) fn progress_bar(quiet: bool, len: u64, template: &str) -> ProgressBar {
    if Show::here(quiet) != Show::Bar {
        return ProgressBar::hidden();
    }
    let style = ProgressStyle::with_template(template)
        .expect("the template is valid")
        .progress_chars("=> ");
    ProgressBar::new(len).with_style(style)
}

impl Progress for Bar {
    fn probes(&self, slices: usize, probes: &[(usize, usize)]) {
        self.state().eta.probes(slices, probes);
    }

    fn start(&self, tasks: usize, _plan_len: usize) {
        let mut s = self.state();
        s.tasks = tasks;
        self.redraw(&mut s);
        drop(s);
        if self.show == Show::Bar {
            self.bar.enable_steady_tick(Duration::from_millis(200));
        }
    }

    fn start_work(&self, cost: u128) {
        self.state().eta.total = cost;
    }

    fn task_started(&self, task: usize, cost: u64) {
        let mut s = self.state();
        s.eta.started(task, cost, Instant::now());
        self.redraw(&mut s);
    }

    fn task_done(&self, _task: usize, count: u128) {
        let mut s = self.state();
        s.found = s.found.saturating_add(count);
        s.finished += 1;
    }

    fn work_done(&self, task: usize, _cost: u64) {
        let mut s = self.state();
        s.eta.finished(task, Instant::now());
        self.redraw(&mut s);
    }
}

/// The benchmark's progress bar: one step per count (a plain line per count where the
/// terminal cannot redraw).
pub(crate) struct BenchBar {
    bar: ProgressBar,
    lines: bool,
}

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
        let lines = Show::here(quiet) == Show::Lines;
        BenchBar { bar, lines }
    }

    /// Removes the bar from the terminal.
    pub(crate) fn finish(&self) {
        self.bar.finish_and_clear();
    }

    /// Prints `nqueens: LINE` on stderr, above the bar where one is drawn.
    pub(crate) fn note(&self, line: &str) {
        match self.bar.is_hidden() {
            true => eprintln!("nqueens: {line}"),
            false => self.bar.println(format!("nqueens: {line}")),
        }
    }
}

impl BenchObserver for BenchBar {
    fn count_started(&self, index: usize, total: Option<usize>, label: &str) {
        if self.lines {
            let of = total.map_or_else(String::new, |t| format!(" of {t}"));
            eprintln!("nqueens: count {}{of}: {label}", index + 1);
        }
        if let Some(total) = total {
            self.bar.set_length(total as u64);
        }
        self.bar.set_position(index as u64);
        self.bar.set_message(label.to_string());
    }
}

/// Seconds in a year of 365.25 days.
const YEAR_SECONDS: u64 = 31_557_600;

/// A duration as `1d 02:03:04` or `02:03:04`; from 1,000 days in years (`63.4 years`,
/// `2.6 k years`), since a clock's digits mean nothing there.
fn clock(d: Duration) -> String {
    let s = d.as_secs();
    let (days, h, m, sec) = (s / 86_400, s / 3600 % 24, s / 60 % 60, s % 60);
    if d.as_secs_f64() >= ETA_CAP_SECONDS {
        format!(
            "over {} years",
            human(ETA_CAP_SECONDS / YEAR_SECONDS as f64)
        )
    } else if days >= 1000 {
        let years = s as f64 / YEAR_SECONDS as f64;
        if years < 1000.0 {
            format!("{years:.1} years")
        } else {
            format!("{} years", human(years))
        }
    } else if days > 0 {
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

    /// The fields of an N = 19 count a tenth of the way in.
    fn n19() -> Fields {
        Fields {
            fraction: 0.123,
            eta: Some(Duration::from_secs(83)),
            finished: 201_686,
            tasks: 2_063_034,
            running: 2,
            found: 4_968_057_848,
        }
    }

    #[test]
    fn a_wide_terminal_gets_every_field() {
        let line = line_for_width(&n19(), 120);
        assert_eq!(
            line,
            "[=>                  ] 12.3% | ETA 00:01:23 | \
             201686/2063034 tasks, 2 running | 4968057848 solutions"
        );
        assert!(PREFIX + line.chars().count() <= 120);
        let wider = line_for_width(&n19(), 130);
        assert!(wider.contains("12.3% of est. work"), "{wider}");
    }

    #[test]
    fn an_80_column_terminal_keeps_share_eta_and_whole_task_counts() {
        let line = line_for_width(&n19(), 80);
        assert!(PREFIX + line.chars().count() <= 80, "{line}");
        assert!(
            line.contains("12.3%") && line.contains("ETA 00:01:23"),
            "{line}"
        );
        assert!(line.contains("201686/2063034 tasks"), "{line}");
        assert!(!line.contains("of est. work"), "{line}");
    }

    #[test]
    fn a_60_column_terminal_keeps_share_eta_and_tasks_alone() {
        let line = line_for_width(&n19(), 60);
        assert_eq!(line, "12.3% | ETA 00:01:23 | 201686/2063034 tasks");
        assert!(PREFIX + line.chars().count() <= 60);
    }

    #[test]
    fn every_width_gets_whole_fields_that_fit() {
        for fields in [n19(), Fields { eta: None, ..n19() }] {
            let forms = forms(&fields);
            for width in 0..140 {
                let line = line_for_width(&fields, width);
                assert!(
                    line.chars().count() <= width.saturating_sub(PREFIX),
                    "{width}: {line}"
                );
                // Never a form cut short: one of the forms whole, or nothing at all.
                assert!(line.is_empty() || forms.contains(&line), "{width}: {line}");
            }
        }
        let estimating = Fields { eta: None, ..n19() };
        assert_eq!(
            line_for_width(&estimating, 50),
            "12.3% | estimating… | 201686/2063034"
        );
    }

    #[test]
    fn a_20_column_terminal_drops_the_eta_whole_and_keeps_the_share() {
        assert_eq!(line_for_width(&n19(), 20), "12.3%");
        assert_eq!(line_for_width(&n19(), 31), "12.3% | ETA 00:01:23");
        assert_eq!(line_for_width(&n19(), 15), "");
    }

    #[test]
    fn a_dumb_terminal_gets_plain_lines_and_no_terminal_gets_nothing() {
        let dumb = Some(OsStr::new("dumb"));
        assert_eq!(Show::of(false, true, dumb), Show::Lines);
        assert_eq!(Show::of(false, true, Some(OsStr::new("xterm"))), Show::Bar);
        assert_eq!(Show::of(false, true, None), Show::Bar);
        assert_eq!(Show::of(true, true, dumb), Show::Nothing);
        assert_eq!(Show::of(false, false, dumb), Show::Nothing);
        let line = plain_line(&n19(), Duration::from_secs(65));
        assert_eq!(
            line,
            "00:01:05 12.3% | ETA 00:01:23 | 201686/2063034 tasks, 2 running | \
             4968057848 solutions"
        );
        assert!(!line.contains(['\r', '\x1b', '[']), "{line}");
    }

    #[test]
    fn bars_fill_by_share() {
        assert_eq!(bar(0.0, 4), "[    ]");
        assert_eq!(bar(0.5, 4), "[=>  ]");
        assert_eq!(bar(1.0, 4), "[====]");
        assert_eq!(bar(7.0, 4), "[====]");
    }

    #[test]
    fn clocks_show_days_past_a_day() {
        assert_eq!(clock(Duration::from_secs(3723)), "01:02:03");
        assert_eq!(clock(Duration::from_secs(90_000)), "1d 01:00:00");
        assert_eq!(clock(Duration::from_secs(999 * 86_400)), "999d 00:00:00");
    }

    #[test]
    fn an_eta_of_years_says_years_and_is_never_cut_short() {
        // Q(29) on one 16-core node: decades, which the old cap of 10^9 s showed as
        // "11574d 01:46:40" (31.7 years) whatever the true figure.
        assert_eq!(clock(Duration::from_secs(2_000_000_000)), "63.4 years");
        assert_eq!(clock(Duration::from_secs(1000 * 86_400)), "2.7 years");
        assert_eq!(
            clock(Duration::from_secs(100_000 * YEAR_SECONDS)),
            "100.0 k years"
        );
        let mut eta = Eta::with_total(u128::MAX);
        let t0 = Instant::now();
        eta.started(0, 1, t0);
        eta.finished(0, t0 + Duration::from_secs(3600));
        let left = eta.remaining(t0 + Duration::from_secs(3600)).unwrap();
        assert_eq!(left.as_secs_f64(), ETA_CAP_SECONDS);
        assert_eq!(clock(left), "over 31.7 G years");
        let far = Duration::from_secs(200_000_000_000);
        assert!(clock(far).ends_with(" years") && !clock(far).starts_with("over"));
    }

    #[test]
    fn rates_get_metric_suffixes() {
        assert_eq!(human(12.0), "12");
        assert_eq!(human(35_900_000.0), "35.9 M");
        assert_eq!(human(2.5e9), "2.5 G");
    }
}
