//! Board geometry and join keys.
//!
//! Global diagonals are `A = k − r + N − 1` and `B = k + r`. An east half (columns `0..h`)
//! and a west half (columns `c..N`) can only share diagonals in the window `[c, c + 2h − 2]`
//! of each family, so a half is summarised by a key: the window bits of its `A` diagonals
//! (low `2h − 1` bits) and of its `B` diagonals (the next `2h − 1` bits). For a fixed row
//! split, an east and a west half form a solution exactly when their keys are disjoint.
//!
//! Each quarter placement maps to a *word* in key space; a half's key is the OR of its north
//! and south words, and the two quarters of a half clash exactly when their words intersect
//! (inside one half, every shared diagonal lies in the window). Bits that no east key can
//! have ("holes") cost the matcher nothing: its chunks simply widen over them.

use super::quarter::Placement;

/// A key-space bit no key uses: marks words whose placement attacks a fixed queen outside
/// the key window, so that one mask test filters every constraint.
pub(crate) const SENTINEL: u64 = 1 << 63;

/// The four quarters: north-east, south-east, north-west, south-west.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Quarter {
    /// Rows `0..h`, columns `0..h`.
    Ne,
    /// Rows `c..N`, columns `0..h`.
    Se,
    /// Rows `0..h`, columns `c..N`.
    Nw,
    /// Rows `c..N`, columns `c..N`.
    Sw,
}

/// The sizes of an N×N board cut into quarters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Geometry {
    /// Board size.
    pub n: u32,
    /// Quarter size ⌊N/2⌋.
    pub h: u32,
    /// ⌈N/2⌉: the first south row and the first west column.
    pub c: u32,
    /// Bits per diagonal family in a key: `2h − 1`.
    pub d: u32,
}

impl Geometry {
    /// The geometry of an `n`×`n` board (`n ≥ 2`).
    pub(crate) fn new(n: u32) -> Self {
        let h = n / 2;
        Geometry {
            n,
            h,
            c: n - h,
            d: 2 * h - 1,
        }
    }

    /// Bits in an uncompressed key: `4h − 2`.
    pub(crate) fn key_bits(&self) -> u32 {
        2 * self.d
    }

    /// Offsets of a quarter's local diagonals in global `A`, `B` (one placement list serves
    /// all four quarters).
    pub(crate) fn offsets(&self, q: Quarter) -> (u32, u32) {
        let c = self.c;
        match q {
            Quarter::Ne => (c, 0),
            Quarter::Se => (0, c),
            Quarter::Nw => (2 * c, c),
            Quarter::Sw => (c, 2 * c),
        }
    }

    #[cfg(test)]
    /// The key-space word of placement `p` in quarter `q`.
    pub(crate) fn word(&self, q: Quarter, p: Placement) -> u64 {
        let [la, ra, lb, rb] = self.shifts(q);
        let m = (1u64 << self.d) - 1;
        let ka = ((u64::from(p.a) << la) >> ra) & m;
        let kb = ((u64::from(p.b) << lb) >> rb) & m;
        ka | kb << self.d
    }

    /// The shifts that move a quarter's `a` and `b` masks into the key window:
    /// `[a left, a right, b left, b right]`.
    fn shifts(&self, q: Quarter) -> [u32; 4] {
        let c = self.c;
        match q {
            Quarter::Ne => [0, 0, 0, c],
            Quarter::Se => [0, c, 0, 0],
            Quarter::Nw => [c, 0, 0, 0],
            Quarter::Sw => [0, 0, c, 0],
        }
    }

    /// The key-space word of each placement of quarter `q`: a placement touching the local
    /// diagonals `forbid` (outside the key window) gets [`SENTINEL`] added.
    pub(crate) fn words(&self, q: Quarter, forbid: (u32, u32)) -> impl Fn(&Placement) -> u64 {
        let [la, ra, lb, rb] = self.shifts(q);
        let (m, d) = ((1u64 << self.d) - 1, self.d);
        move |p| {
            let ka = ((u64::from(p.a) << la) >> ra) & m;
            let kb = ((u64::from(p.b) << lb) >> rb) & m;
            let bad = (p.a & forbid.0) | (p.b & forbid.1) != 0;
            ka | kb << d | u64::from(bad) << 63
        }
    }

    /// The local diagonals of quarter `q` whose key bits are in `bits`: the inverse of
    /// [`Geometry::words`] on the diagonals it keeps.
    pub(crate) fn local_diagonals(&self, q: Quarter, bits: u64) -> (u32, u32) {
        let [la, ra, lb, rb] = self.shifts(q);
        let (m, d) = ((1u64 << self.d) - 1, self.d);
        let local = (1u64 << (2 * self.h - 1)) - 1;
        let a = (((bits & m) << ra) >> la) & local;
        let b = ((((bits >> d) & m) << rb) >> lb) & local;
        (a as u32, b as u32)
    }

