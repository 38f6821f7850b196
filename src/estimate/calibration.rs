//! How fast this machine solves a plan's work, measured so that a shared machine's noise
//! shows up as spread instead of moving the estimate.
//!
//! The cost of a count is its work times this machine's speed for that work. The work is
//! deterministic: the plan's cost model and the seeded sample ([`super::Design`]) give the
//! same numbers on every machine. The speed is what the clock measures, and on a shared VM one
//! slow stretch of 50 ms used to move the whole estimate by 40%. So:
//!
//! - the sampled tasks are timed in *rounds*, each visiting every task once in a fresh
//!   shuffled order, until a budget of timed seconds is spent (at least two rounds), so the
//!   timing is spread over seconds and a slow stretch hits some tasks of some rounds only;
//! - each task keeps every timing (the per-task dispersion), and its mean is what the
//!   estimate uses: a long count meets the machine's load as it comes, so the mean, not the
//!   quickest run, is what it will take;
//! - the rounds are cut into up to [`BLOCKS`] consecutive blocks, each block gives a whole
//!   estimate, and their spread says how much the speed wandered while it was measured. A job
//!   still to run is treated as one more draw of that speed: the timing part of the interval
//!   is a Student-t prediction interval, `t(0.95, B − 1) · s_B · √(1 + 1/B)` relative to the
//!   mean, which widens the sampling interval in quadrature ([`interval`]).

use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rayon::prelude::*;

use super::{measured, Design, Interval, Z90};
use crate::plan::Plan;
use crate::subsample::{Draws, Subsample};
use crate::work::{Clock, Counters, Work};

/// Timed rounds at least: two are the fewest that show a spread.
const MIN_ROUNDS: usize = 2;
/// Timed rounds at most, whatever the budget: a clock too coarse to see a task would
/// otherwise never fill it.
const MAX_ROUNDS: usize = 10_000;
/// Blocks of consecutive rounds whose estimates give the timing spread. Ten blocks of a 3 s
/// budget are 0.3 s each: long enough to average a scheduler tick, short enough that a build
/// starting on the other core lands in some blocks and not in others.
pub const BLOCKS: usize = 10;

/// Every timing of the sampled tasks.
#[derive(Debug, Clone, PartialEq)]
pub struct Calibration {
    /// The sampled ids that were solved, ascending.
    pub tasks: Vec<usize>,
    /// `seconds[i][k]`: the seconds task `tasks[i]` took in round `k` (estimated from its
    /// drawn pieces where it was solved in part).
    pub seconds: Vec<Vec<f64>>,
    /// `within[i]`: the variance of task `tasks[i]`'s seconds from drawing its pieces (0 for a
    /// task solved whole).
    pub within: Vec<f64>,
    /// `work[i]`: the work counters of task `tasks[i]`, from the first round, where the engine
    /// keeps them (empty otherwise).
    pub work: Vec<Counters>,
    /// How many of the tasks were solved in part.
    pub partial_tasks: usize,
    /// The pieces those tasks have in all.
    pub partial_pieces: usize,
}

/// A first round of timings already taken.
#[derive(Debug, Clone, PartialEq)]
pub struct FirstRound {
    /// `(id, seconds)` of every task.
    pub timings: Vec<(usize, f64)>,
    /// Whether no more rounds are needed once it spent the budget: a round that took a
    /// good share of the time limit would double the estimate's time, and its tasks
    /// (seconds each at the frontier) average out a scheduler's noise themselves; the timing
    /// part of the interval is then the floor ([`Design::estimate`]).
    pub alone: bool,
}

/// How a sample is solved and timed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Settings {
    /// Seconds of timed solving per thread ([`Calibration::run`]), and of wall time for the
    /// rounds after the first.
    pub budget: f64,
    /// Seed of the round orders and of the pieces drawn.
    pub seed: u64,
    /// Pieces drawn from each task cut into many ([`crate::subsample`]; 0: solve whole).
    pub draws: usize,
    /// Wall seconds the calibration may take. The first round starts no more tasks after a
    /// share of them (beyond two per stratum), and none at all once they are over: a task
    /// still running then is left out of the sample unheard, so that the answer comes in
    /// time whatever one task takes. Later rounds start only while one fits.
    pub limit: f64,
}

