//! Checking a claimed solution in O(n) time and memory.
//!
//! A solution of size n is a list of n values, the 1-based row of the queen in each column
//! (or, equivalently, the column in each row). It is valid iff every value is in 1..=n, no
//! value repeats, and no two queens share a diagonal: all `column + row` distinct and all
//! `column − row` distinct. Three bitsets (n bits and two of 2n bits) decide that in one pass.
//! When it fails, [`check`] says which queens attack each other, so a wrong answer can be
//! fixed without a second tool.

use std::fmt;
use std::io::BufRead;

use crate::error::Error;

/// How many problems a [`PermutationCheck`] spells out; the rest are only counted.
pub const MAX_REPORTED: usize = 10;

/// The most values one line may hold (1 GiB of memory as `u32`): an endless line of numbers
/// is an error, not unbounded memory. `place` output for n = 10^8 fits easily.
pub const MAX_LINE_VALUES: usize = 1 << 28;

/// One reason a permutation is not a solution. Columns and rows are 1-based.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Problem {
    /// The list does not have the expected length.
    WrongLength {
        /// The length asked for.
        expected: u64,
        /// The length found.
        found: u64,
    },
    /// A value is 0 or larger than n.
    OutOfRange {
        /// The queen's column.
        column: u64,
        /// Its value.
        row: u64,
        /// The board size.
        n: u64,
    },
    /// Two queens on the same row.
    SameRow {
        /// The earlier queen's column.
        first: u64,
        /// The later queen's column.
        second: u64,
        /// The row they share.
        row: u64,
    },
    /// Two queens on the same diagonal.
    Diagonal {
        /// The earlier queen's column and row.
        first: (u64, u64),
        /// The later queen's column and row.
        second: (u64, u64),
    },
    /// A queen on a row or diagonal an earlier queen holds, in a line checked as it streamed
    /// (see [`check_answers`]), where the earlier queen is not known.
    Taken {
        /// The queen's column.
        column: u64,
        /// Its row.
        row: u64,
        /// `row` or `diagonal`.
        line: &'static str,
    },
    /// Queens with rows above n, in a line checked as it streamed: how many distinct rows.
    RowsAbove {
        /// The number of distinct rows above n that queens take.
        count: u64,
        /// The board size.
        n: u64,
    },
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Problem::WrongLength { expected, found } => {
                write!(f, "{found} values, expected {expected}")
            }
            Problem::OutOfRange { column, row, n } => {
                write!(
                    f,
                    "the queen in column {column} has row {row}, outside 1..={n}"
                )
            }
            Problem::SameRow { first, second, row } => write!(
                f,
                "the queens in columns {first} and {second} attack each other along row {row}"
            ),
            Problem::Diagonal { first, second } => write!(
                f,
                "the queens at (column {}, row {}) and (column {}, row {}) attack each other \
                 along a diagonal",
                first.0, first.1, second.0, second.1
            ),
            Problem::Taken { column, row, line } => write!(
                f,
                "the queen at (column {column}, row {row}) is on a {line} an earlier queen holds"
            ),
            Problem::RowsAbove { count, n } => {
                write!(f, "queens on {count} rows above n = {n}, outside 1..={n}")
            }
        }
    }
}

/// The outcome of checking one permutation.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PermutationCheck {
    /// The number of values checked (the board size).
    pub n: u64,
    /// The first [`MAX_REPORTED`] problems, in column order.
    pub problems: Vec<Problem>,
    /// The total number of problems: each queen that is out of range or shares a row or
    /// diagonal with an earlier queen counts once per shared line, plus one for a wrong length.
    /// (In a line checked as it streamed, queens out of range count once per distinct row
    /// above n, and also for the lines they share.)
    pub conflicts: u64,
}

impl PermutationCheck {
    /// Whether the permutation is a solution.
    pub fn is_valid(&self) -> bool {
        self.conflicts == 0
    }
}

/// A growable-free bitset of a fixed size.
struct Bits(Vec<u64>);

impl Bits {
    fn new(len: usize) -> Bits {
        Bits(vec![0; len.div_ceil(64)])
    }

    /// Sets bit `i` and says whether it was already set.
    fn test_and_set(&mut self, i: usize) -> bool {
        let word = &mut self.0[i / 64];
        let bit = 1u64 << (i % 64);
        let was = *word & bit != 0;
        *word |= bit;
        was
    }
}

