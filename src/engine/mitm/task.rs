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

use super::half::{self, Buffers, HalfSpec, Side};
use super::key::{Compactor, Geometry, Quarter};
use super::matcher::Sieve;
use super::quarter::QuarterCache;
use super::simd::Level;

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
    east: [Vec<u64>; 4],
    west: [Vec<u64>; 4],
    bufs: Buffers,
    sieve: Sieve,
}

/// Shared, read-only context of a plan's tasks.
#[derive(Debug)]
pub struct Context {
    /// Board geometry.
    pub geo: Geometry,
    /// Quarter lists.
    pub cache: QuarterCache,
    /// Matcher instruction level.
    pub level: Level,
}

/// The four row masks of a split: east north/south, west north/south (local to quarters).
fn row_parts(geo: &Geometry, east: u32, west: u32) -> [u32; 4] {
    let low = (1u32 << geo.h) - 1;
    [
        east & low,
        (east >> geo.c) & low,
        west & low,
        (west >> geo.c) & low,
    ]
}

/// The rows a task's halves share out: all rows, minus the middle row and `y` for odd N.
pub fn free_rows(geo: &Geometry, y: u32) -> u32 {
    let all = ((1u64 << geo.n) - 1) as u32;
    if geo.n.is_multiple_of(2) {
        all
    } else {
        all & !(1 << geo.h) & !(if y > 0 { 1 << y } else { 0 })
    }
}

/// `mask` with its `n` low bits reversed (row r ↔ row n − 1 − r).
pub fn reverse(mask: u32, n: u32) -> u32 {
    mask.reverse_bits() >> (32 - n)
}

/// North/south weight: 2 if E < rev(E), 1 if equal, 0 otherwise.
pub fn ns_weight(east: u32, n: u32) -> u64 {
    match east.cmp(&reverse(east, n)) {
        std::cmp::Ordering::Less => 2,
        std::cmp::Ordering::Equal => 1,
        std::cmp::Ordering::Greater => 0,
    }
}

/// East/west weight over the free rows: 1 if E and rev(E) agree nowhere, otherwise 2 or 0
/// by whether the first row where they agree is in E.
pub fn ew_weight(east: u32, n: u32, free: u32) -> u64 {
    let agree = !(east ^ reverse(east, n)) & free;
    if agree == 0 {
        1
    } else if east & agree & agree.wrapping_neg() != 0 {
        2
    } else {
        0
    }
}

impl Context {
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

    /// Even N (§4.3): diagonal-restricted east halves, west classes with factors.
    fn solve_even(&self, east: u32, s: &mut Scratch) -> u128 {
        let g = &self.geo;
        let (n, free) = (g.n, free_rows(g, 0));
        let ns = ns_weight(east, n);
        let ew = ew_weight(east, n, free);
        let long = 1u32 << (g.h - 1);
        let holes = g.window_bits(n - 1, n - 1);
        let comp = Compactor::new(g.key_bits(), holes);
        let ne = Side {
            forbid: (long, 0),
            ..Side::plain(Quarter::Ne)
        };
        let se = Side {
            forbid: (0, long),
            ..Side::plain(Quarter::Se)
        };
        let nw = Side {
            split: (0, long),
            ..Side::plain(Quarter::Nw)
        };
        let sw = Side {
            split: (long, 0),
            ..Side::plain(Quarter::Sw)
        };
        let wanted = [ew > 0, true, true, true];
        let counts = self.join_task(east, free & !east, &comp, [ne, se, nw, sw], wanted, s);
        let factors = [ew, 2, 2, 4];
        let sum: u64 = counts.iter().zip(factors).map(|(c, f)| c * f).sum();
        u128::from(sum) * u128::from(ns)
    }

    /// Odd N, centre queen: every quarter avoids the long diagonals.
    fn solve_centre(&self, east: u32, s: &mut Scratch) -> u128 {
        let g = &self.geo;
        let (n, h, free) = (g.n, g.h, free_rows(g, 0));
        let weight = ns_weight(east, n) * ew_weight(east, n, free);
        if weight == 0 {
            return 0;
        }
        let comp = Compactor::new(g.key_bits(), g.window_bits(n - 1, n - 1));
        let sides = [Quarter::Ne, Quarter::Se, Quarter::Nw, Quarter::Sw].map(|q| Side {
            forbid: g.forbidden(q, h, h),
            ..Side::plain(q)
        });
        let wanted = [true, false, false, false];
        let counts = self.join_task(east, free & !east, &comp, sides, wanted, s);
        u128::from(counts[0]) * u128::from(weight)
    }

