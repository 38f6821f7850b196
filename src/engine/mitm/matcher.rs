//! Counting disjoint key pairs in bulk: the bit-sliced matcher (ALGORITHMS.md §4.2).
//!
//! Stored keys are cut into blocks of 512. For each key bit `p` a block holds the 512-bit
//! set `S_p` of its keys *without* bit `p`; bit positions are grouped in chunks of `k`, and
//! for every subset `σ` of a chunk the block stores `AND_{p ∈ σ} S_p`. A query `q` then reads
//! one entry per chunk, ANDs them and counts the ones: the number of keys disjoint from `q`,
//! 512 pairs in a handful of word operations. Queries run block by block, all queries against
//! one L1-resident block before the next (§4.6 item 3), not each query through every block.
//! A short remainder of keys is compared directly.
//!
//! The inner loops are written once and compiled per CPU level (see [`Level`]); AVX-512 with
//! VPOPCNTQ, AVX2 + POPCNT, POPCNT alone, and a portable fallback give identical results.

use super::simd::{self, Level};

/// Keys per block.
pub const BLOCK: usize = 512;

/// A partial final block is padded and sliced only if it holds at least this many keys;
/// fewer are compared one by one.
const MIN_PARTIAL: usize = 48;

/// 512 bits: one bit per key of a block.
#[repr(C, align(64))]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lanes(pub [u64; 8]);

impl Lanes {
    /// All 512 bits set.
    pub const ONES: Lanes = Lanes([!0; 8]);
    /// No bit set.
    pub const ZERO: Lanes = Lanes([0; 8]);
}

/// Where each chunk of a key sits: chunk `j` is `(key >> shift[j]) & mask[j]`, and its
/// `mask[j] + 1` table entries start at `offset[j]` within a block.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Layout {
    /// Right shift of each chunk.
    pub shift: Vec<u32>,
    /// Mask of each chunk after the shift.
    pub mask: Vec<u64>,
    /// First table entry of each chunk.
    pub offset: Vec<usize>,
    /// Table entries per block.
    pub per_block: usize,
}

impl Layout {
    /// Chunks of at most `k` usable bits (as even as possible) over the low `bits` key bits;
    /// a chunk widens over the `holes` (bits no stored key has), which then cost nothing per
    /// query.
    pub fn new(bits: u32, holes: u64, k: u32) -> Self {
        let usable = (0..bits).filter(|p| holes >> p & 1 == 0).count() as u32;
        let chunks = usable.div_ceil(k).max(1);
        let mut layout = Layout::default();
        let mut p = 0;
        for j in 0..chunks {
            // The first `usable % chunks` chunks take one bit more.
            let want = usable / chunks + u32::from(j < usable % chunks);
            let mut width = 0;
            let mut used = 0;
            while p + width < bits && (used < want || holes >> (p + width) & 1 == 1) {
                used += u32::from(holes >> (p + width) & 1 == 0);
                width += 1;
            }
            layout.shift.push(p);
            layout.mask.push((1u64 << width) - 1);
            layout.offset.push(layout.per_block);
            layout.per_block += 1 << width;
            p += width;
        }
        layout
    }

    /// The number of chunks.
    pub fn chunks(&self) -> usize {
        self.shift.len()
    }

    /// Writes the byte offset (within a block) of each query's table entry in every chunk:
    /// entry `j` of query `i` goes to `out[j * stride + i]`.
    #[inline(always)]
    pub fn index_generic(&self, queries: &[u64], out: &mut [u32], stride: usize) {
        for j in 0..self.chunks() {
            let (shift, mask, offset) = (self.shift[j], self.mask[j], self.offset[j] as u64);
            let row = &mut out[j * stride..][..queries.len()];
            for (o, &q) in row.iter_mut().zip(queries) {
                *o = ((((q >> shift) & mask) + offset) * LANES_BYTES) as u32;
            }
        }
    }
}

/// Bytes per table entry.
const LANES_BYTES: u64 = 64;

/// A set of stored keys, ready to answer "how many are disjoint from this key" in bulk.
///
/// With sieve cuts (§4.2), a few key bits ("cut bits") sort the keys into buckets; a query
/// only visits the buckets whose cut bits are disjoint from its own, and the matcher layout
/// leaves the cut bits out.
#[derive(Debug, Default)]
pub struct Sieve {
    layout: Layout,
    cuts: Vec<u32>,
    buckets: Vec<Bucket>,
    tables: Vec<Lanes>,
    rest: Vec<u64>,
    /// Keys or queries sorted by bucket (scratch).
    sorted: Vec<u64>,
    /// Per query and chunk, its table entry's byte offset (scratch for
    /// [`Sieve::count_groups`]).
    index: Vec<u32>,
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

impl Sieve {
    /// An empty sieve (reuse it with [`Sieve::fill`] to keep its buffers).
    pub fn new() -> Self {
        Self::default()
    }

