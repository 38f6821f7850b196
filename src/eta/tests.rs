//! The ETA's arithmetic on a fake clock: every figure worked by hand, and runs of synthetic
//! tasks whose pace rises as the cost model's does.

use super::*;

fn secs(s: u64) -> Duration {
    Duration::from_secs(s)
}

#[test]
fn the_eta_says_nothing_until_a_task_finishes() {
    let t0 = Instant::now();
    let mut eta = Eta::with_total(1000);
    eta.started(0, 400, t0);
    eta.started(1, 400, t0);
    assert_eq!(eta.remaining(t0 + secs(60)), None);
    assert_eq!(eta.in_flight(), 2);
}

#[test]
fn the_eta_is_by_cost_calibrated_by_measured_time() {
    let t0 = Instant::now();
    let mut eta = Eta::with_total(1000);
    // Two threads: a task of cost 100 takes 10 s (10 units/s per thread).
    eta.started(0, 100, t0);
    eta.started(1, 500, t0);
    eta.finished(0, t0 + secs(10));
    eta.started(2, 400, t0 + secs(10));
    let now = t0 + secs(10);
    // Done: 100 + 100 credited to task 1 = 200 of 1000, in 20 thread-seconds. At a pace
    // rising from p at the first unit to 3p at the last, the first 200 units took
    // p · (200 + 200²/1000) = 240p, so p = 1/12 s; the 800 left take
    // p · (800 + (1000² − 200²)/1000) = 1760p = 146.7 thread-seconds, 73.3 s on two
    // threads (at the pace measured alone, 40 s).
    assert!((eta.fraction(now) - 0.2).abs() < 1e-9);
    let left = eta.remaining(now).unwrap().as_secs_f64();
    assert!((left - 73.33).abs() < 0.01, "{left}");
}

/// A run of cost 1000 in two slices whose probes are done: the small tasks' slice (1)
/// takes 1 s a unit, the large tasks' slice (0) 0.5 s.
fn probed() -> (Eta, Instant) {
    let t0 = Instant::now();
    let mut eta = Eta::with_total(1000);
    eta.probes(2, &[(1, 10), (0, 11)]);
    eta.started(10, 10, t0);
    eta.finished(10, t0 + secs(10));
    eta.started(11, 100, t0 + secs(10));
    eta.finished(11, t0 + secs(60));
    (eta, t0 + secs(60))
}

#[test]
fn the_work_left_is_priced_by_each_slice_and_bounded_above() {
    let (eta, now) = probed();
    // No task of the front has finished, so the slices alone: 500 units at 0.5 s and
    // 500 at 1 s, 750 s, and the spread of the two paces (sample variance 0.125) gives
    // 750 + 1.645 · √(2 · 500² · 0.125) = 1161 s.
    let left = eta.remaining(now).unwrap().as_secs_f64();
    assert!((left - 1161.2).abs() < 0.5, "{left}");
}

#[test]
fn once_the_front_has_a_pace_the_probes_are_left_out() {
    let (mut eta, mut now) = probed();
    // Slice 0's tasks, costs 10 each at 0.5 s a unit: 49 of them, 490 units in 245 s.
    for task in 100..149 {
        eta.started(task, 10, now);
        now += secs(5);
        eta.finished(task, now);
    }
    // The front's 490 units took p · (490 + 490²/1000) = 730.1p = 245 s; the 510 units from
    // there take p · (510 + (1000² − 490²)/1000) = 1269.9p, of which the probes did 110.
    let p = 245.0 / 730.1;
    let want = p * 1269.9 * 400.0 / 510.0;
    let left = eta.remaining(now).unwrap().as_secs_f64();
    assert!((left - want).abs() < 1e-6, "{left} {want}");
    assert!(
        left < eta.by_slices(now).unwrap(),
        "the probes' bound is not taken"
    );
}

#[test]
fn a_probe_in_flight_raises_its_slice_and_one_probe_is_not_trusted_alone() {
    let t0 = Instant::now();
    let mut eta = Eta::with_total(1000);
    eta.probes(2, &[(1, 10), (0, 11)]);
    eta.started(10, 10, t0);
    eta.started(11, 100, t0);
    eta.finished(10, t0 + secs(5));
    // One pace known (0.5 s a unit); the probe in flight has spent 2 s a unit by now.
    let now = t0 + secs(200);
    let left = eta.remaining(now).unwrap().as_secs_f64();
    // No front task has run: 500 · 2 + 500 · 0.5 = 1250 thread-seconds, spread with the
    // pace's own size as its deviation: 1.645 · √(3 · 500² · 0.25) = 712.3; on the two
    // threads seen, 981.2 s.
    assert!((left - 981.2).abs() < 0.5, "{left}");
}

