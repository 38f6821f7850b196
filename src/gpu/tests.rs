//! The GPU engine against the CPU: kernels on random keys against brute force, and whole
//! plans task by task. Every test runs on whatever GPU the machine has (Mesa's lavapipe in
//! CI) and says it was skipped where there is none.

use super::join::{Fill, Slot};
use super::*;
use crate::plan::{execute, thread_pool, NoProgress};

/// The machine's GPU, or `None` (the test then passes, saying so).
fn gpu(test: &str) -> Option<Gpu> {
    match Gpu::open(None) {
        Ok(gpu) => Some(gpu),
        Err(e) => {
            eprintln!("{test}: skipped, no GPU: {e}");
            None
        }
    }
}

/// Random keys of `bits` bits, each set with probability about `density`, with a random
/// class in bits 61..63.
fn keys(rng: &mut fastrand::Rng, len: usize, bits: u32, density: f64) -> Vec<u64> {
    (0..len)
        .map(|_| {
            let key = (0..bits).fold(0u64, |k, b| k | u64::from(rng.f64() < density) << b);
            key | u64::from(rng.u32(..4)) << 61
        })
        .collect()
}

/// Σ over disjoint (stored, query) pairs of the stored class's weight × the query's.
fn brute(stored: &[u64], queries: &[u64], fill: Fill) -> (u128, u128) {
    let class = |k: u64| (k >> 61 & 3) as usize;
    let mut total = (0u128, 0u128);
    for &s in stored {
        for &q in queries.iter().filter(|&&q| s & q & fill.live == 0) {
            total.0 += u128::from(fill.stored_w[class(s)]) * u128::from(fill.query_w[class(q)]);
            total.1 += 1;
        }
    }
    total
}

#[test]
fn the_sieve_and_count_equal_brute_force_on_random_keys() {
    let Some(gpu) = gpu("the_sieve_and_count_equal_brute_force_on_random_keys") else {
        return;
    };
    let mut rng = fastrand::Rng::with_seed(11);
    let mut slot = Slot::new();
    // One block, a leaf of several blocks, many leaves; dense and sparse keys.
    for (s, q, bits, density) in [
        (1, 7, 20, 0.2),
        (300, 500, 24, 0.3),
        (5000, 900, 40, 0.25),
        (20000, 3000, 50, 0.12),
    ] {
        let stored = keys(&mut rng, s, bits, density);
        let queries = keys(&mut rng, q, bits, density);
        let live = !(1u64 << 3) & ((1 << 61) - 1);
        let fill = Fill {
            live,
            stored_w: [1, 2, 3, 4],
            query_w: [1, 1, 2, 1],
        };
        let got = slot
            .count_keys(&gpu.device, (&stored, &queries), fill)
            .unwrap();
        assert_eq!(
            got,
            brute(&stored, &queries, fill),
            "{s} stored, {q} queries, {bits} bits"
        );
    }
}

#[test]
fn a_lane_past_2_to_the_32_still_sums_exactly() {
    let Some(gpu) = gpu("a_lane_past_2_to_the_32_still_sums_exactly") else {
        return;
    };
    // One block of 512 keys that meet every query: each of 4096 routes adds 32 keys × 2^20
    // to its invocation's lane, which passes 2^32 after 128 of its 256 routes.
    let stored = vec![0u64; 512];
    let queries = vec![0u64; 4096];
    let fill = Fill {
        live: (1 << 61) - 1,
        stored_w: [1 << 20; 4],
        query_w: [1; 4],
    };
    let mut slot = Slot::new();
    let (weighted, hits) = slot
        .count_keys(&gpu.device, (&stored, &queries), fill)
        .unwrap();
    assert_eq!(hits, 512 * 4096);
    assert_eq!(weighted, 512 * 4096 * (1 << 20));
    assert!(weighted > 1 << 32);
}

/// The GPU plan of `n` solved whole.
fn gpu_total(gpu: &Gpu, n: u32, threads: usize) -> u128 {
    let plan = super::plan(gpu, n).unwrap();
    let ids: Vec<usize> = (0..plan.len()).collect();
    let pool = thread_pool(threads).unwrap();
    execute(plan.as_ref(), &ids, &pool, &NoProgress).unwrap()
}

#[test]
fn every_total_from_4_to_12_is_known() {
    let Some(gpu) = gpu("every_total_from_4_to_12_is_known") else {
        return;
    };
    for n in 4..=12 {
        let want = crate::known::total(n).unwrap();
        assert_eq!(gpu_total(&gpu, n, 2), want, "N = {n}");
    }
}

#[test]
fn every_task_of_13_and_14_equals_the_cpu() {
    let Some(gpu) = gpu("every_task_of_13_and_14_equals_the_cpu") else {
        return;
    };
    for n in [13, 14] {
        let cpu = crate::engine::plan("mitm", n, &crate::engine::PlanOptions::default()).unwrap();
        let on_gpu = super::plan(&gpu, n).unwrap();
        assert_eq!(cpu.fingerprint(), on_gpu.fingerprint());
        for t in 0..cpu.len() {
            assert_eq!(on_gpu.solve(t), cpu.solve(t), "N = {n}, task {t}");
        }
        assert!(on_gpu.fault().is_none());
    }
}
