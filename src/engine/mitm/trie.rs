//! The trie sieve of large tasks: stored keys split recursively on one key bit per node,
//! and queries routed down the trie.
//!
//! At a node splitting on key bit `p`, the child whose keys have `p` clashes with every query
//! that has `p`, so it receives only the queries without `p` (packed into a buffer of its own);
//! the other child receives them all. Each node splits on the bit that rules out the most pairs
//! *there*: among its own keys and the sampled queries that reach it (queries routed past a bit
//! have more of the others, since every half has the same number of queens). A node with few
//! enough keys is a leaf: its keys are sliced into one or two blocks, and it keeps the AND of
//! all its keys over every bit, so a query that has one of those bits is dropped before the
//! block count. Routing goes as deep as the keys split, where the ranked
//! [`super::matcher::Sieve`] stops at a fixed number of segment bits; each pair that reaches a
//! leaf is still tested on every key bit, so routing only decides what is skipped, never what
//! is counted.
//!
//! Where the CPU runs `pext` in hardware, a leaf slices its keys on its *mixed* bits only,
//! those some but not all of its keys have: a bit none has never clashes, and a query with a
//! bit all have is dropped before the count. A leaf deep in the trie has about a third fewer
//! mixed bits than the task has key bits (31–32 of 46 on N = 24's largest tasks), so its
//! blocks have fewer chunks, which is fewer loads per visited pair, and smaller tables. Keys
//! are packed onto the mixed bits (`pext`) before slicing; the block count itself skips the
//! queries with a common bit (a few percent of those that reach a leaf) and packs the others
//! as it reads them, so no pass over the queries precedes it. Elsewhere every leaf uses the
//! task's layout.
//!
//! A packed leaf of two blocks orders its keys so that all keys of its second block have
//! some bits (its skip mask): the queries with one of them (split off in one vector pass,
//! [`simd::split`]) count the first block alone, the others both blocks at once. One bit cut
//! the visits by a quarter at N = 24..28; adding bits while the second block's keys can
//! share them cut another 5%.
//!
//! The build is vectorised where it can be: a node's bit counts ([`simd::bit_counts`]) and
//! its partition ([`simd::partition`], stable) run at the CPU's level.

use super::kernels::{Lanes, Layout, LeafBits, Visits, BLOCK};
use super::matcher::{Buffers, MIN_PARTIAL};
use super::simd::{self, Level};

/// Most keys in a leaf: two blocks, counted together with each query's table offsets read
/// once.
pub(crate) const LEAF_KEYS: usize = 2 * BLOCK;

/// Keys sampled at a node to choose its split bit.
const KEY_SAMPLE: usize = 512;

/// One node of the trie.
#[derive(Debug, Clone)]
enum Node {
    /// Keys split on `bit`: `zero` (children without it) and `one` (with it), either absent
    /// where no key goes that way.
    Split {
        bit: u64,
        zero: Option<u32>,
        one: Option<u32>,
    },
    /// A leaf: its keys' AND and the bits its blocks are sliced on (see the module docs),
    /// and its keys as blocks or, if few, compared directly (`rest`, a range of
    /// [`Trie::rest`]).
    Leaf {
        bits: LeafBits,
        /// Its layout: an index of [`Trie::layouts`].
        layout: u8,
        /// Its first table entry, in [`Trie::tables`].
        first: u32,
        /// Its blocks (at most 2 unless no bit splits its keys).
        blocks: u32,
        /// Bits every key of the second of two blocks has (or 0): the queries with one of
        /// them count against the first block alone.
        skip: u64,
        rest: std::ops::Range<u32>,
    },
}

/// A set of stored keys in groups, ready to answer "how many are disjoint from this key" in
/// bulk (see the module docs).
#[derive(Debug, Default)]
pub(crate) struct Trie {
    /// The layout of a leaf of `m` mixed bits at index `m`, and the task's at [`FULL`].
    layouts: Vec<Layout>,
    /// Whether leaves pack their keys onto their mixed bits (see the module docs).
    packs: bool,
    nodes: Vec<Node>,
    /// Each group's root (absent for a group without keys).
    roots: Vec<Option<u32>>,
    tables: Vec<Lanes>,
    /// Table entries in use.
    entries: usize,
    blocks: usize,
    /// Scratch: one block's keys packed onto a leaf's mixed bits.
    packed: Vec<u64>,
    rest: Vec<u64>,
    /// Scratch: the keys being split, the routed queries, and a leaf's query offsets.
    split: Vec<u64>,
    /// Query buffers for routing, one per level of the deepest path and one for its leaf
    /// ([`ROUTE_LEVELS`]): a child with its node's bit reads the next one.
    routed: Vec<Vec<u64>>,
    index: Vec<u32>,
    /// The query sample while building (scratch).
    sample: Vec<u64>,
    /// Scratch for partitions: the keys with a node's bit.
    ones: Vec<u64>,
    /// Scratch: the sampled queries without a leaf's skip bits so far.
    open: Vec<u64>,
    /// Scratch: the next open queries, while `open` is read.
    reopen: Vec<u64>,
    /// What the sieve did (taken by the task's work counters).
    pub visits: Visits,
}

