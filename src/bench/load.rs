//! Loads that keep one core busy in one way only, for a node check (`nqueens load`, run by
//! `scripts/node-check.sh`): a count's speed per core beside T − 1 of them tells which shared
//! resource slows it down on a full machine.
//!
//! [`vector`] runs the matcher's inner loop (the engine's own vector instructions, at the
//! level chosen for this CPU) on tables that fit in the first-level cache: beside a count it
//! shares only the core, i.e. an SMT sibling's execution units (and the clock a busy chip
//! allows). [`memory`] streams through a buffer far larger than a core's share of the
//! last-level cache: it shares the memory bandwidth and that cache, and no core.

use std::hint::black_box;
use std::time::Instant;

use crate::engine::internals::BlockCountCase;

/// Key chunks of the vector load's tables: those of N = 18, about 14 KiB of tables and 7 KiB
/// of queries, well inside any first-level data cache.
const CHUNKS: usize = 7;

/// Queries per block count of the vector load.
const QUERIES: usize = 256;

/// Block counts between two looks at the clock.
const COUNTS_PER_CHECK: u64 = 64;

/// Runs the matcher's block count on small, cache-resident tables until `until`, at this
/// CPU's matcher level; returns the block counts made.
pub fn vector(until: Instant) -> u64 {
    let level = crate::engine::matcher_level();
    let case = BlockCountCase::new(level, CHUNKS, 1, QUERIES, 18)
        .or_else(|| BlockCountCase::new("portable", CHUNKS, 1, QUERIES, 18))
        .expect("the portable level exists everywhere");
    let mut made = 0;
    loop {
        for _ in 0..COUNTS_PER_CHECK {
            black_box(case.run());
        }
        made += COUNTS_PER_CHECK;
        if Instant::now() >= until {
            return made;
        }
    }
}

/// Reads and rewrites every word of `buffer`, pass after pass, until `until`; returns the
/// bytes streamed (read and written once each per pass). The buffer is the caller's, so the
/// caller decides how much memory to take and what to say if it cannot be had.
pub fn memory(buffer: &mut [u64], until: Instant) -> u64 {
    let mut streamed = 0u64;
    loop {
        for word in buffer.iter_mut() {
            *word = word.wrapping_add(1);
        }
        black_box(&mut *buffer);
        streamed += std::mem::size_of_val(buffer) as u64;
        if Instant::now() >= until || buffer.is_empty() {
            return streamed;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_loads_run_until_their_deadline_and_count_their_work() {
        let until = Instant::now() + std::time::Duration::from_millis(20);
        assert!(vector(until) >= COUNTS_PER_CHECK);
        assert!(Instant::now() >= until);
        let mut buffer = vec![0u64; 1024];
        let streamed = memory(&mut buffer, Instant::now());
        assert_eq!(streamed, 8 * 1024);
        assert!(buffer.iter().all(|&w| w == 1));
    }
}
