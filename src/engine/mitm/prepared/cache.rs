//! Prepared quarters kept per (kind, quarter, row mask) for small boards, and a task's own
//! copy reused by the next task on its thread.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

use super::{Filter, Prepared, QUARTERS};
use crate::engine::mitm::key::Geometry;
use crate::engine::mitm::quarter::QuarterCache;

/// Largest quarter size whose prepared lists are cached (h = 9: about 20 MB per kind).
pub(crate) const MAX_CACHED_H: u32 = 9;
/// Prepared quarters by (kind, quarter, row mask), for the task kinds whose filters do not
/// depend on the task.
#[derive(Debug)]
pub(crate) struct PreparedCache {
    /// Tells this cache's copies from another plan's: a thread's scratch outlives plans, and
    /// two boards with the same h (N = 20 and 21) share kind slots and row masks.
    id: u64,
    h: u32,
    kinds: Vec<[Filter; 4]>,
    slots: Vec<OnceLock<Prepared>>,
}

impl PreparedCache {
    /// A cache for the given kinds (each: the four quarters' filters); empty above
    /// `max_h`.
    pub(crate) fn new(h: u32, kinds: Vec<[Filter; 4]>, max_h: u32) -> Self {
        let slots = if h <= max_h {
            (kinds.len() * 4) << h
        } else {
            0
        };
        static NEXT_ID: AtomicU64 = AtomicU64::new(0);
        PreparedCache {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            h,
            kinds,
            slots: (0..slots).map(|_| OnceLock::new()).collect(),
        }
    }

    /// Whether prepared quarters are kept (small boards); tasks of those boards are never
    /// split into pieces, which regroups a task's own copies.
    pub(crate) fn is_cached(&self) -> bool {
        !self.slots.is_empty()
    }

    #[cfg(test)]
    /// Stops caching, so that every task prepares its own copies (to split small boards).
    pub(crate) fn stop_caching(&mut self) {
        self.slots.clear();
    }

    /// Quarter `i` (in [`QUARTERS`] order) of kind `kind` for row mask `rows`: from the cache,
    /// or built into `spare` when the cache is off (unless `spare` already holds it); with
    /// `lazy`, a large one only counted and sampled ([`Prepared::prepare_with`]).
    pub(crate) fn get<'a>(
        &'a self,
        geo: &Geometry,
        lists: &QuarterCache,
        (kind, i, rows): (usize, usize, u32),
        lazy: bool,
        spare: &'a mut Prepared,
    ) -> &'a Prepared {
        let Filter { raw, side } = self.kinds[kind][i];
        let list = lists.get(rows);
        let build = |p: &mut Prepared| p.prepare_with(geo, QUARTERS[i], list, raw, side, lazy);
        match self.slots.get(((kind * 4 + i) << self.h) + rows as usize) {
            Some(slot) => slot.get_or_init(|| {
                let mut p = Prepared::default();
                build(&mut p);
                p.shrink();
                p.shared = true;
                p
            }),
            None => {
                // Tasks in plan order often share a quarter's row mask with the task before.
                let key = Some((self.id, kind, i, rows));
                if spare.built_for != key {
                    build(spare);
                    // Words that a fill may filter serve only this task.
                    spare.built_for = key.filter(|_| !spare.is_pending());
                }
                spare
            }
        }
    }
}
