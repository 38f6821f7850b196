//! Tests of prepared quarters: conversions agree, lazy fills equal direct filters, and
//! regrouping keeps every word.

use super::convert::fit;
use super::*;
use crate::engine::mitm::quarter::{Placements, QuarterCache, QuarterList};

#[test]
fn grouping_by_hot_bits_keeps_every_word_and_finds_each_pattern() {
    let g = Geometry::new(16);
    let list = QuarterList::generate(g.h, 0b1011_0101);
    let mut p = Prepared::default();
    p.prepare(
        &g,
        Quarter::Nw,
        Placements::List(&list),
        (0, 0),
        Side::split(1 << 20),
    );
    let sorted = |w: &[u64]| {
        let mut w = w.to_vec();
        w.sort_unstable();
        w
    };
    let every = |p: &Prepared| -> Vec<Vec<u64>> {
        (0..2)
            .flat_map(|class| (0..1u32 << g.h).map(move |cols| (class, cols)))
            .map(|(class, cols)| sorted(p.get(class, cols)))
            .collect()
    };
    let before = every(&p);
    let samples = |p: &Prepared| -> Vec<Vec<u64>> {
        (0..2)
            .flat_map(|class| (0..1u32 << g.h).map(move |cols| (class, cols)))
            .map(|(class, cols)| p.sampled(class, cols).to_vec())
            .collect()
    };
    let sampled = samples(&p);
    assert!(p.len() > 100);
    for hot in [&[5u32, 17, 22][..], &[1, 2, 3, 4, 5, 6], &[9], &[]] {
        p.group_by(hot);
        assert_eq!(every(&p), before, "{hot:?}");
        // Hot bits come from the samples: regrouping must not change them.
        assert_eq!(samples(&p), sampled, "{hot:?}");
        for (class, cols) in [(0, 0b1110_0010), (1, 0b0111_0100), (0, 0b1111_0000)] {
            let mut joined = Vec::new();
            for pattern in 0..1u32 << hot.len() {
                let group = p.get_group(class, cols, pattern);
                assert!(group
                    .iter()
                    .all(|&w| super::hot::pattern(w, hot) == pattern));
                joined.extend_from_slice(group);
            }
            assert_eq!(joined, p.get(class, cols), "{hot:?}");
        }
    }
}

#[test]
fn a_quarter_filled_against_its_partner_keeps_exactly_the_words_that_pair() {
    // N = 22: a west quarter too large for the tests' walk buffer, written for units
    // with three fixed key bits, against the other west quarter written whole.
    let g = Geometry::new(22);
    let cache = QuarterCache::new(g.h);
    let all = (1u32 << g.h) - 1;
    let (north_rows, south_rows) = (0b000_0011_0001u32, 0b111_1111_0000);
    let mut north = Prepared::default();
    north.prepare(
        &g,
        QUARTERS[2],
        cache.get(north_rows),
        (0, 0),
        Side::forbid(0),
    );
    let fixed = 1u64 << 4 | 1 << 9 | 1 << 30;
    let (mut dropped, mut kept) = (0, 0);
    for set in [0, 1 << 9, fixed & !(1 << 4), fixed] {
        let drop = fixed & !set;
        let mut south = Prepared::default();
        let rows = cache.get(south_rows);
        south.prepare_with(&g, QUARTERS[3], rows, (0, 0), Side::forbid(0), true);
        assert!(south.is_pending());
        let partners = north.partners(fixed, drop);
        south.fill(drop, |c, w| partners.pairs(c, w, set, &[all, all & !2]));
        let mut plain = Prepared::default();
        plain.prepare(&g, QUARTERS[3], rows, (0, 0), Side::forbid(drop));
        let pairs = |c: u32, w: u64| {
            [all, all & !2].iter().any(|&free| {
                c & !free == 0
                    && (0..2).any(|k| {
                        north
                            .get(k, free ^ c)
                            .iter()
                            .any(|&v| v & drop == 0 && v & fixed == set & !w & fixed)
                    })
            })
        };
        for class in 0..2 {
            for c in 0..=all {
                let expected: Vec<u64> = (plain.get(class, c).iter())
                    .copied()
                    .filter(|&w| pairs(c, w))
                    .collect();
                assert_eq!(south.get(class, c), expected, "set {set:x}, cols {c:b}");
                kept += expected.len();
                dropped += plain.get(class, c).len() - expected.len();
            }
        }
    }
    assert!(
        kept > 1000 && dropped > 1000,
        "kept {kept}, dropped {dropped}"
    );
}

