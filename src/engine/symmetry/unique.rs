//! Fundamental solutions by Burnside's lemma.
//!
//! The number of orbits of solutions under the eight symmetries of the square is the average
//! number of solutions each symmetry fixes. For N ≥ 2 no solution is fixed by a reflection
//! (a reflection fixes a whole line or diagonal of cells, and its queens would attack), so
//! `U = (Q + S180 + 2·S90) / 8`, where `S180` counts the solutions fixed by the half turn
//! (those fixed by the quarter turn included) and `S90` those fixed by the quarter turn.
//! Both come from a small search that places whole orbits of cells at
//! once; it is far smaller than the count of `Q` itself.

use super::constellation::{Cell, SYMMETRIES};
use crate::engine::kernel::bits;

/// Index of the quarter turn in [`SYMMETRIES`].
const QUARTER_TURN: usize = 1;
/// Index of the half turn in [`SYMMETRIES`].
const HALF_TURN: usize = 2;

/// The number of fundamental solutions of an `n`×`n` board with `total` solutions, or `None`
/// if Burnside's sum is not a multiple of 8 (which would mean `total` is wrong).
pub(crate) fn unique(n: u32, total: u128) -> Option<u128> {
    if n == 1 {
        // The single queen is fixed by every symmetry, reflections included.
        return (total == 1).then_some(1);
    }
    let sum = total + half_turn_symmetric(n) + 2 * quarter_turn_symmetric(n);
    sum.is_multiple_of(8).then_some(sum / 8)
}

/// The number of solutions fixed by the half turn.
pub(crate) fn half_turn_symmetric(n: u32) -> u128 {
    Symmetric::new(n, HALF_TURN).count()
}

/// The number of solutions fixed by the quarter turn.
pub(crate) fn quarter_turn_symmetric(n: u32) -> u128 {
    Symmetric::new(n, QUARTER_TURN).count()
}

/// A search over placements closed under one rotation: each step fills the first empty row
/// with a queen and all of its images at once.
struct Symmetric {
    n: u32,
    turn: usize,
    rows: u32,
    cols: u32,
    /// Occupied diagonals `r + c`.
    sums: u64,
    /// Occupied diagonals `r − c + n − 1`.
    diffs: u64,
}

impl Symmetric {
    fn new(n: u32, turn: usize) -> Self {
        Symmetric {
            n,
            turn,
            rows: 0,
            cols: 0,
            sums: 0,
            diffs: 0,
        }
    }

    /// The solutions that complete the current placement.
    fn count(&mut self) -> u128 {
        let full = crate::engine::kernel::full_mask(self.n);
        if self.rows == full {
            return 1;
        }
        let r = (!self.rows).trailing_zeros();
        let mut total = 0;
        for c in bits(self.free_in_row(r, full)).map(u32::trailing_zeros) {
            let saved = (self.rows, self.cols, self.sums, self.diffs);
            if self.place_orbit((r, c)) {
                total += self.count();
            }
            (self.rows, self.cols, self.sums, self.diffs) = saved;
        }
        total
    }

    /// The columns of row `r` whose cell is not attacked (its images are checked when
    /// placed).
    fn free_in_row(&self, r: u32, full: u32) -> u32 {
        let sums = (self.sums >> r) as u32 & full;
        // Bit `r + n − 1 − c` of `diffs` is the diagonal of (r, c): reverse it into bit c.
        let diffs = ((self.diffs >> r) as u32 & full).reverse_bits() >> (32 - self.n);
        full & !(self.cols | sums | diffs)
    }

    /// Places `cell` and its images under the rotation; false if any of them is attacked
    /// (the placement is then left half-done for the caller to restore).
    fn place_orbit(&mut self, cell: Cell) -> bool {
        let m = self.n - 1;
        let mut current = cell;
        loop {
            if !self.place(current) {
                return false;
            }
            current = SYMMETRIES[self.turn](m, current);
            if current == cell {
                return true;
            }
        }
    }

    /// Places one queen; false if its row, column or a diagonal is taken.
    fn place(&mut self, (r, c): Cell) -> bool {
        let row = 1u32 << r;
        let col = 1u32 << c;
        let sum = 1u64 << (r + c);
        let diff = 1u64 << (r + self.n - 1 - c);
        if self.rows & row != 0
            || self.cols & col != 0
            || self.sums & sum != 0
            || self.diffs & diff != 0
        {
            return false;
        }
        self.rows |= row;
        self.cols |= col;
        self.sums |= sum;
        self.diffs |= diff;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::known;

    #[test]
    fn burnside_reproduces_the_hand_checked_small_boards() {
        // N=4: (2 + 2 + 2·2)/8 = 1; N=5: (10 + 2 + 2·2)/8 = 2.
        assert_eq!(half_turn_symmetric(4), 2);
        assert_eq!(quarter_turn_symmetric(4), 2);
        assert_eq!(half_turn_symmetric(5), 2);
        assert_eq!(quarter_turn_symmetric(5), 2);
        assert_eq!(unique(4, 2), Some(1));
        assert_eq!(unique(5, 10), Some(2));
    }

    #[test]
    fn unique_counts_match_the_published_values_given_the_totals() {
        for n in 1..=14 {
            let total = known::total(n).unwrap();
            assert_eq!(unique(n, total), known::unique(n), "n = {n}");
        }
    }

    #[test]
    fn a_wrong_total_is_caught_by_divisibility() {
        assert_eq!(unique(8, 93), None);
        assert_eq!(unique(1, 2), None);
    }

    #[test]
    fn quarter_turn_symmetry_needs_n_mod_4_in_0_or_1() {
        for n in [6, 7, 10, 11, 14] {
            assert_eq!(quarter_turn_symmetric(n), 0, "n = {n}");
        }
    }
}
