//! One row of the benchmark: every board of the workload counted `copies` times on one pool.
//!
//! A row at T threads counts each board T times, so every thread has about one workload's
//! work whatever T is, and on a machine that scales perfectly every row lasts as long as the
//! one-thread row. A fixed workload would give 256 threads a few milliseconds each and
//! measure its own tail and start-up, not the machine. The copies of a board are the tasks of
//! one [`Copies`] plan run by the ordinary executor: the last tasks of one copy overlap the
//! first of the next, and only the last copy's smallest tasks finish alone.

use std::time::Instant;

use super::rows::Sample;
use super::{BenchConfig, BenchObserver, WrongCount};
use crate::plan::{self, fingerprint_words, Plan, Progress};
use crate::recheck::{run_checked, Recheck};
use crate::work::CpuClock;
use crate::{known, CountOptions, Error};

/// `copies` copies of a plan as one plan: task `t` is task `t mod len` of copy `t / len`.
///
/// The copies run one after another (copy-major ids) so that, as in a real count, the workers
/// solve different tasks at the same moment rather than the same task T times over. So unlike
/// other plans the cost does not fall across the whole id range: it starts again at the
/// first task of every copy. Only the benchmark runs it, in id order.
pub(crate) struct Copies<'a> {
    inner: &'a dyn Plan,
    copies: usize,
    len: usize,
}

impl<'a> Copies<'a> {
    /// `copies` copies of `inner` (`None` if their tasks would not fit a `usize`).
    pub(crate) fn new(inner: &'a dyn Plan, copies: usize) -> Option<Self> {
        let len = inner.len().checked_mul(copies)?;
        Some(Copies { inner, copies, len })
    }

    /// The inner plan's task behind task `task`.
    fn inner_task(&self, task: usize) -> usize {
        assert!(task < self.len, "task {task} of {} copied tasks", self.len);
        task % self.inner.len()
    }
}

impl Plan for Copies<'_> {
    fn n(&self) -> u32 {
        self.inner.n()
    }
    fn engine(&self) -> &'static str {
        self.inner.engine()
    }
    fn len(&self) -> usize {
        self.len
    }
    fn cost(&self, task: usize) -> u64 {
        self.inner.cost(self.inner_task(task))
    }
    fn cost_runs(&self) -> Box<dyn Iterator<Item = (usize, u64)> + '_> {
        Box::new((0..self.copies).flat_map(|_| self.inner.cost_runs()))
    }
    fn solve(&self, task: usize) -> u128 {
        self.inner.solve(self.inner_task(task))
    }
    fn batch(&self) -> usize {
        self.inner.batch()
    }
    fn solve_batch(&self, tasks: &[usize]) -> Vec<u128> {
        let inner: Vec<usize> = tasks.iter().map(|&t| self.inner_task(t)).collect();
        self.inner.solve_batch(&inner)
    }
    fn solve_portable(&self, task: usize) -> u128 {
        self.inner.solve_portable(self.inner_task(task))
    }
    fn warms_caches(&self) -> bool {
        self.inner.warms_caches()
    }
    fn fault(&self) -> Option<Error> {
        self.inner.fault()
    }
    fn device(&self) -> Option<String> {
        self.inner.device()
    }
    fn device_work(&self) -> Option<crate::work::Work> {
        self.inner.device_work()
    }
    fn fingerprint(&self) -> String {
        let inner = self.inner.fingerprint();
        let words = inner.as_bytes().chunks(8).map(|c| {
            let mut word = [0u8; 8];
            word[..c.len()].copy_from_slice(c);
            u64::from_le_bytes(word)
        });
        fingerprint_words(words.chain([self.copies as u64]))
    }
    fn describe(&self) -> String {
        format!("{}, {} copies", self.inner.describe(), self.copies)
    }
}

/// Which row to count: its thread count, copies and round, and where it stands in the run
/// (for the observer).
#[derive(Debug, Clone, Copy)]
pub(super) struct RowSpec {
    /// Worker threads.
    pub threads: usize,
    /// Times each board is counted.
    pub copies: usize,
    /// Round (1-based; 0 for the untimed warm-up).
    pub round: u32,
    /// Index of the row's first count among all counts of the run.
    pub index: usize,
    /// Counts in the whole run, where known.
    pub planned: Option<usize>,
}

/// How one row went.
pub(super) enum RowOutcome {
    /// Every count matched: the row's sample and the tasks it rechecked.
    Counted { sample: Sample, rechecked: usize },
    /// The first wrong count.
    Wrong(WrongCount),
}