impl Trie {
    #[cfg(test)]
    /// An empty trie (reuse it with [`Trie::fill`] to keep its buffers).
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// Replaces the stored keys by `groups` of keys (each group the concatenation of its
    /// slices, each key ANDed with `mask`), read through `layout`, with splits chosen for
    /// the sample of queries `sample` (see [`Trie::build`]).
    pub(crate) fn fill(
        &mut self,
        groups: &[&[&[u64]]],
        mask: u64,
        layout: &Layout,
        sample: &[u64],
        level: Level,
    ) {
        if self.layouts.len() != usize::from(FULL) + 1 {
            self.layouts = (0..FULL).map(|m| Layout::packed(m.into())).collect();
            self.layouts.push(layout.clone());
        }
        if self.layouts[usize::from(FULL)] != *layout {
            self.layouts[usize::from(FULL)] = layout.clone();
        }
        self.packs = level.has_fast_pext();
        self.nodes.clear();
        self.roots.clear();
        self.rest.clear();
        self.blocks = 0;
        self.entries = 0;
        let mut split = std::mem::take(&mut self.split);
        for slices in groups {
            split.clear();
            split.extend(slices.iter().flat_map(|s| s.iter()).map(|&k| k & mask));
            let mut queries = std::mem::take(&mut self.sample);
            queries.clear();
            queries.extend_from_slice(sample);
            let root = self.build(&mut split, 0, &mut queries, level);
            self.sample = queries;
            self.roots.push(root);
        }
        self.split = split;
    }

    /// Builds the node of `keys` (reordered in place) for the sampled `queries` that reach
    /// it (reordered too); returns its index. It splits on the bit, not in `used`, that rules
    /// out the most pairs: (sampled keys with it) × (sampled queries with it).
    fn build(
        &mut self,
        keys: &mut [u64],
        used: u64,
        queries: &mut [u64],
        level: Level,
    ) -> Option<u32> {
        if keys.is_empty() {
            return None;
        }
        if keys.len() <= LEAF_KEYS {
            return Some(self.leaf(keys, queries, level));
        }
        let step = (keys.len() / KEY_SAMPLE).max(1);
        let counts = simd::bit_counts(level, keys, step, used);
        let weights = simd::bit_counts(level, queries, 1, used);
        let best = (0..64)
            .map(|p| (u64::from(counts[p]) * u64::from(weights[p]), p))
            .max()
            .filter(|&(score, _)| score > 0);
        let Some((_, p)) = best else {
            return Some(self.leaf(keys, queries, level));
        };
        let bit = 1u64 << p;
        // Keys without the bit to the front.
        let mid = simd::partition(level, keys, bit, &mut self.ones);
        let (zero_keys, one_keys) = keys.split_at_mut(mid);
        let without = simd::partition(level, queries, bit, &mut self.ones);
        let one = self.build(one_keys, used | bit, &mut queries[..without], level);
        let zero = self.build(zero_keys, used | bit, queries, level);
        Some(self.push(Node::Split { bit, zero, one }))
    }

    /// A leaf of `keys` (reordered in place), reached by the sampled `queries`: sliced into
    /// blocks, or kept for direct comparison if few. Two packed blocks are ordered so that
    /// the second one's keys share some bits (its `skip`) if they can
    /// ([`Trie::order_by_skip`]).
    fn leaf(&mut self, keys: &mut [u64], queries: &[u64], level: Level) -> u32 {
        let common = keys.iter().fold(!0u64, |acc, &k| acc & k);
        let any = keys.iter().fold(0u64, |acc, &k| acc | k);
        let (mixed, layout) = if self.packs {
            (any & !common, (any & !common).count_ones() as u8)
        } else {
            (!0, FULL)
        };
        let two = BLOCK < keys.len() && keys.len() <= LEAF_KEYS;
        let skip = if self.packs && two {
            self.order_by_skip(keys, queries, common, level)
        } else {
            0
        };
        let first_rest = self.rest.len() as u32;
        let first = self.entries as u32;
        let mut blocks = 0u32;
        if keys.len() < MIN_PARTIAL {
            self.rest.extend_from_slice(keys);
        } else {
            let per = self.layouts[usize::from(layout)].per_block;
            for block in keys.chunks(BLOCK) {
                let start = self.entries;
                // Every entry is written by `build_block`: grow only, never clear.
                if self.tables.len() < start + per {
                    self.tables.resize(start + per, Lanes::ZERO);
                }
                let block = if self.packs {
                    self.packed.clear();
                    self.packed.extend_from_slice(block);
                    simd::pack_bits(level, &mut self.packed, mixed);
                    &self.packed[..]
                } else {
                    block
                };
                let table = &mut self.tables[start..][..per];
                simd::build_block(level, block, &self.layouts[usize::from(layout)], table);
                self.entries += per;
                self.blocks += 1;
                blocks += 1;
                self.visits.built += 1;
            }
        }
        self.push(Node::Leaf {
            bits: LeafBits { mixed, common },
            layout,
            first,
            blocks,
            skip,
            rest: first_rest..self.rest.len() as u32,
        })
    }

