//! Tests of the symmetry engine against the published values, the mirror engine and a brute
//! force enumeration.

use std::collections::HashMap;

use super::constellation::{constellations, Cell, Constellation, SYMMETRIES};
use super::unique::{half_turn_symmetric, quarter_turn_symmetric};
use super::*;
use crate::engine::mirror::MirrorPlan;
use crate::engine::MAX_SPLIT_DEPTH;
use crate::known;

fn total(plan: &dyn Plan) -> u128 {
    (0..plan.len()).map(|t| plan.solve(t)).sum()
}

fn plan(n: u32) -> SymmetryPlan {
    let starts = starts(n);
    let depth = auto_depth(n, &starts, 2);
    SymmetryPlan::with_starts(n, depth, starts)
}

/// Every solution of an `n`×`n` board, as the queens' cells, by plain recursion.
fn brute_force(n: u32) -> Vec<Vec<Cell>> {
    fn place(n: u32, queens: &mut Vec<Cell>, out: &mut Vec<Vec<Cell>>) {
        let r = queens.len() as u32;
        if r == n {
            out.push(queens.clone());
            return;
        }
        for c in 0..n {
            if queens.iter().all(|&q| !constellation::attacks(q, (r, c))) {
                queens.push((r, c));
                place(n, queens, out);
                queens.pop();
            }
        }
    }
    let mut out = Vec::new();
    place(n, &mut Vec::new(), &mut out);
    out
}

/// A solution mapped by symmetry `s`, sorted by row.
fn image(n: u32, solution: &[Cell], s: usize) -> Vec<Cell> {
    let mut cells: Vec<Cell> = solution.iter().map(|&q| SYMMETRIES[s](n - 1, q)).collect();
    cells.sort_unstable();
    cells
}

#[test]
fn totals_match_the_known_values_up_to_14() {
    for n in 1..=14 {
        assert_eq!(Some(total(&plan(n))), known::total(n), "n = {n}");
    }
}

#[test]
fn unique_counts_match_the_known_values_up_to_14() {
    for n in 1..=14 {
        let p = plan(n);
        assert!(p.has_unique());
        assert_eq!(p.unique(total(&p)), known::unique(n), "n = {n}");
    }
}

#[test]
#[ignore = "takes seconds; run with --ignored"]
fn totals_and_unique_counts_match_the_known_values_for_15_and_16() {
    for n in 15..=16 {
        let p = plan(n);
        let q = total(&p);
        assert_eq!(Some(q), known::total(n), "n = {n}");
        assert_eq!(p.unique(q), known::unique(n), "n = {n}");
    }
}

#[test]
fn symmetry_engine_equals_mirror_engine_and_brute_force() {
    for n in 1..=10 {
        let symmetry = total(&plan(n));
        assert_eq!(symmetry, total(&MirrorPlan::new(n, 2.min(n))), "n = {n}");
        assert_eq!(symmetry, brute_force(n).len() as u128, "n = {n}");
    }
}

#[test]
fn every_weight_is_two_four_or_eight() {
    for n in 2..=20 {
        for (c, w) in constellations(n) {
            assert!(matches!(w, 2 | 4 | 8), "n = {n}, {c:?} has weight {w}");
        }
        let p = SymmetryPlan::new(n, 2.min(n));
        for t in 0..p.len() {
            let (start, _) = p.task(t);
            assert!(matches!(start.weight, 2 | 4 | 8), "n = {n}, {start:?}");
        }
    }
}

#[test]
fn plan_weights_applied_to_a_full_enumeration_reproduce_the_total() {
    for n in 1..=10 {
        let templates = starts(n);
        let solutions = brute_force(n);
        let weighted: u128 = solutions
            .iter()
            .flat_map(|s| templates.iter().filter(|t| t.contains(s)))
            .map(|t| u128::from(t.weight))
            .sum();
        assert_eq!(weighted, solutions.len() as u128, "n = {n}");
    }
}

#[test]
fn constellation_weights_applied_to_a_full_enumeration_reproduce_the_total() {
    for n in 1..=10 {
        let weights: HashMap<Constellation, u8> = constellations(n).into_iter().collect();
        let solutions = brute_force(n);
        let weighted: u128 = solutions
            .iter()
            .filter_map(|s| weights.get(&Constellation::of_queens(n, s).unwrap()))
            .map(|&w| u128::from(w))
            .sum();
        assert_eq!(weighted, solutions.len() as u128, "n = {n}");
    }
}

#[test]
fn every_solution_completes_exactly_one_orbit_representative() {
    for n in 4..=9 {
        let reps: Vec<Constellation> = constellations(n).into_iter().map(|x| x.0).collect();
        for s in brute_force(n) {
            let c = Constellation::of_queens(n, &s).unwrap();
            let hits = c.orbit(n).iter().filter(|o| reps.contains(o)).count();
            // Images of one representative may coincide, never two representatives.
            let distinct: std::collections::BTreeSet<_> = c
                .orbit(n)
                .into_iter()
                .filter(|o| reps.contains(o))
                .collect();
            assert!(hits >= 1 && distinct.len() == 1, "n = {n}, {c:?}");
        }
    }
}