#[test]
fn a_lazy_quarter_filled_equals_one_prepared_with_its_filter() {
    let mut deferred = 0;
    for n in [22, 23] {
        let g = Geometry::new(n);
        let cache = QuarterCache::new(g.h);
        let anti = g.window_bits(0, n - 1);
        let sides = [
            Side::forbid(0),
            Side::split(anti),
            Side::forbid(1 << 7 | 1 << 30),
        ];
        for (i, rows) in [0b101_1001_0110u32, 0b111_1111_0000, 0b110_0110_0111, 0b1]
            .into_iter()
            .enumerate()
        {
            let (q, side) = (QUARTERS[i % 4], sides[i % 3]);
            let mut full = Prepared::default();
            full.prepare(&g, q, cache.get(rows), (0, 0), side);
            for drop in [0, 1 << 3, 1 << 12 | 1 << 25 | 1 << 33] {
                let mut lazy = Prepared::default();
                lazy.prepare_with(&g, q, cache.get(rows), (0, 0), side, true);
                let pending = lazy.is_pending();
                deferred += usize::from(pending);
                assert_eq!(lazy.len(), full.len(), "N = {n}, rows {rows:b}");
                lazy.fill(drop, ANY);
                assert!(!lazy.is_pending());
                // The samples are the whole quarter's, whatever the fill dropped.
                assert_eq!(lazy.samples, full.samples);
                assert_eq!(lazy.sample_at, full.sample_at);
                assert_eq!(lazy.sample_of, full.sample_of);
                let mut filtered = Prepared::default();
                let forbid = side.forbid | drop;
                filtered.prepare(&g, q, cache.get(rows), (0, 0), Side { forbid, ..side });
                // A quarter that fits one walk is written whole at once.
                let expected = if pending { &filtered } else { &full };
                assert_eq!(
                    lazy.words, expected.words,
                    "N = {n}, rows {rows:b}, {drop:x}"
                );
                assert_eq!(lazy.offsets, expected.offsets);
            }
        }
    }
    assert!(deferred >= 6, "only {deferred} quarters were deferred");
}

#[test]
fn quarters_prepared_from_the_search_equal_those_from_a_kept_list() {
    // h = 11 (N = 22, 23): the smallest quarters that are searched per task.
    for n in [22, 23] {
        let g = Geometry::new(n);
        let cache = QuarterCache::new(g.h);
        assert!(!cache.is_cached());
        let (main, anti) = (g.window_bits(n - 1, 0), g.window_bits(0, n - 1));
        let sides = [Side::forbid(main), Side::split(anti), Side::forbid(0)];
        for (i, rows) in [0b101_1001_0110u32, 0b111_1111_0000, 0b1, 0]
            .into_iter()
            .enumerate()
        {
            let list = QuarterList::generate(g.h, rows);
            let (q, side) = (QUARTERS[i % 4], sides[i % 3]);
            for raw in [(0, 0), g.forbidden(q, n - 1, g.h)] {
                let (mut kept, mut searched) = (Prepared::default(), Prepared::default());
                kept.prepare(&g, q, Placements::List(&list), raw, side);
                searched.prepare(&g, q, cache.get(rows), raw, side);
                assert_eq!(searched.words, kept.words, "N = {n}, rows {rows:b}");
                assert_eq!(searched.offsets, kept.offsets);
                assert_eq!(searched.samples, kept.samples);
                assert_eq!(searched.queens(), rows.count_ones());
            }
        }
    }
}

#[test]
fn a_buffer_far_larger_than_needed_is_given_back() {
    let mut huge: Vec<u64> = Vec::with_capacity(1 << 20);
    huge.push(7);
    fit(&mut huge, 10);
    assert!(huge.is_empty());
    assert!((10..1 << 19).contains(&huge.capacity()));
    let mut small: Vec<u64> = Vec::with_capacity(1000);
    fit(&mut small, 10);
    assert_eq!(
        small.capacity(),
        1000,
        "a modest buffer is kept for the next task"
    );
    fit(&mut small, 5000);
    assert!(small.capacity() >= 5000);
}
