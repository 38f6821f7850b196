//! The mirror engine: the project's baseline design.
//!
//! The first row's queen is restricted to the left half of the board and every count doubled
//! (the mirror image of each solution has its first queen in the right half). For odd N the
//! middle column of the first row is handled separately, with the second row's queen in the
//! left half, also doubled. The first `split_depth` rows are expanded into independent tasks;
//! each task is finished by the interleaved kernel in `super::kernel`.

use super::kernel::{self, bits, expand_to, Node, Rows, Weighted};
use super::{check_split_depth, Engine, PlanOptions};
use crate::error::{check_n, Error};
use crate::plan::{fingerprint_words, Plan};

/// The mirror-symmetry engine (`--engine mirror`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Mirror;

/// Automatic split: the smallest depth from 2 with at least this many tasks per thread.
const TASKS_PER_THREAD: usize = 64;
const MAX_AUTO_DEPTH: u32 = 5;

impl Engine for Mirror {
    fn name(&self) -> &'static str {
        "mirror"
    }

    fn summary(&self) -> &'static str {
        "bitmask backtracking with mirror symmetry (the baseline design)"
    }

    fn version(&self) -> u32 {
        1
    }

    fn plan(&self, n: u32, options: &PlanOptions) -> Result<Box<dyn Plan>, Error> {
        check_n(n)?;
        let depth = match options.split_depth {
            Some(d) => check_split_depth(n, d)?,
            None => auto_depth(n, options.threads),
        };
        if count_tasks(n, depth, MAX_TASKS) > MAX_TASKS {
            return Err(Error::Unsupported {
                engine: self.name(),
                what: format!(
                    "split depth {depth} at N = {n}: more than {MAX_TASKS} tasks (choose a smaller one)"
                ),
            });
        }
        Ok(Box::new(MirrorPlan::new(n, depth)))
    }
}

/// The smallest depth from 2 that gives every thread enough tasks to balance.
fn auto_depth(n: u32, threads: usize) -> u32 {
    let want = TASKS_PER_THREAD.saturating_mul(threads.max(1));
    let cap = MAX_AUTO_DEPTH.min(n);
    (2.min(cap)..=cap)
        .find(|&d| start_tasks(n, d).len() >= want)
        .unwrap_or(cap)
}

/// The tasks at `depth` with their symmetry weights.
/// The most tasks a plan may have (an explicit `--split-depth` that would make more is
/// refused: about 28 bytes a task, so at most about 120 MB).
pub const MAX_TASKS: usize = 1 << 22;

/// The number of tasks at `depth`, or some number above `cap` once it passes `cap`.
fn count_tasks(n: u32, depth: u32, cap: usize) -> usize {
    let rows = Rows::full(n);
    let mut len = 0;
    for (start, _) in mirror_starts(n, &rows) {
        len += super::count_to(&rows, start, depth.max(start.row), cap - len);
        if len > cap {
            break;
        }
    }
    len
}

fn start_tasks(n: u32, depth: u32) -> Vec<Weighted> {
    let rows = Rows::full(n);
    let mut tasks = Vec::new();
    for (start, weight) in mirror_starts(n, &rows) {
        let nodes = expand_to(&rows, vec![start], depth.max(start.row));
        tasks.extend(nodes.into_iter().map(|x| (x, weight)));
    }
    tasks
}

/// The mirror-symmetric starting placements: first-row queen in the left half (weight 2);
/// for odd N, first-row queen in the middle with the second-row queen in the left half
/// (weight 2). A 1×1 board has the single placement, weight 1.
fn mirror_starts(n: u32, rows: &Rows) -> Vec<Weighted> {
    if n == 1 {
        return vec![(Node::ROOT, 1)];
    }
    let half = n / 2;
    let left = (1u32 << half) - 1;
    let mut starts: Vec<Weighted> = bits(left).map(|b| (Node::ROOT.place(b), 2)).collect();
    if n % 2 == 1 {
        let middle = Node::ROOT.place(1 << half);
        starts.extend(bits(middle.free(rows) & left).map(|b| (middle.place(b), 2)));
    }
    starts
}

/// The mirror engine's plan for one board size and split depth.
#[derive(Debug, Clone)]
pub struct MirrorPlan {
    n: u32,
    depth: u32,
    rows: Rows,
    tasks: Vec<Weighted>,
    costs: Vec<u64>,
}

impl MirrorPlan {
    /// Expands the mirror starts of an `n`×`n` board to `depth` rows (`n` and `depth`
    /// unchecked: the public way in is [`crate::engine::plan`]).
    pub(crate) fn new(n: u32, depth: u32) -> Self {
        let rows = Rows::full(n);
        let mut costed: Vec<(u64, Weighted)> = start_tasks(n, depth)
            .into_iter()
            .map(|t| {
                (
                    super::count_to(&rows, t.0, t.0.row + 2, usize::MAX) as u64,
                    t,
                )
            })
            .collect();
        // Largest first, ties in generation order (plan ids are in cost order).
        costed.sort_by_key(|&(cost, _)| std::cmp::Reverse(cost));
        let (costs, tasks) = costed.into_iter().unzip();
        MirrorPlan {
            n,
            depth,
            rows,
            tasks,
            costs,
        }
    }

