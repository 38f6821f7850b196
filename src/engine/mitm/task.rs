//! One task of the meet-in-the-middle engine: a row split E (plus, for odd N, the row `y` of
//! the middle column's queen), solved start to finish on one thread.
//!
//! * Even N: E = the h rows whose queen is east. Only east halves with an empty main diagonal
//!   in NE and an empty anti-diagonal in SE are built; west halves are split into four
//!   classes by their long-diagonal queens (factors ew, 2, 2, 4), and the task is weighted by
//!   the north/south symmetry `ns(E)`. The transposes then weigh the pairs of the first
//!   three classes 2, 1 or 0 by their column masks ([`super::transpose`]).
//! * Small tasks store the east keys in the bucket sieve and query it with each west class;
//!   large ones store the west keys, classes merged by weight, in the ranked sieve or the
//!   trie and query it with the east keys. Both sides come in bounded portions, so a task's
//!   memory does not grow with N ([`super::join`]).
//! * Odd N, centre queen: every quarter avoids both long diagonals; weight `ns(E)·ew(E)`.
//! * Odd N, cross queens at (h, x) and (y, h) with h < x < y: weight 8. The east side does not
//!   depend on x, so it is built and sliced once per (y, E); the west halves of every x are
//!   then queried with the (h, x) queen's diagonals added to their keys.

use super::half::HalfSpec;
use super::join::{Keys, Phase, Shape};
use super::key::Geometry;
use super::piece;
use super::prepared::{Prepared, PreparedCache, Side, ANY, MAX_HOT, QUARTERS};
use super::quarter::QuarterCache;
use super::simd::Level;
use super::transpose::Tags;
use super::weights::{ew_weight, free_rows, ns_weight};
use crate::subsample::{self, Draws, Part};
use crate::work::{Clock, Work};
use std::ops::Range;

pub(crate) use super::limits::Limits;
pub(crate) use super::piece::Unit;

/// The kinds of task, by the filters their quarters need.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Even N: long diagonals kept out of NE (main) and SE (anti), and classes in the west.
    Even,
    /// Odd N, centre queen: every quarter avoids both long diagonals.
    Centre,
    /// Odd N, cross queens: no filter beyond the quarters' own.
    Cross,
}

impl Kind {
    /// The kind's slot in the prepared-quarter cache (see [`kinds`]: an even board has one
    /// kind, an odd board two).
    fn slot(self) -> usize {
        match self {
            Kind::Even | Kind::Centre => 0,
            Kind::Cross => 1,
        }
    }
}

/// A task: east row mask over the N rows, the middle column's queen row for odd N cross
/// tasks (0 otherwise: even N or the centre queen), and which unit of that split it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Task {
    /// Rows whose queen is in the east half.
    pub east: u32,
    /// Row of the queen in the middle column (odd N, off-centre), or 0.
    pub y: u32,
    /// The share of the split's pieces this task solves.
    pub unit: Unit,
}

/// What a solving thread keeps between tasks.
#[derive(Debug, Default)]
pub(crate) struct Scratch {
    quarters: [Prepared; 4],
    pub(crate) keys: Keys,
    /// What an estimate asks of split tasks, and what they did.
    pub(crate) sampling: Sampling,
}

/// Split tasks solved in part, for an estimate ([`crate::subsample`]).
#[derive(Debug, Default)]
pub(crate) struct Sampling {
    /// Solve only some pieces of a split task (`None`: every piece).
    pub(crate) draws: Option<Draws>,
    /// The pieces solved under `draws`, weighted once the task's weight is known.
    pub(crate) parts: Vec<Part>,
    /// The number of pieces the last split task had (0: not split).
    pub(crate) pieces: usize,
}

impl Scratch {
    /// Starts counting the work of the next task (with phase times if `timed`).
    pub(crate) fn start_counting(&mut self, timed: bool) {
        self.keys.work = Work::default();
        self.keys.timed = timed;
    }

    /// The work counted since [`Scratch::start_counting`]; stops timing phases.
    pub(crate) fn take_work(&mut self) -> Work {
        self.keys.timed = false;
        std::mem::take(&mut self.keys.work)
    }

