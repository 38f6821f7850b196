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
        for (stored_w, query_w) in [([1, 2, 3, 4], [1, 1, 2, 1]), ([2, 4, 4, 4], [1; 4])] {
            let fill = Fill {
                live,
                stored_w,
                query_w,
            };
            let (weighted, hits, _) = slot
                .count_keys(&gpu.device, (&stored, &queries), fill)
                .unwrap();
            assert_eq!(
                (weighted, hits),
                brute(&stored, &queries, fill),
                "{s} stored, {q} queries, {bits} bits, weights {stored_w:?} {query_w:?}"
            );
        }
    }
}

/// A weighing of a join's pairs: stored and query weights by class, the classes the stored
/// keys and the queries take, and the block count's mode for them (tables.wgsl's
/// `weighing`).
struct Weighing {
    what: &'static str,
    stored_w: [u32; 4],
    query_w: [u32; 4],
    key_classes: u32,
    query_classes: u32,
    mode: u32,
}

const fn weighing(
    what: &'static str,
    w: ([u32; 4], [u32; 4]),
    classes: (u32, u32),
    mode: u32,
) -> Weighing {
    Weighing {
        what,
        stored_w: w.0,
        query_w: w.1,
        key_classes: classes.0,
        query_classes: classes.1,
        mode,
    }
}

/// The weighings of the engine's joins, and two beyond them.
const WEIGHINGS: [Weighing; 9] = [
    weighing("odd N: one class", ([1, 0, 0, 0], [1; 4]), (1, 4), 0),
    weighing("even N, ew = 2", ([4, 4, 4, 4], [1; 4]), (4, 4), 0),
    weighing("even N, ew = 1", ([2, 4, 4, 4], [1; 4]), (4, 4), 1),
    weighing("even N, ew = 0", ([0, 4, 4, 4], [1; 4]), (4, 4), 1),
    weighing("even N below 18", ([1, 2, 2, 4], [1; 4]), (4, 4), 3),
    weighing("swapped, odd N", ([1; 4], [1, 0, 0, 0]), (4, 1), 2),
    weighing("swapped, even N", ([1; 4], [2, 4, 4, 4]), (4, 4), 2),
    weighing(
        "both sides weighted",
        ([1, 2, 3, 4], [1, 1, 2, 1]),
        (4, 4),
        3,
    ),
    weighing(
        "the largest weights",
        ([255, 254, 255, 255], [255; 4]),
        (4, 4),
        1,
    ),
];

/// `keys` with their classes drawn from the first `classes`.
fn with_classes(rng: &mut fastrand::Rng, keys: &[u64], classes: u32) -> Vec<u64> {
    keys.iter()
        .map(|k| k & !(3 << 61) | u64::from(rng.u32(..classes)) << 61)
        .collect()
}

/// Word `at` of every block's description in the slot's `info` (after a count).
fn block_info(dev: &Device, slot: &mut Slot, blocks: u64, at: u64) -> Vec<u32> {
    use super::join::Stage;
    use super::shader::BLOCK_INFO;
    let mut stage = Stage::new(dev);
    stage.read(slot.info.get(), 0, 4 * BLOCK_INFO * blocks);
    let words = stage
        .submit(&mut slot.params, &mut slot.staging)
        .unwrap()
        .remove(0);
    words
        .chunks_exact(4 * BLOCK_INFO as usize)
        .map(|b| b[at as usize])
        .collect()
}

#[test]
fn every_chunk_count_and_weighing_equals_brute_force() {
    let Some(gpu) = gpu("every_chunk_count_and_weighing_equals_brute_force") else {
        return;
    };
    let mut rng = fastrand::Rng::with_seed(3);
    let mut slot = Slot::new();
    let live = (1 << 61) - 1;
    for chunks in 1..=12u32 {
        // One block (a single leaf) whose keys mix every one of their bits: 5·chunks − 2.
        let bits = 5 * chunks - 2;
        let size = if chunks % 2 == 0 { 512 } else { 300 };
        let stored = keys(&mut rng, size, bits, 0.2);
        let queries = keys(&mut rng, 200, bits, 0.2);
        for w in &WEIGHINGS {
            let (what, mode) = (w.what, w.mode);
            let stored = with_classes(&mut rng, &stored, w.key_classes);
            let queries = with_classes(&mut rng, &queries, w.query_classes);
            let fill = Fill {
                live,
                stored_w: w.stored_w,
                query_w: w.query_w,
            };
            let (weighted, hits, stats) = slot
                .count_keys(&gpu.device, (&stored, &queries), fill)
                .unwrap();
            let case = format!("{chunks} chunks, {what}");
            assert_eq!((weighted, hits), brute(&stored, &queries, fill), "{case}");
            assert!(hits > 0, "{case}: no pair met");
            assert_eq!(stats[1], u64::from(chunks), "{case}: chunks built");
            let desc = block_info(&gpu.device, &mut slot, 1, 4);
            assert_eq!(desc, [chunks | mode << 8], "{case}: chunks and mode");
        }
    }
}

