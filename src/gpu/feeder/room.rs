//! Room sizing: a batch's room in the units of its slot's [`Capacity`], and what a join is
//! expected to take of it, from ratios the batches so far have measured.

use crate::gpu::layout::{
    FILL_ERRORS, JOIN_PORTION, RESULT_BLOCKS, RESULT_ROUTES, RESULT_SIZES, RESULT_STATUS,
    ROLE_EAST, ROLE_WEST,
};
use crate::gpu::request::Request;
use crate::gpu::slot::Capacity;

/// A batch's room, in the units of [`Capacity`], as joins take it.
pub(super) struct Room {
    left: [u64; 9],
}

/// What one join is expected to take of each of [`Room`]'s arenas: joins, jobs, sides,
/// items, carried words, stored keys, query keys, blocks, routes.
pub(super) type Need = [u64; 9];

impl Room {
    pub(super) fn new(c: &Capacity) -> Self {
        let n = |x: u32| u64::from(x);
        Room {
            left: [
                n(c.joins),
                n(c.jobs),
                n(c.sides),
                n(c.items),
                n(c.words),
                n(c.stored),
                n(c.queries),
                n(c.blocks),
                n(c.routes),
            ],
        }
    }

    /// Whether the exact parts of `need` (joins, jobs, sides, items, words: what the host
    /// uploads) fit an empty batch.
    pub(super) fn holds(&self, need: &Need) -> bool {
        need[..5].iter().zip(&self.left).all(|(n, l)| n <= l)
    }

    /// Takes `need`, as far as there is room.
    pub(super) fn force(&mut self, need: &Need) {
        self.left
            .iter_mut()
            .zip(need)
            .for_each(|(l, n)| *l = l.saturating_sub(*n));
    }

    /// Takes `need` if it fits (as estimated); says whether it did.
    pub(super) fn take(&mut self, need: &Need) -> bool {
        if need.iter().zip(&self.left).any(|(n, l)| n > l) {
            return false;
        }
        self.left.iter_mut().zip(need).for_each(|(l, n)| *l -= n);
        true
    }
}

/// What the batches so far say of keys, blocks and routes against what the host knows of
/// a join before it runs (its pairs), kept as ratios, with a margin.
pub(super) struct Sizes {
    /// Keys per pair tested, blocks per stored key, routes per (query × block).
    keys_per_pair: f64,
    blocks_per_key: f64,
    routes_per_pair: f64,
    /// Whether a batch has said anything yet.
    learned: bool,
}

impl Default for Sizes {
    /// Before any batch: a key per pair (the bound), and for the routes a generous share of
    /// (query, block) pairs, not the bound (one route for each would keep the first batch to
    /// one join; the sieve routes well under 1% of them, and a join that overflows is redone
    /// in the next batch, never miscounted).
    fn default() -> Self {
        Sizes {
            keys_per_pair: 1.0,
            blocks_per_key: 3.0 / 512.0,
            routes_per_pair: 0.02,
            learned: false,
        }
    }
}

/// The margin on every estimate: a join a little larger than the batches so far still
/// fits, and one that does not is redone early in the next batch (it has done its half join
/// and maybe its tree for nothing). A batch sums hundreds of joins' sizes, whose spread
/// mostly cancels; the span model packs a count's batches by the same margin.
pub(crate) const MARGIN: f64 = 1.25;

impl Sizes {
    pub(super) fn need(&self, r: &Request) -> Need {
        let keys = |role| r.pairs(role) as f64 * self.keys_per_pair;
        let (west, east) = (keys(ROLE_WEST), keys(ROLE_EAST));
        let (mut stored, queries) = (west.max(east), west.min(east));
        if r.desc.flags & JOIN_PORTION != 0 {
            stored = stored.min(f64::from(r.desc.cap));
        }
        let blocks = stored * self.blocks_per_key;
        let routes = queries * blocks * self.routes_per_pair;
        // The margin covers learned ratios; the key bound needs none.
        let margin = if self.learned { MARGIN } else { 1.0 };
        let c = |x: f64| (x * margin).ceil() as u64;
        [
            1,
            r.jobs.len() as u64 + 1,
            r.sides.len() as u64,
            r.items(),
            r.words.len() as u64,
            c(stored),
            c(queries),
            c(blocks),
            c(routes),
        ]
    }

    /// The stored keys whose blocks the batches so far say fill `blocks` blocks (at least
    /// one key; before any batch, by the default's generous blocks a key).
    pub(super) fn keys_for(&self, blocks: f64) -> u32 {
        (blocks / self.blocks_per_key).clamp(1.0, f64::from(u32::MAX)) as u32
    }

    /// Moves the ratios towards what `request`'s row shows (never below a tenth of the
    /// bound, so that one odd join cannot make the next batch overflow wholesale).
    pub(super) fn learn(&mut self, request: &Request, row: &[u32]) {
        let status = row[RESULT_STATUS as usize];
        // A portion builds all its keys and stores some: its ratio is not a join's.
        if status & FILL_ERRORS != 0 || request.desc.flags & JOIN_PORTION != 0 {
            return;
        }
        let sizes = &row[RESULT_SIZES as usize..][..2];
        let pairs = (request.pairs(ROLE_WEST) + request.pairs(ROLE_EAST)) as f64;
        let keys = f64::from(sizes[0]) + f64::from(sizes[1]);
        let stored = f64::from(sizes[0].max(sizes[1]));
        let queries = f64::from(sizes[0].min(sizes[1]));
        let blocks = f64::from(row[RESULT_BLOCKS as usize]);
        let routes = f64::from(row[RESULT_ROUTES as usize]);
        let first = !self.learned;
        self.learned = true;
        let ease = |old: f64, new: f64| {
            if first {
                new
            } else {
                0.9 * old + 0.1 * new.max(old * 0.5)
            }
        };
        if pairs > 0.0 {
            self.keys_per_pair = ease(self.keys_per_pair, keys / pairs).clamp(0.01, 1.0);
        }
        if stored > 0.0 {
            self.blocks_per_key = ease(self.blocks_per_key, blocks / stored);
        }
        if queries * blocks > 0.0 {
            self.routes_per_pair = ease(self.routes_per_pair, routes / (queries * blocks)).min(1.0);
        }
    }
}
