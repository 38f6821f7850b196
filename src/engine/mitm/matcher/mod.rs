//! Counting disjoint key pairs in bulk: the bit-sliced matcher.
//!
//! Stored keys are cut into blocks of 512. For each key bit `p` a block holds the 512-bit
//! set `S_p` of its keys *without* bit `p`; bit positions are grouped in chunks of `k`, and
//! for every subset `σ` of a chunk the block stores `AND_{p ∈ σ} S_p`. A query `q` then reads
//! one entry per chunk, ANDs them and counts the ones: the number of keys disjoint from `q`,
//! 512 pairs in a handful of word operations. Queries run block by block, all queries against
//! one L1-resident block before the next, not each query through every block.
//! A short remainder of keys is compared directly.
//!
//! The [`Sieve`] sorts its keys by a per-task [`Rank`] of a few cut bits, so that each block's
//! keys share leading bits and skip, as a whole, the queries that have one of them.
//!
//! The inner loops are written once and compiled per CPU level (see [`Level`]); AVX-512 with
//! VPOPCNTQ, AVX2 + POPCNT, POPCNT alone, and a portable fallback give identical results.

use super::kernels::{Lanes, Layout, Visits, BLOCK};
use super::simd::{self, Level};

/// A partial final block is padded and sliced only if it holds at least this many keys;
/// fewer are compared one by one.
pub(crate) const MIN_PARTIAL: usize = 48;

/// Leading rank bits that blocks try not to straddle, beyond log2(blocks).
const PREFIX_EXTRA: u32 = 1;

/// Most cut bits a [`Rank`] reads.
pub(crate) const MAX_CUTS: usize = 24;

/// Ranks keys by a few chosen bits ("cut bits"), most important first.
///
/// Bit `T − 1 − i` of a key's rank is key bit `positions[i]`. Keys sorted by rank form blocks
/// whose keys share their leading cut bits; a query that has one of a block's shared bits
/// clashes with every key of it, so the block is skipped for that query. The rank is read
/// through one lookup table per key byte, the same on every CPU.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Rank {
    bits: u32,
    tables: Vec<[u32; 256]>,
}

impl Rank {
    /// A rank over `positions` (most significant first; at most [`MAX_CUTS`], each < 64).
    pub(crate) fn new(positions: &[u32]) -> Self {
        assert!(positions.len() <= MAX_CUTS, "at most {MAX_CUTS} cut bits");
        let bytes = positions
            .iter()
            .map(|&p| p as usize / 8 + 1)
            .max()
            .unwrap_or(0);
        let mut tables = vec![[0u32; 256]; bytes];
        let bits = positions.len() as u32;
        for (i, &p) in positions.iter().enumerate() {
            let (byte, bit) = (p as usize / 8, p % 8);
            for (v, slot) in tables[byte].iter_mut().enumerate() {
                if v >> bit & 1 == 1 {
                    *slot |= 1 << (bits - 1 - i as u32);
                }
            }
        }
        Rank { bits, tables }
    }

    /// The number of cut bits.
    pub(crate) fn bits(&self) -> u32 {
        self.bits
    }

    /// The rank of `key`.
    #[inline(always)]
    pub(crate) fn of(&self, key: u64) -> u32 {
        let mut r = 0;
        for (b, table) in self.tables.iter().enumerate() {
            r |= table[(key >> (8 * b)) as usize & 255];
        }
        r
    }
}

/// Sorts keys by a [`Rank`] (counting sorts), keeping the sorted keys' ranks; its buffers
/// are reused from sort to sort.
#[derive(Debug, Default)]
pub(crate) struct Sorter {
    ranks: Vec<u32>,
    spare: Vec<u64>,
    spare_ranks: Vec<u32>,
}

impl Sorter {
    /// Sorts `keys` by `rank`, stably, keeping their ranks (see [`Sorter::ranks`]): one counting sort for up to
    /// 12 rank bits, else two (least significant half first).
    pub(crate) fn sort(&mut self, rank: &Rank, keys: &mut Vec<u64>) {
        let bits = rank.bits();
        self.ranks.clear();
        if bits == 0 {
            return;
        }
        self.ranks.extend(keys.iter().map(|&k| rank.of(k)));
        if bits <= 12 {
            self.scatter(keys, 0, bits);
        } else {
            self.scatter(keys, 0, bits / 2);
            self.scatter(keys, bits / 2, bits - bits / 2);
        }
    }

