//! Splits cut into units (plan tasks of their own) against the same splits solved whole.

use super::*;
use std::collections::HashMap;

/// [`split_plan`] with the costliest splits cut into `2^top` units.
fn unit_plan(n: u32, level: Level, sizes: (usize, usize), top: u32) -> MitmPlan {
    let mut ctx = split_plan(n, level, sizes, false).ctx;
    ctx.units = top;
    MitmPlan::with_context(ctx)
}

/// [`unit_plan`] whose tasks each solve `2^merged` of those units in turn.
fn merged_plan(n: u32, level: Level, sizes: (usize, usize), top: u32, merged: u32) -> MitmPlan {
    let mut ctx = unit_plan(n, level, sizes, top).ctx;
    ctx.merged = merged;
    MitmPlan::with_context(ctx)
}

/// The units of the split of task `id` of `plan` summed, and that split solved whole by
/// `plain`.
fn units_and_whole(plan: &MitmPlan, plain: &MitmPlan, id: usize) -> (u128, u128) {
    let t = plan.task(id);
    let first = id - t.unit.index as usize;
    let units = first..first + (1 << t.unit.bits);
    let whole = task::Task {
        unit: task::Unit::WHOLE,
        ..t
    };
    (units.map(|u| plan.solve(u)).sum(), plain.solve_task(whole))
}

/// Each split's units summed, by (y, east), with the number of units that counted any
/// solution beyond a split's first.
fn split_sums(
    plan: &MitmPlan,
    ids: impl Iterator<Item = usize>,
) -> (HashMap<(u32, u32), u128>, usize) {
    let mut sums = HashMap::new();
    let mut later = 0;
    for id in ids {
        let t = plan.task(id);
        let count = plan.solve(id);
        *sums.entry((t.y, t.east)).or_insert(0) += count;
        later += usize::from(t.unit.index > 0 && count > 0);
    }
    (sums, later)
}

#[test]
fn the_units_of_a_split_add_up_to_the_split() {
    // Pieces of one key (ten hot bits by size, four of them filtering), and pieces forced only by the units (a
    // split that would fit one fill): each split's units against the split solved whole,
    // at every matcher level, odd N's cross tasks among them.
    for level in simd::available_levels() {
        for n in 8..=12 {
            let plain = MitmPlan::new(n, level);
            let whole: HashMap<(u32, u32), u128> = plain
                .tasks()
                .zip(0..)
                .map(|(t, id)| ((t.y, t.east), plain.solve(id)))
                .collect();
            for sizes in [(1, 1), (usize::MAX, usize::MAX)] {
                let plan = unit_plan(n, level, sizes, 3);
                assert!(plan.len() > plain.len(), "n = {n}: no split was cut");
                let (sums, later) = split_sums(&plan, 0..plan.len());
                assert_eq!(sums, whole, "{level:?} n = {n}, pieces of {sizes:?}");
                assert!(later > 0, "{level:?} n = {n}: only first units counted");
            }
        }
    }
}

#[test]
fn a_task_of_merged_units_counts_what_its_finer_units_do() {
    // Each task of a plan that merges 2^2 units against those units as tasks of their own,
    // with pieces of one key and pieces forced by the units alone (the levels' kernels are
    // tested against each other elsewhere).
    for level in [Level::detect()] {
        for n in [13, 14, 15] {
            for sizes in [(1, 1), (usize::MAX, usize::MAX)] {
                let fine = unit_plan(n, level, sizes, 4);
                let by_unit: HashMap<(u32, u32, u32, u32), u128> = (0..fine.len())
                    .map(|id| {
                        let t = fine.task(id);
                        ((t.y, t.east, t.unit.bits, t.unit.index), fine.solve(id))
                    })
                    .collect();
                let plan = merged_plan(n, level, sizes, 4, 2);
                assert!(plan.len() < fine.len(), "n = {n}: nothing merged");
                let mut merged = 0;
                for id in 0..plan.len() {
                    let t = plan.task(id);
                    merged += usize::from(t.unit.sub > 0);
                    let finer: u128 = t
                        .unit
                        .finer()
                        .map(|u| by_unit[&(t.y, t.east, u.bits, u.index)])
                        .sum();
                    assert_eq!(plan.solve(id), finer, "{level:?} n = {n} {sizes:?} {t:?}");
                }
                assert!(merged > 0, "n = {n}: no task merges units");
            }
        }
    }
}

#[test]
fn unit_plans_count_the_known_totals_on_several_threads() {
    // Threads take the units of a split in turns, each reusing its last split's quarters.
    for (n, top) in [(13, 2), (14, 4), (15, 6), (16, 3)] {
        let plan = unit_plan(n, Level::detect(), (10, 16), top);
        assert_eq!(Some(total(&plan)), known::total(n), "n = {n}");
    }
}

#[test]
fn units_on_searched_quarters_add_up_to_their_split() {
    // N = 22 and 23 search their quarters, and the tests' walk buffer is small: a unit
    // writes only the words its pieces meet, once its hot bits are known. Their sums
    // against each split solved whole, at the costliest splits and a few after them.
    // Merged, a task writes its quarters again for each of its finer units.
    for (n, merged) in [(22, 0), (23, 0), (22, 2), (23, 1)] {
        let plain = MitmPlan::new(n, Level::detect());
        let mut ctx = Context::new(n, Level::detect());
        ctx.units = 4;
        ctx.merged = merged;
        ctx.limits.piece = 1 << 12;
        let plan = MitmPlan::with_context(ctx);
        for id in [0, 16, 40, 5_000, 20_000] {
            let id = id >> merged;
            let t = plan.task(id);
            assert!(t.unit.fixed() > 0, "n = {n}, task {id} is a whole split");
            assert_eq!(t.unit.sub, merged, "n = {n}, task {id}");
            let (sum, whole) = units_and_whole(&plan, &plain, id);
            assert_eq!(sum, whole, "n = {n}, merged {merged}, split of task {id}");
        }
    }
}

#[test]
fn drawn_pieces_of_a_unit_estimate_it_without_bias() {
    // Pieces of one key: 64 per split, 32 per unit of a split cut in two.
    let plan = unit_plan(14, Level::detect(), (1, 1), 1);
    assert_drawn_pieces_are_unbiased(&plan, 7);
    // Two units a task: the pieces drawn across both.
    let plan = merged_plan(14, Level::detect(), (1, 1), 2, 1);
    assert_drawn_pieces_are_unbiased(&plan, 7);
}

/// Units against whole splits for every split of N ≤ 18 and 2,000 sampled splits of each
/// N = 20..22, with the splits cut as N = 28's are (about 6 minutes on 2 cores):
/// `cargo test --release --lib -- --ignored units_equal_whole_splits`.
#[test]
#[ignore]
fn units_equal_whole_splits_task_by_task() {
    for n in (13..=18).chain(20..=22) {
        let plain = MitmPlan::new(n, Level::detect());
        let mut ctx = Context::new(n, Level::detect());
        ctx.prepared.stop_caching();
        ctx.units = task::unit_bits(28);
        let plan = MitmPlan::with_context(ctx);
        // A split by the id of one of its units: every split of N ≤ 18 through its first.
        let first_unit = |id| plan.task(id).unit.index == 0;
        let differ = differing_tasks(n, plan.len(), first_unit, |id| {
            let (sum, whole) = units_and_whole(&plan, &plain, id);
            sum != whole
        });
        assert!(differ.is_empty(), "n = {n}: tasks {differ:?} differ");
    }
}
