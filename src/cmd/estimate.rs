//! `nqueens estimate N`: what a count will cost before it is run (issue 11).
//!
//! Solves a deterministic random sample of the plan that `count --shard`/`--checkpoint`
//! would run (the same stable plan and hash), times each task on its thread while all
//! threads work, and scales by the plan's cost model (see `nqueens::estimate`). Prints the
//! expected core-hours with a 90% interval, wall time on the chosen threads, memory, and a
//! shard count K for a target time per Slurm array task with the matching `sbatch` line.

use std::io::Write;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use nqueens::estimate::{design, memory, time_tasks, Interval};
use nqueens::plan::{thread_pool, Plan};
use nqueens::report::{json, Format};
use nqueens::shard::stable_plan;
use nqueens::{engine, CountOptions};
use serde::Serialize;

use crate::cli::{parse_n, Global};
use crate::cmd::messages::message;
use crate::exit::Exit;

/// Arguments of `nqueens estimate`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Board size, 1 to 32
    #[arg(value_parser = parse_n, allow_negative_numbers = true)]
    pub n: u32,

    /// Counting engine to estimate (auto picks the fastest for N, as `count` does)
    #[arg(short, long, default_value = engine::AUTO)]
    pub engine: String,

    /// Tasks to solve for the estimate (more: a narrower interval, a longer estimate)
    #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u32).range(2..=100_000))]
    pub samples: u32,

    /// Seed of the sample (the same seed picks the same tasks on every machine)
    #[arg(long, default_value_t = 11)]
    pub seed: u64,

    /// Target wall time of one Slurm array task, e.g. 2h, 90m, 3600s, 1d
    #[arg(long, value_name = "TIME", default_value = "2h", value_parser = parse_span)]
    pub per_task: Duration,
}

/// Parses a time span: a positive number with an optional unit s, m, h or d (default s).
pub(crate) fn parse_span(s: &str) -> Result<Duration, String> {
    let t = s.trim();
    let (number, unit) = match t.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => (&t[..i], c),
        _ => (t, 's'),
    };
    let scale = match unit {
        's' => 1.0,
        'm' => 60.0,
        'h' => 3600.0,
        'd' => 86_400.0,
        _ => return Err(format!("'{s}': the unit must be s, m, h or d")),
    };
    match number.parse::<f64>() {
        Ok(x) if x.is_finite() && x > 0.0 && x * scale <= 1e9 => {
            Ok(Duration::from_secs_f64(x * scale))
        }
        _ => Err(format!(
            "'{s}' is not a positive time (e.g. 2h, 90m, 3600s)"
        )),
    }
}

/// The `--json` output of `nqueens estimate` (schema `nqueens.estimate/1`).
#[derive(Debug, Serialize)]
pub(crate) struct EstimateReport {
    /// `nqueens.estimate/1`.
    pub schema: &'static str,
    /// Board size.
    pub n: u32,
    /// Engine.
    pub engine: &'static str,
    /// Plan parameters.
    pub plan: String,
    /// Plan hash (the one `count --shard` and checkpoints record).
    pub plan_hash: String,
    /// Tasks in the plan.
    pub tasks: usize,
    /// Distinct tasks solved for the estimate.
    pub samples: usize,
    /// Share of the plan's estimated cost the sample solved.
    pub sampled_cost_fraction: f64,
    /// Wall seconds the estimate itself took (plan, sample).
    pub estimate_seconds: f64,
    /// Core-hours for the whole count: `{estimate, low, high}` (90% interval).
    pub core_hours: Span,
    /// Wall hours on `threads` threads (core-hours / threads, at least the largest task).
    pub wall_hours: Span,
    /// Threads the sample ran on (and the wall time assumes).
    pub threads: usize,
    /// Resident memory after building the plan, bytes (None where not measurable).
    pub plan_rss_bytes: Option<u64>,
    /// Peak resident memory growth while solving, per thread, bytes (an upper bound: caches
    /// the threads share are counted in full).
    pub peak_rss_per_thread_bytes: Option<u64>,
    /// Estimated hours of the plan's largest task on one thread.
    pub largest_task_hours: f64,
    /// Target wall hours per array task.
    pub per_task_hours: f64,
    /// Suggested number of shards K (from the interval's upper end).
    pub shards: usize,
    /// The matching Slurm submission.
    pub sbatch: String,
}

