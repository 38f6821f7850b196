//! Unit tests of shards, checkpoints and merging.

use std::path::PathBuf;
use std::time::Duration;

use super::recorder::{recheck_saved, run, Recorder};
use super::*;
use crate::known;
use crate::plan::{thread_pool, NoProgress};
use crate::CountOptions;

fn plan(n: u32) -> Box<dyn Plan> {
    CountOptions::new()
        .engine("mirror")
        .threads(8)
        .plan(n)
        .unwrap()
}

/// Task count, total and digest of the tasks `ids`.
fn solve(plan: &dyn Plan, ids: &[usize]) -> ShardTotals {
    let mut digest = Digest::default();
    let mut total = 0;
    for &t in ids {
        let count = plan.solve(t);
        digest.add(t, count);
        total += count;
    }
    ShardTotals {
        tasks: ids.len(),
        total,
        digest,
    }
}

/// Every id of `spec`'s shard of `plan`.
fn ids(plan: &dyn Plan, spec: ShardSpec) -> Vec<usize> {
    spec.ids(plan.len()).collect()
}

/// Splits the tasks of `plan` into `parts` lists, as [`ShardSpec`] does (for tests and small
/// plans: this holds every id). Each list is ascending.
fn partition(plan: &dyn Plan, parts: usize) -> Vec<Vec<usize>> {
    let parts = parts.max(1);
    (0..parts)
        .map(|index| {
            ShardSpec::new(index, parts)
                .expect("index < parts")
                .ids(plan.len())
                .collect()
        })
        .collect()
}

/// The expected work of each part of a split (sums of [`Plan::cost`]).
fn part_costs(plan: &dyn Plan, parts: &[Vec<usize>]) -> Vec<u128> {
    parts
        .iter()
        .map(|ids| ids.iter().map(|&t| u128::from(plan.cost(t))).sum())
        .collect()
}

/// The expected work of shard `spec` of `plan`, in time proportional to the shard.
fn shard_cost(plan: &dyn Plan, spec: ShardSpec) -> u128 {
    spec.ids(plan.len()).map(|t| u128::from(plan.cost(t))).sum()
}

#[test]
fn shard_specs_parse_and_reject_nonsense() {
    assert_eq!(
        "2/7".parse::<ShardSpec>().unwrap(),
        ShardSpec::new(2, 7).unwrap()
    );
    assert_eq!(ShardSpec::new(2, 7).unwrap().to_string(), "2/7");
    for bad in ["7/7", "1/0", "-1/3", "a/b", "3", "", "1/2/3"] {
        assert!(bad.parse::<ShardSpec>().is_err(), "{bad}");
    }
}

#[test]
fn slurm_array_variables_give_the_shard() {
    let env = |id: &'static str| {
        move |name: &str| match name {
            "SLURM_ARRAY_TASK_ID" => Some(id.to_string()),
            "SLURM_ARRAY_TASK_MIN" => Some("10".to_string()),
            "SLURM_ARRAY_TASK_MAX" => Some("13".to_string()),
            "SLURM_ARRAY_TASK_COUNT" => Some("4".to_string()),
            _ => None,
        }
    };
    assert_eq!(
        ShardSpec::from_slurm(env("12")).unwrap(),
        ShardSpec::new(2, 4).unwrap()
    );
    assert!(ShardSpec::from_slurm(env("9")).is_err());
    let err = ShardSpec::from_slurm(|_| None).unwrap_err().to_string();
    assert!(
        err.contains("SLURM_ARRAY_TASK_ID") && err.contains("array"),
        "{err}"
    );
}

#[test]
fn a_sparse_slurm_array_is_refused() {
    let env = |name: &str| match name {
        "SLURM_ARRAY_TASK_ID" => Some("4".to_string()),
        "SLURM_ARRAY_TASK_MIN" => Some("0".to_string()),
        "SLURM_ARRAY_TASK_MAX" => Some("4".to_string()),
        "SLURM_ARRAY_TASK_COUNT" => Some("3".to_string()),
        _ => None,
    };
    let err = ShardSpec::from_slurm(env).unwrap_err().to_string();
    assert!(err.contains("contiguous"), "{err}");
}

