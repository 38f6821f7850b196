//! A few tasks solved first, spread over a run's estimated cost, so that the time they take
//! says what the whole run will take.
//!
//! A run takes its tasks largest estimated cost first. The cost model ranks tasks well but
//! does not weigh them equally well across sizes: at N = 29 the largest tasks take about half
//! the seconds per cost unit of the plan as a whole, so an ETA learnt from the first tasks
//! alone promised about half the time the run needs. So the run first solves one task from
//! each of [`SLICES`] slices of equal estimated cost, drawn at random within its slice by
//! cost (a large task is as likely as the cost it carries), smallest slice first, and the
//! progress observer hears which task stands for which slice ([`Progress::probes`]). These
//! are tasks of the run, not extra work: nothing is solved twice.

use crate::error::Error;
use crate::plan::{execute_seq, Plan, Progress, TaskSeq};

/// Slices of equal estimated cost, one task solved first from each.
pub const SLICES: usize = 16;

/// The fewest tasks a run needs for its tasks to be probed first: a smaller run is over
/// before an ETA matters.
const MIN_TASKS: usize = 4 * SLICES;

/// Seed of the draw within each slice: the same tasks on every machine.
const SEED: u64 = 0x9e0b_e5ee_d5ee_d001;

/// How far past a task already done [`TaskSeq::position_near`] may look for one not done.
pub(crate) const NEAR: usize = 64;

/// Solves the tasks of `seq` like [`execute_seq`], with one task of each of [`SLICES`] slices
/// of its estimated cost first (see the [module docs](self)) and `progress` told of them.
///
/// # Errors
/// As [`execute_seq`].
pub fn execute_probed(
    plan: &dyn Plan,
    seq: &dyn TaskSeq,
    pool: &rayon::ThreadPool,
    progress: &dyn Progress,
) -> Result<u128, Error> {
    let probes = probes(plan, seq);
    if probes.is_empty() {
        return execute_seq(plan, seq, pool, progress);
    }
    let tasks: Vec<(usize, usize)> = probes.iter().map(|p| (p.slice, p.task)).collect();
    progress.probes(SLICES, &tasks);
    let first: Vec<usize> = probes.iter().map(|p| p.position).collect();
    execute_seq(plan, &Probed::new(seq, first), pool, progress)
}

/// One probe: the task at `position` of the run stands for slice `slice`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Probe {
    pub(crate) slice: usize,
    pub(crate) position: usize,
    pub(crate) task: usize,
}

/// One task per slice of equal cost of the work left to `seq`, each drawn at a random cost
/// point within its slice and found in `seq` near its id ([`TaskSeq::position_near`]); the
/// smallest slice first. None where the run is small or `seq` cannot place a plan id.
///
/// The work left is taken to lie between the plan ids of its first and last tasks not done,
/// in the plan's proportions: true of a whole plan and of a shard (which strides through
/// it), and of a resumed one up to the few tasks finished out of order.
pub(crate) fn probes(plan: &dyn Plan, seq: &dyn TaskSeq) -> Vec<Probe> {
    if seq.positions() < MIN_TASKS {
        return Vec::new();
    }
    let first = (seq.first_pending()..seq.positions()).find_map(|p| seq.task(p));
    let last = (0..seq.positions()).rev().find_map(|p| seq.task(p));
    let (Some(first), Some(last)) = (first, last) else {
        return Vec::new();
    };
    let (lo, hi) = costs_below(plan, [first, last + 1]);
    let slice_cost = hi.saturating_sub(lo) / SLICES as u128;
    if slice_cost == 0 {
        return Vec::new();
    }
    let mut rng = fastrand::Rng::with_seed(SEED);
    let points: Vec<u128> = (0..SLICES)
        .rev()
        .map(|slice| lo + slice as u128 * slice_cost + rng.u128(0..slice_cost))
        .collect();
    let mut out: Vec<Probe> = Vec::new();
    for (i, id) in ids_at(plan, &points).into_iter().enumerate() {
        let position = id.and_then(|id| seq.position_near(id));
        let Some((position, task)) = position.and_then(|p| Some((p, seq.task(p)?))) else {
            continue;
        };
        if out.iter().all(|p| p.position != position) {
            let slice = SLICES - 1 - i;
            out.push(Probe {
                slice,
                position,
                task,
            });
        }
    }
    out
}

/// The plan's estimated cost of the ids below each of `ids` (ascending), in one pass over
/// its cost runs (a plan without runs of equal cost has one per task).
fn costs_below(plan: &dyn Plan, ids: [usize; 2]) -> (u128, u128) {
    let (mut first, mut below) = (0usize, [0u128; 2]);
    for (n, c) in plan.cost_runs() {
        for (sum, &id) in below.iter_mut().zip(&ids) {
            *sum += n.min(id.saturating_sub(first)) as u128 * u128::from(c);
        }
        first += n;
        if first >= ids[1] {
            break;
        }
    }
    (below[0], below[1])
}

/// The ids of the tasks whose cost covers each of `points` of the plan's cumulative cost,
/// in one pass over its cost runs.
fn ids_at(plan: &dyn Plan, points: &[u128]) -> Vec<Option<usize>> {
    let mut order: Vec<usize> = (0..points.len()).collect();
    order.sort_by_key(|&i| points[i]);
    let mut out = vec![None; points.len()];
    let mut next = order.iter().peekable();
    let (mut below, mut first) = (0u128, 0usize);
    for (n, c) in plan.cost_runs() {
        let span = n as u128 * u128::from(c);
        while let Some(&&i) = next.peek() {
            if points[i] >= below + span {
                break;
            }
            let within = (points[i] - below) / u128::from(c);
            out[i] = usize::try_from(within).ok().map(|w| first + w);
            next.next();
        }
        below += span;
        first += n;
    }
    out
}