    /// The split depth this plan was built with.
    pub fn depth(&self) -> u32 {
        self.depth
    }
}

impl Plan for MirrorPlan {
    fn n(&self) -> u32 {
        self.n
    }

    fn engine(&self) -> &'static str {
        Mirror.name()
    }

    fn len(&self) -> usize {
        self.tasks.len()
    }

    fn cost(&self, task: usize) -> u64 {
        self.costs[task]
    }

    fn solve(&self, task: usize) -> u128 {
        kernel::count_weighted(&self.rows, self.tasks[task])
    }

    fn solve_portable(&self, task: usize) -> u128 {
        kernel::count_weighted_portable(&self.rows, self.tasks[task])
    }

    fn fingerprint(&self) -> String {
        let head = [
            u64::from_le_bytes(*b"mirror\0\0"),
            u64::from(Mirror.version()),
            u64::from(self.n),
            u64::from(self.depth),
        ];
        let body = self.tasks.iter().flat_map(|(x, w)| {
            [
                u64::from(x.row) << 32 | u64::from(*w),
                u64::from(x.cols) << 32 | u64::from(x.ld),
                u64::from(x.rd),
            ]
        });
        fingerprint_words(head.into_iter().chain(body))
    }

    fn describe(&self) -> String {
        format!("split depth {}", self.depth)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::MAX_SPLIT_DEPTH;
    use crate::known;

    fn total(plan: &MirrorPlan) -> u128 {
        (0..plan.len()).map(|t| plan.solve(t)).sum()
    }

    #[test]
    fn mirror_plan_matches_known_values_up_to_12() {
        for n in 1..=12 {
            let plan = MirrorPlan::new(n, auto_depth(n, 2));
            assert_eq!(Some(total(&plan)), known::total(n), "n = {n}");
        }
    }

    #[test]
    fn every_split_depth_gives_the_same_total() {
        for n in [1, 2, 3, 5, 8, 9] {
            for depth in 1..=MAX_SPLIT_DEPTH.min(n) {
                let plan = MirrorPlan::new(n, depth);
                assert_eq!(
                    Some(total(&plan)),
                    known::total(n),
                    "n = {n}, depth {depth}"
                );
            }
        }
    }

    #[test]
    fn automatic_depth_gives_enough_tasks() {
        let depth = auto_depth(16, 2);
        assert!((2..=3).contains(&depth));
        assert!(start_tasks(16, depth).len() >= 128);
    }

    /// The plan's starts and weights on boards of 17 to 32 columns heavily blocked by a
    /// mirror-symmetric mask (so the weights still hold): a random solution's cells and one
    /// cell in 64 of the rest, and their mirror images. The starts whose first-row queen is
    /// blocked are left out, the rest expanded on the mask; the total is the board's count
    /// by an independent solver, on both code paths.
    #[test]
    fn wide_boards_with_a_mirror_symmetric_mask_match_an_independent_solver() {
        use crate::engine::testing::{heavy_mask, independent_count, mirrored, union};
        let mut rng = fastrand::Rng::with_seed(17);
        for n in 17..=32 {
            let mask = heavy_mask(n, &mut rng, 1, 6);
            let masks = union(&mask, &mirrored(&mask));
            let rows = Rows::from_masks(&masks);
            let depth = 3;
            let first_row_allowed = |start: &Node| {
                let first = if start.row == 1 {
                    start.cols
                } else {
                    1 << (n / 2)
                };
                rows.allowed(0) & first != 0
            };
            let tasks: Vec<Weighted> = mirror_starts(n, &rows)
                .into_iter()
                .filter(|(start, _)| first_row_allowed(start))
                .flat_map(|(start, w)| {
                    let nodes = expand_to(&rows, vec![start], depth.max(start.row));
                    nodes.into_iter().map(move |x| (x, w))
                })
                .collect();
            let costs = vec![1; tasks.len()];
            let plan = MirrorPlan {
                n,
                depth,
                rows: rows.clone(),
                tasks,
                costs,
            };
            let portable: u128 = (0..plan.len()).map(|t| plan.solve_portable(t)).sum();
            let expected = u128::from(independent_count(&masks));
            assert!(expected >= 1, "n = {n}: a solution was kept");
            assert_eq!(total(&plan), expected, "n = {n}");
            assert_eq!(portable, expected, "n = {n}");
        }
    }

    #[test]
    fn fingerprint_depends_on_depth_and_n() {
        let a = MirrorPlan::new(10, 2).fingerprint();
        assert_eq!(a, MirrorPlan::new(10, 2).fingerprint());
        assert_ne!(a, MirrorPlan::new(10, 3).fingerprint());
        assert_ne!(a, MirrorPlan::new(11, 2).fingerprint());
    }
}