#[test]
fn symmetric_solution_searches_equal_brute_force_classification() {
    for n in 1..=10 {
        let solutions = brute_force(n);
        let fixed_by = |s: usize| {
            solutions
                .iter()
                .filter(|sol| image(n, sol, s) == **sol)
                .count() as u128
        };
        assert_eq!(half_turn_symmetric(n), fixed_by(2), "n = {n}");
        assert_eq!(quarter_turn_symmetric(n), fixed_by(1), "n = {n}");
    }
}

#[test]
fn unique_counts_equal_brute_force_orbit_counts() {
    for n in 1..=9 {
        let solutions = brute_force(n);
        let orbits: std::collections::BTreeSet<Vec<Cell>> = solutions
            .iter()
            .map(|sol| (0..8).map(|s| image(n, sol, s)).min().unwrap())
            .collect();
        let p = plan(n);
        assert_eq!(p.unique(total(&p)), Some(orbits.len() as u128), "n = {n}");
    }
}

#[test]
fn every_split_depth_gives_the_same_total() {
    for n in [1, 2, 3, 4, 5, 8, 9] {
        for depth in MIN_SPLIT_DEPTH..=MAX_SPLIT_DEPTH.min(n) {
            let p = SymmetryPlan::new(n, depth);
            assert_eq!(Some(total(&p)), known::total(n), "n = {n}, depth {depth}");
        }
    }
}

#[test]
fn depth_outside_the_range_is_an_error() {
    assert!(Symmetry.plan(10, &split(0)).is_err());
    assert!(Symmetry.plan(4, &split(5)).is_err());
    assert!(Symmetry.plan(10, &split(3)).is_ok());
}

fn split(depth: u32) -> PlanOptions {
    PlanOptions {
        split_depth: Some(depth),
        threads: 1,
    }
}

#[test]
fn automatic_depth_gives_enough_tasks() {
    let starts = starts(16);
    let depth = auto_depth(16, &starts, 2);
    assert!(count_tasks(&starts, depth, usize::MAX) >= min_tasks(16));
    assert!(count_tasks(&starts, depth, usize::MAX) >= TASKS_PER_THREAD * 2);
}

#[test]
fn engine_plans_count_through_the_trait() {
    let options = PlanOptions {
        split_depth: Some(2),
        threads: 1,
    };
    let p = Symmetry.plan(11, &options).unwrap();
    assert_eq!(Some(total(p.as_ref())), known::total(11));
    assert!(Symmetry
        .plan(
            11,
            &PlanOptions {
                split_depth: Some(0),
                ..options
            }
        )
        .is_err());
}

#[test]
fn fingerprint_depends_on_depth_and_n() {
    let a = SymmetryPlan::new(10, 2).fingerprint();
    assert_eq!(a, SymmetryPlan::new(10, 2).fingerprint());
    assert_ne!(a, SymmetryPlan::new(10, 3).fingerprint());
    assert_ne!(a, SymmetryPlan::new(11, 2).fingerprint());
}

#[test]
fn the_largest_boards_plan_without_overflow() {
    let p = SymmetryPlan::new(32, 1);
    assert!(p.starts() > 0);
    let (start, node) = p.task(p.len() - 1);
    assert!(matches!(start.weight, 2 | 4 | 8) && node.row == 1);
}

/// The starts and weights on boards of 17 to 32 columns heavily blocked by a mask that every
/// symmetry of the square maps to itself (so each orbit of its solutions is still counted
/// once, by its weight): the cells of a random solution's images. Past N = 19 the solution
/// is one a half turn maps to itself (four images, not eight: those of any solution make
/// billions of partial placements at 24 columns), so N ≡ 2 or 3 mod 4 is left out there.
/// The total is the board's count by an independent solver, on both code paths.
#[test]
fn wide_boards_with_a_fully_symmetric_mask_match_an_independent_solver() {
    use crate::engine::testing::{all_symmetries, cells_of, half_turn_solution};
    use crate::engine::testing::{independent_count, solution};
    let mut rng = fastrand::Rng::with_seed(18);
    for n in 17..=32 {
        let queens = match n {
            18 | 19 => solution(n, rng.u64(..)),
            _ if n % 4 < 2 => half_turn_solution(n, &mut rng),
            _ => continue,
        };
        let masks = all_symmetries(&cells_of(&queens));
        let mut templates = starts(n);
        for start in &mut templates {
            for (r, &m) in (0..n).zip(&masks) {
                start.rows.restrict(r, m);
            }
        }
        let p = SymmetryPlan::with_starts(n, 2, templates);
        let portable: u128 = (0..p.len()).map(|t| p.solve_portable(t)).sum();
        let expected = u128::from(independent_count(&masks));
        assert!(expected >= 2, "n = {n}: the kept solution and its images");
        assert_eq!(total(&p), expected, "n = {n}");
        assert_eq!(portable, expected, "n = {n}");
    }
}
