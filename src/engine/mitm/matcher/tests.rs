//! The sieve, its ranks and the transpose against naive counts of disjoint pairs, at every
//! level this CPU has.

use super::super::kernels::transpose64;
use super::*;

/// `len` keys on the low `bits` bits from `seed`, each the AND of `density` random
/// words (so about 2^−density of the bits are set).
fn random_keys(seed: u64, len: usize, bits: u32, density: u32) -> Vec<u64> {
    let mut rng = fastrand::Rng::with_seed(seed);
    let mask = if bits == 64 { !0 } else { (1u64 << bits) - 1 };
    (0..len)
        .map(|_| (0..density).fold(!0u64, |acc, _| acc & rng.u64(..)) & mask)
        .collect()
}

fn naive(keys: &[u64], queries: &[u64]) -> u64 {
    let mut n = 0;
    for &q in queries {
        for &k in keys {
            n += u64::from(k & q == 0);
        }
    }
    n
}

#[test]
fn transpose_swaps_rows_and_columns() {
    let rows = random_keys(7, 64, 64, 1);
    let mut m: [u64; 64] = rows.clone().try_into().unwrap();
    transpose64(&mut m);
    for (i, row) in rows.iter().enumerate() {
        for (p, col) in m.iter().enumerate() {
            assert_eq!(col >> i & 1, row >> p & 1, "row {i} bit {p}");
        }
    }
}

#[test]
fn matcher_equals_naive_disjointness_on_random_keys_for_every_level() {
    let shapes = [
        (0, 30, 5),
        (1, 34, 5),
        (47, 32, 6),
        (48, 32, 4),
        (511, 28, 5),
        (512, 34, 5),
        (700, 36, 6),
        (1100, 33, 3),
        (1536 + 200, 42, 5),
    ];
    for level in simd::available_levels() {
        for (i, &(len, bits, k)) in shapes.iter().enumerate() {
            let k1 = random_keys(11 + i as u64, len, bits, 2);
            let k2 = random_keys(12 + i as u64, len / 3, bits, 3);
            let queries = random_keys(99 + i as u64, 77, bits, 2);
            let mut sieve = Sieve::new();
            let layout = Layout::new(bits, 0, k);
            sieve.fill(&[&[&k1], &[&k2]], !0, &layout, &Rank::default(), level);
            assert!(sieve.len() >= k1.len() + k2.len());
            let mut counts = [0u64; 2];
            sieve.count(&queries, &mut counts, level);
            let want = [naive(&k1, &queries), naive(&k2, &queries)];
            assert_eq!(counts, want, "{level:?} len {len} bits {bits} k {k}");
        }
    }
}

#[test]
fn holes_widen_chunks_and_masked_keys_still_count() {
    let holes = 1 << 4 | 1 << 20;
    let layout = Layout::new(34, holes, 5);
    // 32 usable bits in 7 chunks: 5, 5, 5, 5, 4, 4, 4 (+ the holes at 4 and 20).
    assert_eq!(layout.shift, vec![0, 6, 11, 16, 22, 26, 30]);
    assert_eq!(layout.chunks(), 7);
    assert_eq!(layout.mask.last(), Some(&0b1111));
    for level in simd::available_levels() {
        // Queries never have the hole bits; stored keys may, and drop them.
        let keys = random_keys(21, 900, 34, 2);
        let queries: Vec<u64> = random_keys(22, 50, 34, 2)
            .into_iter()
            .map(|q| q & !holes)
            .collect();
        let mut sieve = Sieve::new();
        sieve.fill(&[&[&keys]], !holes, &layout, &Rank::default(), level);
        let mut counts = [0u64];
        sieve.count(&queries, &mut counts, level);
        assert_eq!(counts[0], naive(&keys, &queries), "{level:?}");
    }
}

#[test]
fn ranked_blocks_count_the_same_pairs() {
    let rank = Rank::new(&[20, 3, 7, 33, 12, 0, 1, 2, 4, 5, 30, 31, 6, 8, 9, 10, 11]);
    let layout = Layout::new(34, 0, 5);
    for level in simd::available_levels() {
        for len in [0, 40, 700, 3000, 9000] {
            let k1 = random_keys(31 + len as u64, len, 34, 2);
            let k2 = random_keys(34 + len as u64, len / 2, 34, 1);
            let queries = random_keys(32, 5000, 34, 2);
            let mut sieve = Sieve::new();
            sieve.fill(&[&[&k1, &k2], &[&k2]], !0, &layout, &rank, level);
            let mut counts = [0u64; 2];
            sieve.count(&queries, &mut counts, level);
            let want = [
                naive(&k1, &queries) + naive(&k2, &queries),
                naive(&k2, &queries),
            ];
            assert_eq!(counts, want, "{level:?} len {len}");
        }
    }
}

#[test]
fn ranks_read_the_chosen_bits_most_significant_first() {
    let rank = Rank::new(&[40, 0, 9]);
    assert_eq!(rank.bits(), 3);
    assert_eq!(rank.of(1 << 40), 0b100);
    assert_eq!(rank.of(1), 0b010);
    assert_eq!(rank.of(1 << 9 | 1 << 3), 0b001);
    assert_eq!(rank.of(!0), 0b111);
    assert_eq!(Rank::default().of(!0), 0);
}

#[test]
fn a_zero_query_counts_every_key_but_no_padding() {
    for level in simd::available_levels() {
        let keys = random_keys(3, 600, 30, 2);
        let mut sieve = Sieve::new();
        let layout = Layout::new(30, 0, 5);
        sieve.fill(&[&[&keys]], !0, &layout, &Rank::new(&[3, 4, 5]), level);
        let mut counts = [0u64];
        sieve.count(&[0], &mut counts, level);
        assert_eq!(counts[0], 600, "{level:?}");
    }
}
