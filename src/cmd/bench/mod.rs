//! `nqueens bench`: the hardware benchmark, and `--compare` of two saved reports.

mod compare;
mod outputs;

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use clap::ValueEnum;
use nqueens::bench::{self, BenchConfig, BenchObserver, BenchReport, Outcome, Size, WrongCount};
use nqueens::recheck::{Fault, Recheck};
use nqueens::CountOptions;

use crate::cmd::messages::message;
use crate::exit::{Exit, UsageError};
use crate::options::Global;
use crate::progress::BenchBar;

/// Arguments of `nqueens bench`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Workload, counted once per thread in each row: quick (seconds a row), standard (half a
    /// minute a row), long (burn-in)
    #[arg(long, value_enum, default_value_t = SizeArg::Quick)]
    pub size: SizeArg,

    /// Run the workload K times; every round is verified [default: 1]
    #[arg(long, value_name = "K", value_parser = clap::value_parser!(u32).range(1..))]
    pub repeat: Option<u32>,

    /// Keep running verified rounds until SECS seconds have passed (burn-in)
    #[arg(long, value_name = "SECS", value_parser = parse_duration)]
    pub duration: Option<Duration>,

    /// Also write the report as JSON to FILE
    #[arg(long, value_name = "FILE")]
    pub export_json: Option<PathBuf>,

    /// Also write the report as markdown to FILE
    #[arg(long, value_name = "FILE")]
    pub export_markdown: Option<PathBuf>,

    /// Draw speed-up and efficiency against thread count into an SVG file
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<PathBuf>,

    /// Let the exports and the plot replace files that are not earlier ones of their kind
    /// (an earlier bench report, markdown export or plot is replaced without it)
    #[arg(long)]
    pub force: bool,

    /// Re-solve FRACTION of one copy's tasks of every count, drawn from all the row's copies,
    /// on the portable code path and compare (a mismatch exits with status 3) [default: 0.05
    /// with --duration, else none]
    #[arg(long, value_name = "FRACTION", value_parser = crate::parse::parse_fraction)]
    pub recheck: Option<Recheck>,

    /// Testing only: add 1 to the fast code path's count of task TASK in every count
    #[arg(long, value_name = "TASK", hide = true)]
    pub test_inject_fault: Option<usize>,

    /// Compare two saved JSON reports: B's speed over A's per thread count (it runs nothing,
    /// so it takes no option of a run: only -q and the output format)
    #[arg(
        long,
        num_args = 2,
        value_names = ["A.json", "B.json"],
        conflicts_with_all = COMPARE_CONFLICTS
    )]
    pub compare: Option<Vec<PathBuf>>,

    #[command(flatten)]
    pub gpu: crate::cmd::gpu::GpuArgs,
}

/// The options of a run, which `--compare` (a run of nothing) refuses rather than ignores.
const COMPARE_CONFLICTS: [&str; 13] = [
    "size",
    "repeat",
    "duration",
    "export_json",
    "export_markdown",
    "plot",
    "force",
    "recheck",
    "test_inject_fault",
    "threads",
    "gpu",
    "gpu_device",
    "test_gpu_fail_after",
];

/// Workload sizes on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SizeArg {
    /// A few seconds a row
    Quick,
    /// Half a minute a row
    Standard,
    /// Long, for burn-in
    Long,
    /// A fraction of a second, for the tool's own tests
    #[value(hide = true)]
    Tiny,
}

impl From<SizeArg> for Size {
    fn from(s: SizeArg) -> Self {
        match s {
            SizeArg::Quick => Size::Quick,
            SizeArg::Standard => Size::Standard,
            SizeArg::Long => Size::Long,
            SizeArg::Tiny => Size::Tiny,
        }
    }
}

/// The longest `--duration` accepted: a year of burn-in.
const MAX_DURATION_S: f64 = 365.0 * 24.0 * 3600.0;

/// Parses `--duration`: a positive number of seconds, at most [`MAX_DURATION_S`].
fn parse_duration(s: &str) -> Result<Duration, String> {
    crate::parse::parse_seconds(s, MAX_DURATION_S)
}

/// The recheck a burn-in (`--duration`) runs unless `--recheck` says otherwise.
fn burn_in_recheck() -> Recheck {
    Recheck::new(BURN_IN_RECHECK).expect("the default fraction is valid")
}

/// The fraction of tasks a burn-in rechecks by default.
const BURN_IN_RECHECK: f64 = 0.05;

/// Runs `nqueens bench`.
pub(crate) fn run(args: &Args, global: &Global) -> anyhow::Result<ExitCode> {
    execute(args, global).map(ExitCode::from)
}

