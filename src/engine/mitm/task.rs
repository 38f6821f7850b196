//! One task of the meet-in-the-middle engine: a row split E (plus, for odd N, the row `y` of
//! the middle column's queen), solved start to finish on one thread (ALGORITHMS.md §4.2,
//! §4.3, §4.6 items 1–2).
//!
//! * Even N: E = the h rows whose queen is east. Only east halves with an empty main diagonal
//!   in NE and an empty anti-diagonal in SE are stored; west halves are split into four
//!   classes by their long-diagonal queens (factors ew, 2, 2, 4), and the task is weighted by
//!   the north/south symmetry `ns(E)`.
//! * Odd N, centre queen: every quarter avoids both long diagonals; weight `ns(E)·ew(E)`.
//! * Odd N, cross queens at (h, x) and (y, h) with h < x < y: weight 8. The east side does not
//!   depend on x, so it is built and sliced once per (y, E); the west halves of every x are
//!   then queried with the (h, x) queen's diagonals added to their keys.

use super::half::{self, HalfSpec, Side};
use super::key::Geometry;
use super::matcher::{Layout, Sieve};
use super::prepared::{Prepared, PreparedCache, QUARTERS};
use super::quarter::QuarterCache;
use super::simd::Level;
use super::weights::{ew_weight, free_rows, ns_weight};

/// Matcher chunk width (usable key bits per table lookup).
const CHUNK_BITS: u32 = 5;

/// Task kinds, as indices into the prepared-quarter cache.
const EVEN: usize = 0;
const CENTRE: usize = 0;
const CROSS: usize = 1;

/// A task: east row mask over the N rows, and the middle column's queen row for odd N
/// cross tasks (0 otherwise: even N or the centre queen).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Task {
    /// Rows whose queen is in the east half.
    pub east: u32,
    /// Row of the queen in the middle column (odd N, off-centre), or 0.
    pub y: u32,
}

/// What a solving thread keeps between tasks.
#[derive(Debug, Default)]
pub struct Scratch {
    quarters: [Prepared; 4],
    keys: Keys,
}

/// The keys of one task and the sieve they fill.
#[derive(Debug, Default)]
struct Keys {
    east: [Vec<u64>; 4],
    west: [Vec<u64>; 4],
    sieve: Sieve,
}

/// Shared, read-only context of a plan's tasks.
#[derive(Debug)]
pub struct Context {
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
}

/// How the sieve reads keys: its chunk layout and its cut bits.
#[derive(Debug, Clone)]
pub struct Shape {
    /// Chunk layout (cut bits and holes left out).
    pub layout: Layout,
    /// Cut bit positions.
    pub cuts: Vec<u32>,
}

impl Shape {
    /// The shape for keys of `bits` bits with `holes`, cut on `cuts` bits near the long
    /// diagonals (where keys are densest, so buckets exclude the most pairs).
    pub fn new(geo: &Geometry, holes: u64, cuts: u32) -> Self {
        let (h, d) = (geo.h as i64, geo.d as i64);
        let mut order = Vec::new();
        for step in 1..h {
            for offset in [-step, step] {
                order.extend([h - 1 + offset, d + h - 1 + offset]);
            }
        }
        let mut cuts: Vec<u32> = order
            .into_iter()
            .filter(|&p| (0..2 * d).contains(&p) && holes >> p & 1 == 0)
            .map(|p| p as u32)
            .take(cuts as usize)
            .collect();
        cuts.sort_unstable();
        let cut_mask = cuts.iter().fold(0u64, |m, &p| m | 1 << p);
        Shape {
            layout: Layout::new(geo.key_bits(), holes | cut_mask, CHUNK_BITS),
            cuts,
        }
    }
}

/// Sieve cut bits per board size (more keys per split: more buckets pay).
fn cut_count(n: u32) -> u32 {
    match n {
        // Measured on sampled tasks (tests.rs `cut_timing`): cuts cost time up to N = 19,
        // 4 cuts were fastest at N = 20 (1.7× over none); larger N have more keys per split.
        0..=19 => 0,
        20..=21 => 4,
        22..=23 => 5,
        _ => 6,
    }
}

impl Context {
    /// The shared context of an `n`×`n` plan with the default sieve cuts.
    pub fn new(n: u32, level: Level) -> Self {
        Self::with_cuts(n, level, cut_count(n))
    }

    /// The shared context of an `n`×`n` plan whose sieves cut on `cuts` key bits.
    pub fn with_cuts(n: u32, level: Level, cuts: u32) -> Self {
        let geo = Geometry::new(n);
        let h = geo.h;
        let shapes = (0..n)
            .map(|y| {
                let holes = if y == 0 {
                    geo.window_bits(n - 1, n - 1)
                } else {
                    geo.window_bits(h + n - 1 - y, h + y)
                };
                Shape::new(&geo, holes, cuts)
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
        }
    }

    /// The weighted number of solutions of `task`.
    pub fn solve(&self, task: Task, s: &mut Scratch) -> u128 {
        if task.y == 0 && self.geo.n.is_multiple_of(2) {
            self.solve_even(task.east, s)
        } else if task.y == 0 {
            self.solve_centre(task.east, s)
        } else {
            self.solve_cross(task.east, task.y, s)
        }
    }

    /// The four quarters of a split for task kind `kind`.
    fn quarters<'a>(
        &'a self,
        kind: usize,
        east: u32,
        west: u32,
        spare: &'a mut [Prepared; 4],
    ) -> [&'a Prepared; 4] {
        let g = &self.geo;
        let rows = quarter_rows(g, east, west);
        let mut i = 0;
        spare.each_mut().map(|p| {
            i += 1;
            self.prepared
                .get(g, &self.cache, (kind, i - 1, rows[i - 1]), p)
        })
    }

