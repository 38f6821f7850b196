//! Calibration and interval arithmetic on fake clocks.

use super::*;
use crate::estimate::design;
use crate::CountOptions;
use std::sync::atomic::AtomicBool;

fn plan() -> Box<dyn Plan> {
    CountOptions::new()
        .engine("mitm")
        .threads(64)
        .plan(14)
        .unwrap()
}

/// A fake clock: task `t` takes `cost(t)` ns times `factor(call)`, where `call` counts
/// every task timed so far (so a factor can model a slow stretch of the machine).
fn fake(plan: &dyn Plan, d: &Design, budget: f64, factor: impl Fn(usize) -> f64) -> Calibration {
    let mut calls = 0;
    Calibration::run(&d.tasks(), budget, 5, |order| {
        order
            .iter()
            .map(|&t| {
                calls += 1;
                (t, plan.cost(t) as f64 * 1e-9 * factor(calls))
            })
            .collect()
    })
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs())
}

#[test]
fn rounds_visit_every_task_once_in_shuffled_orders_until_the_budget_is_spent() {
    let tasks: Vec<usize> = (0..10).map(|t| t * 3).collect();
    let mut orders = Vec::new();
    let cal = Calibration::run(&tasks, 1.0, 9, |order| {
        orders.push(order.to_vec());
        order.iter().map(|&t| (t, 0.01)).collect()
    });
    assert_eq!(cal.rounds(), 10, "0.1 s per round, 1 s budget");
    assert!(cal.seconds.iter().all(|s| s.len() == 10));
    for o in &orders {
        let mut sorted = o.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, tasks);
    }
    assert!(
        orders.windows(2).any(|w| w[0] != w[1]),
        "orders are shuffled"
    );
    assert!(close(cal.timed_seconds(), 1.0));
}

#[test]
fn two_rounds_are_timed_whatever_the_budget() {
    let cal = Calibration::run(&[1, 2], 0.0, 1, |o| o.iter().map(|&t| (t, 5.0)).collect());
    assert_eq!(cal.rounds(), 2);
    assert_eq!(cal.blocks(), vec![(0, 1), (1, 2)]);
}

#[test]
fn a_long_first_round_stands_alone() {
    let long = Some(FirstRound {
        timings: vec![(1, 4.0), (2, 3.0)],
        alone: true,
    });
    let cal = Calibration::run_after(&[1, 2], long, 6.0, 1, |_| unreachable!());
    assert_eq!(cal.seconds, vec![vec![4.0], vec![3.0]]);
    // Another is followed by as many as the budget asks, two at least.
    let short = Some(FirstRound {
        timings: vec![(1, 1.0), (2, 1.0)],
        alone: false,
    });
    let cal = Calibration::run_after(&[1, 2], short, 6.0, 1, |o| {
        o.iter().map(|&t| (t, 1.0)).collect()
    });
    assert_eq!(cal.rounds(), 3);
    assert_eq!(cal.seconds[0][0], 1.0);
}

#[test]
fn blocks_are_consecutive_and_cover_every_round() {
    let cal = Calibration::run(&[4], 25.0, 1, |o| o.iter().map(|&t| (t, 1.0)).collect());
    assert_eq!(cal.rounds(), 25);
    let b = cal.blocks();
    assert_eq!(b.len(), BLOCKS);
    assert_eq!((b[0].0, b[BLOCKS - 1].1), (0, 25));
    assert!(b.windows(2).all(|w| w[0].1 == w[1].0 && w[0].0 < w[0].1));
}

#[test]
fn interval_halves_add_in_quadrature() {
    let i = interval(100.0, 0.0, 0.1, 0.1);
    assert!(close(i.low, 90.0) && close(i.high, 110.0));
    let i = interval(100.0, 0.03, 0.04, 0.04);
    assert!(close(i.high, 105.0) && close(i.low, 95.0), "{i:?}");
    let i = interval(100.0, 0.06, 0.08, 0.0);
    assert!(close(i.high, 106.0) && close(i.low, 90.0), "{i:?}");
    assert_eq!(interval(1.0, 0.0, 2.0, 2.0).low, 0.0, "never below zero");
}

