//! Boards with blocked cells: the mask format, its symmetries, and a parallel counter.
//!
//! A mask file has one line per row and one cell per column: `1` or `.` for an allowed cell,
//! `0` or `#` for a blocked one; spaces and tabs between cells are ignored, and so are blank
//! lines before the first row and after the last. [`count_masked`] counts the placements of N mutually non-attacking queens
//! on allowed cells with the shared kernel (`crate::engine::kernel`), in parallel on the plan
//! executor. When the mask is left-right symmetric (or top-bottom symmetric, which becomes
//! left-right after transposing the board) only half the first row is searched.

use crate::engine::kernel::{self, bits, expand_at_least, full_mask, Node, Rows, Weighted};
use crate::error::Error;
use crate::plan::{fingerprint_words, Plan, Progress};
use crate::Count;

/// The largest board a mask may describe (row masks are `u32`).
pub const MAX_MASK_N: u32 = 32;

/// Which cells of an `n`×`n` board may hold a queen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mask {
    rows: Vec<u32>,
}

impl Mask {
    /// Every cell of an `n`×`n` board allowed.
    ///
    /// # Errors
    /// [`Error::BoardSize`] unless 1 ≤ n ≤ 32.
    pub fn full(n: u32) -> Result<Mask, Error> {
        check_mask_n(n)?;
        Ok(Mask {
            rows: vec![full_mask(n); n as usize],
        })
    }

    /// A mask from one bitmask per row (bit `c` = column `c` allowed; higher bits ignored).
    ///
    /// # Errors
    /// [`Error::BoardSize`] unless there are 1 to 32 rows.
    pub fn from_rows(rows: &[u32]) -> Result<Mask, Error> {
        let Ok(n) = u32::try_from(rows.len()) else {
            return Err(Error::BoardSize {
                n: rows.len() as i128,
                min: 1,
                max: MAX_MASK_N,
            });
        };
        check_mask_n(n)?;
        let rows = rows.iter().map(|r| r & full_mask(n)).collect();
        Ok(Mask { rows })
    }

    /// Parses a mask of `n` rows from `text`; `source` names the input in error messages.
    ///
    /// # Errors
    /// [`Error::Parse`] naming the line (and column) of the first problem: a character other
    /// than `1 . 0 #` and blanks, a row of the wrong width, too few or too many rows.
    pub fn parse(text: &str, n: u32, source: &str) -> Result<Mask, Error> {
        check_mask_n(n)?;
        let all: Vec<&str> = text.lines().collect();
        // Blank lines before the first row and after the last are not rows.
        let skipped = all.iter().take_while(|l| l.trim().is_empty()).count();
        let lines = &all[skipped..];
        let used = lines
            .iter()
            .rposition(|l| !l.trim().is_empty())
            .map_or(0, |i| i + 1);
        if used > n as usize {
            let extra = n as usize
                + lines[n as usize..]
                    .iter()
                    .take_while(|l| l.trim().is_empty())
                    .count();
            let message = format!("extra row: the mask must have {n} rows");
            return Err(parse_error(source, skipped + extra + 1, None, message));
        }
        let rows = parse_rows(&lines[..used], n, source, skipped + 1)?;
        Ok(Mask { rows })
    }

    /// The board size.
    pub fn n(&self) -> u32 {
        self.rows.len() as u32
    }

    /// The allowed cells of each row (bit `c` = column `c`).
    pub fn row_masks(&self) -> &[u32] {
        &self.rows
    }

    /// Whether cell (`row`, `col`) is allowed (`false` for a cell off the board).
    pub fn is_allowed(&self, row: u32, col: u32) -> bool {
        let cells = self.rows.get(row as usize).copied().unwrap_or(0);
        cells.checked_shr(col).is_some_and(|rest| rest & 1 == 1)
    }

    /// Whether every cell is allowed.
    pub fn is_full(&self) -> bool {
        let full = full_mask(self.n());
        self.rows.iter().all(|&r| r == full)
    }

    /// Whether the mask equals its left-right mirror image.
    pub fn is_mirror_symmetric(&self) -> bool {
        let n = self.n();
        self.rows.iter().all(|&r| reverse(r, n) == r)
    }

