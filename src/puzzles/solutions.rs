//! Every solution, streamed in lexicographic order.
//!
//! [`Solutions`] walks the search tree depth first with an explicit stack, trying columns from
//! left to right, so solutions come out in lexicographic order of their column lists and
//! nothing but the current path is kept in memory. The same walker enumerates the solutions
//! that fit a [`Mask`] (the two-colour counter builds on it).

use std::io::{self, Write};

use crate::error::Error;
use crate::puzzles::mask::Mask;

/// A depth-first walk over the solutions of one board, lexicographic by columns.
///
/// ```
/// let first: Vec<Vec<u32>> = nqueens::puzzles::solutions::Solutions::new(4).unwrap().collect();
/// assert_eq!(first, vec![vec![1, 3, 0, 2], vec![2, 0, 3, 1]]);
/// ```
#[derive(Debug, Clone)]
pub struct Solutions {
    n: usize,
    /// Allowed cells of each row.
    allowed: [u32; 32],
    /// Per row of the current path: occupied columns, the two diagonal masks, and the cells
    /// still to try.
    cols: [u32; 32],
    ld: [u32; 32],
    rd: [u32; 32],
    free: [u32; 32],
    /// The row being filled; `None` once the walk is over.
    depth: Option<usize>,
    /// The 0-based column of the queen in each row of the current path.
    chosen: Vec<u32>,
}

impl Solutions {
    /// The solutions of the plain `n`×`n` board.
    ///
    /// # Errors
    /// [`Error::BoardSize`] unless 1 ≤ n ≤ 32.
    pub fn new(n: u32) -> Result<Solutions, Error> {
        Ok(Solutions::with_mask(&Mask::full(n)?))
    }

    /// The solutions whose queens all stand on cells `mask` allows.
    pub fn with_mask(mask: &Mask) -> Solutions {
        let n = mask.n() as usize;
        let mut allowed = [0u32; 32];
        allowed[..n].copy_from_slice(mask.row_masks());
        let mut free = [0u32; 32];
        free[0] = allowed[0];
        Solutions {
            n,
            allowed,
            cols: [0; 32],
            ld: [0; 32],
            rd: [0; 32],
            free,
            depth: Some(0),
            chosen: vec![0; n],
        }
    }

    /// The board size.
    pub fn n(&self) -> u32 {
        self.n as u32
    }

    /// Advances to the next solution and returns its columns (0-based, one per row), without
    /// allocating; `None` when every solution has been seen.
    pub fn next_solution(&mut self) -> Option<&[u32]> {
        let mut d = self.depth?;
        loop {
            let f = self.free[d];
            if f == 0 {
                if d == 0 {
                    self.depth = None;
                    return None;
                }
                d -= 1;
                continue;
            }
            let bit = f & f.wrapping_neg();
            self.free[d] = f ^ bit;
            self.chosen[d] = bit.trailing_zeros();
            if d + 1 == self.n {
                self.depth = Some(d);
                return Some(&self.chosen);
            }
            let cols = self.cols[d] | bit;
            let ld = (self.ld[d] | bit) << 1;
            let rd = (self.rd[d] | bit) >> 1;
            let next = self.allowed[d + 1] & !(cols | ld | rd);
            if next != 0 {
                d += 1;
                (self.cols[d], self.ld[d], self.rd[d], self.free[d]) = (cols, ld, rd, next);
            }
        }
    }
}

impl Iterator for Solutions {
    type Item = Vec<u32>;

    fn next(&mut self) -> Option<Vec<u32>> {
        self.next_solution().map(<[u32]>::to_vec)
    }
}

/// Writes a solution as 1-based columns, one per row, separated by spaces, on one line.
pub fn write_perm(out: &mut impl Write, cols: &[u32]) -> io::Result<()> {
    let mut buf = itoa::Buffer::new();
    for (i, &c) in cols.iter().enumerate() {
        if i > 0 {
            out.write_all(b" ")?;
        }
        out.write_all(buf.format(c + 1).as_bytes())?;
    }
    out.write_all(b"\n")
}

/// Writes a solution as a board: one line per row, `Q` for the queen, `.` elsewhere.
///
/// # Errors
/// An [`io::ErrorKind::InvalidInput`] error, before anything is written, for a column not
/// on the board (`≥` the number of rows); otherwise `out`'s errors.
pub fn write_board(out: &mut impl Write, cols: &[u32]) -> io::Result<()> {
    let n = cols.len();
    if let Some((r, c)) = cols.iter().enumerate().find(|(_, &c)| c as usize >= n) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("row {r} has its queen in column {c}, off a board of {n} columns"),
        ));
    }
    let mut line = vec![b'.'; n + 1];
    line[n] = b'\n';
    for &c in cols {
        line[c as usize] = b'Q';
        out.write_all(&line)?;
        line[c as usize] = b'.';
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::known;

    fn is_solution(cols: &[u32]) -> bool {
        cols.iter().enumerate().all(|(r, &c)| {
            cols[..r]
                .iter()
                .enumerate()
                .all(|(r2, &c2)| c != c2 && (r - r2) as i64 != (i64::from(c) - i64::from(c2)).abs())
        })
    }

    #[test]
    fn counts_match_the_known_values() {
        for n in 1..=10 {
            let all: Vec<Vec<u32>> = Solutions::new(n).unwrap().collect();
            assert_eq!(Some(all.len() as u128), known::total(n), "n = {n}");
            assert!(all.iter().all(|s| is_solution(s)), "n = {n}");
        }
    }

    #[test]
    fn solutions_come_in_strict_lexicographic_order() {
        let all: Vec<Vec<u32>> = Solutions::new(8).unwrap().collect();
        assert!(all.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(all[0], vec![0, 4, 7, 5, 2, 6, 1, 3]);
    }

    #[test]
    fn masked_solutions_avoid_blocked_cells() {
        let mut rows = vec![0b11111u32; 5];
        rows[0] = 0b11110; // column 0 of row 0 blocked
        let mask = Mask::from_rows(&rows).unwrap();
        let masked: Vec<Vec<u32>> = Solutions::with_mask(&mask).collect();
        let plain: Vec<Vec<u32>> = Solutions::new(5).unwrap().filter(|s| s[0] != 0).collect();
        assert_eq!(masked, plain);
    }

    #[test]
    fn a_column_off_the_board_is_an_error_not_a_panic() {
        let mut out = Vec::new();
        let err = write_board(&mut out, &[1, 4, 0]).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
        assert!(out.is_empty());
    }

    #[test]
    fn boards_and_perms_render() {
        let mut out = Vec::new();
        write_perm(&mut out, &[1, 3, 0, 2]).unwrap();
        write_board(&mut out, &[1, 3, 0, 2]).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(text, "2 4 1 3\n.Q..\n...Q\nQ...\n..Q.\n");
    }
}
