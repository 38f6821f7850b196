//! Half-board enumeration (ALGORITHMS.md §4.1.2).
//!
//! A half (east or west) is a north-quarter placement plus a south-quarter placement on the
//! half's rows that together use exactly the half's free columns and share no diagonal. The
//! quarter lists of a task are converted once to key-space words ([`super::key`]); then, for
//! every split of the free columns between north and south, the two sub-lists are filtered
//! (placements that attack a fixed queen, or that the symmetry rules leave out) and joined
//! pairwise: a pair is a half exactly when its words are disjoint, and its key is their OR.
//!
//! Placements are sorted into two classes per quarter by one key bit (a queen on a long
//! diagonal, for the symmetry factors of §4.3); a half's class is `2·north + south`, and each
//! class goes to its own key list.

use super::key::SENTINEL;
use super::quarter::QuarterList;
use super::simd::{self, Level};

/// How one quarter of a half is filtered and classified, as key-space masks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Side {
    /// Words touching these bits are dropped ([`SENTINEL`] is always included).
    pub forbid: u64,
    /// Words touching these bits are class 1, the others class 0.
    pub split: u64,
}

impl Side {
    /// A side that drops the words touching `forbid` and has a single class.
    pub fn forbid(forbid: u64) -> Self {
        Side {
            forbid: forbid | SENTINEL,
            split: 0,
        }
    }

    /// A side that keeps every valid word and classifies by `split`.
    pub fn split(split: u64) -> Self {
        Side {
            forbid: SENTINEL,
            split,
        }
    }
}

/// A quarter as a task reads it: its list (row mask chosen) and the list's key-space words.
#[derive(Debug, Clone, Copy)]
pub struct Words<'a> {
    /// The quarter list.
    pub list: &'a QuarterList,
    /// One word per entry of `list`.
    pub words: &'a [u64],
}

/// Reusable buffers for one enumeration.
#[derive(Debug, Default)]
pub struct Buffers {
    north: [Vec<u64>; 2],
    south: [Vec<u64>; 2],
}

/// Everything fixed while enumerating the halves of one side of a task.
#[derive(Debug, Clone, Copy)]
pub struct HalfSpec<'a> {
    /// The north quarter and how to filter it.
    pub north: (Words<'a>, Side),
    /// The south quarter and how to filter it.
    pub south: (Words<'a>, Side),
    /// Free columns of the half (local, h bits).
    pub cols: u32,
    /// Bits ORed into every key (a fixed queen's diagonals, seen as part of this half).
    pub extra: u64,
    /// Which of the four classes (`2·north + south`) to produce.
    pub wanted: [bool; 4],
    /// Instruction level for the pair join.
    pub level: Level,
}

/// Appends the key of every half of `spec` to `out[class]`.
pub fn enumerate(spec: &HalfSpec<'_>, bufs: &mut Buffers, out: &mut [Vec<u64>; 4]) {
    let (north, nside) = spec.north;
    let (south, sside) = spec.south;
    let k = north.list.rows().count_ones();
    let mut cn = spec.cols;
    loop {
        if cn.count_ones() == k {
            let (nr, sr) = (north.list.range(cn), south.list.range(spec.cols ^ cn));
            if !nr.is_empty() && !sr.is_empty() {
                split(&north.words[nr], nside, &mut bufs.north);
                split(&south.words[sr], sside, &mut bufs.south);
                for (class, keys) in out.iter_mut().enumerate() {
                    if spec.wanted[class] {
                        let (n, s) = (&bufs.north[class >> 1], &bufs.south[class & 1]);
                        simd::join(spec.level, n, s, spec.extra, keys);
                    }
                }
            }
        }
        if cn == 0 {
            break;
        }
        cn = (cn - 1) & spec.cols;
    }
}

/// Filters `words` by `side.forbid` into two lists by `side.split`, without branching.
fn split(words: &[u64], side: Side, out: &mut [Vec<u64>; 2]) {
    let [zero, one] = out;
    zero.resize(words.len(), 0);
    one.resize(words.len(), 0);
    let (mut n0, mut n1) = (0usize, 0usize);
    for &w in words {
        let keep = usize::from(w & side.forbid == 0);
        let class = usize::from(w & side.split != 0);
        zero[n0.min(words.len() - 1)] = w;
        one[n1.min(words.len() - 1)] = w;
        n0 += keep & (class ^ 1);
        n1 += keep & class;
    }
    zero.truncate(n0);
    one.truncate(n1);
}

/// Appends `n | s | extra` for every disjoint pair `(n, s)`, without branching per pair.
#[inline(always)]
pub fn join_generic(north: &[u64], south: &[u64], extra: u64, out: &mut Vec<u64>) {
    for &n in north {
        out.reserve(south.len());
        let base = out.len();
        let spare = &mut out.spare_capacity_mut()[..south.len()];
        let mut len = 0usize;
        for &s in south {
            // Write unconditionally, advance only on a disjoint pair; `len` never passes
            // the number of pairs seen, so the write stays in the reserved capacity.
            spare[len.min(south.len() - 1)].write(n | s | extra);
            len += usize::from(n & s == 0);
        }
        // SAFETY: the first `len` spare slots were initialised above.
        unsafe { out.set_len(base + len) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_filters_and_classifies() {
        let mut out = [Vec::new(), Vec::new()];
        let side = Side {
            forbid: 0b100 | SENTINEL,
            split: 0b010,
        };
        split(&[0b001, 0b010, 0b100, 0b011, SENTINEL], side, &mut out);
        assert_eq!(out, [vec![0b001], vec![0b010, 0b011]]);
        split(&[], side, &mut out);
        assert_eq!(out, [vec![], vec![]]);
    }

    #[test]
    fn every_join_level_keeps_exactly_the_disjoint_pairs() {
        let north: Vec<u64> = (0..13).map(|i| 1 << (i % 7) | 1 << (i % 5 + 8)).collect();
        let south: Vec<u64> = (0..29).map(|i| 1 << (i % 9) | 1 << (i % 4 + 9)).collect();
        let mut want = vec![7u64];
        for &n in &north {
            want.extend(south.iter().filter(|&&s| n & s == 0).map(|&s| n | s | 1 << 40));
        }
        for level in simd::available_levels() {
            let mut got = vec![7u64];
            simd::join(level, &north, &south, 1 << 40, &mut got);
            assert_eq!(got, want, "{level:?}");
        }
    }
}