    /// The mask reflected in its main diagonal (rows become columns).
    pub fn transpose(&self) -> Mask {
        let n = self.n();
        let rows = (0..n)
            .map(|c| {
                (0..n)
                    .filter(|&r| self.is_allowed(r, c))
                    .fold(0, |m, r| m | 1 << r)
            })
            .collect();
        Mask { rows }
    }

    /// The kernel's row template for this mask.
    pub fn kernel_rows(&self) -> Rows {
        Rows::from_masks(&self.rows)
    }
}

/// Checks a mask's board size.
fn check_mask_n(n: u32) -> Result<(), Error> {
    if (1..=MAX_MASK_N).contains(&n) {
        Ok(())
    } else {
        Err(Error::BoardSize {
            n: i128::from(n),
            min: 1,
            max: MAX_MASK_N,
        })
    }
}

/// The low `n` bits of `mask` in reverse order.
fn reverse(mask: u32, n: u32) -> u32 {
    mask.reverse_bits() >> (32 - n)
}

/// Builds a parse error.
fn parse_error(source: &str, line: usize, column: Option<usize>, message: String) -> Error {
    Error::Parse {
        source_name: source.to_string(),
        line,
        column,
        message,
    }
}

/// Parses exactly `n` rows of `n` cells; `first_line` is the 1-based line number of
/// `lines[0]` in the whole input, for error messages.
pub(crate) fn parse_rows(
    lines: &[&str],
    n: u32,
    source: &str,
    first_line: usize,
) -> Result<Vec<u32>, Error> {
    if lines.len() < n as usize {
        let message = format!("missing rows: the mask has {} of {n} rows", lines.len());
        return Err(parse_error(source, first_line + lines.len(), None, message));
    }
    lines
        .iter()
        .take(n as usize)
        .enumerate()
        .map(|(i, line)| parse_row(line, n, source, first_line + i))
        .collect()
}

/// Parses one row of `n` cells.
fn parse_row(text: &str, n: u32, source: &str, line: usize) -> Result<u32, Error> {
    let mut mask = 0u32;
    let mut cells = 0u32;
    for (i, ch) in text.chars().enumerate() {
        let allowed = match ch {
            '1' | '.' => true,
            '0' | '#' => false,
            ' ' | '\t' | '\r' => continue,
            other => {
                let message = format!("unexpected character {other:?} (use 1 or . for allowed cells, 0 or # for blocked ones)");
                return Err(parse_error(source, line, Some(i + 1), message));
            }
        };
        if cells == n {
            let message = format!("too many cells: a row has {n} cells");
            return Err(parse_error(source, line, Some(i + 1), message));
        }
        mask |= u32::from(allowed) << cells;
        cells += 1;
    }
    if cells < n {
        let message = format!("too few cells: found {cells}, a row has {n}");
        return Err(parse_error(source, line, None, message));
    }
    Ok(mask)
}

/// Tasks per thread the plan aims for, so the executor can balance.
const TASKS_PER_THREAD: usize = 64;

/// The plan for one mask: weighted start nodes, finished by the kernel.
#[derive(Debug, Clone)]
pub struct MaskPlan {
    rows: Rows,
    tasks: Vec<Weighted>,
    symmetric: bool,
    transposed: bool,
}

impl MaskPlan {
    /// Builds the plan for `mask`, with enough tasks for `threads` workers (taken as 1 to
    /// [`MAX_THREADS`](crate::MAX_THREADS): more tasks would only cost memory).
    pub fn new(mask: &Mask, threads: usize) -> Self {
        let threads = threads.clamp(1, crate::MAX_THREADS);
        let (mask, transposed) =
            if !mask.is_mirror_symmetric() && mask.transpose().is_mirror_symmetric() {
                (mask.transpose(), true)
            } else {
                (mask.clone(), false)
            };
        let symmetric = mask.is_mirror_symmetric() && mask.n() > 1;
        let rows = mask.kernel_rows();
        let starts = if symmetric {
            mirror_starts(&rows)
        } else {
            vec![(Node::ROOT, 1)]
        };
        let want = TASKS_PER_THREAD * threads;
        let mut tasks = Vec::new();
        for (start, weight) in starts {
            let nodes = expand_at_least(&rows, vec![start], want);
            tasks.extend(nodes.into_iter().map(|x| (x, weight)));
        }
        MaskPlan {
            rows,
            tasks,
            symmetric,
            transposed,
        }
    }

