//! Large tasks split at generation: the stored side cut into pieces by hot key bits.
//!
//! From N ≈ 25 a task's stored (west) side holds tens of millions of keys, far more than one
//! sieve fill. Cut into arbitrary portions, every portion would meet every query. Instead a
//! few *hot* bits H, set often on both sides, cut the stored keys by their pattern P of H:
//! piece P holds the stored keys whose H bits are exactly P, and meets only the queries with
//! none of P's bits, since every other query clashes with all of its keys. Each disjoint
//! (query, stored) pair is counted in exactly one piece, the one of the stored key's pattern.
//!
//! Neither side is ever filtered key by key. A west half is a north word joined with a south
//! word, and the two are disjoint, so its pattern P is the union of theirs, Pn ⊔ Ps: piece P
//! joins, for every Pn ⊆ P, the north words of pattern exactly Pn with the south words of
//! pattern exactly P ∖ Pn ([`super::prepared::Prepared::group_by`] groups the words so). The
//! queries of piece P are the east halves built with P's bits forbidden.

use super::half::HalfSpec;
use super::limits::Limits;
use super::prepared::MAX_HOT;
use std::ops::Range;

/// One of the `2^bits` units a large split is cut into, so that the plan's tasks stay
/// short: unit `index` solves the pieces whose pattern of the split's `bits` best hot bits
/// is `index` ([`cut`]). `bits` 0 is the whole split.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Unit {
    /// Hot bits fixed per unit (0: the split is one task).
    pub bits: u32,
    /// Which unit, below `2^bits`.
    pub index: u32,
    /// Further hot bits: the task solves the `2^sub` finer units of this one in turn
    /// ([`Unit::finer`]), which share the split's quarter walks.
    pub sub: u32,
}

impl Unit {
    /// The whole split as one task.
    pub(crate) const WHOLE: Unit = Unit {
        bits: 0,
        index: 0,
        sub: 0,
    };

    /// The hot bits fixed per finer unit: `bits + sub`.
    pub(crate) fn fixed(self) -> u32 {
        self.bits + self.sub
    }

    /// The finer units this task solves, in order: itself when `sub` is 0.
    pub(crate) fn finer(self) -> impl Iterator<Item = Unit> {
        (0..1u32 << self.sub).map(move |j| Unit {
            bits: self.fixed(),
            index: self.index << self.sub | j,
            sub: 0,
        })
    }
}

/// Most hot bits a split is cut on: the best [`MAX_HOT`] group the quarters' words, the
/// others filter the halves ([`Cut`]).
pub(crate) const MAX_CUT: usize = 10;

/// Share of tested (north, south) word pairs that become halves: 0.12–0.27 measured at
/// N = 22..25. The high end, so that a large task is split rather than left in portions.
const KEPT: f64 = 0.25;

