//! Published values: OEIS A000170 (all solutions) and A002562 (fundamental solutions).
//!
//! These tables are oracles for verification and tests. The engines never read them: a count
//! is always computed, then compared here.

/// Q(N) for N = 0..=27 (OEIS A000170); index by N. Q(0) = 1 by convention.
pub const TOTAL: [u128; 28] = [
    1,
    1,
    0,
    0,
    2,
    10,
    4,
    40,
    92,
    352,
    724,
    2_680,
    14_200,
    73_712,
    365_596,
    2_279_184,
    14_772_512,
    95_815_104,
    666_090_624,
    4_968_057_848,
    39_029_188_884,
    314_666_222_712,
    2_691_008_701_644,
    24_233_937_684_440,
    227_514_171_973_736,
    2_207_893_435_808_352,
    22_317_699_616_364_044,
    234_907_967_154_122_528,
];

/// U(N) for N = 0..=27 (OEIS A002562, solutions up to rotation and reflection); index by N.
pub const UNIQUE: [u128; 28] = [
    1,
    1,
    0,
    0,
    1,
    2,
    1,
    6,
    12,
    46,
    92,
    341,
    1_787,
    9_233,
    45_752,
    285_053,
    1_846_955,
    11_977_939,
    83_263_591,
    621_012_754,
    4_878_666_808,
    39_333_324_973,
    336_376_244_042,
    3_029_242_658_210,
    28_439_272_956_934,
    275_986_683_743_434,
    2_789_712_466_510_289,
    29_363_495_934_315_694,
];

/// The published number of solutions for an `n`×`n` board, if known.
pub fn total(n: u32) -> Option<u128> {
    TOTAL.get(n as usize).copied()
}

/// The published number of fundamental solutions for an `n`×`n` board, if known.
pub fn unique(n: u32) -> Option<u128> {
    UNIQUE.get(n as usize).copied()
}

/// Compares a computed value with a published one: `Some(true)` when they agree,
/// `Some(false)` when they differ, `None` when nothing is published for `n`.
pub fn check(published: Option<u128>, computed: u128) -> Option<bool> {
    published.map(|p| p == computed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_values_match_a_hand_count() {
        assert_eq!(total(4), Some(2));
        assert_eq!(total(8), Some(92));
        assert_eq!(unique(8), Some(12));
    }

    #[test]
    fn values_past_the_table_are_unknown() {
        assert_eq!(total(28), None);
        assert_eq!(unique(32), None);
    }

    #[test]
    fn unique_never_exceeds_total_and_is_at_least_an_eighth() {
        for n in 1..28 {
            let (q, u) = (TOTAL[n], UNIQUE[n]);
            assert!(u <= q && 8 * u >= q, "n = {n}");
        }
    }
}