/// Checks `rows` (1-based values, one per column) as an N-Queens solution, optionally of
/// length `expected`.
///
/// ```
/// use nqueens::puzzles::verify::check;
/// assert!(check(&[2, 4, 1, 3], Some(4)).is_valid());
/// assert_eq!(check(&[1, 2, 3, 4], None).problems.len(), 3);
/// ```
pub fn check(rows: &[u32], expected: Option<u64>) -> PermutationCheck {
    let n = rows.len();
    let mut verdict = PermutationCheck {
        n: n as u64,
        problems: Vec::new(),
        conflicts: 0,
    };
    if let Some(e) = expected.filter(|&e| e != n as u64) {
        verdict.add(Problem::WrongLength {
            expected: e,
            found: n as u64,
        });
    }
    let (mut seen, mut sums, mut diffs) = (Bits::new(n), Bits::new(2 * n), Bits::new(2 * n));
    for (col, &value) in rows.iter().enumerate() {
        let v = value as usize;
        if v == 0 || v > n {
            verdict.add(Problem::OutOfRange {
                column: col as u64 + 1,
                row: u64::from(value),
                n: n as u64,
            });
            continue;
        }
        let row = v - 1;
        if seen.test_and_set(row) {
            verdict.add_with(|| same_row(rows, col));
        }
        if sums.test_and_set(col + row) {
            verdict.add_with(|| diagonal(rows, col, |c, r| c + r == col + row));
        }
        if diffs.test_and_set(col + n - row) {
            verdict.add_with(|| diagonal(rows, col, |c, r| c + row == col + r));
        }
    }
    verdict
}

impl PermutationCheck {
    fn add(&mut self, problem: Problem) {
        self.add_with(|| problem);
    }

    /// Counts a problem; builds its description (an O(n) scan) only while few are listed.
    fn add_with(&mut self, problem: impl FnOnce() -> Problem) {
        self.conflicts += 1;
        if self.problems.len() < MAX_REPORTED {
            self.problems.push(problem());
        }
    }
}

/// The row clash of the queen in column `col` with the earliest queen on its row.
fn same_row(rows: &[u32], col: usize) -> Problem {
    let first = rows[..col]
        .iter()
        .position(|&r| r == rows[col])
        .expect("an earlier queen set the bit");
    Problem::SameRow {
        first: first as u64 + 1,
        second: col as u64 + 1,
        row: u64::from(rows[col]),
    }
}

/// The diagonal clash of the queen in column `col` with the earliest in-range queen (0-based
/// column, 0-based row) that `on_line` accepts.
fn diagonal(rows: &[u32], col: usize, on_line: impl Fn(usize, usize) -> bool) -> Problem {
    let n = rows.len();
    let first = (0..col)
        .find(|&c| (1..=n).contains(&(rows[c] as usize)) && on_line(c, rows[c] as usize - 1))
        .expect("an earlier queen set the bit");
    Problem::Diagonal {
        first: (first as u64 + 1, u64::from(rows[first])),
        second: (col as u64 + 1, u64::from(rows[col])),
    }
}

/// Reads whitespace-separated permutations, one per non-empty line, calling `each` with the
/// 1-based line number and the values. Streams: memory is one line's values.
///
/// # Errors
/// [`Error::Parse`] with line and column for anything but digits and blanks (a `no
/// solution` line included: [`check_answers`] reads those), a number that does not fit 32
/// bits or a line of more than [`MAX_LINE_VALUES`] numbers; [`Error::Io`] if reading fails;
/// and whatever `each` returns.
pub fn read_perms<R: BufRead>(
    input: R,
    source: &str,
    mut each: impl FnMut(usize, &[u32]) -> Result<(), Error>,
) -> Result<(), Error> {
    let reader = PermReader::new(source, None);
    reader.read(input, &mut |line, read| match read {
        Line::Values(values) => each(line, values),
        Line::Checked(_) | Line::NoSolution => unreachable!("only answers stream or claim"),
    })
}

/// One line of answers, as [`check_answers`] reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Answer {
    /// A permutation, checked.
    Checked(PermutationCheck),
    /// The line `no solution` (what `place --stdin` prints for n = 2 and 3).
    NoSolution,
}

/// Lines longer than this many values are checked as they are read, in a few bits per
/// value, instead of being kept: a line of `place 4294967295` (43 GB of text) takes 2.7 GB.
/// Their problems then name only the later queen of each attacking pair.
pub const STREAM_FROM: usize = 1 << 24;

