//! Lab tables: measurements printed for people, not checked (they informed the shard layout
//! and the checkpoint format). Run with `cargo bench --bench lab`; each table takes seconds
//! to a minute.
//!
//! - shard balance: the cost gap between the shards of the mitm plans, N = 16..20,
//!   K = 4..1000;
//! - greedy LPT (a partition that sorts every task by cost first) against the snake layout
//!   and a cyclic one at N = 16, where shards of a large K hold only a few tasks;
//! - checkpoint sizes and save times at the size of the N = 27 mitm plan;
//! - the coverage of `estimate`'s 90% interval on solution counts (whose total is known) for
//!   several plans and sample sizes, over 100 designs each.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use nqueens::estimate::design;
use nqueens::plan::fingerprint_words;
use nqueens::shard::{Checkpoint, ShardSpec};
use nqueens::{CountOptions, Plan};

fn main() {
    shard_balance_table();
    lpt_balance_at_16();
    checkpoint_sizes_and_save_times();
    interval_coverage_table();
}

/// How often the 90% interval of `samples` sampled tasks holds Q(N), over `seeds` designs.
fn coverage(engine: &str, n: u32, samples: usize, seeds: u64) -> f64 {
    let options = CountOptions::new().engine(engine).threads(1);
    let plan = nqueens::shard::stable_plan(n, &options).expect("a plan");
    let counts: Vec<f64> = (0..plan.len()).map(|t| plan.solve(t) as f64).collect();
    let truth = nqueens::known::total(n).expect("a published count") as f64;
    let hits = (1..=seeds)
        .filter(|&seed| {
            let e = design(plan.as_ref(), samples, seed).combine(plan.as_ref(), |t| counts[t]);
            e.low <= truth && truth <= e.high
        })
        .count();
    hits as f64 / seeds as f64
}

/// The estimator's interval coverage on solution counts, for several plans and sample sizes.
fn interval_coverage_table() {
    println!("\nestimate interval coverage (solution counts, 100 designs each):");
    for (engine, n) in [
        ("mitm", 14),
        ("mitm", 15),
        ("mitm", 16),
        ("symmetry", 14),
        ("mirror", 13),
    ] {
        for samples in [16, 64, 256] {
            let c = coverage(engine, n, samples, 100);
            println!(
                "{engine} N = {n}, {samples} samples: coverage {:.0}%",
                c * 100.0
            );
        }
    }
}

/// The expected work of shard `spec` of `plan`.
fn shard_cost(plan: &dyn Plan, spec: ShardSpec) -> u128 {
    spec.ids(plan.len()).map(|t| u128::from(plan.cost(t))).sum()
}

/// The largest relative gap between shard costs, (max − min) / max.
fn imbalance(plan: &dyn Plan, k: usize) -> f64 {
    let costs: Vec<u128> = (0..k)
        .map(|i| shard_cost(plan, ShardSpec::new(i, k).unwrap()))
        .collect();
    gap(&costs)
}

/// (max − min) / max of `loads`.
fn gap(loads: &[u128]) -> f64 {
    let (lo, hi) = (*loads.iter().min().unwrap(), *loads.iter().max().unwrap());
    (hi - lo) as f64 / hi as f64
}

/// The imbalance for N = 16..20 and K = 4..1000.
fn shard_balance_table() {
    println!("== shard balance of the mitm plans (gap = (max − min) / max of shard costs)");
    for n in 16..=20 {
        let p = CountOptions::new().engine("mitm").plan(n).unwrap();
        let gaps: Vec<(usize, f64)> = (4..=1000).map(|k| (k, imbalance(p.as_ref(), k))).collect();
        let worst = gaps
            .iter()
            .cloned()
            .fold((0, 0.0), |a, b| if b.1 > a.1 { b } else { a });
        let ok = gaps.iter().filter(|g| g.1 <= 0.05).count();
        let first_bad = gaps.iter().find(|g| g.1 > 0.05).map(|g| g.0);
        println!(
            "N = {n}: {} tasks; K with gap <= 5%: {ok} of {}; first K over 5%: {first_bad:?}; \
             worst K = {} ({:.2}%)",
            p.len(),
            gaps.len(),
            worst.0,
            worst.1 * 100.0
        );
    }
}