    /// Replaces the stored keys by `keys`, bucketed by the bit positions `cuts` and read
    /// through `layout` (which must treat the cut bits as holes).
    pub fn fill(&mut self, keys: &[u64], layout: &Layout, cuts: &[u32], level: Level) {
        if self.layout != *layout {
            self.layout = layout.clone();
        }
        self.cuts.clear();
        self.cuts.extend_from_slice(cuts);
        self.buckets.clear();
        self.tables.clear();
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
        let first = self.tables.len() / per;
        let blocks = sliced.div_ceil(BLOCK);
        self.tables.resize((first + blocks) * per, Lanes::ZERO);
        let tables = &mut self.tables[first * per..];
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

    /// The number of stored keys (blocks count whole).
    pub fn len(&self) -> usize {
        self.rest.len() + self.tables.len() / self.layout.per_block.max(1) * BLOCK
    }

    /// Whether the sieve holds no key.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Adds to `counts[g]` the number of (stored key, query) pairs with disjoint bits, for
    /// each group of queries `groups[g]`.
    pub fn count_groups(&mut self, groups: &[&[u64]], counts: &mut [u64], level: Level) {
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
                    // SAFETY: `index_queries` wrote byte offsets of entries below `per` for
                    // every chunk, and `pair` holds one or two whole blocks of `per` entries.
                    counts[s / values] +=
                        unsafe { simd::count_blocks(level, pair, per, index, stride, range) };
                }
            }
            let rest = &self.rest[bucket.rest.clone()];
            if !rest.is_empty() {
                for s in (0..seg.len() - 1).filter(|&s| compatible(s)) {
                    counts[s / values] +=
                        simd::count_direct(level, rest, &sorted[seg[s]..seg[s + 1]]);
                }
            }
        }
        self.cuts = cuts;
        self.sorted = sorted;
    }

    /// Writes every query's chunk entries to `self.index` (chunk-major); returns the stride.
    fn index_queries(&mut self, queries: &[u64], level: Level) -> usize {
        let stride = queries.len().next_multiple_of(8);
        let need = stride * self.layout.chunks();
        // Every read position is written below; only grow, never clear.
        if self.index.len() < need {
            self.index.resize(need, 0);
        }
        simd::index(level, &self.layout, queries, &mut self.index, stride);
        stride
    }
}