    /// Groups the west quarters' words by their pattern of the hot bits `hot`, timed as
    /// quarter work. Only split tasks get here, and they never use the shared cache: their
    /// quarters are the scratch's own copies, so they can be regrouped.
    fn regroup(&mut self, hot: &[u32]) {
        let phase = Phase::start(self.keys.timed);
        self.quarters[2..].iter_mut().for_each(|p| p.group_by(hot));
        phase.stop(&mut self.keys.work.quarter_seconds);
    }

    /// Writes the words of the quarters that were only counted, less those with a bit of
    /// `drop` (east, west), timed as quarter work. The west quarter with fewer words is
    /// written first, and the other keeps only the words that can join one of its words
    /// into a half with the unit's fixed bits
    /// ([`super::prepared::Partners`]); `halves` are the west halves'
    /// free columns (none: keep every word).
    fn fill(&mut self, [east, west]: [u64; 2], halves: &[u32]) {
        let phase = Phase::start(self.keys.timed);
        let [ne, se, nw, sw] = &mut self.quarters;
        for p in [ne, se] {
            p.fill(east, ANY);
        }
        let (first, second) = if nw.len() <= sw.len() {
            (nw, sw)
        } else {
            (sw, nw)
        };
        first.fill(west, ANY);
        let fixed = east | west;
        if second.is_lazy() && fixed != 0 && !halves.is_empty() {
            let partners = first.partners(fixed, west);
            second.fill(west, |cols, w| partners.pairs(cols, w, east, halves));
        } else {
            second.fill(west, ANY);
        }
        phase.stop(&mut self.keys.work.quarter_seconds);
    }

    /// Multiplies the counts of the drawn pieces by the task's symmetry weight.
    fn weigh_parts(&mut self, weight: u128) {
        self.sampling
            .parts
            .iter_mut()
            .for_each(|p| p.count *= weight);
    }
}

/// Shared, read-only context of a plan's tasks.
#[derive(Debug)]
pub(crate) struct Context {
    /// Board geometry.
    pub geo: Geometry,
    /// Quarter lists.
    pub cache: QuarterCache,
    /// Quarter lists as filtered key-space words, per task kind.
    pub prepared: PreparedCache,
    /// Matcher instruction level.
    pub level: Level,
    /// Matcher shape per middle-column queen row `y` (index 0: even N and centre tasks).
    pub shapes: Vec<Shape>,
    /// The h-bit column masks by number of columns.
    pub by_size: Vec<Vec<u32>>,
    /// Portion sizes and the ranking threshold.
    pub limits: Limits,
    /// Hot bits that cut the plan's costliest splits into units ([`Unit`], [`unit_bits`]).
    pub units: u32,
    /// Of those, the bits whose units one task solves in turn ([`merged_bits`]).
    pub merged: u32,
    /// Whether even tasks weigh their pairs by the transposes ([`transposes`]).
    pub transposes: bool,
}

/// Most cut bits that rank the stored keys of large tasks (0: no ranking).
fn cut_count(n: u32) -> u32 {
    match n {
        0..=15 => 0,
        _ => 16,
    }
}

/// Bucket cut bits of small tasks, per board size (more keys per split: more buckets pay).
fn small_cut_count(n: u32) -> u32 {
    match n {
        // Measured on sampled tasks: cuts cost time up to N = 19, 4 cuts were fastest at
        // N = 20 (1.7× over none).
        0..=19 => 0,
        20..=21 => 4,
        _ => 5,
    }
}

/// Whether even tasks of an `n`×`n` board weigh their pairs by the transposes: from
/// N = 18, where the pairs they save outweigh their three tag bits, which below that add a
/// chunk to the small sieves' layouts (N = 16 was 13% slower with them). The tests take
/// them from N = 6, so that brute force checks them.
pub(crate) fn transposes(n: u32) -> bool {
    n.is_multiple_of(2) && n >= if cfg!(test) { 6 } else { 18 }
}

