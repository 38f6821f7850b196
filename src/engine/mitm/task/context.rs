//! The shared, read-only context of a plan's tasks: per-board choices (sieve cuts, units,
//! transposes), built once, and the entry that solves a task of any kind.

use super::{Limits, Scratch, Task};
use crate::engine::mitm::join::Shape;
use crate::engine::mitm::key::Geometry;
use crate::engine::mitm::prepared::{Filter, PreparedCache, Side, MAX_CACHED_H, MAX_HOT, QUARTERS};
use crate::engine::mitm::quarter::QuarterCache;
use crate::engine::mitm::simd::Level;
use crate::engine::mitm::weights::{ew_weight, free_rows, ns_weight};

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
    /// Hot bits that cut the plan's costliest splits into units ([`Unit`](super::Unit),
    /// [`unit_bits`]).
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

    /// [`Context::new`], keeping every prepared quarter of boards whose quarters are at most
    /// `max_h`×`max_h` (a GPU keeps their words on the device for the whole run).
    #[cfg_attr(not(feature = "gpu"), allow(dead_code))]
    pub(crate) fn with_shared_quarters(n: u32, level: Level, max_h: u32) -> Self {
        let mut ctx = Self::new(n, level);
        if ctx.geo.h <= max_h && !ctx.prepared.is_cached() {
            ctx.prepared = PreparedCache::new(ctx.geo.h, kinds(&ctx.geo), max_h);
        }
        ctx
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
            prepared: PreparedCache::new(h, kinds(&geo), MAX_CACHED_H),
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

    /// The weighted number of solutions of `task`: its joins' count times [`Context::weight`]
    /// (a joiner that defers its joins leaves their counts out, to be weighed on their own).
    pub(crate) fn solve(&self, task: Task, s: &mut Scratch) -> u128 {
        let weight = self.weight(task);
        if weight == 0 {
            return 0;
        }
        let sum = if task.y == 0 && self.geo.n.is_multiple_of(2) {
            self.solve_even(task.east, task.unit, s)
        } else if task.y == 0 {
            self.solve_centre(task.east, task.unit, s)
        } else {
            self.solve_cross(task.east, task.y, task.unit, s)
        };
        s.weigh_parts(weight);
        u128::from(sum) * weight
    }

    /// The symmetry weight of `task`'s joins: even N, the north/south symmetry of its east
    /// rows; odd N, that times its east/west one for the centre queen, 8 for the cross ones
    /// (docs/algorithms.md, "symmetry weights").
    pub(crate) fn weight(&self, task: Task) -> u128 {
        let g = &self.geo;
        let n = g.n;
        if task.y != 0 {
            return 8;
        }
        let ns = ns_weight(task.east, n);
        if n.is_multiple_of(2) {
            u128::from(ns)
        } else {
            u128::from(ns * ew_weight(task.east, n, free_rows(g, 0)))
        }
    }
}

/// The quarter filters of each task kind of an `n`×`n` board, by
/// [`Kind::slot`](super::Kind::slot).
fn kinds(g: &Geometry) -> Vec<[Filter; 4]> {
    let n = g.n;
    if n.is_multiple_of(2) {
        // The long diagonals' key bits: A = N − 1 (main), B = N − 1 (anti).
        let (main, anti) = (g.window_bits(n - 1, 0), g.window_bits(0, n - 1));
        let sides = [
            Side::forbid(main),
            Side::forbid(anti),
            Side::split(anti),
            Side::split(main),
        ];
        vec![sides.map(Filter::from)]
    } else {
        let centre = Side::forbid(g.window_bits(n - 1, n - 1)).into();
        // A cross queen in the last row meets each quarter's diagonals directly: the same
        // for every such task, so its quarters are kept (and, on a GPU, resident) too.
        let edge = QUARTERS.map(|q| Filter {
            raw: g.forbidden(q, n - 1, g.h),
            side: Side::forbid(0),
        });
        vec![[centre; 4], [Side::forbid(0).into(); 4], edge]
    }
}
