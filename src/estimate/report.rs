//! The figures `nqueens estimate` reports, from a calibrated estimate: core and wall hours, a
//! shard count with its Slurm line, the work counters scaled to the plan.

use std::collections::BTreeMap;
use std::time::Instant;

use super::{Calibration, Design, Estimate, Interval};
use crate::bench::HostInfo;
use crate::engine::Extrapolation;
use crate::plan::Plan;
use crate::report::{
    CountersReport, EstimateReport, ExtrapolationReport, PiecesReport, Span, SpeedReport,
    WorkReport, ESTIMATE_SCHEMA,
};
use crate::work::{is_peak, Counters};

/// What an [`EstimateReport`] needs besides the plan and its estimate: the settings the
/// estimate ran with and what was measured around it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ReportSettings {
    /// Board size.
    pub n: u32,
    /// Seed of the sample.
    pub seed: u64,
    /// Threads the sample ran on (and the wall time assumes).
    pub threads: usize,
    /// Target wall seconds of one Slurm array task.
    pub per_task_seconds: f64,
    /// The cluster's `MaxArraySize` (see [`crate::shard::slurm`]): the suggested arrays'
    /// indices stay below it.
    pub max_array_size: usize,
    /// Seconds of timed solving per thread asked for.
    pub calibrate_seconds: f64,
    /// Least relative timing spread (a fraction, not percent).
    pub timing_floor: f64,
    /// Pieces drawn from each task cut into many.
    pub draws: usize,
    /// Tasks drawn for the sample, before the time limit cut it.
    pub samples_drawn: usize,
    /// Resident memory after building the plan, bytes.
    pub plan_rss: Option<u64>,
    /// Peak resident memory after solving, bytes.
    pub peak_rss: Option<u64>,
    /// When the estimate started, for its own wall time.
    pub started: Instant,
}

/// The report of estimate `e` of `plan`, made from the sample `d` timed in `cal`.
pub fn estimate_report(
    plan: &dyn Plan,
    d: &Design,
    cal: &Calibration,
    e: &Estimate,
    s: &ReportSettings,
) -> EstimateReport {
    let core = e.total;
    let slurm = slurm(plan, e, s);
    let work = d.work(plan);
    let host = HostInfo::detect();
    EstimateReport {
        schema: ESTIMATE_SCHEMA,
        n: plan.n(),
        engine: plan.engine(),
        plan: plan.describe(),
        plan_hash: plan.fingerprint(),
        tasks: plan.len(),
        measured: true,
        extrapolation: None,
        samples: work.sampled_tasks,
        samples_drawn: s.samples_drawn,
        pieces: PiecesReport {
            draws: s.draws,
            partial_tasks: cal.partial_tasks,
            of_pieces: cal.partial_pieces,
        },
        sampled_cost_fraction: d.sampled_cost_fraction(plan),
        estimate_seconds: s.started.elapsed().as_secs_f64(),
        core_hours: hours(core, 1.0, 0.0),
        wall_hours: wall(core, s.threads as f64, e.largest_task),
        threads: s.threads,
        plan_rss_bytes: s.plan_rss,
        peak_rss_per_thread_bytes: s
            .plan_rss
            .zip(s.peak_rss)
            .map(|(base, peak)| peak.saturating_sub(base) / s.threads as u64),
        largest_task_hours: e.largest_task.estimate / 3600.0,
        per_task_hours: s.per_task_seconds / 3600.0,
        shards: slurm.shards,
        sbatch_time_s: slurm.sbatch.as_ref().map(|_| slurm.limit.ceil()),
        sbatch: slurm.sbatch,
        cpu: host.cpu,
        isa: crate::engine::matcher_level(),
        code_paths: host.code_path,
        speed: Some(speed(plan, d, cal, e, s, work.total)),
        work: WorkReport {
            units: "plan cost model",
            total: work.total,
            sampled: work.sampled,
            sampled_tasks: work.sampled_tasks,
            strata: work.strata,
            seed: s.seed,
            sample_digest: work.sample_digest,
            counters: counters(plan, d, cal, false, s.threads),
        },
        largest_task_high_hours: e.largest_task.high / 3600.0,
        gpu: plan.device(),
    }
}