    /// One stable counting-sort pass of `keys` (and `self.ranks`) by rank bits
    /// `shift..shift + bits`.
    fn scatter(&mut self, keys: &mut Vec<u64>, shift: u32, bits: u32) {
        let len = keys.len();
        let mask = (1u32 << bits) - 1;
        self.spare.resize(len, 0);
        self.spare_ranks.resize(len, 0);
        let mut next = vec![0usize; (1 << bits) + 1];
        for &r in &self.ranks {
            next[(r >> shift & mask) as usize + 1] += 1;
        }
        for i in 1..next.len() {
            next[i] += next[i - 1];
        }
        for (&k, &r) in keys.iter().zip(&self.ranks) {
            let slot = &mut next[(r >> shift & mask) as usize];
            self.spare[*slot] = k;
            self.spare_ranks[*slot] = r;
            *slot += 1;
        }
        std::mem::swap(keys, &mut self.spare);
        std::mem::swap(&mut self.ranks, &mut self.spare_ranks);
    }

    /// The ranks of the keys last sorted, in their sorted order (empty for a rank of no
    /// bits).
    pub(crate) fn ranks(&self) -> &[u32] {
        &self.ranks
    }
}

/// A sieve's large buffers: block tables, keys, the queries' table offsets.
pub(crate) type Buffers<'a> = (&'a mut Vec<Lanes>, &'a mut Vec<u64>, &'a mut Vec<u32>);

/// A set of stored keys, ready to answer "how many are disjoint from this key" in bulk.
///
/// Keys come in groups (the symmetry classes of a task, counted separately). Each group's
/// keys are sorted by their [`Rank`] and cut into blocks; each block remembers the rank bits
/// all its keys share. Queries are put into segments by their leading rank bits, and a block
/// only meets the segments disjoint from its shared bits (the bucket sieve's idea, without padding
/// buckets to whole blocks). Every pair that is met is still tested on every key bit, so the
/// ranking only decides what is skipped, never what is counted.
#[derive(Debug, Default)]
pub(crate) struct Sieve {
    layout: Layout,
    rank: Rank,
    tables: Vec<Lanes>,
    /// Per block, the AND of its keys' ranks.
    common: Vec<u32>,
    /// Per group, its blocks (indices into `common`) and its keys compared directly.
    groups: Vec<(std::ops::Range<usize>, std::ops::Range<usize>)>,
    /// Keys compared directly (groups too small to slice).
    rest: Vec<u64>,
    /// Scratch: keys while sorting, then queries by segment.
    sorted: Vec<u64>,
    sorter: Sorter,
    /// Per query and chunk, its table entry's byte offset (scratch for [`Sieve::count`]).
    index: Vec<u32>,
    /// Rank bits below the prefix that blocks try not to straddle.
    prefix_shift: u32,
    /// What the sieve did (taken by the task's work counters).
    pub visits: Visits,
}

impl Sieve {
    #[cfg(test)]
    /// An empty sieve (reuse it with [`Sieve::fill`] to keep its buffers).
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// Replaces the stored keys by `groups` of keys (each group the concatenation of its
    /// slices, each key ANDed with `mask`), read through `layout` and ranked by `rank`.
    pub(crate) fn fill(
        &mut self,
        groups: &[&[&[u64]]],
        mask: u64,
        layout: &Layout,
        rank: &Rank,
        level: Level,
    ) {
        if self.layout != *layout {
            self.layout = layout.clone();
        }
        if self.rank != *rank {
            self.rank = rank.clone();
        }
        self.common.clear();
        self.rest.clear();
        self.groups.clear();
        let total: usize = groups.iter().flat_map(|g| g.iter()).map(|s| s.len()).sum();
        let depth = (total / BLOCK).max(1).ilog2() + PREFIX_EXTRA;
        self.prefix_shift = rank.bits().saturating_sub(depth);
        for slices in groups {
            let (first, rest) = (self.common.len(), self.rest.len());
            let len: usize = slices.iter().map(|s| s.len()).sum();
            let keys = slices.iter().flat_map(|s| s.iter()).map(|&k| k & mask);
            if len < MIN_PARTIAL {
                self.rest.extend(keys);
            } else if let (&[only], 0, u64::MAX) = (*slices, rank.bits(), mask) {
                // Nothing to mask or sort: slice the keys where they are.
                self.add_blocks(only, level);
            } else {
                let mut sorted = std::mem::take(&mut self.sorted);
                sorted.clear();
                sorted.extend(keys);
                self.sorter.sort(&self.rank, &mut sorted);
                self.add_blocks(&sorted, level);
                self.sorted = sorted;
            }
            self.groups
                .push((first..self.common.len(), rest..self.rest.len()));
        }
    }

