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

mod build;
mod count;

use super::kernels::{Lanes, Layout, LeafBits, Visits, BLOCK};
use super::matcher::Buffers;
use super::simd::{self, Level};

/// Most keys in a leaf: two blocks, counted together with each query's table offsets read
/// once.
pub(crate) const LEAF_KEYS: usize = 2 * BLOCK;

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
mod tests;
