//! The GPU engine against the CPU: kernels on random keys against brute force, and whole
//! plans task by task. Every test runs on whatever GPU the machine has (Mesa's lavapipe in
//! CI) and says it was skipped where there is none.

use std::sync::Arc;

use super::join::{Fill, Slot};
use super::*;
use crate::engine::mitm::join::{Join, Keys};
use crate::engine::mitm::simd::Level;
use crate::engine::mitm::Joiner;
use crate::plan::{execute, thread_pool, NoProgress};

/// The machine's GPU, or `None` (the test then passes, saying so), unless
/// `NQUEENS_REQUIRE_GPU` is set: CI, which installs a driver, must not skip them unseen.
fn gpu(test: &str) -> Option<Gpu> {
    match Gpu::open(None) {
        Ok(gpu) => Some(gpu),
        Err(e) if std::env::var_os("NQUEENS_REQUIRE_GPU").is_some() => {
            panic!("{test}: no GPU, and NQUEENS_REQUIRE_GPU is set: {e}")
        }
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
fn every_total_from_4_to_16_is_known() {
    let Some(gpu) = gpu("every_total_from_4_to_16_is_known") else {
        return;
    };
    for n in 4..=16 {
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

/// A joiner that joins on the GPU and on this CPU, and panics where the two differ: every
/// join of a task checked on its own.
#[derive(Debug)]
struct Checked(super::join::GpuJoiner);

impl Joiner for Checked {
    fn join(&self, join: Join<'_, '_>, work: &mut crate::Work) -> Result<Option<u64>, String> {
        let got = self.0.join(join, work)?;
        let want = Keys::default().join_here(join, Level::detect());
        assert_eq!(got, want, "a join of factors {:?}", join.factors);
        Ok(got)
    }

    fn describe(&self) -> String {
        "checked".into()
    }
}

/// Tasks of `n` at the given shares of its plan (in thousandths), each join checked.
fn check_tasks(gpu: &Gpu, n: u32, at: &[usize]) {
    let joiner = Arc::new(Checked(super::join::GpuJoiner::new(
        Arc::clone(&gpu.device),
        None,
    )));
    let on_gpu = MitmPlan::with_joiner(n, joiner);
    let cpu = crate::engine::plan("mitm", n, &crate::engine::PlanOptions::default()).unwrap();
    for &share in at {
        let t = (cpu.len() - 1) * share / 1000;
        assert_eq!(on_gpu.solve(t), cpu.solve(t), "N = {n}, task {t}");
        assert!(on_gpu.fault().is_none(), "{:?}", on_gpu.fault());
    }
}

#[test]
fn sampled_tasks_of_15_to_23_equal_the_cpu_join_by_join() {
    let Some(gpu) = gpu("sampled_tasks_of_15_to_23_equal_the_cpu_join_by_join") else {
        return;
    };
    // 18 and up weigh even pairs by the transposes (ties); odd N have cross tasks.
    check_tasks(&gpu, 15, &[0, 500, 999]);
    check_tasks(&gpu, 16, &[0, 300]);
    check_tasks(&gpu, 18, &[0, 100, 700]);
    check_tasks(&gpu, 19, &[0, 10, 500]);
    check_tasks(&gpu, 20, &[500, 990]);
    check_tasks(&gpu, 21, &[900]);
    check_tasks(&gpu, 22, &[990]);
    check_tasks(&gpu, 23, &[995]);
}

/// Drawn pieces of tasks of `n` (at the given shares, in thousandths), against the CPU's.
fn check_pieces(gpu: &Gpu, n: u32, at: &[usize]) {
    let cpu = crate::engine::plan("mitm", n, &crate::engine::PlanOptions::default()).unwrap();
    let on_gpu = super::plan(gpu, n).unwrap();
    let draws = crate::subsample::Draws {
        count: 1,
        seed: 5,
        counted: false,
    };
    let parts = |s: crate::subsample::Subsample| -> Vec<_> {
        s.parts.iter().map(|p| (p.count, p.probability)).collect()
    };
    for &share in at {
        let t = (cpu.len() - 1) * share / 1000;
        let want = parts(cpu.solve_sampled(t, draws).unwrap());
        let got = parts(on_gpu.solve_sampled(t, draws).unwrap());
        assert_eq!(got, want, "N = {n}, task {t}");
        assert!(on_gpu.fault().is_none(), "{:?}", on_gpu.fault());
    }
}

#[test]
fn tasks_and_pieces_of_24_to_26_equal_the_cpu() {
    let Some(gpu) = gpu("tasks_and_pieces_of_24_to_26_equal_the_cpu") else {
        return;
    };
    check_pieces(&gpu, 24, &[980]);
    check_pieces(&gpu, 25, &[990]);
    check_pieces(&gpu, 26, &[900]);
}

/// Cases too slow for the suite on a CPU driver: `cargo test --features gpu -- --ignored`.
#[test]
#[ignore]
fn larger_tasks_and_pieces_equal_the_cpu() {
    let Some(gpu) = gpu("larger_tasks_and_pieces_equal_the_cpu") else {
        return;
    };
    check_tasks(&gpu, 22, &[0, 10, 100, 500]);
    check_pieces(&gpu, 24, &[500, 950]);
    check_pieces(&gpu, 25, &[333, 500]);
    check_pieces(&gpu, 26, &[333, 500]);
    check_pieces(&gpu, 27, &[333, 500]);
    check_pieces(&gpu, 28, &[333, 500]);
}

/// `data` scanned in place on the GPU from word `off` of a buffer.
fn gpu_scan(dev: &Device, data: &[u32], off: u64) -> Vec<u32> {
    use super::join::{scan, scan_scratch, write_u32, Stage};
    use super::memory::{Grow, Params, Staging};
    let len = data.len() as u64;
    let mut buf = Grow::storage("test");
    let b = buf
        .at_least(dev, 4 * (off + len + scan_scratch(len)))
        .unwrap();
    let mut words = vec![7u32; off as usize];
    words.extend_from_slice(data);
    write_u32(&dev.queue, &b, &words);
    let (mut params, mut staging) = (Params::new(), Staging::new());
    let mut stage = Stage::new(dev);
    scan(&mut stage, &mut params, &b, (off, len), off + len);
    stage.read(&b, 0, off + len);
    stage.submit(&mut params, &mut staging).unwrap().remove(0)
}

#[test]
fn scans_are_exclusive_prefix_sums_at_every_size_and_offset() {
    let Some(gpu) = gpu("scans_are_exclusive_prefix_sums_at_every_size_and_offset") else {
        return;
    };
    let mut rng = fastrand::Rng::with_seed(5);
    let sizes = [
        (1, 0),
        (1000, 3),
        (1024, 0),
        (1025, 5),
        (5000, 17),
        (1_100_000, 9),
    ];
    for (len, off) in sizes {
        let data: Vec<u32> = (0..len).map(|_| rng.u32(..100)).collect();
        let got = gpu_scan(&gpu.device, &data, off);
        let want: Vec<u32> = data
            .iter()
            .scan(0, |run, &x| {
                let before = *run;
                *run += x;
                Some(before)
            })
            .collect();
        assert!(
            got[..off as usize].iter().all(|&w| w == 7),
            "{len} at {off}"
        );
        assert!(got[off as usize..] == want[..], "{len} at {off}");
    }
}

#[test]
fn the_block_count_is_timed_by_the_gpu_within_the_joins_wall_time() {
    let Some(gpu) = gpu("the_block_count_is_timed_by_the_gpu_within_the_joins_wall_time") else {
        return;
    };
    let cpu = crate::engine::plan("mitm", 18, &crate::engine::PlanOptions::default()).unwrap();
    let on_gpu = super::plan(&gpu, 18).unwrap();
    let t = cpu.len() / 3;
    let (count, work) = on_gpu.solve_counted(t).unwrap();
    assert_eq!(count, cpu.solve(t));
    assert!(work.visited_pairs > 0, "{work:?}");
    if !gpu
        .device
        .device
        .features()
        .contains(wgpu::Features::TIMESTAMP_QUERY)
    {
        assert_eq!(work.count_kernel_seconds, 0.0);
        return;
    }
    assert!(work.count_kernel_seconds > 0.0, "{work:?}");
    assert!(work.count_kernel_seconds <= work.match_seconds, "{work:?}");
}
