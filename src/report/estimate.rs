//! What `nqueens estimate` prints: the cost of a count before it is run, as JSON or as lines
//! for people.

use std::collections::BTreeMap;
use std::io::{self, Write};

use serde::Serialize;

use super::{json, plural, Format};
use crate::estimate::Interval;

/// The schema tag of an estimate report.
pub const ESTIMATE_SCHEMA: &str = "nqueens.estimate/1";

/// The `--json` output of `nqueens estimate` (schema [`ESTIMATE_SCHEMA`]).
///
/// Fields are serialized in the order they are declared here.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EstimateReport {
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
    /// Whether the figures were measured on a sample of the plan; `false`: extrapolated
    /// from another board, as `extrapolation` says (no task was solved).
    pub measured: bool,
    /// How figures that were not measured were extrapolated (`null` where measured).
    pub extrapolation: Option<ExtrapolationReport>,
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
    /// The matching Slurm submission: one `sbatch` line, or a shell loop of arrays when K
    /// exceeds the cluster's `MaxArraySize`; `null` where no array task can meet
    /// `per_task_hours` (the largest task alone, which no shard splits, may take longer) or
    /// the line would ask for more than a year.
    pub sbatch: Option<String>,
    /// Its `--time`, seconds: one shard's wall time at the interval's upper end, plus 25%
    /// and 10 minutes (`null` without a line).
    pub sbatch_time_s: Option<f64>,
    /// CPU model the speed was measured on (what `/proc/cpuinfo` calls it).
    pub cpu: String,
    /// The mitm matcher's vector level on this CPU (`avx2`, `avx512`, ...).
    pub isa: &'static str,
    /// Every code path the engines chose for this CPU.
    pub code_paths: String,
    /// The work, from the plan's cost model: the same on every machine for a seed.
    pub work: WorkReport,
    /// This machine's measured speed for that work, and how noisy it was (`null` where
    /// nothing was measured).
    pub speed: Option<SpeedReport>,
    /// The largest task's hours at the upper end of its 90% interval.
    pub largest_task_high_hours: f64,
    /// The GPU the joins ran on (`null`: the CPU). Then tasks were timed in wall time with
    /// `threads` threads feeding it: `core_hours` are those threads' hours, and `wall_hours`
    /// are the GPU's (one GPU, `threads` threads).
    pub gpu: Option<String>,
}

/// How a cost that could not be measured was extrapolated (`extrapolation` in `--json`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExtrapolationReport {
    /// The engine whose measured cost is extrapolated.
    pub engine: &'static str,
    /// The board it was measured on.
    pub from_n: u32,
    /// Its core-hours there, with their 90% interval.
    pub core_hours_at_from: Span,
    /// The factor per step of N that the estimate and the low end grow by.
    pub growth_per_n: f64,
    /// The factor per step of N that the high end grows by.
    pub growth_per_n_high: f64,
    /// Steps of N from `from_n`.
    pub steps: u32,
}

/// Sampled tasks solved from some of their pieces (`pieces` in `--json`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PiecesReport {
    /// Pieces drawn from each such task (`--draws`).
    pub draws: usize,
    /// Sampled tasks solved in part.
    pub partial_tasks: usize,
    /// The pieces those tasks have in all.
    pub of_pieces: usize,
}

/// The plan's work in cost-model units (`work` in `--json`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WorkReport {
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
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CountersReport {
    /// Summed over the sampled tasks.
    pub sampled: BTreeMap<&'static str, f64>,
    /// Each counter scaled to the whole plan (ratio to the cost model, per stratum).
    pub plan: BTreeMap<&'static str, Interval>,
    /// The matcher's hit rate over the sample: disjoint (stored key, query) pairs found per
    /// visited (query, 512-key block) pair (`null` where no block was visited).
    pub hits_per_visit: Option<f64>,
    /// The GPU seconds the GPU cost model (`nqueens::gpu::model_seconds`) gives the whole
    /// plan from the scaled counters (absent without `--gpu`, and beside the phases' seconds).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpu_model_seconds: Option<f64>,
    /// Each GPU pass's seconds by the GPU's timestamps, scaled to the whole plan, by pass
    /// ([`crate::work::GPU_PASS_COUNTERS`]): in `speed.phases` with `--gpu` (absent
    /// elsewhere; zeros where the adapter keeps no timestamps).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpu_pass_seconds: Option<BTreeMap<&'static str, Interval>>,
    /// The span model's figures for the whole plan (absent without `--gpu`, and beside the
    /// phases' seconds): [`GpuSpanReport`].
    #[serde(skip_serializing_if = "Option::is_none", flatten)]
    pub gpu_span: Option<GpuSpanReport>,
}

