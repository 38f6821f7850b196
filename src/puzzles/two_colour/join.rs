//! The black side of the join: black solutions streamed from the search, a chunk at a time,
//! each matched against the index.
//!
//! Disjointness is symmetric and kept by the mask's symmetries, so the ordered pairs are
//! Σ over orbits O of |O| × (the partners of O's black solution A in O, plus twice its
//! partners in the orbits numbered after O): each pair of orbits is matched once, half of
//! the work of matching every pair. For a black solution A, the white solutions that share
//! a cell with it are the union of the bitsets of A's n cells; A's partners are the others.
//! A chunk of black solutions is matched against one group of words of the index at a time
//! (the group stays in the L1 cache), so each union is n loads from the L1 cache and a
//! population count, in vector registers, and the index is read from memory once per chunk.

use std::ops::Range;

use crate::error::Error;
use crate::plan::Progress;
use crate::puzzles::mask::Mask;

use super::index::{Index, Prefix, GROUP};
use super::symmetry::{Reps, Symmetry};

/// Black solutions matched together against one group of the index: enough that each
/// group, loaded once from memory, serves many of them.
const CHUNK: usize = 4096;

/// What one prefix's black solutions add up to.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Sums {
    /// Their share of the ordered pairs.
    pub(crate) pairs: u128,
    /// Black solutions processed (one per orbit).
    pub(crate) representatives: u64,
}

/// Matches the black solutions of prefix `p` (one per orbit under `group`) against `index`,
/// the index of the solutions numbered `slice`; `first` says whether this is the first
/// slice (the partners within an orbit are counted then).
///
/// # Errors
/// [`Error::Interrupted`] when `progress` asks to stop (checked between chunks).
pub(crate) fn prefix(
    index: &Index,
    slice: &Range<u64>,
    mask: &Mask,
    p: &Prefix,
    group: &[Symmetry],
    progress: &dyn Progress,
) -> Result<Sums, Error> {
    let n = mask.n() as usize;
    let mut chunk = Chunk::new(n, slice.start == 0);
    let mut sums = Sums::default();
    let mut walker = Reps::new(&p.mask(mask), group);
    let mut end = p.first;
    while let Some((sol, size)) = walker.next_rep() {
        let sol: [u8; 32] = std::array::from_fn(|i| sol.get(i).copied().unwrap_or(0));
        let own = walker
            .orbit()
            .members()
            .filter(|m| m.iter().zip(&sol).all(|(a, b)| a != b))
            .count();
        end += size as u64;
        // Only the orbits numbered after this one, within the slice.
        let start = end.clamp(slice.start, slice.end) - slice.start;
        chunk.push(&sol[..n], size as u128, start, own as u64);
        if chunk.is_full() {
            if progress.should_stop() {
                return Err(Error::Interrupted);
            }
            sums.add(chunk.finish(index));
        }
    }
    sums.add(chunk.finish(index));
    Ok(sums)
}

impl Sums {
    fn add(&mut self, other: Sums) {
        self.pairs += other.pairs;
        self.representatives += other.representatives;
    }
}

/// Black solutions waiting to be matched, with their weights.
struct Chunk {
    n: usize,
    /// Whether the partners within each orbit count (in the first slice only).
    own_orbit: bool,
    /// The cells of each solution, n per solution: cell (r, c) is r·n + c.
    cells: Vec<u16>,
    /// Orbit sizes.
    weights: Vec<u128>,
    /// Where in the index each solution's later orbits start (non-decreasing).
    starts: Vec<u64>,
    /// Partners within each orbit.
    own: Vec<u64>,
    /// Per solution, the later white solutions that share a cell with it (so far).
    hits: Vec<u64>,
}

impl Chunk {
    fn new(n: usize, own_orbit: bool) -> Chunk {
        Chunk {
            n,
            own_orbit,
            cells: Vec::with_capacity(CHUNK * n),
            weights: Vec::with_capacity(CHUNK),
            starts: Vec::with_capacity(CHUNK),
            own: Vec::with_capacity(CHUNK),
            hits: Vec::with_capacity(CHUNK),
        }
    }

    fn push(&mut self, cols: &[u8], weight: u128, start: u64, own: u64) {
        let n = self.n;
        let cells = cols
            .iter()
            .enumerate()
            .map(|(r, &c)| (r * n) as u16 + u16::from(c));
        self.cells.extend(cells);
        self.weights.push(weight);
        self.starts.push(start);
        self.own.push(own);
    }

    fn is_full(&self) -> bool {
        self.weights.len() >= CHUNK
    }