/// The hot bits to split the stored side `stored` of a task on, with queries `queries`,
/// best first: the bits that rule out the most (query, stored) pairs, enough of them for
/// pieces of about `limits.piece` keys, or none when its keys are expected to fit one sieve
/// fill; but at least `min` (at most [`MAX_CUT`]) where there are that many. Then up to
/// [`SPARE`] next-best bits, to cut a piece again where it overflows its fill anyway.
pub(crate) fn hot_bits(
    queries: &HalfSpec<'_>,
    stored: &[HalfSpec<'_>],
    limits: Limits,
    min: usize,
) -> (Vec<u32>, Vec<u32>) {
    // Most tasks fit one fill: the pair count alone (a couple of sampled words a group)
    // decides, and the bit densities are read only for a task that is split. The pairs
    // are added in the order `densities` adds them, so the choice is the same bit for bit
    // (every unit of a split must make it alike, whichever build solves it).
    let mut pairs = 0.0;
    for spec in stored {
        for_each_group(spec, |_, p| pairs += p);
    }
    let keys = pairs * KEPT;
    let k = if keys <= limits.stored as f64 {
        0
    } else {
        ((keys / limits.piece.max(1) as f64).log2().ceil() as usize).max(1)
    };
    let k = k.max(min).min(MAX_CUT);
    if k == 0 {
        return (Vec::new(), Vec::new());
    }
    let (_, s) = densities(stored);
    let (_, q) = densities(std::slice::from_ref(queries));
    // Bits a side forbids or adds to every key never tell two pieces apart, and a pattern
    // must come from the quarter words alone.
    let fixed = stored.iter().fold(queries.forbid | queries.extra, |m, w| {
        m | w.forbid | w.extra
    });
    let mut score: Vec<(f64, u32)> = (0..64)
        .filter(|&p| fixed >> p & 1 == 0)
        .map(|p| (s[p as usize] * q[p as usize], p))
        .filter(|&(v, _)| v > 0.0)
        .collect();
    score.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    let mut hot: Vec<u32> = score.iter().take(k + SPARE).map(|&(_, p)| p).collect();
    let spare = hot.split_off(k.min(hot.len()));
    (hot, spare)
}

/// Next-best hot bits kept to cut an overflowing piece again ([`Cut::spare`]).
pub(crate) const SPARE: usize = 2;

/// The hot bits a split is cut on, in pattern order (bit i of a pattern is key bit
/// `hot[i]`). The best [`MAX_HOT`] of them also group the quarters' words
/// ([`super::prepared::Prepared::group_by`]), so that a piece's stored halves are joined
/// from the words of its pattern only; a piece's pattern on the others (`filter`) is kept by
/// forbidding the bits it lacks and dropping the halves that lack one of its bits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Cut {
    /// Every hot bit, in pattern order.
    pub hot: Vec<u32>,
    /// The hot bits that group the quarters' words, in pattern order.
    pub grouped: Vec<u32>,
    /// The key bits of the other hot bits.
    pub filter: u64,
    /// Next-best bits, not among `hot`: a piece whose stored side overflows one sieve fill
    /// is cut in two on the first, and so on ([`Keys::join_split`]).
    ///
    /// [`Keys::join_split`]: super::join::Keys::join_split
    pub spare: Vec<u32>,
}

/// The cut of a split on `hot` (best first, with the `spare` bits after them) for `unit`,
/// and the patterns the unit solves.
/// The unit fixes the best `unit.bits` hot bits (fewer where there are fewer: the units
/// past them get nothing), so they are put last, where they are the high bits of a pattern
/// and one unit's patterns are one range.
pub(crate) fn cut(mut hot: Vec<u32>, spare: Vec<u32>, unit: Unit) -> (Cut, Range<u32>) {
    let best = key_bits(&hot, (1 << hot.len().min(MAX_HOT)) - 1);
    let patterns = unit_patterns(hot.len(), unit);
    let fixed = (unit.bits as usize).min(hot.len());
    hot.rotate_left(fixed);
    let grouped = hot
        .iter()
        .copied()
        .filter(|&b| best >> b & 1 == 1)
        .collect();
    let filter = key_bits(&hot, u32::MAX) & !best;
    (
        Cut {
            hot,
            grouped,
            filter,
            spare,
        },
        patterns,
    )
}

/// The patterns `unit` solves among `hot` hot bits ([`cut`]): those whose high bits, on the
/// unit's fixed hot bits, are its index (none for a unit past them).
pub(crate) fn unit_patterns(hot: usize, unit: Unit) -> Range<u32> {
    let fixed = (unit.bits as usize).min(hot);
    let rest = hot - fixed;
    if unit.index >> fixed != 0 {
        0..0
    } else {
        unit.index << rest..(unit.index + 1) << rest
    }
}

/// The key bits whose words no piece of `unit` (solving `patterns` of `cut`) uses, for the
/// query (east) quarters and the stored (west) ones: a query of piece P avoids P's bits,
/// which include the unit's pattern on its fixed hot bits, and a stored half has exactly
/// P's bits, so neither of its words has a fixed bit outside that pattern.
pub(crate) fn unit_drops(cut: &Cut, patterns: &Range<u32>, unit: Unit) -> [u64; 2] {
    let fixed = (unit.bits as usize).min(cut.hot.len());
    let rest = cut.hot.len() - fixed;
    let fixed_bits = key_bits(&cut.hot, ((1 << fixed) - 1) << rest);
    let unit_bits = key_bits(&cut.hot, patterns.start) & fixed_bits;
    [unit_bits, fixed_bits & !unit_bits]
}

