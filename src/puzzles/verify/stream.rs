//! The check of a line too long to keep: a few bits per value, growing with the line.
//!
//! The rows seen and the diagonals taken are bitsets (n bits for the rows, 2n for each kind
//! of diagonal), so a line of 2^32 − 1 values takes 2.7 GB. The board size is the line's
//! length, known only at its end, so every queen is placed as it comes: a queen on a row
//! or diagonal taken before counts as a problem, named by its own column (the earlier
//! queen is not kept), and at the end the rows above n are counted as out of range.

use crate::error::Error;

use super::{PermutationCheck, Problem, MAX_REPORTED};

/// A bitset that grows as its bits are set.
#[derive(Default)]
struct Bits(Vec<u64>);

impl Bits {
    /// Sets bit `i` and says whether it was already set.
    ///
    /// # Errors
    /// [`Error::Memory`] when it cannot grow.
    #[inline(always)]
    fn test_and_set(&mut self, i: u64) -> Result<bool, Error> {
        let word = (i / 64) as usize;
        if word >= self.0.len() {
            self.grow(word)?;
        }
        let bit = 1u64 << (i % 64);
        let was = self.0[word] & bit != 0;
        self.0[word] |= bit;
        Ok(was)
    }

    /// Grows to hold `word`, doubling, so a line of n values grows each set log n times.
    fn grow(&mut self, word: usize) -> Result<(), Error> {
        let len = (word + 1).max(2 * self.0.len());
        self.0
            .try_reserve_exact(len - self.0.len())
            .map_err(|_| Error::Memory {
                what: "checking a line this long".to_string(),
                need: (len * 8) as u64,
                reason: "the system refused to allocate it".to_string(),
            })?;
        self.0.resize(len, 0);
        Ok(())
    }

    /// The bits set from bit `from` on.
    fn count_from(&self, from: u64) -> u64 {
        let word = (from / 64) as usize;
        let Some(first) = self.0.get(word) else {
            return 0;
        };
        let head = u64::from((first >> (from % 64)).count_ones());
        let rest: u64 = self.0[word + 1..]
            .iter()
            .map(|w| u64::from(w.count_ones()))
            .sum();
        head + rest
    }
}

/// A line being checked as it streams.
#[derive(Default)]
pub(crate) struct Stream {
    columns: u64,
    /// Rows (0-based) taken.
    rows: Bits,
    /// Diagonals `column + row` taken.
    sums: Bits,
    /// Diagonals `column − row` taken: `≥ 0` here, and `row − column − 1` below.
    above: Bits,
    below: Bits,
    check: PermutationCheck,
}

impl Stream {
    pub(crate) fn new() -> Stream {
        Stream::default()
    }

    /// Places the queen of the next column in (1-based) row `value`.
    ///
    /// # Errors
    /// [`Error::Memory`] when the bitsets cannot grow.
    #[inline(always)]
    pub(crate) fn push(&mut self, value: u32) -> Result<(), Error> {
        let column = self.columns;
        self.columns += 1;
        if value == 0 {
            self.check.add(Problem::OutOfRange {
                column: column + 1,
                row: 0,
                n: 0,
            });
            return Ok(());
        }
        let row = u64::from(value) - 1;
        let taken = |line| Problem::Taken {
            column: column + 1,
            row: u64::from(value),
            line,
        };
        if self.rows.test_and_set(row)? {
            self.check.add(taken("row"));
        }
        if self.sums.test_and_set(column + row)? {
            self.check.add(taken("diagonal"));
        }
        let other = if column >= row {
            self.above.test_and_set(column - row)?
        } else {
            self.below.test_and_set(row - column - 1)?
        };
        if other {
            self.check.add(taken("diagonal"));
        }
        Ok(())
    }

    /// The verdict on the whole line, of `expected` values if given.
    pub(crate) fn finish(mut self, expected: Option<u64>) -> PermutationCheck {
        let n = self.columns;
        self.check.n = n;
        for p in &mut self.check.problems {
            if let Problem::OutOfRange { n: of, .. } = p {
                *of = n;
            }
        }
        let above = self.rows.count_from(n);
        if above > 0 {
            self.check.add(Problem::RowsAbove { count: above, n });
            self.check.conflicts += above - 1;
        }
        if let Some(e) = expected.filter(|&e| e != n) {
            self.check.problems.truncate(MAX_REPORTED - 1);
            let wrong = Problem::WrongLength {
                expected: e,
                found: n,
            };
            self.check.problems.insert(0, wrong);
            self.check.conflicts += 1;
        }
        self.check
    }
}
