//! Tests of the trie against naive disjointness, and of its build and routing.

use super::*;

fn naive(keys: &[u64], queries: &[u64]) -> u64 {
    let pairs = queries.iter().flat_map(|q| keys.iter().map(move |k| k & q));
    pairs.filter(|&x| x == 0).count() as u64
}

fn random_keys(rng: &mut fastrand::Rng, len: usize, bits: u32, density: f64) -> Vec<u64> {
    (0..len)
        .map(|_| {
            (0..bits)
                .filter(|_| rng.f64() < density)
                .fold(0, |k, p| k | 1 << p)
        })
        .collect()
}

#[test]
fn partition_keeps_the_order_and_fronts_the_disjoint_keys_at_every_level() {
    let mut rng = fastrand::Rng::with_seed(5);
    let mut ones = Vec::new();
    for level in simd::available_levels() {
        for len in 0..40 {
            let mut q = random_keys(&mut rng, len, 8, 0.3);
            let without: Vec<u64> = q.iter().copied().filter(|&x| x & 0b1001 == 0).collect();
            let with: Vec<u64> = q.iter().copied().filter(|&x| x & 0b1001 != 0).collect();
            let (mut zeros, mut split_ones) = (vec![7; 3], vec![7; 5]);
            simd::split(level, &q, 0b1001, &mut zeros, &mut split_ones);
            assert_eq!((&zeros, &split_ones), (&without, &with), "{level:?}, {len}");
            let kept = simd::partition(level, &mut q, 0b1001, &mut ones);
            assert_eq!(kept, without.len(), "{level:?}, {len} keys");
            assert_eq!(q, [without, with].concat(), "{level:?}, {len} keys");
        }
    }
}

#[test]
fn two_blocks_skip_the_second_for_queries_with_the_bit_its_keys_share() {
    let mut rng = fastrand::Rng::with_seed(8);
    let layout = Layout::new(40, 0, 5);
    let keys = random_keys(&mut rng, 30_000, 40, 0.4);
    let queries = random_keys(&mut rng, 2000, 40, 0.35);
    for level in simd::available_levels() {
        let mut trie = Trie::new();
        trie.fill(&[&[&keys]], !0, &layout, &queries[..1000], level);
        let mut skips = 0;
        for node in &trie.nodes {
            if let Node::Leaf { skip, blocks, .. } = *node {
                // Only a packed leaf of two blocks takes a skip bit.
                assert!(skip == 0 || blocks == 2, "{level:?}");
                skips += usize::from(skip != 0);
            }
        }
        if level.has_fast_pext() {
            assert!(skips > 0, "{level:?}");
        } else {
            assert_eq!(skips, 0, "{level:?}");
        }
        let mut counts = [0u64];
        trie.count(&queries, &mut counts, level);
        assert_eq!(counts[0], naive(&keys, &queries), "{level:?}");
    }
}

#[test]
fn a_second_block_holds_only_keys_with_every_skip_bit() {
    let mut rng = fastrand::Rng::with_seed(12);
    for level in simd::available_levels() {
        for len in [BLOCK + 1, BLOCK + 40, BLOCK + 300, LEAF_KEYS] {
            let mut keys = random_keys(&mut rng, len, 30, 0.5);
            // Bit 31 is common to all keys: never a skip bit.
            keys.iter_mut().for_each(|k| *k |= 1 << 31);
            let queries = random_keys(&mut rng, 300, 32, 0.3);
            let before = keys.clone();
            let mut trie = Trie::new();
            let skip = trie.order_by_skip(&mut keys, &queries, 1 << 31, level);
            assert_ne!(skip, 0, "{level:?}, {len}");
            assert_eq!(skip & 1 << 31, 0, "{level:?}, {len}");
            assert!(
                keys[BLOCK..].iter().all(|&k| k & skip == skip),
                "{level:?}, {len}"
            );
            // One key past the first block: that key alone must have the bits, so more
            // than one fits.
            if len == BLOCK + 1 {
                assert!(skip.count_ones() > 1, "{level:?}: {skip:b}");
            }
            let (mut a, mut b) = (before, keys);
            a.sort_unstable();
            b.sort_unstable();
            assert_eq!(a, b, "{level:?}, {len}: the same keys, reordered");
        }
    }
}

