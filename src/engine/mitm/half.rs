//! Half-board enumeration.
//!
//! A half (east or west) is a north-quarter placement plus a south-quarter placement on the
//! half's rows that together use exactly the half's free columns and share no diagonal. The
//! quarter lists come as key-space words ([`super::prepared`]); for every split of the free
//! columns between north and south, the two sub-lists are joined pairwise: a pair is a half
//! exactly when its words are disjoint (and avoid the fixed queens' diagonals), and its key
//! is their OR.
//!
//! Placements are sorted into two classes per quarter by one key bit (a queen on a long
//! diagonal, for the symmetry factors in docs/algorithms.md); a half's class is
//! `2·north + south`, and each class goes to its own key list.

use super::prepared::Prepared;
use super::simd::{self, Level};
use super::transpose::Tags;

/// Everything fixed while enumerating the halves of one side of a task.
#[derive(Debug, Clone, Copy)]
pub(crate) struct HalfSpec<'a> {
    /// The north quarter.
    pub north: &'a Prepared,
    /// The south quarter.
    pub south: &'a Prepared,
    /// Free columns of the half (local, h bits).
    pub cols: u32,
    /// The column masks (h bits) with as many columns as the north quarter has queens.
    pub masks: &'a [u32],
    /// Key bits no half may use (a fixed queen's diagonals).
    pub forbid: u64,
    /// Bits ORed into every key (the same diagonals, seen as part of this half).
    pub extra: u64,
    /// Which of the four classes (`2·north + south`) to produce.
    pub wanted: [bool; 4],
    /// Only the north and south words with exactly these patterns of the quarters' hot bits
    /// ([`Prepared::group_by`]); `None`: every word.
    pub patterns: Option<(u32, u32)>,
    /// `(mask, bits)`: only the halves whose key has exactly `bits` of `mask` (`mask` 0:
    /// every half). The bits of `mask` outside `bits` are forbidden as well.
    pub exact: (u64, u64),
    /// Even N: the tag bits of each (north column mask, class), or no halves of it
    /// ([`Tags::row`]); `None`: no tags.
    pub tags: Option<Tags>,
    /// Instruction level for the pair join.
    pub level: Level,
}

/// Appends the keys of the halves of `spec` whose north quarter uses the columns `cn`;
/// returns the number of (north, south) word pairs tested.
fn enumerate_columns(spec: &HalfSpec<'_>, cn: u32, out: &mut [Vec<u64>; 4]) -> u64 {
    if cn & !spec.cols != 0 {
        return 0;
    }
    if let Some(tags) = spec.tags {
        return enumerate_tagged(spec, tags, cn, out);
    }
    let cs = spec.cols ^ cn;
    let mut tested = 0;
    for (class, keys) in out.iter_mut().enumerate() {
        if spec.wanted[class] {
            tested += join_class(spec, (cn, cs), class, spec.extra, keys);
        }
    }
    tested
}

/// [`enumerate_columns`] with the transposes' tags: out of line, so that the loop without
/// them (odd N and small boards, which join many small lists) stays as lean as before.
#[inline(never)]
fn enumerate_tagged(spec: &HalfSpec<'_>, tags: Tags, cn: u32, out: &mut [Vec<u64>; 4]) -> u64 {
    let cs = spec.cols ^ cn;
    let row = tags.row(cn);
    let mut tested = 0;
    for (class, keys) in out.iter_mut().enumerate() {
        if let (true, Some(tag)) = (spec.wanted[class], row[class]) {
            tested += join_class(spec, (cn, cs), class, spec.extra | tag, keys);
        }
    }
    tested
}

/// Appends the halves of class `class` whose north and south words use the columns
/// `(cn, cs)`, each with `extra`; returns the word pairs tested.
#[inline(always)]
fn join_class(
    spec: &HalfSpec<'_>,
    (cn, cs): (u32, u32),
    class: usize,
    extra: u64,
    keys: &mut Vec<u64>,
) -> u64 {
    let (n, s) = match spec.patterns {
        None => (
            spec.north.get(class >> 1, cn),
            spec.south.get(class & 1, cs),
        ),
        Some((pn, ps)) => (
            spec.north.get_group(class >> 1, cn, pn),
            spec.south.get_group(class & 1, cs, ps),
        ),
    };
    if spec.exact.0 == 0 {
        simd::join(spec.level, n, s, spec.forbid, extra, keys);
    } else {
        join_exact(spec, (n, s), extra, keys);
    }
    (n.len() * s.len()) as u64
}

/// Most (north, south) word pairs joined at once where halves are filtered afterwards (a
/// few in tests, so that their small quarters' groups are joined in several calls too).
const FILTERED_PAIRS: usize = if cfg!(test) { 1 << 4 } else { 1 << 14 };

