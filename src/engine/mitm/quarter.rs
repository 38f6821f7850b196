//! Quarter placements, generated on demand per row mask.
//!
//! A quarter is an h×h board. A placement puts one queen on each row of a row mask `R` (the
//! other rows stay empty) with no two queens attacking; it is recorded by its column mask `C`
//! and its local diagonal masks `a` (bit `j − i + h − 1`) and `b` (bit `i + j`). One list
//! serves all four quarters of the board, because diagonals only shift under translation.
//!
//! The published program tabulates every `(R, C)` at once (4^h offsets, gigabytes past
//! N ≈ 22). Here a task asks for the four row masks it needs; [`QuarterCache`] keeps the
//! lists for small h (a few MB up to N = 19) and, for large h, hands out the search itself
//! ([`Placements`]): a task's quarters are built from it directly, so no list of a whole row
//! mask (up to 11 million placements at N = 28) is ever held.

use std::sync::OnceLock;

/// Largest quarter size whose lists are all kept once generated (h = 10: about 70 MB).
const MAX_CACHED_H: u32 = 10;

/// One quarter placement: its local diagonal masks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Placement {
    /// Diagonal mask `a`: bit `j − i + h − 1` for a queen at local (row i, column j).
    pub a: u32,
    /// Anti-diagonal mask `b`: bit `i + j`.
    pub b: u32,
}

/// Every placement with queens on exactly the rows of one row mask, grouped by column mask.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct QuarterList {
    rows: u32,
    offsets: Vec<u32>,
    entries: Vec<Placement>,
}

impl QuarterList {
    /// Enumerates the placements of an h×h quarter with one queen on each row of `rows`.
    ///
    /// One search collects the placements and their column masks (10 bytes each), then a
    /// counting sort by column mask writes the list (8 bytes per placement) and the search's
    /// buffers are freed. Only kept lists are built so (h ≤ 10, at most a few hundred
    /// thousand placements each).
    pub(crate) fn generate(h: u32, rows: u32) -> Self {
        debug_assert!(h <= 16, "column masks are kept in 16 bits");
        let start = Placement { a: 0, b: 0 };
        let (mut found, mut masks) = (Vec::new(), Vec::<u16>::new());
        place(h, rows, 0, start, &mut |cols, p| {
            found.push(p);
            masks.push(cols as u16);
        });
        let mut offsets = vec![0u32; (1usize << h) + 1];
        for &cols in &masks {
            offsets[usize::from(cols) + 1] += 1;
        }
        for i in 1..offsets.len() {
            offsets[i] += offsets[i - 1];
        }
        let mut next = offsets.clone();
        let mut entries = vec![start; found.len()];
        for (&cols, p) in masks.iter().zip(found) {
            entries[next[usize::from(cols)] as usize] = p;
            next[usize::from(cols)] += 1;
        }
        QuarterList {
            rows,
            offsets,
            entries,
        }
    }

    /// The row mask this list was generated for.
    pub(crate) fn rows(&self) -> u32 {
        self.rows
    }

    /// The placements whose column mask is `cols`.
    #[cfg(test)]
    pub(crate) fn get(&self, cols: u32) -> &[Placement] {
        &self.entries[self.range(cols)]
    }

    /// The positions in [`QuarterList::entries`] of the placements with column mask `cols`.
    pub(crate) fn range(&self, cols: u32) -> std::ops::Range<usize> {
        self.offsets[cols as usize] as usize..self.offsets[cols as usize + 1] as usize
    }

    /// Every placement, grouped by column mask.
    pub(crate) fn entries(&self) -> &[Placement] {
        &self.entries
    }

    /// The number of placements in the list.
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }
}

/// The placements of one row mask, walked in a fixed order: within each column mask, the
/// order of the search, whether they come from a kept list or from the search itself.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Placements<'a> {
    /// A list kept by the cache (small h).
    List(&'a QuarterList),
    /// The search over an h×h quarter's row mask, run on every walk (large h).
    Search {
        /// Quarter size.
        h: u32,
        /// Row mask (local, h bits).
        rows: u32,
    },
}