/// Hot bits that cut the costliest splits of an `n`×`n` plan into units of their own.
///
/// Measured on a 2-core Zen 3 (avx2, one thread per task): the largest split takes about
/// 23 s at N = 26 and 55 s at N = 27, but 9–13 minutes at N = 28 (64 pieces). A task that
/// long makes a shard's time unpredictable and a kill costly, and an estimate cannot time
/// enough of them; so from N = 28 the splits of the costliest class are cut into 2^6 tasks,
/// one per piece, and cheaper classes into fewer (and all into fewer where the plan would
/// pass the checkpoint's 2^32 tasks: N = 29). A middle split of N = 28 took 605 s whole and
/// 622 s as 32 units run one per process (2.0–37.4 s each): each unit builds the split's
/// quarters again, unless its thread has just built them for another unit.
pub(crate) fn unit_bits(n: u32) -> u32 {
    if n >= 28 {
        MAX_HOT as u32
    } else {
        0
    }
}

/// Of [`unit_bits`], the bits whose units one task of an `n`×`n` plan solves one after
/// another: they share the split's quarter walks (the walks that count and sample its large
/// quarters took 63% of the quarter phase, which took 13.6% of N = 28's estimated time),
/// while each writes only the quarter words its own pieces meet, so a worker's memory stays
/// that of one unit. Four units a task: 183 million tasks at N = 28 instead of 734 million.
pub(crate) fn merged_bits(n: u32) -> u32 {
    if n >= 28 {
        2
    } else {
        0
    }
}

impl Context {
    /// The shared context of an `n`×`n` plan with the default sieve cuts.
    pub(crate) fn new(n: u32, level: Level) -> Self {
        Self::with_shape(n, level, cut_count(n), small_cut_count(n))
    }

    #[cfg(test)]
    /// The shared context of an `n`×`n` plan whose large tasks rank on up to `cuts` key
    /// bits and whose small tasks cut on `min(cuts, 8)` (tuning knobs; [`Context::new`]
    /// picks them per N).
    pub(crate) fn with_cuts(n: u32, level: Level, cuts: u32) -> Self {
        Self::with_shape(n, level, cuts, cuts.min(8))
    }

    /// The shared context with `cuts` rank bits and `small` bucket cuts.
    fn with_shape(n: u32, level: Level, cuts: u32, small: u32) -> Self {
        let geo = Geometry::new(n);
        let h = geo.h;
        let shapes = (0..n)
            .map(|y| {
                let holes = if y == 0 {
                    geo.window_bits(n - 1, n - 1)
                } else {
                    geo.window_bits(h + n - 1 - y, h + y)
                };
                let tags = y == 0 && transposes(n);
                Shape::new(&geo, holes, (cuts, small), tags)
            })
            .collect();
        Context {
            geo,
            cache: QuarterCache::new(h),
            prepared: PreparedCache::new(h, kinds(&geo)),
            level,
            shapes,
            by_size: (0..=h)
                .map(|k| (0..1u32 << h).filter(|m| m.count_ones() == k).collect())
                .collect(),
            limits: Limits::default(),
            units: unit_bits(n),
            merged: merged_bits(n),
            transposes: transposes(n),
        }
    }

    /// The weighted number of solutions of `task`.
    pub(crate) fn solve(&self, task: Task, s: &mut Scratch) -> u128 {
        if task.y == 0 && self.geo.n.is_multiple_of(2) {
            self.solve_even(task.east, task.unit, s)
        } else if task.y == 0 {
            self.solve_centre(task.east, task.unit, s)
        } else {
            self.solve_cross(task.east, task.y, task.unit, s)
        }
    }

