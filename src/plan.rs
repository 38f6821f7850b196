//! Subproblem plans and the parallel executor.
//!
//! Every engine turns a board size into a [`Plan`]: a deterministic list of independent tasks,
//! each with a cost estimate and a weighted count. The same list feeds the progress bar,
//! checkpoints and cluster shards, so any engine gets those for free. [`execute`] runs any
//! subset of a plan on a local rayon pool, largest tasks first, and reports each finished task
//! to a [`Progress`] observer (never from inside the search loop).

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use sha2::{Digest, Sha256};

use crate::error::Error;
use crate::subsample::{Draws, Subsample};
use crate::work::Work;

/// A deterministic list of independent subproblems for one board size and engine.
///
/// Task ids are laid out largest estimated cost first (ids in ascending order never rise in
/// [`Plan::cost`]), so running ids in order runs the big tasks first and a shard of
/// strided ids gets its share of every size. A plan answers by index: it need not hold a
/// list of its tasks (the mitm plan at N = 27 has 65 M tasks).
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
    /// Relative cost estimate of task `task` (only ratios between tasks matter); never
    /// larger than the cost of task `task − 1`.
    fn cost(&self, task: usize) -> u64;
    /// The task costs in id order as runs of equal cost, `(tasks, cost of each)`: one run
    /// per task unless the plan knows better. A plan of hundreds of millions of tasks in a
    /// few cost classes (mitm from N = 28) gives one run per class, so a pass over its
    /// costs (an estimate's design) does not visit every task.
    fn cost_runs(&self) -> Box<dyn Iterator<Item = (usize, u64)> + '_> {
        Box::new((0..self.len()).map(|t| (1, self.cost(t))))
    }
    /// Solves task `task`: its number of solutions, already multiplied by its symmetry weight.
    ///
    /// # Panics
    ///
    /// If `task` is not below [`Plan::len`], as every method here that takes a task id.
    fn solve(&self, task: usize) -> u128;
    /// How many tasks a worker hands [`Plan::solve_batch`] at once: 1 for engines that solve
    /// a task on the worker's thread; more for one that hands work to a device, which needs
    /// many tasks in flight to be kept busy.
    fn batch(&self) -> usize {
        1
    }
    /// Solves `tasks` like [`Plan::solve`] each, in one call: their counts, in order. An
    /// engine that hands its work to a device sends it all before it waits for any of it.
    fn solve_batch(&self, tasks: &[usize]) -> Vec<u128> {
        tasks.iter().map(|&t| self.solve(t)).collect()
    }
    /// Solves task `task` like [`Plan::solve`], but on a second code path: the portable
    /// kernel or matcher instead of the assembly or SIMD one the CPU selected. `--recheck`
    /// compares the two; a disagreement means faulty hardware or a bug.
    ///
    /// The default re-solves on the same code path, which still catches transient faults when
    /// it runs on another core; every engine overrides it with its portable path.
    fn solve_portable(&self, task: usize) -> u128 {
        self.solve(task)
    }
    /// Solves task `task` like [`Plan::solve`] and says what it did ([`Work`]), for engines
    /// that keep work counters (`None` for the others). Slower than [`Plan::solve`] by the
    /// counters' clock readings: for estimates and comparisons, not for counts.
    fn solve_counted(&self, _task: usize) -> Option<(u128, Work)> {
        None
    }
    /// Solves part of task `task` for an estimate: the work its pieces share and `draws.count`
    /// pieces drawn at random, with what scales them back to the whole task
    /// ([`crate::subsample`]). `None` where the engine does not cut its tasks into pieces
    /// (the estimate then solves and times them whole).
    fn solve_sampled(&self, _task: usize, _draws: Draws) -> Option<Subsample> {
        None
    }
    /// Whether solving tasks fills caches that later tasks share, so that an estimate must
    /// solve its sample once untimed before it times it (a count spreads the filling over
    /// every task; a sample of a few dozen would pay it almost in full).
    fn warms_caches(&self) -> bool {
        true
    }
    /// The most memory one worker thread holds while it solves this plan's tasks (its own
    /// buffers, beyond what the plan shares), in bytes: a run holds it against the memory it
    /// may use before it starts its workers ([`crate::memory`]). The default,
    /// [`SEARCH_WORKER_BYTES`], suits a backtracking search.
    fn worker_bytes(&self) -> u64 {
        SEARCH_WORKER_BYTES
    }
    /// A stable digest of the plan (engine, version, N, parameters and its tasks; a huge plan
    /// may hash its parameters, its cost classes and a deterministic sample of tasks), so
    /// that results computed under one plan are never mixed with another.
    fn fingerprint(&self) -> String;
    /// A short human description of the plan's parameters, e.g. `split depth 3`.
    fn describe(&self) -> String;
    /// A fault that makes this plan's counts worthless from now on (a GPU lost in a run),
    /// if one happened. Every caller of the solve methods asks after each task and keeps
    /// no count solved once it is set; the CPU engines never fault.
    fn fault(&self) -> Option<Error> {
        None
    }
    /// The device other than this CPU that solves the tasks (`GPU NAME`), if any. A task's
    /// time is then wall time rather than its thread's CPU time, for an estimate: it spends
    /// it waiting on the device.
    fn device(&self) -> Option<String> {
        None
    }
    /// What that device did for this plan so far, every task together (its submissions,
    /// waits, steps and bytes, and the joins' counters), where it keeps such totals.
    fn device_work(&self) -> Option<Work> {
        None
    }
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