/// What the GPU span model (`nqueens::gpu::span_model`) says of a whole plan counted by
/// the estimate's threads as workers, on one GPU of the H100 / H200 class: the headline GPU
/// figure (`gpu_model_seconds`, the throughput sum, is its lower bound). Modelled from the
/// sample's work counters, not timed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GpuSpanReport {
    /// The GPU's critical path, seconds, by the latency of a dependent step.
    pub gpu_span_seconds: crate::work::SpanSeconds,
    /// The share of the span (at 5 µs) in which the GPU does not work at its full width.
    pub gpu_idle_share: f64,
    /// Bytes of the GPU's batch slots the count would have: an H100's default, or
    /// `NQUEENS_GPU_SLOT_MIB`'s.
    pub gpu_model_slot_bytes: u64,
    /// Batches the count would form.
    pub gpu_model_batches: f64,
    /// Their dependent steps.
    pub gpu_model_steps: f64,
    /// The work at the whole GPU's width: the span's floor, seconds.
    pub gpu_full_width_seconds: f64,
    /// Each pass's part of the span, by pass, by step latency.
    pub gpu_span_pass_seconds: BTreeMap<&'static str, crate::work::SpanSeconds>,
}

#[cfg(feature = "gpu")]
impl From<crate::gpu::SpanEstimate> for GpuSpanReport {
    fn from(e: crate::gpu::SpanEstimate) -> Self {
        let pass = |p: usize| crate::work::SpanSeconds {
            step_5us: e.passes[0][p],
            step_30us: e.passes[1][p],
        };
        GpuSpanReport {
            gpu_span_seconds: crate::work::SpanSeconds {
                step_5us: e.seconds[0],
                step_30us: e.seconds[1],
            },
            gpu_idle_share: e.idle_share,
            gpu_model_slot_bytes: e.slot_bytes,
            gpu_model_batches: e.batches,
            gpu_model_steps: e.steps,
            gpu_full_width_seconds: e.full_width_seconds,
            gpu_span_pass_seconds: crate::work::GPU_PASS_COUNTERS
                .iter()
                .enumerate()
                .map(|(p, &(name, _))| (name, pass(p)))
                .collect(),
        }
    }
}

/// The measured speed (`speed` in `--json`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SpeedReport {
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
    /// CPU seconds timed in all threads (for tasks solved in part, the seconds their pieces
    /// stand for: more than the estimate spent).
    pub timed_seconds: f64,
    /// The budget asked for (`--calibrate`), seconds per thread.
    pub budget_seconds: f64,
    /// CPU seconds of each phase of the engine (`null` where it keeps no counters), from the
    /// warm-up round: summed over the sample and scaled to the plan.
    pub phases: Option<CountersReport>,
}

/// An estimate with its 90% interval, in hours.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Span {
    /// Point estimate.
    pub estimate: f64,
    /// Lower end.
    pub low: f64,
    /// Upper end.
    pub high: f64,
}

/// Writes `r` as JSON, else as lines for people (markdown gets the lines too: an estimate is
/// no table).
pub fn render_estimate(r: &EstimateReport, format: Format, out: &mut dyn Write) -> io::Result<()> {
    match format {
        Format::Json => json::write(r, out),
        Format::Text | Format::Markdown => text(r, out),
    }
}

/// The lines for people: the plan, the machine, the cost, the shards and the sample.
fn text(r: &EstimateReport, out: &mut dyn Write) -> io::Result<()> {
    writeln!(
        out,
        "N = {}: {} engine ({}), {}",
        r.n,
        r.engine,
        r.plan,
        plural(r.tasks, "task")
    )?;
    let (Some(speed), None) = (&r.speed, &r.extrapolation) else {
        return extrapolated(r, out);
    };
    machine(r, speed, out)?;
    cost(r, speed, out)?;
    shards(r, out)?;
    sample(r, out)
}

