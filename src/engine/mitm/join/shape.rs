//! How a task's sieves read its keys: the chunk layouts, holes and cut bits per shape.

use crate::engine::mitm::kernels::Layout;
use crate::engine::mitm::key::Geometry;
use crate::engine::mitm::matcher::MAX_CUTS;
use crate::engine::mitm::transpose;

/// Matcher chunk width (usable key bits per table lookup).
const CHUNK_BITS: u32 = 5;
/// How the sieves read keys: chunk layouts, the bits no stored key needs, and cut bits.
#[derive(Debug, Clone)]
pub(crate) struct Shape {
    /// Chunk layout of the ranked sieve (holes left out).
    pub layout: Layout,
    /// Key bits no query has (fixed queens' and long diagonals): stored keys drop them.
    pub holes: u64,
    /// Most cut bits that rank the stored keys.
    pub cuts: u32,
    /// Chunk layout of the bucket sieve of small tasks (holes and cut bits left out).
    pub small_layout: Layout,
    /// Cut bits of the bucket sieve, ascending.
    pub small_cuts: Vec<u32>,
    /// Even N: the tie marks of [`transpose::marks`] and the key bits below the tags.
    pub ties: Option<([u64; 4], u64)>,
}

impl Shape {
    /// The shape for keys with `holes`, ranked by at most `cuts` bits; small tasks' buckets
    /// cut on `small_cuts` bits near the long diagonals (where keys are densest, so buckets
    /// exclude the most pairs). With `tags` (even N), the layouts read the transposes' tag
    /// bits as well, and their tie marks are holes ([`transpose`]).
    pub(crate) fn new(
        geo: &Geometry,
        holes: u64,
        (cuts, small_cuts): (u32, u32),
        tags: bool,
    ) -> Self {
        let (h, d) = (geo.h as i64, geo.d as i64);
        let mut order = Vec::new();
        for step in 1..h {
            for offset in [-step, step] {
                order.extend([h - 1 + offset, d + h - 1 + offset]);
            }
        }
        let mut small: Vec<u32> = order
            .into_iter()
            .filter(|&p| (0..2 * d).contains(&p) && holes >> p & 1 == 0)
            .map(|p| p as u32)
            .take(small_cuts as usize)
            .collect();
        small.sort_unstable();
        let cut_mask = small.iter().fold(0u64, |m, &p| m | 1 << p);
        let key_bits = geo.key_bits();
        let (bits, holes, ties) = if tags {
            let marks = transpose::marks(key_bits);
            let below = (1u64 << key_bits) - 1;
            let holes = holes | transpose::mark_mask(key_bits);
            (key_bits + transpose::TAG_BITS, holes, Some((marks, below)))
        } else {
            (key_bits, holes, None)
        };
        Shape {
            layout: Layout::new(bits, holes, CHUNK_BITS),
            holes,
            cuts: cuts.min(MAX_CUTS as u32),
            small_layout: Layout::new(bits, holes | cut_mask, CHUNK_BITS),
            small_cuts: small,
            ties,
        }
    }
}
