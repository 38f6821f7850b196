//! The kernel and both of its steps against plain recursion, on full and masked boards.

use super::*;

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

#[test]
fn thirty_two_columns_fit() {
    let rows = Rows::full(32);
    assert_eq!(full_mask(32), u32::MAX);
    assert_eq!(Node::ROOT.free(&rows).count_ones(), 32);
}
