//! A block count the criterion benches can run safely ([`BlockCountCase`]), and the random
//! tables it and the tests count on.

use super::{available_levels, count_blocks, Level};
use crate::engine::mitm::kernels::Lanes;

/// A block count of random tables and queries at one level, safe to run: the criterion
/// benches time the matcher's inner loop per level with it (not part of the API).
#[derive(Debug, Clone)]
pub struct BlockCountCase {
    level: Level,
    tables: Vec<Lanes>,
    per: usize,
    index: Vec<u32>,
    stride: usize,
    queries: usize,
}

impl BlockCountCase {
    /// `queries` random queries against `blocks` (1 or 2) blocks of random tables with
    /// `chunks` chunks of 5 bits, at the level named `level` (`None` if this CPU lacks it or
    /// the shape is out of range).
    pub fn new(
        level: &str,
        chunks: usize,
        blocks: usize,
        queries: usize,
        seed: u64,
    ) -> Option<Self> {
        let level = available_levels().into_iter().find(|l| l.name() == level)?;
        if !(1..=16).contains(&chunks) || !(1..=2).contains(&blocks) {
            return None;
        }
        let mut rng = fastrand::Rng::with_seed(seed);
        let (tables, per, index, stride) = random_tables(&mut rng, chunks, blocks, queries, false);
        Some(BlockCountCase {
            level,
            tables,
            per,
            index,
            stride,
            queries,
        })
    }

    /// Counts the disjoint pairs (every query against every block).
    pub fn run(&self) -> u64 {
        // SAFETY: `random_tables` made whole blocks and offsets of entries below `per`.
        unsafe {
            count_blocks(
                self.level,
                &self.tables,
                self.per,
                &self.index,
                self.stride,
                0..self.queries,
            )
        }
    }
}

/// Random (or all-ones) tables of `blocks` blocks of `chunks` 5-bit chunks, and a chunk-major
/// index of `queries` random entry offsets per chunk, `stride` slots per row: `(tables, per,
/// index, stride)`.
pub(super) fn random_tables(
    rng: &mut fastrand::Rng,
    chunks: usize,
    blocks: usize,
    queries: usize,
    ones: bool,
) -> (Vec<Lanes>, usize, Vec<u32>, usize) {
    let per = chunks * 32;
    let tables = (0..blocks * per)
        .map(|_| match ones {
            true => Lanes::ONES,
            false => Lanes(std::array::from_fn(|_| rng.u64(..) & rng.u64(..))),
        })
        .collect();
    let stride = queries.next_multiple_of(8);
    let index = (0..chunks * stride)
        .map(|_| (rng.usize(..per) * std::mem::size_of::<Lanes>()) as u32)
        .collect();
    (tables, per, index, stride)
}

#[cfg(test)]
mod tests {
    use super::super::LEVEL_NAMES;
    use super::*;
    use crate::engine::mitm::kernels;

    #[test]
    fn a_bench_case_counts_what_the_generic_loop_counts() {
        for level in LEVEL_NAMES {
            let Some(case) = BlockCountCase::new(level, 7, 2, 100, 3) else {
                continue;
            };
            let want = kernels::count_blocks_generic(
                &case.tables,
                case.per,
                &case.index,
                case.stride,
                0..100,
            );
            assert_eq!(case.run(), want, "{level}");
        }
        assert!(BlockCountCase::new("portable", 0, 1, 8, 1).is_none());
        assert!(BlockCountCase::new("sse9", 7, 1, 8, 1).is_none());
    }
}