/// The report of a board whose cost is extrapolated (`x`), not measured: the same figures as
/// [`estimate_report`]'s from the extrapolated core-hours, with no sample and no speed. The
/// largest task takes its share of them by the plan's cost model.
pub fn extrapolated_report(
    plan: &dyn Plan,
    x: &Extrapolation,
    s: &ReportSettings,
) -> EstimateReport {
    let (estimate, low, high) = x.core_hours();
    let seconds = |h: f64| h * 3600.0;
    let total = Interval {
        estimate: seconds(estimate),
        low: seconds(low),
        high: seconds(high),
    };
    let plan_cost: u128 = plan
        .cost_runs()
        .map(|(n, c)| n as u128 * u128::from(c))
        .sum();
    let share = plan.cost(0) as f64 / plan_cost.max(1) as f64;
    let e = Estimate {
        total,
        sampling_spread: 0.0,
        timing_spread: 0.0,
        measured_timing_spread: 0.0,
        blocks: Vec::new(),
        task_spread: 0.0,
        rounds: 0,
        timed_seconds: 0.0,
        largest_task: Interval {
            estimate: total.estimate * share,
            low: total.low * share,
            high: total.high * share,
        },
    };
    let d = Design {
        strata: Vec::new(),
        plan_cost,
    };
    let cal = Calibration::run(&[], 0.0, s.seed, |_| Vec::new());
    let (a, b, c) = x.at_from;
    EstimateReport {
        measured: false,
        extrapolation: Some(ExtrapolationReport {
            engine: plan.engine(),
            from_n: x.from_n,
            core_hours_at_from: Span {
                estimate: a,
                low: b,
                high: c,
            },
            growth_per_n: x.growth,
            growth_per_n_high: x.growth_high,
            steps: x.n - x.from_n,
        }),
        speed: None,
        ..estimate_report(plan, &d, &cal, &e, s)
    }
}

/// The measured speed for `total` units of work, with the CPU seconds of each phase.
fn speed(
    plan: &dyn Plan,
    d: &Design,
    cal: &Calibration,
    e: &Estimate,
    s: &ReportSettings,
    total: u128,
) -> SpeedReport {
    SpeedReport {
        core_seconds_per_unit: e.total.estimate / total.max(1) as f64,
        timing_spread: e.timing_spread,
        measured_timing_spread: e.measured_timing_spread,
        timing_floor: s.timing_floor,
        sampling_spread: e.sampling_spread,
        task_spread: e.task_spread,
        rounds: e.rounds,
        blocks: e.blocks.len(),
        timed_seconds: e.timed_seconds,
        budget_seconds: s.calibrate_seconds,
        phases: counters(plan, d, cal, true, s.threads),
    }
}

/// The longest `--time` a suggested line asks for: a year. Past it no scheduler's limit is
/// sane, and a count whose array tasks need longer is past reach on this machine.
pub const MAX_SBATCH_SECONDS: f64 = 365.0 * 86_400.0;

/// A shard count for the target time per array task, and the Slurm line that runs them.
struct Slurm {
    /// Shards K.
    shards: usize,
    /// The `sbatch` command line, `None` where the target cannot be met.
    sbatch: Option<String>,
    /// Its `--time`, seconds.
    limit: f64,
}

/// The shards and the Slurm submission, sized from the interval's upper end so that few
/// array tasks outlive their target. No line where the target cannot be met (the largest
/// task alone, which no shard splits, takes longer) or its `--time` would pass
/// [`MAX_SBATCH_SECONDS`].
fn slurm(plan: &dyn Plan, e: &Estimate, s: &ReportSettings) -> Slurm {
    let (core, threads) = (e.total, s.threads);
    let shards = ((core.high / (threads as f64 * s.per_task_seconds)).ceil() as usize)
        .clamp(1, plan.len().max(1));
    // The limit Slurm kills at: one shard's wall time at the interval's upper end, plus 25%
    // for shards that are not quite equal and 10 minutes for start-up and the last checkpoint.
    let shard_high = (core.high / (shards * threads) as f64).max(e.largest_task.high);
    let limit = shard_high * 1.25 + 600.0;
    let reachable = e.largest_task.high <= s.per_task_seconds && limit <= MAX_SBATCH_SECONDS;
    let (gres, gpu) = if plan.device().is_some() {
        ("--gres=gpu:1 ", " --gpu")
    } else {
        ("", "")
    };
    let options = format!("{gres}--cpus-per-task={threads} --time={}", clock(limit));
    let count = format!(
        "nqueens count {} --engine {}{gpu} -j {threads} -q",
        s.n,
        plan.engine()
    );
    let sbatch = reachable.then(|| sbatch_line(shards, s.max_array_size, &options, &count));
    Slurm {
        shards,
        sbatch,
        limit,
    }
}

