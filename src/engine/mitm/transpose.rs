//! The transposes at even N: a pair of west classes *ew*, 2 and 2 weighs twice, or once, or
//! not at all, by its two column masks (see docs/algorithms.md, "symmetry weights").
//!
//! Let C be the set of columns whose queen is in the north half. A transpose maps a solution
//! with splits (E, C) to one with (C, E), and the flips map C as they map E. So for a
//! function G of a split that both flips keep, weighting a pair by 2 where G(E) < G(C), 1
//! where equal and 0 where greater keeps every total: a solution and its transposed twin
//! swap the two sides of the comparison. The factor-4 class keeps its weight, since the
//! long-diagonal classes have already spent the transposes on it.
//!
//! Here G(S) is the sorted pair of `w = min(Y, ~Y)` and `e = min(rev X, ~rev X)`, where X
//! and Y are S's low and high h bits (for C: the columns of the NE and of the NW quarter).
//! So a pair's weight turns on its east half's NE column mask and its west half's NW
//! column mask alone, each placed against the task's two thresholds G(E) = (γ1, γ2):
//!
//! - weight 2 where both sides lie above γ1, or one is γ1 and the other above γ2;
//! - weight 1 (a *tie*) where one is γ1 and the other γ2 (both γ1 if γ1 = γ2);
//! - weight 0 otherwise: a west mask below γ1 is never built (but for the factor-4 class),
//!   an east one is built for the factor-4 class only.
//!
//! Three *tag* bits above the diagonals make every pair of weight 0 or 1 clash, so one join
//! counts the pairs of weight 2; four *mark* bits, which no sieve reads (they are holes),
//! find the few tied halves again, whose pairs are counted one by one
//! ([`super::join::Keys`]).

use super::key::Geometry;

/// Where a side's mask lies against the task's thresholds `(γ1, γ2)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
    /// Below γ1.
    Low,
    /// γ1.
    First,
    /// Between γ1 and γ2.
    Mid,
    /// γ2, above γ1.
    Second,
    /// Above γ2.
    High,
}

/// Which half a tagging is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Half {
    East,
    West,
}

/// The tags of one side of an even task: see the module docs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Tags {
    half: Half,
    /// The task's thresholds G(E).
    gamma: (u32, u32),
    /// Bits per quarter.
    h: u32,
    /// The first tag bit: the number of key bits.
    base: u32,
}

/// Tag bits above the diagonals, read by every sieve.
pub(crate) const TAG_BITS: u32 = 3;

impl Tags {
    /// The east and west tags of the even split whose east rows are `east`.
    pub(crate) fn for_split(geo: &Geometry, east: u32) -> [Tags; 2] {
        let (w, e) = values(east, geo.h);
        let gamma = (w.min(e), w.max(e));
        let tags = |half| Tags {
            half,
            gamma,
            h: geo.h,
            base: geo.key_bits(),
        };
        [tags(Half::East), tags(Half::West)]
    }

    /// The first key bit of the tags and marks ([`Tags::row`]): the board's key bits.
    #[cfg_attr(not(feature = "gpu"), allow(dead_code))]
    pub(crate) fn first_bit(&self) -> u32 {
        self.base
    }

    /// The bits the halves of each class whose north quarter uses the columns `cn` carry, or
    /// `None` where none of them has a pair of weight above 0.
    // Once per column mask: kept out of the half join's loop.
    #[inline(never)]
    pub(crate) fn row(&self, cn: u32) -> [Option<u64>; 4] {
        let bit = |i: u32| 1u64 << (self.base + i);
        let (l, pe, pw) = (bit(0), bit(1), bit(2));
        let [e1, e2, w1, w2] = marks(self.base);
        match self.half {
            Half::East => {
                // With γ1 = γ2 a tie is First with First: marked as east Second against west
                // First, which the tie count pairs.
                let tie = if self.gamma.0 == self.gamma.1 { e2 } else { e1 };
                let tag = match self.place(east_value(cn, self.h)) {
                    Place::Low => l | pw,
                    Place::First => pe | pw | tie,
                    Place::Mid => pw,
                    Place::Second => pw | e2,
                    Place::High => 0,
                };
                // East halves are of class 0 only.
                [Some(tag); 4]
            }
            Half::West => {
                let tag = match self.place(west_value(cn, self.h)) {
                    Place::Low => None,
                    Place::First => Some(l | pe | pw | w1),
                    Place::Mid => Some(l | pe),
                    Place::Second => Some(l | pe | w2),
                    Place::High => Some(l),
                };
                // The factor-4 class keeps every pair at its own weight.
                [tag, tag, tag, Some(0)]
            }
        }
    }

