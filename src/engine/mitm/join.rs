//! Joining one task's halves: its keys, the sieve they fill, and what the task did.
//!
//! A task's two sides come in bounded portions ([`Portions`]); each stored portion fills a
//! sieve (the bucket sieve for small tasks, the ranked [`Sieve`] or the [`Trie`] for large
//! ones) and every query portion is counted against it. The larger side is stored where
//! that is known in time (the west side mostly, the east side where the west side fits one
//! fill and is the smaller). The work counters of a task are kept here too ([`Keys::join`]
//! adds to them).

use super::bucket::BucketSieve;
use super::half::{HalfSpec, Portions};
use super::kernels::{Layout, BLOCK};
use super::key::Geometry;
use super::limits::Limits;
use super::matcher::{Rank, Sieve, MAX_CUTS};
use super::piece;
use super::prepared::Prepared;
use super::simd::{self, Level};
use super::transpose;
use super::trie::Trie;
use crate::work::{thread_cpu_seconds, Work};
use std::sync::Arc;

/// Matcher chunk width (usable key bits per table lookup).
const CHUNK_BITS: u32 = 5;

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
}

/// A second place to join a task's halves: the GPU engine ([`crate::gpu`]). The engine's
/// task code (quarters, pieces, units) stays the same; only the joins move.
pub(crate) trait Joiner: Send + Sync + std::fmt::Debug {
    /// The weighted count of the pairs of `join`, as [`Keys::join`] counts it, or `None`
    /// where `join.refuse` and its stored side overflows one fill; what it did is added to
    /// `work`. An error means the count cannot be had (the device was lost, say).
    fn join(&self, join: Join<'_, '_>, work: &mut Work) -> Result<Option<u64>, String>;
    /// Where the joins run, for a plan's description (`GPU NAME`).
    fn describe(&self) -> String;
}

/// One join handed to a [`Joiner`]: the query sides (east) and stored sides (west, each
/// west class weighted by `factors`), as [`Keys::join_unless_overflowing`] takes them.
#[derive(Debug, Clone, Copy)]
#[cfg_attr(not(feature = "gpu"), allow(dead_code))]
pub(crate) struct Join<'a, 'b> {
    /// The east halves.
    pub queries: &'b [HalfSpec<'a>],
    /// The west halves.
    pub stored: &'b [HalfSpec<'a>],
    /// Each west class's factor (0: not built).
    pub factors: [u64; 4],
    /// The task's shape (holes, and even N's tie marks).
    pub shape: &'b Shape,
    /// How much of a task is held at once.
    pub limits: Limits,
    /// Whether to refuse a stored side that overflows one fill.
    pub refuse: bool,
}

/// A stopwatch of one phase's CPU time that reads the clock only when `on`.
pub(crate) struct Phase(Option<f64>);

impl Phase {
    pub(crate) fn start(on: bool) -> Self {
        Phase(if on { thread_cpu_seconds() } else { None })
    }

    /// Adds the time since the start to `seconds`.
    pub(crate) fn stop(self, seconds: &mut f64) {
        if let Some(start) = self.0 {
            *seconds += thread_cpu_seconds().map_or(0.0, |now| now - start);
        }
    }
}

/// How the sieves read keys: chunk layouts, the bits no stored key needs, and cut bits.
#[derive(Debug, Clone)]
pub(crate) struct Shape {
    /// Chunk layout of the ranked sieve (holes left out).
    pub layout: Layout,
    /// Key bits no query has (fixed queens' and long diagonals): stored keys drop them.
    pub holes: u64,
    /// Most cut bits that rank the stored keys.
    pub cuts: u32,
    /// Chunk layout of the bucket sieve of small tasks (holes and cut bits left out).
    pub small_layout: Layout,
    /// Cut bits of the bucket sieve, ascending.
    pub small_cuts: Vec<u32>,
    /// Even N: the tie marks of [`super::transpose::marks`] and the key bits below the tags.
    pub ties: Option<([u64; 4], u64)>,
}

