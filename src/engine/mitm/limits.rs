//! How much of a task is held at once: the sizes that bound a task's sieve fills, query
//! portions and pieces.
//!
//! A leaf module, below both the join that fills sieves within these bounds and the pieces
//! and tasks that cut work to fit them.

use super::kernels::BLOCK;

/// How much of a task is held at once, and when ranking pays.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Limits {
    /// Most west keys in one sieve fill (about 50 bytes each, with the sorting scratch); a
    /// task expected to have more is split into pieces.
    pub stored: usize,
    /// Most east keys queried at once (about 50 bytes each, with their table offsets).
    pub queries: usize,
    /// West keys below which a task stores its east keys instead (all keys at hand).
    pub min_ranked: usize,
    /// Stored keys (in one sieve fill) from which the trie sieve replaces the ranked one.
    pub trie_min: usize,
    /// Stored keys per piece aimed at when a task too large for one fill is split on hot
    /// bits ([`super::piece`]).
    pub piece: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            stored: 1 << 19,
            queries: 1 << 19,
            // Measured on sampled tasks: below about 128 blocks of west keys, the bucket
            // sieve of the smaller side is as fast or faster (N ≤ 21 never gets there).
            min_ranked: 128 * BLOCK,
            // Measured on sampled tasks (Zen 3, avx2): the trie visits 20–38% fewer blocks
            // than the ranked sieve at N = 22..24, but its routing, per-leaf query offsets
            // and adaptive build cost about what that saves on small fills (N = 22 level
            // from 2^18 keys on); it is kept to the largest fills.
            trie_min: 1 << 18,
            // Measured at N = 24 (Zen 3, avx2, 24 sampled tasks): pieces and fills of 2^19
            // match as fast as fills of 2^20 and peak 15% lower; pieces of 2^18 visit 40%
            // more blocks.
            piece: 1 << 19,
        }
    }
}