    /// Orders the keys of a leaf of two blocks (`keys`, reached by the sampled `queries`)
    /// so that every key of the second block has the bits it returns (0: none). Bits are
    /// added one at a time, each the one most sampled queries without the bits so far have,
    /// among those that enough of the keys with the bits so far have to fill the second
    /// block; each is partitioned to the back of those keys. Bits every key has (`common`)
    /// are left out: the count drops their queries anyway.
    fn order_by_skip(
        &mut self,
        keys: &mut [u64],
        queries: &[u64],
        common: u64,
        level: Level,
    ) -> u64 {
        let need = (keys.len() - BLOCK) as u32;
        let mut open = std::mem::take(&mut self.open);
        let (mut mask, mut tail) = (0, keys);
        loop {
            let open_now = if mask == 0 { queries } else { &open[..] };
            let with = simd::bit_counts(level, tail, 1, mask | common);
            let weights = simd::bit_counts(level, open_now, 1, mask | common);
            let best = (0..64)
                .filter(|&p| with[p] >= need)
                .map(|p| (weights[p], p))
                .max()
                .filter(|&(w, _)| w > 0);
            let Some((_, p)) = best else {
                break;
            };
            let bit = 1 << p;
            let mid = simd::partition(level, tail, bit, &mut self.ones);
            tail = &mut tail[mid..];
            // The sampled queries without the bit become the open ones. Two small buffers
            // take turns: the partition's scratch, as large as a node's keys, stays apart.
            let mut next = std::mem::take(&mut self.reopen);
            keep_without(&mut next, open_now, bit, level);
            self.reopen = std::mem::replace(&mut open, next);
            mask |= bit;
        }
        self.open = open;
        mask
    }

    fn push(&mut self, node: Node) -> u32 {
        self.nodes.push(node);
        (self.nodes.len() - 1) as u32
    }

    /// Adds to `counts[g]` the number of (key of group g, query) pairs with disjoint bits.
    pub(crate) fn count(&mut self, queries: &[u64], counts: &mut [u64], level: Level) {
        let mut routed = std::mem::take(&mut self.routed);
        routed.resize_with(ROUTE_LEVELS, Vec::new);
        for (g, count) in counts.iter_mut().enumerate().take(self.roots.len()) {
            if let Some(root) = self.roots[g] {
                *count += self.visit(root, queries, &mut routed, level);
            }
        }
        self.routed = routed;
    }

    /// The disjoint pairs of node `node`'s keys with `queries`. The queries a child with
    /// the node's bit receives (those without it) are packed into the next of the
    /// `routed` buffers; the other child reads `queries` as they are.
    fn visit(&mut self, node: u32, queries: &[u64], routed: &mut [Vec<u64>], level: Level) -> u64 {
        if queries.is_empty() {
            return 0;
        }
        self.visits.routing += queries.len() as u64;
        let Some((next, deeper)) = routed.split_first_mut() else {
            unreachable!("a query buffer per level of the trie");
        };
        match self.nodes[node as usize].clone() {
            Node::Split { bit, zero, one } => {
                let mut total = 0;
                if let Some(one) = one {
                    keep_without(next, queries, bit, level);
                    total += if next.len() == queries.len() {
                        // Every query lacks the bit: they are `queries`, as they are.
                        self.visit(one, queries, routed, level)
                    } else {
                        self.visit(one, next, deeper, level)
                    };
                }
                if let Some(zero) = zero {
                    total += self.visit(zero, queries, routed, level);
                }
                total
            }
            Node::Leaf {
                bits,
                layout,
                first,
                blocks,
                skip,
                rest,
            } if self.packs && rest.is_empty() => {
                if skip == 0 {
                    return self.count_packed(queries, (bits, layout), first, blocks, level);
                }
                // The queries with `skip` meet the first block only.
                let mut with = std::mem::take(&mut self.ones);
                simd::split(level, queries, skip, next, &mut with);
                let total = self.count_packed(next, (bits, layout), first, 2, level)
                    + self.count_packed(&with, (bits, layout), first, 1, level);
                self.ones = with;
                total
            }
            Node::Leaf {
                bits,
                layout,
                first,
                blocks,
                rest,
                ..
            } => {
                // A packed leaf with keys left over has no blocks (see `leaf`).
                debug_assert!(!self.packs || blocks == 0);
                keep_without(next, queries, bits.common, level);
                let direct = self.count_rest(next, rest, level);
                direct + self.count_leaf(next, layout, first, blocks, level)
            }
        }
    }

