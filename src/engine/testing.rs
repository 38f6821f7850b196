//! Test helpers for boards of up to 32 columns: an independent solver and heavily blocked
//! masks that still have solutions, for the backtracking engines' unit tests.
//!
//! Wide boards are where the kernel's `u32` row masks reach bit 31 and its diagonals shift
//! out of the word; a full board past N = 16 takes too long for the default suite, so the
//! boards here block most cells. Each mask keeps the cells of a random solution or more, so
//! its count is never trivially 0. How heavily to block was measured: a 32-column board
//! with two solutions' cells and one cell in 16 of the rest already has millions of partial
//! placements, the eight images of a random solution tens of billions.

use super::kernel::full_mask;

/// Counts the placements of one queen per row on the allowed cells (bit `c` of `allowed[r]`
/// is row `r`, column `c`) with no two attacking. Independent of the kernel: a plain row by
/// row search over a list of cells per row, with explicit sets of used columns and
/// diagonals (no shifted bitmasks).
pub(crate) fn independent_count(allowed: &[u32]) -> u64 {
    let n = allowed.len();
    let cells: Vec<Vec<usize>> = allowed
        .iter()
        .map(|&m| (0..n).filter(|&c| m >> c & 1 == 1).collect())
        .collect();
    let mut used = Used {
        col: vec![false; n],
        sum: vec![false; 2 * n],
        diff: vec![false; 2 * n],
    };
    place(&cells, 0, &mut used)
}

/// The columns and diagonals holding a queen: `sum` by `r + c`, `diff` by `r + n - c`.
struct Used {
    col: Vec<bool>,
    sum: Vec<bool>,
    diff: Vec<bool>,
}

fn place(cells: &[Vec<usize>], r: usize, used: &mut Used) -> u64 {
    let n = cells.len();
    if r == n {
        return 1;
    }
    let mut count = 0;
    for &c in &cells[r] {
        let (s, d) = (r + c, r + n - c);
        if used.col[c] || used.sum[s] || used.diff[d] {
            continue;
        }
        (used.col[c], used.sum[s], used.diff[d]) = (true, true, true);
        count += place(cells, r + 1, used);
        (used.col[c], used.sum[s], used.diff[d]) = (false, false, false);
    }
    count
}

/// A solution of the `n`×`n` board (n ≥ 4) as the queen's column in each row, random by
/// `seed`; checked here, so a wrong one fails the test that asked for it.
pub(crate) fn solution(n: u32, seed: u64) -> Vec<u32> {
    let rows = crate::puzzles::place::min_conflicts(u64::from(n), seed).unwrap();
    checked(rows.iter().map(|r| r - 1).collect())
}

/// `cols` after checking that it is a solution.
fn checked(cols: Vec<u32>) -> Vec<u32> {
    let n = cols.len();
    let apart =
        |a: usize, b: usize| cols[a] != cols[b] && cols[a].abs_diff(cols[b]) as usize != b - a;
    assert!(
        (0..n).all(|a| (a + 1..n).all(|b| apart(a, b))),
        "not a solution: {cols:?}"
    );
    cols
}

/// A random solution of the `n`×`n` board that a half turn maps to itself (one exists for
/// n ≡ 0 or 1 mod 4, n ≥ 4): its eight images are only four, so their union blocks more.
pub(crate) fn half_turn_solution(n: u32, rng: &mut fastrand::Rng) -> Vec<u32> {
    assert!(n >= 4 && n % 4 < 2, "no half-turn solution of {n}");
    loop {
        let mut cols = vec![u32::MAX; n as usize];
        // Random restarts: a search that wanders into a barren region starts again.
        if place_pairs(0, &mut cols, &mut 20_000, rng) {
            return checked(cols);
        }
    }
}

