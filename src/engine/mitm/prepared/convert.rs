//! Writing a quarter's words: from a kept list or from the search, at once or, for a unit
//! of a split, lazily once its filter is known.

use super::{next_stamp, Pending, Prepared, Side};
use crate::engine::mitm::key::{Geometry, Quarter};
use crate::engine::mitm::quarter::{Placement, Placements, QuarterList};

impl Prepared {
    /// Converts the placements `list` (quarter `q`) to words, dropping those that touch the
    /// local diagonals `raw_forbid` or the key bits `side.forbid`, and classifying by
    /// `side.split`. Each class goes to a buffer of exactly its size (8 bytes per kept
    /// placement); a buffer far larger than the task needs is given back, so one huge
    /// quarter does not pin its memory for the rest of the run.
    #[cfg(test)]
    pub(crate) fn prepare(
        &mut self,
        geo: &Geometry,
        q: Quarter,
        list: Placements<'_>,
        raw_forbid: (u32, u32),
        side: Side,
    ) {
        self.prepare_with(geo, q, list, raw_forbid, side, false);
    }

    /// [`Prepared::prepare`]; with `lazy`, a searched quarter too large for one walk's
    /// buffer is only counted and sampled: its words wait for [`Prepared::fill`], which can
    /// then keep only those a unit of a split uses. Its group sizes ([`Prepared::len`]) and
    /// samples are the unfiltered quarter's, so the split's hot bits come out the same.
    pub(super) fn prepare_with(
        &mut self,
        geo: &Geometry,
        q: Quarter,
        list: Placements<'_>,
        raw_forbid: (u32, u32),
        side: Side,
        lazy: bool,
    ) {
        self.built_for = None;
        self.stamp = next_stamp();
        self.pending = None;
        self.filled = false;
        self.hot.clear();
        self.queens = list.rows().count_ones();
        let word = geo.words(q, raw_forbid);
        match list {
            Placements::List(list) => self.convert_list(list, geo.h, word, side),
            Placements::Search { rows, .. } if lazy => {
                if !self.convert_walks((list, NONE), geo.h, &word, side, ANY, true) {
                    self.sample_walk(list, &word, side);
                    self.pending = Some(Pending {
                        geo: *geo,
                        q,
                        rows,
                        side,
                    });
                    return;
                }
            }
            Placements::Search { .. } => {
                self.convert_walks((list, NONE), geo.h, word, side, ANY, false);
            }
        }
        self.take_samples();
    }
    /// Writes the words of a quarter that a lazy [`Prepared::prepare_with`] only counted, less
    /// those with a bit of `drop` and those `keep` (given a word's column mask and the word)
    /// turns down, ungrouped; again, with another filter, where it was written so before. A
    /// quarter written whole when prepared is left as it is. The samples stay the unfiltered
    /// quarter's.
    pub(crate) fn fill(&mut self, drop: u64, keep: impl Fn(u32, u64) -> bool) {
        let Some(p) = self.pending else {
            return;
        };
        self.filled = true;
        self.hot.clear();
        let list = Placements::Search {
            h: p.geo.h,
            rows: p.rows,
        };
        let side = Side {
            forbid: p.side.forbid | drop,
            ..p.side
        };
        // The walk skips every cell on a dropped diagonal, and strips them from the words.
        let (a, b) = p.geo.local_diagonals(p.q, drop);
        let word = p.geo.words(p.q, (0, 0));
        let strip = |x: &Placement| {
            word(&Placement {
                a: x.a & !a,
                b: x.b & !b,
            })
        };
        let walk = (list, Placement { a, b });
        self.convert_walks(walk, p.geo.h, strip, side, keep, false);
        self.stamp = next_stamp();
    }
    /// [`Prepared::prepare`] from a kept list (h ≤ 10, at most a few hundred thousand
    /// placements): the words are computed once into a per-thread buffer, each class is
    /// counted, then written column mask by column mask (the list is grouped so).
    fn convert_list(
        &mut self,
        list: &QuarterList,
        h: u32,
        word: impl Fn(&Placement) -> u64,
        side: Side,
    ) {
        let class = |w: u64| {
            let keep = usize::from(w & side.forbid == 0);
            let one = usize::from(w & side.split != 0);
            (keep & (one ^ 1), keep & one)
        };
        WORDS.with_borrow_mut(|all| {
            fit(all, list.len());
            all.extend(list.entries().iter().map(word));
            let mut sizes = [0usize; 2];
            for &w in all.iter() {
                let (zero, one) = class(w);
                sizes[0] += zero;
                sizes[1] += one;
            }
            // One spare slot per class: every word is written, only kept ones advance.
            for (words, size) in self.words.iter_mut().zip(sizes) {
                fit(words, size + 1);
                words.resize(size + 1, 0);
            }
            for o in &mut self.offsets {
                o.clear();
                o.push(0);
            }
            let [w0, w1] = &mut self.words;
            let (mut n0, mut n1) = (0usize, 0usize);
            for cols in 0..1u32 << h {
                for &w in &all[list.range(cols)] {
                    let (zero, one) = class(w);
                    // n0 <= sizes[0] and n1 <= sizes[1]: the writes stay in bounds.
                    w0[n0] = w;
                    w1[n1] = w;
                    n0 += zero;
                    n1 += one;
                }
                self.offsets[0].push(n0 as u32);
                self.offsets[1].push(n1 as u32);
            }
            w0.truncate(n0);
            w1.truncate(n1);
        });
    }

