//! What a two-colour count will take, known before it starts: its index, its slices, and
//! the refusal of a board whose pairs would take decades.
//!
//! The index takes n²/8 bytes per fitting solution, and matching takes about n/128 word
//! operations per pair of a black solution (one per orbit) and a white one. The number of
//! solutions is the published total for an open board up to n = 27; otherwise it is first
//! estimated by random descents of the search tree (Knuth's estimator: the product of the
//! branching factors met on a random path), which takes a millisecond whatever the board,
//! and then counted exactly, the count stopping as soon as it passes what is allowed.

use std::ops::Range;

use crate::error::Error;
use crate::known;
use crate::memory;
use crate::puzzles::mask::Mask;

use super::index::{self, GROUP};

/// What a two-colour count of one board keeps in memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cost {
    /// Board size.
    pub n: u32,
    /// The solutions that fit the mask: exact for an open board up to n = 27 (OEIS
    /// A000170), else an estimate by sampling, within a factor of about 2 on open boards.
    pub solutions: u128,
    /// Whether `solutions` is exact.
    pub exact: bool,
    /// Bytes of the index a count keeps for `solutions` (n²/8 per solution, in groups of 1024).
    pub index_bytes: u128,
}

/// What counting `mask`'s board will keep in memory (a millisecond).
///
/// ```
/// let cost = nqueens::puzzles::two_colour::cost(&nqueens::puzzles::mask::Mask::full(16).unwrap());
/// assert_eq!((cost.solutions, cost.exact), (14_772_512, true));
/// assert_eq!(cost.index_bytes, 472_743_936); // n²/8 bytes a solution, in groups of 1024
/// ```
pub fn cost(mask: &Mask) -> Cost {
    let n = mask.n();
    let published = if mask.is_full() {
        known::total(n)
    } else {
        None
    };
    let (solutions, exact) = match published {
        Some(total) => (total, true),
        None => (sampled_solutions(mask), false),
    };
    Cost {
        n,
        solutions,
        exact,
        index_bytes: index::bytes(n, solutions),
    }
}

/// Random descents of the search tree for [`cost`].
const DESCENTS: u32 = 4096;

/// Knuth's estimate of the solutions fitting `mask`: the mean over random root-to-leaf
/// descents of the product of the choices met (0 for a dead end). Deterministic.
fn sampled_solutions(mask: &Mask) -> u128 {
    let rows = mask.row_masks();
    let mut rng = fastrand::Rng::with_seed(0x0002_C010_u64);
    let mut sum = 0.0f64;
    for _ in 0..DESCENTS {
        let (mut cols, mut ld, mut rd) = (0u32, 0u32, 0u32);
        let mut weight = 1.0f64;
        for &allowed in rows {
            let free = allowed & !(cols | ld | rd);
            let choices = free.count_ones();
            if choices == 0 {
                weight = 0.0;
                break;
            }
            weight *= f64::from(choices);
            let bit = nth_bit(free, rng.u32(0..choices));
            cols |= bit;
            ld = (ld | bit) << 1;
            rd = (rd | bit) >> 1;
        }
        sum += weight;
    }
    (sum / f64::from(DESCENTS)).round() as u128
}

/// The `k`-th lowest set bit of `mask`, as a one-bit mask (`k` < its popcount).
fn nth_bit(mut mask: u32, k: u32) -> u32 {
    for _ in 0..k {
        mask &= mask - 1;
    }
    mask & mask.wrapping_neg()
}

/// The memory a count may use, and what sets it.
#[derive(Debug, Clone)]
pub(crate) struct Limit {
    free: u64,
    what: String,
}

/// The tighter of the limit asked for and the bounds [`memory::bounds`] reads.
pub(crate) fn limit(asked: Option<u64>) -> Limit {
    let given = asked.map(|free| Limit {
        free,
        what: "the memory limit given".to_string(),
    });
    let bounds = memory::bounds().into_iter().map(|b| Limit {
        free: b.free,
        what: b.what,
    });
    given
        .into_iter()
        .chain(bounds)
        .min_by_key(|l| l.free)
        .unwrap_or(Limit {
            free: u64::MAX,
            what: "no limit".to_string(),
        })
}