#[test]
fn shards_for_several_k_sum_to_the_total() {
    let p = plan(11);
    for k in [1, 2, 3, 7] {
        let parts = partition(p.as_ref(), k);
        let mut seen: Vec<usize> = parts.concat();
        seen.sort_unstable();
        assert_eq!(seen, (0..p.len()).collect::<Vec<_>>(), "K = {k}");
        let sum: u128 = parts.iter().map(|ids| solve(p.as_ref(), ids).total).sum();
        assert_eq!(Some(sum), known::total(11), "K = {k}");
    }
}

#[test]
fn shards_are_balanced_by_cost_within_one_task() {
    let p = plan(12);
    let heaviest = (0..p.len()).map(|t| u128::from(p.cost(t))).max().unwrap();
    for k in [2, 3, 7, 16] {
        let loads = part_costs(p.as_ref(), &partition(p.as_ref(), k));
        let (lo, hi) = (loads.iter().min().unwrap(), loads.iter().max().unwrap());
        assert!(hi - lo <= heaviest, "K = {k}: {loads:?}");
    }
}

#[test]
fn partition_is_deterministic() {
    let (a, b) = (plan(10), plan(10));
    assert_eq!(partition(a.as_ref(), 5), partition(b.as_ref(), 5));
}

fn dir() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

#[test]
fn a_checkpointed_run_resumes_without_recomputing() {
    let tmp = dir();
    let path = tmp.path().join("run.ckpt");
    let p = plan(10);
    // Pretend the first half was done in an earlier session, with a marker count for task 0.
    let mut cp = Checkpoint::new(p.as_ref(), ShardSpec::whole()).unwrap();
    for t in 0..p.len() / 2 {
        let count = p.solve(t) + if t == 0 { 1_000 } else { 0 };
        cp.record(t, count).unwrap();
    }
    cp.save(&path).unwrap();
    let loaded = Checkpoint::resume_or_new(&path, p.as_ref(), ShardSpec::whole()).unwrap();
    let rec = Recorder::new(Some(path.clone()), loaded);
    let pool = thread_pool(2).unwrap();
    let total = run(
        p.as_ref(),
        &pool,
        &rec,
        Duration::from_secs(60),
        &NoProgress,
    )
    .unwrap();
    // The marker shows task 0 was taken from the file, not solved again.
    assert_eq!(Some(total - 1_000), known::total(10));
    let saved = Checkpoint::load(&path).unwrap().unwrap();
    assert_eq!(saved.done.len(), p.len() as u64);
    assert_eq!(saved.remaining(), 0);
}

#[test]
fn a_run_with_a_zero_save_period_still_finishes() {
    // The saver once held the lock the finishing thread needs while it saved and waited
    // again, so a period near zero starved the end of the run. A hang
    // here is the failure.
    let tmp = dir();
    let path = tmp.path().join("zero.ckpt");
    let p = plan(10);
    let rec = Recorder::new(
        Some(path.clone()),
        Checkpoint::new(p.as_ref(), ShardSpec::whole()).unwrap(),
    );
    let pool = thread_pool(2).unwrap();
    let total = run(p.as_ref(), &pool, &rec, Duration::ZERO, &NoProgress).unwrap();
    assert_eq!(Some(total), known::total(10));
    assert_eq!(Checkpoint::load(&path).unwrap().unwrap().remaining(), 0);
}