    fn place(&self, v: u32) -> Place {
        let (g1, g2) = self.gamma;
        match (v.cmp(&g1), v.cmp(&g2)) {
            (std::cmp::Ordering::Less, _) => Place::Low,
            (std::cmp::Ordering::Equal, _) => Place::First,
            (_, std::cmp::Ordering::Less) => Place::Mid,
            (_, std::cmp::Ordering::Equal) => Place::Second,
            _ => Place::High,
        }
    }
}

/// The key bits of the tie marks of a board with `key_bits` key bits: `(east First, east
/// Second, west First, west Second)`.
pub(crate) fn marks(key_bits: u32) -> [u64; 4] {
    std::array::from_fn(|i| 1u64 << (key_bits + TAG_BITS + i as u32))
}

/// Every mark bit of a board with `key_bits` key bits (holes to every sieve).
pub(crate) fn mark_mask(key_bits: u32) -> u64 {
    marks(key_bits).into_iter().fold(0, |m, b| m | b)
}

/// The `(w, e)` values of a split `s` of 2h bits: `min(Y, ~Y)` of its high h bits and
/// `min(rev X, ~rev X)` of its low h bits. Both flips keep the pair or swap it.
fn values(s: u32, h: u32) -> (u32, u32) {
    let m = (1u32 << h) - 1;
    (west_value((s >> h) & m, h), east_value(s & m, h))
}

/// `min(Y, ~Y)` over h bits.
fn west_value(y: u32, h: u32) -> u32 {
    let m = (1u32 << h) - 1;
    y.min(!y & m)
}

/// `min(rev X, ~rev X)` over h bits.
fn east_value(x: u32, h: u32) -> u32 {
    west_value(x.reverse_bits() >> (32 - h), h)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::mitm::weights::reverse;

    #[test]
    fn both_flips_keep_the_sorted_values_of_a_split() {
        for h in 2..=7u32 {
            let n = 2 * h;
            let all = (1u32 << n) - 1;
            for s in (0..=all).filter(|s| s.count_ones() == h) {
                let sorted = |s| {
                    let (w, e) = values(s, h);
                    (w.min(e), w.max(e))
                };
                assert_eq!(sorted(s), sorted(reverse(s, n)), "h {h} s {s:b}");
                assert_eq!(sorted(s), sorted(!s & all), "h {h} s {s:b}");
            }
        }
    }

    /// The weight of a pair whose west and east halves lie at `w` and `e` against
    /// `(γ1, γ2)`, from the sorted pairs.
    fn weight(w: u32, e: u32, (g1, g2): (u32, u32)) -> u64 {
        match (w.min(e), w.max(e)).cmp(&(g1, g2)) {
            std::cmp::Ordering::Greater => 2,
            std::cmp::Ordering::Equal => 1,
            std::cmp::Ordering::Less => 0,
        }
    }

    #[test]
    fn tags_clash_unless_a_pair_weighs_2_and_marks_find_exactly_the_ties() {
        let geo = Geometry::new(12);
        let (h, base) = (geo.h, geo.key_bits());
        let tags_above = ((1u64 << TAG_BITS) - 1) << base;
        let [e1, e2, w1, w2] = marks(base);
        let mut seen = [0usize; 3];
        for east in (0..1u32 << 12).filter(|s| s.count_ones() == 6) {
            let [te, tw] = Tags::for_split(&geo, east);
            for x in 0..1u32 << h {
                for y in 0..1u32 << h {
                    let want = weight(west_value(y, h), east_value(x, h), te.gamma);
                    seen[want as usize] += 1;
                    let et = te.row(x)[0].expect("east halves are always built");
                    for class in 0..4 {
                        let Some(wt) = tw.row(y)[class] else {
                            assert!(class < 3 && want == 0, "{east:b} {x:b} {y:b}");
                            continue;
                        };
                        let meets = et & wt & tags_above == 0;
                        let tie = (wt & w1 != 0 && et & e2 != 0) || (wt & w2 != 0 && et & e1 != 0);
                        if class == 3 {
                            assert!(meets && wt == 0);
                        } else {
                            assert_eq!(meets, want == 2, "{east:b} {x:b} {y:b}");
                            assert_eq!(tie, want == 1, "{east:b} {x:b} {y:b}");
                        }
                    }
                }
            }
        }
        assert!(seen.iter().all(|&k| k > 1000), "{seen:?}");
    }
}