    /// [`Prepared::prepare`] from the search (h > 10, up to 11 million placements a row
    /// mask at N = 28), without holding the list: the walk counts each (class, column mask)
    /// group and keeps up to [`WALK_BUFFER`] kept words in a per-thread buffer, from which
    /// they are written in place; a larger quarter is walked a second time to write them.
    /// Nothing else grows with the list.
    ///
    /// With `lazy`, a quarter that overflows the buffer is only counted (its group starts
    /// set, its words released) and `false` returned; otherwise `true`.
    fn convert_walks(
        &mut self,
        (list, blocked): (Placements<'_>, Placement),
        h: u32,
        word: impl Fn(&Placement) -> u64,
        side: Side,
        keep: impl Fn(u32, u64) -> bool,
        lazy: bool,
    ) -> bool {
        debug_assert!(h <= 16, "column masks are kept in 16 bits");
        // The class of a word, or 2 for a dropped one.
        let class = |c: u32, w: u64| {
            let drop = usize::from(w & side.forbid != 0 || !keep(c, w));
            (usize::from(w & side.split != 0)) | drop << 1
        };
        let masks = 1usize << h;
        for o in &mut self.offsets {
            o.clear();
            o.resize(masks + 1, 0);
        }
        let written = WALKED.with_borrow_mut(|(words, cols)| {
            words.clear();
            cols.clear();
            list.each_avoiding(blocked, |c, p| {
                let w = word(&p);
                let k = class(c, w);
                if k < 2 {
                    self.offsets[k][c as usize + 1] += 1;
                    if words.len() < WALK_BUFFER {
                        words.push(w);
                        cols.push(c as u16);
                    }
                }
            });
            // Prefix sums: each group's start, and the class's size at the end.
            for o in &mut self.offsets {
                for i in 1..o.len() {
                    o[i] += o[i - 1];
                }
            }
            let kept = self.offsets[0][masks] as usize + self.offsets[1][masks] as usize;
            if lazy && kept != words.len() {
                self.words.iter_mut().for_each(|w| fit(w, 0));
                return false;
            }
            for (o, words) in self.offsets.iter().zip(&mut self.words) {
                let size = o[masks] as usize;
                fit(words, size);
                words.resize(size, 0);
            }
            // Each group's offset serves as its write cursor, and ends at the next group's
            // start: shifting the offsets by one then restores the starts.
            let mut put = |c: u32, w: u64| {
                let k = class(c, w);
                if k < 2 {
                    let at = &mut self.offsets[k][c as usize];
                    self.words[k][*at as usize] = w;
                    *at += 1;
                }
            };
            if kept == words.len() {
                for (&c, &w) in cols.iter().zip(words.iter()) {
                    put(c.into(), w);
                }
            } else {
                list.each_avoiding(blocked, |c, p| put(c, word(&p)));
            }
            true
        });
        if !written {
            return false;
        }
        for o in &mut self.offsets {
            o.copy_within(0..masks, 1);
            o[0] = 0;
        }
        true
    }
}

/// No blocked diagonal: every placement of a walk.
const NONE: Placement = Placement { a: 0, b: 0 };

/// Keeps every word of a walk ([`Prepared::fill`]).
pub(crate) const ANY: fn(u32, u64) -> bool = |_, _| true;
/// Kept words a quarter's walk buffers (10 bytes each, per thread): a quarter with no more is
/// walked once, a larger one twice (N = 26 and up). Tests take the second way from N = 22.
const WALK_BUFFER: usize = if cfg!(test) { 1 << 12 } else { 1 << 20 };
thread_local! {
    /// Every word of the kept list being prepared, before filtering: one buffer per thread,
    /// shared by the quarters it prepares (as large as the largest kept list).
    static WORDS: std::cell::RefCell<Vec<u64>> = const { std::cell::RefCell::new(Vec::new()) };
    /// A walk's kept words and their column masks ([`Prepared::convert_walks`]).
    static WALKED: std::cell::RefCell<(Vec<u64>, Vec<u16>)> =
        const { std::cell::RefCell::new((Vec::new(), Vec::new())) };
}

/// Empties `words` and makes room for exactly `len` words, giving back a much larger
/// allocation first.
pub(super) fn fit(words: &mut Vec<u64>, len: usize) {
    words.clear();
    if words.capacity() > 2 * len + (1 << 16) {
        words.shrink_to(len);
    }
    words.reserve_exact(len);
}