    /// The four quarters of a split for tasks of `kind`.
    fn quarters<'a>(
        &'a self,
        kind: Kind,
        (east, west): (u32, u32),
        unit: Unit,
        spare: &'a mut [Prepared; 4],
    ) -> [&'a Prepared; 4] {
        let g = &self.geo;
        let rows = quarter_rows(g, east, west);
        // A unit uses only the words its pieces can meet: large quarters are written once
        // its hot bits are known ([`Scratch::fill`]), so a worker never holds a whole split.
        let lazy = unit.fixed() > 0;
        let mut i = 0;
        spare.each_mut().map(|p| {
            i += 1;
            let at = (kind.slot(), i - 1, rows[i - 1]);
            self.prepared.get(g, &self.cache, at, lazy, p)
        })
    }

    /// Even N (docs/algorithms.md, "symmetry weights"): diagonal-restricted east halves, west
    /// classes with factors.
    fn solve_even(&self, east: u32, unit: Unit, s: &mut Scratch) -> u128 {
        let g = &self.geo;
        let (n, free) = (g.n, free_rows(g, 0));
        let ns = ns_weight(east, n);
        let ew = ew_weight(east, n, free);
        let split = (east, free & !east);
        // The transposes double the pairs of classes ew, 2, 2 that they keep
        // ([`super::transpose`]); the factor-4 class keeps its weight.
        let weights = if self.transposes {
            ([2 * ew, 4, 4, 4], Some(Tags::for_split(g, east)))
        } else {
            ([ew, 2, 2, 4], None)
        };
        let sum = self.solve_split(Kind::Even, split, weights, unit, s);
        s.weigh_parts(u128::from(ns));
        u128::from(sum) * u128::from(ns)
    }

    /// Odd N, centre queen: every quarter avoids the long diagonals.
    fn solve_centre(&self, east: u32, unit: Unit, s: &mut Scratch) -> u128 {
        let g = &self.geo;
        let (n, free) = (g.n, free_rows(g, 0));
        let weight = ns_weight(east, n) * ew_weight(east, n, free);
        if weight == 0 {
            return 0;
        }
        let split = (east, free & !east);
        let count = self.solve_split(Kind::Centre, split, ([1, 0, 0, 0], None), unit, s);
        s.weigh_parts(u128::from(weight));
        u128::from(count) * u128::from(weight)
    }

    /// Prepares the quarters of the split `(east, west)` and joins them: whole, or, when the
    /// stored side would overflow one sieve fill or the split is cut into units, in pieces
    /// cut by hot bits ([`super::piece`]), only those of `unit`. Under `s.draws`, a task of
    /// many pieces solves only the drawn ones into `s.parts` and returns 0.
    fn solve_split(
        &self,
        kind: Kind,
        (east, west): (u32, u32),
        (factors, tags): Weights,
        unit: Unit,
        s: &mut Scratch,
    ) -> u64 {
        let phase = Phase::start(s.keys.timed);
        let q = self.quarters(kind, (east, west), unit, &mut s.quarters);
        s.keys.note_quarters(&q, phase);
        let (shape, limits, level) = (&self.shapes[0], self.limits, self.level);
        let (e, w) = self.sides(q, 0, (factors, tags));
        let (hot, spare) = self.hot_bits(&e, std::slice::from_ref(&w), unit, limits);
        if hot.is_empty() && !q.iter().any(|p| p.is_pending()) {
            return whole_unit(unit, || {
                s.keys.join((&[e], &[w]), factors, shape, limits, level)
            });
        }
        if hot.is_empty() {
            // A split cut into units but on no hot bits (too few of them): unit 0 writes
            // the counted quarters whole.
            return whole_unit(unit, || {
                s.fill([0, 0], &[]);
                let (e, w) = self.sides(s.quarters.each_ref(), 0, (factors, tags));
                s.keys.join((&[e], &[w]), factors, shape, limits, level)
            });
        }
        let cut = finer_cut(hot, spare, unit);
        let how = Sides::Split((factors, tags));
        self.join_units(s, &cut, how, factors, (shape, limits, level))
    }

    /// The hot bits to cut a split into pieces on, at least `unit.bits` of them (none where
    /// quarters come from the shared cache: only a task's own copies can be regrouped).
    fn hot_bits(
        &self,
        queries: &HalfSpec<'_>,
        stored: &[HalfSpec<'_>],
        unit: Unit,
        limits: Limits,
    ) -> (Vec<u32>, Vec<u32>) {
        if self.prepared.is_cached() {
            return (Vec::new(), Vec::new());
        }
        piece::hot_bits(queries, stored, limits, unit.fixed() as usize)
    }

    /// Builds east and west halves of a prepared split (avoiding the key bits `forbid`) and
    /// counts the pairs that join, each weighted by its west class's factor (0: the class is
    /// not built).
    #[cfg(test)]
    fn join_task(
        &self,
        q: [&Prepared; 4],
        forbid: u64,
        factors: [u64; 4],
        shape: &Shape,
        k: &mut Keys,
    ) -> u64 {
        let (east, west) = self.sides(q, forbid, (factors, None));
        k.join((&[east], &[west]), factors, shape, self.limits, self.level)
    }

    /// The east and west sides of a prepared split, avoiding the key bits `forbid`, with the
    /// west classes whose factor is not 0 and each side's tags.
    fn sides<'a>(
        &'a self,
        q: [&'a Prepared; 4],
        forbid: u64,
        (factors, tags): Weights,
    ) -> (HalfSpec<'a>, HalfSpec<'a>) {
        let mut east = self.east_spec(q, forbid);
        east.tags = tags.map(|[t, _]| t);
        let west = HalfSpec {
            north: q[2],
            south: q[3],
            masks: &self.by_size[q[2].queens() as usize],
            wanted: factors.map(|f| f > 0),
            tags: tags.map(|[_, t]| t),
            ..east
        };
        (east, west)
    }

    /// The east side of a task: every class, avoiding the key bits `forbid`.
    fn east_spec<'a>(&'a self, q: [&'a Prepared; 4], forbid: u64) -> HalfSpec<'a> {
        HalfSpec {
            north: q[0],
            south: q[1],
            cols: (1u32 << self.geo.h) - 1,
            masks: &self.by_size[q[0].queens() as usize],
            forbid,
            extra: 0,
            wanted: [true, false, false, false],
            patterns: None,
            tags: None,
            exact: (0, 0),
            level: self.level,
        }
    }

    /// Odd N with queens at (h, x) and (y, h) for every h < x < y: weight 8 each.
    fn solve_cross(&self, east: u32, y: u32, unit: Unit, s: &mut Scratch) -> u128 {
        let g = &self.geo;
        let west = free_rows(g, y) & !east;
        let phase = Phase::start(s.keys.timed);
        let q = if y == g.n - 1 {
            self.cross_quarters_edge(east, west, y, &mut s.quarters)
        } else {
            self.quarters(Kind::Cross, (east, west), unit, &mut s.quarters)
        };
        s.keys.note_quarters(&q, phase);
        let (shape, limits, level) = (&self.shapes[y as usize], self.limits, self.level);
        let (east, wests) = self.cross_sides(q, y);
        // Pieces of half the size: a cross task's pieces overflowed their fills (the task at
        // 1% of N = 27's plan took 15 fills for 8 pieces), and each fill met every query.
        let halved = Limits {
            piece: limits.piece / 2,
            ..limits
        };
        let (hot, spare) = self.hot_bits(&east, &wests, unit, halved);
        if hot.is_empty() && !q.iter().any(|p| p.is_pending()) {
            let sides = (&[east][..], &wests[..]);
            let count = whole_unit(unit, || {
                s.keys.join(sides, [1, 0, 0, 0], shape, limits, level)
            });
            return u128::from(count) * 8;
        }
        if hot.is_empty() {
            let count = whole_unit(unit, || {
                s.fill([0, 0], &[]);
                let (east, wests) = self.cross_sides(s.quarters.each_ref(), y);
                s.keys
                    .join((&[east], &wests), [1, 0, 0, 0], shape, limits, level)
            });
            return u128::from(count) * 8;
        }
        let cut = finer_cut(hot, spare, unit);
        let run = (shape, limits, level);
        let count = self.join_units(s, &cut, Sides::Cross(y), [1, 0, 0, 0], run);
        s.weigh_parts(8);
        u128::from(count) * 8
    }

    /// The sides of a cross task with the middle column's queen at row `y`: the east halves,
    /// and the west halves of every (h, x) queen.
    fn cross_sides<'a>(
        &'a self,
        q: [&'a Prepared; 4],
        y: u32,
    ) -> (HalfSpec<'a>, Vec<HalfSpec<'a>>) {
        let g = &self.geo;
        let h = g.h;
        // The (y, h) queen: in-window diagonals are key bits every half must avoid; for
        // y = N − 1 they fall outside the window and the quarters are filtered directly.
        let ybits = g.window_bits(h + g.n - 1 - y, h + y);
        let east = self.east_spec(q, ybits);
        // The (h, x) queen's diagonals are key bits of every west quarter: west halves must
        // avoid them, and they join each west key to rule out clashing east keys.
        let wests = (h + 1..y)
            .map(|x| {
                let xbits = g.window_bits(x + h, x + h);
                HalfSpec {
                    north: q[2],
                    south: q[3],
                    cols: east.cols & !(1 << (x - g.c)),
                    masks: &self.by_size[q[2].queens() as usize],
                    forbid: ybits | xbits,
                    extra: xbits,
                    ..east
                }
            })
            .collect();
        (east, wests)
    }

    /// The quarters of a cross task with y = N − 1, filtered against that queen directly.
    fn cross_quarters_edge<'a>(
        &self,
        east: u32,
        west: u32,
        y: u32,
        spare: &'a mut [Prepared; 4],
    ) -> [&'a Prepared; 4] {
        let g = &self.geo;
        let rows = quarter_rows(g, east, west);
        for (i, p) in spare.iter_mut().enumerate() {
            let q = QUARTERS[i];
            let raw = g.forbidden(q, y, g.h);
            p.prepare(g, q, self.cache.get(rows[i]), raw, Side::forbid(0));
        }
        spare.each_ref()
    }
}

