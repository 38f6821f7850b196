//! The sieve of small tasks: stored keys bucketed by a few fixed cut bits, each bucket sliced
//! into whole blocks; a query visits only the buckets whose cut
//! bits are disjoint from its own, and the matcher layout leaves the cut bits out. Tasks whose
//! keys fill many blocks use the ranked [`super::matcher::Sieve`] instead.

use super::kernels::{Lanes, Layout, Visits, BLOCK};
use super::matcher::MIN_PARTIAL;
use super::simd::{self, Level};

/// A set of stored keys, ready to answer "how many are disjoint from this key" in bulk, for
/// small tasks.
///
/// With sieve cuts (docs/algorithms.md, "the three sieves and pieces"), a few key bits ("cut bits") sort
/// the keys into buckets; a query only visits the buckets whose cut bits are disjoint from its
/// own, and the matcher layout leaves the cut bits out.
#[derive(Debug, Default)]
pub(crate) struct BucketSieve {
    layout: Layout,
    cuts: Vec<u32>,
    buckets: Vec<Bucket>,
    tables: Vec<Lanes>,
    /// Blocks in use in `tables` (which only grows: every entry of a block in use is
    /// written by its build, so none is cleared).
    blocks: usize,
    rest: Vec<u64>,
    /// Keys or queries sorted by bucket (scratch).
    sorted: Vec<u64>,
    /// Per query and chunk, its table entry's byte offset (scratch for
    /// [`BucketSieve::count_groups`]).
    index: Vec<u32>,
    /// What the sieve did (taken by the task's work counters).
    pub visits: Visits,
}

/// The keys of one bucket: whole blocks in `tables`, the remainder in `rest`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Bucket {
    value: usize,
    blocks: std::ops::Range<usize>,
    rest: std::ops::Range<usize>,
}

/// The cut bits of `key`, packed: bit `i` is key bit `cuts[i]` (unrolled for `K` cuts).
#[inline(always)]
fn bucket_of<const K: usize>(key: u64, cuts: &[u32; K]) -> usize {
    let mut b = 0usize;
    for (i, &p) in cuts.iter().enumerate() {
        b |= ((key >> p & 1) as usize) << i;
    }
    b
}

impl BucketSieve {
    /// Replaces the stored keys by `keys`, bucketed by the bit positions `cuts` and read
    /// through `layout` (which must treat the cut bits as holes).
    pub(crate) fn fill(&mut self, keys: &[u64], layout: &Layout, cuts: &[u32], level: Level) {
        if self.layout != *layout {
            self.layout = layout.clone();
        }
        self.cuts.clear();
        self.cuts.extend_from_slice(cuts);
        self.buckets.clear();
        self.blocks = 0;
        self.rest.clear();
        if cuts.is_empty() {
            self.add_bucket(0, keys, level);
            return;
        }
        let mut sorted = std::mem::take(&mut self.sorted);
        sorted.clear();
        let ends = sort_by_bucket(keys, cuts, &mut sorted, level);
        let mut start = 0;
        for (value, &end) in ends.iter().enumerate() {
            self.add_bucket(value, &sorted[start..end], level);
            start = end;
        }
        self.sorted = sorted;
    }

    /// Slices one bucket's keys into blocks (a short remainder stays raw).
    fn add_bucket(&mut self, value: usize, keys: &[u64], level: Level) {
        let (full, extra) = (keys.len() / BLOCK, keys.len() % BLOCK);
        let sliced = if extra >= MIN_PARTIAL {
            keys.len()
        } else {
            full * BLOCK
        };
        let per = self.layout.per_block;
        let first = self.blocks;
        let blocks = sliced.div_ceil(BLOCK);
        self.visits.built += blocks as u64;
        self.blocks += blocks;
        if self.tables.len() < self.blocks * per {
            self.tables.resize(self.blocks * per, Lanes::ZERO);
        }
        let tables = &mut self.tables[first * per..self.blocks * per];
        for (b, table) in tables.chunks_exact_mut(per).enumerate() {
            let block = &keys[b * BLOCK..((b + 1) * BLOCK).min(sliced)];
            simd::build_block(level, block, &self.layout, table);
        }
        let rest_start = self.rest.len();
        self.rest.extend_from_slice(&keys[sliced..]);
        self.buckets.push(Bucket {
            value,
            blocks: first..first + blocks,
            rest: rest_start..self.rest.len(),
        });
    }