#[test]
fn the_timing_part_is_a_student_t_prediction_interval() {
    assert_eq!(timing_spread(&[2.0, 2.0, 2.0]), 0.0);
    assert_eq!(timing_spread(&[2.0]), 0.0);
    // Two blocks, 1.0 and 1.1: s = 0.0707, mean 1.05, t(0.95, 1) = 6.314, √1.5.
    let expected = 6.314 * (0.1 / 2f64.sqrt()) / 1.05 * 1.5f64.sqrt();
    assert!((timing_spread(&[1.0, 1.1]) - expected).abs() < 1e-9);
    assert_eq!(t90(0), f64::INFINITY);
    assert_eq!(t90(1), 6.314);
    assert!((1..40).all(|d| t90(d) >= t90(d + 1) && t90(d) >= Z90));
}

#[test]
fn a_steady_clock_gives_the_exact_total_with_no_timing_spread() {
    let p = plan();
    let d = design(p.as_ref(), 64, 3);
    let e = d.estimate(p.as_ref(), &fake(p.as_ref(), &d, 0.0, |_| 1.0), 0.0);
    // Time proportional to cost: no sampling error either.
    let truth = d.plan_cost as f64 * 1e-9;
    assert!(close(e.total.estimate, truth), "{e:?}");
    assert!(e.total.high - e.total.low < 1e-9 * truth);
    assert_eq!((e.timing_spread, e.task_spread), (0.0, 0.0));
}

#[test]
fn a_jittering_clock_widens_the_interval_which_holds_the_truth() {
    let p = plan();
    let d = design(p.as_ref(), 64, 3);
    let truth = d.plan_cost as f64 * 1e-9;
    let budget = truth * d.sampled_cost_fraction(p.as_ref()) * 40.0;
    for seed in 0..20 {
        let mut rng = fastrand::Rng::with_seed(seed);
        let jitter: Vec<f64> = (0..10_000).map(|_| 0.8 + 0.4 * rng.f64()).collect();
        let cal = fake(p.as_ref(), &d, budget, |call| jitter[call % jitter.len()]);
        let e = d.estimate(p.as_ref(), &cal, 0.0);
        assert!(e.rounds >= 30, "{}", e.rounds);
        assert!(e.timing_spread > 0.0 && e.task_spread > 0.05, "{e:?}");
        assert!(
            e.total.low <= truth && truth <= e.total.high,
            "seed {seed}: {e:?}"
        );
        assert!((e.total.estimate - truth).abs() < 0.05 * truth, "{e:?}");
    }
}

/// A slow stretch (here 1.8× for the middle 30% of the timing, as when a build starts on
/// the other core) moved a one-burst estimate by 40% with a ±5% interval. Now it shows
/// as spread: the interval holds the quiet and the slow total.
#[test]
fn a_slow_stretch_shows_as_spread_and_the_interval_holds_both_speeds() {
    let p = plan();
    let d = design(p.as_ref(), 64, 3);
    let truth = d.plan_cost as f64 * 1e-9;
    let round = d.tasks().len();
    let budget = truth * d.sampled_cost_fraction(p.as_ref()) * 100.0;
    let slow = |call: usize| {
        if (30..60).contains(&((call - 1) / round)) {
            1.8
        } else {
            1.0
        }
    };
    let e = d.estimate(p.as_ref(), &fake(p.as_ref(), &d, budget, slow), 0.0);
    assert!(
        (70..100).contains(&e.rounds),
        "slow rounds spend the budget sooner"
    );
    assert!(e.timing_spread > 0.3, "{e:?}");
    assert!(e.total.low <= truth && 1.8 * truth <= e.total.high, "{e:?}");
    // The median block is a quiet one: the estimate is not moved by the stretch.
    assert!((e.total.estimate - truth).abs() < 1e-6 * truth, "{e:?}");
}

#[test]
fn the_floor_widens_a_quiet_calibration_and_only_that() {
    let p = plan();
    let d = design(p.as_ref(), 64, 3);
    let cal = fake(p.as_ref(), &d, 0.0, |_| 1.0);
    let e = d.estimate(p.as_ref(), &cal, 0.15);
    assert_eq!((e.timing_spread, e.measured_timing_spread), (0.15, 0.0));
    assert!(close(e.total.high, 1.15 * e.total.estimate), "{e:?}");
    assert!(close(e.total.low, 0.85 * e.total.estimate), "{e:?}");
    let round = d.tasks().len();
    let noisy = fake(
        p.as_ref(),
        &d,
        0.0,
        |call| if call <= round { 2.0 } else { 1.0 },
    );
    let e = d.estimate(p.as_ref(), &noisy, 0.15);
    assert!(e.measured_timing_spread > 0.15, "{e:?}");
    assert_eq!(e.timing_spread, e.measured_timing_spread);
}