/// Reads and checks answers, one per non-empty line: permutations (checked as [`check`]
/// does, against `expected` values if given) or the line `no solution`; calls `each` with
/// the 1-based line number and the answer. Lines of any length up to 2^32 − 1 values are
/// checked: up to [`STREAM_FROM`] values as [`check`] does, longer ones as they stream
/// (every queen that repeats a row or diagonal is counted and at most [`MAX_REPORTED`] are
/// named, by their own column; rows above n are counted together).
///
/// # Errors
/// [`Error::Parse`] with line and column for anything but digits and blanks (or a whole
/// line `no solution`), or a number that does not fit 32 bits; [`Error::Memory`] when a
/// streamed line's bitsets cannot be allocated; [`Error::Io`] if reading fails; and
/// whatever `each` returns.
pub fn check_answers<R: BufRead>(
    input: R,
    source: &str,
    expected: Option<u64>,
    mut each: impl FnMut(usize, &Answer) -> Result<(), Error>,
) -> Result<(), Error> {
    check_answers_from(input, source, expected, STREAM_FROM, &mut each)
}

/// [`check_answers`], streaming lines from `stream_from` values (tests make it small).
pub(crate) fn check_answers_from<R: BufRead>(
    input: R,
    source: &str,
    expected: Option<u64>,
    stream_from: usize,
    each: &mut dyn FnMut(usize, &Answer) -> Result<(), Error>,
) -> Result<(), Error> {
    let reader = PermReader::new(source, Some((expected, stream_from)));
    reader.read(input, &mut |line, read| {
        let answer = match read {
            Line::Values(values) => Answer::Checked(check(values, expected)),
            Line::Checked(check) => Answer::Checked(check),
            Line::NoSolution => Answer::NoSolution,
        };
        each(line, &answer)
    })
}

mod read;
mod stream;

