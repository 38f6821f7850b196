//! The task list of the meet-in-the-middle engine, by index: a plan of 65 M tasks (N = 27)
//! is never listed.
//!
//! A task is a row split E (h of the free rows, the east half's rows) plus, for odd N, the row
//! `y` of the middle column's queen (0 for even N and the centre queen). Its estimated cost
//! depends only on `y` and on how many of E's rows lie in the north quarter (`en`), so the
//! tasks fall into a few hundred *classes*. The plan lays the classes out by descending cost
//! (ties by `y`, then `en`) and, inside a class, the members by colex rank of their north part,
//! then of their south part. Task ids are positions in that layout, so id order is also
//! largest-first order, and a shard or a checkpoint needs nothing but ids.
//!
//! Splits with `y = 0` are filtered by their symmetry weights (only E with a non-zero weight
//! are tasks). To find the j-th accepted member of such a class without a list of every task,
//! the class keeps the number of accepted members before each block of [`BLOCK`] members:
//! a lookup is a binary search plus a scan of at most one block. The index of N = 28 (40 M
//! candidate splits) takes a few megabytes and a fraction of a second to build.

use super::key::Geometry;
use super::task::{Task, Unit};
use super::weights::{ew_weight, free_rows, ns_weight};
use super::CostModel;

/// Candidate members per block of the filtered classes' prefix counts.
const BLOCK: u64 = 64;

/// Most tasks a plan may have: a checkpoint keeps its done tasks in a 32-bit bitmap, so
/// splits are cut into fewer units where more would pass it (N = 29: 2^5 at most, 3.6 G
/// tasks).
const MAX_TASKS: u64 = u32::MAX as u64;

/// One cost class: every split with middle-column row `y` and `en` east rows in the north.
#[derive(Debug, Clone)]
struct Class {
    /// Middle-column queen row (0: even N or the centre queen).
    y: u32,
    /// East rows in the north quarter.
    en: u32,
    /// The north parts (en of the h north rows), colex order.
    norths: Vec<u32>,
    /// The south parts (h − en of the free south rows), colex order.
    souths: Vec<u32>,
    /// Accepted members before each block (filtered classes only; empty otherwise).
    prefix: Vec<u32>,
    /// First task id of the class.
    first: u64,
    /// Number of tasks in the class.
    len: u64,
    /// Estimated cost of each task of the class.
    cost: u64,
    /// Hot bits that cut each split of the class into `2^bits` tasks ([`Unit`]).
    bits: u32,
    /// Further hot bits whose `2^sub` units each task solves one after another.
    sub: u32,
}

impl Class {
    /// Candidate member `m` (north-major) as an east row mask.
    fn member(&self, m: u64) -> u32 {
        let s = self.souths.len() as u64;
        self.norths[(m / s) as usize] | self.souths[(m % s) as usize]
    }

    /// The `j`-th task of the class: a split's units are consecutive.
    fn task(&self, j: u64, accept: impl Fn(u32) -> bool) -> Task {
        let unit = Unit {
            bits: self.bits,
            index: (j & ((1 << self.bits) - 1)) as u32,
            sub: self.sub,
        };
        let (j, y) = (j >> self.bits, self.y);
        if self.prefix.is_empty() {
            let east = self.member(j);
            return Task { east, y, unit };
        }
        let block = self.prefix.partition_point(|&p| u64::from(p) <= j) - 1;
        let mut left = j - u64::from(self.prefix[block]);
        let mut m = block as u64 * BLOCK;
        loop {
            let east = self.member(m);
            if accept(east) {
                if left == 0 {
                    return Task { east, y, unit };
                }
                left -= 1;
            }
            m += 1;
        }
    }
}

/// The plan's tasks by id.
#[derive(Debug, Clone)]
pub(super) struct TaskIndex {
    n: u32,
    free: u32,
    classes: Vec<Class>,
    /// Number of tasks.
    pub len: u64,
}

impl TaskIndex {
    /// The index of an `n`×`n` board's tasks, the costliest splits cut into `2^top` units
    /// (cheaper ones into fewer, by their modelled cost), or fewer where the plan would
    /// pass [`MAX_TASKS`]; each task then solves `2^merged` consecutive units (fewer where a
    /// split has fewer), one after another.
    pub(super) fn new(geo: &Geometry, top: u32, merged: u32) -> Self {
        let model = CostModel::new(geo);
        let mut classes = Vec::new();
        let ys = if geo.n.is_multiple_of(2) {
            0..0
        } else {
            geo.h + 2..geo.n
        };
        for y in std::iter::once(0).chain(ys) {
            for en in 0..=geo.h {
                if let Some(c) = class(geo, &model, y, en) {
                    classes.push(c);
                }
            }
        }
        let top = (0..=top)
            .rev()
            .find(|&t| units_len(&classes, t) <= MAX_TASKS)
            .unwrap_or(0);
        cut_into_units(&mut classes, top, merged);
        classes.sort_by(|a, b| b.cost.cmp(&a.cost).then((a.y, a.en).cmp(&(b.y, b.en))));
        let mut first = 0;
        for c in &mut classes {
            c.first = first;
            first += c.len;
        }
        TaskIndex {
            n: geo.n,
            free: free_rows(geo, 0),
            classes,
            len: first,
        }
    }

