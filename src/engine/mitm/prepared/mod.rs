//! Quarter lists converted to key-space words, filtered and classified, ready to join.
//!
//! A task reads four quarters, each a row mask's placement list seen through one quarter's
//! offsets and one filter ([`Side`]). For most tasks the filter depends only on the kind of
//! task, so [`PreparedCache`] keeps each (kind, quarter, row mask) once it is built, for
//! boards up to N = 19; larger boards rebuild them per task, which is cheap next to the task.
//! A unit of a split (N ≥ 28) counts and samples its large quarters first and writes them
//! once the split's hot bits say which words its pieces can meet ([`Prepared::fill`]).

mod cache;
mod convert;
mod hot;
mod partners;
mod samples;

use std::sync::atomic::{AtomicU64, Ordering};

use super::key::{Geometry, Quarter, SENTINEL};

pub(crate) use cache::{PreparedCache, MAX_CACHED_H};
pub(crate) use convert::ANY;
pub(crate) use hot::MAX_HOT;

/// The four quarters in task order: east north/south, west north/south.
pub(crate) const QUARTERS: [Quarter; 4] = [Quarter::Ne, Quarter::Se, Quarter::Nw, Quarter::Sw];

/// How one quarter of a half is filtered and classified, as key-space masks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Side {
    /// Words touching these bits are dropped ([`SENTINEL`] is always included).
    pub forbid: u64,
    /// Words touching these bits are class 1, the others class 0.
    pub split: u64,
}

impl Side {
    /// A side that drops the words touching `forbid` and has a single class.
    pub(crate) fn forbid(forbid: u64) -> Self {
        Side {
            forbid: forbid | SENTINEL,
            split: 0,
        }
    }

    /// A side that keeps every valid word and classifies by `split`.
    pub(crate) fn split(split: u64) -> Self {
        Side {
            forbid: SENTINEL,
            split,
        }
    }
}

/// How a kind of task filters one of its quarters: the queen diagonals it drops before the
/// words are made (local diagonal bits, as [`Geometry::forbidden`] gives them), then the
/// key-space [`Side`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Filter {
    /// Local diagonal bits (the quarter's two diagonal directions) whose placements drop.
    pub raw: (u32, u32),
    /// The key-space filter and classes.
    pub side: Side,
}

impl From<Side> for Filter {
    fn from(side: Side) -> Self {
        Filter { raw: (0, 0), side }
    }
}

/// One quarter of a task, ready to join: its valid placements as key-space words, split
/// into two classes, each grouped by column mask.
#[derive(Debug, Default, Clone)]
pub(crate) struct Prepared {
    /// The (cache, kind, quarter, row mask) this copy was built for through
    /// [`PreparedCache::get`], so that the next task of a thread can reuse it.
    built_for: Option<(u64, usize, usize, u32)>,
    queens: u32,
    words: [Vec<u64>; 2],
    /// Where each group of words starts: one group per column mask, or, once
    /// [`Prepared::group_by`] has run, one per (column mask, pattern of the hot bits).
    offsets: [Vec<u32>; 2],
    /// The key bits words are grouped by within each column mask (none: one group).
    hot: Vec<u32>,
    /// A few words of each column mask's group, taken before any regrouping
    /// ([`Prepared::sampled`]).
    samples: [Vec<u64>; 2],
    /// Where each column mask's samples start.
    sample_at: [Vec<u32>; 2],
    /// Each column mask's number of words before any filter of [`Prepared::fill`].
    sample_of: [Vec<u32>; 2],
    /// A quarter counted and sampled to be written by [`Prepared::fill`]
    /// ([`Prepared::prepare_with`]); kept once written, so that the next finer unit of a task
    /// can write it again with its own filter.
    pending: Option<Pending>,
    /// Whether [`Prepared::fill`] has written the pending quarter.
    filled: bool,
    /// Changes whenever the words do (unique across every quarter of the process), so
    /// that a copy of them elsewhere (on a GPU) knows when it is stale.
    stamp: u64,
    /// Whether this copy is a plan's shared one ([`PreparedCache`]): it lives as long as the
    /// plan and its words never change, so a copy of them elsewhere (on a GPU) may be kept.
    shared: bool,
}

/// The next [`Prepared::stamp`].
fn next_stamp() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// What [`Prepared::fill`] needs to write a lazily prepared quarter's words.
#[derive(Debug, Clone, Copy)]
struct Pending {
    geo: Geometry,
    q: Quarter,
    rows: u32,
    side: Side,
}

impl Prepared {
    /// Whether the words wait for [`Prepared::fill`].
    pub(crate) fn is_pending(&self) -> bool {
        self.pending.is_some() && !self.filled
    }
    /// Whether the words are written by [`Prepared::fill`] (once counted lazily, a quarter
    /// stays so for every unit of its task).
    pub(crate) fn is_lazy(&self) -> bool {
        self.pending.is_some()
    }
    /// Frees the spare capacity of a copy that is kept.
    fn shrink(&mut self) {
        self.offsets.iter_mut().for_each(Vec::shrink_to_fit);
        self.samples.iter_mut().for_each(Vec::shrink_to_fit);
        self.sample_at.iter_mut().for_each(Vec::shrink_to_fit);
        self.sample_of.iter_mut().for_each(Vec::shrink_to_fit);
    }

    /// The number of kept placements (both classes; for a quarter waiting for
    /// [`Prepared::fill`], before its filter).
    pub(crate) fn len(&self) -> usize {
        self.offsets
            .iter()
            .map(|o| o.last().map_or(0, |&n| n as usize))
            .sum()
    }

    /// The number of queens of every placement (the row mask's size).
    pub(crate) fn queens(&self) -> u32 {
        self.queens
    }

    /// The words of class `class` with column mask `cols`.
    pub(crate) fn get(&self, class: usize, cols: u32) -> &[u64] {
        let k = self.hot.len();
        let o = &self.offsets[class];
        let c = cols as usize;
        &self.words[class][o[c << k] as usize..o[(c + 1) << k] as usize]
    }

    /// Every word of class `class` (the groups of [`Prepared::get`] and
    /// [`Prepared::get_group`] are ranges of it).
    #[cfg_attr(not(feature = "gpu"), allow(dead_code))]
    pub(crate) fn words(&self, class: usize) -> &[u64] {
        &self.words[class]
    }

    /// Whether this is a plan's shared copy, whose words never change.
    #[cfg_attr(not(feature = "gpu"), allow(dead_code))]
    pub(crate) fn is_shared(&self) -> bool {
        self.shared
    }

    /// A number that changes whenever the words do, unique across quarters.
    #[cfg_attr(not(feature = "gpu"), allow(dead_code))]
    pub(crate) fn stamp(&self) -> u64 {
        self.stamp
    }
}

#[cfg(test)]
mod tests;
