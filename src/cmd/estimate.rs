//! `nqueens estimate N`: what a count will cost before it is run.
//!
//! Solves a deterministic random sample of the plan that `count --shard`/`--checkpoint`
//! would run (the same stable plan and hash), times each task on its thread while all
//! threads work, in shuffled rounds for a budget of seconds, and scales by the plan's cost
//! model (see `nqueens::estimate`). Prints the machine (CPU, matcher level, threads), the work
//! (the same on every machine for a seed), the measured speed and how noisy it was, the
//! expected core-hours with a 90% interval of sampling and timing error, wall time on the
//! chosen threads, memory, and a shard count K for a target time per Slurm array task with the
//! matching `sbatch` line, whose `--time` comes from the interval's upper end.

use std::collections::BTreeMap;
use std::io::Write;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use nqueens::bench::HostInfo;
use nqueens::estimate::{
    calibrate, design, memory, Calibration, Design, Estimate, Interval, Settings,
};
use nqueens::plan::{thread_pool, Plan};
use nqueens::report::{json, Format};
use nqueens::shard::stable_plan;
use nqueens::work::Counters;
use nqueens::{engine, CountOptions, Work};
use serde::Serialize;

use crate::cmd::messages::message;
use crate::exit::Exit;
use crate::options::Global;
use crate::parse::parse_n;

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
    #[arg(long, default_value_t = 256, value_parser = clap::value_parser!(u32).range(2..=100_000))]
    pub samples: u32,

    /// Seed of the sample (the same seed picks the same tasks on every machine)
    #[arg(long, default_value_t = 11)]
    pub seed: u64,

    /// Target wall time of one Slurm array task, e.g. 2h, 90m, 3600s, 1d
    #[arg(long, value_name = "TIME", default_value = "2h", value_parser = parse_span)]
    pub per_task: Duration,

    /// Seconds of timed solving per thread that measure this machine's speed, in shuffled
    /// rounds of the sample (more: a steadier figure on a noisy machine; at least two rounds
    /// are timed whatever this says)
    #[arg(long, value_name = "TIME", default_value = "3s", value_parser = parse_span)]
    pub calibrate: Duration,

    /// Least timing spread, in percent, for load changes the calibration cannot see (the
    /// default is what a shared 2-core VM needed; 0 trusts the measured spread alone)
    #[arg(long, value_name = "PCT", default_value_t = DEFAULT_TIMING_FLOOR, value_parser = parse_percent)]
    pub timing_floor: f64,

    /// Pieces drawn from each task that is cut into more than 4 times as many (from N ≈ 26 a
    /// task takes seconds to minutes): the task's time is estimated from them, each scaled
    /// by the chance it had to be drawn; 0 solves every sampled task whole
    #[arg(long, value_name = "M", default_value_t = 2, value_parser = clap::value_parser!(u32).range(0..=64))]
    pub draws: u32,

    /// Time the estimate aims to answer in: the first round stops taking new sampled tasks
    /// after half of it (a third where caches are warmed first), though at least two per
    /// stratum are solved, and the sample is the tasks it solved
    #[arg(long, value_name = "TIME", default_value = "90s", value_parser = parse_span)]
    pub time_limit: Duration,
}

/// The default `--timing-floor`, percent. Measured on the shared 2-core development VM: the
/// speed of estimates made minutes apart wandered by up to 14% from the speed of counts made
/// before and after them, while each estimate's own blocks agreed to within 1–5%; 14% was the
/// least floor whose intervals held every count there, 15% keeps a point of margin.
const DEFAULT_TIMING_FLOOR: f64 = 15.0;

/// Parses a percentage from 0 to 100.
fn parse_percent(s: &str) -> Result<f64, String> {
    match s.trim().trim_end_matches('%').parse::<f64>() {
        Ok(x) if (0.0..=100.0).contains(&x) => Ok(x),
        _ => Err(format!("'{s}' is not a percentage from 0 to 100")),
    }
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
    /// Tasks drawn for the sample (`--samples`, or fewer in a small plan); `samples` of them
    /// were solved before `--time-limit` cut the first round.
    pub samples_drawn: usize,
    /// How the sampled tasks cut into many pieces were solved in part.
    pub pieces: PiecesReport,
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
    /// Its `--time`, seconds: one shard's wall time at the interval's upper end, plus 25%
    /// and 10 minutes.
    pub sbatch_time_s: f64,
    /// CPU model the speed was measured on (what `/proc/cpuinfo` calls it).
    pub cpu: String,
    /// The mitm matcher's vector level on this CPU (`avx2`, `avx512`, ...).
    pub isa: &'static str,
    /// Every code path the engines chose for this CPU.
    pub code_paths: String,
    /// The work, from the plan's cost model: the same on every machine for a seed.
    pub work: WorkReport,
    /// This machine's measured speed for that work, and how noisy it was.
    pub speed: SpeedReport,
    /// The largest task's hours at the upper end of its 90% interval.
    pub largest_task_high_hours: f64,
}

