//! Criterion bench of the matcher's inner loop, the block count, at every instruction-set
//! level this CPU has, at the sizes of N = 18 (7 chunks of 5 key bits; a segment of 256
//! queries against one and two blocks of 512 keys). Each bench checks its count against the
//! portable level's.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use nqueens::engine::internals::BlockCountCase;
use nqueens::engine::ISA_LEVELS;

/// Chunks of a key at N = 18.
const CHUNKS: usize = 7;
/// Queries per segment.
const QUERIES: usize = 256;

fn block_count(c: &mut Criterion) {
    for blocks in [1, 2] {
        let mut group = c.benchmark_group(format!("block_count_n18_{blocks}_block"));
        group.throughput(Throughput::Elements((QUERIES * blocks * 512) as u64));
        let reference = BlockCountCase::new("portable", CHUNKS, blocks, QUERIES, 18)
            .expect("the portable level exists everywhere")
            .run();
        for level in ISA_LEVELS {
            let Some(case) = BlockCountCase::new(level, CHUNKS, blocks, QUERIES, 18) else {
                continue;
            };
            assert_eq!(case.run(), reference, "{level}");
            group.bench_function(BenchmarkId::from_parameter(level), |b| {
                b.iter(|| case.run())
            });
        }
        group.finish();
    }
}

criterion_group!(benches, block_count);
criterion_main!(benches);