    /// Whether the plan uses the mask's mirror symmetry.
    pub fn is_symmetric(&self) -> bool {
        self.symmetric
    }
}

/// The mirror-symmetric starts: first-row queen in the left half (weight 2); for odd N, the
/// first-row queen in the middle and the second-row queen in the left half (weight 2).
fn mirror_starts(rows: &Rows) -> Vec<Weighted> {
    let n = rows.n();
    let half = n / 2;
    let left = (1u32 << half) - 1;
    let root = Node::ROOT;
    let mut starts: Vec<Weighted> = bits(root.free(rows) & left)
        .map(|b| (root.place(b), 2))
        .collect();
    if n % 2 == 1 && root.free(rows) >> half & 1 == 1 {
        let middle = root.place(1 << half);
        starts.extend(bits(middle.free(rows) & left).map(|b| (middle.place(b), 2)));
    }
    starts
}

impl Plan for MaskPlan {
    fn n(&self) -> u32 {
        self.rows.n()
    }

    fn engine(&self) -> &'static str {
        "mask"
    }

    fn len(&self) -> usize {
        self.tasks.len()
    }

    fn cost(&self, task: usize) -> u64 {
        // Fewer rows filled: more work left.
        u64::from(self.rows.n() - self.tasks[task].0.row.min(self.rows.n()))
    }

    fn solve(&self, task: usize) -> u128 {
        kernel::count_weighted(&self.rows, self.tasks[task])
    }

    fn solve_portable(&self, task: usize) -> u128 {
        kernel::count_weighted_portable(&self.rows, self.tasks[task])
    }

    fn fingerprint(&self) -> String {
        let n = self.rows.n();
        let head = [u64::from_le_bytes(*b"mask\0\0\0\0"), 1, u64::from(n)];
        let masks = (0..n).map(|r| u64::from(self.rows.allowed(r)));
        fingerprint_words(head.into_iter().chain(masks))
    }

    fn describe(&self) -> String {
        let symmetry = match (self.symmetric, self.transposed) {
            (true, false) => "mirror symmetry",
            (true, true) => "mirror symmetry after transposing",
            (false, _) => "no symmetry",
        };
        format!("blocked cells, {symmetry}")
    }
}

