//! The key bits that rank a task's stored keys: those most often set on both sides.

use crate::engine::mitm::kernels::BLOCK;
use crate::engine::mitm::matcher::Rank;

/// Keys sampled per side to measure bit occupancy.
const OCCUPANCY_SAMPLE: usize = 256;

/// The rank for one task: the key bits most likely set on both sides, most likely first. A
/// bit set in a fraction `p` of stored keys and `q` of queries rules out a fraction `p·q` of
/// the pairs, so those bits share the most skipping.
pub(super) fn task_rank(stored: &[&[u64]], queries: &[&[u64]], cuts: u32, min_keys: usize) -> Rank {
    let total: usize = stored.iter().map(|g| g.len()).sum();
    let asked: usize = queries.iter().map(|g| g.len()).sum();
    if cuts == 0 || total < min_keys || asked == 0 {
        return Rank::default();
    }
    let mut key_bits = [0u32; 64];
    for g in stored {
        occupancy(g, OCCUPANCY_SAMPLE * g.len() / total + 1, &mut key_bits);
    }
    let mut query_bits = [0u32; 64];
    for g in queries {
        occupancy(g, OCCUPANCY_SAMPLE * g.len() / asked, &mut query_bits);
    }
    let mut score: Vec<(u64, u32)> = (0..64)
        .map(|p| (u64::from(key_bits[p]) * u64::from(query_bits[p]), p as u32))
        .filter(|&(s, _)| s > 0)
        .collect();
    score.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    // Blocks sorted by rank share about log2(blocks) leading bits; a few more refine the
    // order inside them.
    let blocks = total.div_ceil(BLOCK);
    let bits = (blocks.ilog2() + 3).min(cuts);
    let positions: Vec<u32> = score.iter().take(bits as usize).map(|&(_, p)| p).collect();
    Rank::new(&positions)
}

/// Adds to `counts[p]` how many of about `sample` evenly spaced keys have bit `p`.
fn occupancy(keys: &[u64], sample: usize, counts: &mut [u32; 64]) {
    let step = (keys.len() / sample.max(1)).max(1);
    for &k in keys.iter().step_by(step) {
        let mut bits = k;
        while bits != 0 {
            counts[bits.trailing_zeros() as usize] += 1;
            bits &= bits - 1;
        }
    }
}
