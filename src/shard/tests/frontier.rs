//! Shards and checkpoints at the frontier: balance of large K, checkpoint sizes of huge
//! plans, resumes that keep their state small.

use std::path::Path;

use super::*;
use proptest::prelude::*;

/// Checks that the shards `0..k` of a plan of `len` tasks hold every task exactly once, in
/// ascending order, and that `round` inverts `task`.
fn check_layout(len: usize, k: usize) {
    let mut seen = vec![0u8; len];
    let mut total = 0;
    for index in 0..k.min(len + 2) {
        let spec = ShardSpec::new(index, k).unwrap();
        let ids: Vec<usize> = spec.ids(len).collect();
        assert_eq!(ids.len(), spec.len(len));
        assert!(ids.windows(2).all(|w| w[0] < w[1]));
        for (round, &id) in ids.iter().enumerate() {
            assert_eq!(spec.round(id), Some(round), "{index}/{k} id {id}");
            seen[id] += 1;
        }
        total += ids.len();
    }
    assert_eq!(total, len, "K = {k}");
    assert!(seen.iter().all(|&c| c == 1), "K = {k}");
}

proptest! {
    #[test]
    fn every_task_is_in_exactly_one_shard(len in 0usize..3_000, k in 1usize..=50) {
        check_layout(len, k);
    }
}

#[test]
fn huge_k_gives_one_task_or_none_per_shard_without_allocating() {
    for k in [4_096, 1 << 32, usize::MAX] {
        check_layout(1_000, k);
        let last = ShardSpec::new(k - 1, k).unwrap();
        assert_eq!(last.len(1_000), 0);
        assert_eq!(last.ids(1_000).count(), 0);
    }
}

#[test]
fn another_shards_task_has_no_round() {
    let spec = ShardSpec::new(1, 4).unwrap();
    assert_eq!(spec.round(1), Some(0));
    assert_eq!(spec.round(6), Some(1)); // odd rounds snake back: 4 + (4 - 1 - 1)
    assert_eq!(spec.round(2), None);
}

/// The largest relative gap between shard costs, (max − min) / max.
fn imbalance(plan: &dyn Plan, k: usize) -> f64 {
    let costs: Vec<u128> = (0..k)
        .map(|i| shard_cost(plan, ShardSpec::new(i, k).unwrap()))
        .collect();
    let (lo, hi) = (*costs.iter().min().unwrap(), *costs.iter().max().unwrap());
    (hi - lo) as f64 / hi as f64
}

#[test]
fn shards_of_mitm_plans_are_balanced_within_5_percent() {
    for n in [18, 19, 20] {
        let p = CountOptions::new().engine("mitm").plan(n).unwrap();
        for k in [4, 10, 64, 100] {
            let gap = imbalance(p.as_ref(), k);
            assert!(gap <= 0.05, "N = {n}, K = {k}: {:.2}%", gap * 100.0);
        }
    }
}

#[test]
fn every_plan_lists_its_tasks_largest_first() {
    for engine in ["mirror", "symmetry", "mitm"] {
        for n in [9, 12, 15] {
            let p = CountOptions::new()
                .engine(engine)
                .threads(64)
                .plan(n)
                .unwrap();
            let costs: Vec<u64> = (0..p.len()).map(|t| p.cost(t)).collect();
            assert!(costs.windows(2).all(|w| w[0] >= w[1]), "{engine} N = {n}");
        }
    }
}

/// A done set as a killed run leaves it: a prefix of rounds, plus up to `threads` rounds
/// past it per session, finished out of order.
fn run_like_done_set(cp: &mut Checkpoint, done: usize, sessions: usize, threads: usize) {
    let mut rng = fastrand::Rng::with_seed(11);
    for r in 0..done - sessions * threads {
        cp.done.0.insert(r as u32);
    }
    while (cp.done.len() as usize) < done {
        let r = done - sessions * threads + rng.usize(0..2 * sessions * threads);
        cp.done.0.insert(r as u32);
    }
    cp.tasks_done = cp.done.len();
}

#[test]
fn a_done_set_of_10_million_scattered_ids_stays_under_4_mb() {
    let tmp = dir();
    let path = tmp.path().join("big.ckpt");
    // The size of the mitm plan at N = 27; its 10^7 done ids are strided over the whole
    // id range when the shard is 1 of 6.
    let fake = Fake(27, 65_005_798);
    let spec = ShardSpec::new(1, 6).unwrap();
    let mut cp = Checkpoint::new(&fake, spec).unwrap();
    run_like_done_set(&mut cp, 10_000_000, 100, 64);
    cp.save(&path).unwrap();
    let bytes = std::fs::metadata(&path).unwrap().len();
    assert!(bytes <= 4 << 20, "{bytes} bytes");
    let back = Checkpoint::load(&path).unwrap().unwrap();
    assert_eq!(back.done, cp.done);
    assert_eq!(back.remaining(), spec.len(fake.len()) - 10_000_000);
}

#[test]
fn a_locked_checkpoint_is_refused_until_released() {
    let tmp = dir();
    let path = tmp.path().join("c");
    let held = checkpoint::lock(&path).unwrap();
    let err = checkpoint::lock(&path).unwrap_err();
    assert!(matches!(err, Error::CheckpointLocked { .. }), "{err}");
    assert!(err.to_string().contains("in use"), "{err}");
    drop(held);
    assert!(checkpoint::lock(&path).is_ok());
}

