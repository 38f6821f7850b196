//! Counting against the trie: queries routed down its nodes, and counted against the
//! blocks of the leaves they reach.

use super::{keep_without, Node, Trie, ROUTE_LEVELS};
use crate::engine::mitm::kernels::LeafBits;
use crate::engine::mitm::simd::{self, Level};

impl Trie {
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
}
