//! Subproblem plans and the parallel executor.
//!
//! Every engine turns a board size into a [`Plan`]: a deterministic list of independent tasks,
//! each with a cost estimate and a weighted count. The same list feeds the progress bar,
//! checkpoints and cluster shards, so any engine gets those for free. [`execute`] runs any
//! subset of a plan on a local rayon pool, largest tasks first, and reports each finished task
//! to a [`Progress`] observer (never from inside the search loop).

use std::sync::atomic::{AtomicUsize, Ordering};

use sha2::{Digest, Sha256};

use crate::error::Error;

/// A deterministic list of independent subproblems for one board size and engine.
pub trait Plan: Send + Sync {
    /// The board size.
    fn n(&self) -> u32;
    /// The engine that made the plan.
    fn engine(&self) -> &'static str;
    /// The number of tasks.
    fn len(&self) -> usize;
    /// Whether the plan has no tasks.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Relative cost estimate of task `task` (only ratios between tasks matter).
    fn cost(&self, task: usize) -> u64;
    /// Solves task `task`: its number of solutions, already multiplied by its symmetry weight.
    fn solve(&self, task: usize) -> u128;
    /// Solves task `task` like [`Plan::solve`], but on a second code path: the portable
    /// kernel or matcher instead of the assembly or SIMD one the CPU selected. `--recheck`
    /// compares the two (issue 12); a disagreement means faulty hardware or a bug.
    ///
    /// The default re-solves on the same code path, which still catches transient faults when
    /// it runs on another core; every engine overrides it with its portable path.
    fn solve_portable(&self, task: usize) -> u128 {
        self.solve(task)
    }
    /// A stable digest of the plan (engine, version, N, parameters and every task), so that
    /// results computed under one plan are never mixed with another.
    fn fingerprint(&self) -> String;
    /// A short human description of the plan's parameters, e.g. `split depth 3`.
    fn describe(&self) -> String;
    /// Whether [`Plan::unique`] can compute the number of fundamental solutions.
    fn has_unique(&self) -> bool {
        false
    }
    /// The number of fundamental solutions, given the finished total, if this engine can
    /// compute it.
    fn unique(&self, _total: u128) -> Option<u128> {
        None
    }
}

/// Hashes a sequence of words into a hex fingerprint (SHA-256, first 16 bytes).
pub fn fingerprint_words(words: impl IntoIterator<Item = u64>) -> String {
    let mut hasher = Sha256::new();
    for w in words {
        hasher.update(w.to_le_bytes());
    }
    let digest = hasher.finalize();
    digest[..16].iter().map(|b| format!("{b:02x}")).collect()
}

/// Observes a run: told the plan size up front and each task as it finishes.
///
/// Implementations must be cheap and thread-safe; they are called from worker threads
/// between tasks.
pub trait Progress: Sync {
    /// The run is about to start `tasks` tasks (of `plan_len` in the whole plan).
    fn start(&self, _tasks: usize, _plan_len: usize) {}
    /// Task `task` finished with weighted count `count`.
    fn task_done(&self, _task: usize, _count: u128) {}
    /// Whether workers should stop taking new tasks (Ctrl-C, a test's fault hook).
    fn should_stop(&self) -> bool {
        false
    }
}

/// A progress observer that ignores everything.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoProgress;

impl Progress for NoProgress {}

/// Builds the local thread pool the engines run on.
pub fn thread_pool(threads: usize) -> Result<rayon::ThreadPool, Error> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|i| format!("nqueens-{i}"))
        .build()
        .map_err(|e| Error::ThreadPool(e.to_string()))
}

/// The tasks of `ids` ordered largest estimated cost first (ties by id, so it is
/// deterministic).
pub fn largest_first(plan: &dyn Plan, ids: &[usize]) -> Vec<usize> {
    let mut order: Vec<(u64, usize)> = ids.iter().map(|&t| (plan.cost(t), t)).collect();
    order.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    order.into_iter().map(|(_, t)| t).collect()
}

/// Solves the tasks `ids` of `plan` on `pool` and returns the sum of their weighted counts.
///
/// Workers take tasks from one shared queue, largest first, so the tail of the run is made of
/// small tasks and no thread idles long. Returns [`Error::Interrupted`] if `progress` asked to
/// stop before every task was done (the finished ones were already reported).
pub fn execute(
    plan: &dyn Plan,
    ids: &[usize],
    pool: &rayon::ThreadPool,
    progress: &dyn Progress,
) -> Result<u128, Error> {
    let order = largest_first(plan, ids);
    progress.start(order.len(), plan.len());
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let sums = pool.broadcast(|_| {
        let mut sum = 0u128;
        while !progress.should_stop() {
            let Some(&task) = order.get(next.fetch_add(1, Ordering::Relaxed)) else {
                break;
            };
            let count = plan.solve(task);
            sum += count;
            done.fetch_add(1, Ordering::Relaxed);
            progress.task_done(task, count);
        }
        sum
    });
    if done.load(Ordering::Relaxed) < order.len() {
        return Err(Error::Interrupted);
    }
    Ok(sums.into_iter().sum())
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Squares(usize);

    impl Plan for Squares {
        fn n(&self) -> u32 {
            0
        }
        fn engine(&self) -> &'static str {
            "squares"
        }
        fn len(&self) -> usize {
            self.0
        }
        fn cost(&self, task: usize) -> u64 {
            task as u64
        }
        fn solve(&self, task: usize) -> u128 {
            (task * task) as u128
        }
        fn fingerprint(&self) -> String {
            fingerprint_words([self.0 as u64])
        }
        fn describe(&self) -> String {
            String::new()
        }
    }

    struct StopAfter(AtomicUsize);

    impl Progress for StopAfter {
        fn task_done(&self, _: usize, _: u128) {
            self.0.fetch_sub(1, Ordering::Relaxed);
        }
        fn should_stop(&self) -> bool {
            self.0.load(Ordering::Relaxed) == 0
        }
    }

    #[test]
    fn execute_sums_every_task_once_for_any_thread_count() {
        let plan = Squares(100);
        let ids: Vec<usize> = (0..100).collect();
        for threads in 1..=3 {
            let pool = thread_pool(threads).unwrap();
            let sum = execute(&plan, &ids, &pool, &NoProgress).unwrap();
            assert_eq!(sum, (0..100u128).map(|x| x * x).sum::<u128>());
        }
    }

    #[test]
    fn a_stop_request_is_an_interruption_not_a_short_total() {
        let plan = Squares(50);
        let ids: Vec<usize> = (0..50).collect();
        let pool = thread_pool(1).unwrap();
        let stop = StopAfter(AtomicUsize::new(5));
        assert!(matches!(
            execute(&plan, &ids, &pool, &stop),
            Err(Error::Interrupted)
        ));
    }

    #[test]
    fn largest_first_orders_by_cost_then_id() {
        let plan = Squares(5);
        assert_eq!(largest_first(&plan, &[1, 4, 2]), vec![4, 2, 1]);
    }

    #[test]
    fn fingerprints_differ_when_words_differ() {
        assert_ne!(fingerprint_words([1, 2]), fingerprint_words([2, 1]));
        assert_eq!(fingerprint_words([7]).len(), 32);
    }
}
