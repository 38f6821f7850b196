//! Two colours ("2n queens"): ordered pairs of mask-fitting solutions that share no cell.
//!
//! n black and n white queens go on the allowed cells; queens of one colour must not attack
//! each other, and no cell holds two queens. So the answer is the number of ordered pairs
//! (A, B) of solutions fitting the mask with `A[r] ≠ B[r]` in every row r.
//!
//! Method: enumerate the set S of fitting solutions once; give every cell a bitset
//! over S of the solutions with a queen there. The solutions meeting A somewhere are the union
//! of the bitsets of A's n cells, so A has `|S| − |union|` partners. That is n·|S|/64 word
//! operations per A, run in parallel. The mask's own symmetries (among the 8 of the square)
//! map disjoint pairs to disjoint pairs, so only one A per orbit is processed, weighted by the
//! orbit size.

use std::ops::Range;
use std::time::{Duration, Instant};

use rayon::prelude::*;

use crate::error::Error;
use crate::plan;
use crate::puzzles::mask::{parse_rows, Mask};
use crate::puzzles::solutions::Solutions;

/// The result of a two-colour count.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TwoColour {
    /// Board size.
    pub n: u32,
    /// Number of N-Queens solutions that fit the mask.
    pub solutions: u64,
    /// Number of ordered (black, white) pairs of them that share no cell.
    pub pairs: u128,
    /// How many of the square's 8 symmetries leave the mask unchanged.
    pub symmetries: usize,
    /// Solutions processed as black (one per orbit).
    pub representatives: u64,
    /// Worker threads used.
    pub threads: usize,
    /// Wall-clock time.
    pub elapsed: Duration,
}

/// Parses the classic input: a line with n, then n lines of n cells (`1`/`0`, blanks allowed).
///
/// # Errors
/// [`Error::Parse`] naming the line (and column) of the first problem.
pub fn parse(text: &str, source: &str) -> Result<Mask, Error> {
    let lines: Vec<&str> = text.lines().collect();
    let Some(first) = lines.iter().position(|l| !l.trim().is_empty()) else {
        return Err(parse_error(
            source,
            1,
            "empty input: expected n".to_string(),
        ));
    };
    let n: u32 = lines[first].trim().parse().map_err(|_| {
        let message = format!(
            "expected the board size n, found {:?}",
            crate::error::excerpt(lines[first].trim())
        );
        parse_error(source, first + 1, message)
    })?;
    Mask::full(n).map_err(|e| parse_error(source, first + 1, e.to_string()))?;
    let body = &lines[first + 1..];
    let rows = parse_rows(body, n, source, first + 2)?;
    if let Some(extra) = body[n as usize..].iter().position(|l| !l.trim().is_empty()) {
        let message = format!("extra line: the board has {n} rows");
        return Err(parse_error(source, first + 2 + n as usize + extra, message));
    }
    Mask::from_rows(&rows)
}

fn parse_error(source: &str, line: usize, message: String) -> Error {
    Error::Parse {
        source_name: source.to_string(),
        line,
        column: None,
        message,
    }
}

/// Counts the ordered pairs of disjoint mask-fitting solutions on `threads` workers.
///
/// ```
/// let mask = nqueens::puzzles::mask::Mask::full(6).unwrap();
/// let result = nqueens::puzzles::two_colour::count(&mask, 2).unwrap();
/// assert_eq!((result.solutions, result.pairs), (4, 12));
/// ```
///
/// # Errors
/// [`Error::Threads`] or [`Error::ThreadPool`].
pub fn count(mask: &Mask, threads: usize) -> Result<TwoColour, Error> {
    count_with_symmetry(mask, threads, true)
}

