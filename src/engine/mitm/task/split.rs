//! Tasks on one split of the rows (even N, and odd N's centre queen): their quarters,
//! sides and join, whole or in the units of a cut split.

use super::units::{finer_cut, whole_unit, Sides, Weights};
use super::{quarter_rows, Context, Kind, Limits, Scratch, Unit};
use crate::engine::mitm::half::HalfSpec;
use crate::engine::mitm::join::Phase;
#[cfg(test)]
use crate::engine::mitm::join::Shape;
use crate::engine::mitm::piece;
use crate::engine::mitm::prepared::Prepared;
use crate::engine::mitm::transpose::Tags;
use crate::engine::mitm::weights::{ew_weight, free_rows};

#[cfg(test)]
use super::Keys;
#[cfg(test)]
use crate::engine::mitm::prepared::{Side, QUARTERS};

impl Context {
    /// The four quarters of a split for tasks of `kind`.
    pub(super) fn quarters<'a>(
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
    /// The joins' count, unweighted ([`Context::weight`] weighs it).
    pub(super) fn solve_even(&self, east: u32, unit: Unit, s: &mut Scratch) -> u64 {
        let g = &self.geo;
        let (n, free) = (g.n, free_rows(g, 0));
        let ew = ew_weight(east, n, free);
        let split = (east, free & !east);
        // The transposes double the pairs of classes ew, 2, 2 that they keep
        // ([`crate::engine::mitm::transpose`]); the factor-4 class keeps its weight.
        let weights = if self.transposes {
            ([2 * ew, 4, 4, 4], Some(Tags::for_split(g, east)))
        } else {
            ([ew, 2, 2, 4], None)
        };
        self.solve_split(Kind::Even, split, weights, unit, s)
    }

    /// Odd N, centre queen: every quarter avoids the long diagonals.
    /// The joins' count, unweighted ([`Context::weight`] weighs it).
    pub(super) fn solve_centre(&self, east: u32, unit: Unit, s: &mut Scratch) -> u64 {
        let free = free_rows(&self.geo, 0);
        let split = (east, free & !east);
        self.solve_split(Kind::Centre, split, ([1, 0, 0, 0], None), unit, s)
    }

    /// Prepares the quarters of the split `(east, west)` and joins them: whole, or, when the
    /// stored side would overflow one sieve fill or the split is cut into units, in pieces
    /// cut by hot bits ([`piece`]), only those of `unit`. Under `s.draws`, a task of
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
    pub(super) fn hot_bits(
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
    pub(super) fn sides<'a>(
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
    pub(super) fn east_spec<'a>(&'a self, q: [&'a Prepared; 4], forbid: u64) -> HalfSpec<'a> {
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
