//! The start templates: every orbit of solutions under the square's symmetries is counted by
//! exactly one template, with weight 8, 4 or 2.
//!
//! A constellation per orbit (see [`super::constellation`]) pins all four border queens, and
//! the kernel then searches the upper rows again for every choice of the column-0 and
//! column-(N−1) queens below them. Most orbits do not need that: measure each border queen's
//! distance to the nearest corner of its line. When one queen is strictly nearest a corner
//! (and none sits in a corner), exactly one image of the solution has that queen in the last
//! row, in the left half, and the orbit has 8 members. Such solutions are counted by one
//! template per pair of row-0 column `i` and last-row column `j`: the border columns may be
//! used only in the rows farther than `j` from a corner, which is a static row restriction, so
//! one kernel search covers all their column-0 and column-(N−1) queens at once.
//! The rest are handled as follows:
//!
//! - corner solutions (a queen in a corner, always 8 per orbit): the image with the queen in
//!   the bottom-left corner and row-0 column `i` plus column-(N−1) row `l` below `N−1−i`, one
//!   template per `i`;
//! - ties (two or more border queens equally near a corner, the only orbits that can be
//!   symmetric): one full constellation per orbit, weight = orbit size.

use super::constellation::{attacked, constellations_where, Cell, Constellation, SYMMETRIES};
use crate::engine::kernel::{bits, full_mask, Rows};

/// One template of the plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Start {
    /// What the template fixes, for fingerprints and messages: `(i, j, k, l)` of a full
    /// constellation, or with `k`/`l` = `u32::MAX` where a border column's queen is searched.
    pub label: [u32; 4],
    /// The orbit size every solution of the template stands for.
    pub weight: u8,
    /// The kernel template.
    pub rows: Rows,
}

impl Start {
    #[cfg(test)]
    /// Whether a solution (its queens' cells) is counted by this template.
    pub(crate) fn contains(&self, solution: &[Cell]) -> bool {
        solution
            .iter()
            .all(|&(r, c)| self.rows.allowed(r) & (1 << c) != 0)
    }
}

/// Every template of an `n`×`n` board: corner templates, then strict ones, then ties.
pub(crate) fn starts(n: u32) -> Vec<Start> {
    if n < 4 {
        // Too small for the corner-distance split; one constellation per orbit is exact.
        return tie_breaks(n, |_| true);
    }
    let mut out = corner_starts(n);
    out.extend(strict_starts(n));
    out.extend(tie_breaks(n, |c| is_tie(n, c)));
    out
}

/// The distance of a border queen at position `x` of its line to the nearest corner.
fn corner_distance(n: u32, x: u32) -> u32 {
    x.min(n - 1 - x)
}

/// Whether the nearest-corner distance of a non-corner constellation is shared by two or
/// more of its queens.
fn is_tie(n: u32, c: &Constellation) -> bool {
    let d = [c.i, c.j, c.k, c.l].map(|x| corner_distance(n, x));
    let min = *d.iter().min().expect("four distances");
    min > 0 && d.iter().filter(|&&x| x == min).count() >= 2
}

/// One full constellation per orbit among those `keep` accepts (an orbit-invariant test),
/// searched in its fastest
/// image.
fn tie_breaks(n: u32, keep: impl Fn(&Constellation) -> bool) -> Vec<Start> {
    constellations_where(n, keep)
        .into_iter()
        .map(|(c, weight)| Start {
            label: [c.i, c.j, c.k, c.l],
            weight,
            rows: c.search_image(n).rows(n),
        })
        .collect()
}

/// Templates for the solutions whose last-row queen, at column `j` in the left half, is
/// strictly nearer a corner than every other border queen.
fn strict_starts(n: u32) -> Vec<Start> {
    let m = n - 1;
    let mut out = Vec::new();
    for j in (1..n).take_while(|&j| 2 * j < m) {
        for i in j + 1..m - j {
            let band = span(j + 1, m - j);
            out.push(Start {
                label: [i, j, u32::MAX, u32::MAX],
                weight: 8,
                rows: searched(n, &template(n, &[(0, i), (m, j)], band, band)),
            });
        }
    }
    out
}

/// Templates for corner solutions: the queen in the bottom-left corner, row 0's queen at
/// column `i`, and column N−1's queen in a row `l` with `i + l < N − 1` (the anti-diagonal
/// reflection, which fixes that corner, swaps the two choices).
///
/// The pairs with both `i` and `l` below `h = ⌈(N−1)/2⌉` form a rectangle, so one template
/// with row 0 and column N−1 both confined to `1..h` covers them in one search (18% fewer
/// corner nodes on N = 14 than one template per `i`); the rest is one strip per `i`.
fn corner_starts(n: u32) -> Vec<Start> {
    let m = n - 1;
    let h = m.div_ceil(2);
    let low = span(1, h);
    let mut square = template(n, &[(m, 0)], 0, low);
    square.restrict(0, low);
    let mut out = vec![Start {
        label: [u32::MAX, 0, m, u32::MAX],
        weight: 8,
        rows: searched(n, &square),
    }];
    for i in 1..m {
        let first = if i < h { h } else { 1 };
        if first < m - i {
            out.push(Start {
                label: [i, 0, m, u32::MAX],
                weight: 8,
                rows: searched(n, &template(n, &[(0, i), (m, 0)], 0, span(first, m - i))),
            });
        }
    }
    out
}