#[test]
fn a_wrong_saved_count_is_found_by_block_and_replaced() {
    let p = plan(10);
    let mut cp = Checkpoint::new(p.as_ref(), ShardSpec::whole()).unwrap();
    let wrong = p.len() - 1;
    for t in 0..p.len() {
        cp.record(t, p.solve(t) + u128::from(t == wrong)).unwrap();
    }
    assert_eq!(cp.blocks.totals.iter().sum::<u128>(), cp.total);
    let rec = Recorder::new(None, cp);
    let pool = thread_pool(2).unwrap();
    let all = crate::recheck::Recheck::new(1.0).unwrap();
    let found = recheck_saved(p.as_ref(), &pool, &rec, all, None).unwrap();
    assert_eq!(found.tasks, p.len());
    assert_eq!(found.replaced.len(), 1, "{found:?}");
    let bad = &found.replaced[0];
    assert!(bad.rounds.contains(&wrong), "{bad:?}");
    assert_eq!(bad.saved, bad.now + 1);
    let fixed = rec.snapshot();
    assert_eq!(Some(fixed.total), known::total(10));
    assert_eq!(fixed.rechecked.len(), p.len() as u64);
    // The repaired state is consistent: it saves and loads.
    let tmp = dir();
    let path = tmp.path().join("fixed.ckpt");
    fixed.clone().save(&path).unwrap();
    assert_eq!(Checkpoint::load(&path).unwrap().unwrap().total, fixed.total);
}

#[test]
fn a_saved_block_that_this_machine_also_gets_wrong_is_a_mismatch() {
    let p = plan(10);
    let mut cp = Checkpoint::new(p.as_ref(), ShardSpec::whole()).unwrap();
    for t in 0..p.len() {
        cp.record(t, p.solve(t) + u128::from(t == 2)).unwrap();
    }
    let saved_total = cp.total;
    let rec = Recorder::new(None, cp);
    let pool = thread_pool(2).unwrap();
    let all = crate::recheck::Recheck::new(1.0).unwrap();
    // The fast path of this machine is off on the same task: it cannot be the judge.
    let fault = Some(crate::recheck::Fault { task: 2, delta: 1 });
    match recheck_saved(p.as_ref(), &pool, &rec, all, fault) {
        Err(Error::RecheckMismatch { task: 2, .. }) => {}
        other => panic!("expected a mismatch on task 2, got {other:?}"),
    }
    assert_eq!(rec.snapshot().total, saved_total, "nothing is replaced");
}

#[test]
fn block_totals_that_do_not_add_up_are_refused() {
    let tmp = dir();
    let path = tmp.path().join("forged.ckpt");
    let p = plan(8);
    let mut cp = Checkpoint::new(p.as_ref(), ShardSpec::whole()).unwrap();
    cp.record(0, p.solve(0)).unwrap();
    cp.blocks.totals[0] += 1;
    cp.save(&path).unwrap();
    let err = Checkpoint::load(&path).unwrap_err().to_string();
    assert!(err.contains("do not add up"), "{err}");
}

#[test]
fn a_checkpoint_of_another_run_is_refused() {
    let tmp = dir();
    let path = tmp.path().join("c");
    Checkpoint::new(plan(9).as_ref(), ShardSpec::whole())
        .unwrap()
        .save(&path)
        .unwrap();
    let err = Checkpoint::resume_or_new(&path, plan(10).as_ref(), ShardSpec::whole()).unwrap_err();
    assert!(matches!(err, Error::CheckpointMismatch { .. }), "{err}");
    assert!(err.to_string().contains("N = 9"), "{err}");
    let other_shard = ShardSpec::new(1, 2).unwrap();
    let err = Checkpoint::resume_or_new(&path, plan(9).as_ref(), other_shard).unwrap_err();
    assert!(err.to_string().contains("shard 0/1"), "{err}");
}

#[test]
fn a_tampered_or_truncated_checkpoint_is_refused() {
    let tmp = dir();
    let path = tmp.path().join("c");
    let p = plan(8);
    let mut cp = Checkpoint::new(p.as_ref(), ShardSpec::whole()).unwrap();
    cp.record(0, p.solve(0)).unwrap();
    cp.record(1, p.solve(1)).unwrap();
    cp.save(&path).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    let total = format!("\"total\":\"{}\"", cp.total);
    let tampered = text.replacen(&total, "\"total\":\"999\"", 1);
    assert_ne!(tampered, text);
    std::fs::write(&path, &tampered).unwrap();
    let err = Checkpoint::load(&path).unwrap_err().to_string();
    assert!(err.contains("checksum"), "{err}");
    std::fs::write(&path, &text[..text.len() / 2]).unwrap();
    let err = Checkpoint::load(&path).unwrap_err().to_string();
    assert!(err.contains("truncated"), "{err}");
}