/// The lines for a board no sample can time: every figure marked as extrapolated, and how.
fn extrapolated(r: &EstimateReport, out: &mut dyn Write) -> io::Result<()> {
    writeln!(
        out,
        "NOT MEASURED: no task of N = {} can be timed (each takes days); every figure below is extrapolated",
        r.n
    )?;
    if let Some(x) = &r.extrapolation {
        let a = &x.core_hours_at_from;
        writeln!(
            out,
            "extrapolated from the {} engine's N = {} ({} core-hours, 90% interval {} to {}, measured on another machine) at {}× per step of N, {}× for the upper end (Q(N)'s steepest known step), {} steps",
            x.engine,
            x.from_n,
            sig(a.estimate),
            sig(a.low),
            sig(a.high),
            x.growth_per_n,
            x.growth_per_n_high,
            x.steps
        )?;
    }
    writeln!(
        out,
        "machine: {}, matcher {}, {} (its speed was not measured)",
        r.cpu,
        r.isa,
        plural(r.threads, "thread")
    )?;
    let (c, w) = (&r.core_hours, &r.wall_hours);
    writeln!(
        out,
        "CPU time: {} core-hours = {} (extrapolated range {} to {})",
        sig(c.estimate),
        human(c.estimate),
        human(c.low),
        human(c.high)
    )?;
    writeln!(
        out,
        "wall time on {}: {} (extrapolated range {} to {}); largest task {} by the plan's cost model (up to {})",
        plural(r.threads, "thread"),
        human(w.estimate),
        human(w.low),
        human(w.high),
        human(r.largest_task_hours),
        human(r.largest_task_high_hours)
    )?;
    memory(r, out)?;
    shards(r, out)?;
    writeln!(
        out,
        "(extrapolated in {:.1} s: no task was solved)",
        r.estimate_seconds
    )
}