impl Placements<'_> {
    /// The row mask.
    pub(crate) fn rows(&self) -> u32 {
        match *self {
            Placements::List(list) => list.rows(),
            Placements::Search { rows, .. } => rows,
        }
    }

    /// Hands every placement and its column mask to `found`. Two walks hand out the
    /// placements of each column mask in the same order; a list hands them out by column
    /// mask, the search in its own order (the list's within each column mask).
    pub(crate) fn each(&self, found: impl FnMut(u32, Placement)) {
        self.each_avoiding(Placement { a: 0, b: 0 }, found);
    }

    /// [`Placements::each`] for the placements that use none of the local diagonals
    /// `blocked`: the search never enters a cell on one, and hands each placement out with
    /// the blocked diagonals among its own (a kept list is filtered instead).
    pub(crate) fn each_avoiding(&self, blocked: Placement, mut found: impl FnMut(u32, Placement)) {
        match *self {
            Placements::List(list) => {
                for cols in 0..list.offsets.len() as u32 - 1 {
                    for &p in &list.entries[list.range(cols)] {
                        if p.a & blocked.a | p.b & blocked.b == 0 {
                            found(
                                cols,
                                Placement {
                                    a: p.a | blocked.a,
                                    b: p.b | blocked.b,
                                },
                            );
                        }
                    }
                }
            }
            Placements::Search { h, rows } => {
                place(h, rows, 0, blocked, &mut found);
            }
        }
    }
}

/// Places queens on the remaining rows of `rows` (lowest first), handing each complete
/// placement and its column mask to `found`.
fn place(h: u32, rows: u32, cols: u32, p: Placement, found: &mut impl FnMut(u32, Placement)) {
    if rows == 0 {
        found(cols, p);
        return;
    }
    let i = rows.trailing_zeros();
    let rest = rows & (rows - 1);
    // The columns of row i no queen attacks: column j is on local diagonals j + h - 1 - i
    // and i + j, so shifting the diagonal masks lines them up with the columns. Only those
    // are tried, in increasing order as before.
    let mut free = !(cols | p.a >> (h - 1 - i) | p.b >> i) & ((1u32 << h) - 1);
    while free != 0 {
        let j = free.trailing_zeros();
        free &= free - 1;
        let next = Placement {
            a: p.a | 1 << (j + h - 1 - i),
            b: p.b | 1 << (i + j),
        };
        if rest == 0 {
            found(cols | 1 << j, next);
        } else {
            place(h, rest, cols | 1 << j, next, found);
        }
    }
}

/// Quarter lists by row mask: kept after first use for small h, regenerated for large h.
#[derive(Debug)]
pub(crate) struct QuarterCache {
    h: u32,
    lists: Vec<OnceLock<QuarterList>>,
}

impl QuarterCache {
    /// Whether the lists are kept (small quarters) rather than searched per task.
    pub(crate) fn is_cached(&self) -> bool {
        !self.lists.is_empty()
    }

    /// A cache for h×h quarters (nothing is generated until asked for).
    pub(crate) fn new(h: u32) -> Self {
        let slots = if h <= MAX_CACHED_H { 1usize << h } else { 0 };
        QuarterCache {
            h,
            lists: (0..slots).map(|_| OnceLock::new()).collect(),
        }
    }

    /// The placements of row mask `rows` (local, h bits): the kept list, or the search.
    pub(crate) fn get(&self, rows: u32) -> Placements<'_> {
        match self.lists.get(rows as usize) {
            Some(slot) => {
                Placements::List(slot.get_or_init(|| QuarterList::generate(self.h, rows)))
            }
            None => Placements::Search { h: self.h, rows },
        }
    }
}

/// The number of placements of each size `k = 0..=h` on an h×h quarter (P_k).
pub(crate) fn placements_by_size(h: u32) -> Vec<u64> {
    let mut counts = vec![0u64; h as usize + 1];
    count_sizes(h, 0, 0, 0, 0, 0, &mut counts);
    counts
}