#[test]
fn an_empty_checkpoint_file_is_no_checkpoint_yet() {
    let tmp = dir();
    let path = tmp.path().join("c");
    std::fs::write(&path, b"").unwrap();
    assert!(Checkpoint::load(&path).unwrap().is_none());
    let p = plan(8);
    let fresh = Checkpoint::resume_or_new(&path, p.as_ref(), ShardSpec::whole()).unwrap();
    assert_eq!(fresh.tasks_done, 0);
    // One byte is no longer "nothing yet": it is a damaged file.
    std::fs::write(&path, b"\n").unwrap();
    let err = Checkpoint::load(&path).unwrap_err().to_string();
    assert!(err.contains("truncated"), "{err}");
}

fn write_shards(dir: &std::path::Path, n: u32, k: usize) -> Vec<PathBuf> {
    let p = plan(n);
    (0..k)
        .map(|i| {
            let spec = ShardSpec::new(i, k).unwrap();
            let counts = solve(p.as_ref(), &ids(p.as_ref(), spec));
            let path = dir.join(format!("n{n}-{i}.json"));
            PartialResult::new(p.as_ref(), spec, counts, Duration::ZERO)
                .save(&path)
                .unwrap();
            path
        })
        .collect()
}

fn kinds(report: &MergeReport) -> Vec<ProblemKind> {
    report.problems.iter().map(|p| p.kind).collect()
}

#[test]
fn merging_complete_shards_gives_the_total() {
    let tmp = dir();
    let files = write_shards(tmp.path(), 10, 3);
    let report = merge(&expand_all(&[tmp.path().to_path_buf()]));
    assert!(report.is_ok(), "{:?}", report.problems);
    assert_eq!(report.total.as_deref(), Some("724"));
    assert_eq!(report.files.len(), files.len());
}

fn expand_all(paths: &[PathBuf]) -> Vec<PathBuf> {
    merge::expand_paths(paths).unwrap()
}

#[test]
fn merge_reports_a_missing_shard() {
    let tmp = dir();
    let files = write_shards(tmp.path(), 10, 3);
    let report = merge(&[files[0].clone(), files[2].clone()]);
    assert_eq!(kinds(&report), vec![ProblemKind::Missing]);
    assert!(report.problems[0].message.contains("1/3"));
    assert_eq!(report.total, None);
}

#[test]
fn merge_accepts_equal_duplicates_and_reports_them() {
    let tmp = dir();
    let mut files = write_shards(tmp.path(), 10, 2);
    let copy = tmp.path().join("copy.json");
    std::fs::copy(&files[1], &copy).unwrap();
    files.push(copy);
    let report = merge(&files);
    assert!(report.is_ok(), "{:?}", report.problems);
    assert_eq!(report.duplicates.len(), 1);
}

#[test]
fn merge_reports_a_disagreeing_duplicate() {
    let tmp = dir();
    let mut files = write_shards(tmp.path(), 10, 2);
    let mut other = PartialResult::load(&files[1]).unwrap();
    // Same total, other per-task counts: only the digest tells them apart.
    other.digest.add(0, 1);
    let path = tmp.path().join("resealed.json");
    other.save(&path).unwrap();
    files.push(path);
    let report = merge(&files);
    assert_eq!(kinds(&report), vec![ProblemKind::Conflict]);
}

#[test]
fn merge_reports_a_shard_of_another_n_and_a_tampered_count() {
    let tmp = dir();
    let mut files = write_shards(tmp.path(), 10, 2);
    files.push(write_shards(tmp.path(), 9, 2).remove(0));
    let text = std::fs::read_to_string(&files[0]).unwrap();
    let total = PartialResult::load(&files[0]).unwrap().total;
    let edited = text.replace(&format!("\"total\":\"{total}\""), "\"total\":\"1\"");
    assert_ne!(edited, text);
    std::fs::write(&files[0], edited).unwrap();
    let report = merge(&files);
    assert_eq!(
        kinds(&report),
        vec![
            ProblemKind::Corrupted,
            ProblemKind::Foreign,
            ProblemKind::Missing
        ]
    );
    assert!(report.problems[1].message.contains("N = 9"));
}