/// A split that is not cut into pieces: its unit 0 solves it whole (`join`), the others
/// have nothing to do (a split too small, or with too few usable hot bits, for its units).
fn whole_unit(unit: Unit, join: impl FnOnce() -> u64) -> u64 {
    if unit.index == 0 {
        join()
    } else {
        0
    }
}

/// How a task's sides come from its quarters: a split's, with its west classes' factors,
/// or a cross task's, with the middle column's queen row.
#[derive(Debug, Clone, Copy)]
enum Sides {
    Split(Weights),
    Cross(u32),
}

/// A split's west classes' factors, and for even N each side's tags ([`super::transpose`]).
type Weights = ([u64; 4], Option<[Tags; 2]>);

/// A task's cut of its split, and the finer units it solves ([`Unit::finer`]) with the
/// patterns of each.
type FinerCut = (piece::Cut, Vec<(Unit, Range<u32>)>);

/// The cut of a split on the hot bits `hot` (with the `spare` bits after them) for the
/// finer units of `unit`: they all fix the same hot bits, so one cut serves them all.
fn finer_cut(hot: Vec<u32>, spare: Vec<u32>, unit: Unit) -> FinerCut {
    let units: Vec<_> = unit
        .finer()
        .map(|u| (u, piece::unit_patterns(hot.len(), u)))
        .collect();
    let (cut, _) = piece::cut(hot, spare, units[0].0);
    (cut, units)
}