#[test]
fn a_workgroups_sum_past_2_to_the_32_stays_exact_in_every_mode() {
    let Some(gpu) = gpu("a_workgroups_sum_past_2_to_the_32_stays_exact_in_every_mode") else {
        return;
    };
    // One block of 512 keys that meet every query: a count workgroup takes 2,048 routes of
    // 512 hits, each weighing up to 255 · 255, so its sum passes 2^36 while no invocation's
    // passes 2^28 (count.wgsl).
    let mut rng = fastrand::Rng::with_seed(9);
    let mut slot = Slot::new();
    let zeros = [0u64; 512];
    let queries = [0u64; 4096];
    for (stored_w, query_w) in [
        ([255; 4], [255; 4]),
        ([255, 254, 255, 255], [255; 4]),
        ([255; 4], [255, 254, 253, 255]),
        ([255, 1, 2, 255], [255, 254, 253, 255]),
    ] {
        let stored = with_classes(&mut rng, &zeros, 4);
        let queries = with_classes(&mut rng, &queries, 4);
        let fill = Fill {
            live: (1 << 61) - 1,
            stored_w,
            query_w,
        };
        let (weighted, hits, _) = slot
            .count_keys(&gpu.device, (&stored, &queries), fill)
            .unwrap();
        assert_eq!(hits, 512 * 4096);
        assert_eq!((weighted, hits), brute(&stored, &queries, fill));
        // Two count workgroups: one at least passed 2^34.
        assert!(weighted > 1 << 35, "{weighted}");
    }
}

#[test]
fn a_weight_the_count_cannot_sum_is_refused() {
    let Some(gpu) = gpu("a_weight_the_count_cannot_sum_is_refused") else {
        return;
    };
    let fill = Fill {
        live: (1 << 61) - 1,
        stored_w: [1, 256, 1, 1],
        query_w: [1; 4],
    };
    let got = Slot::new().count_keys(&gpu.device, (&[0; 4], &[0; 4]), fill);
    let e = got.expect_err("a weight of 256");
    assert!(e.contains("256"), "{e}");
}

/// Asserts the kernels' work budgets over `work`: at most 3,000 keys tested per chunk the
/// table build makes, and 0.1 global routing atomics per visit.
fn assert_budgets(work: &crate::Work, what: &str) {
    assert!(
        work.table_chunks > 0 && work.visited_pairs > 0,
        "{what}: {work:?}"
    );
    let tests = work.table_key_tests as f64 / work.table_chunks as f64;
    assert!(tests <= 3000.0, "{what}: {tests:.0} key tests a chunk");
    let atomics = work.route_atomics as f64 / work.visited_pairs as f64;
    assert!(atomics <= 0.1, "{what}: {atomics:.3} route atomics a visit");
    eprintln!("{what}: {tests:.0} key tests a chunk, {atomics:.4} route atomics a visit");
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
    for n in 4..=15 {
        let want = crate::known::total(n).unwrap();
        assert_eq!(gpu_total(&gpu, n, 2), want, "N = {n}");
    }
    // 16 task by task, with the work counters.
    let plan = super::plan(&gpu, 16).unwrap();
    let mut work = crate::Work::default();
    let mut total = 0;
    for t in 0..plan.len() {
        let (count, w) = plan.solve_counted(t).unwrap();
        total += count;
        work.add(&w);
    }
    assert_eq!(total, crate::known::total(16).unwrap(), "N = 16");
    assert_budgets(&work, "N = 16");
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

/// Tasks of `n` at the given shares of its plan (in thousandths), each join checked; returns
/// their work.
fn check_tasks(gpu: &Gpu, n: u32, at: &[usize]) -> crate::Work {
    let joiner = Arc::new(Checked(super::join::GpuJoiner::new(
        Arc::clone(&gpu.device),
        None,
    )));
    let on_gpu = MitmPlan::with_joiner(n, joiner);
    let cpu = crate::engine::plan("mitm", n, &crate::engine::PlanOptions::default()).unwrap();
    let mut work = crate::Work::default();
    for &share in at {
        let t = (cpu.len() - 1) * share / 1000;
        let (count, w) = on_gpu.solve_counted(t).unwrap();
        assert_eq!(count, cpu.solve(t), "N = {n}, task {t}");
        assert!(on_gpu.fault().is_none(), "{:?}", on_gpu.fault());
        work.add(&w);
    }
    work
}

#[test]
fn sampled_tasks_of_15_to_23_equal_the_cpu_join_by_join() {
    let Some(gpu) = gpu("sampled_tasks_of_15_to_23_equal_the_cpu_join_by_join") else {
        return;
    };
    // 18 and up weigh even pairs by the transposes (ties); odd N have cross tasks.
    check_tasks(&gpu, 15, &[0, 500, 999]);
    check_tasks(&gpu, 16, &[0, 300]);
    let mut work = check_tasks(&gpu, 18, &[0, 100, 700]);
    work.add(&check_tasks(&gpu, 19, &[0, 10, 500]));
    work.add(&check_tasks(&gpu, 20, &[500, 990]));
    work.add(&check_tasks(&gpu, 21, &[900]));
    work.add(&check_tasks(&gpu, 22, &[990]));
    assert_budgets(&work, "sampled tasks of N = 18..22");
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
    assert_budgets(&check_tasks(&gpu, 22, &[0, 10, 100, 500]), "N = 22");
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