    /// The disjoint pairs of a leaf's directly compared keys with `queries`.
    fn count_rest(&mut self, queries: &[u64], rest: std::ops::Range<u32>, level: Level) -> u64 {
        let rest = &self.rest[rest.start as usize..rest.end as usize];
        if rest.is_empty() || queries.is_empty() {
            return 0;
        }
        self.visits.direct += (rest.len() * queries.len()) as u64;
        simd::count_direct(level, rest, queries)
    }

    /// The disjoint pairs of a packed leaf's `blocks` (from table entry `first`, sliced
    /// through layout `layout` on `bits.mixed`) with `queries`, as they reach the leaf: the
    /// count skips those with a common bit and packs the others itself.
    fn count_packed(
        &mut self,
        queries: &[u64],
        (bits, layout): (LeafBits, u8),
        first: u32,
        blocks: u32,
        level: Level,
    ) -> u64 {
        if blocks == 0 {
            return 0;
        }
        let per = self.layouts[usize::from(layout)].per_block;
        if queries.is_empty() {
            return 0;
        }
        let tables = &self.tables[first as usize..][..blocks as usize * per];
        let (mut total, mut kept) = (0, 0);
        for pair in tables.chunks(2 * per) {
            let (pairs, counted) = simd::count_packed(level, pair, per, bits, queries);
            total += pairs;
            kept = counted;
        }
        // Only the queries without a common bit visit the blocks.
        self.visits.blocks += kept * u64::from(blocks);
        total
    }

    /// The disjoint pairs of an unpacked leaf's `blocks` (from table entry `first`, sliced
    /// through layout `layout`) with `queries`.
    fn count_leaf(
        &mut self,
        queries: &[u64],
        layout: u8,
        first: u32,
        blocks: u32,
        level: Level,
    ) -> u64 {
        if queries.is_empty() || blocks == 0 {
            return 0;
        }
        let layout = &self.layouts[usize::from(layout)];
        let tables = &self.tables[first as usize..][..blocks as usize * layout.per_block];
        self.visits.blocks += (queries.len() * blocks as usize) as u64;
        let stride = simd::index_all(level, layout, queries, &mut self.index);
        let index = &self.index[..stride * layout.chunks()];
        let mut total = 0;
        for pair in tables.chunks(2 * layout.per_block) {
            // SAFETY: `index_all` wrote byte offsets of entries below `per` for every chunk
            // of every query, and `pair` holds one or two whole blocks of this layout.
            total += unsafe {
                simd::count_blocks(
                    level,
                    pair,
                    layout.per_block,
                    index,
                    stride,
                    0..queries.len(),
                )
            };
        }
        total
    }

    /// The buffers that grow with the stored keys or the queries (block tables, keys being
    /// split, a leaf's query offsets).
    pub(crate) fn buffers(&mut self) -> Buffers<'_> {
        (&mut self.tables, &mut self.split, &mut self.index)
    }

    /// The number of stored keys (partial blocks count whole).
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.rest.len() + self.blocks * BLOCK
    }
}

/// The index of the task's own layout in [`Trie::layouts`] (after one per mixed-bit count).
const FULL: u8 = 65;

/// Routing buffers a trie needs: keys of at most 64 bits, and a path splits on each bit at
/// most once, so at most 64 levels and a leaf.
const ROUTE_LEVELS: usize = 65;

/// Replaces `out` by the queries without any of `bits`, packed in order by the half join's
/// vector loop (a north side of one empty word keeps exactly those).
fn keep_without(out: &mut Vec<u64>, queries: &[u64], bits: u64, level: Level) {
    out.clear();
    simd::join(level, &[0], queries, bits, 0, out);
}

#[cfg(test)]
mod tests {
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
}