#[test]
fn the_largest_task_gets_an_interval_around_its_cost_at_the_first_rate() {
    let p = plan();
    let d = design(p.as_ref(), 64, 3);
    let e = d.estimate(p.as_ref(), &fake(p.as_ref(), &d, 0.0, |_| 1.0), 0.0);
    assert!(
        close(e.largest_task.estimate, p.cost(0) as f64 * 1e-9),
        "{e:?}"
    );
    let cal = fake(
        p.as_ref(),
        &d,
        0.0,
        |call| if call % 2 == 0 { 1.3 } else { 0.7 },
    );
    let jittered = d.estimate(p.as_ref(), &cal, 0.0);
    assert!(jittered.largest_task.high > jittered.largest_task.estimate);
    assert!(jittered.largest_task.low <= jittered.largest_task.estimate);
}

#[test]
fn no_round_starts_after_the_first_where_none_fits() {
    let mut asked = 0;
    let cal = Calibration::run_within(
        &[1, 2],
        None,
        (
            100.0,
            || {
                asked += 1;
                false
            },
            || true,
        ),
        1,
        |o| o.iter().map(|&t| (t, 1.0)).collect(),
    );
    assert_eq!(
        cal.rounds(),
        1,
        "the least two rounds give way to the limit"
    );
    assert_eq!(asked, 1);
}

#[test]
fn no_round_past_the_least_starts_once_the_budgets_wall_time_is_spent() {
    let mut rounds = 0;
    let cal = Calibration::run_within(&[1, 2], None, (100.0, || true, || false), 1, |o| {
        rounds += 1;
        o.iter().map(|&t| (t, 0.001)).collect()
    });
    assert_eq!(cal.rounds(), 2, "the least two rounds, then none");
    assert_eq!(rounds, 2);
}

/// A plan of 64 tasks that solve at once, but for task `stuck`, which the first time waits
/// until it is let go (or a minute has passed, so that a broken limit fails instead of
/// hanging).
struct Stuck {
    stuck: usize,
    started: AtomicBool,
    ended: AtomicBool,
    let_go: AtomicBool,
}

impl Plan for Stuck {
    fn n(&self) -> u32 {
        0
    }
    fn engine(&self) -> &'static str {
        "stuck"
    }
    fn len(&self) -> usize {
        64
    }
    fn cost(&self, _: usize) -> u64 {
        1
    }
    fn solve(&self, task: usize) -> u128 {
        if task == self.stuck && !self.started.swap(true, Ordering::SeqCst) {
            let start = Instant::now();
            while !self.let_go.load(Ordering::SeqCst) && start.elapsed().as_secs() < 60 {
                std::thread::sleep(Duration::from_millis(1));
            }
            self.ended.store(true, Ordering::SeqCst);
        }
        1
    }
    fn fingerprint(&self) -> String {
        String::new()
    }
    fn describe(&self) -> String {
        String::new()
    }
}

#[test]
fn a_task_still_running_at_the_limit_is_left_out_and_no_round_follows() {
    let settings = Settings {
        budget: 1.0,
        seed: 3,
        draws: 0,
        limit: 0.3,
    };
    let probe = Stuck {
        stuck: 0,
        started: AtomicBool::new(false),
        ended: AtomicBool::new(false),
        let_go: AtomicBool::new(false),
    };
    let d = design(&probe, 32, settings.seed);
    // The task the first round starts first never ends by itself.
    let stuck = d.interleaved(settings.seed)[0];
    let plan: Arc<Stuck> = Arc::new(Stuck { stuck, ..probe });
    let dynamic: Arc<dyn Plan> = plan.clone();
    let pool = crate::plan::thread_pool(2).unwrap();
    let cal = calibrate(&dynamic, &d, &pool, settings);
    // It returned while the task was still running: the sample was cut, not waited for.
    assert!(plan.started.load(Ordering::SeqCst));
    assert!(!plan.ended.load(Ordering::SeqCst));
    plan.let_go.store(true, Ordering::SeqCst);
    // The other thread took the round's next tasks in order until the limit: the sample is
    // the first of them, however many this machine solved in the time (the last one may
    // have been in flight, unheard).
    let order = d.interleaved(settings.seed);
    let mut first: Vec<usize> = order[1..=cal.tasks.len()].to_vec();
    first.sort_unstable();
    assert_eq!(
        cal.tasks, first,
        "the round's first tasks but the stuck one"
    );
    eprintln!(
        "{} of {} other tasks solved within the limit",
        first.len(),
        order.len() - 1
    );
    assert_eq!(
        cal.rounds(),
        usize::from(!cal.tasks.is_empty()),
        "no round starts behind a task left running"
    );
}
