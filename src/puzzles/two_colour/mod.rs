//! Two colours ("2n queens"): ordered pairs of mask-fitting solutions that share no cell.
//!
//! n black and n white queens go on the allowed cells; queens of one colour must not attack
//! each other, and no cell holds two queens. So the answer is the number of ordered pairs
//! (A, B) of solutions fitting the mask with `A[r] ≠ B[r]` in every row r.
//!
//! Method: a join of the fitting solutions S with themselves, one side kept and the other
//! streamed. The white side is an index: for every cell, a bitset over S of the solutions
//! with a queen there (n²·|S|/8 bytes, the only memory that grows with the board). The black
//! side is streamed from the search, in parallel by prefix of its first rows: the white
//! solutions meeting A somewhere are the union of the bitsets of A's n cells, so A has
//! `|S| − |union|` partners. Consecutive black solutions share their first rows, so the
//! unions of those rows are reused (a few rows recomputed per solution instead of n). The
//! mask's own symmetries (among the 8 of the square) map disjoint pairs to disjoint pairs,
//! so only one A per orbit is processed, weighted by the orbit size.
//!
//! The time grows as |S|², the memory as |S|: an open 16×16 board (14,772,512 solutions)
//! takes a 473 MB index. [`cost`] says before a count what its index will take. Where the
//! index does not fit in the memory this process may use ([`crate::memory`], or a limit
//! given), it is built and matched a slice at a time, the black side streamed again for
//! each slice (which costs little next to the matching). Boards whose matching would take
//! decades are refused up front.

use std::ops::Range;
use std::time::{Duration, Instant};

use rayon::prelude::*;

use crate::error::Error;
use crate::plan::{self, NoProgress, Progress};
use crate::puzzles::mask::{parse_rows, Mask};

mod cost;
mod index;
mod join;
mod symmetry;

pub use cost::{cost, Cost};
use symmetry::{symmetries, Symmetry, SQUARE};

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

/// How a two-colour count runs: threads, the symmetry reduction, a memory limit. Build it
/// with the chained setters; every value is accepted, and [`count_with`] checks them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TwoColourOptions {
    threads: usize,
    symmetry: bool,
    memory_limit: Option<u64>,
}

impl Default for TwoColourOptions {
    fn default() -> Self {
        TwoColourOptions {
            threads: num_cpus::get().min(crate::MAX_THREADS),
            symmetry: true,
            memory_limit: None,
        }
    }
}

impl TwoColourOptions {
    /// All logical CPUs, the symmetry reduction, the memory this process may use.
    pub fn new() -> Self {
        Self::default()
    }

    /// Worker threads (1 to [`MAX_THREADS`](crate::MAX_THREADS); others are refused by the
    /// count with [`Error::Threads`]).
    pub fn threads(mut self, threads: usize) -> Self {
        self.threads = threads;
        self
    }

    /// With `false`, every solution is processed as black instead of one per symmetry orbit
    /// (a slower cross-check of the reduction).
    pub fn symmetry(mut self, symmetry: bool) -> Self {
        self.symmetry = symmetry;
        self
    }