/// Observes a run: told the plan size up front and each task as it starts and finishes.
///
/// Implementations must be cheap and thread-safe; they are called from worker threads
/// between tasks.
pub trait Progress: Sync {
    /// The run is about to start `tasks` tasks (of `plan_len` in the whole plan).
    fn start(&self, _tasks: usize, _plan_len: usize) {}
    /// The tasks about to run have estimated cost `cost` in all (sum of [`Plan::cost`]);
    /// called once, right after [`Progress::start`].
    fn start_work(&self, _cost: u128) {}
    /// The run solves these tasks first (called before [`Progress::start`]): each
    /// `(slice, task)` says that `task` was drawn from slice `slice` of `slices` slices of
    /// equal estimated cost of the plan, slice 0 holding the largest tasks, so its time per
    /// cost unit stands for its slice's ([`crate::probe`]).
    fn probes(&self, _slices: usize, _probes: &[(usize, usize)]) {}
    /// Task `task`, of estimated cost `cost`, was taken by a worker.
    fn task_started(&self, _task: usize, _cost: u64) {}
    /// Task `task` finished with weighted count `count`.
    fn task_done(&self, _task: usize, _count: u128) {}
    /// Task `task`, of estimated cost `cost`, finished (called right after
    /// [`Progress::task_done`]).
    fn work_done(&self, _task: usize, _cost: u64) {}
    /// Whether workers should stop taking new tasks (Ctrl-C, a test's fault hook).
    fn should_stop(&self) -> bool {
        false
    }
}

/// The memory a worker of a backtracking search holds (its state is a few kilobytes; the
/// rest is room for its stack), in bytes: see [`Plan::worker_bytes`].
pub const SEARCH_WORKER_BYTES: u64 = 1 << 20;

/// A progress observer that ignores everything.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoProgress;

impl Progress for NoProgress {}

/// Builds the local thread pool the engines run on, of `threads` threads.
///
/// # Errors
/// [`Error::Threads`] unless `threads` is 1 to [`MAX_THREADS`](crate::MAX_THREADS) (a
/// pool of millions of threads would exhaust memory before it failed);
/// [`Error::ThreadPool`] if the system refuses a thread.
pub fn thread_pool(threads: usize) -> Result<rayon::ThreadPool, Error> {
    if !(1..=crate::MAX_THREADS).contains(&threads) {
        return Err(Error::Threads {
            threads,
            max: crate::MAX_THREADS,
        });
    }
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|i| format!("nqueens-{i}"))
        .build()
        .map_err(|e| Error::ThreadPool(e.to_string()))
}