/// An estimate with its 90% interval, in hours.
#[derive(Debug, Serialize)]
pub(crate) struct Span {
    /// Point estimate.
    pub estimate: f64,
    /// Lower end.
    pub low: f64,
    /// Upper end.
    pub high: f64,
}

impl Span {
    fn hours(i: Interval, divide: f64, floor: f64) -> Self {
        let h = |s: f64| (s / divide).max(floor) / 3600.0;
        Span {
            estimate: h(i.estimate),
            low: h(i.low),
            high: h(i.high),
        }
    }
}

/// Runs `nqueens estimate`.
pub(crate) fn run(args: &Args, global: &Global) -> anyhow::Result<ExitCode> {
    let started = Instant::now();
    let threads = global.single_threads()?;
    let options = CountOptions::new().engine(&args.engine).threads(threads);
    let plan = stable_plan(args.n, &options)?;
    let plan_rss = memory().map(|m| m.0);
    let d = design(plan.as_ref(), args.samples as usize, args.seed);
    let tasks = d.tasks();
    if !global.quiet {
        message!(
            "estimating N = {} ({} engine, {} tasks): solving {} sampled tasks on {threads} threads…",
            args.n,
            plan.engine(),
            plan.len(),
            tasks.len()
        );
    }
    let pool = thread_pool(threads)?;
    let times = time_tasks(plan.as_ref(), &tasks, &pool);
    let peak = memory().map(|m| m.1);
    let seconds = |t: usize| times.iter().find(|x| x.0 == t).map_or(0.0, |x| x.1);
    let core = d.combine(plan.as_ref(), seconds);
    let largest = largest_task_seconds(plan.as_ref(), &d, &seconds);
    let report = build(
        args,
        plan.as_ref(),
        threads,
        (core, largest),
        (plan_rss, peak),
        &d,
        started,
    );
    print(&report, global)?;
    Ok(Exit::Ok.into())
}

/// The largest task's estimated seconds: its cost at the first stratum's measured rate.
fn largest_task_seconds(
    plan: &dyn Plan,
    d: &nqueens::estimate::Design,
    seconds: &impl Fn(usize) -> f64,
) -> f64 {
    let Some(first) = d.strata.first() else {
        return 0.0;
    };
    let (t, c) = first.tasks.iter().fold((0.0, 0.0), |(t, c), &id| {
        (t + seconds(id), c + plan.cost(id) as f64)
    });
    if plan.is_empty() || c == 0.0 {
        return 0.0;
    }
    t / c * plan.cost(0) as f64
}

/// Puts the report together.
fn build(
    args: &Args,
    plan: &dyn Plan,
    threads: usize,
    (core, largest): (Interval, f64),
    (plan_rss, peak): (Option<u64>, Option<u64>),
    d: &nqueens::estimate::Design,
    started: Instant,
) -> EstimateReport {
    let per_task = args.per_task.as_secs_f64();
    let shards =
        ((core.high / (threads as f64 * per_task)).ceil() as usize).clamp(1, plan.len().max(1));
    let limit = clock(per_task * 1.25 + 600.0);
    let sbatch = format!(
        "sbatch --array=0-{} --cpus-per-task={threads} --time={limit} --wrap='nqueens count {} --engine {} -j {threads} -q --shard auto --checkpoint ckpt/shard-$SLURM_ARRAY_TASK_ID.ckpt --out out/shard-$SLURM_ARRAY_TASK_ID.json'",
        shards - 1,
        args.n,
        plan.engine()
    );
    EstimateReport {
        schema: "nqueens.estimate/1",
        n: plan.n(),
        engine: plan.engine(),
        plan: plan.describe(),
        plan_hash: plan.fingerprint(),
        tasks: plan.len(),
        samples: d.tasks().len(),
        sampled_cost_fraction: d.sampled_cost_fraction(plan),
        estimate_seconds: started.elapsed().as_secs_f64(),
        core_hours: Span::hours(core, 1.0, 0.0),
        wall_hours: Span::hours(core, threads as f64, largest),
        threads,
        plan_rss_bytes: plan_rss,
        peak_rss_per_thread_bytes: plan_rss
            .zip(peak)
            .map(|(base, peak)| peak.saturating_sub(base) / threads as u64),
        largest_task_hours: largest / 3600.0,
        per_task_hours: per_task / 3600.0,
        shards,
        sbatch,
    }
}

