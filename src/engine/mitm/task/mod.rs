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

mod context;
mod cross;
mod split;
mod units;

use super::join::{Keys, Phase};
use super::key::Geometry;
use super::prepared::{Prepared, ANY};
use crate::subsample::{Draws, Part};
use crate::work::Work;

pub(crate) use super::limits::Limits;
pub(crate) use super::piece::Unit;
#[cfg(test)]
pub(crate) use context::unit_bits;
pub(crate) use context::Context;

/// The kinds of task, by the filters their quarters need.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Even N: long diagonals kept out of NE (main) and SE (anti), and classes in the west.
    Even,
    /// Odd N, centre queen: every quarter avoids both long diagonals.
    Centre,
    /// Odd N, cross queens: no filter beyond the quarters' own.
    Cross,
    /// Odd N, a cross queen in the last row (y = N − 1): each quarter drops the words on
    /// that queen's diagonals.
    CrossEdge,
}

impl Kind {
    /// The kind's slot in the prepared-quarter cache (see `kinds` in [`context`]: an even
    /// board has one kind, an odd board three).
    fn slot(self) -> usize {
        match self {
            Kind::Even | Kind::Centre => 0,
            Kind::Cross => 1,
            Kind::CrossEdge => 2,
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
    /// ([`super::prepared::Prepared::partners`]); `halves` are the west halves'
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