impl Shape {
    /// The shape for keys with `holes`, ranked by at most `cuts` bits; small tasks' buckets
    /// cut on `small_cuts` bits near the long diagonals (where keys are densest, so buckets
    /// exclude the most pairs). With `tags` (even N), the layouts read the transposes' tag
    /// bits as well, and their tie marks are holes ([`super::transpose`]).
    pub(crate) fn new(
        geo: &Geometry,
        holes: u64,
        (cuts, small_cuts): (u32, u32),
        tags: bool,
    ) -> Self {
        let (h, d) = (geo.h as i64, geo.d as i64);
        let mut order = Vec::new();
        for step in 1..h {
            for offset in [-step, step] {
                order.extend([h - 1 + offset, d + h - 1 + offset]);
            }
        }
        let mut small: Vec<u32> = order
            .into_iter()
            .filter(|&p| (0..2 * d).contains(&p) && holes >> p & 1 == 0)
            .map(|p| p as u32)
            .take(small_cuts as usize)
            .collect();
        small.sort_unstable();
        let cut_mask = small.iter().fold(0u64, |m, &p| m | 1 << p);
        let key_bits = geo.key_bits();
        let (bits, holes, ties) = if tags {
            let marks = transpose::marks(key_bits);
            let below = (1u64 << key_bits) - 1;
            let holes = holes | transpose::mark_mask(key_bits);
            (key_bits + transpose::TAG_BITS, holes, Some((marks, below)))
        } else {
            (key_bits, holes, None)
        };
        Shape {
            layout: Layout::new(bits, holes, CHUNK_BITS),
            holes,
            cuts: cuts.min(MAX_CUTS as u32),
            small_layout: Layout::new(bits, holes | cut_mask, CHUNK_BITS),
            small_cuts: small,
            ties,
        }
    }
}

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

/// What a portion of halves is for: the queries (east) or the stored keys (west).
#[derive(Debug, Clone, Copy)]
enum Role {
    /// The east halves, queried.
    Queries,
    /// The west halves, stored in the sieve.
    Stored,
}

/// The weight a west sieve's group 0 stands for: with the transposes' tags (`shape.ties`),
/// the greatest common divisor of the factors that are not 0, so that their factors 2·ew, 4,
/// 4, 4 store every class once; else 1, and a class of factor 4 is stored twice (one group
/// of weight 2 serves the classes of factor 2 and 4: at N = 16 two groups cost 13%).
fn unit_weight(shape: &Shape, factors: [u64; 4]) -> u64 {
    if shape.ties.is_none() {
        return 1;
    }
    let gcd = |a: u64, b: u64| {
        let (mut a, mut b) = (a, b);
        while b != 0 {
            (a, b) = (b, a % b);
        }
        a
    };
    factors.into_iter().fold(0, gcd).max(1)
}

/// Where a west class of factor `f` (in units of [`unit_weight`]) goes in a west sieve: its
/// group (0: weight 1, 1: weight 2) and how many copies of it are stored there.
fn stored_copies(f: u64) -> (usize, u64) {
    debug_assert!(f <= 4, "factors are at most 4");
    if f % 2 == 1 {
        (0, f)
    } else {
        (1, f / 2)
    }
}

/// The west classes as the sieve's two groups, the keys of weight 1 and those of weight 2
/// (in units of [`unit_weight`]): a class of factor 1 or 2 once, one of factor 4 twice in
/// the second.
fn weighted_groups(west: &[Vec<u64>; 4], factors: [u64; 4], unit: u64) -> [Vec<&[u64]>; 2] {
    let mut groups = [Vec::new(), Vec::new()];
    for (keys, f) in west.iter().zip(factors) {
        let (group, copies) = stored_copies(f / unit);
        groups[group].extend((0..copies).map(|_| keys.as_slice()));
    }
    groups
}

/// Keys sampled per side to measure bit occupancy.
const OCCUPANCY_SAMPLE: usize = 256;

