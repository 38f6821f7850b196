//! Building the trie: each node splits its keys on the bit that rules out the most pairs
//! there, and each leaf slices its keys into blocks.

use super::{keep_without, Node, Trie, FULL, LEAF_KEYS};
use crate::engine::mitm::kernels::{Lanes, Layout, LeafBits, BLOCK};
use crate::engine::mitm::matcher::MIN_PARTIAL;
use crate::engine::mitm::simd::{self, Level};

/// Keys sampled at a node to choose its split bit.
const KEY_SAMPLE: usize = 512;

impl Trie {
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
    pub(super) fn order_by_skip(
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
}