impl Calibration {
    /// Times `tasks` (ascending, distinct) in rounds until the timings add up to `budget`
    /// seconds, at least 2 and at most 10 000 rounds. Each round calls
    /// `round` once with every task in a new order drawn from `seed`; `round` solves them
    /// and returns `(id, seconds)` for each, in any order. Tests pass a fake clock here.
    pub fn run(
        tasks: &[usize],
        budget: f64,
        seed: u64,
        round: impl FnMut(&[usize]) -> Vec<(usize, f64)>,
    ) -> Self {
        Self::run_after(tasks, None, budget, seed, round)
    }

    /// [`Calibration::run`] after a `first` round already timed ([`FirstRound`]).
    pub fn run_after(
        tasks: &[usize],
        first: Option<FirstRound>,
        budget: f64,
        seed: u64,
        round: impl FnMut(&[usize]) -> Vec<(usize, f64)>,
    ) -> Self {
        Self::run_within(tasks, first, (budget, || true, || true), seed, round)
    }

    /// [`Calibration::run_after`], starting each round after the first only where `fits()`
    /// says it fits in the time left (the least number of rounds included: a time limit
    /// comes first), and each round past the least number only where `more()` says the
    /// budget's wall time has room for it too.
    pub fn run_within(
        tasks: &[usize],
        first: Option<FirstRound>,
        (budget, mut fits, mut more): (f64, impl FnMut() -> bool, impl FnMut() -> bool),
        seed: u64,
        mut round: impl FnMut(&[usize]) -> Vec<(usize, f64)>,
    ) -> Self {
        let mut rng = fastrand::Rng::with_seed(seed);
        let mut order = tasks.to_vec();
        let mut seconds = vec![Vec::new(); tasks.len()];
        let (mut spent, mut rounds) = (0.0, 0);
        let mut record = |timings: Vec<(usize, f64)>, spent: &mut f64| {
            for (t, s) in timings {
                let i = tasks
                    .binary_search(&t)
                    .expect("round returns the tasks it was given");
                seconds[i].push(s);
                *spent += s;
            }
        };
        let mut least = MIN_ROUNDS;
        if let Some(first) = first {
            record(first.timings, &mut spent);
            rounds += 1;
            if first.alone {
                least = 1;
            }
        }
        while !tasks.is_empty()
            && (rounds < least || (spent < budget && rounds < MAX_ROUNDS && more()))
        {
            if rounds > 0 && !fits() {
                break;
            }
            rng.shuffle(&mut order);
            record(round(&order), &mut spent);
            rounds += 1;
        }
        Calibration {
            tasks: tasks.to_vec(),
            seconds,
            within: vec![0.0; tasks.len()],
            work: Vec::new(),
            partial_tasks: 0,
            partial_pieces: 0,
        }
    }

    /// The number of rounds.
    pub fn rounds(&self) -> usize {
        self.seconds.first().map_or(0, Vec::len)
    }

    /// The sum of every timing, seconds.
    pub fn timed_seconds(&self) -> f64 {
        // From +0.0: an empty sum of floats is −0.0, which prints as "-0.0 s".
        self.seconds.iter().flatten().fold(0.0, |a, b| a + b)
    }

    /// The mean seconds of task `t` over rounds `from..to`.
    fn mean(&self, t: usize, from: usize, to: usize) -> f64 {
        let i = self.tasks.binary_search(&t).expect("a sampled task");
        let s = &self.seconds[i][from..to];
        s.iter().sum::<f64>() / s.len().max(1) as f64
    }

    /// The round ranges of the blocks: up to [`BLOCKS`] runs of consecutive rounds.
    pub fn blocks(&self) -> Vec<(usize, usize)> {
        let r = self.rounds();
        let b = r.min(BLOCKS);
        (0..b).map(|j| (j * r / b, (j + 1) * r / b)).collect()
    }

    /// The median over tasks of each task's relative standard deviation across rounds: how
    /// much one task's timing varies from one run to the next.
    pub fn task_spread(&self) -> f64 {
        let mut cv: Vec<f64> = self
            .seconds
            .iter()
            .filter(|s| s.len() >= 2)
            .map(|s| relative_sd(s))
            .collect();
        cv.sort_by(f64::total_cmp);
        cv.get(cv.len() / 2).copied().unwrap_or(0.0)
    }
}