/// Seconds as Slurm's `D-HH:MM:SS`.
fn clock(seconds: f64) -> String {
    let s = seconds.ceil() as u64;
    format!(
        "{}-{:02}:{:02}:{:02}",
        s / 86_400,
        s / 3600 % 24,
        s / 60 % 60,
        s % 60
    )
}

/// Prints the report as JSON or as lines for people.
fn print(r: &EstimateReport, global: &Global) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    if global.format() == Format::Json {
        json::write(r, &mut out)?;
        return Ok(());
    }
    let mb = |b: Option<u64>| b.map_or("n/a".to_string(), |b| format!("{:.0} MB", b as f64 / 1e6));
    writeln!(
        out,
        "N = {}: {} engine ({}), {} tasks",
        r.n, r.engine, r.plan, r.tasks
    )?;
    let c = &r.core_hours;
    writeln!(
        out,
        "CPU time: {} core-hours = {} (90% interval {} to {})",
        sig(c.estimate),
        human(c.estimate),
        human(c.low),
        human(c.high)
    )?;
    let w = &r.wall_hours;
    writeln!(
        out,
        "wall time on {} threads: {} (90% interval {} to {}); largest task {}",
        r.threads,
        human(w.estimate),
        human(w.low),
        human(w.high),
        human(r.largest_task_hours)
    )?;
    writeln!(
        out,
        "memory: {} after the plan, peak {} more per thread",
        mb(r.plan_rss_bytes),
        mb(r.peak_rss_per_thread_bytes)
    )?;
    writeln!(
        out,
        "shards for {:.2} h per array task on {} threads: K = {}",
        r.per_task_hours, r.threads, r.shards
    )?;
    writeln!(out, "{}", r.sbatch)?;
    writeln!(
        out,
        "(from {} sampled tasks, {:.2}% of the estimated work, in {:.1} s)",
        r.samples,
        100.0 * r.sampled_cost_fraction,
        r.estimate_seconds
    )?;
    Ok(())
}

/// A number with 3 significant digits.
fn sig(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return format!("{x}");
    }
    let digits = (2 - x.abs().log10().floor() as i32).max(0) as usize;
    format!("{x:.digits$}")
}

/// Hours for people: seconds, minutes, hours, days or years.
fn human(hours: f64) -> String {
    let s = hours * 3600.0;
    match s {
        s if s < 60.0 => format!("{} s", sig(s)),
        s if s < 3600.0 => format!("{} min", sig(s / 60.0)),
        s if s < 172_800.0 => format!("{} h", sig(s / 3600.0)),
        s if s < 63_072_000.0 => format!("{} days", sig(s / 86_400.0)),
        s => format!("{} years", sig(s / 31_557_600.0)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_read_well() {
        assert_eq!(human(0.5 / 3600.0), "0.500 s");
        assert_eq!(human(2.0), "2.00 h");
        assert_eq!(human(24.0 * 400.0), "400 days");
        assert_eq!(human(24.0 * 365.25 * 12.5), "12.5 years");
        assert_eq!(sig(1234.4), "1234"); // never fewer digits than the integer part
    }

    #[test]
    fn spans_take_units_and_refuse_nonsense() {
        assert_eq!(parse_span("2h"), Ok(Duration::from_secs(7200)));
        assert_eq!(parse_span("90m"), Ok(Duration::from_secs(5400)));
        assert_eq!(parse_span("1.5d"), Ok(Duration::from_secs(129_600)));
        assert_eq!(parse_span("30"), Ok(Duration::from_secs(30)));
        for bad in ["", "h", "0h", "-1h", "2w", "1e300s", "nan"] {
            assert!(parse_span(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn slurm_clocks_have_days() {
        assert_eq!(clock(3723.0), "0-01:02:03");
        assert_eq!(clock(90_000.0), "1-01:00:00");
    }
}