/// A sequence of tasks to run, in the order to start them, that need not be stored: the
/// whole plan (`0..len`), a shard of it, or an explicit list.
pub trait TaskSeq: Sync {
    /// The number of positions in the sequence.
    fn positions(&self) -> usize;
    /// The task at `position`, or `None` to skip that position (e.g. already done).
    fn task(&self, position: usize) -> Option<usize>;
    /// The number of tasks this sequence runs in `plan` and their estimated cost in all. The
    /// default visits every position ([`workload_by_task`]), which takes tens of seconds
    /// for the billions of tasks of N ≥ 28; sequences that follow the plan's ids in order
    /// read its [`Plan::cost_runs`] instead.
    fn workload(&self, plan: &dyn Plan) -> (usize, u128) {
        workload_by_task(plan, self)
    }
    /// A position of this sequence whose task is plan id `id`, or one near it of about the
    /// same cost, not already done; `None` where the sequence cannot say (then no task is
    /// probed first, [`crate::probe`]).
    fn position_near(&self, _id: usize) -> Option<usize> {
        None
    }
    /// A position before which every task is done (so the search for the first task to do
    /// starts there): 0 unless the sequence knows better.
    fn first_pending(&self) -> usize {
        0
    }
}

impl TaskSeq for std::ops::Range<usize> {
    fn positions(&self) -> usize {
        self.len()
    }
    fn task(&self, position: usize) -> Option<usize> {
        Some(self.start + position)
    }
    fn workload(&self, plan: &dyn Plan) -> (usize, u128) {
        let cost = cost_by_runs(plan, |ids| {
            ids.end
                .min(self.end)
                .saturating_sub(ids.start.max(self.start))
        });
        (self.len(), cost)
    }
    fn position_near(&self, id: usize) -> Option<usize> {
        self.contains(&id).then(|| id - self.start)
    }
}

/// The estimated cost of the tasks of `plan` that `mine` counts in each range of ids, one
/// run of equal cost ([`Plan::cost_runs`]) at a time.
pub fn cost_by_runs(plan: &dyn Plan, mine: impl Fn(std::ops::Range<usize>) -> usize) -> u128 {
    let mut start = 0;
    let mut cost = 0u128;
    for (tasks, each) in plan.cost_runs() {
        let ids = start..start + tasks;
        cost += mine(ids) as u128 * u128::from(each);
        start += tasks;
    }
    cost
}

impl TaskSeq for [usize] {
    fn positions(&self) -> usize {
        self.len()
    }
    fn task(&self, position: usize) -> Option<usize> {
        self.get(position).copied()
    }
}

impl TaskSeq for Vec<usize> {
    fn positions(&self) -> usize {
        self.len()
    }
    fn task(&self, position: usize) -> Option<usize> {
        self.get(position).copied()
    }
}

/// The tasks of `ids` ordered largest estimated cost first (ties by id, so it is
/// deterministic). Meant for short explicit lists; plans and shards are already in order.
pub fn largest_first(plan: &dyn Plan, ids: &[usize]) -> Vec<usize> {
    let mut order: Vec<(u64, usize)> = ids.iter().map(|&t| (plan.cost(t), t)).collect();
    order.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    order.into_iter().map(|(_, t)| t).collect()
}

/// Solves the tasks `ids` of `plan` on `pool`, largest first, and returns the sum of their
/// weighted counts. For short explicit lists; see [`execute_seq`] for plans and shards.
///
/// # Errors
/// As [`execute_seq`].
pub fn execute(
    plan: &dyn Plan,
    ids: &[usize],
    pool: &rayon::ThreadPool,
    progress: &dyn Progress,
) -> Result<u128, Error> {
    execute_seq(plan, &largest_first(plan, ids), pool, progress)
}

