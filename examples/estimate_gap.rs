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
    (
        t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9,
        u.ru_minflt as f64,
    )
}

/// Solves `t`, returning the CPU seconds and page faults it took; with `phases`, its work
/// counters (and the CPU seconds of each phase) are added to them.
fn timed(plan: &dyn Plan, t: usize, phases: Option<&mut Phases>) -> (f64, f64) {
    let (c0, f0) = thread_usage();
    if let Some(phases) = phases {
        let (_, work) = plan
            .solve_counted(t)
            .expect("an engine that counts its work");
        for (name, value) in work.counters() {
            *phases.entry(name).or_default() += value;
        }
    } else {
        std::hint::black_box(plan.solve(t));
    }
    let (c1, f1) = thread_usage();
    (c1 - c0, f1 - f0)
}

/// Work counters summed by name.
type Phases = std::collections::BTreeMap<&'static str, f64>;

/// Sums of (seconds, faults) over `ids` of per-task figures `of`.
fn sum(ids: &[usize], of: impl Fn(usize) -> (f64, f64)) -> (f64, f64) {
    ids.iter()
        .map(|&t| of(t))
        .fold((0.0, 0.0), |a, b| (a.0 + b.0, a.1 + b.1))
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let n: u32 = args
        .first()
        .and_then(|a| a.parse().ok())
        .unwrap_or_else(|| {
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
    let is_sampled = {
        let mut v = vec![false; plan.len()];
        design(plan.as_ref(), 256, seed)
            .tasks()
            .iter()
            .for_each(|&t| v[t] = true);
        v
    };
    let counted = plan.solve_counted(0).is_some();
    let mut in_count_phases = Phases::new();
    pool.install(|| {
        for &t in &order {
            let phases = (counted && is_sampled[t]).then_some(&mut in_count_phases);
            count[t] = timed(plan.as_ref(), t, phases);
        }
    });
    let whole = sum(&all, |t| count[t]);
    // The count again, its caches full: what it paid to fill them is the difference.
    let mut again = vec![(0.0, 0.0); plan.len()];
    pool.install(|| {
        order
            .iter()
            .for_each(|&t| again[t] = timed(plan.as_ref(), t, None))
    });
    let warm = sum(&all, |t| again[t]);
    println!(
        "N = {n}: the count again with its caches filled: {:.3} s ({:+.1}%), {:.0} page faults",
        warm.0,
        100.0 * (warm.0 / whole.0 - 1.0),
        warm.1
    );
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
    println!(
        "the {} sampled tasks, CPU seconds and minor page faults:",
        sampled.len()
    );
    report("in the count", in_count);
    let position: Vec<usize> = {
        let mut p = vec![0; plan.len()];
        order.iter().enumerate().for_each(|(i, &t)| p[t] = i);
        p
    };
    // The sampled tasks re-timed three ways, a round of each in turn so that the machine's
    // load drifts alike for all three: shuffled (as the estimate times them), each right
    // after the task before it in the count's order, and after the eight before it.
    let ways: [(&'static str, usize); 3] = [
        ("shuffled rounds (as the estimate times them)", 0),
        ("each right after its predecessor", 1),
        ("each right after its eight predecessors", 8),
    ];
    let rounds = 10;
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut per_round = vec![Vec::new(); ways.len()];
    let mut all_phases = vec![("in the count", in_count_phases)];
    all_phases.extend(ways.iter().map(|&(what, _)| (what, Phases::new())));
    let mut ids = sampled.clone();
    pool.install(|| {
        ids.iter().for_each(|&t| {
            std::hint::black_box(plan.solve(t));
        });
        for _ in 0..rounds {
            for (w, &(_, before)) in ways.iter().enumerate() {
                rng.shuffle(&mut ids);
                let mut total = (0.0, 0.0);
                for &t in &ids {
                    for &p in &order[position[t].saturating_sub(before)..position[t]] {
                        std::hint::black_box(plan.solve(p));
                    }
                    let phases = counted.then_some(&mut all_phases[w + 1].1);
                    let (s, f) = timed(plan.as_ref(), t, phases);
                    total = (total.0 + s, total.1 + f);
                }
                per_round[w].push(total);
            }
        }
    });
    for (w, &(what, _)) in ways.iter().enumerate() {
        let mut secs: Vec<f64> = per_round[w].iter().map(|r| r.0).collect();
        secs.sort_by(f64::total_cmp);
        let faults: f64 = per_round[w].iter().map(|r| r.1).sum::<f64>() / rounds as f64;
        report(&format!("{what}, median"), (secs[rounds / 2], faults));
    }
    for (_, p) in &mut all_phases[1..] {
        p.values_mut().for_each(|v| *v /= rounds as f64);
    }
    // Where the seconds went, phase by phase, and what work was done.
    let Some((_, first)) = all_phases.first() else {
        return;
    };
    for name in first.keys() {
        let values: Vec<String> = all_phases
            .iter()
            .map(|(_, p)| format!("{:>11.4e}", p.get(name).copied().unwrap_or(0.0)))
            .collect();
        println!("  {name:>22} {}", values.join(" "));
    }
}
