//! Odd N's cross tasks: the middle column's queen off centre, its row's queen west of it,
//! and the west halves of every such queen met by the same east halves.

use super::units::{finer_cut, whole_unit, Sides};
use super::{Context, Kind, Limits, Scratch, Unit};
use crate::engine::mitm::half::HalfSpec;
use crate::engine::mitm::join::Phase;
use crate::engine::mitm::prepared::Prepared;
use crate::engine::mitm::weights::free_rows;

impl Context {
    /// Odd N with queens at (h, x) and (y, h) for every h < x < y: the joins' count,
    /// unweighted (weight 8 each, [`Context::weight`]).
    pub(super) fn solve_cross(&self, east: u32, y: u32, unit: Unit, s: &mut Scratch) -> u64 {
        let g = &self.geo;
        let west = free_rows(g, y) & !east;
        let phase = Phase::start(s.keys.timed);
        let q = if y == g.n - 1 {
            // Built whole, never deferred to a unit's fill.
            self.quarters(Kind::CrossEdge, (east, west), Unit::WHOLE, &mut s.quarters)
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
            return whole_unit(unit, || {
                s.keys.join(sides, [1, 0, 0, 0], shape, limits, level)
            });
        }
        if hot.is_empty() {
            return whole_unit(unit, || {
                s.fill([0, 0], &[]);
                let (east, wests) = self.cross_sides(s.quarters.each_ref(), y);
                s.keys
                    .join((&[east], &wests), [1, 0, 0, 0], shape, limits, level)
            });
        }
        let cut = finer_cut(hot, spare, unit);
        let run = (shape, limits, level);
        self.join_units(s, &cut, Sides::Cross(y), [1, 0, 0, 0], run)
    }

    /// The sides of a cross task with the middle column's queen at row `y`: the east halves,
    /// and the west halves of every (h, x) queen.
    pub(super) fn cross_sides<'a>(
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
}