/// The rank for one task: the key bits most likely set on both sides, most likely first. A
/// bit set in a fraction `p` of stored keys and `q` of queries rules out a fraction `p·q` of
/// the pairs, so those bits share the most skipping.
fn task_rank(stored: &[&[u64]], queries: &[&[u64]], cuts: u32, min_keys: usize) -> Rank {
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

/// Queries sampled to choose the trie's splits and its leaves' skip bits. Deep nodes see a
/// small share of them: 8,192 against 2,048 cut N = 26's visits by 3% (4,096 by 2%), and
/// 32,768 cost more in the build (+20%) than its 0.7% fewer visits saved.
const QUERY_SAMPLE: usize = 8192;

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

    #[cfg(all(test, feature = "gpu"))]
    /// `join` on this CPU (a joiner's reference).
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

    /// [`Keys::join`] for a task split into pieces on the hot bits of `cut`: piece P stores
    /// the halves whose hot bits are exactly P and meets the queries without any of them. Only
    /// the pieces in `patterns` are joined (all of them for a count); one that overflows its
    /// fill is cut again on the cut's spare bits ([`Keys::join_piece`]).
    pub(crate) fn join_split(
        &mut self,
        (east, wests): (&HalfSpec<'_>, &[HalfSpec<'_>]),
        cut: &piece::Cut,
        patterns: std::ops::Range<u32>,
        factors: [u64; 4],
        (shape, limits, level): (&Shape, Limits, Level),
    ) -> u64 {
        let mut total = 0;
        for pattern in patterns {
            let queries = piece::query_spec(east, &cut.hot, pattern);
            let stored: Vec<HalfSpec<'_>> = wests
                .iter()
                .flat_map(|w| piece::stored_specs(w, cut, pattern))
                .collect();
            let run = (shape, limits, level);
            total += self.join_piece((queries, stored), &cut.spare, factors, run);
        }
        total
    }

    /// Joins one piece; where its stored side overflows one fill and a spare bit is left,
    /// cuts it in two on that bit instead (the halves without it, met by every query, and
    /// those with it, met by the queries without it), each joined the same way. A piece
    /// whose halves come in several fills meets every query once per fill; two pieces of
    /// one fill each meet fewer. The first fill's portions are built again.
    fn join_piece(
        &mut self,
        (queries, stored): (HalfSpec<'_>, Vec<HalfSpec<'_>>),
        spare: &[u32],
        factors: [u64; 4],
        run: (&Shape, Limits, Level),
    ) -> u64 {
        let refuse = !spare.is_empty();
        let sides = (std::slice::from_ref(&queries), &stored[..]);
        if let Some(count) = self.join_unless_overflowing(sides, factors, run, refuse) {
            self.work.pieces += 1;
            return count;
        }
        let (bit, rest) = (1u64 << spare[0], &spare[1..]);
        let without = stored
            .iter()
            .map(|s| HalfSpec {
                forbid: s.forbid | bit,
                ..*s
            })
            .collect();
        let with = stored
            .iter()
            .map(|s| HalfSpec {
                exact: (s.exact.0 | bit, s.exact.1 | bit),
                ..*s
            })
            .collect();
        let avoiding = HalfSpec {
            forbid: queries.forbid | bit,
            ..queries
        };
        self.join_piece((queries, without), rest, factors, run)
            + self.join_piece((avoiding, with), rest, factors, run)
    }

    /// [`Keys::join`] over the query and stored sides' portions.
    fn join_portions(
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
                if queries.is_done() {
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
            if queries.is_done() || !self.next_portion(queries, limits.stored, Role::Queries) {
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

    /// Counts and times the quarters `q` of the task.
    pub(crate) fn note_quarters(&mut self, q: &[&Prepared; 4], phase: Phase) {
        phase.stop(&mut self.work.quarter_seconds);
        self.work.quarter_placements += q.iter().map(|p| p.len() as u64).sum::<u64>();
    }

    /// Stores the west keys in the sieve, ranked for the current east keys (or, `swapped`,
    /// the east keys, for the west classes). Classes share one sieve where they can (more
    /// blocks, more skipping): factors 2 and 4 become one group of weight 2 (a class of
    /// factor 4 stored twice), factor 1 a group of weight 1.
    fn fill(
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
    fn count_small(&mut self, shape: &Shape, level: Level, factors: [u64; 4]) -> u64 {
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
    fn count_west(&mut self, level: Level, factors: [u64; 4], unit: u64) -> u64 {
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
    fn count(&mut self, shape: &Shape, level: Level, factors: [u64; 4]) -> u64 {
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

    /// Even N: the pairs of the tied halves at hand (marked by [`super::transpose`]), which
    /// weigh half their class's factor and which the tags keep out of every sieve's count,
    /// compared one by one on their key bits.
    fn count_ties(&mut self, shape: &Shape, factors: [u64; 4], level: Level) -> u64 {
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