/// Sampled tasks solved from some of their pieces (`pieces` in `--json`).
#[derive(Debug, Serialize)]
pub(crate) struct PiecesReport {
    /// Pieces drawn from each such task (`--draws`).
    pub draws: usize,
    /// Sampled tasks solved in part.
    pub partial_tasks: usize,
    /// The pieces those tasks have in all.
    pub of_pieces: usize,
}

/// The plan's work in cost-model units (`work` in `--json`).
#[derive(Debug, Serialize)]
pub(crate) struct WorkReport {
    /// What the units are.
    pub units: &'static str,
    /// The whole plan's cost.
    pub total: u128,
    /// The sampled tasks' cost.
    pub sampled: u128,
    /// Sampled tasks.
    pub sampled_tasks: usize,
    /// Strata of the sample.
    pub strata: usize,
    /// Seed of the sample.
    pub seed: u64,
    /// Digest of the sampled ids.
    pub sample_digest: String,
    /// The engine's work counters (`null` where it keeps none): summed over the sample, and
    /// scaled to the whole plan with its 90% interval like the time. They are the same on
    /// every machine for a plan, seed and matcher level (the CPU time of each phase is in
    /// `speed.phases`).
    pub counters: Option<CountersReport>,
}

/// Counters of the sample and of the whole plan.
#[derive(Debug, Serialize)]
pub(crate) struct CountersReport {
    /// Summed over the sampled tasks.
    pub sampled: BTreeMap<&'static str, f64>,
    /// Each counter scaled to the whole plan (ratio to the cost model, per stratum).
    pub plan: BTreeMap<&'static str, Interval>,
}

/// The work counters of `cal`'s sample, scaled to the plan by `d` (None without counters):
/// the counts if `seconds` is false, else the CPU seconds of each phase.
fn counters(
    plan: &dyn Plan,
    d: &Design,
    cal: &Calibration,
    seconds: bool,
) -> Option<CountersReport> {
    if cal.work.is_empty() {
        return None;
    }
    let mut counters = Work::default().counters();
    for task in &cal.work {
        counters
            .iter_mut()
            .zip(task)
            .for_each(|(sum, (_, v))| sum.1 += v);
    }
    let wanted = |name: &str| name.ends_with("_seconds") == seconds;
    let by_task: BTreeMap<usize, &Counters> = cal.tasks.iter().copied().zip(&cal.work).collect();
    let plan = counters
        .iter()
        .enumerate()
        .filter(|(_, (name, _))| wanted(name))
        .map(|(i, &(name, _))| {
            let total = d.combine(plan, |t| by_task.get(&t).map_or(0.0, |c| c[i].1));
            (name, total)
        })
        .collect();
    let sampled = counters
        .into_iter()
        .filter(|(name, _)| wanted(name))
        .collect();
    Some(CountersReport { sampled, plan })
}