/// The submission of `shards` shards with `sbatch` options `options`, each running `count`
/// (an `nqueens count` command without its shard and files): one array when the shards fit
/// within `max_array_size`, else a loop of arrays whose task `T` at offset `O` counts shard
/// `O + T`, every index below `max_array_size`. The folders it writes to are made first, so
/// it works pasted into an empty folder.
fn sbatch_line(shards: usize, max_array_size: usize, options: &str, count: &str) -> String {
    let files = "--checkpoint ckpt/shard-$s.ckpt --out out/shard-$s.json";
    if shards <= max_array_size {
        return format!(
            "mkdir -p ckpt out && sbatch --array=0-{} {options} --wrap='s=$SLURM_ARRAY_TASK_ID; \
             exec {count} --shard auto {files}'",
            shards - 1
        );
    }
    let (last, top) = (shards - 1, max_array_size - 1);
    format!(
        "mkdir -p ckpt out && for o in $(seq 0 {max_array_size} {last}); do sbatch --array=0-$(({last} - o < {top} \
         ? {last} - o : {top})) --export=ALL,SHARD_OFFSET=$o {options} --wrap='s=$((SHARD_OFFSET \
         + SLURM_ARRAY_TASK_ID)); exec {count} --shard $s/{shards} {files}'; done"
    )
}

/// The work counters of `cal`'s sample, scaled to the plan by `d` (None without counters):
/// the counts if `seconds` is false, else the CPU seconds of each phase.
fn counters(
    plan: &dyn Plan,
    d: &Design,
    cal: &Calibration,
    seconds: bool,
    workers: usize,
) -> Option<CountersReport> {
    if cal.work.is_empty() {
        return None;
    }
    let mut counters = crate::Work::default().counters();
    for task in &cal.work {
        counters.iter_mut().zip(task).for_each(|(sum, (name, v))| {
            sum.1 = if is_peak(name) {
                sum.1.max(*v)
            } else {
                sum.1 + v
            }
        });
    }
    let wanted = |name: &str| name.ends_with("_seconds") == seconds;
    let by_task: BTreeMap<usize, &Counters> = cal.tasks.iter().copied().zip(&cal.work).collect();
    let plan_counters: BTreeMap<_, _> = counters
        .iter()
        .enumerate()
        .filter(|(_, (name, _))| wanted(name))
        .map(|(i, &(name, most))| {
            // A peak is the most of one batch: the sample's most, not scaled.
            let total = match is_peak(name) {
                true => Interval {
                    estimate: most,
                    low: most,
                    high: most,
                },
                false => d.combine(plan, |t| by_task.get(&t).map_or(0.0, |c| c[i].1)),
            };
            (name, total)
        })
        .collect();
    let sampled: BTreeMap<&'static str, f64> = counters
        .into_iter()
        .filter(|(name, _)| wanted(name))
        .collect();
    let hits_per_visit = match (sampled.get("hits"), sampled.get("visited_pairs")) {
        (Some(&hits), Some(&visits)) if visits > 0.0 => Some(hits / visits),
        _ => None,
    };
    #[cfg(feature = "gpu")]
    let gpu_model_seconds = if seconds || plan.device().is_none() {
        None
    } else {
        let central = plan_counters
            .iter()
            .map(|(&k, v)| (k, v.estimate))
            .collect();
        crate::gpu::model_seconds(&central, plan.len())
    };
    #[cfg(not(feature = "gpu"))]
    let gpu_model_seconds = None;
    #[cfg(feature = "gpu")]
    let gpu_span = (!seconds && plan.device().is_some())
        .then(|| crate::gpu::span_model(&strata_work(plan, d, &by_task), workers))
        .flatten()
        .map(crate::report::GpuSpanReport::from);
    #[cfg(not(feature = "gpu"))]
    let gpu_span = {
        let _ = workers;
        None
    };
    let gpu_pass_seconds = (seconds && plan.device().is_some()).then(|| {
        crate::work::GPU_PASS_COUNTERS
            .iter()
            .filter_map(|&(pass, name)| plan_counters.get(name).map(|&i| (pass, i)))
            .collect()
    });
    Some(CountersReport {
        sampled,
        plan: plan_counters,
        hits_per_visit,
        gpu_model_seconds,
        gpu_pass_seconds,
        gpu_span,
    })
}