/// The bits `from..to` (empty when `from >= to`).
fn span(from: u32, to: u32) -> u32 {
    (from..to).fold(0, |acc, r| acc | 1 << r)
}

/// The symmetry (an index into [`SYMMETRIES`]) that maps a corner or strict template from the
/// frame it is described in to the frame the kernel searches: a quarter turn, so the last-row
/// queen nearest its corner becomes the column-(N−1) queen near the bottom, and row 0 is
/// searched over the band. Measured on N = 14 (nodes of the whole search, all eight images
/// tried): 12% fewer nodes than searching the description frame itself.
const SEARCH_FRAME: usize = 3;

/// A corner or strict template in the frame the kernel searches.
fn searched(n: u32, rows: &Rows) -> Rows {
    image(n, rows, SEARCH_FRAME)
}

/// The template under symmetry number `s`: a cell is allowed iff its preimage was. (A
/// pre-placed queen's row and column both allow only its cell, so they stay pre-placed.)
pub(crate) fn image(n: u32, rows: &Rows, s: usize) -> Rows {
    let m = n - 1;
    let mut masks = vec![0u32; n as usize];
    for r in 0..n {
        for c in bits(rows.allowed(r)).map(u32::trailing_zeros) {
            let (r2, c2) = SYMMETRIES[s](m, (r, c));
            masks[r2 as usize] |= 1 << c2;
        }
    }
    Rows::from_masks(&masks)
}

/// A template with `queens` pre-placed (rows 0 and N−1), column 0 allowed in the rows of
/// `left`, column N−1 in the rows of `right`, and every cell a pre-placed queen attacks
/// excluded.
fn template(n: u32, queens: &[Cell], left: u32, right: u32) -> Rows {
    let m = n - 1;
    let inner = full_mask(n) & !(1 | 1 << m);
    let masks: Vec<u32> = (0..n)
        .map(|r| match queens.iter().find(|q| q.0 == r) {
            Some(&(_, c)) => 1 << c,
            None => {
                let border = (left >> r & 1) | (right >> r & 1) << m;
                let hit = queens.iter().fold(0, |acc, &q| acc | attacked(n, q, r));
                (inner | border) & !hit
            }
        })
        .collect();
    Rows::from_masks(&masks)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn corner_distance_is_symmetric() {
        assert_eq!(corner_distance(8, 1), 1);
        assert_eq!(corner_distance(8, 6), 1);
        assert_eq!(corner_distance(8, 3), 3);
    }

    #[test]
    fn ties_need_two_queens_at_the_least_distance() {
        let tie = Constellation {
            i: 2,
            j: 2,
            k: 4,
            l: 5,
        };
        assert!(is_tie(8, &tie));
        let strict = Constellation {
            i: 3,
            j: 1,
            k: 2,
            l: 5,
        };
        assert!(!is_tie(8, &strict));
    }

    #[test]
    fn strict_templates_confine_the_border_columns_to_the_band() {
        let s = template(8, &[(0, 2), (7, 1)], 0b11_1100, 0b11_1100);
        for r in 1..7 {
            // Rows 2..=5 form the band; (2, 0) is attacked by the row-0 queen at (0, 2).
            let open = (3..=5).contains(&r);
            assert_eq!(s.allowed(r) & 1 != 0, open, "row {r}");
        }
        assert_eq!(s.allowed(0), 1 << 2);
        assert_eq!(s.allowed(7), 1 << 1);
        assert_eq!(strict_starts(8)[0].label, [2, 1, u32::MAX, u32::MAX]);
    }

    #[test]
    fn the_search_frame_keeps_pre_placed_queens_pre_placed() {
        let s = template(8, &[(0, 2), (7, 1)], 0b11_1100, 0b11_1100);
        let t = searched(8, &s);
        // The quarter turn maps (0, 2) to (5, 0) and (7, 1) to (6, 7).
        assert_eq!(t.allowed(5), 1);
        assert_eq!(t.allowed(6), 1 << 7);
        let cells: u32 = (0..8).map(|r| s.allowed(r).count_ones()).sum::<u32>();
        assert_eq!(
            cells,
            (0..8).map(|r| t.allowed(r).count_ones()).sum::<u32>()
        );
    }
}