    /// The most bytes the index may take; `None` (the default): what [`crate::memory`]
    /// says this process may still take. The smaller of the two holds.
    pub fn memory_limit(mut self, bytes: Option<u64>) -> Self {
        self.memory_limit = bytes;
        self
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
/// As [`count_with`].
pub fn count(mask: &Mask, threads: usize) -> Result<TwoColour, Error> {
    count_with_symmetry(mask, threads, true)
}

/// Like [`count`]; with `use_symmetry` false every solution is processed as black (a slower
/// cross-check of the symmetry reduction).
///
/// # Errors
/// As [`count_with`].
pub fn count_with_symmetry(
    mask: &Mask,
    threads: usize,
    use_symmetry: bool,
) -> Result<TwoColour, Error> {
    let options = TwoColourOptions::new()
        .threads(threads)
        .symmetry(use_symmetry);
    count_with(mask, &options, &NoProgress)
}

/// Counts the ordered pairs of disjoint mask-fitting solutions as `options` say, telling
/// `progress` of each task (a prefix of the black solutions' first rows, matched against one
/// slice of the index; its cost is the prefix's fitting solutions, its count its weighted
/// pairs).
///
/// # Errors
/// [`Error::Threads`] or [`Error::ThreadPool`]; [`Error::Unsupported`] for a board whose
/// pairs would take more than [`MAX_WORK`] word operations (decades of CPU time), refused
/// up front by sampling or once the count of its solutions passes it; [`Error::Memory`]
/// when not even a sliver of the index fits in the memory limit, or an allocation fails;
/// [`Error::Interrupted`] when `progress` asks to stop.
pub fn count_with(
    mask: &Mask,
    options: &TwoColourOptions,
    progress: &dyn Progress,
) -> Result<TwoColour, Error> {
    let start = Instant::now();
    let threads = crate::CountOptions::new()
        .threads(options.threads)
        .checked_threads()?;
    let pool = plan::thread_pool(threads)?;
    let group = if options.symmetry {
        symmetries(mask)
    } else {
        vec![SQUARE[0]]
    };
    cost::check_estimate(mask, group.len())?;
    let mut prefixes = index::prefixes(mask, TASKS_PER_THREAD * threads);
    let tasks = tasks(&prefixes, &group, mask.n());
    let most = cost::most_solutions(mask.n(), group.len());
    let solutions = pool
        .install(|| index::number(mask, &mut prefixes, &tasks, &group, most))
        .map_err(|counted| cost::refusal(mask.n(), counted.into(), "at least ", group.len()))?;
    let slices = cost::slices(mask.n(), solutions, &cost::limit(options.memory_limit))?;
    let tasks = by_cost(tasks, &prefixes, solutions);
    let board = Board {
        mask,
        prefixes: &prefixes,
        tasks: &tasks,
        group: &group,
        solutions,
    };
    let sums = pool.install(|| board.run(&slices, progress))?;
    Ok(TwoColour {
        n: mask.n(),
        solutions,
        pairs: sums.pairs,
        symmetries: group.len(),
        representatives: sums.representatives,
        threads,
        elapsed: start.elapsed(),
    })
}

pub use cost::MAX_WORK;

/// Black-side tasks per worker thread, so that the biggest-first order can balance them.
const TASKS_PER_THREAD: usize = 64;

/// The prefixes that may hold a black solution (one per orbit: the least of it, so under the
/// mirror its first queen is in the left half). Only the mirror keeps each row and flips its
/// columns: a quarter turn also takes (0, 0) to (0, n − 1), but the least of an orbit under
/// it may start in the right half.
fn tasks(prefixes: &[index::Prefix], group: &[Symmetry], n: u32) -> Vec<usize> {
    let n = n as usize;
    let mirrored = group.contains(&SQUARE[1]);
    (0..prefixes.len())
        .filter(|&t| {
            !mirrored
                || prefixes[t]
                    .cols
                    .first()
                    .is_none_or(|&c| 2 * (c as usize) < n)
        })
        .collect()
}

/// The tasks that hold black solutions, biggest first, with their costs: the words of the
/// index after their orbits, about.
fn by_cost(tasks: Vec<usize>, prefixes: &[index::Prefix], solutions: u64) -> Vec<(usize, u64)> {
    let mut costed: Vec<(usize, u64)> = tasks
        .into_iter()
        .filter(|&t| prefixes[t].reps > 0)
        .map(|t| {
            let p = &prefixes[t];
            let later = solutions - p.first - p.solutions / 2;
            (t, p.reps.saturating_mul(later.div_ceil(64)))
        })
        .collect();
    costed.sort_by_key(|&(_, cost)| std::cmp::Reverse(cost));
    costed
}

/// What the join runs on: the board, its prefixes, the black side's tasks with their costs,
/// the symmetries.
struct Board<'a> {
    mask: &'a Mask,
    prefixes: &'a [index::Prefix],
    tasks: &'a [(usize, u64)],
    group: &'a [Symmetry],
    /// The fitting solutions.
    solutions: u64,
}

impl Board<'_> {
    /// Matches every black task against every slice of the index, in turn, on the current
    /// pool, telling `progress`: task `t` of slice `i` is task `i * prefixes + t`.
    fn run(&self, slices: &[Range<u64>], progress: &dyn Progress) -> Result<join::Sums, Error> {
        let tasks = self.tasks.len() * slices.len();
        progress.start(tasks, tasks);
        let work: u128 = self.tasks.iter().map(|&(_, cost)| u128::from(cost)).sum();
        progress.start_work(work);
        let mut index = index::Index::allocate(self.mask.n(), cost::largest(slices))?;
        let mut all = join::Sums::default();
        for (i, slice) in slices.iter().enumerate() {
            index.fill(self.mask, self.prefixes, self.group, slice.clone());
            let sums = self.slice(&index, slice, i * self.prefixes.len(), progress)?;
            all.pairs += sums.pairs;
            // Every slice meets the same black solutions.
            all.representatives = sums.representatives;
        }
        Ok(all)
    }

    /// Matches every black task against `index`, the index of the solutions numbered
    /// `slice`; task ids start at `first`. A task's cost is shared among the slices.
    fn slice(
        &self,
        index: &index::Index,
        slice: &Range<u64>,
        first: usize,
        progress: &dyn Progress,
    ) -> Result<join::Sums, Error> {
        let total = self.solutions.max(1);
        let sums = self
            .tasks
            .par_iter()
            .with_max_len(1)
            .map(|&(t, cost)| {
                let share =
                    u128::from(cost) * u128::from(slice.end - slice.start) / u128::from(total);
                let (id, cost) = (first + t, share as u64);
                if progress.should_stop() {
                    return Err(Error::Interrupted);
                }
                progress.task_started(id, cost);
                let p = &self.prefixes[t];
                let sums = join::prefix(index, slice, self.mask, p, self.group, progress)?;
                progress.task_done(id, sums.pairs);
                progress.work_done(id, cost);
                Ok(sums)
            })
            .collect::<Result<Vec<join::Sums>, Error>>()?;
        Ok(sums.into_iter().fold(join::Sums::default(), |mut all, s| {
            all.pairs += s.pairs;
            all.representatives += s.representatives;
            all
        }))
    }
}

#[cfg(test)]
mod tests;
