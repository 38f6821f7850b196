//! A join through bounded portions of both sides: which side is stored, and each stored
//! portion met by every query portion.

use super::classes::unit_weight;
use super::{Keys, Phase, Shape};
use crate::engine::mitm::half::Portions;
use crate::engine::mitm::limits::Limits;
use crate::engine::mitm::simd::Level;

/// What a portion of halves is for: the queries (east) or the stored keys (west).
#[derive(Debug, Clone, Copy)]
enum Role {
    /// The east halves, queried.
    Queries,
    /// The west halves, stored in the sieve.
    Stored,
}
impl Keys {
    /// [`Keys::join`] over the query and stored sides' portions.
    pub(super) fn join_portions(
        &mut self,
        (queries, stored): (&mut Portions<'_, '_>, &mut Portions<'_, '_>),
        factors: [u64; 4],
        (shape, limits, level): (&Shape, Limits, Level),
        refuse: bool,
    ) -> Option<u64> {
        if !self.next_portion(queries, limits.queries, Role::Queries) {
            return Some(0);
        }
        let first_done = queries.is_done();
        let mut total = 0;
        let mut first = true;
        while self.next_portion(stored, limits.stored, Role::Stored) {
            if self.is_stopped() {
                return Some(total);
            }
            if first && refuse && !stored.is_done() {
                return None;
            }
            let size: usize = self.west.iter().map(Vec::len).sum();
            let small_east = self.east[0].len() < limits.trie_min;
            if first_done && stored.is_done() && size < limits.min_ranked && small_east {
                // A small task, or the small last portion of a large one: storing the
                // smaller side costs least (the portions before it are counted already).
                // An east side of trie size is stored in the trie instead (below): the
                // bucket sieve's chunks span its cut bits, so its tables take several times
                // the trie's per key (64 MB for 2.6·10^5 keys in a unit of N = 28), and
                // N = 23's cross tasks, up to 4·10^5 east keys, count 35% faster so.
                let small = self.count_small(shape, level, factors);
                return Some(total + small + self.count_ties(shape, factors, level));
            }
            if first
                && stored.is_done()
                && limits.swap
                && self.east_outweighs(queries, size, limits)
            {
                // The whole west side is at hand and the east side is larger.
                return Some(self.join_swapped(queries, factors, shape, limits, level));
            }
            first = false;
            self.fill(shape, level, factors, limits, false);
            if !first_done {
                self.work.regenerations += 1;
                self.restart(queries, limits.queries);
            }
            loop {
                total += self.count(shape, level, factors) + self.count_ties(shape, factors, level);
                if queries.is_done() || self.is_stopped() {
                    break;
                }
                self.next_portion(queries, limits.queries, Role::Queries);
            }
        }
        Some(total)
    }

    /// [`Keys::join`] with the roles swapped, for a task whose west halves (all of them in
    /// the west keys now) are fewer than its east halves: the east halves are stored, in
    /// fills of up to `limits.stored` keys, and every west class queries each fill. A sieve
    /// prunes the more the more keys it holds, and the side that is queried pays per key:
    /// a unit of a large split (N = 28) can hold 2·10^4 west halves against 8·10^7 east
    /// ones, which visited every block of the small sieve once per east half.
    ///
    /// The east keys hold the first fill ([`Keys::east_outweighs`]).
    fn join_swapped(
        &mut self,
        queries: &mut Portions<'_, '_>,
        factors: [u64; 4],
        shape: &Shape,
        limits: Limits,
        level: Level,
    ) -> u64 {
        let mut total = 0;
        loop {
            self.fill(shape, level, factors, limits, true);
            let unit = unit_weight(shape, factors);
            total += self.count_west(level, factors, unit) + self.count_ties(shape, factors, level);
            let done = queries.is_done() || self.is_stopped();
            if done || !self.next_portion(queries, limits.stored, Role::Queries) {
                return total;
            }
        }
    }

    /// Whether the east side outnumbers the `west` keys at hand (the whole west side); if
    /// so, the east keys are left holding its first portion of a fill's size. The first
    /// query portion was cut at a query's limit: where the east side passed it, it is made
    /// again at a fill's size, which measures it, and cut back to a query portion if it is
    /// not the larger side after all. Compared with the first query portion alone, the
    /// task at 1% of N = 25's plan stored its 5.3·10^5 west halves and queried 2.05·10^6
    /// east ones; stored the other way round, it visits 62% fewer blocks.
    fn east_outweighs(
        &mut self,
        queries: &mut Portions<'_, '_>,
        west: usize,
        limits: Limits,
    ) -> bool {
        if queries.is_done() {
            return west < self.east[0].len();
        }
        self.restart(queries, limits.stored);
        if !queries.is_done() || west < self.east[0].len() {
            return true;
        }
        self.restart(queries, limits.queries);
        false
    }

    /// Makes the east keys' portions again from the first, the first of about `limit` keys.
    fn restart(&mut self, queries: &mut Portions<'_, '_>, limit: usize) {
        queries.rewind();
        self.next_portion(queries, limit, Role::Queries);
    }

    /// The next portion of `portions` into the east (queries) or west (stored) keys, its
    /// CPU time counted as building halves; returns whether any keys came.
    fn next_portion(&mut self, portions: &mut Portions<'_, '_>, limit: usize, role: Role) -> bool {
        let out = match role {
            Role::Queries => &mut self.east,
            Role::Stored => &mut self.west,
        };
        let phase = Phase::start(self.timed);
        let more = portions.next(limit, out);
        phase.stop(&mut self.work.half_seconds);
        more
    }
}