    /// Slices `sorted` (keys sorted by rank, with their ranks in `self.ranks` if the rank
    /// has bits) into blocks, the last one padded.
    fn add_blocks(&mut self, sorted: &[u64], level: Level) {
        let len = sorted.len();
        let per = self.layout.per_block;
        let mut start = 0;
        while start < len {
            let end = self.block_end(start, len);
            let b = self.common.len();
            self.visits.built += 1;
            // Every entry is written by `build_block`: grow only, never clear.
            if self.tables.len() < (b + 1) * per {
                self.tables.resize((b + 1) * per, Lanes::ZERO);
            }
            let keys = &sorted[start..end];
            simd::build_block(
                level,
                keys,
                &self.layout,
                &mut self.tables[b * per..][..per],
            );
            // The rank only gathers bits, so the rank of the AND is the AND of the ranks.
            self.common
                .push(self.rank.of(keys.iter().fold(!0u64, |acc, &k| acc & k)));
            start = end;
        }
    }

    /// Where the block starting at sorted key `start` ends: after [`BLOCK`] keys, or earlier
    /// where the leading rank bits above `prefix_shift` change, if the block is at least half
    /// full by then (a padded block whose keys share more bits skips more queries).
    fn block_end(&self, start: usize, len: usize) -> usize {
        let end = (start + BLOCK).min(len);
        if self.rank.bits() == 0 {
            return end;
        }
        let ranks = self.sorter.ranks();
        let prefix = |i: usize| ranks[i] >> self.prefix_shift;
        if end == len || prefix(end - 1) == prefix(start) {
            return end;
        }
        let p = prefix(start);
        let cut = start + ranks[start..end].partition_point(|&r| r >> self.prefix_shift == p);
        if cut - start >= BLOCK / 2 {
            cut
        } else {
            end
        }
    }