impl Context {
    /// The sides of a task from its quarters `q`.
    fn sides_of<'a>(
        &'a self,
        q: [&'a Prepared; 4],
        how: Sides,
    ) -> (HalfSpec<'a>, Vec<HalfSpec<'a>>) {
        match how {
            Sides::Split(weights) => {
                let (east, west) = self.sides(q, 0, weights);
                (east, vec![west])
            }
            Sides::Cross(y) => self.cross_sides(q, y),
        }
    }

    /// Joins a task's finer units in turn: each writes the quarter words its pieces meet,
    /// regroups them on its hot bits and joins its patterns. Under `s.sampling.draws`, the
    /// pieces are drawn across all of them, and only the drawn ones are solved, each timed
    /// and counted on its own into `s.sampling.parts` (the returned count is then 0); every
    /// unit's quarters are still written, as a full run writes them.
    fn join_units(
        &self,
        s: &mut Scratch,
        (cut, units): &FinerCut,
        how: Sides,
        factors: [u64; 4],
        run: (&Shape, Limits, Level),
    ) -> u64 {
        let all: usize = units.iter().map(|(_, p)| p.len()).sum();
        s.sampling.pieces = all;
        // The west halves' free columns, for the fills: every unit's sides have the same.
        let (_, wests) = self.sides_of(s.quarters.each_ref(), how);
        let halves: Vec<u32> = wests.iter().map(|w| w.cols).collect();
        let draws = s
            .sampling
            .draws
            .filter(|d| d.count > 0 && all > 4 * d.count);
        let (mut total, mut drawn, mut offset) = (0, Vec::new(), 0);
        for (i, (unit, patterns)) in units.iter().enumerate() {
            s.fill(piece::unit_drops(cut, patterns, *unit), &halves);
            s.regroup(&cut.grouped);
            let (east, wests) = self.sides_of(s.quarters.each_ref(), how);
            let Some(d) = draws else {
                let sides = (&east, &wests[..]);
                total += s
                    .keys
                    .join_split(sides, cut, patterns.clone(), factors, run);
                continue;
            };
            if i == 0 {
                // One cut, so one set of weights serves every finer unit, in unit order.
                let weights = piece::weights(&east, &wests, &cut.hot);
                let flat: Vec<f64> = units
                    .iter()
                    .flat_map(|(_, p)| &weights[p.start as usize..p.end as usize])
                    .copied()
                    .collect();
                drawn = subsample::draw(&flat, d.count, d.seed);
            }
            let mine = offset..offset + patterns.len();
            let pieces = drawn.iter().filter(|x| mine.contains(&x.0));
            let pieces =
                pieces.map(|&(at, p, times)| (patterns.start + (at - offset) as u32, p, times));
            let (keys, parts) = (&mut s.keys, &mut s.sampling.parts);
            join_drawn(keys, parts, (&east, &wests[..]), cut, pieces, factors, run);
            offset += patterns.len();
        }
        total
    }
}

