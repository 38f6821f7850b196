//! Rechecking: re-solve a deterministic random fraction of a plan's tasks on a second code path
//! and compare (`count --recheck FRACTION`): a faulty core or a
//! miscompiled kernel shows up as a mismatch instead of a wrong total.
//!
//! Long counts on many machines meet flaky hardware, and a wrong count looks like any other.
//! A checked run (`run_checked`, inside [`crate::count()`] and
//! [`ResumableCount`](crate::shard::ResumableCount)): every task the [`Recheck`] selects is solved as usual by the
//! workers and, once reported finished, solved again by one extra checker thread with [`Plan::solve_portable`] (the
//! portable kernel or matcher instead of the assembly or SIMD one). Any disagreement stops the
//! run and is returned as [`Error::RecheckMismatch`], naming the task, so nothing claims
//! success. The selection depends only on the plan and the fraction, so a resumed or sharded
//! run rechecks the same tasks; besides them, the first task each run finishes is rechecked,
//! so that a small run (1% of 38 tasks) rechecks at least one.
//!
//! A [`Fault`] is a test hook passed through the options (never a global): it changes the
//! fast path's count of one task, as a faulty core would.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Mutex, PoisonError};

use crate::error::Error;
use crate::plan::{Plan, Progress};
use crate::tap::{Hook, Tap};

/// Which fraction of the tasks to re-solve on the second code path.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Recheck {
    fraction: f64,
    checkers: usize,
}

impl Recheck {
    /// Rechecks `fraction` of the tasks (0 < fraction ≤ 1).
    ///
    /// # Errors
    /// [`Error::Recheck`] for a fraction outside (0, 1] or not a number.
    pub fn new(fraction: f64) -> Result<Self, Error> {
        if fraction > 0.0 && fraction <= 1.0 {
            Ok(Recheck {
                fraction,
                checkers: 1,
            })
        } else {
            Err(Error::Recheck(format!(
                "the fraction must be above 0 and at most 1, got {fraction}"
            )))
        }
    }

    /// The fraction of tasks rechecked.
    pub fn fraction(&self) -> f64 {
        self.fraction
    }

    /// Rechecks on `checkers` threads beside the workers: a run whose workers mostly wait
    /// for a GPU leaves the CPU's cores to the portable path, which is slower than the GPU by
    /// far. Any value is accepted: it is clamped to 1..=[`MAX_THREADS`](crate::MAX_THREADS),
    /// as more checkers than that could only take turns on the CPUs.
    pub fn checkers(mut self, checkers: usize) -> Self {
        self.checkers = checkers.clamp(1, crate::MAX_THREADS);
        self
    }

    /// The threads that recheck.
    pub fn checker_threads(&self) -> usize {
        self.checkers
    }