/// Solves the tasks of `seq` in its order on `pool` and returns the sum of their weighted
/// counts, in memory independent of the number of tasks.
///
/// Workers take positions from one shared counter ([`Plan::batch`] at a time), so the tail
/// of a largest-first sequence is made of small tasks and no thread idles long. Returns [`Error::Interrupted`] if
/// `progress` asked to stop before every task was done (the finished ones were already
/// reported), and [`Error::Overflow`] if the sum does not fit.
pub fn execute_seq(
    plan: &dyn Plan,
    seq: &dyn TaskSeq,
    pool: &rayon::ThreadPool,
    progress: &dyn Progress,
) -> Result<u128, Error> {
    let (tasks, cost) = seq.workload(plan);
    progress.start(tasks, plan.len());
    progress.start_work(cost);
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let faulted = AtomicBool::new(false);
    let batch = plan.batch().max(1);
    let sums = pool.broadcast(|_| {
        let mut sum = Some(0u128);
        let mut tasks = Vec::with_capacity(batch);
        while !progress.should_stop() && !faulted.load(Ordering::Relaxed) {
            tasks.clear();
            while tasks.len() < batch {
                let position = next.fetch_add(1, Ordering::Relaxed);
                if position >= seq.positions() {
                    break;
                }
                if let Some(task) = seq.task(position) {
                    tasks.push(task);
                }
            }
            if tasks.is_empty() {
                break;
            }
            for &task in &tasks {
                progress.task_started(task, plan.cost(task));
            }
            let counts = plan.solve_batch(&tasks);
            if plan.fault().is_some() {
                faulted.store(true, Ordering::Relaxed);
                break;
            }
            for (&task, count) in tasks.iter().zip(counts) {
                sum = sum.and_then(|s| s.checked_add(count));
                done.fetch_add(1, Ordering::Relaxed);
                progress.task_done(task, count);
                progress.work_done(task, plan.cost(task));
            }
        }
        sum
    });
    if let Some(fault) = plan.fault() {
        return Err(fault);
    }
    if done.load(Ordering::Relaxed) < tasks {
        return Err(Error::Interrupted);
    }
    sums.into_iter()
        .try_fold(0u128, |a, s| s.and_then(|s| a.checked_add(s)))
        .ok_or(Error::Overflow("the sum of the task counts".into()))
}

/// The number of tasks `seq` will run and their estimated cost in all
/// ([`TaskSeq::workload`]).
pub fn workload(plan: &dyn Plan, seq: &dyn TaskSeq) -> (usize, u128) {
    seq.workload(plan)
}

/// [`workload`] by visiting every position of `seq`: the reference the faster ways match.
pub fn workload_by_task<S: TaskSeq + ?Sized>(plan: &dyn Plan, seq: &S) -> (usize, u128) {
    (0..seq.positions())
        .filter_map(|p| seq.task(p))
        .fold((0, 0), |(n, c), t| (n + 1, c + u128::from(plan.cost(t))))
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

    /// Costs in runs of three: 10, 10, 10, 9, 9, 9, …, 1.
    struct Steps;

    impl Plan for Steps {
        fn n(&self) -> u32 {
            0
        }
        fn engine(&self) -> &'static str {
            "steps"
        }
        fn len(&self) -> usize {
            30
        }
        fn cost(&self, task: usize) -> u64 {
            10 - task as u64 / 3
        }
        fn cost_runs(&self) -> Box<dyn Iterator<Item = (usize, u64)> + '_> {
            Box::new((0..10).map(|r| (3, 10 - r)))
        }
        fn solve(&self, _task: usize) -> u128 {
            1
        }
        fn fingerprint(&self) -> String {
            fingerprint_words([30])
        }
        fn describe(&self) -> String {
            String::new()
        }
    }

    #[test]
    fn a_range_costs_its_tasks_from_the_cost_runs_as_task_by_task() {
        for plan in [&Steps as &dyn Plan, &Squares(30)] {
            for (start, end) in [(0, 30), (0, 0), (1, 29), (4, 5), (3, 6), (29, 30)] {
                let range = start..end;
                assert_eq!(
                    range.workload(plan),
                    workload_by_task(plan, &range),
                    "{start}..{end}"
                );
            }
        }
        assert_eq!((0..30).workload(&Steps), (30, 3 * 55));
    }
}
