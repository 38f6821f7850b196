//! The units of a cut split: which finer units a task solves, each writing and regrouping
//! its quarters and joining its pieces, or, for an estimate, only the drawn pieces.

use super::{Context, Keys, Limits, Scratch, Unit};
use crate::engine::mitm::half::HalfSpec;
use crate::engine::mitm::join::Shape;
use crate::engine::mitm::piece;
use crate::engine::mitm::prepared::Prepared;
use crate::engine::mitm::simd::Level;
use crate::engine::mitm::transpose::Tags;
use crate::subsample::{self, Part};
use crate::work::Clock;
use std::ops::Range;

/// A split that is not cut into pieces: its unit 0 solves it whole (`join`), the others
/// have nothing to do (a split too small, or with too few usable hot bits, for its units).
pub(super) fn whole_unit(unit: Unit, join: impl FnOnce() -> u64) -> u64 {
    if unit.index == 0 {
        join()
    } else {
        0
    }
}

/// How a task's sides come from its quarters: a split's, with its west classes' factors,
/// or a cross task's, with the middle column's queen row.
#[derive(Debug, Clone, Copy)]
pub(super) enum Sides {
    Split(Weights),
    Cross(u32),
}

/// A split's west classes' factors, and for even N each side's tags
/// ([`transpose`](crate::engine::mitm::transpose)).
pub(super) type Weights = ([u64; 4], Option<[Tags; 2]>);

/// A task's cut of its split, and the finer units it solves ([`Unit::finer`]) with the
/// patterns of each.
type FinerCut = (piece::Cut, Vec<(Unit, Range<u32>)>);

/// The cut of a split on the hot bits `hot` (with the `spare` bits after them) for the
/// finer units of `unit`: they all fix the same hot bits, so one cut serves them all.
pub(super) fn finer_cut(hot: Vec<u32>, spare: Vec<u32>, unit: Unit) -> FinerCut {
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
    pub(super) fn join_units(
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
            if s.keys.fault.is_some() {
                // The joiner failed or gave up (a run stopping): the task's count is
                // worthless, so its other units need not be written and joined.
                break;
            }
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