/// Like [`count`]; with `use_symmetry` false every solution is processed as black (a slower
/// cross-check of the symmetry reduction).
///
/// # Errors
/// [`Error::Threads`] or [`Error::ThreadPool`].
pub fn count_with_symmetry(
    mask: &Mask,
    threads: usize,
    use_symmetry: bool,
) -> Result<TwoColour, Error> {
    let start = Instant::now();
    let threads = crate::CountOptions::new()
        .threads(threads)
        .checked_threads()?;
    let n = mask.n() as usize;
    let pool = plan::thread_pool(threads)?;
    let set = pool.install(|| SolutionSet::new(mask));
    let group = if use_symmetry {
        symmetries(mask)
    } else {
        vec![SQUARE[0]]
    };
    let (pairs, representatives) = pool.install(|| {
        let reps: Vec<(usize, u128)> = (0..set.len)
            .into_par_iter()
            .with_min_len(256)
            .filter_map(|a| orbit_size(set.solution(a), &group, n).map(|size| (a, size)))
            .collect();
        let batch = (reps.len() / (threads * 8)).clamp(16, 1024);
        let pairs: u128 = reps
            .par_chunks(batch)
            .map(|chunk| set.weighted_disjoint(chunk))
            .sum();
        (pairs, reps.len() as u64)
    });
    Ok(TwoColour {
        n: mask.n(),
        solutions: set.len as u64,
        pairs,
        symmetries: group.len(),
        representatives,
        threads,
        elapsed: start.elapsed(),
    })
}

/// Words of every cell bitset handled together: the block of all n² cells stays in L2
/// (n = 14: 196 × 4 KB) while a batch of black solutions is matched against it.
const BLOCK: usize = 512;

/// The fitting solutions and, per cell, the bitset of solutions with a queen there.
struct SolutionSet {
    n: usize,
    len: usize,
    /// Columns of solution `s` at `cols[s * n .. (s + 1) * n]`.
    cols: Vec<u8>,
    /// Words per bitset.
    words: usize,
    /// Bitset of cell (r, c) at `cells[(r * n + c) * words ..][.. words]`.
    cells: Vec<u64>,
}

impl SolutionSet {
    /// Enumerates the solutions fitting `mask`, in parallel on the current rayon pool (one
    /// task per first-row column; concatenated in order, so still lexicographic).
    fn new(mask: &Mask) -> SolutionSet {
        let n = mask.n() as usize;
        let rows = mask.row_masks();
        let cols: Vec<u8> = (0..n)
            .into_par_iter()
            .filter(|&c| rows[0] >> c & 1 == 1)
            .flat_map_iter(|c| {
                let mut first = rows.to_vec();
                first[0] = 1 << c;
                let mut walk = Solutions::with_mask(&Mask::from_rows(&first).expect("same size"));
                let mut part = Vec::new();
                while let Some(s) = walk.next_solution() {
                    part.extend(s.iter().map(|&c| c as u8));
                }
                part
            })
            .collect();
        let len = cols.len() / n;
        let words = len.div_ceil(64);
        let mut cells = vec![0u64; n * n * words];
        for (s, sol) in cols.chunks_exact(n).enumerate() {
            for (r, &c) in sol.iter().enumerate() {
                cells[(r * n + c as usize) * words + s / 64] |= 1 << (s % 64);
            }
        }
        SolutionSet {
            n,
            len,
            cols,
            words,
            cells,
        }
    }

    fn solution(&self, s: usize) -> &[u8] {
        &self.cols[s * self.n..(s + 1) * self.n]
    }

    fn cell(&self, r: usize, c: u8) -> &[u64] {
        let start = (r * self.n + c as usize) * self.words;
        &self.cells[start..start + self.words]
    }

    /// Σ weight × (number of solutions sharing no cell with solution `a`) over `(a, weight)`
    /// in `chunk`, one word block at a time for the whole chunk (cache blocking).
    fn weighted_disjoint(&self, chunk: &[(usize, u128)]) -> u128 {
        let mut hits = vec![0u64; chunk.len()];
        let mut acc = vec![0u64; BLOCK];
        let mut start = 0;
        while start < self.words {
            let end = (start + BLOCK).min(self.words);
            for (h, &(a, _)) in hits.iter_mut().zip(chunk) {
                *h += union_count(self, self.solution(a), start..end, &mut acc);
            }
            start = end;
        }
        let len = self.len as u64;
        chunk
            .iter()
            .zip(hits)
            .map(|(&(_, weight), h)| weight * u128::from(len - h))
            .sum()
    }
}

