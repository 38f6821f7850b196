//! The symmetry engine: full 8-fold symmetry through start constellations.
//!
//! Every solution has one queen on each border line. The engine counts one image per orbit of
//! the square's eight symmetries and weights it by the orbit size (8, 4 or 2):
//! `starts` turns the border queens into kernel `Rows` templates — a
//! pre-placed queen's row allows only its cell, the border columns are allowed only where the
//! orbit rule puts their queens, and every row excludes the cells the pre-placed queens
//! attack, so the shared kernel prunes against queens below it without any change to it.
//! Templates come from `constellation` (the four border queens, one least tuple per orbit)
//! and from a nearest-corner rule that lets one search cover many constellations at once.
//! The top rows of each template are expanded into the plan's tasks. [`Plan::unique`] adds
//! the number of fundamental solutions by Burnside's lemma (`unique`).

pub(crate) mod constellation;
pub(crate) mod starts;
pub(crate) mod unique;

#[cfg(test)]
mod tests;

use self::starts::{starts, Start};
use super::kernel::{self, expand_to, Node};
use super::{check_split_depth, Engine, PlanOptions, MIN_SPLIT_DEPTH};
use crate::error::{check_n, Error};
use crate::plan::{fingerprint_words, Plan};

/// The full-symmetry engine (`--engine symmetry`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Symmetry;

/// Automatic split: at least this many tasks per thread ...
const TASKS_PER_THREAD: usize = 64;

/// Core-hours of a count of N = 24, as `estimate 24 -e symmetry -j2` measured it (Zen 4;
/// 90% interval 895 to 2,012), and the factor its work grows by per step of N, as Q(N)
/// grows: what a board past the mitm engine costs, by extrapolation.
pub(crate) const CORE_HOURS_AT_24: f64 = 1453.0;
/// The 90% interval of [`CORE_HOURS_AT_24`].
pub(crate) const CORE_HOURS_AT_24_INTERVAL: (f64, f64) = (895.0, 2012.0);
/// See [`CORE_HOURS_AT_24`].
pub(crate) const GROWTH_PER_N: f64 = 8.0;
/// The steepest step Q(N) is known to take past N = 24 (Q(27) / Q(26) = 10.5; 9.7 and 10.1
/// before it): the growth an extrapolation's upper end assumes, since the engine's work
/// may well grow as fast as the solutions it finds.
pub(crate) const GROWTH_PER_N_HIGH: f64 = 10.5;
/// ... and, for large boards, about `2^(N − 8)` tasks (capped), so that long runs
/// checkpoint and shard in steps of similar size: the work grows by about 8× per N.
const MAX_MIN_TASKS: usize = 1 << 18;
/// The automatic split never makes more tasks than this (plan memory and build time).
const MAX_AUTO_TASKS: usize = 1 << 21;
const MAX_AUTO_DEPTH: u32 = 6;

impl Engine for Symmetry {
    fn name(&self) -> &'static str {
        "symmetry"
    }

    fn summary(&self) -> &'static str {
        "start constellations under all 8 symmetries; also counts fundamental solutions"
    }

    fn version(&self) -> u32 {
        1
    }

    fn plan(&self, n: u32, options: &PlanOptions) -> Result<Box<dyn Plan>, Error> {
        check_n(n)?;
        let starts = starts(n);
        let depth = match options.split_depth {
            Some(d) => check_split_depth(n, d)?,
            None => auto_depth(n, &starts, options.threads),
        };
        if count_tasks(&starts, depth, MAX_TASKS) > MAX_TASKS {
            return Err(Error::Unsupported {
                engine: self.name(),
                what: format!(
                    "split depth {depth} at N = {n}: more than {MAX_TASKS} tasks (choose a smaller one)"
                ),
            });
        }
        Ok(Box::new(SymmetryPlan::with_starts(n, depth, starts)))
    }
}

/// The split depth for `threads` threads: the first depth with enough tasks, unless that
/// depth has more than [`MAX_AUTO_TASKS`] (then one less). Tasks are counted, not built,
/// and counting stops past the cap (so plan setup stays small at any N).
fn auto_depth(n: u32, starts: &[Start], threads: usize) -> u32 {
    let want = TASKS_PER_THREAD
        .saturating_mul(threads.max(1))
        .max(min_tasks(n));
    let cap = MAX_AUTO_DEPTH.min(n);
    let mut depth = MIN_SPLIT_DEPTH;
    while depth < cap {
        let len = count_tasks(starts, depth, MAX_AUTO_TASKS);
        if len >= want {
            return if len > MAX_AUTO_TASKS {
                (depth - 1).max(MIN_SPLIT_DEPTH)
            } else {
                depth
            };
        }
        depth += 1;
    }
    cap
}

/// About `2^(N − 8)` tasks, capped at [`MAX_MIN_TASKS`].
fn min_tasks(n: u32) -> usize {
    1usize
        .checked_shl(n.saturating_sub(8))
        .unwrap_or(usize::MAX)
        .min(MAX_MIN_TASKS)
}

/// The number of tasks at `depth`, or some number above `cap` once it passes `cap`.
fn count_tasks(starts: &[Start], depth: u32, cap: usize) -> usize {
    let mut len = 0;
    for start in starts {
        len += super::count_to(&start.rows, Node::ROOT, depth, cap - len);
        if len > cap {
            break;
        }
    }
    len
}

/// The most tasks a plan may have (an explicit `--split-depth` that would make more is
/// refused: 20 bytes a task, so at most 80 MB).
pub const MAX_TASKS: usize = 1 << 22;

