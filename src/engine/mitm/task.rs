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

use std::borrow::Cow;

use super::half::{self, Buffers, HalfSpec, Side, Words};
use super::key::{Geometry, Quarter};
use super::matcher::{Layout, Sieve};
use super::quarter::{QuarterCache, QuarterList};
use super::simd::Level;

/// Matcher chunk width (usable key bits per table lookup).
const CHUNK_BITS: u32 = 5;

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
    words: [Vec<u64>; 4],
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
    /// Matcher layout per middle-column queen row `y` (index 0: even N and centre tasks).
    pub layouts: Vec<Layout>,
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

/// The four quarters in task order: east north/south, west north/south.
const QUARTERS: [Quarter; 4] = [Quarter::Ne, Quarter::Se, Quarter::Nw, Quarter::Sw];

impl Context {
    /// The shared context of an `n`×`n` plan.
    pub fn new(n: u32, level: Level) -> Self {
        let geo = Geometry::new(n);
        let (h, bits) = (geo.h, geo.key_bits());
        let layouts = (0..n)
            .map(|y| {
                let holes = if y == 0 {
                    geo.window_bits(n - 1, n - 1)
                } else {
                    geo.window_bits(h + n - 1 - y, h + y)
                };
                Layout::new(bits, holes, CHUNK_BITS)
            })
            .collect();
        Context {
            geo,
            cache: QuarterCache::new(h),
            level,
            layouts,
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

    /// The quarter lists of a split and their key-space words (in `words`); `forbid(q)` gives
    /// the local diagonals each quarter must avoid outside the key window.
    fn quarters<'a>(
        &'a self,
        east: u32,
        west: u32,
        forbid: impl Fn(Quarter) -> (u32, u32),
        words: &mut [Vec<u64>; 4],
    ) -> [Cow<'a, QuarterList>; 4] {
        let g = &self.geo;
        let low = (1u32 << g.h) - 1;
        let rows = [east & low, (east >> g.c) & low, west & low, (west >> g.c) & low];
        let lists = rows.map(|r| self.cache.get(r));
        for i in 0..4 {
            let q = QUARTERS[i];
            g.words(q, lists[i].entries(), forbid(q), &mut words[i]);
        }
        lists
    }

    /// Even N (§4.3): diagonal-restricted east halves, west classes with factors.
    fn solve_even(&self, east: u32, s: &mut Scratch) -> u128 {
        let g = &self.geo;
        let (n, free) = (g.n, free_rows(g, 0));
        let ns = ns_weight(east, n);
        let ew = ew_weight(east, n, free);
        // The long diagonals' key bits: A = N − 1 (main), B = N − 1 (anti).
        let (main, anti) = (g.window_bits(n - 1, 0), g.window_bits(0, n - 1));
        let sides = [
            Side::forbid(main),
            Side::forbid(anti),
            Side::split(anti),
            Side::split(main),
        ];
        let wanted = [ew > 0, true, true, true];
        let lists = self.quarters(east, free & !east, |_| (0, 0), &mut s.words);
        let counts = self.join_task(&lists, sides, wanted, &self.layouts[0], s);
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
        let sides = [Side::forbid(g.window_bits(n - 1, n - 1)); 4];
        let wanted = [true, false, false, false];
        let lists = self.quarters(east, free & !east, |_| (0, 0), &mut s.words);
        let counts = self.join_task(&lists, sides, wanted, &self.layouts[0], s);
        u128::from(counts[0]) * u128::from(weight)
    }

    /// Builds east and west halves of a split, fills the sieve with the east class-0 keys and
    /// counts each wanted west class against it.
    fn join_task(
        &self,
        lists: &[Cow<'_, QuarterList>; 4],
        sides: [Side; 4],
        wanted: [bool; 4],
        layout: &Layout,
        s: &mut Scratch,
    ) -> [u64; 4] {
        let w = |i: usize| Words {
            list: &lists[i],
            words: &s.words[i],
        };
        clear(&mut s.east);
        let spec = HalfSpec {
            north: (w(0), sides[0]),
            south: (w(1), sides[1]),
            cols: (1u32 << self.geo.h) - 1,
            extra: 0,
            wanted: [true, false, false, false],
            level: self.level,
        };
        half::enumerate(&spec, &mut s.bufs, &mut s.east);
        if s.east[0].is_empty() {
            return [0; 4];
        }
        clear(&mut s.west);
        let spec = HalfSpec {
            north: (w(2), sides[2]),
            south: (w(3), sides[3]),
            wanted,
            ..spec
        };
        half::enumerate(&spec, &mut s.bufs, &mut s.west);
        count(&s.east[0], &s.west, layout, self.level, &mut s.sieve)
    }

    /// Odd N with queens at (h, x) and (y, h) for every h < x < y: weight 8 each.
    fn solve_cross(&self, east: u32, y: u32, s: &mut Scratch) -> u128 {
        let g = &self.geo;
        let (h, free) = (g.h, free_rows(g, y));
        let lists = self.quarters(east, free & !east, |q| g.forbidden(q, y, h), &mut s.words);
        let w = |i: usize| Words {
            list: &lists[i],
            words: &s.words[i],
        };
        let full = (1u32 << h) - 1;
        clear(&mut s.east);
        let spec = HalfSpec {
            north: (w(0), Side::forbid(0)),
            south: (w(1), Side::forbid(0)),
            cols: full,
            extra: 0,
            wanted: [true, false, false, false],
            level: self.level,
        };
        half::enumerate(&spec, &mut s.bufs, &mut s.east);
        if s.east[0].is_empty() {
            return 0;
        }
        clear(&mut s.west);
        for x in h + 1..y {
            // The (h, x) queen's diagonals are key bits of every west quarter: west halves
            // must avoid them, and they join each west key to rule out clashing east keys.
            let xbits = g.window_bits(x + h, x + h);
            let spec = HalfSpec {
                north: (w(2), Side::forbid(xbits)),
                south: (w(3), Side::forbid(xbits)),
                cols: full & !(1 << (x - g.c)),
                extra: xbits,
                ..spec
            };
            half::enumerate(&spec, &mut s.bufs, &mut s.west);
        }
        let layout = &self.layouts[y as usize];
        u128::from(count(&s.east[0], &s.west, layout, self.level, &mut s.sieve)[0]) * 8
    }
}

/// Fills `sieve` with `east` and counts every west class against it.
fn count(
    east: &[u64],
    west: &[Vec<u64>; 4],
    layout: &Layout,
    level: Level,
    sieve: &mut Sieve,
) -> [u64; 4] {
    let mut counts = [0u64; 4];
    sieve.fill(east, layout, level);
    let groups: Vec<&[u64]> = west.iter().map(|v| v.as_slice()).collect();
    sieve.count_groups(&groups, &mut counts, level);
    counts
}

/// Empties every key list, keeping the buffers.
fn clear(lists: &mut [Vec<u64>; 4]) {
    lists.iter_mut().for_each(Vec::clear);
}

#[cfg(test)]
impl Context {
    /// Even N without any symmetry: the number of solutions whose east rows are `east`.
    pub fn solve_plain(&self, east: u32, s: &mut Scratch) -> u64 {
        let west = free_rows(&self.geo, 0) & !east;
        let lists = self.quarters(east, west, |_| (0, 0), &mut s.words);
        let sides = [Side::forbid(0); 4];
        let wanted = [true, false, false, false];
        let layout = Layout::new(self.geo.key_bits(), 0, CHUNK_BITS);
        self.join_task(&lists, sides, wanted, &layout, s)[0]
    }
}