/// Appends `keys` to `out` sorted by their cut value (counting sort); returns each value's
/// end position in `out`.
fn sort_by_bucket(keys: &[u64], cuts: &[u32], out: &mut Vec<u64>, level: Level) -> Vec<usize> {
    if !cuts.is_empty() && level >= Level::Avx2 {
        // Avx2 and Avx512 imply BMI2 (see `simd::available_levels`): one PEXT per key.
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

/// Transposes a 64×64 bit matrix in place: afterwards bit `i` of row `p` is what bit `p` of
/// row `i` was.
#[inline(always)]
pub fn transpose64(m: &mut [u64; 64]) {
    let mut j = 32usize;
    let mut mask = 0x0000_0000_FFFF_FFFFu64;
    while j != 0 {
        let mut k = 0usize;
        while k < 64 {
            let t = ((m[k] >> j) ^ m[k + j]) & mask;
            m[k] ^= t << j;
            m[k + j] ^= t;
            k = (k + j + 1) & !j;
        }
        j >>= 1;
        mask ^= mask << j;
    }
}

/// Builds one block's tables from up to 512 keys, generic over the inlined CPU level.
#[inline(always)]
pub fn build_block_generic(keys: &[u64], layout: &Layout, table: &mut [Lanes]) {
    let mut slices = [Lanes::ZERO; 64];
    let mut valid = Lanes::ZERO;
    for (lane, group) in keys.chunks(64).enumerate() {
        let mut m = [!0u64; 64];
        for (row, &key) in m.iter_mut().zip(group) {
            *row = !key;
        }
        transpose64(&mut m);
        for (slice, row) in slices.iter_mut().zip(m) {
            slice.0[lane] = row;
        }
        valid.0[lane] = if group.len() == 64 {
            !0
        } else {
            (1u64 << group.len()) - 1
        };
    }
    for j in 0..layout.chunks() {
        let chunk = &mut table[layout.offset[j]..][..layout.mask[j] as usize + 1];
        chunk[0] = if j == 0 { valid } else { Lanes::ONES };
        let first = layout.shift[j] as usize;
        for s in 1..chunk.len() {
            let low = s.trailing_zeros() as usize;
            let prev = chunk[s & (s - 1)];
            let slice = &slices[first + low];
            chunk[s] = Lanes(std::array::from_fn(|w| prev.0[w] & slice.0[w]));
        }
    }
}

/// Counts (key, query) pairs with disjoint bits against the blocks of `tables` (`per`
/// entries each), for the queries `range`, whose entries are byte offsets in `index`
/// (chunk-major, see [`Layout::index_generic`]); generic over the CPU level.
#[inline(always)]
pub fn count_blocks_generic(
    tables: &[Lanes],
    per: usize,
    index: &[u32],
    stride: usize,
    range: std::ops::Range<usize>,
) -> u64 {
    let chunks = index.len() / stride.max(1);
    let mut total = 0u64;
    for i in range {
        for block in tables.chunks_exact(per) {
            let entry = |j: usize| &block[index[j * stride + i] as usize / LANES_BYTES as usize].0;
            let mut acc = *entry(0);
            for j in 1..chunks {
                let t = entry(j);
                for w in 0..8 {
                    acc[w] &= t[w];
                }
            }
            total += acc.iter().map(|x| u64::from(x.count_ones())).sum::<u64>();
        }
    }
    total
}

/// Counts disjoint (key, query) pairs by direct comparison, generic over the CPU level.
#[inline(always)]
pub fn count_direct_generic(keys: &[u64], queries: &[u64]) -> u64 {
    let mut total = 0u64;
    for &q in queries {
        total += keys.iter().filter(|&&k| k & q == 0).count() as u64;
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small deterministic generator (xorshift), so the tests need no extra crate.
    fn random_keys(seed: u64, len: usize, bits: u32, density: u32) -> Vec<u64> {
        let mut x = seed | 1;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mask = if bits == 64 { !0 } else { (1u64 << bits) - 1 };
        (0..len)
            .map(|_| (0..density).fold(!0u64, |acc, _| acc & next()) & mask)
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
                let keys = random_keys(11 + i as u64, len, bits, 2);
                let q1 = random_keys(99 + i as u64, 77, bits, 2);
                let q2 = random_keys(5 + i as u64, 13, bits, 3);
                let mut sieve = Sieve::new();
                sieve.fill(&keys, &Layout::new(bits, 0, k), &[], level);
                assert!(sieve.len() >= keys.len());
                let mut counts = [0u64; 2];
                sieve.count_groups(&[&q1, &q2], &mut counts, level);
                let want = [naive(&keys, &q1), naive(&keys, &q2)];
                assert_eq!(counts, want, "{level:?} len {len} bits {bits} k {k}");
            }
        }
    }

    #[test]
    fn holes_widen_chunks_and_queries_with_hole_bits_still_count() {
        let holes = 1 << 4 | 1 << 20;
        let layout = Layout::new(34, holes, 5);
        // 32 usable bits in 7 chunks: 5, 5, 5, 5, 4, 4, 4 (+ the holes at 4 and 20).
        assert_eq!(layout.shift, vec![0, 6, 11, 16, 22, 26, 30]);
        assert_eq!(layout.chunks(), 7);
        assert_eq!(layout.mask.last(), Some(&0b1111));
        for level in simd::available_levels() {
            let keys: Vec<u64> = random_keys(21, 900, 34, 2)
                .into_iter()
                .map(|k| k & !holes)
                .collect();
            let queries = random_keys(22, 50, 34, 2);
            let mut sieve = Sieve::new();
            sieve.fill(&keys, &layout, &[], level);
            let mut counts = [0u64];
            sieve.count_groups(&[&queries], &mut counts, level);
            assert_eq!(counts[0], naive(&keys, &queries), "{level:?}");
        }
    }

    #[test]
    fn cut_buckets_count_the_same_pairs() {
        let cuts = [3u32, 7, 20];
        let holes = cuts.iter().fold(0u64, |m, &p| m | 1 << p);
        let layout = Layout::new(34, holes, 5);
        for level in simd::available_levels() {
            for len in [0, 40, 700, 3000] {
                let keys = random_keys(31 + len as u64, len, 34, 2);
                let q1 = random_keys(32, 90, 34, 2);
                let q2 = random_keys(33, 17, 34, 1);
                let mut sieve = Sieve::new();
                sieve.fill(&keys, &layout, &cuts, level);
                let mut counts = [0u64; 2];
                sieve.count_groups(&[&q1, &q2], &mut counts, level);
                let want = [naive(&keys, &q1), naive(&keys, &q2)];
                assert_eq!(counts, want, "{level:?} len {len}");
            }
        }
    }

    #[test]
    fn a_zero_query_counts_every_key_but_no_padding() {
        for level in simd::available_levels() {
            let keys = random_keys(3, 600, 30, 2);
            let mut sieve = Sieve::new();
            sieve.fill(&keys, &Layout::new(30, 0, 5), &[], level);
            let mut counts = [0u64];
            sieve.count_groups(&[&[0]], &mut counts, level);
            assert_eq!(counts[0], 600, "{level:?}");
        }
    }
}