/// `inner` with the tasks at positions `first` taken before all the others (and skipped
/// where they would come).
struct Probed<'a> {
    inner: &'a dyn TaskSeq,
    first: Vec<usize>,
    sorted: Vec<usize>,
}

impl<'a> Probed<'a> {
    fn new(inner: &'a dyn TaskSeq, first: Vec<usize>) -> Self {
        let mut sorted = first.clone();
        sorted.sort_unstable();
        Probed {
            inner,
            first,
            sorted,
        }
    }
}

impl TaskSeq for Probed<'_> {
    fn positions(&self) -> usize {
        self.first.len() + self.inner.positions()
    }
    fn task(&self, position: usize) -> Option<usize> {
        match position.checked_sub(self.first.len()) {
            None => self.inner.task(self.first[position]),
            Some(p) if self.sorted.binary_search(&p).is_ok() => None,
            Some(p) => self.inner.task(p),
        }
    }
    fn workload(&self, plan: &dyn Plan) -> (usize, u128) {
        self.inner.workload(plan)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::workload_by_task;
    use crate::shard::ShardSpec;

    #[test]
    fn probes_come_first_and_every_task_runs_once() {
        let plan = crate::shard::stable_plan(12, &crate::CountOptions::new()).unwrap();
        for seq in [
            Box::new(0..plan.len()) as Box<dyn TaskSeq>,
            Box::new(ShardSpec::new(1, 3).unwrap().seq(plan.as_ref())),
        ] {
            let probes = probes(plan.as_ref(), seq.as_ref());
            assert!(probes.len() > SLICES / 2, "{probes:?}");
            let first: Vec<usize> = probes.iter().map(|p| p.position).collect();
            let probed = Probed::new(seq.as_ref(), first);
            let order: Vec<usize> = (0..probed.positions())
                .filter_map(|p| probed.task(p))
                .collect();
            let tasks: Vec<usize> = probes.iter().map(|p| p.task).collect();
            assert_eq!(order[..tasks.len()], tasks[..]);
            let mut sorted = order.clone();
            sorted.sort_unstable();
            let mut all: Vec<usize> = (0..seq.positions()).filter_map(|p| seq.task(p)).collect();
            all.sort_unstable();
            assert_eq!(sorted, all, "each task once");
            assert_eq!(
                probed.workload(plan.as_ref()),
                workload_by_task(plan.as_ref(), seq.as_ref())
            );
        }
    }

    #[test]
    fn probes_go_smallest_slice_first_and_each_lies_in_its_slice() {
        let plan = crate::shard::stable_plan(13, &crate::CountOptions::new()).unwrap();
        let probes = probes(plan.as_ref(), &(0..plan.len()));
        let slices: Vec<usize> = probes.iter().map(|p| p.slice).collect();
        assert!(slices.windows(2).all(|w| w[0] > w[1]), "{slices:?}");
        let total: u128 = (0..plan.len()).map(|t| u128::from(plan.cost(t))).sum();
        for p in &probes {
            let below: u128 = (0..p.task).map(|t| u128::from(plan.cost(t))).sum();
            let end = below + u128::from(plan.cost(p.task));
            let (lo, hi) = (
                p.slice as u128 * total / SLICES as u128,
                (p.slice as u128 + 1) * total / SLICES as u128,
            );
            assert!(
                end > lo && below <= hi,
                "{p:?}: {below}..{end} vs {lo}..{hi}"
            );
        }
    }

    /// What a count tells its observer: the probes, and the tasks in the order they start.
    #[derive(Default)]
    struct Watch {
        probes: std::sync::Mutex<Vec<(usize, usize)>>,
        started: std::sync::Mutex<Vec<usize>>,
    }

    impl Progress for Watch {
        fn probes(&self, _slices: usize, probes: &[(usize, usize)]) {
            self.probes.lock().unwrap().extend_from_slice(probes);
        }
        fn task_started(&self, task: usize, _cost: u64) {
            self.started.lock().unwrap().push(task);
        }
    }

    #[test]
    fn a_count_starts_with_a_task_from_each_slice_of_its_cost() {
        let watch = Watch::default();
        let options = crate::CountOptions::new().threads(1);
        let count = crate::count_with_progress(13, &options, &watch).unwrap();
        assert_eq!(count.total, 73_712);
        let probes = watch.probes.lock().unwrap().clone();
        let started = watch.started.lock().unwrap().clone();
        assert!(probes.len() > SLICES / 2, "{probes:?}");
        let first: Vec<usize> = probes.iter().map(|p| p.1).collect();
        // Not the largest tasks (ids 0, 1, …) first: the probes, smallest slice first.
        assert_eq!(started[..first.len()], first[..]);
        assert!(first[0] > first[first.len() - 1], "{first:?}");
    }

    #[test]
    fn a_small_run_is_not_probed() {
        let plan = crate::shard::stable_plan(12, &crate::CountOptions::new()).unwrap();
        assert!(probes(plan.as_ref(), &(0..MIN_TASKS - 1)).is_empty());
        assert!(!probes(plan.as_ref(), &(0..MIN_TASKS)).is_empty());
    }
}
