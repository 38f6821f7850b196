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

use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use nqueens::engine::{Extrapolation, MITM_MAX_N, MITM_MIN_N};
use nqueens::estimate::{
    calibrate, design, estimate_report, extrapolated_report, memory, ReportSettings, Settings,
};
use nqueens::plan::thread_pool;
use nqueens::report::render_estimate;
use nqueens::shard::slurm::detect_max_array_size;
use nqueens::shard::stable_plan;
use nqueens::{engine, CountOptions, Plan};

use crate::cmd::messages::{message, note};
use crate::cmd::{plural, workers};
use crate::exit::{Exit, UsageError};
use crate::options::Global;
use crate::parse::{parse_n, parse_percent, parse_span};

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

    /// Time spent re-timing the sample to measure this machine's speed, in shuffled rounds
    /// after the first: they stop once each thread has timed this much CPU time or this much
    /// wall time has passed, whichever comes first (more: a steadier figure on a noisy
    /// machine; at least two rounds are timed whatever this says). The plan, the first round
    /// and its untimed neighbours come on top (within --time-limit)
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

    #[command(flatten)]
    pub gpu: crate::cmd::gpu::GpuArgs,

    /// The cluster's MaxArraySize for the suggested arrays (default: from 'scontrol show
    /// config', else Slurm's default 1001); more shards are submitted as several arrays
    #[arg(long, value_name = "SIZE", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_array_size: Option<u32>,
}

/// The default `--timing-floor`, percent. Measured on the shared 2-core development VM: the
/// speed of estimates made minutes apart wandered by up to 14% from the speed of counts made
/// before and after them, while each estimate's own blocks agreed to within 1–5%; 14% was the
/// least floor whose intervals held every count there, 15% keeps a point of margin.
const DEFAULT_TIMING_FLOOR: f64 = 15.0;

/// Past the mitm engine's reach, how the count's cost is extrapolated, with a note on it: a
/// task there takes days, far beyond any `--time-limit`, so none is timed. The mirror engine
/// has no extrapolation of its own (it is slower than the symmetry engine): refused.
fn past_reach(args: &Args, quiet: bool) -> anyhow::Result<Option<Extrapolation>> {
    let (Some(x), Some(cost)) = (
        engine::extrapolation(args.n),
        engine::beyond_mitm(args.n, &args.engine),
    ) else {
        return Ok(None);
    };
    if !quiet {
        note!("{cost}");
    }
    if args.engine != engine::AUTO && args.engine != "symmetry" {
        // A usage error, as `-e mitm` past its reach is: the engine asked for has no figure.
        return Err(UsageError(format!(
            "no estimate for N = {} on the {} engine: a task there takes days, and no \
             figure of that engine is extrapolated ('-e symmetry' has one)",
            args.n, args.engine
        ))
        .into());
    }
    Ok(Some(x))
}

/// Whether the estimate joins on the GPU asked for, checked before the GPU is opened:
/// `--gpu` runs the joins of the mitm engine's plan, on the boards it cuts into quarters.
/// Past them (or with another engine) it is a usage error; below them there is no join, and
/// the estimate runs on the CPU, with a note.
fn on_gpu(args: &Args, quiet: bool) -> anyhow::Result<bool> {
    if !args.gpu.wanted() {
        return Ok(false);
    }
    let reach = format!(
        "--gpu runs the joins of the mitm engine, which cuts N = {MITM_MIN_N} to {MITM_MAX_N} \
         into quarters"
    );
    let picked = engine::find(&args.engine, args.n)?.name();
    if args.engine != engine::AUTO && picked != "mitm" {
        return Err(UsageError(format!("{reach}: leave -e out, or -e mitm")).into());
    }
    if args.n > MITM_MAX_N {
        let why = format!(
            "{reach}; N = {} is past them (leave --gpu out for its extrapolated cost)",
            args.n
        );
        return Err(UsageError(why).into());
    }
    if args.n < MITM_MIN_N {
        if !quiet {
            note!(
                "{reach}; N = {} has no join, so it is estimated on the CPU",
                args.n
            );
        }
        return Ok(false);
    }
    Ok(true)
}