#[test]
fn probes_too_short_to_time_their_work_price_nothing() {
    let t0 = Instant::now();
    let mut eta = Eta::with_total(1000);
    eta.probes(2, &[(1, 10), (0, 11)]);
    // Probes of a millisecond, one of them held up 50 ms (a cache fill, a wait for the
    // CPU): 5 s a unit, where the run's tasks take 0.01 s.
    eta.started(10, 10, t0);
    eta.finished(10, t0 + Duration::from_millis(1));
    eta.started(11, 10, t0);
    eta.finished(11, t0 + Duration::from_millis(50));
    assert_eq!(eta.remaining(t0 + Duration::from_millis(50)), None);
    let mut now = t0 + Duration::from_millis(50);
    for task in 0..10 {
        eta.started(task, 10, now);
        now += Duration::from_millis(100);
        eta.finished(task, now);
    }
    assert_eq!(eta.by_slices(now), None);
    // The front alone: 100 units in 1 s, p · (100 + 100²/1000) = 1 s; 880 units left at
    // p · (900 + (1000² − 100²)/1000) · 880/900 (the probes did 20 of the 900).
    let p = 1.0 / 110.0;
    let want = p * (900.0 + 990.0) * 880.0 / 900.0;
    let left = eta.remaining(now).unwrap().as_secs_f64();
    assert!((left - want).abs() < 1e-6, "{left} {want}");
}

#[test]
fn a_long_probe_prices_the_run_only_until_the_front_has_a_pace() {
    let t0 = Instant::now();
    let mut eta = Eta::with_total(1000);
    eta.probes(2, &[(1, 10)]);
    // The probe took 3 s for 10 units: 0.3 s a unit, 60 times what the front then takes
    // (as a first task filling caches can be).
    eta.started(10, 10, t0);
    eta.finished(10, t0 + secs(3));
    let by_probe = eta.remaining(t0 + secs(3)).unwrap();
    assert!(by_probe > secs(300), "{by_probe:?}");
    let mut now = t0 + secs(3);
    for task in 0..10 {
        eta.started(task, 20, now);
        now += Duration::from_millis(100);
        eta.finished(task, now);
    }
    assert!(eta.remaining(now).unwrap() < secs(10));
}

/// Runs `costs` (in order, largest first) on `threads` threads, task `i` taking
/// `seconds(i, y)` at the share `y` of the work before it, and returns the ETA and the
/// time really left each time the work done passes a tenth (10% to 90%).
fn simulate(costs: &[u64], threads: usize, seconds: impl Fn(usize, f64) -> f64) -> Vec<(f64, f64)> {
    let t0 = Instant::now();
    let at = |s: f64| t0 + Duration::from_secs_f64(s);
    let total: u64 = costs.iter().sum();
    let mut free = vec![0.0f64; threads];
    let mut events = Vec::new();
    let mut before = 0;
    for (i, &cost) in costs.iter().enumerate() {
        let (k, start) = free
            .iter()
            .copied()
            .enumerate()
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .unwrap();
        let end = start + seconds(i, before as f64 / total as f64);
        free[k] = end;
        // At one instant a finish comes first: a thread takes its next task as it ends one.
        events.push((start, 1, i, cost));
        events.push((end, 0, i, cost));
        before += cost;
    }
    events.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let end = events.last().unwrap().0;
    let mut eta = Eta::with_total(u128::from(total));
    let (mut done, mut tenth, mut seen) = (0, 1, Vec::new());
    for (t, kind, task, cost) in events {
        match kind {
            1 => eta.started(task, cost, at(t)),
            _ => {
                eta.finished(task, at(t));
                done += cost;
            }
        }
        if tenth < 10 && done * 10 >= tenth * total {
            let left = eta.remaining(at(t)).unwrap().as_secs_f64();
            seen.push((left, end - t));
            tenth += 1;
        }
    }
    seen
}

#[test]
fn after_a_tenth_of_the_work_the_eta_is_within_twice_the_time_left() {
    // Tasks of falling cost whose time per unit is flat (N = 17, 18), rises to 1.9 times
    // the first's (N = 19) or 3 times (N = 20, 29), with a per-task noise of ±30%.
    let costs: Vec<u64> = (0..2000u64).map(|i| 10_000 - 4 * i).collect();
    let noise = |i: usize| 1.0 + 0.3 * ((i * 7919 % 101) as f64 / 50.0 - 1.0);
    for rise in [0.0, 0.9, 2.0] {
        let pace = |i: usize, y: f64| costs[i] as f64 * 1e-4 * (1.0 + rise * y) * noise(i);
        for (left, real) in simulate(&costs, 2, pace) {
            let ratio = left / real;
            assert!((0.9..=2.0).contains(&ratio), "{rise}: {left} for {real}");
        }
    }
}