    /// Matches the waiting solutions against `index`; empties the chunk.
    fn finish(&mut self, index: &Index) -> Sums {
        self.hits.clear();
        self.hits.resize(self.weights.len(), 0);
        let group_bits = (GROUP * 64) as u64;
        for g in 0..index.groups() {
            let lo = g as u64 * group_bits;
            // Solutions whose later orbits start by this group's first bit take all of it;
            // those starting within it, its bits from there on.
            let whole = self.starts.partition_point(|&s| s <= lo);
            let some = self.starts.partition_point(|&s| s < lo + group_bits);
            let group = index.group(g);
            match_group(
                group,
                self.n,
                &self.cells[..whole * self.n],
                &mut self.hits[..whole],
            );
            for i in whole..some {
                let from = (self.starts[i] - lo) as usize;
                let mine = &self.cells[i * self.n..(i + 1) * self.n];
                self.hits[i] += match_from(group, mine, from);
            }
        }
        let len = index.len();
        let mut pairs = 0;
        for i in 0..self.weights.len() {
            let later = len - self.starts[i].min(len) - self.hits[i];
            let own = if self.own_orbit { self.own[i] } else { 0 };
            pairs += self.weights[i] * u128::from(2 * later + own);
        }
        let sums = Sums {
            pairs,
            representatives: self.weights.len() as u64,
        };
        self.cells.clear();
        self.weights.clear();
        self.starts.clear();
        self.own.clear();
        sums
    }
}

/// The solutions of a group from bit `from` on that share a cell with the solution of
/// cells `mine` (the few black solutions whose later orbits start inside the group).
fn match_from(group: &[u64], mine: &[u16], from: usize) -> u64 {
    let mut union = [0u64; GROUP];
    for &k in mine {
        let words = &group[usize::from(k) * GROUP..][..GROUP];
        for (u, w) in union.iter_mut().zip(words) {
            *u |= w;
        }
    }
    union
        .iter()
        .enumerate()
        .map(|(i, &w)| {
            let bits = (i * 64) as isize - from as isize;
            let kept = match bits {
                b if b >= 0 => w,
                b if b > -64 => w & (u64::MAX << (-b)),
                _ => 0,
            };
            u64::from(kept.count_ones())
        })
        .sum()
}

/// Adds to `hits[i]` the white solutions of one group (`group`: its [`GROUP`] words of
/// every cell) that share a cell with black solution i (its n cells at `cells[i * n ..]`),
/// on the widest vector unit the CPU has.
fn match_group(group: &[u64], n: usize, cells: &[u16], hits: &mut [u64]) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512vpopcntdq")
            && std::arch::is_x86_feature_detected!("avx512f")
        {
            // SAFETY: the features the function was compiled for were just detected.
            return unsafe { match_group_avx512(group, n, cells, hits) };
        }
        if std::arch::is_x86_feature_detected!("avx2")
            && std::arch::is_x86_feature_detected!("popcnt")
        {
            // SAFETY: the features the function was compiled for were just detected.
            return unsafe { match_group_avx2(group, n, cells, hits) };
        }
    }
    match_group_generic(group, n, cells, hits);
}

/// [`match_group`] compiled for AVX-512 with its vector population count.
///
/// # Safety
/// The CPU must support `avx512f` and `avx512vpopcntdq`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512vpopcntdq,popcnt")]
unsafe fn match_group_avx512(group: &[u64], n: usize, cells: &[u16], hits: &mut [u64]) {
    match_group_generic(group, n, cells, hits);
}

/// [`match_group`] compiled for AVX2 and POPCNT.
///
/// # Safety
/// The CPU must support `avx2` and `popcnt`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,popcnt")]
unsafe fn match_group_avx2(group: &[u64], n: usize, cells: &[u16], hits: &mut [u64]) {
    match_group_generic(group, n, cells, hits);
}

/// The group (n = 16: 32 KB) stays in the L1 cache while every black solution of the chunk
/// reads n of its cells: a union is n loads and a population count, with nothing stored.
#[inline(always)]
fn match_group_generic(group: &[u64], n: usize, cells: &[u16], hits: &mut [u64]) {
    let (lines, _) = group.as_chunks::<GROUP>();
    for (mine, hit) in cells.chunks_exact(n).zip(hits.iter_mut()) {
        let mut union = [0u64; GROUP];
        for &k in mine {
            for (u, w) in union.iter_mut().zip(&lines[usize::from(k)]) {
                *u |= w;
            }
        }
        *hit += popcount(&union);
    }
}

#[inline(always)]
fn popcount(words: &[u64; GROUP]) -> u64 {
    words.iter().map(|w| u64::from(w.count_ones())).sum()
}
