//! Joining one task's halves: its keys, the sieve they fill, and what the task did.
//!
//! A task's two sides come in bounded portions ([`Portions`]); each stored portion fills a
//! sieve (the bucket sieve for small tasks, the ranked [`Sieve`] or the [`Trie`] for large
//! ones) and every query portion is counted against it. The larger side is stored where
//! that is known in time (the west side mostly, the east side where the west side fits one
//! fill and is the smaller). The work counters of a task are kept here too ([`Keys::join`]
//! adds to them).

mod classes;
mod joiner;
mod phase;
mod pieces;
mod portions;
mod rank;
mod shape;
mod sieve;

use super::bucket::BucketSieve;
use super::half::{HalfSpec, Portions};
use super::limits::Limits;
use super::matcher::Sieve;
use super::prepared::Prepared;
use super::simd::Level;
use super::trie::Trie;
use crate::work::Work;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

pub(crate) use joiner::{Join, Joiner, Pending};
pub(crate) use phase::Phase;
pub(crate) use shape::Shape;

/// The keys of one task, the sieve they fill, and what the task did.
#[derive(Debug, Default)]
pub(crate) struct Keys {
    east: [Vec<u64>; 4],
    west: [Vec<u64>; 4],
    sieve: Sieve,
    trie: Trie,
    small: BucketSieve,
    /// Whether the stored keys are in the trie (else the ranked sieve).
    in_trie: bool,
    /// Queries sampled for the trie's splits.
    sample: Vec<u64>,
    /// Keys in the sieve now (for the pair product).
    stored: u64,
    /// Scratch: tied halves (east First, east Second, west First, west Second).
    tied: [Vec<u64>; 4],
    /// The work counters of the task being solved.
    pub work: Work,
    /// Whether phases are timed (only for counted solves: the clock is a system call).
    pub timed: bool,
    /// Where the halves are joined instead, if not here (the GPU engine).
    pub joiner: Option<Arc<dyn Joiner>>,
    /// Why the joiner failed, if it did: the task's count is then worthless (every later
    /// join of the task counts nothing).
    pub fault: Option<String>,
    /// With a joiner: the joins handed over and not yet answered, where the task's joins are
    /// deferred (`None`: each is waited for). A join that may be refused is always waited
    /// for, since what the task does next depends on it.
    pub deferred: Option<Vec<Box<dyn Pending>>>,
    /// Set once the join in hand is to be given up (a joiner's join made on this CPU, in a
    /// run that is stopping): its portions stop coming, and its count is worthless.
    pub stop: Option<Arc<AtomicBool>>,
}
impl Keys {
    /// The number of (east, west) pairs of halves with disjoint keys, each weighted by
    /// `factors[class of west]` (at most 4). West halves mostly outnumber east ones, so the
    /// west side is stored: the sieve then has more blocks, and its ranking skips more;
    /// where the west side fits one fill and is the smaller one, the east side is stored
    /// instead ([`Keys::join_swapped`]). Both sides come in bounded portions (each stored
    /// portion is filled once and met by every query portion), so a task's memory does not
    /// grow with N.
    pub(crate) fn join(
        &mut self,
        (east, west): (&[HalfSpec<'_>], &[HalfSpec<'_>]),
        factors: [u64; 4],
        shape: &Shape,
        limits: Limits,
        level: Level,
    ) -> u64 {
        let run = (shape, limits, level);
        self.join_unless_overflowing((east, west), factors, run, false)
            .expect("a join that may overflow is never refused")
    }

    #[cfg(feature = "gpu")]
    /// `join` on this CPU (a joiner's reference, and where a GPU cannot take it).
    pub(crate) fn join_here(&mut self, join: Join<'_, '_>, level: Level) -> Option<u64> {
        let run = (join.shape, join.limits, level);
        self.join_unless_overflowing((join.queries, join.stored), join.factors, run, join.refuse)
    }

    /// [`Keys::join`], or with `refuse`, `None` where the stored side overflows its first
    /// fill: nothing is counted then, though the portions built so far are in the counters.
    fn join_unless_overflowing(
        &mut self,
        (east, west): (&[HalfSpec<'_>], &[HalfSpec<'_>]),
        factors: [u64; 4],
        (shape, limits, level): (&Shape, Limits, Level),
        refuse: bool,
    ) -> Option<u64> {
        if let Some(joiner) = &self.joiner {
            if self.fault.is_some() {
                return Some(0);
            }
            let join = Join {
                queries: east,
                stored: west,
                factors,
                shape,
                limits,
                refuse,
            };
            if let (Some(deferred), false) = (&mut self.deferred, refuse) {
                match joiner.submit(join) {
                    Ok(pending) => deferred.push(pending),
                    Err(why) => self.fault = Some(why),
                }
                return Some(0);
            }
            return match joiner.join(join, &mut self.work) {
                Ok(count) => count,
                Err(why) => {
                    self.fault = Some(why);
                    Some(0)
                }
            };
        }
        let mut queries = Portions::new(east);
        let mut stored = Portions::new(west);
        let sides = (&mut queries, &mut stored);
        let total = self.join_portions(sides, factors, (shape, limits, level), refuse);
        let w = &mut self.work;
        w.half_pairs_tested += queries.tested + stored.tested;
        w.keys_built += queries.built + stored.built;
        let sieves = [
            &mut self.sieve.visits,
            &mut self.trie.visits,
            &mut self.small.visits,
        ];
        for visits in sieves {
            let v = std::mem::take(visits);
            w.blocks_built += v.built;
            w.visited_pairs += v.blocks;
            w.direct_pairs += v.direct;
            w.routing_tests += v.routing;
        }
        total
    }
    /// Whether the join in hand is to be given up ([`Keys::stop`]).
    fn is_stopped(&self) -> bool {
        self.stop
            .as_ref()
            .is_some_and(|s| s.load(Ordering::Acquire))
    }

    /// Counts and times the quarters `q` of the task.
    pub(crate) fn note_quarters(&mut self, q: &[&Prepared; 4], phase: Phase) {
        phase.stop(&mut self.work.quarter_seconds);
        self.work.quarter_placements += q.iter().map(|p| p.len() as u64).sum::<u64>();
    }
}