    /// Whether the split `east` with `y = 0` has a non-zero weight (is a task).
    fn accept(&self, east: u32) -> bool {
        accepted(east, self.n, self.free)
    }

    /// The class holding task `id`.
    fn class(&self, id: u64) -> &Class {
        let at = self.classes.partition_point(|c| c.first <= id) - 1;
        &self.classes[at]
    }

    /// Task `id` (`id < len`).
    pub(super) fn task(&self, id: u64) -> Task {
        let c = self.class(id);
        c.task(id - c.first, |e| self.accept(e))
    }

    /// Estimated cost of task `id`.
    pub(super) fn cost(&self, id: u64) -> u64 {
        self.class(id).cost
    }

    /// The tasks in id order as runs of equal cost, one per class: `(tasks, cost of each)`.
    pub(super) fn runs(&self) -> impl Iterator<Item = (usize, u64)> + '_ {
        self.classes.iter().map(|c| (c.len as usize, c.cost))
    }

    /// The classes as words for the fingerprint: `(sub, bits, y, en, len, cost)` each (`sub`
    /// and `bits` are 0 below N = 28, which keeps the fingerprints of plans made before
    /// units).
    pub(super) fn words(&self) -> impl Iterator<Item = u64> + '_ {
        self.classes.iter().flat_map(|c| {
            let head = u64::from(c.sub) << 56
                | u64::from(c.bits) << 48
                | u64::from(c.y) << 32
                | u64::from(c.en);
            [head, c.len, c.cost]
        })
    }
}

/// Splits of the costliest class get `top` unit bits, and each class `round(log2(ratio))`
/// fewer for its cost ratio to the costliest, so units are of like size; then up to
/// `merged` of a class's bits become `sub` bits, whose units one task solves in turn. A
/// task's cost is its share of the split's (costs are first scaled by `2^top`, so none
/// rounds to 0).
fn cut_into_units(classes: &mut [Class], top: u32, merged: u32) {
    let max = max_cost(classes);
    for c in classes {
        let bits = unit_bits(c.cost, max, top);
        c.sub = bits.min(merged);
        c.bits = bits - c.sub;
        c.cost = (c.cost << top) >> c.bits;
        c.len <<= c.bits;
    }
}

/// The number of tasks of `classes` cut into units with `top` bits.
fn units_len(classes: &[Class], top: u32) -> u64 {
    let max = max_cost(classes);
    classes
        .iter()
        .map(|c| c.len << unit_bits(c.cost, max, top))
        .sum()
}

/// The unit bits of a class of cost `cost` (see [`cut_into_units`]).
fn unit_bits(cost: u64, max: u64, top: u32) -> u32 {
    let fewer = (max as f64 / cost as f64).log2().round() as u32;
    top.saturating_sub(fewer)
}

/// The highest cost of `classes` (1 if there are none).
fn max_cost(classes: &[Class]) -> u64 {
    classes.iter().map(|c| c.cost).max().unwrap_or(1)
}

/// Whether a `y = 0` split has a non-zero symmetry weight.
fn accepted(east: u32, n: u32, free: u32) -> bool {
    ns_weight(east, n) > 0 && (n.is_multiple_of(2) || ew_weight(east, n, free) > 0)
}

