//! Whole plans on the GPU: exact totals, and the budgets of what the kernels do and of the
//! conversation with the GPU (submissions, waits, steps, bytes).

use std::sync::Arc;

use super::common::gpu;
use crate::engine::mitm::MitmPlan;
use crate::gpu::device::Gpu;
use crate::gpu::join::{GpuJoiner, TASKS_IN_FLIGHT};
use crate::gpu::plan::{plan, SHARED_H};
use crate::gpu::slot::Capacity;
use crate::plan::{execute, thread_pool, NoProgress, Plan};
use crate::work::Work;

/// Asserts the kernels' work budgets over `work`: at most 3,000 keys tested per chunk the
/// table build makes, and 0.1 global routing atomics per visit.
fn assert_kernel_budgets(work: &Work, what: &str) {
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

/// Asserts the feeding budgets over a run's device totals `work` for `tasks` tasks: per
/// task at most 1/32 submission and wait, one step (dispatch, copy or clear) and 64 bytes
/// read back, and no tree built on the host.
fn assert_feeding_budgets(work: &Work, tasks: usize, what: &str) {
    let per = |x: u64| x as f64 / tasks as f64;
    let (submits, waits) = (per(work.gpu_submits), per(work.gpu_waits));
    let (steps, down) = (per(work.gpu_steps), per(work.gpu_bytes_down));
    eprintln!(
        "{what}: per task {submits:.4} submissions, {waits:.4} waits, {steps:.3} steps, \
         {down:.1} bytes down, {:.0} bytes up",
        per(work.gpu_bytes_up)
    );
    assert!(
        submits <= 1.0 / 32.0 && waits <= 1.0 / 32.0,
        "{what}: {work:?}"
    );
    assert!(steps <= 1.0, "{what}: {steps} steps a task");
    assert!(down <= 64.0, "{what}: {down} bytes down a task");
    assert_eq!(work.host_tree_keys, 0, "{what}");
}

/// The GPU plan of `n` solved whole.
fn gpu_total(gpu: &Gpu, n: u32, threads: usize) -> u128 {
    let plan = plan(gpu, n).unwrap();
    let ids: Vec<usize> = (0..plan.len()).collect();
    let pool = thread_pool(threads).unwrap();
    execute(plan.as_ref(), &ids, &pool, &NoProgress).unwrap()
}

#[test]
fn every_total_from_4_to_16_is_known_and_fed_in_batches() {
    let Some(gpu) = gpu("every_total_from_4_to_16_is_known_and_fed_in_batches") else {
        return;
    };
    for n in 4..=15 {
        let want = crate::known::total(n).unwrap();
        assert_eq!(gpu_total(&gpu, n, 2), want, "N = {n}");
    }
    // 16 as a count runs it, with what the device did.
    let plan = plan(&gpu, 16).unwrap();
    let ids: Vec<usize> = (0..plan.len()).collect();
    let pool = thread_pool(2).unwrap();
    let total = execute(plan.as_ref(), &ids, &pool, &NoProgress).unwrap();
    assert_eq!(total, crate::known::total(16).unwrap(), "N = 16");
    let work = plan.device_work().expect("the GPU keeps totals");
    assert_feeding_budgets(&work, plan.len(), "N = 16");
    assert_kernel_budgets(&work, "N = 16");
}

/// With a resident room far smaller than a plan's shared quarters, those that fit are
/// uploaded once each and the others carried by their joins: the count stays exact.
#[test]
fn quarters_past_the_resident_room_are_carried() {
    let Some(gpu) = gpu("quarters_past_the_resident_room_are_carried") else {
        return;
    };
    let n = 14;
    let room = 1u64 << 12;
    let count = |room: u64| {
        let cap = Capacity::of_budget(&gpu.device, 64 << 20);
        let joiner = GpuJoiner::with_capacity(Arc::clone(&gpu.device), cap, room, None);
        let plan = MitmPlan::with_joiner(n, Arc::new(joiner), SHARED_H);
        let ids: Vec<usize> = (0..plan.len()).collect();
        let pool = thread_pool(2).unwrap();
        let total = execute(&plan, &ids, &pool, &NoProgress).unwrap();
        assert_eq!(total, crate::known::total(n).unwrap(), "room {room}");
        plan.device_work().expect("the GPU keeps totals")
    };
    let (small, large) = (count(room), count(1 << 24));
    // Each resident quarter is uploaded once, within the room; the small room's others
    // are carried, batch after batch.
    assert!(small.gpu_resident_bytes <= 8 * room, "{small:?}");
    assert!(
        small.gpu_resident_bytes < large.gpu_resident_bytes,
        "{large:?}"
    );
    let carried = |w: &Work| w.gpu_bytes_up - w.gpu_resident_bytes;
    eprintln!(
        "N = {n}: resident bytes {} and {}, other bytes up {} and {}",
        small.gpu_resident_bytes,
        large.gpu_resident_bytes,
        carried(&small),
        carried(&large)
    );
    assert!(carried(&small) > carried(&large), "{small:?} {large:?}");
}

/// `ids` of the plan of `n` solved on the GPU and on the CPU, their sums compared: what the
/// device did.
fn solve_on_both(gpu: &Gpu, n: u32, ids: &[usize]) -> Work {
    let plan = plan(gpu, n).unwrap();
    let cpu = crate::engine::plan("mitm", n, &crate::engine::PlanOptions::default()).unwrap();
    let pool = thread_pool(2).unwrap();
    let got = execute(plan.as_ref(), ids, &pool, &NoProgress).unwrap();
    let want = execute(cpu.as_ref(), ids, &pool, &NoProgress).unwrap();
    assert_eq!(got, want, "N = {n}");
    plan.device_work().expect("the GPU keeps totals")
}

/// A join that carries more quarter words than a batch holds, which no cut could make fit,
/// is made on the CPU and counted as such: the total stays exact.
#[test]
fn a_join_carrying_more_words_than_a_batch_holds_is_made_on_the_cpu() {
    let Some(gpu) = gpu("a_join_carrying_more_words_than_a_batch_holds_is_made_on_the_cpu") else {
        return;
    };
    let n = 14;
    let mut cap = Capacity::of_budget(&gpu.device, 64 << 20);
    cap.words = 64;
    let joiner = GpuJoiner::with_capacity(Arc::clone(&gpu.device), cap, 1 << 12, None);
    let plan = MitmPlan::with_joiner(n, Arc::new(joiner), SHARED_H);
    let ids: Vec<usize> = (0..plan.len()).collect();
    let pool = thread_pool(2).unwrap();
    let total = execute(&plan, &ids, &pool, &NoProgress).unwrap();
    assert_eq!(total, crate::known::total(n).unwrap());
    let work = plan.device_work().expect("the GPU keeps totals");
    eprintln!(
        "{} joins on the CPU, {} submissions",
        work.host_joins, work.gpu_submits
    );
    assert!(work.host_joins > 0 && work.gpu_submits > 0, "{work:?}");
    // A task's own counters say so too (an estimate scales them).
    let on_host = (0..plan.len()).find(|&t| plan.solve_counted(t).unwrap().1.host_joins > 0);
    assert!(
        on_host.is_some(),
        "no task's counters name a join made on the CPU"
    );
}

#[test]
fn sampled_tasks_of_18_to_22_are_fed_in_batches() {
    let Some(gpu) = gpu("sampled_tasks_of_18_to_22_are_fed_in_batches") else {
        return;
    };
    let mut all = Work::default();
    for n in 18..=22 {
        // The cheapest tasks (at the plan's end), a worker's step of them, for the feeding
        // budgets: a batch takes some 30 steps (the quarters its tasks are the first to
        // read, one upload), so a step of tasks spread over the plan, whose costliest fill
        // batches sooner, makes more a task than a whole count, whose many cheap tasks
        // share batches (here 0.21 to 0.45 steps a task, counted as recorded). (Tasks of N = 22 before them read more shared quarters than
        // lavapipe's resident room holds, and carry the rest in joins that go in batches
        // of their own.)
        let len = crate::engine::plan("mitm", n, &crate::engine::PlanOptions::default())
            .unwrap()
            .len();
        let ids: Vec<usize> = (len - TASKS_IN_FLIGHT..len).collect();
        let work = solve_on_both(&gpu, n, &ids);
        assert_feeding_budgets(&work, ids.len(), &format!("N = {n}"));
        all.add(&work);
    }
    assert_kernel_budgets(&all, "sampled tasks of N = 18..22");
}

/// The kernels' budgets hold for typical tasks too: a worker's step spread over each plan.
#[test]
fn spread_tasks_of_18_to_20_keep_the_kernels_budgets() {
    let Some(gpu) = gpu("spread_tasks_of_18_to_20_keep_the_kernels_budgets") else {
        return;
    };
    for n in 18..=20 {
        let len = crate::engine::plan("mitm", n, &crate::engine::PlanOptions::default())
            .unwrap()
            .len();
        let ids: Vec<usize> = (0..TASKS_IN_FLIGHT)
            .map(|i| i * len / TASKS_IN_FLIGHT)
            .collect();
        assert_kernel_budgets(
            &solve_on_both(&gpu, n, &ids),
            &format!("spread tasks of N = {n}"),
        );
    }
}

#[test]
fn every_pass_is_timed_by_the_gpu() {
    let Some(gpu) = gpu("every_pass_is_timed_by_the_gpu") else {
        return;
    };
    let cpu = crate::engine::plan("mitm", 18, &crate::engine::PlanOptions::default()).unwrap();
    let on_gpu = plan(&gpu, 18).unwrap();
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
    let passes: f64 = work.gpu_pass_seconds().iter().map(|(_, s)| s).sum();
    assert!(
        work.gpu_tables_seconds > 0.0 && work.gpu_routing_seconds > 0.0,
        "{work:?}"
    );
    assert!(work.count_kernel_seconds > 0.0, "{work:?}");
    assert!(work.gpu_half_join_seconds > 0.0, "{work:?}");
    // The GPU's clock and the host's are not compared: how the two line up is the driver's
    // business, not a test's (scripts/gpu-check.sh reports both).
    assert!(passes.is_finite(), "{work:?}");
}