/// The measured speed (`speed` in `--json`).
#[derive(Debug, Serialize)]
pub(crate) struct SpeedReport {
    /// CPU seconds per unit of work (the estimate over `work.total`).
    pub core_seconds_per_unit: f64,
    /// Relative 90% half-width of the interval's timing part: the measured one or the
    /// floor, whichever is larger.
    pub timing_spread: f64,
    /// Relative 90% half-width of the timing part as measured (from the blocks' spread).
    pub measured_timing_spread: f64,
    /// The least timing part (`--timing-floor`), relative.
    pub timing_floor: f64,
    /// Relative 90% half-width of the interval's sampling part.
    pub sampling_spread: f64,
    /// Median relative standard deviation of one task's time from round to round.
    pub task_spread: f64,
    /// Rounds the sample was timed.
    pub rounds: usize,
    /// Blocks of rounds the timing spread compares.
    pub blocks: usize,
    /// CPU seconds timed in all threads.
    pub timed_seconds: f64,
    /// The budget asked for (`--calibrate`), seconds per thread.
    pub budget_seconds: f64,
    /// CPU seconds of each phase of the engine (`null` where it keeps no counters), from the
    /// warm-up round: summed over the sample and scaled to the plan.
    pub phases: Option<CountersReport>,
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
    let threads = global.threads();
    let options = CountOptions::new().engine(&args.engine).threads(threads);
    let plan = stable_plan(args.n, &options)?;
    let plan_rss = memory().map(|m| m.0);
    let d = design(plan.as_ref(), args.samples as usize, args.seed);
    if !global.quiet {
        message!(
            "estimating N = {} ({} engine, {} tasks): timing {} sampled tasks on {threads} threads for about {} s…",
            args.n,
            plan.engine(),
            plan.len(),
            d.tasks().len(),
            args.calibrate.as_secs_f64()
        );
    }
    let pool = thread_pool(threads)?;
    let settings = Settings {
        budget: args.calibrate.as_secs_f64(),
        seed: args.seed,
        draws: args.draws as usize,
        limit: args.time_limit.as_secs_f64(),
    };
    let cal = calibrate(plan.as_ref(), &d, &pool, settings);
    let drawn = d.tasks().len();
    let d = d.keep(&cal.tasks);
    let peak = memory().map(|m| m.1);
    let e = d.estimate(plan.as_ref(), &cal, args.timing_floor / 100.0);
    let mut report = build(
        args,
        plan.as_ref(),
        threads,
        &e,
        (plan_rss, peak),
        &d,
        started,
    );
    report.samples_drawn = drawn;
    report.pieces = PiecesReport {
        draws: settings.draws,
        partial_tasks: cal.partial.0,
        of_pieces: cal.partial.1,
    };
    report.work.counters = counters(plan.as_ref(), &d, &cal, false);
    report.speed.phases = counters(plan.as_ref(), &d, &cal, true);
    print(&report, global)?;
    Ok(Exit::Ok.into())
}

/// Hours of `i` spread over `threads`, at least `floor`'s matching end.
fn wall(i: Interval, threads: f64, floor: Interval) -> Span {
    let h = |s: f64, f: f64| (s / threads).max(f) / 3600.0;
    Span {
        estimate: h(i.estimate, floor.estimate),
        low: h(i.low, floor.low),
        high: h(i.high, floor.high),
    }
}

