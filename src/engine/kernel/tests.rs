//! The kernel and both of its steps against plain recursion, on full and masked boards, and
//! against an independent solver on heavily blocked boards of up to 32 columns.

use super::*;
use crate::engine::testing::{heavy_mask, independent_count, mirrored, solution};
use crate::known;

/// Plain recursion, the simplest correct counter.
fn recursive(rows: &Rows, node: Node) -> u64 {
    if node.row == rows.n() {
        return 1;
    }
    node.children(rows).map(|c| recursive(rows, c)).sum()
}

#[test]
fn kernel_matches_plain_recursion_on_full_boards() {
    for n in 1..=11 {
        let rows = Rows::full(n);
        assert_eq!(
            count(&rows, &[Node::ROOT]),
            recursive(&rows, Node::ROOT),
            "n = {n}"
        );
    }
}

#[test]
fn kernel_matches_plain_recursion_on_many_start_nodes() {
    let rows = Rows::full(10);
    for depth in 0..=10 {
        let nodes = expand_to(&rows, vec![Node::ROOT], depth);
        assert_eq!(count(&rows, &nodes), 724, "depth {depth}");
        assert_eq!(count_portable(&rows, &nodes), 724, "depth {depth}");
    }
}

#[test]
fn kernel_respects_blocked_cells() {
    // Block the main diagonal of an 8x8 board.
    let masks: Vec<u32> = (0..8).map(|r| full_mask(8) & !(1 << r)).collect();
    let rows = Rows::from_masks(&masks);
    let nodes = expand_at_least(&rows, vec![Node::ROOT], 20);
    assert_eq!(count(&rows, &nodes), recursive(&rows, Node::ROOT));
}

#[test]
fn expansion_keeps_every_completion() {
    let rows = Rows::full(9);
    let nodes = expand_at_least(&rows, vec![Node::ROOT], 100);
    assert!(nodes.len() >= 100);
    assert_eq!(count(&rows, &nodes), 352);
}

#[test]
fn dead_nodes_and_fewer_nodes_than_lanes_are_handled() {
    let rows = Rows::full(8);
    let dead = Node {
        row: 2,
        cols: 0b1111_1111,
        ld: 0,
        rd: 0,
    };
    let live = expand_to(&rows, vec![Node::ROOT], 1);
    for k in 0..=live.len() {
        let mut nodes = vec![dead; 3];
        nodes.extend_from_slice(&live[..k]);
        let expected: u64 = live[..k].iter().map(|x| recursive(&rows, *x)).sum();
        assert_eq!(count(&rows, &nodes), expected, "{k} live nodes");
        assert_eq!(count_portable(&rows, &nodes), expected, "{k} live nodes");
    }
}

proptest::proptest! {
    #[test]
    fn both_step_implementations_agree_with_recursion_on_random_masks(
        n in 4u32..=9,
        holes in proptest::collection::vec(0u32..81, 0..12),
        depth in 0u32..4,
    ) {
        let mut masks = vec![full_mask(n); n as usize];
        for h in holes {
            masks[(h / 9 % n) as usize] &= !(1 << (h % 9 % n));
        }
        let rows = Rows::from_masks(&masks);
        let nodes = expand_to(&rows, vec![Node::ROOT], depth);
        let expected = recursive(&rows, Node::ROOT);
        proptest::prop_assert_eq!(count(&rows, &nodes), expected);
        proptest::prop_assert_eq!(count_portable(&rows, &nodes), expected);
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(96))]

    /// Wide boards, where the row masks reach bit 31: heavy masks keep them cheap.
    #[test]
    fn both_step_implementations_agree_with_an_independent_solver_on_wide_masks(
        n in 4u32..=32,
        seed in proptest::prelude::any::<u64>(),
        sparseness in 5u32..=7,
        depth in 0u32..5,
    ) {
        let masks = heavy_mask(n, &mut fastrand::Rng::with_seed(seed), 2, sparseness);
        let rows = Rows::from_masks(&masks);
        let nodes = expand_to(&rows, vec![Node::ROOT], depth);
        let expected = independent_count(&masks);
        proptest::prop_assert!(expected >= 1);
        proptest::prop_assert_eq!(count(&rows, &nodes), expected);
        proptest::prop_assert_eq!(count_portable(&rows, &nodes), expected);
    }
}

#[test]
fn kernel_matches_the_known_values_on_full_boards_of_12_to_14() {
    for n in 12..=14 {
        let rows = Rows::full(n);
        let nodes = expand_to(&rows, vec![Node::ROOT], 2);
        let want = known::total(n).map(|q| q as u64);
        assert_eq!(Some(count(&rows, &nodes)), want, "n = {n}");
        assert_eq!(Some(count_portable(&rows, &nodes)), want, "n = {n}");
    }
}