/// Counts the placements of N non-attacking queens on the allowed cells of `mask`, on
/// `threads` workers, reporting each finished task to `progress`.
///
/// The result's `verified` is checked against OEIS only when every cell is allowed.
///
/// # Errors
/// [`Error::Threads`], [`Error::ThreadPool`], or [`Error::Interrupted`] if `progress` asked
/// to stop.
pub fn count_masked(mask: &Mask, threads: usize, progress: &dyn Progress) -> Result<Count, Error> {
    let start = crate::count::Stopwatch::start();
    let options = crate::CountOptions::new().threads(threads);
    let plan = MaskPlan::new(mask, options.checked_threads()?);
    let mut count = crate::count::count_plan(&plan, &options, progress, start)?;
    if !mask.is_full() {
        // The published totals are for the open board only.
        count.verified = None;
    }
    Ok(count)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::known;
    use crate::plan::NoProgress;

    /// Plain recursion over the allowed cells, an independent oracle.
    fn brute(mask: &Mask) -> u128 {
        fn go(mask: &Mask, row: u32, placed: &mut Vec<u32>) -> u128 {
            let n = mask.n();
            if row == n {
                return 1;
            }
            let mut total = 0;
            for c in 0..n {
                let safe = placed.iter().enumerate().all(|(r, &pc)| {
                    pc != c && (row as i64 - r as i64).abs() != (c as i64 - pc as i64).abs()
                });
                if safe && mask.is_allowed(row, c) {
                    placed.push(c);
                    total += go(mask, row + 1, placed);
                    placed.pop();
                }
            }
            total
        }
        go(mask, 0, &mut Vec::new())
    }

    fn count(mask: &Mask, threads: usize) -> u128 {
        count_masked(mask, threads, &NoProgress).unwrap().total
    }

    /// A deterministic pseudo-random mask with about 1 cell in `holes` blocked.
    fn random_mask(n: u32, seed: u64, holes: u64) -> Mask {
        let mut rng = fastrand::Rng::with_seed(seed);
        let rows: Vec<u32> = (0..n)
            .map(|_| (0..n).fold(0, |m, c| m | u32::from(rng.u64(0..holes) != 0) << c))
            .collect();
        Mask::from_rows(&rows).unwrap()
    }

    #[test]
    fn full_masks_give_the_known_totals() {
        for n in 1..=11 {
            let c = count_masked(&Mask::full(n).unwrap(), 2, &NoProgress).unwrap();
            assert_eq!(Some(c.total), known::total(n), "n = {n}");
            assert_eq!(c.verified, Some(true));
        }
    }

    #[test]
    fn random_masks_match_brute_force() {
        for seed in 0..40 {
            let n = 4 + (seed % 6) as u32;
            let mask = random_mask(n, seed, 5);
            assert_eq!(
                count(&mask, 1 + seed as usize % 3),
                brute(&mask),
                "seed {seed}"
            );
        }
    }

    #[test]
    fn symmetric_masks_use_symmetry_and_stay_exact() {
        for seed in 0..20 {
            let n = 5 + (seed % 5) as u32;
            let half = random_mask(n, seed, 4);
            let rows: Vec<u32> = half
                .row_masks()
                .iter()
                .map(|&r| r & reverse(r, n))
                .collect();
            let mask = Mask::from_rows(&rows).unwrap();
            assert!(MaskPlan::new(&mask, 2).is_symmetric());
            assert_eq!(count(&mask, 2), brute(&mask), "seed {seed}");
            let upright = mask.transpose();
            assert!(MaskPlan::new(&upright, 2).is_symmetric());
            assert_eq!(count(&upright, 2), brute(&upright), "seed {seed}");
        }
    }

    #[test]
    fn a_blocked_diagonal_counts_like_brute_force() {
        let rows: Vec<u32> = (0..8).map(|r| full_mask(8) & !(1 << r)).collect();
        let mask = Mask::from_rows(&rows).unwrap();
        assert_eq!(count(&mask, 2), brute(&mask));
    }

    #[test]
    fn blank_lines_around_the_rows_are_not_rows() {
        let mask = Mask::parse("\n \n1111\n1011\n1111\n1111\n\n", 4, "m").unwrap();
        assert_eq!(mask.row_masks(), &[0b1111, 0b1101, 0b1111, 0b1111]);
    }

    #[test]
    fn parsing_accepts_both_alphabets_and_blanks() {
        let text = "1 . 1 .\n0#00\n\t1111\n....\n\n";
        let mask = Mask::parse(text, 4, "m").unwrap();
        assert_eq!(mask.row_masks(), &[0b1111, 0, 0b1111, 0b1111]);
    }

    #[test]
    fn malformed_masks_name_line_and_column() {
        let cases = [
            (
                "1111\n11x1\n1111\n1111\n",
                2,
                Some(3),
                "unexpected character 'x'",
            ),
            ("1111\n11111\n1111\n1111\n", 2, Some(5), "too many cells"),
            ("1111\n111\n1111\n1111\n", 2, None, "too few cells"),
            ("1111\n1111\n1111\n", 4, None, "missing rows"),
            ("1111\n1111\n1111\n1111\n1111\n", 5, None, "extra row"),
            ("\n\n1111\n1111\n1111\n1111\n1111\n", 7, None, "extra row"),
            (
                "\n1111\n11x1\n1111\n1111\n",
                3,
                Some(3),
                "unexpected character",
            ),
            ("\n1111\n\n1111\n1111\n", 3, None, "too few cells"),
        ];
        for (text, line, column, what) in cases {
            match Mask::parse(text, 4, "m") {
                Err(Error::Parse {
                    line: l,
                    column: c,
                    message,
                    ..
                }) => {
                    assert_eq!((l, c), (line, column), "{text:?}");
                    assert!(message.contains(what), "{message}");
                }
                other => panic!("{text:?}: {other:?}"),
            }
        }
    }

    #[test]
    fn cells_off_the_board_are_not_allowed() {
        let mask = Mask::full(5).unwrap();
        assert!(mask.is_allowed(4, 4));
        for (r, c) in [(5, 0), (0, 5), (0, 31), (0, 32), (u32::MAX, u32::MAX)] {
            assert!(!mask.is_allowed(r, c), "({r}, {c})");
        }
    }

    #[test]
    fn mask_sizes_are_checked() {
        assert!(Mask::full(0).is_err());
        assert!(Mask::full(33).is_err());
        assert!(Mask::from_rows(&[]).is_err());
    }
}