/// The halves of the north words `n` and the south words `s` (each with `extra`) with
/// exactly the bits `spec.exact` asks for, appended to `keys`. Kept out of line: the plain
/// join above is most of the time of small boards, whose halves are never filtered.
#[inline(never)]
fn join_exact(spec: &HalfSpec<'_>, (n, s): (&[u64], &[u64]), extra: u64, keys: &mut Vec<u64>) {
    // A few north words at a time, so that the halves dropped never pile up.
    let step = (FILTERED_PAIRS / s.len().max(1)).max(1);
    for n in n.chunks(step) {
        let start = keys.len();
        simd::join(spec.level, n, s, spec.forbid, extra, keys);
        keep_exact(keys, start, spec.exact);
    }
}

/// Drops the keys of `keys[start..]` without exactly `bits` of `mask`.
fn keep_exact(keys: &mut Vec<u64>, start: usize, (mask, bits): (u64, u64)) {
    let mut kept = start;
    for i in start..keys.len() {
        let key = keys[i];
        keys[kept] = key;
        kept += usize::from(key & mask == bits);
    }
    keys.truncate(kept);
}

/// The halves of one or more specs, produced a portion at a time so that a task's keys never
/// all need to be in memory at once.
#[derive(Debug)]
pub(crate) struct Portions<'a, 'b> {
    specs: &'b [HalfSpec<'a>],
    spec: usize,
    mask: usize,
    /// (north, south) word pairs tested so far (a work counter).
    pub tested: u64,
    /// Keys produced so far, over every pass (a work counter).
    pub built: u64,
}

impl<'a, 'b> Portions<'a, 'b> {
    /// The halves of every spec of `specs`, in order.
    pub(crate) fn new(specs: &'b [HalfSpec<'a>]) -> Self {
        Portions {
            specs,
            spec: 0,
            mask: 0,
            tested: 0,
            built: 0,
        }
    }

    /// Whether every half has been produced.
    pub(crate) fn is_done(&self) -> bool {
        self.spec >= self.specs.len()
    }

    /// Appends the next halves to `out` (cleared first), column mask by column mask, until
    /// at least `limit` keys are there or none are left; returns whether any were added.
    pub(crate) fn next(&mut self, limit: usize, out: &mut [Vec<u64>; 4]) -> bool {
        out.iter_mut().for_each(Vec::clear);
        let len = |out: &[Vec<u64>; 4]| out.iter().map(Vec::len).sum::<usize>();
        while !self.is_done() && len(out) < limit {
            let spec = &self.specs[self.spec];
            self.tested += enumerate_columns(spec, spec.masks[self.mask], out);
            self.mask += 1;
            if self.mask == spec.masks.len() {
                (self.spec, self.mask) = (self.spec + 1, 0);
            }
        }
        self.built += len(out) as u64;
        len(out) > 0
    }

    /// Starts again from the first half.
    pub(crate) fn rewind(&mut self) {
        (self.spec, self.mask) = (0, 0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_join_level_keeps_exactly_the_disjoint_pairs() {
        let north: Vec<u64> = (0..13).map(|i| 1 << (i % 7) | 1 << (i % 5 + 8)).collect();
        let south: Vec<u64> = (0..29).map(|i| 1 << (i % 9) | 1 << (i % 4 + 9)).collect();
        let forbid = 1 << 3;
        let mut want = vec![7u64];
        for &n in north.iter().filter(|&&n| n & forbid == 0) {
            let ok = south.iter().filter(|&&s| (n | forbid) & s == 0);
            want.extend(ok.map(|&s| n | s | 1 << 40));
        }
        want[1..].sort();
        for level in simd::available_levels() {
            for (a, b) in [(&north, &south), (&south, &north)] {
                let mut got = vec![7u64];
                simd::join(level, a, b, forbid, 1 << 40, &mut got);
                got[1..].sort();
                assert_eq!(got, want, "{level:?}");
            }
        }
    }

    #[test]
    fn keeping_exact_bits_drops_only_the_keys_after_start() {
        let mut keys = vec![0b000, 0b001, 0b011, 0b010, 0b111, 0b110];
        keep_exact(&mut keys, 2, (0b110, 0b010));
        assert_eq!(keys, [0b000, 0b001, 0b011, 0b010]);
        keep_exact(&mut keys, 0, (0, 0));
        assert_eq!(keys.len(), 4);
    }

    #[test]
    fn every_join_level_equals_the_naive_join_for_every_tail_length() {
        let mut rng = fastrand::Rng::with_seed(4);
        let mut word = || (0..3).fold(0u64, |w, _| w | 1 << rng.u32(..24));
        for level in simd::available_levels() {
            for (len_n, len_s) in (0..18).flat_map(|a| (0..18).map(move |b| (a, b))) {
                let north: Vec<u64> = (0..len_n).map(|_| word()).collect();
                let south: Vec<u64> = (0..len_s).map(|_| word()).collect();
                let (forbid, extra) = (1 << 5, 1 << 50);
                let mut want = Vec::new();
                for &n in north.iter().filter(|&&n| n & forbid == 0) {
                    for &s in south.iter().filter(|&&s| (n | forbid) & s == 0) {
                        want.push(n | s | extra);
                    }
                }
                let mut got = Vec::new();
                simd::join(level, &north, &south, forbid, extra, &mut got);
                want.sort_unstable();
                got.sort_unstable();
                assert_eq!(got, want, "{level:?} {len_n}×{len_s}");
            }
        }
    }
}