/// The expected work of each piece of a task split on `hot` (by pattern), for drawing
/// pieces in proportion to it ([`crate::subsample`]). Piece P meets the stored keys with
/// exactly P and the queries with none of P, about `Π_{i∈P} s_i (1 − q_i) Π_{i∉P} (1 − s_i)`
/// of all pairs for densities s (stored) and q (queries). Time grows more slowly than pairs
/// (building keys is linear in each side, the sieve's visits sublinear): the 3/4 power
/// followed the pieces' times within a factor of about 2 on middle tasks of N = 26 and 28.
pub(crate) fn weights(queries: &HalfSpec<'_>, stored: &[HalfSpec<'_>], hot: &[u32]) -> Vec<f64> {
    let (_, s) = densities(stored);
    let (_, q) = densities(std::slice::from_ref(queries));
    (0..1u32 << hot.len())
        .map(|pattern| {
            let pairs: f64 = hot
                .iter()
                .enumerate()
                .map(|(i, &bit)| {
                    let (s, q) = (s[bit as usize], q[bit as usize]);
                    if pattern >> i & 1 == 1 {
                        s * (1.0 - q)
                    } else {
                        1.0 - s
                    }
                })
                .product();
            pairs.powf(0.75)
        })
        .collect()
}

/// The (north, south) word pairs `specs` test, and for each key bit the share of those
/// pairs whose north or south word has it (from each group's sampled words, weighted by
/// its pairs).
fn densities(specs: &[HalfSpec<'_>]) -> (f64, [f64; 64]) {
    let mut bits = [0f64; 64];
    let mut total = 0.0;
    for spec in specs {
        add_densities(spec, &mut bits, &mut total);
    }
    if total > 0.0 {
        bits.iter_mut().for_each(|b| *b /= total);
    }
    (total, bits)
}

/// Adds the word pairs of `spec` to `total` and their weighted bit counts to `bits`. Words
/// with a bit the side forbids never pair (odd N's cross tasks forbid the diagonals of the
/// middle column's queens: counting their words overstated the west side several times
/// and split tasks that fit one fill), so the sample's share of words without one scales
/// the pairs.
fn add_densities(spec: &HalfSpec<'_>, bits: &mut [f64; 64], total: &mut f64) {
    for_each_group(spec, |[n, s], pairs| {
        *total += pairs;
        for side in [n, s] {
            let kept = side.iter().copied().filter(|&w| w & spec.forbid == 0);
            let weight = pairs / kept.clone().count() as f64;
            for mut word in kept {
                while word != 0 {
                    bits[word.trailing_zeros() as usize] += weight;
                    word &= word - 1;
                }
            }
        }
    });
}

/// Calls `group` with the sampled north and south words of every (column mask, class)
/// group of `spec` that pairs any, and the number of its pairs without a forbidden bit.
fn for_each_group(spec: &HalfSpec<'_>, mut group: impl FnMut([&[u64]; 2], f64)) {
    for &cn in spec.masks.iter().filter(|&&cn| cn & !spec.cols == 0) {
        let cs = spec.cols ^ cn;
        for class in (0..4).filter(|&c| spec.wanted[c]) {
            let (n, s) = ((spec.north, class >> 1, cn), (spec.south, class & 1, cs));
            let [(n, n_len), (s, s_len)] =
                [n, s].map(|(q, c, m)| (q.sampled(c, m), q.sampled_of(c, m)));
            let forbid = spec.forbid;
            let pairs = n_len as f64 * share(n, forbid) * s_len as f64 * share(s, forbid);
            if pairs > 0.0 {
                group([n, s], pairs);
            }
        }
    }
}

/// The share of the sampled words `sample` without a bit of `forbid` (0 for no words).
fn share(sample: &[u64], forbid: u64) -> f64 {
    let kept = sample.iter().filter(|&&w| w & forbid == 0).count();
    kept as f64 / sample.len().max(1) as f64
}

/// The key bits of pattern `pattern` over the hot bits `hot`.
pub(crate) fn key_bits(hot: &[u32], pattern: u32) -> u64 {
    hot.iter()
        .enumerate()
        .filter(|&(i, _)| pattern >> i & 1 == 1)
        .fold(0, |m, (_, &bit)| m | 1 << bit)
}

/// The queries of piece `pattern`: the halves of `queries` without any of its hot bits.
pub(crate) fn query_spec<'a>(queries: &HalfSpec<'a>, hot: &[u32], pattern: u32) -> HalfSpec<'a> {
    HalfSpec {
        forbid: queries.forbid | key_bits(hot, pattern),
        ..*queries
    }
}

