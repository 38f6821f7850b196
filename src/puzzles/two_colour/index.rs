//! The white side of the join: every fitting solution as one bit in a bitset per cell.
//!
//! The solutions are numbered orbit by orbit, in the order of the black solutions that stand
//! for them (one per orbit, by [`Prefix`], each prefix's lexicographically), each orbit's
//! members least first: so the solutions of the orbits after a black solution's are the
//! numbers after its orbit's. Bit `s` of cell (r, c) says that solution `s` has its queen of
//! row r in column c. The bitsets are stored a group of [`GROUP`] words at a time (the group's words
//! of all n² cells, then the next group's), so that one group of every cell (n = 16: 32 KB)
//! sits in the L1 cache, contiguous, while many black solutions are matched against it, and
//! so that consecutive solutions fill a contiguous part of the memory (the index is filled in
//! parallel, each thread writing its own groups).

use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};

use rayon::prelude::*;

use crate::engine::kernel::{self, Node, Rows};
use crate::error::Error;
use crate::puzzles::mask::Mask;

use super::symmetry::{Reps, Symmetry};

/// Words of a bitset stored and matched together (two cache lines).
pub(crate) const GROUP: usize = 16;

/// A partial placement of the first rows: the black side's tasks, and the unit in which the
/// index is numbered and filled.
#[derive(Debug, Clone)]
pub(crate) struct Prefix {
    /// The columns of the queens of rows `0..cols.len()`.
    pub(crate) cols: Vec<u8>,
    /// Its search node.
    node: Node,
    /// Its black solutions (one per orbit).
    pub(crate) reps: u64,
    /// The solutions of their orbits.
    pub(crate) solutions: u64,
    /// The number of the first of them in the index.
    pub(crate) first: u64,
}

impl Prefix {
    /// The mask that allows only this prefix in its rows: its solutions are this mask's.
    pub(crate) fn mask(&self, mask: &Mask) -> Mask {
        let mut rows = mask.row_masks().to_vec();
        for (r, &c) in self.cols.iter().enumerate() {
            rows[r] = 1 << c;
        }
        Mask::from_rows(&rows).expect("same size as a valid mask")
    }

    /// The prefixes one row longer, in column order.
    fn children<'a>(&'a self, rows: &'a Rows) -> impl Iterator<Item = Prefix> + 'a {
        kernel::bits(self.node.free(rows)).map(move |bit| {
            let mut cols = self.cols.clone();
            cols.push(bit.trailing_zeros() as u8);
            Prefix {
                cols,
                node: self.node.place(bit),
                reps: 0,
                solutions: 0,
                first: 0,
            }
        })
    }
}

/// The prefixes of the fitting solutions' first rows, in lexicographic order: the first
/// depth with at least `want` of them (dead ends included; they have no solutions), or the
/// last row but one.
pub(crate) fn prefixes(mask: &Mask, want: usize) -> Vec<Prefix> {
    let rows = mask.kernel_rows();
    let n = mask.n();
    let mut level = vec![Prefix {
        cols: Vec::new(),
        node: Node::ROOT,
        reps: 0,
        solutions: 0,
        first: 0,
    }];
    while level.len() < want && level.first().is_some_and(|p| p.node.row + 1 < n) {
        level = level.iter().flat_map(|p| p.children(&rows)).collect();
    }
    level
}

/// Counts the black solutions of the prefixes `tasks` (the others hold none) and the
/// solutions of their orbits, in parallel on the current pool, and numbers them; unless
/// more than `most` solutions fit the mask: then `Err` with the number counted by then (at
/// least `most + 1`), which is all it takes to refuse the board.
pub(crate) fn number(
    mask: &Mask,
    prefixes: &mut [Prefix],
    tasks: &[usize],
    group: &[Symmetry],
    most: u64,
) -> Result<u64, u64> {
    let total = AtomicU64::new(0);
    let counted: Vec<(usize, u64, u64)> = tasks
        .par_iter()
        .with_max_len(1)
        .map(|&t| {
            let (mut reps, mut solutions, mut unsaid) = (0u64, 0u64, 0u64);
            let mut walker = Reps::new(&prefixes[t].mask(mask), group);
            while let Some((_, size)) = walker.next_rep() {
                reps += 1;
                solutions += size as u64;
                unsaid += size as u64;
                // Say how many now and then, so that every thread can stop soon once the
                // board is too large.
                if reps % 4096 == 0 {
                    let said = std::mem::take(&mut unsaid);
                    if total.fetch_add(said, Ordering::Relaxed) + said > most {
                        break;
                    }
                }
            }
            total.fetch_add(unsaid, Ordering::Relaxed);
            (t, reps, solutions)
        })
        .collect();
    let found = total.into_inner();
    if found > most {
        return Err(found);
    }
    for (t, reps, solutions) in counted {
        (prefixes[t].reps, prefixes[t].solutions) = (reps, solutions);
    }
    let mut first = 0;
    for p in prefixes.iter_mut() {
        p.first = first;
        first += p.solutions;
    }
    Ok(first)
}

