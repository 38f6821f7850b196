//! The symmetries of the square a mask keeps, and the black solutions that stand for their
//! orbits.

use crate::puzzles::mask::Mask;
use crate::puzzles::solutions::Solutions;

/// A symmetry of the square: an optional reflection in the main diagonal, then optional
/// reversals of the rows and of the columns (all 8 are such products).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Symmetry {
    transpose: bool,
    flip_rows: bool,
    flip_cols: bool,
}

impl Symmetry {
    const fn new(transpose: bool, flip_rows: bool, flip_cols: bool) -> Symmetry {
        Symmetry {
            transpose,
            flip_rows,
            flip_cols,
        }
    }

    /// The image of cell (`r`, `c`) on an `n`×`n` board.
    pub(crate) fn map(self, n: usize, r: usize, c: usize) -> (usize, usize) {
        let (r, c) = if self.transpose { (c, r) } else { (r, c) };
        (flip(self.flip_rows, n, r), flip(self.flip_cols, n, c))
    }
}

/// `x` or its mirror image `n − 1 − x`.
#[inline(always)]
fn flip(yes: bool, n: usize, x: usize) -> usize {
    if yes {
        n - 1 - x
    } else {
        x
    }
}

/// The 8 symmetries of the square; the identity first.
pub(crate) const SQUARE: [Symmetry; 8] = [
    Symmetry::new(false, false, false), // (r, c)
    Symmetry::new(false, false, true),  // (r, n − 1 − c)
    Symmetry::new(false, true, false),  // (n − 1 − r, c)
    Symmetry::new(false, true, true),   // (n − 1 − r, n − 1 − c)
    Symmetry::new(true, false, false),  // (c, r)
    Symmetry::new(true, true, true),    // (n − 1 − c, n − 1 − r)
    Symmetry::new(true, false, true),   // (c, n − 1 − r)
    Symmetry::new(true, true, false),   // (n − 1 − c, r)
];

/// The symmetries of the square that leave `mask` unchanged (the identity always).
pub(crate) fn symmetries(mask: &Mask) -> Vec<Symmetry> {
    let n = mask.n() as usize;
    SQUARE
        .iter()
        .copied()
        .filter(|g| {
            (0..n).all(|r| {
                (0..n).all(|c| {
                    let (r2, c2) = g.map(n, r, c);
                    mask.is_allowed(r as u32, c as u32) == mask.is_allowed(r2 as u32, c2 as u32)
                })
            })
        })
        .collect()
}

/// The size of `sol`'s orbit under `group` if `sol` is its least member, else `None`.
///
/// The image of a solution A under a symmetry reads A, or its inverse for a transposing
/// one, forwards or backwards, its values maybe reversed; it is compared with A value by
/// value, so most solutions are found not least after a value or two.
pub(crate) fn orbit_size(sol: &[u8], group: &[Symmetry], n: usize) -> Option<u128> {
    let mut inverse = [0u8; 32];
    for (r, &c) in sol.iter().enumerate() {
        inverse[c as usize] = r as u8;
    }
    let mut fixed = 0u128;
    for g in group {
        let from = if g.transpose { &inverse[..n] } else { sol };
        let image = (0..n).map(|i| flip(g.flip_cols, n, from[flip(g.flip_rows, n, i)] as usize));
        match image.cmp(sol.iter().map(|&c| c as usize)) {
            std::cmp::Ordering::Less => return None,
            std::cmp::Ordering::Equal => fixed += 1,
            std::cmp::Ordering::Greater => {}
        }
    }
    Some(group.len() as u128 / fixed)
}

/// The distinct images of a least member of its orbit: the orbit, least first.
pub(crate) struct Orbit {
    n: usize,
    len: usize,
    images: [[u8; 32]; 8],
}

impl Orbit {
    /// The orbit of `sol`, a least member of it, under `group`.
    pub(crate) fn of(sol: &[u8], group: &[Symmetry], n: usize) -> Orbit {
        let mut inverse = [0u8; 32];
        for (r, &c) in sol.iter().enumerate() {
            inverse[c as usize] = r as u8;
        }
        let mut images = [[0u8; 32]; 8];
        for (image, g) in images.iter_mut().zip(group) {
            let from = if g.transpose { &inverse[..n] } else { sol };
            for (i, to) in image[..n].iter_mut().enumerate() {
                *to = flip(g.flip_cols, n, from[flip(g.flip_rows, n, i)] as usize) as u8;
            }
        }
        let images = &mut images[..group.len()];
        images.sort_unstable();
        let mut len = 0;
        for i in 0..images.len() {
            if i == 0 || images[i] != images[len - 1] {
                images[len] = images[i];
                len += 1;
            }
        }
        let mut all = [[0u8; 32]; 8];
        all[..len].copy_from_slice(&images[..len]);
        Orbit {
            n,
            len,
            images: all,
        }
    }

    /// Its members, least first.
    pub(crate) fn members(&self) -> impl Iterator<Item = &[u8]> {
        self.images[..self.len].iter().map(|image| &image[..self.n])
    }
}

/// The black solutions of one prefix, one per orbit (its least member), in order.
pub(crate) struct Reps<'a> {
    walk: Solutions,
    group: &'a [Symmetry],
    n: usize,
    cols: [u8; 32],
    size: usize,
}

impl<'a> Reps<'a> {
    /// The black solutions among those fitting `mask`.
    pub(crate) fn new(mask: &Mask, group: &'a [Symmetry]) -> Reps<'a> {
        Reps {
            walk: Solutions::with_mask(mask),
            group,
            n: mask.n() as usize,
            cols: [0; 32],
            size: 0,
        }
    }

    /// The next one and the size of its orbit.
    pub(crate) fn next_rep(&mut self) -> Option<(&[u8], usize)> {
        let n = self.n;
        loop {
            let sol = self.walk.next_solution()?;
            for (to, &c) in self.cols.iter_mut().zip(sol) {
                *to = c as u8;
            }
            if let Some(size) = orbit_size(&self.cols[..n], self.group, n) {
                self.size = size as usize;
                return Some((&self.cols[..n], self.size));
            }
        }
    }

    /// The orbit of the last one.
    pub(crate) fn orbit(&self) -> Orbit {
        Orbit::of(&self.cols[..self.n], self.group, self.n)
    }
}