    /// Even N (§4.3): diagonal-restricted east halves, west classes with factors.
    fn solve_even(&self, east: u32, s: &mut Scratch) -> u128 {
        let g = &self.geo;
        let (n, free) = (g.n, free_rows(g, 0));
        let ns = ns_weight(east, n);
        let ew = ew_weight(east, n, free);
        let q = self.quarters(EVEN, east, free & !east, &mut s.quarters);
        let wanted = [ew > 0, true, true, true];
        let counts = self.join_task(q, 0, wanted, &self.shapes[0], &mut s.keys);
        let factors = [ew, 2, 2, 4];
        let sum: u64 = counts.iter().zip(factors).map(|(c, f)| c * f).sum();
        u128::from(sum) * u128::from(ns)
    }

    /// Odd N, centre queen: every quarter avoids the long diagonals.
    fn solve_centre(&self, east: u32, s: &mut Scratch) -> u128 {
        let g = &self.geo;
        let (n, free) = (g.n, free_rows(g, 0));
        let weight = ns_weight(east, n) * ew_weight(east, n, free);
        if weight == 0 {
            return 0;
        }
        let q = self.quarters(CENTRE, east, free & !east, &mut s.quarters);
        let wanted = [true, false, false, false];
        let counts = self.join_task(q, 0, wanted, &self.shapes[0], &mut s.keys);
        u128::from(counts[0]) * u128::from(weight)
    }

    /// Builds east and west halves of a prepared split (avoiding the key bits `forbid`),
    /// fills the sieve with the east class-0 keys and counts each wanted west class against
    /// it.
    fn join_task(
        &self,
        q: [&Prepared; 4],
        forbid: u64,
        wanted: [bool; 4],
        shape: &Shape,
        k: &mut Keys,
    ) -> [u64; 4] {
        clear(&mut k.east);
        let spec = HalfSpec {
            north: q[0],
            south: q[1],
            cols: (1u32 << self.geo.h) - 1,
            masks: &self.by_size[q[0].queens() as usize],
            forbid,
            extra: 0,
            wanted: [true, false, false, false],
            level: self.level,
        };
        half::enumerate(&spec, &mut k.east);
        if k.east[0].is_empty() {
            return [0; 4];
        }
        clear(&mut k.west);
        let spec = HalfSpec {
            north: q[2],
            south: q[3],
            masks: &self.by_size[q[2].queens() as usize],
            wanted,
            ..spec
        };
        half::enumerate(&spec, &mut k.west);
        k.count(shape, self.level)
    }

    /// Odd N with queens at (h, x) and (y, h) for every h < x < y: weight 8 each.
    fn solve_cross(&self, east: u32, y: u32, s: &mut Scratch) -> u128 {
        let g = &self.geo;
        let (h, free) = (g.h, free_rows(g, y));
        let west = free & !east;
        // The (y, h) queen: in-window diagonals are key bits every half must avoid; for
        // y = N − 1 they fall outside the window and the quarters are filtered directly.
        let ybits = g.window_bits(h + g.n - 1 - y, h + y);
        let q = if y == g.n - 1 {
            self.cross_quarters_edge(east, west, y, &mut s.quarters)
        } else {
            self.quarters(CROSS, east, west, &mut s.quarters)
        };
        let k = &mut s.keys;
        let shape = &self.shapes[y as usize];
        clear(&mut k.east);
        let full = (1u32 << h) - 1;
        let spec = HalfSpec {
            north: q[0],
            south: q[1],
            cols: full,
            masks: &self.by_size[q[0].queens() as usize],
            forbid: ybits,
            extra: 0,
            wanted: [true, false, false, false],
            level: self.level,
        };
        half::enumerate(&spec, &mut k.east);
        if k.east[0].is_empty() {
            return 0;
        }
        clear(&mut k.west);
        for x in h + 1..y {
            // The (h, x) queen's diagonals are key bits of every west quarter: west halves
            // must avoid them, and they join each west key to rule out clashing east keys.
            let xbits = g.window_bits(x + h, x + h);
            let spec = HalfSpec {
                north: q[2],
                south: q[3],
                cols: full & !(1 << (x - g.c)),
                masks: &self.by_size[q[2].queens() as usize],
                forbid: ybits | xbits,
                extra: xbits,
                ..spec
            };
            half::enumerate(&spec, &mut k.west);
        }
        u128::from(k.count(shape, self.level)[0]) * 8
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
            p.prepare(g, q, &self.cache.get(rows[i]), raw, Side::forbid(0));
        }
        spare.each_ref()
    }
}

/// The quarter filters of each task kind of an `n`×`n` board.
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

impl Keys {
    /// Fills the sieve with the east keys and counts every west class against it.
    fn count(&mut self, shape: &Shape, level: Level) -> [u64; 4] {
        let mut counts = [0u64; 4];
        self.sieve
            .fill(&self.east[0], &shape.layout, &shape.cuts, level);
        let groups: [&[u64]; 4] = self.west.each_ref().map(|v| v.as_slice());
        self.sieve.count_groups(&groups, &mut counts, level);
        counts
    }
}

/// Empties every key list, keeping the buffers.
fn clear(lists: &mut [Vec<u64>; 4]) {
    lists.iter_mut().for_each(Vec::clear);
}

#[cfg(test)]
impl Context {
    /// Even N without any symmetry: the number of solutions whose east rows are `east`.
    pub fn solve_plain(&self, east: u32, s: &mut Scratch) -> u64 {
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
            p.prepare(g, QUARTERS[i], &list, (0, 0), Side::forbid(0));
        }
        let wanted = [true, false, false, false];
        let shape = Shape::new(g, 0, 2);
        let q = s.quarters.each_ref();
        self.join_task(q, 0, wanted, &shape, &mut s.keys)[0]
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
