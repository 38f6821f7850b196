//! The west classes' weights in a sieve: which group each class goes to, how many copies.

use super::Shape;

/// The weight a west sieve's group 0 stands for: with the transposes' tags (`shape.ties`),
/// the greatest common divisor of the factors that are not 0, so that their factors 2·ew, 4,
/// 4, 4 store every class once; else 1, and a class of factor 4 is stored twice (one group
/// of weight 2 serves the classes of factor 2 and 4: at N = 16 two groups cost 13%).
pub(super) fn unit_weight(shape: &Shape, factors: [u64; 4]) -> u64 {
    if shape.ties.is_none() {
        return 1;
    }
    let gcd = |a: u64, b: u64| {
        let (mut a, mut b) = (a, b);
        while b != 0 {
            (a, b) = (b, a % b);
        }
        a
    };
    factors.into_iter().fold(0, gcd).max(1)
}

/// Where a west class of factor `f` (in units of [`unit_weight`]) goes in a west sieve: its
/// group (0: weight 1, 1: weight 2) and how many copies of it are stored there.
pub(super) fn stored_copies(f: u64) -> (usize, u64) {
    debug_assert!(f <= 4, "factors are at most 4");
    if f % 2 == 1 {
        (0, f)
    } else {
        (1, f / 2)
    }
}

/// The west classes as the sieve's two groups, the keys of weight 1 and those of weight 2
/// (in units of [`unit_weight`]): a class of factor 1 or 2 once, one of factor 4 twice in
/// the second.
pub(super) fn weighted_groups(
    west: &[Vec<u64>; 4],
    factors: [u64; 4],
    unit: u64,
) -> [Vec<&[u64]>; 2] {
    let mut groups = [Vec::new(), Vec::new()];
    for (keys, f) in west.iter().zip(factors) {
        let (group, copies) = stored_copies(f / unit);
        groups[group].extend((0..copies).map(|_| keys.as_slice()));
    }
    groups
}