/// Puts the report together.
fn build(
    args: &Args,
    plan: &dyn Plan,
    threads: usize,
    e: &Estimate,
    (plan_rss, peak): (Option<u64>, Option<u64>),
    d: &Design,
    started: Instant,
) -> EstimateReport {
    let core = e.total;
    let per_task = args.per_task.as_secs_f64();
    let shards =
        ((core.high / (threads as f64 * per_task)).ceil() as usize).clamp(1, plan.len().max(1));
    // The limit Slurm kills at: one shard's wall time at the interval's upper end, plus 25%
    // for shards that are not quite equal and 10 minutes for start-up and the last checkpoint.
    let shard_high = (core.high / (shards * threads) as f64).max(e.largest_task.high);
    let limit = shard_high * 1.25 + 600.0;
    let sbatch = format!(
        "sbatch --array=0-{} --cpus-per-task={threads} --time={} --wrap='nqueens count {} --engine {} -j {threads} -q --shard auto --checkpoint ckpt/shard-$SLURM_ARRAY_TASK_ID.ckpt --out out/shard-$SLURM_ARRAY_TASK_ID.json'",
        shards - 1,
        clock(limit),
        args.n,
        plan.engine()
    );
    let work = d.work(plan);
    let host = HostInfo::detect();
    EstimateReport {
        schema: "nqueens.estimate/1",
        n: plan.n(),
        engine: plan.engine(),
        plan: plan.describe(),
        plan_hash: plan.fingerprint(),
        tasks: plan.len(),
        samples: work.sampled_tasks,
        samples_drawn: work.sampled_tasks,
        pieces: PiecesReport {
            draws: 0,
            partial_tasks: 0,
            of_pieces: 0,
        },
        sampled_cost_fraction: d.sampled_cost_fraction(plan),
        estimate_seconds: started.elapsed().as_secs_f64(),
        core_hours: Span::hours(core, 1.0, 0.0),
        wall_hours: wall(core, threads as f64, e.largest_task),
        threads,
        plan_rss_bytes: plan_rss,
        peak_rss_per_thread_bytes: plan_rss
            .zip(peak)
            .map(|(base, peak)| peak.saturating_sub(base) / threads as u64),
        largest_task_hours: e.largest_task.estimate / 3600.0,
        per_task_hours: per_task / 3600.0,
        shards,
        sbatch,
        sbatch_time_s: limit.ceil(),
        cpu: host.cpu,
        isa: engine::matcher_level(),
        code_paths: host.code_path,
        speed: SpeedReport {
            core_seconds_per_unit: core.estimate / work.total.max(1) as f64,
            timing_spread: e.timing_spread,
            measured_timing_spread: e.measured_timing_spread,
            timing_floor: args.timing_floor / 100.0,
            sampling_spread: e.sampling_spread,
            task_spread: e.task_spread,
            rounds: e.rounds,
            blocks: e.blocks.len(),
            timed_seconds: e.timed_seconds,
            budget_seconds: args.calibrate.as_secs_f64(),
            phases: None,
        },
        work: WorkReport {
            units: "plan cost model",
            total: work.total,
            sampled: work.sampled,
            sampled_tasks: work.sampled_tasks,
            strata: work.strata,
            seed: args.seed,
            sample_digest: work.sample_digest,
            counters: None,
        },
        largest_task_high_hours: e.largest_task.high / 3600.0,
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
    print_machine(r, &mut out)?;
    let c = &r.core_hours;
    writeln!(
        out,
        "CPU time: {} core-hours = {} (90% interval {} to {}: sampling ±{:.1}%, timing ±{:.1}%)",
        sig(c.estimate),
        human(c.estimate),
        human(c.low),
        human(c.high),
        100.0 * r.speed.sampling_spread,
        100.0 * r.speed.timing_spread
    )?;
    let w = &r.wall_hours;
    writeln!(
        out,
        "wall time on {} threads: {} (90% interval {} to {}); largest task {} (up to {})",
        r.threads,
        human(w.estimate),
        human(w.low),
        human(w.high),
        human(r.largest_task_hours),
        human(r.largest_task_high_hours)
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
        "(--time {}: one shard's wall time at the interval's upper end, + 25% + 10 min)",
        human(r.sbatch_time_s / 3600.0)
    )?;
    let solved = if r.samples < r.samples_drawn {
        format!(
            "{} of {} sampled tasks (the rest did not fit --time-limit)",
            r.samples, r.samples_drawn
        )
    } else {
        format!("{} sampled tasks", r.samples)
    };
    let p = &r.pieces;
    let partial = if p.partial_tasks > 0 {
        format!(
            ", {} of them from {} drawn of their {} pieces",
            p.partial_tasks,
            p.draws * p.partial_tasks,
            p.of_pieces
        )
    } else {
        String::new()
    };
    writeln!(
        out,
        "(from {solved}{partial}, {:.2}% of the estimated work, in {:.1} s)",
        100.0 * r.sampled_cost_fraction,
        r.estimate_seconds
    )?;
    Ok(())
}

/// The machine, the work and the speed: what makes an estimate from one machine not one for
/// another, and how steady the clock was.
fn print_machine(r: &EstimateReport, out: &mut dyn Write) -> std::io::Result<()> {
    let (w, s) = (&r.work, &r.speed);
    writeln!(
        out,
        "machine: {}, matcher {}, {} threads ({})",
        r.cpu, r.isa, r.threads, r.code_paths
    )?;
    writeln!(
        out,
        "work: {:.4e} cost units (plan cost model), sample {} tasks in {} strata, seed {} (the same on every machine)",
        w.total as f64, w.sampled_tasks, w.strata, w.seed
    )?;
    writeln!(
        out,
        "speed: {:.4e} core-s per unit; timing spread ±{:.1}% measured (90%, {} rounds in {} blocks, {:.1} s timed; one task varies ±{:.1}%), ±{:.0}% at least",
        s.core_seconds_per_unit,
        100.0 * s.measured_timing_spread,
        s.rounds,
        s.blocks,
        s.timed_seconds,
        100.0 * s.task_spread,
        100.0 * s.timing_floor
    )
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

    #[test]
    fn percentages_stay_in_range() {
        assert_eq!(parse_percent("15"), Ok(15.0));
        assert_eq!(parse_percent("2.5%"), Ok(2.5));
        assert_eq!(parse_percent("0"), Ok(0.0));
        for bad in ["", "-1", "101", "x", "nan"] {
            assert!(parse_percent(bad).is_err(), "{bad}");
        }
    }
}