    /// Adds to `counts[g]` the number of (stored key, query) pairs with disjoint bits, for
    /// each group of queries `groups[g]`.
    pub(crate) fn count_groups(&mut self, groups: &[&[u64]], counts: &mut [u64], level: Level) {
        let cuts = std::mem::take(&mut self.cuts);
        let mut sorted = std::mem::take(&mut self.sorted);
        sorted.clear();
        // Segment (g, y): group g's queries with cut value y, at sorted[seg[s - 1]..seg[s]]
        // for s = g·2^k + y.
        let mut seg = vec![0usize];
        for queries in groups {
            seg.extend(sort_by_bucket(queries, &cuts, &mut sorted, level));
        }
        let stride = self.index_queries(&sorted, level);
        let per = self.layout.per_block;
        let values = 1usize << cuts.len();
        for bucket in &self.buckets {
            let compatible = |s: usize| (s % values) & bucket.value == 0;
            let tables = &self.tables[bucket.blocks.start * per..bucket.blocks.end * per];
            for pair in tables.chunks(2 * per) {
                for s in (0..seg.len() - 1).filter(|&s| compatible(s)) {
                    let range = seg[s]..seg[s + 1];
                    if range.is_empty() {
                        continue;
                    }
                    let index = &self.index[..stride * self.layout.chunks()];
                    self.visits.blocks += (range.len() * pair.len() / per) as u64;
                    // SAFETY: `index_queries` wrote byte offsets of entries below `per` for
                    // every chunk, and `pair` holds one or two whole blocks of `per` entries.
                    counts[s / values] +=
                        unsafe { simd::count_blocks(level, pair, per, index, stride, range) };
                }
            }
            let rest = &self.rest[bucket.rest.clone()];
            if !rest.is_empty() {
                for s in (0..seg.len() - 1).filter(|&s| compatible(s)) {
                    let queries = &sorted[seg[s]..seg[s + 1]];
                    counts[s / values] += simd::count_direct(level, rest, queries);
                    self.visits.direct += (rest.len() * queries.len()) as u64;
                }
            }
        }
        self.cuts = cuts;
        self.sorted = sorted;
    }

    /// Writes every query's chunk entries to `self.index` (chunk-major); returns the stride.
    fn index_queries(&mut self, queries: &[u64], level: Level) -> usize {
        simd::index_all(level, &self.layout, queries, &mut self.index)
    }
}

/// Appends `keys` to `out` sorted by their cut value (counting sort); returns each value's
/// end position in `out`.
fn sort_by_bucket(keys: &[u64], cuts: &[u32], out: &mut Vec<u64>, level: Level) -> Vec<usize> {
    if !cuts.is_empty() && level.has_fast_pext() {
        // One PEXT per key where the CPU runs it in hardware.
        let mask = cuts.iter().fold(0u64, |m, &p| m | 1 << p);
        debug_assert!(cuts.windows(2).all(|w| w[0] < w[1]), "cuts must ascend");
        return simd::sort_pext(keys, mask, cuts.len(), out);
    }
    macro_rules! by_len {
        ($($k:literal)*) => {
            match cuts.len() {
                $($k => sort_k::<$k>(keys, cuts.try_into().expect("length checked"), out),)*
                _ => panic!("at most 8 sieve cuts"),
            }
        };
    }
    by_len!(0 1 2 3 4 5 6 7 8)
}

/// [`sort_by_bucket`] for `K` cuts.
fn sort_k<const K: usize>(keys: &[u64], cuts: &[u32; K], out: &mut Vec<u64>) -> Vec<usize> {
    let base = out.len();
    if K == 0 {
        out.extend_from_slice(keys);
        return vec![out.len()];
    }
    let mut next = vec![0usize; 1 << K];
    for &k in keys {
        next[bucket_of(k, cuts)] += 1;
    }
    let mut acc = base;
    for slot in next.iter_mut() {
        (acc, *slot) = (acc + *slot, acc);
    }
    out.resize(base + keys.len(), 0);
    for &k in keys {
        let b = bucket_of(k, cuts);
        out[next[b]] = k;
        next[b] += 1;
    }
    next
}