    /// Whether task `task` of the plan with fingerprint seed `seed` is rechecked: a hash of
    /// both, compared with the fraction (deterministic, and about `fraction` of all tasks).
    pub fn selects(&self, seed: u64, task: usize) -> bool {
        let h = splitmix64(seed ^ (task as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
        (h as f64) < self.fraction * 18_446_744_073_709_551_616.0
    }
}

/// The selection seed of a plan: the first 64 bits of its fingerprint.
pub fn seed(plan: &dyn Plan) -> u64 {
    let fingerprint = plan.fingerprint();
    u64::from_str_radix(&fingerprint[..fingerprint.len().min(16)], 16).unwrap_or(0)
}

/// A good 64-bit mix (Steele, Lea and Flood's SplitMix64 finaliser).
fn splitmix64(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// Test hook: the fast code path's count of task `task` is off by `delta`, as on a faulty
/// core. Passed through the options of a run; nothing global.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fault {
    /// The task whose count is changed.
    pub task: usize,
    /// What is added to it.
    pub delta: u128,
}

/// How a checked run ended, besides the run's own result.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Rechecked {
    /// The tasks solved on both code paths with the same count, in ascending order.
    pub tasks: Vec<usize>,
}

/// Runs `body` on a view of `plan` whose selected tasks are rechecked on a second thread.
///
/// `body` gets the plan and progress observer to run with (e.g. [`crate::plan::execute`]).
/// `on_agree` is called, from the checker thread, for each task both code paths agreed on
/// (e.g. to record it in a checkpoint). With neither `recheck` nor `fault`, `body` runs on
/// `plan` and `progress` themselves.
///
/// # Errors
/// [`Error::RecheckMismatch`] for the first task whose counts disagree (workers are asked to
/// stop at once); [`Error::ThreadPool`] if a checker thread cannot be started; otherwise
/// `body`'s result.
pub(crate) fn run_checked<R>(
    plan: &dyn Plan,
    recheck: Option<Recheck>,
    fault: Option<Fault>,
    progress: &dyn Progress,
    on_agree: &(dyn Fn(usize) + Sync),
    body: impl FnOnce(&dyn Plan, &dyn Progress) -> R,
) -> Result<(R, Rechecked), Error> {
    if recheck.is_none() && fault.is_none() {
        return Ok((body(plan, progress), Rechecked::default()));
    }
    let failed = AtomicBool::new(false);
    let (tx, rx) = mpsc::channel();
    let rx = Mutex::new(rx);
    let checkers = recheck.map_or(1, |r| r.checkers);
    let (result, checked) = std::thread::scope(|scope| {
        let mut started = Vec::with_capacity(checkers);
        for _ in 0..checkers {
            let thread = std::thread::Builder::new()
                .name("nqueens-recheck".to_string())
                .spawn_scoped(scope, || check_all(plan, &rx, on_agree, &failed));
            match thread {
                Ok(thread) => started.push(thread),
                // The system refused a thread: the started checkers end once the queue
                // closes (the sender is dropped on return), and the scope joins them.
                Err(e) => return Err(Error::ThreadPool(format!("a recheck thread: {e}"))),
            }
        }
        let checkers = started;
        let result = {
            let view = Faulty { inner: plan, fault };
            let observer = Tap {
                inner: progress,
                hook: Queue {
                    failed: &failed,
                    seed: seed(plan),
                    recheck,
                    queue: tx,
                    first: AtomicBool::new(true),
                },
            };
            body(&view, &observer)
            // The observer and its sender are dropped here, so the checker drains and ends.
        };
        let checked: Vec<_> = checkers
            .into_iter()
            .map(|c| {
                c.join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
            .collect();
        Ok((result, checked))
    })?;
    let mut agreed = Vec::new();
    for tasks in checked {
        agreed.extend(tasks?);
    }
    agreed.sort_unstable();
    Ok((result, Rechecked { tasks: agreed }))
}

/// Solves `tasks` on both code paths (the fast one with `fault`, if any), in parallel on
/// `pool`: their counts, in order.
///
/// # Errors
/// [`Error::RecheckMismatch`] for a task whose two counts disagree.
pub fn solve_both(
    plan: &dyn Plan,
    tasks: &[usize],
    fault: Option<Fault>,
    pool: &rayon::ThreadPool,
) -> Result<Vec<u128>, Error> {
    use rayon::prelude::*;
    let fast = Faulty { inner: plan, fault };
    pool.install(|| {
        tasks
            .par_iter()
            .map(|&task| {
                let (fast, portable) = (fast.solve(task), plan.solve_portable(task));
                if fast == portable {
                    Ok(fast)
                } else {
                    Err(Error::RecheckMismatch {
                        task,
                        fast,
                        portable,
                        device: plan.device(),
                    })
                }
            })
            .collect()
    })
}

/// Solves `tasks` on the portable code path, in parallel on `pool`: their counts, in order.
pub fn solve_portable(plan: &dyn Plan, tasks: &[usize], pool: &rayon::ThreadPool) -> Vec<u128> {
    use rayon::prelude::*;
    pool.install(|| tasks.par_iter().map(|&t| plan.solve_portable(t)).collect())
}

/// A checker thread: re-solves each task it takes from the queue and compares, until the
/// queue is closed and empty or a check failed.
fn check_all(
    plan: &dyn Plan,
    queue: &Mutex<Receiver<(usize, u128)>>,
    on_agree: &(dyn Fn(usize) + Sync),
    failed: &AtomicBool,
) -> Result<Vec<usize>, Error> {
    let mut agreed = Vec::new();
    loop {
        let next = queue.lock().unwrap_or_else(PoisonError::into_inner).recv();
        let Ok((task, fast)) = next else {
            break;
        };
        if failed.load(Ordering::Acquire) {
            break;
        }
        let portable = plan.solve_portable(task);
        if portable != fast {
            failed.store(true, Ordering::Release);
            return Err(Error::RecheckMismatch {
                task,
                fast,
                portable,
                device: plan.device(),
            });
        }
        on_agree(task);
        agreed.push(task);
    }
    Ok(agreed)
}

/// A plan whose fast code path has the injected fault, if any.
struct Faulty<'a> {
    inner: &'a dyn Plan,
    fault: Option<Fault>,
}

impl Faulty<'_> {
    /// Task `task`'s count, with the injected fault if it is this task's.
    fn with_fault(&self, task: usize, count: u128) -> u128 {
        match self.fault {
            Some(f) if f.task == task => count.wrapping_add(f.delta),
            _ => count,
        }
    }
}

impl Plan for Faulty<'_> {
    fn n(&self) -> u32 {
        self.inner.n()
    }
    fn engine(&self) -> &'static str {
        self.inner.engine()
    }
    fn len(&self) -> usize {
        self.inner.len()
    }
    fn cost(&self, task: usize) -> u64 {
        self.inner.cost(task)
    }
    fn solve(&self, task: usize) -> u128 {
        self.with_fault(task, self.inner.solve(task))
    }
    fn batch(&self) -> usize {
        self.inner.batch()
    }
    fn solve_batch(&self, tasks: &[usize]) -> Vec<u128> {
        let counts = self.inner.solve_batch(tasks);
        tasks
            .iter()
            .zip(counts)
            .map(|(&t, c)| self.with_fault(t, c))
            .collect()
    }
    fn solve_portable(&self, task: usize) -> u128 {
        self.inner.solve_portable(task)
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
        self.inner.fingerprint()
    }
    fn describe(&self) -> String {
        self.inner.describe()
    }
    fn has_unique(&self) -> bool {
        self.inner.has_unique()
    }
    fn unique(&self, total: u128) -> Option<u128> {
        self.inner.unique(total)
    }
}

