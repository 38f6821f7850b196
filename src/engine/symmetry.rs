//! The symmetry engine: full 8-fold symmetry through start constellations (issue 3,
//! ALGORITHMS.md §1 and §3).
//!
//! Every solution has one queen on each border line. The engine counts one image per orbit of
//! the square's eight symmetries and weights it by the orbit size (8, 4 or 2):
//! [`starts`](mod@starts) turns the border queens into kernel [`Rows`](super::kernel::Rows) templates — a
//! pre-placed queen's row allows only its cell, the border columns are allowed only where the
//! orbit rule puts their queens, and every row excludes the cells the pre-placed queens
//! attack, so the shared kernel prunes against queens below it without any change to it.
//! Templates come from [`constellation`] (the four border queens, one least tuple per orbit)
//! and from a nearest-corner rule that lets one search cover many constellations at once.
//! The top rows of each template are expanded into the plan's tasks. [`Plan::unique`] adds
//! the number of fundamental solutions by Burnside's lemma ([`unique`]).

pub mod constellation;
pub mod starts;
pub mod unique;

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
        Ok(Box::new(SymmetryPlan::with_starts(n, depth, starts)))
    }
}

/// The smallest depth whose tasks are enough for the threads and for fine checkpoints, one
/// less if that depth would make the plan itself heavy.
fn auto_depth(n: u32, starts: &[Start], threads: usize) -> u32 {
    let want = (TASKS_PER_THREAD * threads.max(1)).max(min_tasks(n));
    let cap = MAX_AUTO_DEPTH.min(n);
    let mut depth = MIN_SPLIT_DEPTH;
    while depth < cap {
        let len = tasks(starts, depth).len();
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

/// The task count long runs want for an `n`×`n` board, whatever the threads.
fn min_tasks(n: u32) -> usize {
    1usize
        .checked_shl(n.saturating_sub(8))
        .unwrap_or(usize::MAX)
        .min(MAX_MIN_TASKS)
}

/// The tasks at `depth`: (index of the start, node), starts in order.
fn tasks(starts: &[Start], depth: u32) -> Vec<(u32, Node)> {
    starts
        .iter()
        .enumerate()
        .flat_map(|(s, start)| {
            expand_to(&start.rows, vec![Node::ROOT], depth)
                .into_iter()
                .map(move |node| (s as u32, node))
        })
        .collect()
}

/// The symmetry engine's plan for one board size and split depth.
#[derive(Debug, Clone)]
pub struct SymmetryPlan {
    n: u32,
    depth: u32,
    starts: Vec<Start>,
    tasks: Vec<(u32, Node)>,
    costs: Vec<u64>,
}

impl SymmetryPlan {
    /// The constellations of an `n`×`n` board, expanded until `depth` rows are filled.
    pub fn new(n: u32, depth: u32) -> Self {
        Self::with_starts(n, depth, starts(n))
    }

    fn with_starts(n: u32, depth: u32, starts: Vec<Start>) -> Self {
        let mut costed: Vec<(u64, (u32, Node))> = tasks(&starts, depth)
            .into_iter()
            .map(|(s, node)| {
                let rows = &starts[s as usize].rows;
                (expand_to(rows, vec![node], node.row + 2).len() as u64, (s, node))
            })
            .collect();
        // Largest first, ties in generation order (issue 11: ids are in cost order).
        costed.sort_by_key(|&(cost, _)| std::cmp::Reverse(cost));
        let (costs, tasks) = costed.into_iter().unzip();
        SymmetryPlan {
            n,
            depth,
            starts,
            tasks,
            costs,
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

    /// The template task `task` belongs to and the task's start node.
    pub fn task(&self, task: usize) -> (&Start, Node) {
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
        self.costs[task]
    }

    fn solve(&self, task: usize) -> u128 {
        let (s, node) = self.tasks[task];
        let start = &self.starts[s as usize];
        u128::from(kernel::count_subtree(&start.rows, node)) * u128::from(start.weight)
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