/// The machine, the work and the speed: what makes an estimate from one machine not one for
/// another, and how steady the clock was.
fn machine(r: &EstimateReport, s: &SpeedReport, out: &mut dyn Write) -> io::Result<()> {
    let w = &r.work;
    writeln!(
        out,
        "machine: {}, matcher {}, {} ({})",
        r.cpu,
        r.isa,
        plural(r.threads, "thread"),
        r.code_paths
    )?;
    writeln!(
        out,
        "work: {:.4e} cost units (plan cost model), sample {} tasks in {} strata, seed {} (the same on every machine)",
        w.total as f64, w.sampled_tasks, w.strata, w.seed
    )?;
    if s.rounds == 0 {
        return writeln!(
            out,
            "speed: not measured, nothing to time (the plan has no task: a count answers at once)"
        );
    }
    if s.blocks < 2 {
        // One round: its blocks have no spread to show, and a "±0.0% measured" would claim
        // a steadiness nobody saw.
        return writeln!(
            out,
            "speed: {:.4e} core-s per unit; timing spread not measured (one round, {:.1} s timed: the first round took the time there was), ±{:.0}% assumed",
            s.core_seconds_per_unit,
            s.timed_seconds,
            100.0 * s.timing_floor
        );
    }
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

/// Whether the estimate rests on a single timed task of a plan of more: one task shows no
/// scatter, so its "interval" (from 0 to over twice the estimate) says nothing.
fn one_task(r: &EstimateReport) -> bool {
    r.samples == 1 && r.tasks > 1
}

/// What a single timed task says instead of an interval.
const NO_INTERVAL: &str =
    "no interval: one timed task shows no spread; more --samples or a longer --time-limit give one";

/// CPU time, wall time and memory.
fn cost(r: &EstimateReport, s: &SpeedReport, out: &mut dyn Write) -> io::Result<()> {
    if let Some(gpu) = &r.gpu {
        return gpu_cost(r, s, gpu, out);
    }
    let (c, w) = (&r.core_hours, &r.wall_hours);
    if one_task(r) {
        writeln!(
            out,
            "CPU time: {} core-hours = {} ({NO_INTERVAL})",
            sig(c.estimate),
            human(c.estimate)
        )?;
        writeln!(
            out,
            "wall time on {}: {}; largest task {}",
            plural(r.threads, "thread"),
            human(w.estimate),
            human(r.largest_task_hours)
        )?;
        return gpu_model(r, out).and_then(|()| memory(r, out));
    }
    writeln!(
        out,
        "CPU time: {} core-hours = {} (90% interval {} to {}: sampling ±{:.1}%, timing ±{:.1}%)",
        sig(c.estimate),
        human(c.estimate),
        human(c.low),
        human(c.high),
        100.0 * s.sampling_spread,
        100.0 * s.timing_spread
    )?;
    writeln!(
        out,
        "wall time on {}: {} (90% interval {} to {}); largest task {} (up to {})",
        plural(r.threads, "thread"),
        human(w.estimate),
        human(w.low),
        human(w.high),
        human(r.largest_task_hours),
        human(r.largest_task_high_hours)
    )?;
    gpu_model(r, out)?;
    memory(r, out)
}

/// The GPU model's time for the plan, where it was computed.
fn gpu_model(r: &EstimateReport, out: &mut dyn Write) -> io::Result<()> {
    let model = r.work.counters.as_ref().and_then(|c| c.gpu_model_seconds);
    if let Some(seconds) = model {
        writeln!(
            out,
            "GPU model: {} of GPU time for the whole plan from its work counters, on a GPU of the H100 class (docs/gpu.md)",
            human(seconds / 3600.0)
        )?;
    }
    Ok(())
}

/// The plan's memory and each thread's peak above it.
fn memory(r: &EstimateReport, out: &mut dyn Write) -> io::Result<()> {
    writeln!(
        out,
        "memory: {} after the plan, peak {} more per thread",
        megabytes(r.plan_rss_bytes),
        megabytes(r.peak_rss_per_thread_bytes)
    )
}

/// GPU time and memory: the wall time of one GPU with the sample's threads feeding it.
fn gpu_cost(r: &EstimateReport, s: &SpeedReport, gpu: &str, out: &mut dyn Write) -> io::Result<()> {
    let w = &r.wall_hours;
    let spread = match one_task(r) {
        true => NO_INTERVAL.to_string(),
        false => format!(
            "90% interval {} to {}: sampling ±{:.1}%, timing ±{:.1}%",
            human(w.low),
            human(w.high),
            100.0 * s.sampling_spread,
            100.0 * s.timing_spread
        ),
    };
    writeln!(
        out,
        "GPU time: {} GPU-hours = {} on one {gpu}, fed by {} ({spread}); largest task {} (up to {})",
        sig(w.estimate),
        human(w.estimate),
        plural(r.threads, "thread"),
        human(r.largest_task_hours),
        human(r.largest_task_high_hours)
    )?;
    gpu_model(r, out)?;
    if let Some(passes) = s.phases.as_ref().and_then(|p| p.gpu_pass_seconds.as_ref()) {
        // In a batch's order, not the map's.
        let each: Vec<String> = crate::work::GPU_PASS_COUNTERS
            .iter()
            .filter_map(|(pass, _)| passes.get(pass).map(|i| (pass, i)))
            .map(|(pass, i)| format!("{pass} {}", human(i.estimate / 3600.0)))
            .collect();
        writeln!(
            out,
            "GPU passes by the GPU's timestamps, scaled to the plan: {}",
            each.join(", ")
        )?;
    }
    memory(r, out)
}

/// The shard count, the `sbatch` line and where its `--time` comes from; where the target
/// cannot be met, why, and no line.
fn shards(r: &EstimateReport, out: &mut dyn Write) -> io::Result<()> {
    let (Some(sbatch), Some(limit)) = (&r.sbatch, r.sbatch_time_s) else {
        return unreachable_target(r, out);
    };
    writeln!(
        out,
        "shards for {} per array task on {}: K = {}",
        human(r.per_task_hours),
        plural(r.threads, "thread"),
        r.shards
    )?;
    writeln!(out, "{sbatch}")?;
    writeln!(
        out,
        "(--time {}: one shard's wall time at the interval's upper end, + 25% + 10 min)",
        human(limit / 3600.0)
    )
}

/// Why no line is printed: no array task can meet the target, or it would ask for more
/// than a year.
fn unreachable_target(r: &EstimateReport, out: &mut dyn Write) -> io::Result<()> {
    let largest = r.largest_task_high_hours;
    let past_any_limit = |hours: f64| {
        // The line's --time for shards of `hours`: 25% and 10 minutes more.
        hours * 3600.0 * 1.25 + 600.0 > crate::estimate::MAX_SBATCH_SECONDS
    };
    if largest <= r.per_task_hours {
        return writeln!(
            out,
            "shards for {} per array task: no sbatch line: it would ask for more than a year, \
             longer than any cluster's time limit (give a shorter --per-task)",
            human(r.per_task_hours)
        );
    }
    writeln!(
        out,
        "shards for {} per array task: the target cannot be met: the largest task alone may \
         take {} on one thread, and no shard splits a task",
        human(r.per_task_hours),
        human(largest)
    )?;
    match past_any_limit(largest) {
        false => writeln!(
            out,
            "no sbatch line: give --per-task {} or more (if the cluster allows array tasks \
             that long)",
            human(largest * 1.01)
        ),
        true => writeln!(
            out,
            "no sbatch line: an array task would need more than a year, longer than any \
             cluster's time limit: N = {} is past reach of this machine",
            r.n
        ),
    }
}

/// What the estimate solved, and how long it took.
fn sample(r: &EstimateReport, out: &mut dyn Write) -> io::Result<()> {
    let solved = if r.samples < r.samples_drawn {
        format!(
            "{} of {} sampled tasks (the rest did not fit --time-limit)",
            r.samples, r.samples_drawn
        )
    } else {
        plural(r.samples, "sampled task")
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
    )
}

/// Bytes as whole megabytes, `n/a` where not measured.
fn megabytes(bytes: Option<u64>) -> String {
    bytes.map_or("n/a".to_string(), |b| format!("{:.0} MB", b as f64 / 1e6))
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
}
