//! Two-colour counts against a brute-force oracle that shares nothing with the bitset method.

use super::*;
use proptest::prelude::*;

/// Places black and white queens row by row with explicit attack checks: an oracle that
/// shares nothing with the bitset method.
fn brute(mask: &Mask) -> u128 {
    fn safe(placed: &[usize], c: usize) -> bool {
        let r = placed.len();
        placed
            .iter()
            .enumerate()
            .all(|(r2, &c2)| c2 != c && r - r2 != c.abs_diff(c2))
    }
    fn go(mask: &Mask, black: &mut Vec<usize>, white: &mut Vec<usize>) -> u128 {
        let n = mask.n() as usize;
        let r = black.len();
        if r == n {
            return 1;
        }
        let mut total = 0;
        let allowed = |c: usize| mask.is_allowed(r as u32, c as u32);
        for b in 0..n {
            if !allowed(b) || !safe(black, b) {
                continue;
            }
            for w in 0..n {
                if w != b && allowed(w) && safe(white, w) {
                    black.push(b);
                    white.push(w);
                    total += go(mask, black, white);
                    black.pop();
                    white.pop();
                }
            }
        }
        total
    }
    go(mask, &mut Vec::new(), &mut Vec::new())
}

#[test]
fn full_boards_give_the_published_values() {
    let expected = [2u128, 40, 12, 496, 3252, 48328, 205188, 2732488, 76261328];
    for (n, want) in (4..=12).zip(expected) {
        let result = count(&Mask::full(n).unwrap(), 2).unwrap();
        assert_eq!(result.pairs, want, "n = {n}");
        assert_eq!(result.symmetries, 8);
    }
}

#[test]
fn the_classic_samples() {
    let all = parse("4\n1 1 1 1\n1 1 1 1\n1 1 1 1\n1 1 1 1\n", "s").unwrap();
    assert_eq!(count(&all, 1).unwrap().pairs, 2);
    // The classic second sample blocks the second cell of the top row: one of the two
    // 4x4 solutions uses it, so no pair is left.
    let second = parse("4\n1 0 1 1\n1 1 1 1\n1 1 1 1\n1 1 1 1\n", "s").unwrap();
    assert_eq!(count(&second, 1).unwrap().pairs, 0);
    // No 4x4 solution uses a corner, so blocking the top-left cell changes nothing.
    let corner = parse("4\n0 1 1 1\n1 1 1 1\n1 1 1 1\n1 1 1 1\n", "s").unwrap();
    assert_eq!(count(&corner, 1).unwrap().pairs, 2);
}

#[test]
fn tiny_boards_have_no_pairs() {
    for n in 1..=3 {
        assert_eq!(count(&Mask::full(n).unwrap(), 1).unwrap().pairs, 0);
    }
}

#[test]
fn the_symmetry_reduction_changes_nothing() {
    for n in 4..=10 {
        let mask = Mask::full(n).unwrap();
        let with = count_with_symmetry(&mask, 2, true).unwrap();
        let without = count_with_symmetry(&mask, 2, false).unwrap();
        assert_eq!(with.pairs, without.pairs, "n = {n}");
        assert_eq!(without.representatives, without.solutions);
    }
}

/// n = 13 both ways (under a second each in the optimised test profile).
#[test]
fn thirteen_with_and_without_symmetry_agree() {
    let mask = Mask::full(13).unwrap();
    let with = count_with_symmetry(&mask, 2, true).unwrap();
    let without = count_with_symmetry(&mask, 2, false).unwrap();
    assert_eq!(with.pairs, without.pairs);
}

#[test]
fn full_boards_match_brute_force() {
    for n in 1..=6 {
        let mask = Mask::full(n).unwrap();
        assert_eq!(count(&mask, 2).unwrap().pairs, brute(&mask), "n = {n}");
    }
}

#[test]
fn symmetric_masks_find_their_symmetries() {
    // Centre cell of a 5x5 blocked: all 8 symmetries survive; a corner: 2 (the diagonal).
    let mut rows = vec![0b11111u32; 5];
    rows[2] = 0b11011;
    assert_eq!(symmetries(&Mask::from_rows(&rows).unwrap()).len(), 8);
    let mut rows = vec![0b11111u32; 5];
    rows[0] = 0b11110;
    assert_eq!(symmetries(&Mask::from_rows(&rows).unwrap()).len(), 2);
}

#[test]
fn malformed_input_names_the_line() {
    for (text, line) in [
        ("", 1),
        ("x\n", 1),
        ("4\n1111\n1111\n1111\n", 5),
        ("2\n11\n1z\n", 3),
        ("2\n11\n11\n\n11\n", 5),
    ] {
        match parse(text, "t") {
            Err(Error::Parse { line: l, .. }) => assert_eq!(l, line, "{text:?}"),
            other => panic!("{text:?}: {other:?}"),
        }
    }
}

/// A mask of n rows from cell flags, mostly allowed.
fn mask_of(n: u32, cells: &[bool]) -> Mask {
    let rows: Vec<u32> = cells
        .chunks(n as usize)
        .map(|row| row.iter().rev().fold(0, |m, &a| m << 1 | u32::from(a)))
        .collect();
    Mask::from_rows(&rows).unwrap()
}

/// The cells of `mask` allowed in every image under the symmetries `group`.
fn symmetrise(mask: &Mask, group: &[Symmetry]) -> Mask {
    let n = mask.n() as usize;
    let rows: Vec<u32> = (0..n)
        .map(|r| {
            (0..n).fold(0, |m, c| {
                let ok = group.iter().all(|g| {
                    let (r2, c2) = g(n, r, c);
                    mask.is_allowed(r2 as u32, c2 as u32)
                });
                m | u32::from(ok) << c
            })
        })
        .collect();
    Mask::from_rows(&rows).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn random_masks_match_brute_force(
        (n, cells) in (1u32..=6).prop_flat_map(|n| {
            (Just(n), prop::collection::vec(prop::bool::weighted(0.85), (n * n) as usize))
        }),
        threads in 1usize..=3,
    ) {
        let mask = mask_of(n, &cells);
        prop_assert_eq!(count(&mask, threads).unwrap().pairs, brute(&mask));
    }

    #[test]
    fn symmetric_random_masks_match_brute_force(
        (n, cells) in (4u32..=6).prop_flat_map(|n| {
            (Just(n), prop::collection::vec(prop::bool::weighted(0.9), (n * n) as usize))
        }),
        subgroup in 0usize..4,
    ) {
        // Whole group; mirror; 180-degree rotation; main-diagonal reflection.
        let group: Vec<Symmetry> = match subgroup {
            0 => SQUARE.to_vec(),
            1 => vec![SQUARE[0], SQUARE[1]],
            2 => vec![SQUARE[0], SQUARE[3]],
            _ => vec![SQUARE[0], SQUARE[4]],
        };
        let mask = symmetrise(&mask_of(n, &cells), &group);
        prop_assert!(symmetries(&mask).len() >= group.len());
        prop_assert_eq!(count(&mask, 2).unwrap().pairs, brute(&mask));
    }
}
