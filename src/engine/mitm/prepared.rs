//! Quarter lists converted to key-space words, filtered and classified, ready to join.
//!
//! A task reads four quarters, each a row mask's placement list seen through one quarter's
//! offsets and one filter ([`Side`]). For most tasks the filter depends only on the kind of
//! task, so [`PreparedCache`] keeps each (kind, quarter, row mask) once it is built, for
//! boards up to N = 19; larger boards rebuild them per task, which is cheap next to the task.
//! A unit of a split (N ≥ 28) counts and samples its large quarters first and writes them
//! once the split's hot bits say which words its pieces can meet ([`Prepared::fill`]).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

use super::key::{Geometry, Quarter, SENTINEL};
use super::quarter::{Placement, Placements, QuarterCache, QuarterList};

/// Largest quarter size whose prepared lists are cached (h = 9: about 20 MB per kind).
const MAX_CACHED_H: u32 = 9;

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
    /// Converts the placements `list` (quarter `q`) to words, dropping those that touch the
    /// local diagonals `raw_forbid` or the key bits `side.forbid`, and classifying by
    /// `side.split`. Each class goes to a buffer of exactly its size (8 bytes per kept
    /// placement); a buffer far larger than the task needs is given back, so one huge
    /// quarter does not pin its memory for the rest of the run.
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
    fn prepare_with(
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

    /// Whether the words wait for [`Prepared::fill`].
    pub(crate) fn is_pending(&self) -> bool {
        self.pending.is_some() && !self.filled
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

    /// Whether the words are written by [`Prepared::fill`] (once counted lazily, a quarter
    /// stays so for every unit of its task).
    pub(crate) fn is_lazy(&self) -> bool {
        self.pending.is_some()
    }

    /// Which (column mask, pattern of the key bits `fixed`) groups hold a word without a
    /// bit of `drop` ([`Partners`]).
    pub(crate) fn partners(&self, fixed: u64, drop: u64) -> Partners {
        let masks = (self.offsets[0].len() - 1) >> self.hot.len();
        let mut partners = Partners::new(masks, fixed);
        for class in 0..2 {
            for cols in 0..masks as u32 {
                for &w in self.get(class, cols).iter().filter(|&&w| w & drop == 0) {
                    partners.insert(cols, w);
                }
            }
        }
        partners
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

    /// Takes the samples [`Prepared::take_samples`] would take from the written words, by
    /// walking the placements again: the same words, since a group's words are written in
    /// walk order. The group starts must already be set.
    fn sample_walk(&mut self, list: Placements<'_>, word: impl Fn(&Placement) -> u64, side: Side) {
        let groups = self.offsets[0].len() - 1;
        let mut stride = [vec![0u32; groups], vec![0u32; groups]];
        for (class, stride) in stride.iter_mut().enumerate() {
            let o = &self.offsets[class];
            let (at, of) = (&mut self.sample_at[class], &mut self.sample_of[class]);
            at.clear();
            at.push(0);
            of.clear();
            for (c, g) in o.windows(2).enumerate() {
                let len = g[1] - g[0];
                let step = (len / SAMPLE as u32).max(1);
                stride[c] = step;
                of.push(len);
                at.push(at[c] + len.div_ceil(step));
            }
            self.samples[class].clear();
            self.samples[class].resize(at[groups] as usize, 0);
        }
        let mut seen = [vec![0u32; groups], vec![0u32; groups]];
        list.each(|c, p| {
            let w = word(&p);
            if w & side.forbid != 0 {
                return;
            }
            let (k, c) = (usize::from(w & side.split != 0), c as usize);
            let i = seen[k][c];
            seen[k][c] += 1;
            if i.is_multiple_of(stride[k][c]) {
                let at = self.sample_at[k][c] + i / stride[k][c];
                self.samples[k][at as usize] = w;
            }
        });
    }

    /// Keeps about [`SAMPLE`] words per group (column mask and class), spread over it.
    fn take_samples(&mut self) {
        for class in 0..2 {
            let (o, words) = (&self.offsets[class], &self.words[class]);
            let (samples, at) = (&mut self.samples[class], &mut self.sample_at[class]);
            let of = &mut self.sample_of[class];
            samples.clear();
            at.clear();
            at.push(0);
            of.clear();
            for group in o.windows(2) {
                let group = &words[group[0] as usize..group[1] as usize];
                of.push(group.len() as u32);
                samples.extend(group.iter().step_by((group.len() / SAMPLE).max(1)));
                at.push(samples.len() as u32);
            }
        }
    }

    /// About [`SAMPLE`] words of class `class` with column mask `cols`, the same whatever the
    /// quarter was grouped by since: a task's hot bits are chosen from them
    /// ([`super::piece::hot_bits`]), and every unit of a split, on whichever thread or
    /// machine, must choose the same ones.
    pub(crate) fn sampled(&self, class: usize, cols: u32) -> &[u64] {
        let (at, c) = (&self.sample_at[class], cols as usize);
        &self.samples[class][at[c] as usize..at[c + 1] as usize]
    }

    /// The number of words of class `class` with column mask `cols` that
    /// [`Prepared::sampled`] was taken from: before any filter of [`Prepared::fill`].
    pub(crate) fn sampled_of(&self, class: usize, cols: u32) -> usize {
        self.sample_of[class][cols as usize] as usize
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

    /// A number that changes whenever the words do, unique across quarters.
    #[cfg_attr(not(feature = "gpu"), allow(dead_code))]
    pub(crate) fn stamp(&self) -> u64 {
        self.stamp
    }

    /// The words of class `class` with column mask `cols` whose hot bits (those of the last
    /// [`Prepared::group_by`]) are exactly `pattern` (bit i: the i-th hot bit).
    pub(crate) fn get_group(&self, class: usize, cols: u32, pattern: u32) -> &[u64] {
        let o = &self.offsets[class];
        let g = (cols as usize) << self.hot.len() | pattern as usize;
        &self.words[class][o[g] as usize..o[g + 1] as usize]
    }

    /// Regroups the words within each column mask by their pattern of the key bits `hot`
    /// (at most [`MAX_HOT`]), so that [`Prepared::get_group`] finds the words of one pattern.
    /// [`Prepared::get`] still returns every word of a column mask.
    pub(crate) fn group_by(&mut self, hot: &[u32]) {
        assert!(hot.len() <= MAX_HOT, "at most {MAX_HOT} hot bits");
        if self.hot == hot {
            return;
        }
        self.stamp = next_stamp();
        let (old_k, k) = (self.hot.len(), hot.len());
        let masks = (self.offsets[0].len() - 1) >> old_k;
        let mut scratch = Vec::new();
        for class in 0..2 {
            // Each column mask's words are contiguous: sort them by pattern in place,
            // through a scratch buffer as large as the largest group.
            let old = std::mem::take(&mut self.offsets[class]);
            let mut offsets = vec![0u32; (masks << k) + 1];
            for cols in 0..masks {
                let range = old[cols << old_k] as usize..old[(cols + 1) << old_k] as usize;
                let group = &mut self.words[class][range.clone()];
                let mut counts = [0u32; 1 << MAX_HOT];
                for &w in group.iter() {
                    counts[pattern(w, hot) as usize] += 1;
                }
                let mut at = [0u32; 1 << MAX_HOT];
                let mut sum = range.start as u32;
                for p in 0..1usize << k {
                    offsets[cols << k | p] = sum;
                    at[p] = sum - range.start as u32;
                    sum += counts[p];
                }
                scratch.clear();
                scratch.resize(group.len(), 0);
                for &w in group.iter() {
                    let p = pattern(w, hot) as usize;
                    scratch[at[p] as usize] = w;
                    at[p] += 1;
                }
                group.copy_from_slice(&scratch);
            }
            offsets[masks << k] = old[masks << old_k];
            self.offsets[class] = offsets;
        }
        self.hot = hot.to_vec();
    }
}

/// No blocked diagonal: every placement of a walk.
const NONE: Placement = Placement { a: 0, b: 0 };

/// Keeps every word of a walk ([`Prepared::fill`]).
pub(crate) const ANY: fn(u32, u64) -> bool = |_, _| true;

/// The (column mask, pattern) groups of one west quarter's words, for a unit whose stored
/// halves all have the same pattern of its fixed hot bits: a word of the other west quarter
/// can only join a word whose column mask complements its own and whose pattern supplies
/// the fixed bits it lacks. The other quarter is written without the words that have no
/// such partner: the unit whose fixed bits are all set drops no word by its pattern, and
/// would otherwise hold the whole quarter.
#[derive(Debug)]
pub(crate) struct Partners {
    /// The fixed key bits, as a mask and in pattern order.
    fixed: u64,
    bits: Vec<u32>,
    /// One bit per (column mask, pattern of `bits`): whether a word has them.
    groups: Vec<u64>,
}

impl Partners {
    /// No group yet, for words of `masks` column masks and patterns of the key bits `fixed`.
    fn new(masks: usize, fixed: u64) -> Self {
        let bits: Vec<u32> = (0..64).filter(|&b| fixed >> b & 1 == 1).collect();
        Partners {
            fixed,
            groups: vec![0; (masks << bits.len()).div_ceil(64)],
            bits,
        }
    }

    /// The slot of a word with column mask `cols` and the fixed bits `bits` (a subset).
    fn slot(&self, cols: u32, bits: u64) -> usize {
        (cols as usize) << self.bits.len() | pattern(bits, &self.bits) as usize
    }

    /// Notes a word with column mask `cols`.
    fn insert(&mut self, cols: u32, word: u64) {
        let slot = self.slot(cols, word & self.fixed);
        self.groups[slot / 64] |= 1 << (slot % 64);
    }

    /// Whether a word with column mask `cols` has the fixed bits `bits` (a subset).
    fn has(&self, cols: u32, bits: u64) -> bool {
        let slot = self.slot(cols, bits);
        self.groups[slot / 64] >> (slot % 64) & 1 == 1
    }

    /// Whether `word` (column mask `cols`), in a half whose free columns are one of `halves`
    /// and whose fixed bits are `set`, has a partner: a noted word with the other columns
    /// and exactly the fixed bits of `set` that `word` lacks.
    pub(crate) fn pairs(&self, cols: u32, word: u64, set: u64, halves: &[u32]) -> bool {
        let wanted = set & !word & self.fixed;
        halves
            .iter()
            .any(|&free| cols & !free == 0 && self.has(free ^ cols, wanted))
    }
}

/// Most hot bits a prepared quarter is grouped by (64 groups per column mask).
pub(crate) const MAX_HOT: usize = 6;

/// Kept words a quarter's walk buffers (10 bytes each, per thread): a quarter with no more is
/// walked once, a larger one twice (N = 26 and up). Tests take the second way from N = 22.
const WALK_BUFFER: usize = if cfg!(test) { 1 << 12 } else { 1 << 20 };

/// Words sampled per group (column mask and class) to estimate how often each key bit is set.
const SAMPLE: usize = 8;

/// The pattern of the key bits `hot` in `word`: bit i is bit `hot[i]` of the word.
pub(crate) fn pattern(word: u64, hot: &[u32]) -> u32 {
    hot.iter()
        .enumerate()
        .fold(0, |p, (i, &bit)| p | ((word >> bit) as u32 & 1) << i)
}

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
fn fit(words: &mut Vec<u64>, len: usize) {
    words.clear();
    if words.capacity() > 2 * len + (1 << 16) {
        words.shrink_to(len);
    }
    words.reserve_exact(len);
}

/// Prepared quarters by (kind, quarter, row mask), for the task kinds whose filters do not
/// depend on the task.
#[derive(Debug)]
pub(crate) struct PreparedCache {
    /// Tells this cache's copies from another plan's: a thread's scratch outlives plans, and
    /// two boards with the same h (N = 20 and 21) share kind slots and row masks.
    id: u64,
    h: u32,
    kinds: Vec<[Side; 4]>,
    slots: Vec<OnceLock<Prepared>>,
}

impl PreparedCache {
    /// A cache for the given kinds (each: the four quarters' filters); empty for large h.
    pub(crate) fn new(h: u32, kinds: Vec<[Side; 4]>) -> Self {
        let slots = if h <= MAX_CACHED_H {
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
        let side = self.kinds[kind][i];
        let list = lists.get(rows);
        let build = |p: &mut Prepared| p.prepare_with(geo, QUARTERS[i], list, (0, 0), side, lazy);
        match self.slots.get(((kind * 4 + i) << self.h) + rows as usize) {
            Some(slot) => slot.get_or_init(|| {
                let mut p = Prepared::default();
                build(&mut p);
                p.shrink();
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grouping_by_hot_bits_keeps_every_word_and_finds_each_pattern() {
        let g = Geometry::new(16);
        let list = QuarterList::generate(g.h, 0b1011_0101);
        let mut p = Prepared::default();
        p.prepare(
            &g,
            Quarter::Nw,
            Placements::List(&list),
            (0, 0),
            Side::split(1 << 20),
        );
        let sorted = |w: &[u64]| {
            let mut w = w.to_vec();
            w.sort_unstable();
            w
        };
        let every = |p: &Prepared| -> Vec<Vec<u64>> {
            (0..2)
                .flat_map(|class| (0..1u32 << g.h).map(move |cols| (class, cols)))
                .map(|(class, cols)| sorted(p.get(class, cols)))
                .collect()
        };
        let before = every(&p);
        let samples = |p: &Prepared| -> Vec<Vec<u64>> {
            (0..2)
                .flat_map(|class| (0..1u32 << g.h).map(move |cols| (class, cols)))
                .map(|(class, cols)| p.sampled(class, cols).to_vec())
                .collect()
        };
        let sampled = samples(&p);
        assert!(p.len() > 100);
        for hot in [&[5u32, 17, 22][..], &[1, 2, 3, 4, 5, 6], &[9], &[]] {
            p.group_by(hot);
            assert_eq!(every(&p), before, "{hot:?}");
            // Hot bits come from the samples: regrouping must not change them.
            assert_eq!(samples(&p), sampled, "{hot:?}");
            for (class, cols) in [(0, 0b1110_0010), (1, 0b0111_0100), (0, 0b1111_0000)] {
                let mut joined = Vec::new();
                for pattern in 0..1u32 << hot.len() {
                    let group = p.get_group(class, cols, pattern);
                    assert!(group.iter().all(|&w| super::pattern(w, hot) == pattern));
                    joined.extend_from_slice(group);
                }
                assert_eq!(joined, p.get(class, cols), "{hot:?}");
            }
        }
    }

    #[test]
    fn a_quarter_filled_against_its_partner_keeps_exactly_the_words_that_pair() {
        // N = 22: a west quarter too large for the tests' walk buffer, written for units
        // with three fixed key bits, against the other west quarter written whole.
        let g = Geometry::new(22);
        let cache = QuarterCache::new(g.h);
        let all = (1u32 << g.h) - 1;
        let (north_rows, south_rows) = (0b000_0011_0001u32, 0b111_1111_0000);
        let mut north = Prepared::default();
        north.prepare(
            &g,
            QUARTERS[2],
            cache.get(north_rows),
            (0, 0),
            Side::forbid(0),
        );
        let fixed = 1u64 << 4 | 1 << 9 | 1 << 30;
        let (mut dropped, mut kept) = (0, 0);
        for set in [0, 1 << 9, fixed & !(1 << 4), fixed] {
            let drop = fixed & !set;
            let mut south = Prepared::default();
            let rows = cache.get(south_rows);
            south.prepare_with(&g, QUARTERS[3], rows, (0, 0), Side::forbid(0), true);
            assert!(south.is_pending());
            let partners = north.partners(fixed, drop);
            south.fill(drop, |c, w| partners.pairs(c, w, set, &[all, all & !2]));
            let mut plain = Prepared::default();
            plain.prepare(&g, QUARTERS[3], rows, (0, 0), Side::forbid(drop));
            let pairs = |c: u32, w: u64| {
                [all, all & !2].iter().any(|&free| {
                    c & !free == 0
                        && (0..2).any(|k| {
                            north
                                .get(k, free ^ c)
                                .iter()
                                .any(|&v| v & drop == 0 && v & fixed == set & !w & fixed)
                        })
                })
            };
            for class in 0..2 {
                for c in 0..=all {
                    let expected: Vec<u64> = (plain.get(class, c).iter())
                        .copied()
                        .filter(|&w| pairs(c, w))
                        .collect();
                    assert_eq!(south.get(class, c), expected, "set {set:x}, cols {c:b}");
                    kept += expected.len();
                    dropped += plain.get(class, c).len() - expected.len();
                }
            }
        }
        assert!(
            kept > 1000 && dropped > 1000,
            "kept {kept}, dropped {dropped}"
        );
    }

    #[test]
    fn a_lazy_quarter_filled_equals_one_prepared_with_its_filter() {
        let mut deferred = 0;
        for n in [22, 23] {
            let g = Geometry::new(n);
            let cache = QuarterCache::new(g.h);
            let anti = g.window_bits(0, n - 1);
            let sides = [
                Side::forbid(0),
                Side::split(anti),
                Side::forbid(1 << 7 | 1 << 30),
            ];
            for (i, rows) in [0b101_1001_0110u32, 0b111_1111_0000, 0b110_0110_0111, 0b1]
                .into_iter()
                .enumerate()
            {
                let (q, side) = (QUARTERS[i % 4], sides[i % 3]);
                let mut full = Prepared::default();
                full.prepare(&g, q, cache.get(rows), (0, 0), side);
                for drop in [0, 1 << 3, 1 << 12 | 1 << 25 | 1 << 33] {
                    let mut lazy = Prepared::default();
                    lazy.prepare_with(&g, q, cache.get(rows), (0, 0), side, true);
                    let pending = lazy.is_pending();
                    deferred += usize::from(pending);
                    assert_eq!(lazy.len(), full.len(), "N = {n}, rows {rows:b}");
                    lazy.fill(drop, ANY);
                    assert!(!lazy.is_pending());
                    // The samples are the whole quarter's, whatever the fill dropped.
                    assert_eq!(lazy.samples, full.samples);
                    assert_eq!(lazy.sample_at, full.sample_at);
                    assert_eq!(lazy.sample_of, full.sample_of);
                    let mut filtered = Prepared::default();
                    let forbid = side.forbid | drop;
                    filtered.prepare(&g, q, cache.get(rows), (0, 0), Side { forbid, ..side });
                    // A quarter that fits one walk is written whole at once.
                    let expected = if pending { &filtered } else { &full };
                    assert_eq!(
                        lazy.words, expected.words,
                        "N = {n}, rows {rows:b}, {drop:x}"
                    );
                    assert_eq!(lazy.offsets, expected.offsets);
                }
            }
        }
        assert!(deferred >= 6, "only {deferred} quarters were deferred");
    }

    #[test]
    fn quarters_prepared_from_the_search_equal_those_from_a_kept_list() {
        // h = 11 (N = 22, 23): the smallest quarters that are searched per task.
        for n in [22, 23] {
            let g = Geometry::new(n);
            let cache = QuarterCache::new(g.h);
            assert!(!cache.is_cached());
            let (main, anti) = (g.window_bits(n - 1, 0), g.window_bits(0, n - 1));
            let sides = [Side::forbid(main), Side::split(anti), Side::forbid(0)];
            for (i, rows) in [0b101_1001_0110u32, 0b111_1111_0000, 0b1, 0]
                .into_iter()
                .enumerate()
            {
                let list = QuarterList::generate(g.h, rows);
                let (q, side) = (QUARTERS[i % 4], sides[i % 3]);
                for raw in [(0, 0), g.forbidden(q, n - 1, g.h)] {
                    let (mut kept, mut searched) = (Prepared::default(), Prepared::default());
                    kept.prepare(&g, q, Placements::List(&list), raw, side);
                    searched.prepare(&g, q, cache.get(rows), raw, side);
                    assert_eq!(searched.words, kept.words, "N = {n}, rows {rows:b}");
                    assert_eq!(searched.offsets, kept.offsets);
                    assert_eq!(searched.samples, kept.samples);
                    assert_eq!(searched.queens(), rows.count_ones());
                }
            }
        }
    }

    #[test]
    fn a_buffer_far_larger_than_needed_is_given_back() {
        let mut huge: Vec<u64> = Vec::with_capacity(1 << 20);
        huge.push(7);
        fit(&mut huge, 10);
        assert!(huge.is_empty());
        assert!((10..1 << 19).contains(&huge.capacity()));
        let mut small: Vec<u64> = Vec::with_capacity(1000);
        fit(&mut small, 10);
        assert_eq!(
            small.capacity(),
            1000,
            "a modest buffer is kept for the next task"
        );
        fit(&mut small, 5000);
        assert!(small.capacity() >= 5000);
    }
}