/// The median of `x` (the mean of the middle two for an even count), `None` when empty.
fn median(x: &[f64]) -> Option<f64> {
    let mut v = x.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(v[n / 2]),
        _ => Some((v[n / 2 - 1] + v[n / 2]) / 2.0),
    }
}

/// The sample standard deviation of `x` (0 for fewer than two values).
fn sd(x: &[f64]) -> f64 {
    if x.len() < 2 {
        return 0.0;
    }
    let n = x.len() as f64;
    let mean = x.iter().sum::<f64>() / n;
    (x.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt()
}

/// Standard deviation over mean (0 for fewer than two values or a mean that is not positive).
fn relative_sd(x: &[f64]) -> f64 {
    let mean = x.iter().sum::<f64>() / x.len().max(1) as f64;
    if mean > 0.0 {
        sd(x) / mean
    } else {
        0.0
    }
}

/// The 95% quantile of Student's t with `dof` degrees of freedom (the upper end of a
/// two-sided 90% interval). A table: only `BLOCKS − 1` degrees or fewer are ever asked for,
/// and a statistics crate would bring a linear-algebra stack for one number.
pub fn t90(dof: usize) -> f64 {
    const T: [f64; 30] = [
        6.314, 2.920, 2.353, 2.132, 2.015, 1.943, 1.895, 1.860, 1.833, 1.812, 1.796, 1.782, 1.771,
        1.761, 1.753, 1.746, 1.740, 1.734, 1.729, 1.725, 1.721, 1.717, 1.714, 1.711, 1.708, 1.706,
        1.703, 1.701, 1.699, 1.697,
    ];
    match dof {
        0 => f64::INFINITY,
        d if d <= T.len() => T[d - 1],
        _ => Z90,
    }
}

/// The relative half-width of a 90% prediction interval for the speed of a job still to
/// run, from whole estimates made on `blocks` of the calibration:
/// `t(0.95, B − 1) · s · √(1 + 1/B) / mean`. Zero when fewer than two blocks (no spread to
/// see: [`Calibration::run`] always times two rounds or more).
pub fn timing_spread(blocks: &[f64]) -> f64 {
    let b = blocks.len();
    if b < 2 {
        return 0.0;
    }
    t90(b - 1) * relative_sd(blocks) * (1.0 + 1.0 / b as f64).sqrt()
}

/// The 90% interval of `estimate` when its sampling error is within ±`sampling` and the
/// machine's speed within −`down` and +`up` (relative 90% half-widths): on each side the
/// two half-widths add in quadrature, as independent errors do.
pub fn interval(estimate: f64, sampling: f64, down: f64, up: f64) -> Interval {
    Interval {
        estimate,
        low: (estimate * (1.0 - sampling.hypot(down))).max(0.0),
        high: estimate * (1.0 + sampling.hypot(up)),
    }
}

/// A calibrated estimate of a plan's total seconds, with how it was made.
#[derive(Debug, Clone, PartialEq)]
pub struct Estimate {
    /// Total seconds with the 90% interval of both sampling and timing.
    pub total: Interval,
    /// Relative 90% half-width of the sampling part alone.
    pub sampling_spread: f64,
    /// Relative 90% half-width of the timing part: the measured one or the floor, whichever
    /// is larger.
    pub timing_spread: f64,
    /// Relative 90% half-width of the timing part as measured ([`timing_spread`]).
    pub measured_timing_spread: f64,
    /// Whole estimates from each block of rounds, seconds.
    pub blocks: Vec<f64>,
    /// Median per-task relative standard deviation ([`Calibration::task_spread`]).
    pub task_spread: f64,
    /// Rounds timed.
    pub rounds: usize,
    /// Seconds timed in all.
    pub timed_seconds: f64,
    /// The plan's largest task (task 0), seconds, with a 90% interval.
    pub largest_task: Interval,
}

impl Design {
    /// The plan's total seconds from the timings in `cal`.
    ///
    /// - The estimate is the median of the blocks' estimates, so a slow stretch that fills a
    ///   few blocks widens the interval instead of moving the estimate.
    /// - The sampling part of the interval comes from each task's mean over every round.
    /// - The timing part is the blocks' [`timing_spread`], but never less than `floor`: a
    ///   calibration of seconds cannot see the load change that a shared machine may go
    ///   through in the minutes or days a count runs.
    pub fn estimate(&self, plan: &dyn Plan, cal: &Calibration, floor: f64) -> Estimate {
        let r = cal.rounds();
        let within = |t: usize| cal.tasks.binary_search(&t).map_or(0.0, |i| cal.within[i]);
        let (mean, variance) = self.parts(plan, &|t| cal.mean(t, 0, r), &within);
        let blocks: Vec<f64> = cal
            .blocks()
            .into_iter()
            .map(|(a, b)| self.parts(plan, &|t| cal.mean(t, a, b), &within).0)
            .collect();
        let measured = timing_spread(&blocks);
        let timing = measured.max(floor);
        let sampling = Z90 * variance.sqrt() / mean.max(f64::MIN_POSITIVE);
        // The prediction interval is centred on the blocks' mean; the estimate, their median,
        // may sit anywhere in it (a slow stretch pulls the mean, not the median), so the
        // interval's two sides differ.
        let central = median(&blocks).unwrap_or(mean);
        let blocks_mean = blocks.iter().sum::<f64>() / blocks.len().max(1) as f64;
        let c = central.max(f64::MIN_POSITIVE);
        let up = (blocks_mean * (1.0 + timing) / c - 1.0).max(timing);
        let down = (1.0 - blocks_mean * (1.0 - timing) / c).max(timing);
        // The largest task at the rate the central estimate uses.
        let scale = central / mean.max(f64::MIN_POSITIVE);
        let mut largest = self.largest_task(plan, &|t| cal.mean(t, 0, r) * scale, down, up);
        largest.low = largest.low.min(largest.estimate);
        Estimate {
            total: interval(central, sampling, down, up),
            sampling_spread: sampling,
            timing_spread: timing,
            measured_timing_spread: measured,
            task_spread: cal.task_spread(),
            rounds: r,
            timed_seconds: cal.timed_seconds(),
            largest_task: largest,
            blocks,
        }
    }

    /// Task 0's seconds: its cost at the first stratum's rate, with an interval from that
    /// stratum's scatter about the rate (one task's own error, not a mean's) and the timing
    /// part's `down` and `up`.
    fn largest_task(
        &self,
        plan: &dyn Plan,
        measure: &dyn Fn(usize) -> f64,
        down: f64,
        up: f64,
    ) -> Interval {
        let zero = Interval {
            estimate: 0.0,
            low: 0.0,
            high: 0.0,
        };
        let Some(first) = self.strata.first().filter(|s| !s.tasks.is_empty()) else {
            return zero;
        };
        let (values, sum_t, sum_c) = measured(first, plan, measure);
        if sum_c == 0.0 || sum_t == 0.0 {
            return zero;
        }
        let ratio = sum_t / sum_c;
        let relative: Vec<f64> = values
            .iter()
            .map(|(t, c)| t / (ratio * c.max(1.0)))
            .collect();
        interval(ratio * plan.cost(0) as f64, Z90 * sd(&relative), down, up)
    }
}

/// Solves `order` once on `pool`, starting the tasks in that order, and returns each task's
/// CPU seconds on its thread (wall seconds where the system has no per-thread CPU clock);
/// a task cut into many pieces solves `draws` of them and estimates its seconds from them.
///
/// CPU time, not wall time: the question is core-hours, and on a shared machine a task that
/// loses its core for a while would otherwise count the wait (measured: +62% at symmetry
/// N = 18 with a load of 4 on 2 cores).
pub fn time_round(
    plan: &dyn Plan,
    order: &[usize],
    pool: &rayon::ThreadPool,
    draws: Draws,
) -> Vec<(usize, f64)> {
    let behind = Some(pool.current_num_threads());
    pool.install(|| {
        order
            .par_iter()
            .with_max_len(1)
            .map(|&t| (t, solve_in_context(plan, t, draws, behind).0.seconds().0))
            .collect()
    })
}

/// [`solve_part`] as a count's thread meets task `t`: right after the task `behind` places
/// before it in the plan's order (largest first, as a count runs them; `behind` is the number
/// of threads, so that it is this thread's own last task), which is solved first, untimed
/// (`None`: `t` alone). A count's thread has just solved that one, and `t` shares much of its
/// data (the same quarter lists and prepared quarters, cached or just built, in this core's
/// caches); timed alone, `t` pays for fetching or rebuilding them, which a count pays once
/// for a run of neighbours. Measured on the same tasks of N = 19 on a Zen 3 (avx2): +7% timed
/// alone against their times inside a count, +2% after one task, 0% after eight; the share
/// is the larger the faster the CPU matches, as the data's fetching is left.
fn solve_in_context(
    plan: &dyn Plan,
    t: usize,
    draws: Draws,
    behind: Option<usize>,
) -> (Subsample, bool) {
    if let Some(before) = behind.and_then(|b| t.checked_sub(b)) {
        let untimed = Draws {
            counted: false,
            ..draws
        };
        std::hint::black_box(solve_part(plan, before, untimed));
    }
    solve_part(plan, t, draws)
}

/// Solves task `t` for an estimate: in part where the engine can ([`Plan::solve_sampled`]),
/// else whole and timed; with the work counters if `draws.counted` (the flag says whether
/// the engine keeps any).
fn solve_part(plan: &dyn Plan, t: usize, draws: Draws) -> (Subsample, bool) {
    if let Some(sample) = plan.solve_sampled(t, draws) {
        return (sample, true);
    }
    let clock = Clock::start_for(plan.device().is_some());
    if draws.counted {
        if let Some((count, work)) = plan.solve_counted(t) {
            return (Subsample::whole(count, clock.seconds(), work), true);
        }
    }
    let count = std::hint::black_box(plan.solve(t));
    (
        Subsample::whole(count, clock.seconds(), Work::default()),
        false,
    )
}

/// The first round: solves the tasks of `order` on `pool`, each thread taking the next one,
/// with the work counters; no thread starts a task after `soft` wall seconds (beyond the
/// first `floor` tasks) nor after `hard`. At `hard` the round ends whatever is still running:
/// those tasks finish unheard, on threads the next rounds must not wait for. Returns what
/// each task heard of did, by id, and whether the round was cut so.
fn first_round(
    plan: &Arc<dyn Plan>,
    (order, behind): (&[usize], Option<usize>),
    pool: &rayon::ThreadPool,
    draws: Draws,
    (soft, hard, floor): (f64, f64, usize),
) -> (Vec<Solved>, bool) {
    let start = Instant::now();
    let order: Arc<[usize]> = order.into();
    let next = Arc::new(AtomicUsize::new(0));
    let (tx, rx) = mpsc::channel();
    let workers = pool.current_num_threads();
    for _ in 0..workers {
        let (plan, order, next, tx) = (
            Arc::clone(plan),
            Arc::clone(&order),
            Arc::clone(&next),
            tx.clone(),
        );
        pool.spawn(move || {
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let elapsed = start.elapsed().as_secs_f64();
                let late = elapsed > hard || (i >= floor && elapsed > soft);
                // A faulted plan counts nothing more: the estimate fails, so stop at once.
                if i >= order.len() || late || plan.fault().is_some() {
                    break;
                }
                let (sample, counted) = solve_in_context(plan.as_ref(), order[i], draws, behind);
                if tx.send(Some((order[i], sample, counted))).is_err() {
                    return; // the round is over: nobody hears of this task
                }
            }
            let _ = tx.send(None);
        });
    }
    drop(tx);
    let (mut done, mut running, mut cut) = (Vec::new(), workers, false);
    while running > 0 {
        let left = (hard - start.elapsed().as_secs_f64()).max(0.0);
        match rx.recv_timeout(Duration::from_secs_f64(left)) {
            Ok(Some(solved)) => done.push(solved),
            Ok(None) => running -= 1,
            Err(RecvTimeoutError::Timeout) => {
                cut = true;
                break;
            }
            Err(RecvTimeoutError::Disconnected) => break,
        }
    }
    // No thread starts another task of this round.
    next.store(order.len(), Ordering::Relaxed);
    done.sort_by_key(|d| d.0);
    (done, cut)
}

