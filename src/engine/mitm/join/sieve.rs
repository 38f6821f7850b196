//! Filling a task's sieve (bucket, ranked or trie) with one side's keys and counting the
//! other side against it, tied halves included.

use super::classes::{stored_copies, unit_weight, weighted_groups};
use super::rank::task_rank;
use super::{Keys, Phase, Shape};
use crate::engine::mitm::limits::Limits;
use crate::engine::mitm::simd::{self, Level};

/// Replaces `out` by the `keys` with each of the two `marks`, their bits above `below`
/// cleared.
fn marked(keys: &[u64], marks: (u64, u64), below: u64, out: (&mut Vec<u64>, &mut Vec<u64>)) {
    out.0.clear();
    out.1.clear();
    for &k in keys.iter().filter(|&&k| k & (marks.0 | marks.1) != 0) {
        let v = if k & marks.0 != 0 {
            &mut *out.0
        } else {
            &mut *out.1
        };
        v.push(k & below);
    }
}

/// Moves `from`'s allocation to `to` if it is larger (dropping `to`'s), else frees `from`'s.
fn hand_over<T>(from: &mut Vec<T>, to: &mut Vec<T>) {
    let taken = std::mem::take(from);
    if taken.capacity() > to.capacity() {
        *to = taken;
    }
}
/// Queries sampled to choose the trie's splits and its leaves' skip bits. Deep nodes see a
/// small share of them: 8,192 against 2,048 cut N = 26's visits by 3% (4,096 by 2%), and
/// 32,768 cost more in the build (+20%) than its 0.7% fewer visits saved.
const QUERY_SAMPLE: usize = 8192;
impl Keys {
    /// Stores the west keys in the sieve, ranked for the current east keys (or, `swapped`,
    /// the east keys, for the west classes). Classes share one sieve where they can (more
    /// blocks, more skipping): factors 2 and 4 become one group of weight 2 (a class of
    /// factor 4 stored twice), factor 1 a group of weight 1.
    pub(super) fn fill(
        &mut self,
        shape: &Shape,
        level: Level,
        factors: [u64; 4],
        limits: Limits,
        swapped: bool,
    ) {
        let (groups, queries) = if swapped {
            let wanted = self.west.iter().zip(factors).filter(|&(_, f)| f > 0);
            let classes = wanted.map(|(keys, _)| keys.as_slice()).collect();
            ([vec![self.east[0].as_slice()], Vec::new()], classes)
        } else {
            (
                weighted_groups(&self.west, factors, unit_weight(shape, factors)),
                vec![self.east[0].as_slice()],
            )
        };
        let stored: Vec<&[u64]> = groups.iter().flatten().copied().collect();
        let phase = Phase::start(self.timed);
        let groups = [groups[0].as_slice(), groups[1].as_slice()];
        let size: usize = stored.iter().map(|g| g.len()).sum();
        self.in_trie = size >= limits.trie_min;
        // One thread's sieves never both hold large buffers: the one that fills takes the
        // other's (every entry is rewritten before it is read).
        let (sieve, trie) = (self.sieve.buffers(), self.trie.buffers());
        let (from, to) = if self.in_trie {
            (sieve, trie)
        } else {
            (trie, sieve)
        };
        hand_over(from.0, to.0);
        hand_over(from.1, to.1);
        hand_over(from.2, to.2);
        if self.in_trie {
            let all: usize = queries.iter().map(|q| q.len()).sum();
            let step = (all / QUERY_SAMPLE).max(1);
            self.sample.clear();
            self.sample
                .extend(queries.iter().flat_map(|q| q.iter()).step_by(step));
            self.trie
                .fill(&groups, !shape.holes, &shape.layout, &self.sample, level);
        } else {
            let rank = task_rank(&stored, &queries, shape.cuts, limits.min_ranked);
            self.sieve
                .fill(&groups, !shape.holes, &shape.layout, &rank, level);
        }
        self.stored = size as u64;
        self.work.stored_keys += self.stored;
        phase.stop(&mut self.work.sieve_seconds);
    }