/// The number of solutions in `words` that share a cell with `sol`: the popcount of the
/// union of its cells' bitsets over that word range.
fn union_count(set: &SolutionSet, sol: &[u8], words: Range<usize>, acc: &mut [u64]) -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx2")
            && std::arch::is_x86_feature_detected!("popcnt")
        {
            // SAFETY: the features the function was compiled for were just detected.
            return unsafe { union_count_avx2(set, sol, words, acc) };
        }
    }
    union_count_generic(set, sol, words, acc)
}

/// [`union_count`] compiled for AVX2 and POPCNT.
///
/// # Safety
/// The CPU must support `avx2` and `popcnt`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,popcnt")]
unsafe fn union_count_avx2(
    set: &SolutionSet,
    sol: &[u8],
    words: Range<usize>,
    acc: &mut [u64],
) -> u64 {
    union_count_generic(set, sol, words, acc)
}

#[inline(always)]
fn union_count_generic(set: &SolutionSet, sol: &[u8], words: Range<usize>, acc: &mut [u64]) -> u64 {
    let acc = &mut acc[..words.len()];
    let cell = |r: usize| &set.cell(r, sol[r])[words.clone()];
    acc.copy_from_slice(cell(0));
    // Four cells per pass: a quarter of the loads and stores of `acc`.
    let mut r = 1;
    while r + 4 <= sol.len() {
        let (a, b, c, d) = (cell(r), cell(r + 1), cell(r + 2), cell(r + 3));
        for ((((x, a), b), c), d) in acc.iter_mut().zip(a).zip(b).zip(c).zip(d) {
            *x |= a | b | c | d;
        }
        r += 4;
    }
    for r in r..sol.len() {
        for (x, a) in acc.iter_mut().zip(cell(r)) {
            *x |= a;
        }
    }
    acc.iter().map(|x| u64::from(x.count_ones())).sum()
}

/// A symmetry of the square, as a map of (row, column) on an `n`×`n` board.
type Symmetry = fn(usize, usize, usize) -> (usize, usize);

/// The 8 symmetries of the square; the identity first.
const SQUARE: [Symmetry; 8] = [
    |_, r, c| (r, c),
    |n, r, c| (r, n - 1 - c),
    |n, r, c| (n - 1 - r, c),
    |n, r, c| (n - 1 - r, n - 1 - c),
    |_, r, c| (c, r),
    |n, r, c| (n - 1 - c, n - 1 - r),
    |n, r, c| (c, n - 1 - r),
    |n, r, c| (n - 1 - c, r),
];

/// The symmetries of the square that leave `mask` unchanged (the identity always).
fn symmetries(mask: &Mask) -> Vec<Symmetry> {
    let n = mask.n() as usize;
    SQUARE
        .iter()
        .copied()
        .filter(|g| {
            (0..n).all(|r| {
                (0..n).all(|c| {
                    let (r2, c2) = g(n, r, c);
                    mask.is_allowed(r as u32, c as u32) == mask.is_allowed(r2 as u32, c2 as u32)
                })
            })
        })
        .collect()
}

/// The size of `sol`'s orbit under `group` if `sol` is its least member, else `None`.
fn orbit_size(sol: &[u8], group: &[Symmetry], n: usize) -> Option<u128> {
    let mut image = [0u8; 32];
    let mut fixed = 0u128;
    for g in group {
        for (r, &c) in sol.iter().enumerate() {
            let (r2, c2) = g(n, r, c as usize);
            image[r2] = c2 as u8;
        }
        match image[..n].cmp(sol) {
            std::cmp::Ordering::Less => return None,
            std::cmp::Ordering::Equal => fixed += 1,
            std::cmp::Ordering::Greater => {}
        }
    }
    Some(group.len() as u128 / fixed)
}

#[cfg(test)]
mod tests;