#[test]
fn partial_results_add_up() {
    let p = plan(8);
    let parts = partition(p.as_ref(), 2);
    let part = |i: usize| {
        let spec = ShardSpec::new(i, 2).unwrap();
        PartialResult::new(
            p.as_ref(),
            spec,
            solve(p.as_ref(), &parts[i]),
            Duration::ZERO,
        )
    };
    let mut sum = part(0);
    sum += &part(1);
    assert_eq!(sum.total, 92);
    assert_eq!(sum.tasks, p.len());
    assert_eq!(
        sum.digest,
        solve(p.as_ref(), &(0..p.len()).collect::<Vec<_>>()).digest
    );
}

#[test]
fn sealed_files_with_any_elapsed_time_read_back_intact() {
    let tmp = dir();
    let p = plan(6);
    for micros in [1u64, 67_094_557, 99_781_864, 3_600_123_456, 123_456_789_012] {
        let elapsed = Duration::from_nanos(micros * 1_000 + 7);
        let path = tmp.path().join(format!("{micros}.json"));
        PartialResult::new(
            p.as_ref(),
            ShardSpec::whole(),
            solve(p.as_ref(), &(0..p.len()).collect::<Vec<_>>()),
            elapsed,
        )
        .save(&path)
        .unwrap();
        assert!(PartialResult::load(&path).is_ok(), "{elapsed:?}");
    }
}

/// A plan made up for tests (engine name borrowed, so its files are readable): task `t`
/// costs `(len − t) / 7 + 1` and counts `t * t`.
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
        crate::plan::fingerprint_words([u64::from(self.0), self.1 as u64])
    }
    fn describe(&self) -> String {
        format!("{} tasks", self.1)
    }
}

#[test]
fn a_checkpoint_of_another_engine_is_refused() {
    let tmp = dir();
    let path = tmp.path().join("c");
    let symmetry = CountOptions::new().engine("symmetry").plan(10).unwrap();
    let mut cp = Checkpoint::new(symmetry.as_ref(), ShardSpec::whole()).unwrap();
    cp.save(&path).unwrap();
    let err = Checkpoint::resume_or_new(&path, plan(10).as_ref(), ShardSpec::whole()).unwrap_err();
    assert!(err.to_string().contains("engine symmetry"), "{err}");
}

#[test]
fn shards_checkpoints_and_merge_work_for_any_plan() {
    let tmp = dir();
    let fake = Fake(30, 1_000); // N = 30: no published total to disagree with
    let expected: u128 = (0..1_000u128).map(|t| t * t).sum();
    let pool = thread_pool(2).unwrap();
    let mut files = Vec::new();
    for i in 0..3 {
        let spec = ShardSpec::new(i, 3).unwrap();
        let ckpt = tmp.path().join(format!("{i}.ckpt"));
        let rec = Recorder::new(Some(ckpt), Checkpoint::new(&fake, spec).unwrap());
        run(&fake, &pool, &rec, Duration::from_millis(1), &NoProgress).unwrap();
        let done = rec.snapshot();
        assert_eq!(done.digest, solve(&fake, &ids(&fake, spec)).digest);
        let summary = ShardTotals {
            tasks: done.tasks_done as usize,
            total: done.total,
            digest: done.digest,
        };
        let path = tmp.path().join(format!("{i}.json"));
        PartialResult::new(&fake, spec, summary, rec.elapsed())
            .save(&path)
            .unwrap();
        files.push(path);
    }
    let report = merge(&files);
    assert!(report.is_ok(), "{:?}", report.problems);
    assert_eq!(report.total, Some(expected.to_string()));
    assert_eq!(report.verified, None);
}

mod external_input;
mod frontier;