/// What the report needs besides the plan and its estimate.
struct Measured {
    threads: usize,
    samples_drawn: usize,
    plan_rss: Option<u64>,
    peak_rss: Option<u64>,
    started: Instant,
}

/// The report's settings: `args` and what was `measured`.
fn report_settings(args: &Args, m: Measured) -> ReportSettings {
    ReportSettings {
        n: args.n,
        seed: args.seed,
        threads: m.threads,
        per_task_seconds: args.per_task.as_secs_f64(),
        max_array_size: args
            .max_array_size
            .map_or_else(detect_max_array_size, |m| m as usize),
        calibrate_seconds: args.calibrate.as_secs_f64(),
        timing_floor: args.timing_floor / 100.0,
        draws: args.draws as usize,
        samples_drawn: m.samples_drawn,
        plan_rss: m.plan_rss,
        peak_rss: m.peak_rss,
        started: m.started,
    }
}

/// Runs `nqueens estimate`.
pub(crate) fn run(args: &Args, global: &Global) -> anyhow::Result<ExitCode> {
    let started = Instant::now();
    let options = CountOptions::new()
        .engine(&args.engine)
        .threads(global.threads());
    let options = if on_gpu(args, global.quiet)? {
        args.gpu.apply(options, global.quiet)?
    } else {
        options
    };
    let plan: Arc<dyn Plan> = Arc::from(stable_plan(args.n, &options)?);
    let past = past_reach(args, global.quiet)?;
    let what = format!("N = {} on the {} engine", args.n, plan.engine());
    let asked = options.workers(plan.len())?;
    let threads = workers::fit(asked, plan.worker_bytes(), &what, global.quiet)?;
    let plan_rss = memory().map(|m| m.0);
    let mut measured = Measured {
        threads,
        samples_drawn: 0,
        plan_rss,
        peak_rss: None,
        started,
    };
    if let Some(x) = past {
        let report = extrapolated_report(plan.as_ref(), &x, &report_settings(args, measured));
        render_estimate(&report, global.format(), &mut std::io::stdout().lock())?;
        return Ok(Exit::Ok.into());
    }
    let d = design(plan.as_ref(), args.samples as usize, args.seed);
    if !global.quiet {
        message!(
            "estimating N = {} ({} engine, {}): timing {} on {} for about {} s…",
            args.n,
            plan.engine(),
            plural(plan.len(), "task"),
            plural(d.tasks().len(), "sampled task"),
            plural(threads, "thread"),
            args.calibrate.as_secs_f64()
        );
    }
    let pool = thread_pool(threads)?;
    let settings = Settings {
        budget: args.calibrate.as_secs_f64(),
        seed: args.seed,
        draws: args.draws as usize,
        // The limit holds for the whole estimate: what is left of it after the plan.
        limit: (args.time_limit.as_secs_f64() - started.elapsed().as_secs_f64()).max(0.0),
    };
    let cal = calibrate(&plan, &d, &pool, settings);
    if let Some(fault) = plan.fault() {
        // Its sampled tasks' joins counted nothing past the fault: no estimate from them.
        return Err(anyhow::Error::new(fault).context(format!(
            "estimating N = {}: a sampled task could not be solved, so there is no estimate",
            args.n
        )));
    }
    if cal.tasks.is_empty() && !d.tasks().is_empty() {
        anyhow::bail!(
            "no sampled task of N = {} finished in the {:.1} s that --time-limit left for them \
             (the tasks still running were left): one takes longer than that here, so give \
             it more time (the default is 90 s)",
            args.n,
            settings.limit
        );
    }
    measured.samples_drawn = d.tasks().len();
    let d = d.keep(&cal.tasks);
    measured.peak_rss = memory().map(|m| m.1);
    let e = d.estimate(plan.as_ref(), &cal, args.timing_floor / 100.0);
    let report = estimate_report(
        plan.as_ref(),
        &d,
        &cal,
        &e,
        &report_settings(args, measured),
    );
    render_estimate(&report, global.format(), &mut std::io::stdout().lock())?;
    Ok(Exit::Ok.into())
}