/// Queues the finished tasks the recheck selects for the checker (after the wrapped observer
/// heard of them, so a checkpoint records a task before its recheck); asks the workers to stop
/// once a recheck failed.
struct Queue<'a> {
    failed: &'a AtomicBool,
    seed: u64,
    recheck: Option<Recheck>,
    queue: Sender<(usize, u128)>,
    /// Whether no task has finished yet: the first one is rechecked whatever the selection.
    first: AtomicBool,
}

impl Hook for Queue<'_> {
    fn after_done(&self, task: usize, count: u128) {
        let first = self.first.swap(false, Ordering::AcqRel);
        if self
            .recheck
            .is_some_and(|r| first || r.selects(self.seed, task))
        {
            // A send fails only once the checker has stopped on a mismatch.
            let _ = self.queue.send((task, count));
        }
    }

    fn should_stop(&self) -> bool {
        self.failed.load(Ordering::Acquire)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::mirror::MirrorPlan;
    use crate::plan::{execute, thread_pool, NoProgress};

    fn run(
        plan: &dyn Plan,
        recheck: f64,
        fault: Option<Fault>,
    ) -> Result<(u128, Rechecked), Error> {
        run_on(plan, Recheck::new(recheck).unwrap(), fault)
    }

    fn run_on(
        plan: &dyn Plan,
        recheck: Recheck,
        fault: Option<Fault>,
    ) -> Result<(u128, Rechecked), Error> {
        let ids: Vec<usize> = (0..plan.len()).collect();
        let pool = thread_pool(2).unwrap();
        let recheck = Some(recheck);
        let (total, rechecked) =
            run_checked(plan, recheck, fault, &NoProgress, &|_| {}, |p, o| {
                execute(p, &ids, &pool, o)
            })?;
        Ok((total?, rechecked))
    }

    #[test]
    fn every_engine_s_portable_path_agrees_with_its_fast_path_on_every_task() {
        for name in ["mirror", "symmetry", "mitm"] {
            for n in [4, 7, 10, 12] {
                let options = crate::engine::PlanOptions::default();
                let plan = crate::engine::plan(name, n, &options).unwrap();
                for task in 0..plan.len() {
                    assert_eq!(
                        plan.solve(task),
                        plan.solve_portable(task),
                        "{name}, N = {n}, task {task}"
                    );
                }
            }
        }
        let text = "1111111\n1011111\n1111101\n1111111\n1101111\n1111111\n1111011\n";
        let mask = crate::puzzles::mask::Mask::parse(text, 7, "t").unwrap();
        let plan = crate::puzzles::mask::MaskPlan::new(&mask, 2);
        for task in 0..plan.len() {
            assert_eq!(
                plan.solve(task),
                plan.solve_portable(task),
                "mask, task {task}"
            );
        }
    }

    #[test]
    fn fractions_outside_zero_to_one_are_refused() {
        for bad in [0.0, -0.5, 1.5, f64::NAN, f64::INFINITY] {
            assert!(Recheck::new(bad).is_err(), "{bad}");
        }
        assert!(Recheck::new(1.0).is_ok());
    }

    #[test]
    fn the_selection_is_deterministic_and_about_the_fraction() {
        let r = Recheck::new(0.25).unwrap();
        let picked = (0..10_000).filter(|&t| r.selects(42, t)).count();
        assert!((2_000..3_000).contains(&picked), "{picked}");
        assert!((0..10_000).all(|t| r.selects(42, t) == r.selects(42, t)));
        let all = Recheck::new(1.0).unwrap();
        assert!((0..1000).all(|t| all.selects(7, t)));
    }

    #[test]
    fn a_fraction_that_selects_no_task_still_rechecks_the_first_one_finished() {
        let plan = MirrorPlan::new(9, 2);
        let tiny = Recheck::new(1e-12).unwrap();
        let seed = seed(&plan);
        assert!((0..plan.len()).all(|t| !tiny.selects(seed, t)));
        let (total, rechecked) = run_on(&plan, tiny, None).unwrap();
        assert_eq!(total, 352);
        assert_eq!(rechecked.tasks.len(), 1, "{rechecked:?}");
    }

    #[test]
    fn agreeing_paths_give_the_total_and_list_every_rechecked_task() {
        let plan = MirrorPlan::new(9, 2);
        let (total, rechecked) = run(&plan, 1.0, None).unwrap();
        assert_eq!(total, 352);
        assert_eq!(rechecked.tasks, (0..plan.len()).collect::<Vec<_>>());
    }

    #[test]
    fn several_checkers_recheck_every_task_once_and_catch_a_fault() {
        let plan = MirrorPlan::new(10, 3);
        let all = Recheck::new(1.0).unwrap().checkers(3);
        let (total, rechecked) = run_on(&plan, all, None).unwrap();
        assert_eq!(total, 724);
        assert_eq!(rechecked.tasks, (0..plan.len()).collect::<Vec<_>>());
        let fault = Fault { task: 5, delta: 2 };
        match run_on(&plan, all, Some(fault)) {
            Err(Error::RecheckMismatch { task: 5, .. }) => {}
            other => panic!("expected a mismatch on task 5, got {other:?}"),
        }
    }

    #[test]
    fn a_fault_on_a_rechecked_task_is_a_mismatch_naming_it() {
        let plan = MirrorPlan::new(9, 2);
        let fault = Fault { task: 3, delta: 1 };
        match run(&plan, 1.0, Some(fault)) {
            Err(
                e @ Error::RecheckMismatch {
                    task,
                    fast,
                    portable,
                    device: None,
                },
            ) => {
                assert_eq!(task, 3);
                assert_eq!(fast, portable + 1);
                assert!(e.to_string().contains("the fast code path counted"), "{e}");
            }
            other => panic!("expected a mismatch, got {other:?}"),
        }
    }

    #[test]
    fn a_gpu_mismatch_names_both_sides_and_blames_neither_alone() {
        let text = Error::RecheckMismatch {
            task: 7,
            fast: 12,
            portable: 11,
            device: Some("GPU NVIDIA H200".into()),
        }
        .to_string();
        assert!(
            text.contains("the joins on GPU NVIDIA H200 counted 12")
                && text.contains("the CPU's portable code path 11")
                && text.contains("either may be wrong"),
            "{text}"
        );
        assert!(!text.contains("the fast code path"), "{text}");
    }
}