/// Every task of `starts` split at `depth` as `(start, node)`, in generation order.
fn each_task(starts: &[Start], depth: u32) -> impl Iterator<Item = (u32, Node)> + '_ {
    starts.iter().enumerate().flat_map(move |(s, start)| {
        expand_to(&start.rows, vec![Node::ROOT], depth)
            .into_iter()
            .map(move |node| (s as u32, node))
    })
}

/// The estimated cost of a task: the number of its nodes two rows further down.
fn task_cost(starts: &[Start], (s, node): (u32, Node)) -> u16 {
    let rows = &starts[s as usize].rows;
    super::count_to(rows, node, node.row + 2, usize::MAX) as u16
}

/// A task: the index of its start template and its start node.
type Task = (u32, Node);

/// A run of tasks of equal cost: `(first id, cost)`.
type CostRun = (u64, u16);

/// The tasks laid out largest cost first (ties in generation order) with the first id of
/// each cost, by a counting sort: one pass for the costs, one to place the tasks, so memory
/// is the task list itself plus two bytes a task while building.
fn sorted_tasks(starts: &[Start], depth: u32) -> (Vec<Task>, Vec<CostRun>) {
    let costs: Vec<u16> = each_task(starts, depth)
        .map(|t| task_cost(starts, t))
        .collect();
    let mut counts = vec![0usize; usize::from(u16::MAX) + 1];
    for &c in &costs {
        counts[usize::from(c)] += 1;
    }
    let mut next = vec![0usize; counts.len()];
    let mut classes = Vec::new();
    let mut at = 0;
    for c in (0..counts.len()).rev().filter(|&c| counts[c] > 0) {
        next[c] = at;
        classes.push((at as u64, c as u16));
        at += counts[c];
    }
    let mut tasks = vec![(0u32, Node::default()); costs.len()];
    for (task, &c) in each_task(starts, depth).zip(&costs) {
        tasks[next[usize::from(c)]] = task;
        next[usize::from(c)] += 1;
    }
    (tasks, classes)
}

/// The symmetry engine's plan: start templates, each split into tasks at a fixed depth.
#[derive(Debug, Clone)]
pub struct SymmetryPlan {
    n: u32,
    depth: u32,
    starts: Vec<Start>,
    tasks: Vec<Task>,
    /// `(first id, cost)` of each run of equal cost, largest cost first.
    classes: Vec<CostRun>,
}

impl SymmetryPlan {
    /// The plan for an `n`×`n` board split at `depth` (`n` and `depth` unchecked: the
    /// public way in is [`crate::engine::plan`]).
    #[cfg(test)]
    pub(crate) fn new(n: u32, depth: u32) -> Self {
        Self::with_starts(n, depth, starts(n))
    }

    fn with_starts(n: u32, depth: u32, starts: Vec<Start>) -> Self {
        let (tasks, classes) = sorted_tasks(&starts, depth);
        SymmetryPlan {
            n,
            depth,
            starts,
            tasks,
            classes,
        }
    }

    /// The split depth this plan was built with.
    pub fn depth(&self) -> u32 {
        self.depth
    }

    /// The number of start templates.
    pub fn starts(&self) -> usize {
        self.starts.len()
    }

    #[cfg(test)]
    /// The template task `task` belongs to and the task's start node.
    pub(crate) fn task(&self, task: usize) -> (&Start, Node) {
        let (s, node) = self.tasks[task];
        (&self.starts[s as usize], node)
    }
}

impl Plan for SymmetryPlan {
    fn n(&self) -> u32 {
        self.n
    }

    fn engine(&self) -> &'static str {
        Symmetry.name()
    }

    fn len(&self) -> usize {
        self.tasks.len()
    }

    fn cost(&self, task: usize) -> u64 {
        let at = self.classes.partition_point(|c| c.0 <= task as u64);
        u64::from(self.classes[at - 1].1)
    }

    fn solve(&self, task: usize) -> u128 {
        let (s, node) = self.tasks[task];
        let start = &self.starts[s as usize];
        kernel::count_weighted(&start.rows, (node, start.weight))
    }

    fn solve_portable(&self, task: usize) -> u128 {
        let (s, node) = self.tasks[task];
        let start = &self.starts[s as usize];
        kernel::count_weighted_portable(&start.rows, (node, start.weight))
    }

    fn fingerprint(&self) -> String {
        let head = [
            u64::from_le_bytes(*b"symmetry"),
            u64::from(Symmetry.version()),
            u64::from(self.n),
            u64::from(self.depth),
        ];
        // Every template in full (its weight and each row's allowed cells), then every task.
        let templates = self.starts.iter().flat_map(|start| {
            let rows = (0..self.n).map(|r| u64::from(start.rows.allowed(r)));
            std::iter::once(u64::from(start.weight)).chain(rows)
        });
        let body = self.tasks.iter().flat_map(|&(s, x)| {
            [
                u64::from(s) << 32 | u64::from(x.row),
                u64::from(x.cols) << 32 | u64::from(x.ld),
                u64::from(x.rd),
            ]
        });
        fingerprint_words(head.into_iter().chain(templates).chain(body))
    }

    fn describe(&self) -> String {
        format!(
            "{} start templates, split depth {}",
            self.starts.len(),
            self.depth
        )
    }

    fn has_unique(&self) -> bool {
        true
    }

    fn unique(&self, total: u128) -> Option<u128> {
        unique::unique(self.n, total)
    }
}