    /// The key bits of global diagonals `A = da` and `B = db` (those inside the window).
    pub(crate) fn window_bits(&self, da: u32, db: u32) -> u64 {
        let window = self.c..=self.c + self.d - 1;
        let mut bits = 0u64;
        if window.contains(&da) {
            bits |= 1 << (da - self.c);
        }
        if window.contains(&db) {
            bits |= 1 << (db - self.c + self.d);
        }
        bits
    }

    /// Local diagonal masks `(a, b)` a quarter must avoid so as not to attack a queen at
    /// global (row `r`, column `k`).
    pub(crate) fn forbidden(&self, q: Quarter, r: u32, k: u32) -> (u32, u32) {
        let (oa, ob) = self.offsets(q);
        let (da, db) = (k + self.n - 1 - r, k + r);
        (self.local_bit(da, oa), self.local_bit(db, ob))
    }

    /// The local diagonal bit of global diagonal `g` in a quarter with offset `o` (or 0).
    fn local_bit(&self, g: u32, o: u32) -> u32 {
        match g.checked_sub(o) {
            Some(l) if l < self.d => 1 << l,
            _ => 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The global (A, B) diagonals of a quarter placement, as bit sets.
    fn global(g: &Geometry, q: Quarter, p: Placement) -> (u64, u64) {
        let (oa, ob) = g.offsets(q);
        (u64::from(p.a) << oa, u64::from(p.b) << ob)
    }

    #[test]
    fn quarter_offsets_match_the_cell_formulas() {
        for n in [6, 7, 10, 11] {
            let g = Geometry::new(n);
            let cases = [
                (Quarter::Ne, 0, 0),
                (Quarter::Se, g.c, 0),
                (Quarter::Nw, 0, g.c),
                (Quarter::Sw, g.c, g.c),
            ];
            for (q, r0, k0) in cases {
                for (i, j) in [(0, 0), (1, g.h - 1), (g.h - 1, 0), (g.h - 1, g.h - 2)] {
                    let p = Placement {
                        a: 1 << (j + g.h - 1 - i),
                        b: 1 << (i + j),
                    };
                    let (r, k) = (r0 + i, k0 + j);
                    let (a, b) = global(&g, q, p);
                    assert_eq!(a, 1 << (k + n - 1 - r), "n {n} {q:?}");
                    assert_eq!(b, 1 << (k + r), "n {n} {q:?}");
                }
            }
        }
    }

    #[test]
    fn east_and_west_keys_intersect_exactly_when_halves_share_a_diagonal() {
        // Single queens in every quarter position: the key test must agree with the global
        // diagonal test for every east/west pair and every north/south pair of a half.
        for n in [6, 7, 8, 9] {
            let g = Geometry::new(n);
            let cells = |q| {
                (0..g.h * g.h).map(move |x| {
                    let (i, j) = (x / g.h, x % g.h);
                    let p = Placement {
                        a: 1 << (j + g.h - 1 - i),
                        b: 1 << (i + j),
                    };
                    (q, p)
                })
            };
            let east: Vec<_> = cells(Quarter::Ne).chain(cells(Quarter::Se)).collect();
            let west: Vec<_> = cells(Quarter::Nw).chain(cells(Quarter::Sw)).collect();
            let clash = |(q1, p1), (q2, p2)| {
                let (a1, b1) = global(&g, q1, p1);
                let (a2, b2) = global(&g, q2, p2);
                a1 & a2 != 0 || b1 & b2 != 0
            };
            let keys = |(q1, p1): (Quarter, Placement), (q2, p2): (Quarter, Placement)| {
                g.word(q1, p1) & g.word(q2, p2) != 0
            };
            for &e in &east {
                for &w in &west {
                    assert_eq!(keys(e, w), clash(e, w), "n {n}: {e:?} {w:?}");
                }
            }
            for half in [&east, &west] {
                for &x in half.iter() {
                    for &y in half.iter().filter(|y| y.0 != x.0) {
                        assert_eq!(keys(x, y), clash(x, y), "n {n}: {x:?} {y:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn forbidden_masks_follow_the_queen_diagonals() {
        let g = Geometry::new(9); // h = 4, c = 5; centre (4, 4)
        assert_eq!(g.forbidden(Quarter::Ne, 4, 4), (1 << 3, 0));
        assert_eq!(g.forbidden(Quarter::Se, 4, 4), (0, 1 << 3));
        assert_eq!(g.forbidden(Quarter::Nw, 4, 4), (0, 1 << 3));
        assert_eq!(g.forbidden(Quarter::Sw, 4, 4), (1 << 3, 0));
        assert_eq!(g.window_bits(8, 8), 1 << 3 | 1 << (3 + 7));
        assert_eq!(g.window_bits(4, 13), 0);
    }
}
