//! How many top levels of a batch's trees to build one by one (a dependent step each), and
//! which of them split their large nodes across workgroups (three more a level,
//! [`WIDE_STEPS`](crate::gpu::slot::WIDE_STEPS)). The host knows a batch's largest fill only
//! as estimated, so it learns, level by level, how large the largest node the GPU built
//! there was against that estimate, and records the levels and wide steps those nodes need.
//!
//! Nothing depends on the guess for exactness: a node past `wide_keys` at a level recorded
//! without the wide steps is partitioned by its own workgroup, as every node once was, and a
//! node past `SUBTREE_KEYS` after the last top level is built by its subtree's workgroup (a
//! longer step either way, the same tree).

use crate::gpu::layout::{SUBTREE_KEYS, TOP_LEVELS};

/// How much of a learned ratio a batch forgets when its own largest node was smaller: the
/// ratios follow the largest of about the last 32 batches.
const KEEP: f64 = 1.0 - 1.0 / 32.0;

/// Per top level, the most keys of one node against the batch's estimated largest fill.
#[derive(Debug, Clone)]
pub(super) struct Levels {
    ratio: [f64; TOP_LEVELS as usize],
    learned: [bool; TOP_LEVELS as usize],
}

impl Default for Levels {
    /// Before any batch: the root as large as the estimate, and every later level's
    /// largest node three quarters of the one before (splits as uneven as a quarter to
    /// three quarters).
    fn default() -> Self {
        Levels {
            ratio: std::array::from_fn(|d| 0.75f64.powi(d.saturating_sub(1) as i32)),
            learned: [false; TOP_LEVELS as usize],
        }
    }
}

impl Levels {
    /// The top levels to build one by one in a batch whose largest fill is estimated at
    /// `largest` keys, of the `most` its estimate alone allows: up to the first level whose
    /// nodes all held at most `SUBTREE_KEYS` keys (so are subtrees), that level included,
    /// so that it goes on being measured and its splits halve what a larger node brings.
    pub(super) fn top(&self, largest: u64, most: u32) -> u32 {
        let small = |d: usize| largest as f64 * self.ratio[d] <= f64::from(SUBTREE_KEYS);
        (1..most.min(TOP_LEVELS) as usize)
            .find(|&d| self.learned[d] && small(d))
            .map_or(most, |d| d as u32 + 1)
    }

    /// The top levels, from the roots, that may hold a node of more than `wide_keys` keys in
    /// a batch whose largest fill is estimated at `largest` keys, of its `top` levels built
    /// one by one.
    pub(super) fn wide(&self, largest: u64, wide_keys: u32, top: u32) -> u32 {
        self.ratio[..top.min(TOP_LEVELS) as usize]
            .iter()
            .take_while(|&&r| largest as f64 * r > f64::from(wide_keys))
            .count() as u32
    }

    /// Learns from a batch whose largest fill was estimated at `largest` keys, by
    /// estimates already learned, and whose levels below `top` held nodes of at most
    /// `peaks[d]` keys: a larger ratio at once, a smaller one slowly.
    pub(super) fn learn(&mut self, largest: u64, top: u32, peaks: &[u64]) {
        if largest == 0 {
            return;
        }
        let levels = self.ratio.iter_mut().zip(&mut self.learned).zip(peaks);
        for ((ratio, learned), &peak) in levels.take(top as usize) {
            let seen = peak as f64 / largest as f64;
            *ratio = if *learned {
                seen.max(*ratio * KEEP)
            } else {
                seen
            };
            *learned = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::slot::top_levels;

    /// The levels the estimate alone allowed, before anything was learned.
    fn unlearned(largest: u64, wide_keys: u32) -> u32 {
        if largest <= u64::from(wide_keys) {
            return 0;
        }
        let shrinks = (largest as f64 / f64::from(wide_keys)).log2() / (4.0f64 / 3.0).log2();
        (1 + shrinks.ceil() as u32).min(top_levels(largest))
    }

    #[test]
    fn before_any_batch_every_level_a_quarter_to_three_quarters_split_may_need() {
        let w = Levels::default();
        for largest in [1u64 << 16, 1 << 17, 200_000, 1 << 20, 3_000_000, 1 << 26] {
            let top = top_levels(largest);
            assert_eq!(
                w.wide(largest, 1 << 17, top),
                unlearned(largest, 1 << 17),
                "{largest}"
            );
        }
    }

    #[test]
    fn levels_whose_nodes_stayed_small_lose_their_wide_steps() {
        let mut w = Levels::default();
        let (largest, wide) = (1u64 << 20, 1u32 << 17);
        let top = top_levels(largest);
        assert!(w.wide(largest, wide, top) >= 5);
        // The fills came out at a third of the estimate, their roots split two to one.
        let peaks: Vec<u64> = (0..top).map(|d| (largest / 3) >> d).collect();
        w.learn(largest, top, &peaks);
        // 349,525 and 174,762 keys pass 2^17; 87,381 does not.
        assert_eq!(w.wide(largest, wide, top), 2);
        // A fill past the estimate raises its levels at once.
        let mut larger = peaks.clone();
        larger[2] = largest / 2;
        w.learn(largest, top, &larger);
        assert_eq!(w.wide(largest, wide, top), 3);
        // Smaller batches after it lower them slowly, not at once.
        w.learn(largest, top, &peaks);
        assert_eq!(w.wide(largest, wide, top), 3);
        for _ in 0..200 {
            w.learn(largest, top, &peaks);
        }
        assert_eq!(w.wide(largest, wide, top), 2);
    }

    #[test]
    fn top_levels_end_one_past_the_first_level_of_subtrees() {
        let mut w = Levels::default();
        let largest = 1u64 << 20;
        let most = top_levels(largest);
        assert_eq!(w.top(largest, most), most);
        // Halved at each level from a third of the estimate: level 5 holds 10,922 keys at
        // most, so its nodes are all subtrees.
        let peaks: Vec<u64> = (0..most).map(|d| (largest / 3) >> d).collect();
        w.learn(largest, most, &peaks);
        assert_eq!(w.top(largest, most), 6);
        // Never more than the estimate allows; at least the roots.
        assert_eq!(w.top(largest, 4), 4);
        assert_eq!(w.top(1000, most), 2);
        // A larger node at level 5 brings its level back.
        let mut larger = peaks.clone();
        larger[5] = 1 << 15;
        w.learn(largest, 6, &larger);
        assert_eq!(w.top(largest, most), 7);
    }

    #[test]
    fn levels_no_batch_built_keep_what_they_had() {
        let mut w = Levels::default();
        w.learn(1 << 20, 1, &[1 << 20, 1 << 16]);
        // Level 1 was not built one by one: it keeps its prior.
        assert_eq!(w.wide(1 << 20, 1 << 17, 8), 8);
        w.learn(1 << 20, 2, &[1 << 20, 1 << 16]);
        assert_eq!(w.wide(1 << 20, 1 << 17, 8), 1);
        // An empty batch teaches nothing.
        w.learn(0, 8, &[0; 8]);
        assert_eq!(w.wide(1 << 20, 1 << 17, 8), 1);
    }
}