/// Joins the drawn `pieces` (pattern, probability, times drawn) of a split, each timed and
/// counted on its own into `parts`.
fn join_drawn(
    keys: &mut Keys,
    parts: &mut Vec<Part>,
    sides: (&HalfSpec<'_>, &[HalfSpec<'_>]),
    cut: &piece::Cut,
    pieces: impl Iterator<Item = (u32, f64, usize)>,
    factors: [u64; 4],
    run: (&Shape, Limits, Level),
) {
    for (p, probability, times) in pieces {
        // Each piece's work on its own: the shared work so far is set aside.
        let shared = std::mem::take(&mut keys.work);
        let clock = Clock::start_for(keys.joiner.is_some());
        let count = keys.join_split(sides, cut, p..p + 1, factors, run);
        let seconds = clock.seconds();
        let work = std::mem::replace(&mut keys.work, shared);
        parts.push(Part {
            probability: Some(probability),
            drawn: times,
            count: u128::from(count),
            seconds,
            work,
        });
    }
}

/// The quarter filters of each task kind of an `n`×`n` board, by [`Kind::slot`].
fn kinds(g: &Geometry) -> Vec<[Side; 4]> {
    let n = g.n;
    if n.is_multiple_of(2) {
        // The long diagonals' key bits: A = N − 1 (main), B = N − 1 (anti).
        let (main, anti) = (g.window_bits(n - 1, 0), g.window_bits(0, n - 1));
        vec![[
            Side::forbid(main),
            Side::forbid(anti),
            Side::split(anti),
            Side::split(main),
        ]]
    } else {
        let centre = Side::forbid(g.window_bits(n - 1, n - 1));
        vec![[centre; 4], [Side::forbid(0); 4]]
    }
}

#[cfg(test)]
impl Context {
    /// Even N without any symmetry: the number of solutions whose east rows are `east`.
    pub(crate) fn solve_plain(&self, east: u32, s: &mut Scratch) -> u64 {
        let g = &self.geo;
        let west = free_rows(g, 0) & !east;
        let low = (1u32 << g.h) - 1;
        let rows = [
            east & low,
            (east >> g.c) & low,
            west & low,
            (west >> g.c) & low,
        ];
        for (i, p) in s.quarters.iter_mut().enumerate() {
            let list = self.cache.get(rows[i]);
            p.prepare(g, QUARTERS[i], list, (0, 0), Side::forbid(0));
        }
        let shape = Shape::new(g, 0, (2, 2), false);
        let q = s.quarters.each_ref();
        self.join_task(q, 0, [1, 0, 0, 0], &shape, &mut s.keys)
    }
}

/// The row masks of the four quarters (NE, SE, NW, SW) of a split: the east and west rows,
/// each cut into its north and south halves.
fn quarter_rows(g: &Geometry, east: u32, west: u32) -> [u32; 4] {
    let low = (1u32 << g.h) - 1;
    [
        east & low,
        (east >> g.c) & low,
        west & low,
        (west >> g.c) & low,
    ]
}