#[test]
fn routing_keeps_exactly_the_queries_without_the_bits_in_order() {
    let mut rng = fastrand::Rng::with_seed(5);
    for level in simd::available_levels() {
        for len in 0..40 {
            let q = random_keys(&mut rng, len, 8, 0.3);
            let mut out = vec![7; 3];
            keep_without(&mut out, &q, 0b1001, level);
            let want: Vec<u64> = q.iter().copied().filter(|&x| x & 0b1001 == 0).collect();
            assert_eq!(out, want, "{level:?}, {len} queries");
        }
    }
}

#[test]
fn the_trie_equals_naive_disjointness_for_every_level() {
    let mut rng = fastrand::Rng::with_seed(9);
    let layout = Layout::new(40, 0, 5);
    for level in simd::available_levels() {
        for sampled in [0, 5, 700] {
            for &(len, density) in &[(0, 0.4), (1, 0.4), (47, 0.4), (600, 0.4), (5000, 0.35)] {
                let mut k1 = random_keys(&mut rng, len, 40, density);
                // Duplicates, the zero key and the all-ones key.
                k1.extend_from_slice(&k1.clone()[..len / 10]);
                k1.extend([0, (1 << 40) - 1]);
                let k2 = random_keys(&mut rng, len / 3, 40, 0.5);
                let mut queries = random_keys(&mut rng, 700, 40, 0.4);
                queries.extend([0, (1 << 40) - 1, 0]);
                let sample = &queries[..sampled];
                let mut trie = Trie::new();
                trie.fill(&[&[&k1], &[&k2, &k1]], !0, &layout, sample, level);
                assert!(trie.len() >= k1.len() * 2 + k2.len());
                let mut counts = [0u64; 2];
                trie.count(&queries, &mut counts, level);
                let want = [
                    naive(&k1, &queries),
                    naive(&k2, &queries) + naive(&k1, &queries),
                ];
                assert_eq!(counts, want, "{level:?} {sampled} sampled, {len} keys");
            }
        }
    }
}

#[test]
fn leaves_hold_one_to_two_blocks_and_routing_skips_pairs() {
    let mut rng = fastrand::Rng::with_seed(3);
    let layout = Layout::new(40, 0, 5);
    let keys = random_keys(&mut rng, 60_000, 40, 0.4);
    let queries = random_keys(&mut rng, 3000, 40, 0.4);
    let level = Level::detect();
    let mut trie = Trie::new();
    trie.fill(&[&[&keys]], !0, &layout, &queries[..1000], level);
    for node in &trie.nodes {
        if let Node::Leaf { blocks, rest, .. } = node {
            assert!(*blocks <= 2 && (*blocks == 0 || rest.is_empty()));
        }
    }
    let mut counts = [0u64];
    trie.count(&queries, &mut counts, level);
    assert_eq!(counts[0], naive(&keys, &queries));
    let all_blocks = (keys.len().div_ceil(BLOCK) * queries.len()) as u64;
    assert!(trie.visits.blocks < all_blocks / 2, "{:?}", trie.visits);
    assert!(trie.visits.routing > 0);
}

#[test]
fn leaves_slice_only_their_mixed_bits_where_pext_is_fast() {
    let mut rng = fastrand::Rng::with_seed(4);
    let layout = Layout::new(40, 0, 5);
    // Bits 20..40 are never set: no leaf slices them.
    let keys = random_keys(&mut rng, 20_000, 20, 0.4);
    let queries = random_keys(&mut rng, 2000, 40, 0.4);
    for level in simd::available_levels() {
        let mut trie = Trie::new();
        trie.fill(&[&[&keys]], !0, &layout, &queries[..500], level);
        for node in &trie.nodes {
            if let Node::Leaf {
                bits: LeafBits { mixed, common },
                layout: id,
                blocks,
                ..
            } = *node
            {
                if !level.has_fast_pext() {
                    assert_eq!(id, FULL, "{level:?}");
                } else if blocks > 0 {
                    assert_eq!(mixed & (common | !0xf_ffff), 0, "{level:?}");
                    assert_eq!(u32::from(id), mixed.count_ones());
                    assert!(trie.layouts[usize::from(id)].chunks() <= 4);
                }
            }
        }
        let mut counts = [0u64];
        trie.count(&queries, &mut counts, level);
        assert_eq!(counts[0], naive(&keys, &queries), "{level:?}");
    }
}
