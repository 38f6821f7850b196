//! `nqueens bench`: the hardware benchmark, and `--compare` of two saved reports.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use clap::ValueEnum;
use nqueens::bench::{self, BenchConfig, BenchReport, Outcome, Size, WrongCount};
use nqueens::recheck::{Fault, Recheck};
use nqueens::report::{self, Format, SpeedRatio};
use nqueens::CountOptions;

use crate::cmd::messages::{message, warning};
use crate::cmd::replace;
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
        return compare(&files[0], &files[1], global.format());
    }
    check_outputs(args)?;
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
    let bar = BenchBar::new(global.quiet);
    let outcome = bench::run(&config, &bar);
    bar.finish();
    match outcome? {
        Outcome::Verified(report) => {
            publish(&report, args, global)?;
            Ok(Exit::Ok)
        }
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

/// Prints the report and writes the requested exports and plot. The files are written
/// whatever became of the printing: a reader that closed the pipe (`| head -1`) or a full
/// disk behind stdout takes the printed copy, not the files asked for; its error comes after.
fn publish(report: &BenchReport, args: &Args, global: &Global) -> anyhow::Result<()> {
    let printed = print(report, global.format());
    write_files(report, args)?;
    printed
}

/// Prints the report on stdout, flushed, so that a write error shows here.
fn print(report: &BenchReport, format: Format) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    report::render_bench(report, format, &mut out)
        .and_then(|()| out.flush())
        .context("printing the report")
}

/// Writes the requested exports and plot.
fn write_files(report: &BenchReport, args: &Args) -> anyhow::Result<()> {
    if let Some(path) = &args.export_json {
        write_report(path, report, Format::Json)?;
    }
    if let Some(path) = &args.export_markdown {
        write_report(path, report, Format::Markdown)?;
    }
    if let Some(path) = &args.plot {
        crate::plot::scaling(report, path)
            .with_context(|| format!("drawing '{}'", path.display()))?;
    }
    Ok(())
}

/// Writes an export atomically: only a regular file is ever replaced.
fn write_report(path: &Path, report: &BenchReport, format: Format) -> anyhow::Result<()> {
    let mut text = Vec::new();
    report::render_bench(report, format, &mut text)?;
    nqueens::shard::write_atomic(path, &text)
        .with_context(|| format!("writing '{}'", path.display()))
}

/// The bytes the up-front probe writes for each export: more than a report or plot takes
/// (a few kB), so a disk too full for it fails before the benchmark, not after.
const EXPORT_PROBE_BYTES: usize = 1 << 16;

/// Checks every output file before the benchmark runs, so a bad path fails at once; two
/// exports to one file (the second would replace the first), or one that would replace
/// a file that is not an earlier export of its kind (without `--force`), are usage errors.
fn check_outputs(args: &Args) -> anyhow::Result<()> {
    let kinds: [(&Option<PathBuf>, &str, Recogniser); 3] = [
        (&args.export_json, "--export-json", is_json_report),
        (
            &args.export_markdown,
            "--export-markdown",
            is_markdown_report,
        ),
        (&args.plot, "--plot", is_plot),
    ];
    for (path, flag, earlier) in kinds {
        if let Some(path) = path {
            replace::check(path, flag, args.force, earlier)?;
        }
    }
    let outputs: Vec<&PathBuf> = [&args.export_json, &args.export_markdown, &args.plot]
        .into_iter()
        .flatten()
        .collect();
    for path in &outputs {
        nqueens::shard::check_writable(path, EXPORT_PROBE_BYTES)
            .with_context(|| format!("cannot write '{}'", path.display()))?;
    }
    for (i, a) in outputs.iter().enumerate() {
        if let Some(b) = outputs[i + 1..]
            .iter()
            .find(|b| nqueens::shard::is_same_file(a, b))
        {
            return Err(UsageError(format!(
                "two exports name the same file ('{}' and '{}'); give each its own",
                a.display(),
                b.display()
            ))
            .into());
        }
    }
    Ok(())
}

/// Says whether a file is an earlier output of one kind (see [`replace::check`]).
type Recogniser = fn(&Path) -> Result<(), String>;