/// Boards of 12 to 32 columns with most cells blocked, from start nodes at several depths and
/// through the entry the engines' tasks use, on both step implementations.
#[test]
fn kernel_matches_an_independent_solver_on_heavily_blocked_boards_of_12_to_32_columns() {
    let mut rng = fastrand::Rng::with_seed(12);
    for n in 12..=32 {
        // One cell in 16 besides two solutions' already makes millions of partial
        // placements at 32 columns: the independent solver's time, not the kernel's.
        let sparser = if n <= 24 { 4 } else { 5 };
        for sparseness in [sparser, 6, 7] {
            let masks = heavy_mask(n, &mut rng, 2, sparseness);
            let rows = Rows::from_masks(&masks);
            let expected = independent_count(&masks);
            assert!(expected >= 1, "two solutions were kept");
            for depth in [0, 1, 3, 6] {
                let nodes = expand_to(&rows, vec![Node::ROOT], depth);
                let what = format!("n = {n}, 1 in 2^{sparseness}, depth {depth}");
                assert_eq!(count(&rows, &nodes), expected, "{what}");
                assert_eq!(count_portable(&rows, &nodes), expected, "{what}");
            }
            let weighted = u128::from(expected);
            assert_eq!(count_weighted(&rows, (Node::ROOT, 1)), weighted);
            assert_eq!(
                count_weighted_portable(&rows, (Node::ROOT, 2)),
                2 * weighted
            );
        }
    }
}

/// Placing at bit 31 keeps the column and shifts the diagonals out of the word, not around it.
#[test]
fn a_queen_in_column_31_or_0_shifts_its_diagonals_out_of_the_word() {
    let rows = Rows::full(32);
    let right = Node::ROOT.place(1 << 31);
    assert_eq!((right.cols, right.ld, right.rd), (1 << 31, 0, 1 << 30));
    let left = Node::ROOT.place(1);
    assert_eq!((left.cols, left.ld, left.rd), (1, 2, 0));
    assert_eq!(right.free(&rows), !(1 << 31 | 1 << 30));
    assert_eq!(left.free(&rows), !(1 | 2));
}

/// A solution of the 32×32 board with queens in columns `top` and `bottom` of adjacent rows.
fn solution_with_adjacent(top: u32, bottom: u32) -> Vec<u32> {
    for seed in 0..10_000 {
        let s = solution(32, seed);
        let flipped: Vec<u32> = s.iter().rev().copied().collect();
        for candidate in [s.clone(), flipped] {
            for c in [
                candidate.clone(),
                candidate.iter().map(|c| 31 - c).collect(),
            ] {
                if c.windows(2).any(|w| w == [top, bottom]) {
                    return c;
                }
            }
        }
    }
    panic!("no solution of 32 with columns {top} and {bottom} in adjacent rows");
}

/// Queens in columns 31 and 0 of adjacent rows do not attack each other: a diagonal that
/// wrapped around the 32-bit word (a rotate for a shift) would make them. Each row allows only
/// its queen's cell, so the board has exactly one placement; with the lower queen on the upper
/// one's diagonal instead, it has none.
#[test]
fn queens_on_both_edges_of_thirty_two_columns_count_exactly() {
    for (top, bottom) in [(31, 0), (0, 31)] {
        let s = solution_with_adjacent(top, bottom);
        let masks: Vec<u32> = s.iter().map(|&c| 1 << c).collect();
        let rows = Rows::from_masks(&masks);
        for depth in [0, 1, 16, 30, 31, 32] {
            let nodes = expand_to(&rows, vec![Node::ROOT], depth);
            assert_eq!(count(&rows, &nodes), 1, "{top}/{bottom} depth {depth}");
            assert_eq!(
                count_portable(&rows, &nodes),
                1,
                "{top}/{bottom} depth {depth}"
            );
        }
        let r = s.windows(2).position(|w| w == [top, bottom]).unwrap();
        let mut attacked = masks.clone();
        attacked[r + 1] = if top == 31 { 1 << 30 } else { 2 };
        let rows = Rows::from_masks(&attacked);
        assert_eq!(independent_count(&attacked), 0);
        assert_eq!(count(&rows, &[Node::ROOT]), 0);
        assert_eq!(count_portable(&rows, &[Node::ROOT]), 0);
        // Its mirror image is the same board seen from the other side.
        assert_eq!(
            count(&Rows::from_masks(&mirrored(&masks)), &[Node::ROOT]),
            1
        );
    }
}

#[test]
fn thirty_two_columns_fit() {
    let rows = Rows::full(32);
    assert_eq!(full_mask(32), u32::MAX);
    assert_eq!(Node::ROOT.free(&rows).count_ones(), 32);
}