    /// The buffers that grow with the stored keys or the queries (block tables, sorted
    /// keys, the queries' table offsets), for [`super::trie::Trie`] to take over when it
    /// fills instead.
    pub(crate) fn buffers(&mut self) -> Buffers<'_> {
        (&mut self.tables, &mut self.sorted, &mut self.index)
    }

    /// The number of stored keys (a partial last block counts whole).
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.rest.len() + self.common.len() * BLOCK
    }

    /// Adds to `counts[g]` the number of (key of group g, query) pairs with disjoint bits.
    pub(crate) fn count(&mut self, queries: &[u64], counts: &mut [u64], level: Level) {
        for ((_, rest), count) in self.groups.iter().zip(counts.iter_mut()) {
            if !rest.is_empty() {
                *count += simd::count_direct(level, &self.rest[rest.clone()], queries);
                self.visits.direct += (rest.len() * queries.len()) as u64;
            }
        }
        if self.common.is_empty() || queries.is_empty() {
            return;
        }
        // The segments follow all the queries, so the portions visit what one pass would.
        let seg_bits = segment_bits(queries.len(), self.rank.bits());
        for portion in queries.chunks(QUERY_PORTION) {
            self.count_portion(portion, seg_bits, counts, level);
        }
    }

    /// Counts one portion of the queries against every block, in segments of their leading
    /// `seg_bits` rank bits.
    fn count_portion(&mut self, queries: &[u64], seg_bits: u32, counts: &mut [u64], level: Level) {
        let shift = self.rank.bits() - seg_bits;
        // Segment y holds the queries whose leading rank bits are y, at
        // sorted[seg[y]..seg[y + 1]] (one segment, the queries as given, if unranked).
        let mut seg = vec![0usize];
        let stride = if seg_bits == 0 {
            seg.push(queries.len());
            self.index_queries(queries, level)
        } else {
            let mut sorted = std::mem::take(&mut self.sorted);
            sorted.clear();
            self.sort_segments(queries, shift, seg_bits, &mut sorted, &mut seg);
            let stride = self.index_queries(&sorted, level);
            self.sorted = sorted;
            stride
        };
        let all = (1u32 << seg_bits) - 1;
        // Unranked blocks skip nothing: two at a time share each query's table offsets.
        let step = if self.rank.bits() == 0 { 2 } else { 1 };
        let mut visited = 0;
        for (g, (blocks, _)) in self.groups.iter().enumerate() {
            for first in blocks.clone().step_by(step) {
                let pair = first..(first + step).min(blocks.end);
                let shared = self.common[pair.clone()].iter().fold(!0u32, |a, &c| a & c);
                let free = all & !(shared >> shift);
                let (count, pairs) = self.count_pair(pair, free, &seg, stride, level);
                counts[g] += count;
                visited += pairs;
            }
        }
        self.visits.blocks += visited;
    }

    /// Counts the pairs of one or two blocks with the query segments `y ⊆ free`; also
    /// returns the (query, block) pairs it visited.
    fn count_pair(
        &self,
        pair: std::ops::Range<usize>,
        free: u32,
        seg: &[usize],
        stride: usize,
        level: Level,
    ) -> (u64, u64) {
        let per = self.layout.per_block;
        let tables = &self.tables[pair.start * per..pair.end * per];
        let index = &self.index[..stride * self.layout.chunks()];
        let (mut total, mut visited) = (0, 0);
        // Every y ⊆ free, in increasing order.
        let mut y = 0u32;
        loop {
            let range = seg[y as usize]..seg[y as usize + 1];
            if !range.is_empty() {
                visited += range.len() * pair.len();
                // SAFETY: `index_queries` wrote byte offsets of entries below `per` for every
                // chunk, and `tables` holds one or two whole blocks.
                total += unsafe { simd::count_blocks(level, tables, per, index, stride, range) };
            }
            if y == free {
                return (total, visited as u64);
            }
            y = y.wrapping_sub(free) & free;
        }
    }

    /// Appends `queries` to `out` sorted by their leading `bits` rank bits (counting sort);
    /// pushes each value's end position to `seg`.
    fn sort_segments(
        &self,
        queries: &[u64],
        shift: u32,
        bits: u32,
        out: &mut Vec<u64>,
        seg: &mut Vec<usize>,
    ) {
        let base = out.len();
        let first = seg.len();
        seg.resize(first + (1 << bits), 0);
        let next = &mut seg[first..];
        let value = |q: u64| (self.rank.of(q) >> shift) as usize;
        for &q in queries {
            next[value(q)] += 1;
        }
        let mut acc = base;
        for slot in next.iter_mut() {
            (acc, *slot) = (acc + *slot, acc);
        }
        out.resize(base + queries.len(), 0);
        for &q in queries {
            let slot = &mut next[value(q)];
            out[*slot] = q;
            *slot += 1;
        }
    }

    /// Writes every query's chunk entries to `self.index` (chunk-major); returns the stride.
    fn index_queries(&mut self, queries: &[u64], level: Level) -> usize {
        simd::index_all(level, &self.layout, queries, &mut self.index)
    }
}

/// How many leading rank bits split the queries into segments: enough for the blocks to skip
/// most clashing queries, few enough that segments stay long (about 64 queries or more).
fn segment_bits(queries: usize, rank_bits: u32) -> u32 {
    let fit = (queries / 64).max(1).ilog2();
    fit.min(rank_bits).min(MAX_SEGMENT_BITS)
}

/// Most rank bits used for query segments.
const MAX_SEGMENT_BITS: u32 = 12;

/// Most queries indexed at once: the index takes 4 bytes per query and chunk, and a thread
/// keeps it at its largest, so a task with many queries would otherwise hold tens of
/// megabytes through the trie fills that follow. The blocks of a ranked sieve (under 2^16
/// keys) are read again per portion from the cache, at a cost lost in 2^16 queries' visits.
/// Tests take several portions.
const QUERY_PORTION: usize = if cfg!(test) { 1 << 8 } else { 1 << 16 };

#[cfg(test)]
mod tests;
