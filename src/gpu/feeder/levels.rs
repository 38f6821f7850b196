//! How many top levels of a batch's trees to build one by one (a dependent step each), and
//! which of them split their large nodes across workgroups (two more a level,
//! [`WIDE_STEPS`](crate::gpu::slot::WIDE_STEPS)). The host cannot know a batch's nodes
//! before the GPU builds them, and its estimate of a batch's largest fill is rough (learned
//! ratios of keys to pairs, with a margin), so it keeps, level by level, the largest node the
//! GPU built there in the last batches, and records the levels and wide steps those nodes
//! needed; the estimate only bounds the levels, and sizes those no batch has built yet.
//! (Scaling the learned sizes by each batch's estimate instead, the estimate's error made
//! the host record a third more wide levels than the nodes needed at N = 22.)
//!
//! Nothing depends on the guess for exactness: a node past `wide_keys` at a level recorded
//! without the wide steps is partitioned by its own workgroup, as every node once was, and a
//! node past `SUBTREE_KEYS` after the last top level is built by its subtree's workgroup (a
//! longer step either way, the same tree).

use crate::gpu::layout::{SUBTREE_KEYS, TOP_LEVELS};

/// How much of a level's largest node a batch forgets when its own was smaller: the levels
/// follow the largest of about the last 32 batches.
const KEEP: f64 = 1.0 - 1.0 / 32.0;

/// Per top level, the most keys of one node of the last batches, where one was built.
#[derive(Debug, Clone, Default)]
pub(super) struct Levels {
    peak: [Option<f64>; TOP_LEVELS as usize],
}

impl Levels {
    /// Whether a batch has taught it anything yet.
    pub(super) fn learned(&self) -> bool {
        self.peak[0].is_some()
    }

    /// The top levels to build one by one, of the `most` a batch's estimate allows: up to
    /// the first level whose nodes all held at most `SUBTREE_KEYS` keys (so are subtrees),
    /// that level included, so that it goes on being measured and its splits halve what a
    /// larger node brings.
    pub(super) fn top(&self, most: u32) -> u32 {
        let small = |d: usize| self.peak[d].is_some_and(|k| k <= f64::from(SUBTREE_KEYS));
        (1..most.min(TOP_LEVELS) as usize)
            .find(|&d| small(d))
            .map_or(most, |d| d as u32 + 1)
    }

    /// The top levels, from the roots, that may hold a node of more than `wide_keys` keys,
    /// of the `top` built one by one, in a batch whose largest fill is estimated at `largest`
    /// keys: by the last batches' nodes, or where no batch built the level, by splits as
    /// uneven as a quarter to three quarters below a root as large as the estimate.
    pub(super) fn wide(&self, largest: u64, wide_keys: u32, top: u32) -> u32 {
        let prior = |d: usize| largest as f64 * 0.75f64.powi(d.saturating_sub(1) as i32);
        (0..top.min(TOP_LEVELS) as usize)
            .take_while(|&d| self.peak[d].unwrap_or_else(|| prior(d)) > f64::from(wide_keys))
            .count() as u32
    }

    /// Learns from a batch whose `top` levels held nodes of at most `peaks[d]` keys: a
    /// larger node at once, a smaller one slowly.
    pub(super) fn learn(&mut self, top: u32, peaks: &[u64]) {
        for (peak, &seen) in self.peak.iter_mut().zip(peaks).take(top as usize) {
            let seen = seen as f64;
            *peak = Some(peak.map_or(seen, |p| seen.max(p * KEEP)));
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
        assert!(!w.learned());
        for largest in [1u64 << 16, 1 << 17, 200_000, 1 << 20, 3_000_000, 1 << 26] {
            let top = top_levels(largest);
            assert_eq!(w.top(top), top);
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
        w.learn(top, &peaks);
        assert!(w.learned());
        // 349,525 and 174,762 keys pass 2^17; 87,381 does not; whatever the estimate.
        assert_eq!(w.wide(largest, wide, top), 2);
        assert_eq!(w.wide(largest / 8, wide, top), 2);
        // A larger node raises its levels at once.
        let mut larger = peaks.clone();
        larger[2] = largest / 2;
        w.learn(top, &larger);
        assert_eq!(w.wide(largest, wide, top), 3);
        // Smaller batches after it lower them slowly, not at once.
        w.learn(top, &peaks);
        assert_eq!(w.wide(largest, wide, top), 3);
        for _ in 0..200 {
            w.learn(top, &peaks);
        }
        assert_eq!(w.wide(largest, wide, top), 2);
    }

    #[test]
    fn levels_no_batch_built_keep_the_estimates_bound() {
        let mut w = Levels::default();
        w.learn(1, &[1 << 20, 1 << 16]);
        // Level 1 was not built one by one: a root of 2^20 keys may leave it 3/4 of them.
        assert_eq!(w.wide(1 << 20, 1 << 17, 8), 8);
        w.learn(2, &[1 << 20, 1 << 16]);
        assert_eq!(w.wide(1 << 20, 1 << 17, 8), 1);
    }

    #[test]
    fn top_levels_end_one_past_the_first_level_of_subtrees() {
        let mut w = Levels::default();
        let largest = 1u64 << 20;
        let most = top_levels(largest);
        // Halved at each level from a third of a million keys: level 5 holds 10,922 keys at
        // most, so its nodes are all subtrees.
        let peaks: Vec<u64> = (0..most).map(|d| (largest / 3) >> d).collect();
        w.learn(most, &peaks);
        assert_eq!(w.top(most), 6);
        // Never more than the estimate allows.
        assert_eq!(w.top(4), 4);
        // A larger node at level 5 brings its level back.
        let mut larger = peaks.clone();
        larger[5] = 1 << 15;
        w.learn(6, &larger);
        assert_eq!(w.top(most), 7);
    }
}