/// Each stratum of `d` as the span model reads it: its tasks, its sums scaled to it (by its
/// own ratio to the cost model) and its peaks, the most of its sampled tasks'. A stratum
/// with none sampled takes the whole sample's.
#[cfg(feature = "gpu")]
fn strata_work(
    plan: &dyn Plan,
    d: &Design,
    by_task: &BTreeMap<usize, &Counters>,
) -> Vec<crate::gpu::StratumWork> {
    let names: Vec<&'static str> = crate::Work::default()
        .counters()
        .into_iter()
        .map(|(name, _)| name)
        .collect();
    let value = |t: usize, i: usize| by_task.get(&t).map_or(0.0, |c| c[i].1);
    let most = |tasks: &mut dyn Iterator<Item = usize>, i: usize| {
        tasks.map(|t| value(t, i)).fold(0.0, f64::max)
    };
    let whole: Vec<usize> = by_task.keys().copied().collect();
    d.strata
        .iter()
        .map(|s| {
            let sampled: Vec<usize> = s
                .tasks
                .iter()
                .copied()
                .filter(|t| by_task.contains_key(t))
                .collect();
            let own = Design {
                strata: vec![s.clone()],
                plan_cost: d.plan_cost,
            };
            let counters = names
                .iter()
                .enumerate()
                .map(|(i, &name)| {
                    let v = match (is_peak(name), sampled.is_empty()) {
                        (true, false) => most(&mut sampled.iter().copied(), i),
                        (true, true) => most(&mut whole.iter().copied(), i),
                        (false, false) => own.combine(plan, |t| value(t, i)).estimate,
                        (false, true) => {
                            let mean = whole.iter().map(|&t| value(t, i)).sum::<f64>()
                                / whole.len().max(1) as f64;
                            mean * s.len() as f64
                        }
                    };
                    (name, v)
                })
                .collect();
            crate::gpu::StratumWork {
                tasks: s.len() as f64,
                counters,
            }
        })
        .collect()
}

/// Seconds of `i` over `divide`, at least `floor`, in hours.
fn hours(i: Interval, divide: f64, floor: f64) -> Span {
    let h = |s: f64| (s / divide).max(floor) / 3600.0;
    Span {
        estimate: h(i.estimate),
        low: h(i.low),
        high: h(i.high),
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{render_estimate, Format};

    /// The estimate of mirror N = 10 from `timed` of its sampled tasks, each timed at 0.5 s
    /// a round, as its text.
    fn text_from(timed: usize, per_task_seconds: f64) -> String {
        let plan = crate::CountOptions::new()
            .engine("mirror")
            .threads(1)
            .plan(10)
            .unwrap();
        let d = super::super::design(plan.as_ref(), 16, 1);
        let tasks: Vec<usize> = d.tasks().into_iter().take(timed).collect();
        let d = d.keep(&tasks);
        let cal = Calibration::run(&tasks, 0.0, 1, |o| o.iter().map(|&t| (t, 0.5)).collect());
        let e = d.estimate(plan.as_ref(), &cal, 0.15);
        let settings = ReportSettings {
            n: 10,
            seed: 1,
            threads: 1,
            per_task_seconds,
            max_array_size: 1001,
            calibrate_seconds: 0.0,
            timing_floor: 0.15,
            draws: 0,
            samples_drawn: 16,
            plan_rss: None,
            peak_rss: None,
            started: Instant::now(),
        };
        let report = estimate_report(plan.as_ref(), &d, &cal, &e, &settings);
        let mut out = Vec::new();
        render_estimate(&report, Format::Text, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn one_timed_task_gives_no_interval_and_says_so() {
        let one = text_from(1, 7200.0);
        assert!(one.contains("no interval: one timed task"), "{one}");
        assert!(!one.contains("interval 0 s"), "{one}");
        assert!(one.contains("from 1 of 16 sampled tasks"), "{one}");
        let two = text_from(2, 7200.0);
        assert!(two.contains("90% interval"), "{two}");
    }

    #[test]
    fn a_target_no_array_task_can_meet_gets_no_line() {
        // Each task takes about 0.5 s: a target of 0.1 s cannot be met.
        let text = text_from(4, 0.1);
        assert!(text.contains("the target cannot be met"), "{text}");
        assert!(!text.contains("sbatch --array"), "{text}");
        assert!(text.contains("give --per-task"), "{text}");
        assert!(text_from(4, 7200.0).contains("sbatch --array"));
    }

    #[test]
    fn slurm_clocks_have_days() {
        assert_eq!(clock(3723.0), "0-01:02:03");
        assert_eq!(clock(90_000.0), "1-01:00:00");
    }
}