/// Runs `nqueens bench` and returns its exit status.
pub(crate) fn execute(args: &Args, global: &Global) -> anyhow::Result<Exit> {
    if let Some(files) = &args.compare {
        return compare::compare(&files[0], &files[1], global.format());
    }
    outputs::check_outputs(args)?;
    let threads = thread_counts(global)?;
    // From here a signal asks the run to stop and report what it verified.
    let stop = crate::cmd::signals::stop_flag()?;
    let base = args.gpu.open(CountOptions::new(), global.quiet)?;
    let gpu_recheck = args.gpu.wanted().then(crate::cmd::gpu::default_recheck);
    let workload = if args.gpu.wanted() {
        gpu_workload(args.size.into(), &base, global.quiet)?
    } else {
        bench::workload(args.size.into())
    };
    let config = BenchConfig {
        workload,
        threads,
        rounds: args.repeat.unwrap_or(1),
        duration: args.duration,
        recheck: args
            .recheck
            .or(gpu_recheck)
            .or_else(|| args.duration.map(|_| burn_in_recheck())),
        fault: args.test_inject_fault.map(|task| Fault { task, delta: 1 }),
        base,
    };
    if !global.quiet {
        message!("{}", plan_line(&config));
    }
    let bar = BenchBar::new(global.quiet);
    let observer = Observer {
        bar: &bar,
        stop: &stop,
        rounds: (config.rounds > 1 || config.duration.is_some()) && !global.quiet,
    };
    let outcome = bench::run(&config, &observer);
    bar.finish();
    match outcome? {
        Outcome::Verified(report) => {
            outputs::publish(&report, args, global)?;
            Ok(Exit::Ok)
        }
        Outcome::Interrupted(report) => interrupted(&report, args, global),
        Outcome::Wrong(w) => {
            let suspects = if args.gpu.wanted() {
                "GPU, its driver, CPU, memory?"
            } else {
                "CPU, memory, overclock?"
            };
            message!(
                "WRONG COUNT in {}. This machine is not computing correctly ({suspects}).",
                wrong_count(&w)
            );
            Ok(Exit::Mismatch)
        }
    }
}

/// The thread counts of the rows: `-j`'s list (each once) or the default, with a note for
/// far more threads than CPUs.
fn thread_counts(global: &Global) -> anyhow::Result<Vec<usize>> {
    let threads = global
        .thread_list()
        .unwrap_or_else(|| bench::default_threads(num_cpus::get().min(nqueens::MAX_THREADS)));
    if let Some(t) = threads
        .iter()
        .enumerate()
        .find_map(|(i, t)| threads[..i].contains(t).then_some(t))
    {
        return Err(UsageError(format!("thread count {t} is listed twice in -j")).into());
    }
    if let Some(most) = threads.iter().max() {
        crate::cmd::workers::note_many(*most, global.quiet);
    }
    Ok(threads)
}

/// What the run will do, said before it starts: the workload, its rows and rounds.
fn plan_line(config: &BenchConfig) -> String {
    let w = &config.workload;
    let sizes: Vec<String> = w.sizes.iter().map(u32::to_string).collect();
    let unit = match config.threads[..] {
        [1] => "thread",
        _ => "threads",
    };
    let rounds = match config.duration {
        Some(d) => format!("rounds for {} s", d.as_secs_f64()),
        None => crate::cmd::plural(config.rounds as usize, "round"),
    };
    format!(
        "the {} workload v{} (N = {}): rows at {} {unit}, {rounds}",
        format!("{:?}", w.name).to_lowercase(),
        w.version,
        sizes.join(", "),
        thread_counts_line(&config.threads),
    )
}

/// The most thread counts [`plan_line`] lists one by one.
const LISTED_COUNTS: usize = 8;

/// The thread counts of the rows, for [`plan_line`]: each one, or for a long list its first
/// few, its last and how many rows (a list of a thousand would fill the screen).
fn thread_counts_line(threads: &[usize]) -> String {
    let list = |t: &[usize]| {
        t.iter()
            .map(usize::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    };
    match threads {
        [first @ .., last] if threads.len() > LISTED_COUNTS => format!(
            "{}, ..., {last} ({} rows)",
            list(&first[..LISTED_COUNTS - 2]),
            threads.len()
        ),
        _ => list(threads),
    }
}

/// The bench's observer: the bar, the signal handler's flag, and a line per verified round
/// in a run of several (`rounds`), so that a burn-in's log shows how far it got.
struct Observer<'a> {
    bar: &'a BenchBar,
    stop: &'a AtomicBool,
    rounds: bool,
}

impl BenchObserver for Observer<'_> {
    fn count_started(&self, index: usize, total: Option<usize>, label: &str) {
        self.bar.count_started(index, total, label);
    }

    fn round_verified(&self, round: u32) {
        if self.rounds {
            self.bar
                .note(&format!("round {round} verified: every count matched"));
        }
    }

    fn should_stop(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }
}