/// The bytes of the index of `solutions` solutions on an `n`×`n` board (a bit per solution
/// and cell, in 64-bit words).
pub(crate) fn bytes(n: u32, solutions: u128) -> u128 {
    let n = u128::from(n);
    let groups = solutions.div_ceil(64 * GROUP as u128);
    groups * GROUP as u128 * 8 * n * n
}

/// The fitting solutions as one bitset per cell, [`GROUP`] words at a time.
pub(crate) struct Index {
    n: usize,
    /// Solutions in the index.
    len: u64,
    /// Groups of words per cell bitset.
    groups: usize,
    /// Group g of cell k at `cells[(g * n² + k) * GROUP ..][.. GROUP]`.
    cells: Vec<u64>,
}

impl Index {
    /// Room for the index of up to `solutions` solutions on an `n`×`n` board.
    ///
    /// # Errors
    /// [`Error::Memory`] when the allocation fails (it is the only large one of the count).
    pub(crate) fn allocate(n: u32, solutions: u64) -> Result<Index, Error> {
        let groups = usize::try_from(solutions.div_ceil(64 * GROUP as u64)).unwrap_or(usize::MAX);
        let n = n as usize;
        let len = groups.checked_mul(n * n * GROUP);
        let mut cells = Vec::new();
        let reserved = len.map(|len| cells.try_reserve_exact(len));
        if !matches!(reserved, Some(Ok(()))) {
            return Err(Error::Memory {
                what: format!("the two-colour index of {solutions} solutions"),
                need: u64::try_from(bytes(n as u32, solutions.into())).unwrap_or(u64::MAX),
                reason: "the system refused to allocate it".to_string(),
            });
        }
        Ok(Index {
            n,
            len: 0,
            groups: 0,
            cells,
        })
    }

    /// Makes this the index of the solutions numbered `slice` (at most the number it was
    /// allocated for): clears it, then sets their bits in parallel on the current pool, each
    /// thread filling whole groups and walking the prefixes whose solutions they hold.
    pub(crate) fn fill(
        &mut self,
        mask: &Mask,
        prefixes: &[Prefix],
        group: &[Symmetry],
        slice: Range<u64>,
    ) {
        let group_words = self.n * self.n * GROUP;
        self.len = slice.end - slice.start;
        self.groups = self.len.div_ceil(64 * GROUP as u64) as usize;
        self.cells.clear();
        // The padding bits of the last group stay clear in every cell: they never count.
        self.cells.resize(self.groups * group_words, 0);
        // Enough parts for every thread to take several; each walks at most two prefixes
        // in part, so more parts cost little.
        let parts = 8 * rayon::current_num_threads();
        let per_part = self.groups.div_ceil(parts).max(1);
        let n = self.n;
        self.cells
            .par_chunks_mut(per_part * group_words)
            .enumerate()
            .for_each(|(part, cells)| {
                let solutions = |groups: usize| (groups * GROUP * 64) as u64;
                let first = slice.start + solutions(part * per_part);
                let end = (first + solutions(cells.len() / group_words)).min(slice.end);
                let part = Part { n, first, cells };
                part.fill(mask, prefixes, group, end);
            });
    }

    /// The number of solutions.
    pub(crate) fn len(&self) -> u64 {
        self.len
    }

    /// The number of groups of words in each bitset.
    pub(crate) fn groups(&self) -> usize {
        self.groups
    }

    /// Group `g` of every cell's bitset: cell k's at `[k * GROUP ..][.. GROUP]`, where
    /// cell (r, c) is k = r·n + c.
    pub(crate) fn group(&self, g: usize) -> &[u64] {
        let words = self.n * self.n * GROUP;
        &self.cells[g * words..(g + 1) * words]
    }
}

/// Consecutive groups of the index, filled by one thread.
struct Part<'a> {
    n: usize,
    /// The number of the solution of the part's first bit.
    first: u64,
    cells: &'a mut [u64],
}

impl Part<'_> {
    /// Sets the bits of the solutions numbered from the part's first to `end`, walking the
    /// black solutions whose orbits they are in.
    fn fill(mut self, mask: &Mask, prefixes: &[Prefix], group: &[Symmetry], end: u64) {
        let (lo, hi) = (self.first, end);
        let start = prefixes.partition_point(|p| p.first + p.solutions <= lo);
        for p in prefixes[start..].iter().take_while(|p| p.first < hi) {
            let mut walker = Reps::new(&p.mask(mask), group);
            let mut s = p.first;
            while let Some((_, size)) = walker.next_rep() {
                if s >= hi {
                    break;
                }
                if s + size as u64 > lo {
                    for (j, member) in walker.orbit().members().enumerate() {
                        if (lo..hi).contains(&(s + j as u64)) {
                            self.set(s + j as u64 - lo, member);
                        }
                    }
                }
                s += size as u64;
            }
        }
    }

    /// Sets the bit of this part's solution `s` in the bitsets of its cells.
    fn set(&mut self, s: u64, cols: &[u8]) {
        let word = (s / 64) as usize;
        let base = word / GROUP * self.n * self.n * GROUP + word % GROUP;
        let bit = 1u64 << (s % 64);
        for (r, &c) in cols.iter().enumerate() {
            self.cells[base + (r * self.n + c as usize) * GROUP] |= bit;
        }
    }
}