/// Greedy LPT, the snake layout and a cyclic one at N = 16.
fn lpt_balance_at_16() {
    println!("== LPT against the snake layout at N = 16");
    let p = CountOptions::new().engine("mitm").plan(16).unwrap();
    for k in [128, 256, 300, 400, 500, 700, 925, 1000] {
        let mut loads: BinaryHeap<Reverse<(u128, usize)>> =
            (0..k).map(|i| Reverse((0, i))).collect();
        for t in 0..p.len() {
            let Reverse((l, i)) = loads.pop().unwrap();
            loads.push(Reverse((l + u128::from(p.cost(t)), i)));
        }
        let lpt: Vec<u128> = loads.into_iter().map(|r| r.0 .0).collect();
        let snake: Vec<u128> = (0..k)
            .map(|i| shard_cost(p.as_ref(), ShardSpec::new(i, k).unwrap()))
            .collect();
        let mut cyclic = vec![0u128; k];
        for t in 0..p.len() {
            cyclic[t % k] += u128::from(p.cost(t));
        }
        let mean = lpt.iter().sum::<u128>() as f64 / k as f64;
        println!(
            "K = {k}: LPT gap {:.2}%, snake gap {:.2}%, cyclic gap {:.2}%, largest task / mean \
             shard {:.1}%",
            gap(&lpt) * 100.0,
            gap(&snake) * 100.0,
            gap(&cyclic) * 100.0,
            p.cost(0) as f64 / mean * 100.0
        );
    }
}

/// A plan of `len` tasks at board size `n`, for checkpoint sizes: task `t` costs
/// `(len − t) / 7 + 1` and counts `t * t`.
struct Fake(u32, usize);

impl Plan for Fake {
    fn n(&self) -> u32 {
        self.0
    }
    fn engine(&self) -> &'static str {
        "mirror"
    }
    fn len(&self) -> usize {
        self.1
    }
    fn cost(&self, task: usize) -> u64 {
        (self.1 - task) as u64 / 7 + 1
    }
    fn solve(&self, task: usize) -> u128 {
        (task * task) as u128
    }
    fn fingerprint(&self) -> String {
        fingerprint_words([u64::from(self.0), self.1 as u64])
    }
    fn describe(&self) -> String {
        format!("{} tasks", self.1)
    }
}

/// A done set as a killed run leaves it: a prefix of rounds, plus up to `threads` rounds
/// past it per session, finished out of order.
fn run_like_done_set(cp: &mut Checkpoint, done: usize, sessions: usize, threads: usize) {
    let mut rng = fastrand::Rng::with_seed(11);
    for r in 0..done - sessions * threads {
        cp.done.insert(r);
    }
    while (cp.done.len() as usize) < done {
        let r = done - sessions * threads + rng.usize(0..2 * sessions * threads);
        cp.done.insert(r);
    }
    cp.tasks_done = cp.done.len();
}

/// The size and save time of checkpoints of the N = 27 mitm plan's size.
fn checkpoint_sizes_and_save_times() {
    println!("== checkpoints at the size of the N = 27 mitm plan");
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("big.ckpt");
    let fake = Fake(27, 65_005_798);
    let cases: [(&str, ShardSpec, usize, usize); 3] = [
        (
            "whole plan, 10^7 done, 100 sessions x 64 threads",
            ShardSpec::whole(),
            10_000_000,
            100,
        ),
        (
            "whole plan, all but 6400 done",
            ShardSpec::whole(),
            65_005_798,
            100,
        ),
        (
            "shard 1/6, 10^7 done",
            ShardSpec::new(1, 6).unwrap(),
            10_000_000,
            100,
        ),
    ];
    for (what, spec, done, sessions) in cases {
        let mut cp = Checkpoint::new(&fake, spec).unwrap();
        let done = done.min(spec.len(fake.len()));
        run_like_done_set(&mut cp, done, sessions, 64);
        let start = std::time::Instant::now();
        for _ in 0..10 {
            cp.save(&path).unwrap();
        }
        let per_save = start.elapsed() / 10;
        let bytes = std::fs::metadata(&path).unwrap().len();
        println!("{what}: {bytes} bytes, {per_save:?} per save (with fsync)");
    }
    let mut rng = fastrand::Rng::with_seed(3);
    let mut cp = Checkpoint::new(&fake, ShardSpec::whole()).unwrap();
    while cp.done.len() < 10_000_000 {
        cp.done.insert(rng.usize(0..65_005_798));
    }
    cp.tasks_done = cp.done.len();
    cp.save(&path).unwrap();
    let bytes = std::fs::metadata(&path).unwrap().len();
    println!("10^7 uniformly random of 65 M (no run can leave this): {bytes} bytes");
}