/// Counts placements row by row (each row: a queen in a free cell, or empty).
fn count_sizes(h: u32, i: u32, k: usize, cols: u32, a: u32, b: u32, counts: &mut [u64]) {
    if i == h {
        counts[k] += 1;
        return;
    }
    count_sizes(h, i + 1, k, cols, a, b, counts);
    for j in 0..h {
        let (ma, mb) = (1u32 << (j + h - 1 - i), 1u32 << (i + j));
        if cols & 1 << j == 0 && a & ma == 0 && b & mb == 0 {
            count_sizes(h, i + 1, k + 1, cols | 1 << j, a | ma, b | mb, counts);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every non-attacking queen set on an h×h board, by brute force over cell subsets, as
    /// (rows, cols, a, b).
    fn brute_force(h: u32) -> Vec<(u32, u32, Placement)> {
        let cells = h * h;
        let mut out = Vec::new();
        'sets: for set in 0u32..1 << cells {
            let (mut rows, mut cols, mut a, mut b) = (0u32, 0u32, 0u32, 0u32);
            for cell in (0..cells).filter(|c| set >> c & 1 == 1) {
                let (i, j) = (cell / h, cell % h);
                let (mr, mc, ma, mb) = (1 << i, 1 << j, 1 << (j + h - 1 - i), 1 << (i + j));
                if rows & mr != 0 || cols & mc != 0 || a & ma != 0 || b & mb != 0 {
                    continue 'sets;
                }
                (rows, cols, a, b) = (rows | mr, cols | mc, a | ma, b | mb);
            }
            out.push((rows, cols, Placement { a, b }));
        }
        out.sort();
        out
    }

    #[test]
    fn on_demand_lists_equal_a_full_enumeration_for_small_h() {
        for h in 1..=4 {
            let cache = QuarterCache::new(h);
            let mut all = Vec::new();
            for rows in 0..1u32 << h {
                let Placements::List(list) = cache.get(rows) else {
                    panic!("h = {h} is cached");
                };
                for cols in 0..1u32 << h {
                    all.extend(list.get(cols).iter().map(|&p| (rows, cols, p)));
                }
            }
            all.sort();
            assert_eq!(all, brute_force(h), "h = {h}");
        }
    }

    #[test]
    fn list_sizes_add_up_to_the_published_table_sizes() {
        // P(h), the published quarter table sizes.
        for (h, total) in [(7, 16_870u64), (8, 118_969)] {
            let cache = QuarterCache::new(h);
            let mut sum = 0u64;
            (0..1u32 << h).for_each(|r| cache.get(r).each(|_, _| sum += 1));
            assert_eq!(sum, total, "h = {h}");
            assert_eq!(placements_by_size(h).iter().sum::<u64>(), total);
        }
    }

    /// Every placement of a walk with its column mask, in walk order.
    fn walk(p: Placements<'_>) -> Vec<(u32, Placement)> {
        let mut out = Vec::new();
        p.each(|cols, p| out.push((cols, p)));
        out
    }

    #[test]
    fn a_search_walks_the_list_of_each_column_mask_in_its_order() {
        let rows = 0b101_1001_0110;
        let list = QuarterList::generate(11, rows);
        assert_eq!(list.rows(), rows);
        assert!(list.len() > 1000);
        let cache = QuarterCache::new(11);
        assert!(!cache.is_cached());
        let search = cache.get(rows);
        assert_eq!(search.rows(), rows);
        // Grouped by column mask (stably), the search is the list, order within a mask
        // included: prepared quarters, and so the hot bits, do not depend on the source.
        let mut searched = walk(search);
        searched.sort_by_key(|&(cols, _)| cols);
        assert_eq!(searched, walk(Placements::List(&list)));
        let kept: Vec<(u32, Placement)> = (0..1u32 << 11)
            .flat_map(|cols| list.get(cols).iter().map(move |&p| (cols, p)))
            .collect();
        assert_eq!(searched, kept);
        assert_eq!(walk(search), walk(search), "two walks agree");
    }
}
