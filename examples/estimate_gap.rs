//! Where an estimate's seconds differ from a count's, task by task: solves every task of N's
//! stable plan once on this thread in the order a count runs them (largest first), each timed
//! on the thread's CPU clock with the page faults it took, then times the sampled tasks of
//! `estimate N -j1 --seed S` as the estimate does, and in other orders, and prints the
//! sampled tasks' CPU seconds and page faults each way beside the count's.
//!
//! `cargo run --release --example estimate_gap -- N [SEED] [ENGINE]`

use std::sync::Arc;

use nqueens::estimate::{calibrate, design, Settings};
use nqueens::plan::{largest_first, thread_pool};
use nqueens::{CountOptions, Plan};

/// This thread's CPU seconds (its scheduler clock, to the nanosecond) and minor page faults
/// so far.
fn thread_usage() -> (f64, f64) {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: an all-zero rusage is valid; both calls write only what they are given.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe {
        libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t);
        libc::getrusage(libc::RUSAGE_THREAD, &mut u);
    }
    (t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9, u.ru_minflt as f64)
}

/// Solves `t`, returning the CPU seconds and page faults it took.
fn timed(plan: &dyn Plan, t: usize) -> (f64, f64) {
    let (c0, f0) = thread_usage();
    std::hint::black_box(plan.solve(t));
    let (c1, f1) = thread_usage();
    (c1 - c0, f1 - f0)
}

/// Sums of (seconds, faults) over `ids` of per-task figures `of`.
fn sum(ids: &[usize], of: impl Fn(usize) -> (f64, f64)) -> (f64, f64) {
    ids.iter()
        .map(|&t| of(t))
        .fold((0.0, 0.0), |a, b| (a.0 + b.0, a.1 + b.1))
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let n: u32 = args.first().and_then(|a| a.parse().ok()).unwrap_or_else(|| {
        eprintln!("usage: estimate_gap N [SEED] [ENGINE]");
        std::process::exit(2);
    });
    let seed: u64 = args.get(1).map_or(11, |s| s.parse().expect("a seed"));
    let engine = args.get(2).map_or("auto", String::as_str);
    let options = CountOptions::new().engine(engine).threads(1);
    let plan: Arc<dyn Plan> = Arc::from(nqueens::shard::stable_plan(n, &options).expect("a plan"));
    let pool = thread_pool(1).expect("a pool");
    let all: Vec<usize> = (0..plan.len()).collect();
    let order = largest_first(plan.as_ref(), &all);
    // The count: every task once, largest first, on one thread.
    let mut count = vec![(0.0, 0.0); plan.len()];
    pool.install(|| order.iter().for_each(|&t| count[t] = timed(plan.as_ref(), t)));
    let whole = sum(&all, |t| count[t]);
    // The estimate, as it runs.
    let d = design(plan.as_ref(), 256, seed);
    let settings = Settings {
        budget: 3.0,
        seed,
        draws: 2,
        limit: 90.0,
    };
    let cal = calibrate(&plan, &d, &pool, settings);
    let d = d.keep(&cal.tasks);
    let e = d.estimate(plan.as_ref(), &cal, 0.0);
    println!(
        "N = {n} ({}), seed {seed}: count {:.3} s of CPU, {:.0} page faults; estimate {:.3} s \
         ({:+.1}%), {} rounds",
        plan.engine(),
        whole.0,
        whole.1,
        e.total.estimate,
        100.0 * (e.total.estimate / whole.0 - 1.0),
        cal.rounds()
    );
    let sampled = &cal.tasks;
    let in_count = sum(sampled, |t| count[t]);
    let report = |what: &str, (s, f): (f64, f64)| {
        println!(
            "  {what:<44} {s:8.4} s {:+6.1}%, {f:8.0} faults",
            100.0 * (s / in_count.0 - 1.0)
        );
    };
    println!("the {} sampled tasks, CPU seconds and minor page faults:", sampled.len());
    report("in the count", in_count);
    let position: Vec<usize> = {
        let mut p = vec![0; plan.len()];
        order.iter().enumerate().for_each(|(i, &t)| p[t] = i);
        p
    };
    let rounds = 5;
    let mut rng = fastrand::Rng::with_seed(seed);
    // Each way: a warm-up round, then `rounds` timed rounds in the way's order.
    let mut way = |what: &str, shuffle: bool, predecessor: bool| {
        let mut ids = sampled.clone();
        let mut got = vec![(0.0, 0.0); plan.len()];
        pool.install(|| {
            ids.iter().for_each(|&t| {
                std::hint::black_box(plan.solve(t));
            });
            for _ in 0..rounds {
                if shuffle {
                    rng.shuffle(&mut ids);
                }
                for &t in &ids {
                    if let (true, Some(p)) = (predecessor, position[t].checked_sub(1)) {
                        std::hint::black_box(plan.solve(order[p]));
                    }
                    let (s, f) = timed(plan.as_ref(), t);
                    got[t].0 += s / rounds as f64;
                    got[t].1 += f / rounds as f64;
                }
            }
        });
        report(what, sum(sampled, |t| got[t]));
    };
    way("shuffled rounds (as the estimate times them)", true, false);
    way("rounds in the count's order", false, false);
    way("each right after its predecessor", true, true);
}