/// Places rows `r` and `n − 1 − r` at once, as images by a half turn, then the rows inside.
fn place_pairs(r: usize, cols: &mut [u32], budget: &mut u32, rng: &mut fastrand::Rng) -> bool {
    let n = cols.len();
    if 2 * r >= n {
        return true;
    }
    if *budget == 0 {
        return false;
    }
    *budget -= 1;
    let mut order: Vec<u32> = (0..n as u32).collect();
    rng.shuffle(&mut order);
    let (r2, last) = (n - 1 - r, n as u32 - 1);
    for c in order {
        if (r == r2 && c != last - c) || !is_free(cols, r, c) {
            continue;
        }
        cols[r] = c;
        if r == r2 || is_free(cols, r2, last - c) {
            cols[r2] = last - c;
            if place_pairs(r + 1, cols, budget, rng) {
                return true;
            }
        }
        (cols[r], cols[r2]) = (u32::MAX, u32::MAX);
    }
    false
}

/// Whether no queen placed in `cols` attacks row `r`, column `c`.
fn is_free(cols: &[u32], r: usize, c: u32) -> bool {
    cols.iter()
        .enumerate()
        .all(|(q, &d)| d == u32::MAX || (d != c && d.abs_diff(c) as usize != q.abs_diff(r)))
}

/// The mask allowing exactly the cells of a placement (a column per row).
pub(crate) fn cells_of(placement: &[u32]) -> Vec<u32> {
    placement.iter().map(|&c| 1 << c).collect()
}

/// An `n`×`n` mask (n ≥ 4) with the cells of `solutions` random solutions and about one
/// cell in `1 << sparseness` of the rest allowed.
pub(crate) fn heavy_mask(
    n: u32,
    rng: &mut fastrand::Rng,
    solutions: usize,
    sparseness: u32,
) -> Vec<u32> {
    let mut mask: Vec<u32> = (0..n)
        .map(|_| (0..sparseness).fold(full_mask(n), |m, _| m & rng.u32(..)))
        .collect();
    for _ in 0..solutions {
        mask = union(&mask, &cells_of(&solution(n, rng.u64(..))));
    }
    mask
}

/// The mask with each row's columns reversed (its mirror image).
pub(crate) fn mirrored(masks: &[u32]) -> Vec<u32> {
    let n = masks.len() as u32;
    masks.iter().map(|m| m.reverse_bits() >> (32 - n)).collect()
}

/// The mask with rows and columns exchanged.
pub(crate) fn transposed(masks: &[u32]) -> Vec<u32> {
    let n = masks.len();
    (0..n)
        .map(|c| {
            (0..n)
                .filter(|&r| masks[r] >> c & 1 == 1)
                .fold(0, |m, r| m | 1 << r)
        })
        .collect()
}

/// The union of two masks.
pub(crate) fn union(a: &[u32], b: &[u32]) -> Vec<u32> {
    a.iter().zip(b).map(|(x, y)| x | y).collect()
}

/// The union of the mask's images under the square's eight symmetries: a mask every
/// symmetry maps to itself.
pub(crate) fn all_symmetries(masks: &[u32]) -> Vec<u32> {
    let flipped: Vec<u32> = masks.iter().rev().copied().collect();
    let half = union(
        &union(masks, &mirrored(masks)),
        &union(&flipped, &mirrored(&flipped)),
    );
    union(&half, &transposed(&half))
}

#[test]
fn the_independent_solver_counts_the_open_boards() {
    let expected = [1, 0, 0, 2, 10, 4, 40, 92, 352, 724];
    for (n, &want) in (1..=10u32).zip(&expected) {
        let open = vec![full_mask(n); n as usize];
        assert_eq!(independent_count(&open), want, "n = {n}");
    }
}

#[test]
fn symmetric_masks_are_symmetric_and_keep_their_solutions() {
    let mut rng = fastrand::Rng::with_seed(5);
    for n in [4, 17, 21, 32] {
        assert!(
            independent_count(&heavy_mask(n, &mut rng, 2, 6)) >= 1,
            "n = {n}"
        );
        let one = cells_of(&half_turn_solution(n, &mut rng));
        assert_eq!(independent_count(&one), 1, "n = {n}");
        let all = all_symmetries(&one);
        assert_eq!(union(&all, &one), all);
        assert_eq!(mirrored(&all), all);
        assert_eq!(transposed(&all), all);
        assert!(
            independent_count(&all) >= 2,
            "n = {n}: no solution is its every image"
        );
    }
}
