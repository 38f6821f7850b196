//! Half-board enumeration (ALGORITHMS.md §4.1.2).
//!
//! A half (east or west) is a north-quarter placement plus a south-quarter placement on the
//! half's rows that together use exactly the half's free columns and share no diagonal. For
//! every split of the free columns between north and south, the two quarter lists are
//! converted to key-space words (dropping placements that attack a fixed queen) and joined
//! pairwise: a pair is a half exactly when its words are disjoint, and its key is their OR.
//!
//! Placements can be sorted into two classes per quarter by one diagonal bit (a queen on a
//! long diagonal, for the symmetry factors of §4.3); a half's class is then
//! `2·north_class + south_class`, and each class goes to its own key list.

use super::key::{Compactor, Geometry, Quarter};
use super::quarter::QuarterList;

/// How one quarter of a half is read: which quarter it is, which local diagonals it must
/// avoid, and which diagonal bits put a placement in class 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Side {
    /// The quarter (fixes the key-space offsets).
    pub quarter: Quarter,
    /// Local `(a, b)` diagonal masks a placement must not touch.
    pub forbid: (u32, u32),
    /// Local `(a, b)` diagonal masks whose use puts a placement in class 1.
    pub split: (u32, u32),
}

impl Side {
    /// A side with no restriction and a single class.
    pub fn plain(quarter: Quarter) -> Self {
        Side {
            quarter,
            forbid: (0, 0),
            split: (0, 0),
        }
    }
}

/// Reusable buffers for one enumeration.
#[derive(Debug, Default)]
pub struct Buffers {
    north: [Vec<u64>; 2],
    south: [Vec<u64>; 2],
}

/// Everything fixed while enumerating the halves of one task side.
#[derive(Debug, Clone, Copy)]
pub struct HalfSpec<'a> {
    /// Board geometry.
    pub geo: &'a Geometry,
    /// Key compaction (holes) shared by both sides of the task.
    pub compactor: &'a Compactor,
    /// The north quarter: its list (row mask already chosen) and how to read it.
    pub north: (&'a QuarterList, Side),
    /// The south quarter.
    pub south: (&'a QuarterList, Side),
    /// Free columns of the half (local, h bits).
    pub cols: u32,
    /// Bits ORed into every key (fixed queens' diagonals seen as part of this half).
    pub extra: u64,
    /// Which of the four classes (`2·north + south`) to produce.
    pub wanted: [bool; 4],
}

/// Appends the key of every half of `spec` to `out[class]`.
pub fn enumerate(spec: &HalfSpec<'_>, bufs: &mut Buffers, out: &mut [Vec<u64>; 4]) {
    let (north, nside) = spec.north;
    let (south, sside) = spec.south;
    let k = north.rows().count_ones();
    let mut cn = spec.cols;
    loop {
        if cn.count_ones() == k {
            let (nl, sl) = (north.get(cn), south.get(spec.cols ^ cn));
            if !nl.is_empty() && !sl.is_empty() {
                convert(spec, nside, nl, &mut bufs.north);
                convert(spec, sside, sl, &mut bufs.south);
                for (class, keys) in out.iter_mut().enumerate() {
                    if spec.wanted[class] {
                        let (n, s) = (&bufs.north[class >> 1], &bufs.south[class & 1]);
                        join(n, s, spec.extra, keys);
                    }
                }
            }
        }
        if cn == 0 {
            break;
        }
        cn = (cn - 1) & spec.cols;
    }
}

/// Converts quarter placements to compacted key-space words, split by class.
fn convert(
    spec: &HalfSpec<'_>,
    side: Side,
    list: &[super::quarter::Placement],
    out: &mut [Vec<u64>; 2],
) {
    out[0].clear();
    out[1].clear();
    for &p in list {
        if p.a & side.forbid.0 != 0 || p.b & side.forbid.1 != 0 {
            continue;
        }
        let class = usize::from(p.a & side.split.0 != 0 || p.b & side.split.1 != 0);
        out[class].push(spec.compactor.apply(spec.geo.word(side.quarter, p)));
    }
}

/// Appends `n | s | extra` for every disjoint pair `(n, s)`, without branching per pair.
fn join(north: &[u64], south: &[u64], extra: u64, out: &mut Vec<u64>) {
    for &n in north {
        out.reserve(south.len());
        let base = out.len();
        let spare = out.spare_capacity_mut();
        let mut len = 0usize;
        for (&s, slot) in south.iter().zip(0..) {
            // Write unconditionally, advance only on a disjoint pair: `len <= slot`, so the
            // write stays inside the reserved spare capacity.
            debug_assert!(len <= slot);
            spare[len].write(n | s | extra);
            len += usize::from(n & s == 0);
        }
        // SAFETY: the first `len` spare slots were initialised above.
        unsafe { out.set_len(base + len) };
    }
}