/// Counts every board of the workload (`plans`, in workload order) `row.copies` times on
/// `row.threads` threads, and times the whole row: wall clock and process CPU time.
///
/// # Errors
/// [`Error::Threads`] or [`Error::ThreadPool`], [`Error::RecheckMismatch`] when a rechecked
/// task's two code paths disagree, [`Error::Overflow`] for copies beyond counting,
/// [`Error::Interrupted`] when the observer asked to stop.
pub(super) fn count_row(
    config: &BenchConfig,
    plans: &[&dyn Plan],
    row: RowSpec,
    observer: &dyn BenchObserver,
) -> Result<RowOutcome, Error> {
    let threads = CountOptions::new().threads(row.threads).checked_threads()?;
    let pool = plan::thread_pool(threads)?;
    let recheck = row_recheck(config.recheck, row.copies)?;
    let (wall, cpu) = (Instant::now(), CpuClock::start());
    let (mut solutions, mut tasks, mut rechecked) = (0u128, 0u64, 0);
    for (k, &inner) in plans.iter().enumerate() {
        let n = inner.n();
        let label = match row.round {
            0 => format!("warm-up, {threads} threads, N = {n}"),
            r => format!("round {r}, {threads} threads, N = {n} × {}", row.copies),
        };
        observer.count_started(row.index + k, row.planned, &label);
        let copies = Copies::new(inner, row.copies).ok_or_else(too_many)?;
        let (total, checked) = run_checked(
            &copies,
            recheck,
            config.fault,
            &StopWhenAsked(observer),
            &|_| {},
            |plan, progress| plan::execute_seq(plan, &(0..plan.len()), &pool, progress),
        )?;
        let got = total?;
        let published = known::total(n).expect("workload sizes have published values");
        let expected = published
            .checked_mul(row.copies as u128)
            .ok_or_else(too_many)?;
        if got != expected {
            let (copies, round) = (row.copies, row.round);
            return Ok(RowOutcome::Wrong(WrongCount {
                n,
                threads,
                copies,
                round,
                got,
                expected,
            }));
        }
        solutions += got;
        tasks += copies.len() as u64;
        rechecked += checked.tasks.len();
    }
    let sample = Sample {
        wall_s: wall.elapsed().as_secs_f64(),
        cpu_s: cpu.elapsed().map(|d| d.as_secs_f64()),
        copies: row.copies,
        solutions,
        tasks,
    };
    Ok(RowOutcome::Counted { sample, rechecked })
}

/// A row's counts report to no one, but stop (between tasks) when the observer asks.
struct StopWhenAsked<'a>(&'a dyn BenchObserver);

impl Progress for StopWhenAsked<'_> {
    fn should_stop(&self) -> bool {
        self.0.should_stop()
    }
}

/// The recheck of a row of `copies` copies: the configured fraction of one copy's tasks,
/// drawn from all of them. The one checker thread then has a copy's share of rechecks
/// whatever the thread count, instead of holding up a wide row for many times that.
fn row_recheck(recheck: Option<Recheck>, copies: usize) -> Result<Option<Recheck>, Error> {
    recheck
        .map(|r| Recheck::new(r.fraction() / copies.max(1) as f64))
        .transpose()
}

fn too_many() -> Error {
    Error::Overflow("the copies of a benchmark row".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_count_their_plan_that_many_times_copy_after_copy() {
        let plan = CountOptions::new().threads(1).plan(8).unwrap();
        let copies = Copies::new(plan.as_ref(), 3).unwrap();
        assert_eq!(copies.len(), 3 * plan.len());
        assert_eq!(copies.inner_task(plan.len() + 1), 1);
        let pool = plan::thread_pool(2).unwrap();
        let total = plan::execute_seq(&copies, &(0..copies.len()), &pool, &plan::NoProgress);
        assert_eq!(total.unwrap(), 3 * 92);
        assert_ne!(copies.fingerprint(), plan.fingerprint());
    }

    #[test]
    fn a_row_counts_every_copy_and_a_fault_in_one_makes_it_wrong() {
        let plan = CountOptions::new().threads(1).plan(8).unwrap();
        let mut config = BenchConfig {
            workload: super::super::workload(super::super::Size::Tiny),
            threads: vec![3],
            rounds: 1,
            duration: None,
            recheck: None,
            fault: None,
            base: CountOptions::new(),
        };
        let row = RowSpec {
            threads: 3,
            copies: 3,
            round: 2,
            index: 0,
            planned: None,
        };
        match count_row(&config, &[plan.as_ref()], row, &()).unwrap() {
            RowOutcome::Counted { sample, .. } => {
                assert_eq!((sample.solutions, sample.copies), (276, 3));
                assert_eq!(sample.tasks, 3 * plan.len() as u64);
            }
            RowOutcome::Wrong(w) => panic!("{w:?}"),
        }
        config.fault = Some(crate::recheck::Fault { task: 0, delta: 1 });
        match count_row(&config, &[plan.as_ref()], row, &()).unwrap() {
            RowOutcome::Wrong(w) => assert_eq!((w.copies, w.got, w.expected), (3, 277, 276)),
            RowOutcome::Counted { .. } => panic!("the fault went unnoticed"),
        }
    }

    #[test]
    fn a_row_rechecks_one_copys_share_of_its_tasks() {
        let once = Recheck::new(0.5).unwrap();
        let row = row_recheck(Some(once), 4).unwrap().unwrap();
        assert_eq!(row.fraction(), 0.125);
        assert_eq!(row_recheck(None, 4).unwrap(), None);
    }
}
