//! A run stopped while its joins are on the GPU: the joins in hand are given up between two
//! batches, the workers return, and no count of a task cut short is kept.

use std::sync::{Arc, OnceLock};

use super::common::gpu;
use crate::engine::mitm::{Joiner, MitmPlan};
use crate::error::Error;
use crate::gpu::device::Gpu;
use crate::gpu::join::GpuJoiner;
use crate::gpu::plan::SHARED_H;
use crate::gpu::slot::Capacity;
use crate::plan::{execute, thread_pool, NoProgress, Plan, Progress};

/// A joiner whose batches hold so few blocks that a task's joins are cut into many parts.
fn cramped(gpu: &Gpu) -> Arc<GpuJoiner> {
    let mut cap = Capacity::of_budget(&gpu.device, 16 << 20);
    cap.blocks = 6;
    Arc::new(GpuJoiner::with_capacity(
        Arc::clone(&gpu.device),
        cap,
        1 << 12,
        None,
    ))
}

/// Asks to stop once `joiner` has landed `after` batches, and keeps how many it had then.
struct StopAfterBatches {
    joiner: Arc<GpuJoiner>,
    after: u64,
    at_stop: OnceLock<u64>,
}

impl Progress for StopAfterBatches {
    fn should_stop(&self) -> bool {
        let landed = self
            .joiner
            .totals()
            .expect("the GPU keeps totals")
            .gpu_submits;
        if landed < self.after {
            return false;
        }
        self.at_stop.get_or_init(|| landed);
        true
    }
}

/// The tasks of N = `n` solved on `joiner` on one worker, and the batches it landed.
fn run(n: u32, joiner: &Arc<GpuJoiner>, progress: &dyn Progress) -> (Result<u128, Error>, u64) {
    let plan = MitmPlan::with_joiner(n, Arc::clone(joiner) as Arc<dyn Joiner>, SHARED_H);
    let ids: Vec<usize> = (0..plan.len()).collect();
    let pool = thread_pool(1).unwrap();
    let total = execute(&plan, &ids, &pool, progress);
    (total, joiner.totals().unwrap().gpu_submits)
}

/// Stopped after a few of the many batches its cut joins take, a run ends after at most one
/// more (the one landing when the stop came): the joins queued and in flight are given up,
/// the waiting worker returns, and the run says it was interrupted rather than count short.
/// Run again, the same tasks count exactly.
#[test]
fn a_stop_gives_up_the_joins_in_hand_between_two_batches() {
    let Some(gpu) = gpu("a_stop_gives_up_the_joins_in_hand_between_two_batches") else {
        return;
    };
    let n = 12;
    let (whole, batches) = run(n, &cramped(&gpu), &NoProgress);
    assert_eq!(whole.unwrap(), crate::known::total(n).unwrap());
    let after = 3;
    assert!(
        batches > 4 * after,
        "{batches} batches: too few to stop within"
    );
    let joiner = cramped(&gpu);
    let stop = StopAfterBatches {
        joiner: Arc::clone(&joiner),
        after,
        at_stop: OnceLock::new(),
    };
    let (stopped, landed) = run(n, &joiner, &stop);
    assert!(matches!(stopped, Err(Error::Interrupted)), "{stopped:?}");
    let at_stop = *stop.at_stop.get().expect("the run was asked to stop");
    eprintln!("N = {n}: {batches} batches whole; stopped at {at_stop}, {landed} landed");
    assert!(
        landed <= at_stop + 1,
        "{landed} batches landed, {at_stop} at the stop"
    );
    let (again, _) = run(n, &cramped(&gpu), &NoProgress);
    assert_eq!(again.unwrap(), crate::known::total(n).unwrap());
}

/// A stopped joiner gives up every join at once, on the GPU or made on this CPU, and a
/// plan on it says it was interrupted, not that the GPU failed.
#[test]
fn a_stopped_joiner_gives_up_every_join() {
    let Some(gpu) = gpu("a_stopped_joiner_gives_up_every_join") else {
        return;
    };
    let n = 14;
    let cpu = crate::engine::plan("mitm", n, &crate::engine::PlanOptions::default()).unwrap();
    let mut cap = Capacity::of_budget(&gpu.device, 16 << 20);
    for words in [cap.words, 0] {
        // Room for no carried word: the joins that carry some are made on this CPU.
        cap.words = words;
        let joiner = GpuJoiner::with_capacity(Arc::clone(&gpu.device), cap, 1 << 12, None);
        let plan = MitmPlan::with_joiner(n, Arc::new(joiner), SHARED_H);
        let on_host = |t: usize| plan.solve_counted(t).unwrap().1.host_joins > 0;
        let t = (0..plan.len())
            .find(|&t| (words == 0) == on_host(t))
            .expect("a task joined where this case joins");
        assert_eq!(plan.solve(t), cpu.solve(t), "{words} words");
        assert!(plan.fault().is_none(), "{:?}", plan.fault());
        plan.stop();
        plan.solve(t);
        assert!(matches!(plan.fault(), Some(Error::Interrupted)), "{words}");
    }
}