#[test]
fn checkpoints_with_impossible_fields_are_refused() {
    let tmp = dir();
    let path = tmp.path().join("c");
    let p = plan(8);
    let fresh = || Checkpoint::new(p.as_ref(), ShardSpec::whole()).unwrap();
    let mut past_the_end = fresh();
    past_the_end.done.0.insert(p.len() as u32);
    past_the_end.tasks_done = 1;
    let mut miscounted = fresh();
    miscounted.tasks_done = 3;
    let mut banana = fresh();
    banana.identity.engine = "banana".into();
    let mut huge_n = fresh();
    huge_n.identity.n = 40;
    let cases = [
        (past_the_end, "round"),
        (miscounted, "tasks_done"),
        (banana, "banana"),
        (huge_n, "N"),
    ];
    for (mut cp, why) in cases {
        cp.save(&path).unwrap();
        let err = Checkpoint::load(&path).unwrap_err().to_string();
        assert!(err.contains(why), "{why}: {err}");
    }
    // NaN is written as null, which is no number at all.
    for (elapsed, why) in [(-1.0, "elapsed_s"), (1e300, "elapsed_s"), (f64::NAN, "f64")] {
        let mut cp = fresh();
        cp.elapsed_s = elapsed;
        cp.save(&path).unwrap();
        let err = Checkpoint::load(&path).unwrap_err().to_string();
        assert!(err.contains(why), "{elapsed}: {err}");
    }
}

#[test]
fn oversized_or_special_files_are_refused_before_reading_them_whole() {
    let tmp = dir();
    let path = tmp.path().join("huge");
    let file = std::fs::File::create(&path).unwrap();
    file.set_len(64 << 20).unwrap(); // sparse: no disk used
    let err = Checkpoint::load(&path).unwrap_err().to_string();
    assert!(err.contains("larger than"), "{err}");
    let err = PartialResult::load(&path).unwrap_err().to_string();
    assert!(err.contains("larger than"), "{err}");
    let err = Checkpoint::load(Path::new("/dev/zero"))
        .unwrap_err()
        .to_string();
    assert!(err.contains("not a regular file"), "{err}");
}

#[test]
fn forged_shard_files_are_refused_field_by_field() {
    let tmp = dir();
    let path = tmp.path().join("s.json");
    let p = plan(10);
    let spec = ShardSpec::new(0, 2).unwrap();
    let good = PartialResult::new(
        p.as_ref(),
        spec,
        solve(p.as_ref(), &ids(p.as_ref(), spec)),
        Duration::ZERO,
    );
    let forge = |f: &dyn Fn(&mut PartialResult)| {
        let mut r = good.clone();
        f(&mut r);
        r.save(&path).unwrap();
        match PartialResult::load(&path).unwrap_err() {
            Error::ResultCorrupt { message, .. } => message,
            other => panic!("{other}"),
        }
    };
    assert!(forge(&|r| r.identity.n = 40).contains("N"));
    assert!(forge(&|r| r.identity.engine = "banana".into()).contains("banana"));
    assert!(forge(&|r| r.identity.plan_tasks = usize::MAX).contains("plan_tasks"));
    assert!(forge(&|r| r.identity.plan_tasks = 1_000_000_000_000_000).contains("plan_tasks"));
    assert!(forge(&|r| r.tasks += 1).contains("claims"));
    assert!(forge(&|r| r.elapsed_s = -4.994).contains("elapsed_s"));
    assert!(forge(&|r| r.identity.shard.index = 2).contains("out of range"));
}

#[test]
fn totals_that_overflow_are_refused_not_wrapped() {
    let tmp = dir();
    let p = plan(10);
    let files: Vec<PathBuf> = (0..2)
        .map(|i| {
            let spec = ShardSpec::new(i, 2).unwrap();
            let widest = ShardTotals {
                total: u128::MAX,
                ..solve(p.as_ref(), &ids(p.as_ref(), spec))
            };
            let path = tmp.path().join(format!("{i}.json"));
            PartialResult::new(p.as_ref(), spec, widest, Duration::ZERO)
                .save(&path)
                .unwrap();
            path
        })
        .collect();
    let report = merge(&files);
    assert_eq!(report.total, None);
    assert!(
        report.problems[0].message.contains("2^128"),
        "{:?}",
        report.problems
    );
}

#[test]
fn merge_lists_missing_shards_of_a_huge_k_as_ranges() {
    let tmp = dir();
    let p = plan(8);
    let k = 1 << 32;
    let files: Vec<PathBuf> = [0usize, 7, 8]
        .iter()
        .map(|&i| {
            let spec = ShardSpec::new(i, k).unwrap();
            let path = tmp.path().join(format!("{i}.json"));
            let summary = solve(p.as_ref(), &ids(p.as_ref(), spec));
            PartialResult::new(p.as_ref(), spec, summary, Duration::ZERO)
                .save(&path)
                .unwrap();
            path
        })
        .collect();
    let report = merge(&files);
    let messages: Vec<&str> = report.problems.iter().map(|p| p.message.as_str()).collect();
    assert_eq!(
        messages,
        [
            "shards 1..6 of K = 4294967296 are missing (6 shards)",
            "shards 9..4294967295 of K = 4294967296 are missing (4294967287 shards)"
        ]
    );
}
