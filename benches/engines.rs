//! Criterion benches of every engine for N = 10..13, one thread; each asserts its count.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use nqueens::{count, engine, known, CountOptions};

fn engines(c: &mut Criterion) {
    for n in 10..=13u32 {
        let mut group = c.benchmark_group(format!("n{n}"));
        group.sample_size(10);
        for e in engine::ENGINES {
            let options = CountOptions::new().engine(e.name()).threads(1);
            group.bench_with_input(BenchmarkId::new(e.name(), n), &n, |b, &n| {
                b.iter(|| {
                    let total = count(n, &options).expect("count succeeds").total;
                    assert_eq!(Some(total), known::total(n));
                    total
                })
            });
        }
        group.finish();
    }
}

criterion_group!(benches, engines);
criterion_main!(benches);