    /// [`Keys::join`] for a task whose keys are all at hand and few: the east keys (the
    /// smaller side) go to the bucket sieve, and every west class is counted against them.
    pub(super) fn count_small(&mut self, shape: &Shape, level: Level, factors: [u64; 4]) -> u64 {
        let phase = Phase::start(self.timed);
        self.small
            .fill(&self.east[0], &shape.small_layout, &shape.small_cuts, level);
        phase.stop(&mut self.work.sieve_seconds);
        let phase = Phase::start(self.timed);
        let groups: [&[u64]; 4] = self.west.each_ref().map(|v| v.as_slice());
        let mut counts = [0u64; 4];
        self.small.count_groups(&groups, &mut counts, level);
        phase.stop(&mut self.work.match_seconds);
        let (stored, queries) = (
            self.east[0].len() as u64,
            groups.iter().map(|g| g.len() as u64).sum::<u64>(),
        );
        self.work.stored_keys += stored;
        self.work.queries += queries;
        self.work.pair_product += stored * queries;
        self.work.hits += counts.iter().sum::<u64>();
        counts.iter().zip(factors).map(|(c, f)| c * f).sum()
    }

    /// The weighted count of every west class against the stored east keys (`unit`: see
    /// [`unit_weight`]).
    pub(super) fn count_west(&mut self, level: Level, factors: [u64; 4], unit: u64) -> u64 {
        let phase = Phase::start(self.timed);
        let mut total = 0;
        for (keys, f) in self.west.iter().zip(factors) {
            if f == 0 || keys.is_empty() {
                continue;
            }
            let mut counts = [0u64; 2];
            if self.in_trie {
                self.trie.count(keys, &mut counts, level);
            } else {
                self.sieve.count(keys, &mut counts, level);
            }
            let queries = keys.len() as u64;
            self.work.queries += queries;
            self.work.pair_product += self.stored * queries;
            // Hits count a class as often as a west sieve stores it (`stored_copies`), so
            // that they mean the same whichever side is stored.
            self.work.hits += counts[0] * stored_copies(f / unit).1;
            total += counts[0] * f;
        }
        phase.stop(&mut self.work.match_seconds);
        total
    }

    /// The weighted count of the current east keys against the sieve.
    pub(super) fn count(&mut self, shape: &Shape, level: Level, factors: [u64; 4]) -> u64 {
        let phase = Phase::start(self.timed);
        let mut counts = [0u64; 2];
        if self.in_trie {
            self.trie.count(&self.east[0], &mut counts, level);
        } else {
            self.sieve.count(&self.east[0], &mut counts, level);
        }
        phase.stop(&mut self.work.match_seconds);
        let queries = self.east[0].len() as u64;
        self.work.queries += queries;
        self.work.pair_product += self.stored * queries;
        self.work.hits += counts[0] + counts[1];
        unit_weight(shape, factors) * (counts[0] + 2 * counts[1])
    }

    /// Even N: the pairs of the tied halves at hand (marked by
    /// [`transpose`](crate::engine::mitm::transpose)), which weigh half their class's factor
    /// and which the tags keep out of every sieve's count, compared one by one on their key
    /// bits.
    pub(super) fn count_ties(&mut self, shape: &Shape, factors: [u64; 4], level: Level) -> u64 {
        let Some((marks, below)) = shape.ties else {
            return 0;
        };
        let [first, second, west_first, west_second] = &mut self.tied;
        marked(&self.east[0], (marks[0], marks[1]), below, (first, second));
        if first.is_empty() && second.is_empty() {
            return 0;
        }
        let mut total = 0;
        for (keys, f) in self.west.iter().zip(factors).take(3) {
            marked(keys, (marks[2], marks[3]), below, (west_first, west_second));
            let pairs = simd::count_direct(level, west_first, second)
                + simd::count_direct(level, west_second, first);
            self.work.hits += pairs;
            total += pairs * (f / 2);
        }
        total
    }
}