    /// Builds east and west halves of a split, fills the sieve with the east class-0 keys and
    /// counts each wanted west class against it.
    fn join_task(
        &self,
        east: u32,
        west: u32,
        comp: &Compactor,
        sides: [Side; 4],
        wanted: [bool; 4],
        s: &mut Scratch,
    ) -> [u64; 4] {
        let g = &self.geo;
        let [en, es, wn, ws] = row_parts(g, east, west).map(|r| self.cache.get(r));
        let full = (1u32 << g.h) - 1;
        clear(&mut s.east);
        let spec = HalfSpec {
            geo: g,
            compactor: comp,
            north: (&en, sides[0]),
            south: (&es, sides[1]),
            cols: full,
            extra: 0,
            wanted: [true, false, false, false],
        };
        half::enumerate(&spec, &mut s.bufs, &mut s.east);
        if s.east[0].is_empty() {
            return [0; 4];
        }
        clear(&mut s.west);
        let spec = HalfSpec {
            north: (&wn, sides[2]),
            south: (&ws, sides[3]),
            wanted,
            ..spec
        };
        half::enumerate(&spec, &mut s.bufs, &mut s.west);
        self.count(comp.bits(), s)
    }

    /// Fills the sieve with `s.east[0]` and counts every west class against it.
    fn count(&self, bits: u32, s: &mut Scratch) -> [u64; 4] {
        let mut counts = [0u64; 4];
        s.sieve.fill(&s.east[0], bits, chunk_bits(bits), self.level);
        let groups: Vec<&[u64]> = s.west.iter().map(|v| v.as_slice()).collect();
        s.sieve.count_groups(&groups, &mut counts, self.level);
        counts
    }

    /// Odd N with queens at (h, x) and (y, h) for every h < x < y: weight 8 each.
    fn solve_cross(&self, east: u32, y: u32, s: &mut Scratch) -> u128 {
        let g = &self.geo;
        let (h, free) = (g.h, free_rows(g, y));
        let west = free & !east;
        let comp = Compactor::new(g.key_bits(), g.window_bits(h + g.n - 1 - y, h + y));
        let [en, es, wn, ws] = row_parts(g, east, west).map(|r| self.cache.get(r));
        let yside = |q| Side {
            forbid: g.forbidden(q, y, h),
            ..Side::plain(q)
        };
        let full = (1u32 << h) - 1;
        clear(&mut s.east);
        let spec = HalfSpec {
            geo: g,
            compactor: &comp,
            north: (&en, yside(Quarter::Ne)),
            south: (&es, yside(Quarter::Se)),
            cols: full,
            extra: 0,
            wanted: [true, false, false, false],
        };
        half::enumerate(&spec, &mut s.bufs, &mut s.east);
        if s.east[0].is_empty() {
            return 0;
        }
        clear(&mut s.west);
        for x in h + 1..y {
            let both = |q| {
                let (ya, yb) = g.forbidden(q, y, h);
                let (xa, xb) = g.forbidden(q, h, x);
                Side {
                    forbid: (ya | xa, yb | xb),
                    ..Side::plain(q)
                }
            };
            let spec = HalfSpec {
                north: (&wn, both(Quarter::Nw)),
                south: (&ws, both(Quarter::Sw)),
                cols: full & !(1 << (x - g.c)),
                extra: comp.apply(g.window_bits(x + h, x + h)),
                ..spec
            };
            half::enumerate(&spec, &mut s.bufs, &mut s.west);
        }
        u128::from(self.count(comp.bits(), s)[0]) * 8
    }
}

/// Empties every key list, keeping the buffers.
fn clear(lists: &mut [Vec<u64>; 4]) {
    lists.iter_mut().for_each(Vec::clear);
}

/// Matcher chunk width for keys of `bits` bits.
fn chunk_bits(bits: u32) -> u32 {
    let _ = bits;
    5
}

#[cfg(test)]
impl Context {
    /// Even N without any symmetry: the number of solutions whose east rows are `east`.
    pub fn solve_plain(&self, east: u32, s: &mut Scratch) -> u64 {
        let g = &self.geo;
        let comp = Compactor::new(g.key_bits(), 0);
        let sides = [Quarter::Ne, Quarter::Se, Quarter::Nw, Quarter::Sw].map(Side::plain);
        let wanted = [true, false, false, false];
        let west = free_rows(g, 0) & !east;
        self.join_task(east, west, &comp, sides, wanted, s)[0]
    }
}