/// The class `(y, en)`, or `None` if it has no task.
fn class(geo: &Geometry, model: &CostModel, y: u32, en: u32) -> Option<Class> {
    let free = free_rows(geo, y);
    let north = free & ((1u32 << geo.h) - 1);
    let south = free & !north;
    let ks = geo.h - en;
    let norths: Vec<u32> = super::subsets(north, en).collect();
    let souths: Vec<u32> = super::subsets(south, ks).collect();
    if norths.is_empty() || souths.is_empty() {
        return None;
    }
    let mut c = Class {
        y,
        en,
        norths,
        souths,
        prefix: Vec::new(),
        first: 0,
        len: 0,
        cost: 0,
        bits: 0,
        sub: 0,
    };
    let members = c.norths.len() as u64 * c.souths.len() as u64;
    c.len = members;
    if y == 0 {
        let all = free_rows(geo, 0);
        let mut accepted_so_far = 0u64;
        for m in 0..members {
            if m % BLOCK == 0 {
                c.prefix.push(accepted_so_far as u32);
            }
            accepted_so_far += u64::from(accepted(c.member(m), geo.n, all));
        }
        c.len = accepted_so_far;
    }
    if c.len == 0 {
        return None;
    }
    c.cost = model.cost(
        geo,
        Task {
            east: c.member(0),
            y,
            unit: Unit::WHOLE,
        },
    );
    Some(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tasks the plan had before the cost-class layout: filtered splits in colex order, then the cross
    /// tasks per y.
    fn listed(geo: &Geometry) -> Vec<Task> {
        let (n, h) = (geo.n, geo.h);
        let free = free_rows(geo, 0);
        let mut out: Vec<Task> = super::super::subsets(free, h)
            .filter(|&e| accepted(e, n, free))
            .map(|east| Task {
                east,
                y: 0,
                unit: Unit::WHOLE,
            })
            .collect();
        if !n.is_multiple_of(2) {
            for y in h + 2..n {
                out.extend(
                    super::super::subsets(free_rows(geo, y), h).map(|east| Task {
                        east,
                        y,
                        unit: Unit::WHOLE,
                    }),
                );
            }
        }
        out
    }

    #[test]
    fn the_index_holds_exactly_the_listed_tasks_in_cost_order() {
        for n in 4..=17 {
            let geo = Geometry::new(n);
            let index = TaskIndex::new(&geo, 0, 0);
            let mut by_index: Vec<(u32, u32)> = (0..index.len)
                .map(|i| index.task(i))
                .inspect(|t| assert_eq!(t.unit, Unit::WHOLE, "n = {n}"))
                .map(|t| (t.y, t.east))
                .collect();
            let costs: Vec<u64> = (0..index.len).map(|i| index.cost(i)).collect();
            assert!(costs.windows(2).all(|w| w[0] >= w[1]), "n = {n}");
            let mut listed: Vec<(u32, u32)> = listed(&geo).iter().map(|t| (t.y, t.east)).collect();
            by_index.sort_unstable();
            listed.sort_unstable();
            assert_eq!(by_index, listed, "n = {n}");
        }
    }

    #[test]
    fn units_cut_each_listed_split_into_consecutive_tasks_of_its_cost_share() {
        for n in 8..=15 {
            let geo = Geometry::new(n);
            let (index, model) = (TaskIndex::new(&geo, 3, 0), CostModel::new(&geo));
            let mut splits = Vec::new();
            for id in 0..index.len {
                let t = index.task(id);
                assert!(
                    t.unit.bits <= 3 && t.unit.index >> t.unit.bits == 0,
                    "n {n} {t:?}"
                );
                let whole = Task {
                    unit: Unit::WHOLE,
                    ..t
                };
                let share = (model.cost(&geo, whole) << 3) >> t.unit.bits;
                assert_eq!(index.cost(id), share, "n = {n}, task {id}");
                if id > 0 {
                    assert!(index.cost(id - 1) >= index.cost(id), "n = {n}, task {id}");
                }
                // The units of a split are ids first .. first + 2^bits, in order.
                let first = id - u64::from(t.unit.index);
                assert_eq!(
                    index.task(first),
                    Task {
                        unit: Unit { index: 0, ..t.unit },
                        ..t
                    }
                );
                if t.unit.index == 0 {
                    splits.push((t.y, t.east));
                }
            }
            let most = (0..index.len).map(|i| index.task(i).unit.bits).max();
            assert_eq!(most, Some(3), "n = {n}: the costliest splits are cut");
            let mut listed: Vec<(u32, u32)> = listed(&geo).iter().map(|t| (t.y, t.east)).collect();
            splits.sort_unstable();
            listed.sort_unstable();
            assert_eq!(splits, listed, "n = {n}");
        }
    }

    #[test]
    fn the_largest_plans_are_cut_into_units_within_the_checkpoint_bound() {
        for n in [28, 29] {
            let index = TaskIndex::new(&Geometry::new(n), super::super::task::unit_bits(n), 0);
            assert!(index.len <= MAX_TASKS, "n = {n}: {} tasks", index.len);
            let most = index.classes.iter().map(|c| c.bits).max();
            assert!(most >= Some(5), "n = {n}: {most:?}");
        }
    }

    #[test]
    fn task_costs_are_those_of_the_cost_model() {
        for n in [12, 13] {
            let geo = Geometry::new(n);
            let index = TaskIndex::new(&geo, 0, 0);
            let model = CostModel::new(&geo);
            for i in 0..index.len {
                assert_eq!(
                    index.cost(i),
                    model.cost(&geo, index.task(i)),
                    "n {n} task {i}"
                );
            }
        }
    }
}