use read::{Line, PermReader};

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::strategy::Strategy;

    #[test]
    fn non_ascii_characters_are_named_whole() {
        let err = read("1 é 3\n").unwrap_err().to_string();
        assert!(err.contains("'é'"), "{err}");
        let err = read("1 \u{1F600}\n").unwrap_err().to_string();
        assert!(err.contains("'\u{1F600}'"), "{err}");
        let err = read_bytes(b"1 \xff\n").unwrap_err().to_string();
        assert!(err.contains("0xFF"), "{err}");
    }

    fn read_bytes(bytes: &[u8]) -> Result<(), Error> {
        read_perms(bytes, "t", |_, _| Ok(()))
    }

    fn read(text: &str) -> Result<Vec<(usize, Vec<u32>)>, Error> {
        let mut all = Vec::new();
        read_perms(text.as_bytes(), "t", |line, v| {
            all.push((line, v.to_vec()));
            Ok(())
        })?;
        Ok(all)
    }

    /// Counts attacking pairs and out-of-range values pair by pair: the O(n²) definition.
    fn brute_is_valid(rows: &[u32]) -> bool {
        let n = rows.len() as i64;
        rows.iter().all(|&r| (1..=n).contains(&i64::from(r)))
            && (0..rows.len()).all(|a| {
                (a + 1..rows.len()).all(|b| {
                    let (ra, rb) = (i64::from(rows[a]), i64::from(rows[b]));
                    ra != rb && (ra - rb).abs() != (b - a) as i64
                })
            })
    }

    proptest::proptest! {
        #[test]
        fn check_agrees_with_the_pairwise_definition(
            rows in proptest::collection::vec(0u32..=9, 1..=9)
        ) {
            let verdict = check(&rows, None);
            proptest::prop_assert_eq!(verdict.is_valid(), brute_is_valid(&rows));
            proptest::prop_assert_eq!(verdict.problems.is_empty(), verdict.is_valid());
        }

        /// Near the valid ones: a random solution or a shuffled permutation of 1..=n, left as
        /// it is, with one value changed, or with two swapped, so both verdicts come up often
        /// (random lists are almost never even permutations).
        #[test]
        fn check_agrees_with_the_pairwise_definition_near_valid_permutations(
            n in 4u64..=40,
            seed in proptest::prelude::any::<u64>(),
            shuffled in proptest::prelude::any::<bool>(),
            change in 0u8..3,
            at in proptest::prelude::any::<proptest::sample::Index>(),
            other in proptest::prelude::any::<proptest::sample::Index>(),
            value in 0u32..=41,
        ) {
            let mut rows = if shuffled {
                let mut rows: Vec<u32> = (1..=n as u32).collect();
                fastrand::Rng::with_seed(seed).shuffle(&mut rows);
                rows
            } else {
                crate::puzzles::place::min_conflicts(n, seed).unwrap()
            };
            let (i, j) = (at.index(rows.len()), other.index(rows.len()));
            match change {
                1 => rows[i] = value,
                2 => rows.swap(i, j),
                _ => {}
            }
            let verdict = check(&rows, Some(n));
            proptest::prop_assert_eq!(verdict.is_valid(), brute_is_valid(&rows));
            proptest::prop_assert_eq!(verdict.problems.is_empty(), verdict.is_valid());
            if !shuffled && change == 0 {
                proptest::prop_assert!(verdict.is_valid(), "a solution: {:?}", rows);
            }
            for p in verdict.problems {
                if let Problem::Diagonal { first, second } = p {
                    proptest::prop_assert_eq!(rows[first.0 as usize - 1], first.1 as u32);
                    proptest::prop_assert_eq!(first.1.abs_diff(second.1), second.0 - first.0);
                }
            }
        }

        #[test]
        fn every_listed_pair_really_attacks(
            rows in proptest::collection::vec(1u32..=8, 8)
        ) {
            for p in check(&rows, None).problems {
                match p {
                    Problem::SameRow { first, second, row } => {
                        proptest::prop_assert_eq!(rows[first as usize - 1], row as u32);
                        proptest::prop_assert_eq!(rows[second as usize - 1], row as u32);
                    }
                    Problem::Diagonal { first, second } => {
                        proptest::prop_assert_eq!(rows[first.0 as usize - 1], first.1 as u32);
                        proptest::prop_assert_eq!(rows[second.0 as usize - 1], second.1 as u32);
                        proptest::prop_assert_eq!(first.1.abs_diff(second.1), second.0 - first.0);
                    }
                    other => proptest::prop_assert!(false, "unexpected {other:?}"),
                }
            }
        }
    }

    #[test]
    fn valid_solutions_pass() {
        assert!(check(&[1], None).is_valid());
        assert!(check(&[2, 4, 1, 3], Some(4)).is_valid());
        assert!(check(&[1, 5, 8, 6, 3, 7, 2, 4], None).is_valid());
    }

    #[test]
    fn duplicates_name_both_columns() {
        let v = check(&[2, 4, 2, 3], None);
        assert!(!v.is_valid());
        assert!(v.problems.contains(&Problem::SameRow {
            first: 1,
            second: 3,
            row: 2
        }));
    }

    #[test]
    fn diagonal_attacks_name_both_queens() {
        let v = check(&[1, 3, 5, 2, 4], None);
        assert!(v.is_valid());
        let v = check(&[1, 3, 2], None);
        assert_eq!(
            v.problems,
            vec![Problem::Diagonal {
                first: (2, 3),
                second: (3, 2)
            }]
        );
        let v = check(&[2, 1, 4, 3], None);
        assert!(v.problems.contains(&Problem::Diagonal {
            first: (1, 2),
            second: (2, 1)
        }));
    }

    #[test]
    fn out_of_range_and_wrong_length_are_reported() {
        let v = check(&[0, 2, 5], None);
        assert_eq!(
            v.problems[0],
            Problem::OutOfRange {
                column: 1,
                row: 0,
                n: 3
            }
        );
        assert!(v.problems.contains(&Problem::OutOfRange {
            column: 3,
            row: 5,
            n: 3
        }));
        let v = check(&[2, 4, 1, 3], Some(5));
        assert_eq!(
            v.problems,
            vec![Problem::WrongLength {
                expected: 5,
                found: 4
            }]
        );
    }

    #[test]
    fn many_problems_are_counted_but_few_listed() {
        let rows: Vec<u32> = (1..=1000).collect();
        let v = check(&rows, None);
        assert_eq!(v.conflicts, 999);
        assert_eq!(v.problems.len(), MAX_REPORTED);
    }

    #[test]
    fn reader_splits_lines_and_skips_blank_ones() {
        let all = read("2 4 1 3\n\n  1\t\r\n3 1 4 2").unwrap();
        assert_eq!(
            all,
            vec![(1, vec![2, 4, 1, 3]), (3, vec![1]), (4, vec![3, 1, 4, 2])]
        );
    }

    /// The answers of `text`, read in blocks of `block` bytes, lines streaming from
    /// `stream_from` values.
    fn answers(
        text: &str,
        block: usize,
        stream_from: usize,
    ) -> Result<Vec<(usize, Answer)>, Error> {
        let mut all = Vec::new();
        let input = std::io::BufReader::with_capacity(block, text.as_bytes());
        check_answers_from(input, "t", None, stream_from, &mut |line, answer| {
            all.push((line, answer.clone()));
            Ok(())
        })?;
        Ok(all)
    }

    #[test]
    fn no_solution_lines_are_answers_in_any_block_size() {
        let text = "2 4 1 3\nno solution\n\n  no solution \r\n3 1 4 2\nno solution";
        for block in [1, 3, 7, 64] {
            let all = answers(text, block, STREAM_FROM).unwrap();
            let lines: Vec<usize> = all.iter().map(|(line, _)| *line).collect();
            assert_eq!(lines, [1, 2, 4, 5, 6], "block {block}");
            assert_eq!(all[1].1, Answer::NoSolution);
            assert_eq!(all[2].1, Answer::NoSolution);
            assert_eq!(all[4].1, Answer::NoSolution);
            assert!(matches!(&all[3].1, Answer::Checked(c) if c.is_valid()));
        }
        for (bad, line, column) in [
            ("no solutions\n", 1, 1),
            ("4\n  no solution 3\n", 2, 3),
            ("1 no solution\n", 1, 3),
            ("nope\n", 1, 1),
        ] {
            match answers(bad, 2, STREAM_FROM) {
                Err(Error::Parse {
                    line: l, column: c, ..
                }) => {
                    assert_eq!((l, c), (line, Some(column)), "{bad:?}")
                }
                other => panic!("{bad:?}: {other:?}"),
            }
        }
        let endless = "n".repeat(10_000);
        assert!(answers(&endless, 16, STREAM_FROM).is_err());
        assert!(
            read("no solution\n").is_err(),
            "read_perms reads permutations only"
        );
    }

    #[test]
    fn a_streamed_line_names_the_later_queen_and_counts_rows_above_n() {
        let verdict = |text: &str| match answers(text, 64, 2).unwrap().remove(0).1 {
            Answer::Checked(check) => check,
            other => panic!("{other:?}"),
        };
        let valid = verdict("2 4 6 8 3 1 7 5\n");
        assert!(valid.is_valid());
        assert_eq!(valid.n, 8);
        let twice = verdict("2 4 1 3 2\n");
        assert!(twice.problems.contains(&Problem::Taken {
            column: 5,
            row: 2,
            line: "row"
        }));
        let above = verdict("1 9 9 3\n");
        assert!(above
            .problems
            .contains(&Problem::RowsAbove { count: 1, n: 4 }));
        let zero = verdict("0 2 4 1 3\n");
        assert!(zero.problems.contains(&Problem::OutOfRange {
            column: 1,
            row: 0,
            n: 5
        }));
        let mut short = Vec::new();
        check_answers_from("2 4 1 3\n".as_bytes(), "t", Some(5), 2, &mut |_, a| {
            short.push(a.clone());
            Ok(())
        })
        .unwrap();
        assert!(matches!(&short[0], Answer::Checked(c)
            if c.problems[0] == Problem::WrongLength { expected: 5, found: 4 }));
    }

    proptest::proptest! {
        #[test]
        fn streamed_lines_agree_with_kept_ones(
            rows in proptest::collection::vec(1u32..=12, 1..=12),
            stream_from in 1usize..=6,
        ) {
            let text: Vec<String> = rows.iter().map(u32::to_string).collect();
            let text = text.join(" ");
            let Answer::Checked(streamed) = answers(&text, 5, stream_from).unwrap().remove(0).1 else {
                panic!("a permutation line");
            };
            let kept = check(&rows, None);
            proptest::prop_assert_eq!(streamed.is_valid(), kept.is_valid());
            proptest::prop_assert_eq!(streamed.n, kept.n);
            if rows.iter().all(|&r| r as usize <= rows.len()) {
                proptest::prop_assert_eq!(streamed.conflicts, kept.conflicts);
            }
        }

        #[test]
        fn permutations_shuffled_verify_as_the_pairwise_definition_says(
            rows in (1usize..=10).prop_flat_map(|n| {
                proptest::strategy::Just((1..=n as u32).collect::<Vec<u32>>()).prop_shuffle()
            }),
        ) {
            let verdict = check(&rows, None);
            proptest::prop_assert_eq!(verdict.is_valid(), brute_is_valid(&rows));
        }
    }

    #[test]
    fn junk_is_a_parse_error_with_position() {
        for (text, line, column) in [
            ("1 2 x\n", 1, 5),
            ("2 4 1 3\n1 -2\n", 2, 3),
            ("99999999999\n", 1, 1),
        ] {
            match read(text) {
                Err(Error::Parse {
                    line: l, column: c, ..
                }) => assert_eq!((l, c), (line, Some(column)), "{text:?}"),
                other => panic!("{text:?}: {other:?}"),
            }
        }
    }
}