/// The stored halves of piece `pattern` of `cut`: for every split of its grouped bits
/// between the north and the south word, the halves whose words have exactly those bits,
/// less those whose other hot bits are not the pattern's.
pub(crate) fn stored_specs<'a>(
    stored: &HalfSpec<'a>,
    cut: &Cut,
    pattern: u32,
) -> Vec<HalfSpec<'a>> {
    let bits = key_bits(&cut.hot, pattern);
    let grouped = cut
        .grouped
        .iter()
        .enumerate()
        .filter(|&(_, &b)| bits >> b & 1 == 1)
        .fold(0u32, |p, (i, _)| p | 1 << i);
    let exact = (cut.filter, bits & cut.filter);
    let forbid = stored.forbid | (cut.filter & !bits);
    let mut specs = Vec::new();
    let mut north = grouped;
    loop {
        specs.push(HalfSpec {
            patterns: Some((north, grouped ^ north)),
            forbid,
            exact,
            ..*stored
        });
        if north == 0 {
            break;
        }
        north = (north - 1) & grouped;
    }
    specs
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::mitm::prepared::Prepared;
    use crate::engine::mitm::simd::Level;

    #[test]
    fn a_pattern_is_split_between_north_and_south_every_way_once() {
        let hot = [3, 9, 20];
        assert_eq!(key_bits(&hot, 0b101), 1 << 3 | 1 << 20);
        assert_eq!(key_bits(&hot, 0), 0);
        let quarter = Prepared::default();
        let spec = HalfSpec {
            north: &quarter,
            south: &quarter,
            cols: 0b11,
            masks: &[0b01],
            forbid: 1 << 40,
            extra: 0,
            wanted: [true; 4],
            patterns: None,
            tags: None,
            exact: (0, 0),
            level: Level::PORTABLE,
        };
        let all = Cut {
            hot: hot.to_vec(),
            grouped: hot.to_vec(),
            filter: 0,
            spare: Vec::new(),
        };
        let splits = |cut: &Cut, pattern| {
            let mut splits: Vec<(u32, u32)> = stored_specs(&spec, cut, pattern)
                .iter()
                .map(|s| s.patterns.expect("a piece's specs have patterns"))
                .collect();
            splits.sort_unstable();
            splits
        };
        let four = [
            (0b000, 0b101),
            (0b001, 0b100),
            (0b100, 0b001),
            (0b101, 0b000),
        ];
        assert_eq!(splits(&all, 0b101), four);
        assert_eq!(stored_specs(&spec, &all, 0).len(), 1);
        assert_eq!(stored_specs(&spec, &all, 0b101)[0].exact, (0, 0));
        // Bit 9 only filters: pattern 0b101 forbids it, pattern 0b010 requires it.
        let filtered = Cut {
            hot: hot.to_vec(),
            grouped: vec![3, 20],
            filter: 1 << 9,
            spare: Vec::new(),
        };
        let specs = stored_specs(&spec, &filtered, 0b101);
        assert_eq!(specs.len(), 4);
        assert!(specs
            .iter()
            .all(|s| s.exact == (1 << 9, 0) && s.forbid == 1 << 40 | 1 << 9));
        let specs = stored_specs(&spec, &filtered, 0b010);
        assert_eq!(specs.len(), 1);
        assert_eq!(specs[0].patterns, Some((0, 0)));
        assert_eq!(
            (specs[0].exact, specs[0].forbid),
            ((1 << 9, 1 << 9), 1 << 40)
        );
        let queries = query_spec(&spec, &hot, 0b110);
        assert_eq!(queries.forbid, 1 << 40 | 1 << 9 | 1 << 20);
        assert_eq!(queries.patterns, None);
    }

    #[test]
    fn a_cut_groups_the_best_bits_and_puts_the_units_last() {
        let hot: Vec<u32> = (10..18).collect();
        let (cut, patterns) = cut(
            hot,
            Vec::new(),
            Unit {
                bits: 2,
                index: 3,
                sub: 0,
            },
        );
        assert_eq!(cut.hot, [12, 13, 14, 15, 16, 17, 10, 11]);
        assert_eq!(cut.grouped, [12, 13, 14, 15, 10, 11]);
        assert_eq!(cut.filter, 1 << 16 | 1 << 17);
        assert_eq!(patterns, 3 << 6..4 << 6);
        let (few, patterns) = super::cut(
            vec![5, 7],
            Vec::new(),
            Unit {
                bits: 3,
                index: 4,
                sub: 0,
            },
        );
        assert_eq!((few.grouped.len(), few.filter), (2, 0));
        assert!(patterns.is_empty());
    }
}