/// A task the first round solved: its id, what it did, and whether it kept work counters.
type Solved = (usize, Subsample, bool);

/// Times the sample of `design` on `pool` ([`Settings`]).
///
/// - A first round solves the tasks in [`Design::interleaved`] order with the work counters
///   until `settings.limit` would be passed (half of it, or a third where a warm-up is
///   needed; at least two tasks per stratum unless the whole limit is spent), so an
///   estimate at the frontier answers in minutes: the sample is the tasks it solved. A task
///   still running when the limit is over is left out.
/// - Where the engine fills caches that later tasks share ([`Plan::warms_caches`], the mitm
///   engine's quarter lists up to N = 21), that round is an untimed warm-up: a full run
///   spreads that cost over every task, a sample of a few dozen would pay it almost in full
///   (measured: 3 to 5× too high at N = 16..18 without it). Elsewhere it is the first timed
///   round.
/// - Then rounds of [`time_round`] until every thread has timed about `settings.budget`
///   seconds, or that much wall time has passed ([`Calibration::run_within`]; at least two
///   timed rounds whatever the budget), each started only where a round as long as the
///   longest so far still ends within the limit and the budget.
/// - Every timed task is timed as a count meets it, right after its predecessor
///   (`solve_in_context`), so that what a count shares between neighbours is not charged
///   to each sampled task in full.
pub fn calibrate(
    plan: &Arc<dyn Plan>,
    design: &Design,
    pool: &rayon::ThreadPool,
    settings: Settings,
) -> Calibration {
    let warm = plan.warms_caches();
    let draws = Draws {
        count: settings.draws,
        seed: settings.seed,
        counted: true,
    };
    let share = if warm { 3.0 } else { 2.0 };
    let floor = 2 * design.strata.len();
    let order = design.interleaved(settings.seed);
    let started = Instant::now();
    let limits = (settings.limit / share, settings.limit, floor);
    // A timed first round times its tasks as the later rounds do, after their predecessors;
    // a warm-up needs none.
    let behind = (!warm).then_some(pool.current_num_threads());
    let (first, cut) = first_round(plan, (&order, behind), pool, draws, limits);
    let tasks: Vec<usize> = first.iter().map(|d| d.0).collect();
    let counted = first.iter().all(|d| d.2);
    let total = settings.budget * pool.current_num_threads() as f64;
    // A warm-up cut by the limit is all the timing there is.
    let timings = (!warm || cut).then(|| {
        let timings: Vec<(usize, f64)> = first.iter().map(|d| (d.0, d.1.seconds().0)).collect();
        let spent: f64 = timings.iter().map(|t| t.1).sum();
        let long = started.elapsed().as_secs_f64() > settings.limit / 4.0;
        FirstRound {
            alone: cut || (long && spent >= total),
            timings,
        }
    });
    let draws = Draws {
        counted: false,
        ..draws
    };
    // A round takes about as long as the longest so far (the first, cold one, to begin with;
    // twice that after a warm-up, which solved no predecessors).
    let first_wall = started.elapsed().as_secs_f64();
    let longest = Cell::new(if warm { 2.0 * first_wall } else { first_wall });
    let fits = || {
        !cut && plan.fault().is_none()
            && started.elapsed().as_secs_f64() + longest.get() <= settings.limit
    };
    // The budget holds for the wall time of the rounds too: on a loaded machine, or with
    // tasks of microseconds whose rounds cost more to deal out than to solve, the timed
    // seconds alone took 5× the budget to add up.
    let retiming = Instant::now();
    let more = || retiming.elapsed().as_secs_f64() + longest.get() <= settings.budget;
    let limits = (total, fits, more);
    let cal = Calibration::run_within(&tasks, timings, limits, settings.seed, |order| {
        let round = Instant::now();
        let timings = time_round(plan.as_ref(), order, pool, draws);
        longest.set(longest.get().max(round.elapsed().as_secs_f64()));
        timings
    });
    let partial = first.iter().filter(|d| d.1.is_partial());
    Calibration {
        within: first.iter().map(|d| d.1.seconds().1).collect(),
        work: if counted {
            first.iter().map(|d| d.1.counters()).collect()
        } else {
            Vec::new()
        },
        partial_tasks: partial.clone().count(),
        partial_pieces: partial.map(|d| d.1.pieces).sum(),
        ..cal
    }
}

#[cfg(test)]
mod tests;