/// Ends a run stopped by a signal: the rows it verified, printed and written as asked (the
/// report says it was interrupted), and status 130.
fn interrupted(report: &BenchReport, args: &Args, global: &Global) -> anyhow::Result<Exit> {
    if !global.quiet {
        match report.results.is_empty() {
            true => message!(new_line; "interrupted before the first row finished"),
            false => message!(
                new_line;
                "interrupted in round {}: the report holds the rows finished, every count \
                 verified",
                report.rounds + 1
            ),
        }
    }
    if report.results.is_empty() {
        return Ok(Exit::Interrupted);
    }
    outputs::publish(report, args, global)?;
    Ok(Exit::Interrupted)
}

/// The first board a GPU workload's probes count: the smallest the `auto` engine gives
/// the mitm engine, whose joins the GPU runs.
const FIRST_PROBE: u32 = 13;

/// The workload of `size` on a GPU, sized by timed probes: a GPU's speed (a software
/// driver's included) is not known before it counts, so the sizes are those whose counts
/// the probes predict within the size's seconds. A probe's wrong count is an error.
fn gpu_workload(
    size: bench::Size,
    base: &CountOptions,
    quiet: bool,
) -> anyhow::Result<bench::Workload> {
    let probe = |n: u32| -> anyhow::Result<f64> {
        let c = nqueens::count(n, base)?;
        if c.verified == Some(false) {
            anyhow::bail!(
                "WRONG COUNT while sizing the GPU workload: N = {n} gave {}, OEIS A000170 \
                 says otherwise",
                c.total
            );
        }
        Ok(c.elapsed.as_secs_f64())
    };
    let w = bench::probed_workload(size, FIRST_PROBE, probe)?;
    if !quiet {
        let sizes: Vec<String> = w.sizes.iter().map(u32::to_string).collect();
        message!("GPU workload sized by probes: N = {}", sizes.join(", "));
    }
    Ok(w)
}

/// Where a wrong count happened and what it gave, against OEIS A000170.
fn wrong_count(w: &WrongCount) -> String {
    let when = match w.round {
        0 => "the warm-up".to_string(),
        r => format!("round {r}"),
    };
    let threads = crate::cmd::plural(w.threads, "thread");
    let (n, got, expected) = (w.n, w.got, w.expected);
    match w.copies {
        1 => format!("{when} with {threads}: N = {n} gave {got}, OEIS A000170 says {expected}"),
        k => format!(
            "{when} with {threads}: N = {n} counted {k} times gave {got} in all, not \
             {expected} ({k} × {}, OEIS A000170)",
            expected / k as u128
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    /// `bench`'s arguments and thread counts, parsed as the command line would.
    #[derive(Parser)]
    struct Bench {
        #[command(flatten)]
        args: Args,
        #[command(flatten)]
        threads: crate::options::ThreadList,
    }

    #[test]
    fn a_fault_without_recheck_is_a_wrong_count_with_exit_3() {
        let argv = [
            "bench",
            "--size",
            "tiny",
            "-j",
            "1",
            "--test-inject-fault",
            "0",
        ];
        let bench = Bench::try_parse_from(argv).unwrap();
        let global = Global {
            threads: bench.threads.list(),
            quiet: true,
            format: crate::options::FormatArg::Text,
        };
        assert_eq!(execute(&bench.args, &global).unwrap(), Exit::Mismatch);
    }

    #[test]
    fn a_wrong_count_of_several_copies_names_the_published_value_once() {
        let mut w = WrongCount {
            n: 8,
            threads: 3,
            copies: 3,
            round: 2,
            got: 277,
            expected: 276,
        };
        assert_eq!(
            wrong_count(&w),
            "round 2 with 3 threads: N = 8 counted 3 times gave 277 in all, not 276 \
             (3 × 92, OEIS A000170)"
        );
        (w.copies, w.round, w.got, w.expected) = (1, 0, 93, 92);
        assert_eq!(
            wrong_count(&w),
            "the warm-up with 3 threads: N = 8 gave 93, OEIS A000170 says 92"
        );
        w.threads = 1;
        assert!(wrong_count(&w).starts_with("the warm-up with 1 thread: "));
    }

    #[test]
    fn a_long_list_of_thread_counts_is_shortened_with_its_length() {
        assert_eq!(thread_counts_line(&[1]), "1");
        assert_eq!(thread_counts_line(&[1, 2, 4]), "1, 2, 4");
        let eight: Vec<usize> = (1..=8).collect();
        assert_eq!(thread_counts_line(&eight), "1, 2, 3, 4, 5, 6, 7, 8");
        let many: Vec<usize> = (1..=1024).collect();
        assert_eq!(
            thread_counts_line(&many),
            "1, 2, 3, 4, 5, 6, ..., 1024 (1024 rows)"
        );
    }

    #[test]
    fn durations_are_at_most_a_year() {
        assert!(parse_duration("0.5").is_ok());
        assert!(parse_duration("31536000").is_ok());
        assert!(parse_duration("31536001").is_err());
        assert!(parse_duration("0").is_err());
    }
}
