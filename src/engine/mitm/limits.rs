//! How much of a task is held at once: the sizes that bound a task's sieve fills, query
//! portions and pieces.
//!
//! A leaf module, below both the join that fills sieves within these bounds and the pieces
//! and tasks that cut work to fit them.

use super::kernels::BLOCK;

/// The most memory one worker holds while it solves tasks of N = `n` (see
/// [`Plan::worker_bytes`](crate::Plan::worker_bytes)). From the peak per thread `estimate N
/// -j2` measured (Zen 4, avx512): 17, 32 and 24 MB at N = 19, 20 and 21, 68–94 MB at
/// N = 22–23, 138–183 MB at N = 24–25, 177–184 MB at N = 26 and 197–395 MB at N = 28, with
/// room for a long run's thread, which held up to 1.25 times its sample's peak at N = 28.
/// Most of it is the sieve of up to [`Limits::stored`] keys and the [`Limits::queries`]
/// portion.
pub(crate) fn worker_bytes(n: u32) -> u64 {
    const MB: u64 = 1 << 20;
    MB * match n {
        ..=17 => 16,
        18..=19 => 32,
        20..=21 => 64,
        22..=23 => 160,
        24..=25 => 256,
        26..=27 => 320,
        _ => 512,
    }
}

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
    /// Whether a task whose west side fits one fill and is the smaller side stores its east
    /// side instead (see `Keys::join_swapped`).
    pub swap: bool,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            // Measured on the middle task of N = 26 and task 0 of N = 28 (Zen 4, avx512,
            // leaves packed onto their mixed bits): fills of 2^20 visit 15–18% fewer blocks
            // than fills of 2^19 and match 15–25% faster; 2^21 saves 6% more visits for 10%
            // more memory. Packed leaves' tables take less memory than the unpacked ones of
            // 2^19, so a worker peaks lower than before (138–149 MB on N = 28's task 0).
            stored: 1 << 20,
            queries: 1 << 19,
            // Measured on sampled tasks: below about 128 blocks of west keys, the bucket
            // sieve of the smaller side is as fast or faster (N ≤ 21 never gets there).
            min_ranked: 128 * BLOCK,
            // Packed leaves made the trie's visits cheaper: from 2^16 keys it matches the
            // tasks of N = 24 that fell to the ranked sieve 9–18% faster (Zen 4, avx512);
            // the ranked sieve keeps the smaller fills.
            trie_min: 1 << 16,
            // As `stored`: one piece fills one sieve.
            piece: 1 << 20,
            swap: true,
        }
    }
}