/// Room kept besides the index: the threads' chunks, the prefixes.
const HEADROOM: u64 = 16 << 20;

/// The most word operations a count may take to match its pairs (about the orbits × the
/// solutions / 128 × n: each pair of orbits once): 2^64, decades of CPU time. An open 19×19
/// board takes about 2^59, a 20×20 one 2^65.
pub const MAX_WORK: u128 = 1 << 64;

/// An estimate must pass [`MAX_WORK`] this many times over to refuse the board before its
/// solutions are counted: the estimator may be a few times off on a mask, and counting
/// stops anyway once the count passes what [`MAX_WORK`] allows.
const ESTIMATE_SLACK: u128 = 16;

/// The word operations of matching `solutions` solutions of an `n`×`n` board with
/// `symmetries` symmetries.
pub(crate) fn work(n: u32, solutions: u128, symmetries: usize) -> u128 {
    let black = solutions.div_ceil(symmetries.max(1) as u128);
    black
        .saturating_mul(solutions.div_ceil(128))
        .saturating_mul(u128::from(n))
}

/// Refuses the board at once when [`cost`] says its pairs would take far more than
/// [`MAX_WORK`].
pub(crate) fn check_estimate(mask: &Mask, symmetries: usize) -> Result<(), Error> {
    let cost = cost(mask);
    let slack = if cost.exact { 1 } else { ESTIMATE_SLACK };
    if work(cost.n, cost.solutions, symmetries) > slack * MAX_WORK {
        let about = if cost.exact { "" } else { "about " };
        return Err(refusal(cost.n, cost.solutions, about, symmetries));
    }
    Ok(())
}

/// The most solutions whose pairs take at most [`MAX_WORK`] on an `n`×`n` board.
pub(crate) fn most_solutions(n: u32, symmetries: usize) -> u64 {
    // work ≈ s² n / (128 · symmetries): invert, then step down past rounding.
    let bound = (MAX_WORK as f64 * 128.0 * symmetries.max(1) as f64 / f64::from(n)).sqrt();
    let mut s = bound as u64;
    while s > 0 && work(n, s.into(), symmetries) > MAX_WORK {
        s -= s / 1024 + 1;
    }
    s
}

/// The error for a board of `solutions` fitting solutions (`qualifier`: "", "about " or
/// "at least ") whose pairs take more than [`MAX_WORK`].
pub(crate) fn refusal(n: u32, solutions: u128, qualifier: &str, symmetries: usize) -> Error {
    let work = work(n, solutions, symmetries) as f64;
    Error::Unsupported {
        engine: "two-colour",
        what: format!(
            "n = {n} with this mask: {qualifier}{solutions} solutions fit it, and matching \
             their pairs would take {qualifier}{work:.1e} word operations (at most 2^64, \
             decades of CPU time)"
        ),
    }
}

/// Splits the solution numbers `0..solutions` into slices whose index fits in three
/// quarters of `limit` (one slice when the whole index does), each of whole groups.
///
/// # Errors
/// [`Error::Memory`] when not even one group fits.
pub(crate) fn slices(n: u32, solutions: u64, limit: &Limit) -> Result<Vec<Range<u64>>, Error> {
    let group_bytes = (8 * GROUP) as u64 * u64::from(n) * u64::from(n);
    // A quarter is left to the rest of the system (its file cache, other programs).
    let room = limit.free.saturating_sub(HEADROOM) / 4 * 3;
    let groups = room / group_bytes;
    if groups == 0 {
        return Err(Error::Memory {
            what: format!("a two-colour count of n = {n}"),
            need: HEADROOM + group_bytes,
            reason: format!("{} leaves {} free", limit.what, memory::size(limit.free)),
        });
    }
    let per_slice = groups.saturating_mul(64 * GROUP as u64);
    let starts = (0..solutions).step_by(usize::try_from(per_slice).unwrap_or(usize::MAX));
    Ok(starts
        .map(|lo| lo..lo.saturating_add(per_slice).min(solutions))
        .collect())
}

/// The most solutions in one of `slices`.
pub(crate) fn largest(slices: &[Range<u64>]) -> u64 {
    slices.iter().map(|s| s.end - s.start).max().unwrap_or(0)
}
