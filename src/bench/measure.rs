//! [`run`]: the warm-up and the timed rounds of a benchmark, each row counted and verified,
//! until the rounds are done, a count is wrong or the observer asks to stop.

use std::time::Instant;

use super::copies::{count_row, RowOutcome, RowSpec};
use super::rows::{keep_best, summarise, Sample};
use super::{
    copies, score, BenchConfig, BenchObserver, BenchReport, HostInfo, Outcome, WrongCount,
    BENCH_SCHEMA,
};
use crate::{Error, Plan};

/// Runs the benchmark: builds the workload's plans once (every row counts the same tasks),
/// warms them with one untimed, verified count where the engine fills caches as it goes
/// (so the one-thread row does not pay for filling what the wider rows then share), then
/// times each thread count's row, round after round.
///
/// When `observer` asks to stop ([`BenchObserver::should_stop`]), the count in flight stops
/// between tasks and the run ends with [`Outcome::Interrupted`]: the rows it finished, all
/// verified; the row it was counting is dropped.
pub fn run(config: &BenchConfig, observer: &dyn BenchObserver) -> Result<Outcome, Error> {
    let widest = config.threads.iter().copied().max().unwrap_or(1);
    let built = build_plans(config, widest)?;
    let plans: Vec<&dyn Plan> = config
        .workload
        .sizes
        .iter()
        .map(|n| {
            built
                .iter()
                .find(|p| p.n() == *n)
                .expect("planned")
                .as_ref()
        })
        .collect();
    let mut tally = Tally {
        best: vec![None; config.threads.len()],
        rechecked: 0,
        rounds: 0,
    };
    let interrupted = match measure(config, &plans, &built, observer, &mut tally) {
        Ok(Some(wrong)) => return Ok(Outcome::Wrong(wrong)),
        Ok(None) => false,
        Err(Error::Interrupted) => true,
        Err(e) => return Err(e),
    };
    let results = summarise(&config.threads, &tally.best);
    let report = Box::new(BenchReport {
        schema: BENCH_SCHEMA.to_string(),
        workload: config.workload.clone(),
        host: HostInfo::detect(),
        rounds: tally.rounds,
        // A wrong count returns `Outcome::Wrong` above, so every count here was checked.
        verified: true,
        interrupted,
        rechecked: tally.rechecked,
        gpu: plans.first().and_then(|p| p.device()),
        score: score(&results),
        results,
    });
    Ok(match interrupted {
        true => Outcome::Interrupted(report),
        false => Outcome::Verified(report),
    })
}

/// What the timed rows found so far: each thread count's best sample, the tasks rechecked
/// and the rounds completed.
struct Tally {
    best: Vec<Option<Sample>>,
    rechecked: usize,
    rounds: u32,
}

/// The warm-up, then the timed rounds into `tally`: the first wrong count, if any.
///
/// # Errors
/// As [`count_row`], [`Error::Interrupted`] included.
fn measure(
    config: &BenchConfig,
    plans: &[&dyn Plan],
    built: &[Box<dyn Plan>],
    observer: &dyn BenchObserver,
    tally: &mut Tally,
) -> Result<Option<WrongCount>, Error> {
    let started = Instant::now();
    let warm: Vec<&dyn Plan> = built
        .iter()
        .filter(|p| p.warms_caches())
        .map(|p| p.as_ref())
        .collect();
    let per_round = config.threads.len() * plans.len();
    let planned =
        (config.duration.is_none()).then(|| warm.len() + per_round * config.rounds as usize);
    let spec = |threads, copies, round, index| RowSpec {
        threads,
        copies,
        round,
        index,
        planned,
    };
    if !warm.is_empty() {
        let widest = config.threads.iter().copied().max().unwrap_or(1);
        let row = spec(widest, 1, 0, 0);
        if let RowOutcome::Wrong(wrong) = count_row(config, &warm, row, observer)? {
            return Ok(Some(wrong));
        }
    }
    let mut round = 0;
    while round < config.rounds || config.duration.is_some_and(|d| started.elapsed() < d) {
        round += 1;
        for (i, (slot, &threads)) in tally.best.iter_mut().zip(&config.threads).enumerate() {
            let index = warm.len() + (round as usize - 1) * per_round + i * plans.len();
            let row = spec(threads, copies(threads), round, index);
            match count_row(config, plans, row, observer)? {
                RowOutcome::Counted { sample, rechecked } => {
                    keep_best(slot, sample);
                    tally.rechecked += rechecked;
                }
                RowOutcome::Wrong(wrong) => return Ok(Some(wrong)),
            }
        }
        tally.rounds = round;
        observer.round_verified(round);
    }
    Ok(None)
}

/// One plan per distinct board size of the workload, for `threads` threads (the widest row).
fn build_plans(config: &BenchConfig, threads: usize) -> Result<Vec<Box<dyn Plan>>, Error> {
    let options = config
        .base
        .clone()
        .engine(&config.workload.engine)
        .threads(threads);
    let mut sizes = config.workload.sizes.clone();
    sizes.sort_unstable();
    sizes.dedup();
    sizes.into_iter().map(|n| options.plan(n)).collect()
}