/// An earlier `--export-json`: JSON with a bench schema (of any version).
fn is_json_report(path: &Path) -> Result<(), String> {
    let schema = replace::read_text(path)
        .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok())
        .and_then(|v| v.get("schema")?.as_str().map(String::from));
    match schema {
        Some(s) if s.starts_with("nqueens.bench/") => Ok(()),
        _ => Err("is not a bench report of nqueens".into()),
    }
}

/// An earlier `--export-markdown`: the summary list every version starts it with.
fn is_markdown_report(path: &Path) -> Result<(), String> {
    match replace::read_text(path) {
        Some(text) if text.starts_with("- workload: ") && text.contains("\n- nqueens ") => Ok(()),
        _ => Err("is not a markdown bench report of nqueens".into()),
    }
}

/// An earlier `--plot`: an SVG drawing with the plot's title.
fn is_plot(path: &Path) -> Result<(), String> {
    match replace::read_text(path) {
        Some(text) if text.starts_with("<svg") && text.contains("nqueens bench (") => Ok(()),
        _ => Err("is not a bench plot of nqueens".into()),
    }
}

/// The largest bench report `--compare` reads (real ones are a few kB).
const MAX_REPORT_BYTES: u64 = 1 << 20;

fn read_report(path: &Path) -> anyhow::Result<BenchReport> {
    let text = crate::cmd::input::read_to_string(path, MAX_REPORT_BYTES, "a bench report")?;
    let not_report =
        |why: String| UsageError(format!("'{}' is not a bench report: {why}", path.display()));
    let value: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| not_report(e.to_string()))?;
    match value.get("schema").and_then(|s| s.as_str()) {
        Some(bench::BENCH_SCHEMA) => {}
        Some(other) => {
            return Err(not_report(format!(
                "its schema is '{other}', not '{}'",
                bench::BENCH_SCHEMA
            ))
            .into())
        }
        None => return Err(not_report("it has no schema field".to_string()).into()),
    }
    let report: BenchReport =
        serde_json::from_value(value).map_err(|e| not_report(e.to_string()))?;
    if let Some(r) = report
        .results
        .iter()
        .find(|r| !(r.solutions_per_s.is_finite() && r.solutions_per_s > 0.0))
    {
        return Err(not_report(format!(
            "its speed at -j {} is {} solutions/s",
            r.threads, r.solutions_per_s
        ))
        .into());
    }
    // A bench measures each thread count once: two rows for one would leave the ratio to
    // whichever is read first.
    let rows = &report.results;
    if let Some(t) = (0..rows.len()).find_map(|i| {
        rows[..i]
            .iter()
            .any(|r| r.threads == rows[i].threads)
            .then_some(rows[i].threads)
    }) {
        return Err(not_report(format!("it has two rows for -j {t}")).into());
    }
    Ok(report)
}

/// `--compare A B`: B's solutions/s over A's, per thread count.
fn compare(a: &Path, b: &Path, format: Format) -> anyhow::Result<Exit> {
    let (ra, rb) = (read_report(a)?, read_report(b)?);
    if ra.workload != rb.workload {
        warning!("the two reports ran different workloads; ratios are rough");
    }
    if ra.gpu != rb.gpu {
        let on = |gpu: &Option<String>| gpu.as_deref().unwrap_or("the CPU").to_string();
        warning!(
            "the two reports joined on different devices ({} and {})",
            on(&ra.gpu),
            on(&rb.gpu)
        );
    }
    let ratios = bench::compare(&ra, &rb);
    if ratios.is_empty() {
        let list = |r: &BenchReport| {
            let t: Vec<String> = r.results.iter().map(|x| x.threads.to_string()).collect();
            t.join(",")
        };
        anyhow::bail!(
            "nothing to compare: the reports have no thread count in common ('{}': {}; '{}': {})",
            a.display(),
            list(&ra),
            b.display(),
            list(&rb)
        );
    }
    let ratios: Vec<SpeedRatio> = ratios
        .into_iter()
        .map(|(threads, ratio)| SpeedRatio::new(threads, ratio))
        .collect();
    report::render_comparison(&ratios, format, &mut std::io::stdout().lock())?;
    Ok(Exit::Ok)
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
    fn durations_are_at_most_a_year() {
        assert!(parse_duration("0.5").is_ok());
        assert!(parse_duration("31536000").is_ok());
        assert!(parse_duration("31536001").is_err());
        assert!(parse_duration("0").is_err());
    }
}
