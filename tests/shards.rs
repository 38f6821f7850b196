//! CLI tests of checkpoints, shards and merge.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command as StdCommand, Stdio};
use std::time::Duration;

use common::{nqueens, nqueens_std};
use nqueens::shard::{Checkpoint, PartialResult};
use predicates::str::contains;

fn spawn(args: &[&str]) -> Child {
    nqueens_std()
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Waits until `path` exists; false after two minutes (a run that never saves).
fn wait_for_file(path: &Path) -> bool {
    let waited = std::time::Instant::now();
    while !path.exists() {
        if waited.elapsed() > Duration::from_secs(120) {
            return false;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    true
}

/// A generator seeded from `NQUEENS_TEST_SEED` or at random; the seed is printed so a failing
/// run can be repeated.
fn seeded_rng() -> fastrand::Rng {
    let seed = std::env::var("NQUEENS_TEST_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| fastrand::u64(..));
    eprintln!("seed (NQUEENS_TEST_SEED) = {seed}");
    fastrand::Rng::with_seed(seed)
}

/// Runs `args` to the end, killing it with SIGKILL at up to `kills` random moments first and
/// restarting it each time; returns the final stdout and the tasks saved at each kill.
fn run_with_kills(
    args: &[&str],
    ckpt: &Path,
    kills: usize,
    rng: &mut fastrand::Rng,
) -> (String, Vec<u64>) {
    let mut saved = Vec::new();
    for _ in 0..kills {
        let mut child = spawn(args);
        std::thread::sleep(Duration::from_millis(20 + rng.u64(0..500)));
        if child.try_wait().unwrap().is_some() {
            break; // It finished before the kill.
        }
        child.kill().unwrap(); // SIGKILL: no handler runs.
        child.wait().unwrap();
        // Whatever the moment, the file is a complete old or new state, never a torn one.
        let done = Checkpoint::load(ckpt).unwrap().map_or(0, |c| c.done.len());
        assert!(
            saved.last().is_none_or(|&last| done >= last),
            "{saved:?} then {done}"
        );
        saved.push(done);
    }
    let out = nqueens_std().args(args).output().unwrap();
    assert!(out.status.success(), "{out:?}");
    (String::from_utf8(out.stdout).unwrap(), saved)
}

#[test]
fn resume_after_kill_9_at_random_points_gives_the_exact_total() {
    let mut rng = seeded_rng();
    for run in 0..4 {
        let tmp = tempfile::tempdir().unwrap();
        let ckpt = tmp.path().join("n15.ckpt");
        // The mirror engine: slow enough at N = 15 that the kills land mid-run.
        let args = [
            "count",
            "15",
            "--engine",
            "mirror",
            "-j1",
            "-q",
            "--checkpoint",
            s(&ckpt),
            "--checkpoint-every",
            "0.02",
        ];
        let (out, saved) = run_with_kills(&args, &ckpt, 3, &mut rng);
        let plan_tasks = Checkpoint::load(&ckpt)
            .unwrap()
            .unwrap()
            .identity
            .plan_tasks;
        eprintln!(
            "run {run}: tasks saved at each kill {saved:?} of {plan_tasks}; total {}",
            out.trim()
        );
        assert_eq!(out.trim(), "2279184", "run {run}");
    }
}

#[test]
fn sigterm_saves_then_a_resume_on_other_threads_finishes() {
    let tmp = tempfile::tempdir().unwrap();
    let ckpt = tmp.path().join("c");
    let args = [
        "count",
        "16",
        "--engine",
        "mirror",
        "-j1",
        "-q",
        "--checkpoint",
        s(&ckpt),
        "--checkpoint-every",
        "1000",
    ];
    let child = spawn(&args);
    // Its first save, made before the first task, says the handler is in place; the count
    // has most of its tasks to go.
    assert!(wait_for_file(&ckpt), "no first save");
    let term = StdCommand::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(term.success());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130));
    let saved = Checkpoint::load(&ckpt).unwrap().expect("saved on SIGTERM");
    assert!(saved.done.len() < saved.identity.plan_tasks as u64);
    // The plan does not depend on -j, so another thread count resumes the same run.
    let mut resume = nqueens();
    resume.args([
        "count",
        "16",
        "--engine",
        "mirror",
        "-j2",
        "--checkpoint",
        s(&ckpt),
    ]);
    resume
        .assert()
        .success()
        .stdout("14772512\n")
        .stderr(contains("resuming"));
}

#[test]
fn a_checkpoint_of_another_n_or_engine_plan_is_refused_with_status_2() {
    let tmp = tempfile::tempdir().unwrap();
    let ckpt = tmp.path().join("c");
    nqueens()
        .args(["count", "9", "--checkpoint", s(&ckpt)])
        .assert()
        .success();
    let before = std::fs::read(&ckpt).unwrap();
    nqueens()
        .args(["count", "10", "--checkpoint", s(&ckpt)])
        .assert()
        .code(2)
        .stderr(contains("belongs to another run").and(contains("N = 9")));
    nqueens()
        .args(["count", "9", "--split-depth", "2", "--checkpoint", s(&ckpt)])
        .assert()
        .code(2)
        .stderr(contains("plan"));
    assert_eq!(
        std::fs::read(&ckpt).unwrap(),
        before,
        "a refused checkpoint is never rewritten"
    );
}

use predicates::prelude::PredicateBooleanExt;

#[test]
fn a_corrupted_or_truncated_checkpoint_is_refused_and_left_alone() {
    let tmp = tempfile::tempdir().unwrap();
    let ckpt = tmp.path().join("c");
    nqueens()
        .args(["count", "10", "--checkpoint", s(&ckpt)])
        .assert()
        .success();
    let text = std::fs::read_to_string(&ckpt).unwrap();
    let edited = text.replacen("\"total\":\"724\"", "\"total\":\"725\"", 1);
    assert_ne!(edited, text);
    for (broken, why) in [
        (edited.as_str(), "checksum"),
        (&text[..text.len() - 40], "truncated"),
    ] {
        std::fs::write(&ckpt, broken).unwrap();
        nqueens()
            .args(["count", "10", "--checkpoint", s(&ckpt)])
            .assert()
            .code(2)
            .stderr(contains(why).and(contains("untouched")));
        assert_eq!(std::fs::read_to_string(&ckpt).unwrap(), broken);
    }
}

fn write_shards(dir: &Path, n: u32, k: usize, extra: &[&str]) -> Vec<PathBuf> {
    (0..k)
        .map(|i| {
            let out = dir.join(format!("n{n}-{i}-of-{k}.json"));
            let shard = format!("{i}/{k}");
            nqueens()
                .args([
                    "count",
                    &n.to_string(),
                    "--shard",
                    &shard,
                    "--out",
                    s(&out),
                    "-q",
                ])
                .args(extra)
                .assert()
                .success();
            out
        })
        .collect()
}

#[test]
fn shards_for_k_1_2_3_7_sum_to_the_total_and_merge() {
    for k in [1, 2, 3, 7] {
        let tmp = tempfile::tempdir().unwrap();
        let files = write_shards(tmp.path(), 12, k, &[]);
        let sum: u128 = files
            .iter()
            .map(|f| PartialResult::load(f).unwrap().total)
            .sum();
        assert_eq!(sum, 14_200, "K = {k}");
        nqueens()
            .args(["merge", s(tmp.path())])
            .assert()
            .success()
            .stdout("14200\n");
    }
}

fn merge_fails(files: &[PathBuf], message: &str) {
    nqueens()
        .arg("merge")
        .args(files)
        .assert()
        .code(3)
        .stdout("")
        .stderr(contains("merge refused").and(contains(message)));
}

#[test]
fn merge_refuses_a_missing_shard() {
    let tmp = tempfile::tempdir().unwrap();
    let files = write_shards(tmp.path(), 11, 3, &[]);
    merge_fails(&files[..2], "shard 2/3 is missing");
}

#[test]
fn merge_refuses_a_disagreeing_duplicate_and_accepts_an_equal_one() {
    let tmp = tempfile::tempdir().unwrap();
    let mut files = write_shards(tmp.path(), 11, 3, &[]);
    let copy = tmp.path().join("copy.json");
    std::fs::copy(&files[1], &copy).unwrap();
    let mut with_copy = files.clone();
    with_copy.push(copy);
    let mut merge = nqueens();
    merge.arg("merge").args(&with_copy);
    merge
        .assert()
        .success()
        .stdout("2680\n")
        .stderr(contains("duplicates"));
    // A recomputed shard 1 that disagrees (validly sealed, so only the comparison catches it).
    let mut other = PartialResult::load(&files[1]).unwrap();
    other.digest.add(0, 4);
    other.total += 4;
    let path = tmp.path().join("rerun.json");
    other.save(&path).unwrap();
    files.push(path);
    merge_fails(&files, "disagree");
}

#[test]
fn merge_refuses_a_shard_of_another_n() {
    let tmp = tempfile::tempdir().unwrap();
    let mut files = write_shards(tmp.path(), 11, 2, &[]);
    files.push(write_shards(tmp.path(), 10, 2, &[]).remove(1));
    merge_fails(&files, "another run: N = 10");
}

#[test]
fn merge_refuses_a_tampered_count() {
    let tmp = tempfile::tempdir().unwrap();
    let files = write_shards(tmp.path(), 11, 2, &[]);
    let text = std::fs::read_to_string(&files[0]).unwrap();
    let result = PartialResult::load(&files[0]).unwrap();
    let edited = text.replace(
        &format!("\"total\":\"{}\"", result.total),
        &format!("\"total\":\"{}\"", result.total + 2),
    );
    assert_ne!(edited, text);
    std::fs::write(&files[0], edited).unwrap();
    merge_fails(&files, "checksum");
}

#[test]
fn merge_json_lists_every_problem() {
    let tmp = tempfile::tempdir().unwrap();
    let files = write_shards(tmp.path(), 11, 4, &[]);
    let out = nqueens()
        .args(["merge", "--json"])
        .args(&files[1..3])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    let report: nqueens::shard::MergeReport = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report.total, None);
    assert_eq!(report.problems.len(), 2, "{:?}", report.problems);
}

#[test]
fn shard_auto_reads_the_slurm_array_variables() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("auto.json");
    nqueens()
        .args(["count", "10", "--shard", "auto", "--out", s(&out), "-q"])
        .envs([
            ("SLURM_ARRAY_TASK_ID", "7"),
            ("SLURM_ARRAY_TASK_MIN", "5"),
            ("SLURM_ARRAY_TASK_MAX", "8"),
            ("SLURM_ARRAY_TASK_COUNT", "4"),
        ])
        .assert()
        .success();
    let result = PartialResult::load(&out).unwrap();
    assert_eq!(result.identity.shard.to_string(), "2/4");
    nqueens()
        .args(["count", "10", "--shard", "auto", "--out", s(&out)])
        .assert()
        .code(2)
        .stderr(contains("Slurm array job"));
}

#[test]
fn a_killed_shard_with_a_checkpoint_resumes_to_the_same_result() {
    let tmp = tempfile::tempdir().unwrap();
    let plain = write_shards(tmp.path(), 15, 3, &["-j1", "--engine", "mirror"]).remove(1);
    let ckpt = tmp.path().join("s1.ckpt");
    let out = tmp.path().join("s1.json");
    let args = [
        "count",
        "15",
        "--engine",
        "mirror",
        "-j1",
        "-q",
        "--shard",
        "1/3",
        "--out",
        s(&out),
        "--checkpoint",
        s(&ckpt),
        "--checkpoint-every",
        "0.02",
    ];
    let (stdout, saved) = run_with_kills(&args, &ckpt, 2, &mut seeded_rng());
    eprintln!("shard 1/3 of N = 15: tasks saved at each kill {saved:?}");
    let (a, b) = (
        PartialResult::load(&plain).unwrap(),
        PartialResult::load(&out).unwrap(),
    );
    assert_eq!(stdout.trim(), a.total.to_string());
    assert_eq!(
        (a.tasks, a.identity.plan_hash),
        (b.tasks, b.identity.plan_hash)
    );
}

#[test]
fn bad_shard_and_interval_values_are_usage_errors() {
    for args in [
        &["count", "10", "--shard", "3/3", "--out", "x.json"][..],
        &["count", "10", "--shard", "1/2"],
        &[
            "count",
            "10",
            "--checkpoint",
            "c",
            "--checkpoint-every",
            "0",
        ],
        &["count", "10", "--checkpoint-every", "1"],
        &["merge"],
    ] {
        nqueens().args(args).assert().code(2);
    }
}

#[test]
fn an_unwritable_result_or_checkpoint_file_fails_before_counting() {
    let tmp = tempfile::tempdir().unwrap();
    let missing = tmp.path().join("no-such-folder");
    for flag in ["--out", "--checkpoint"] {
        nqueens()
            .args(["count", "10", flag, s(&missing.join("f"))])
            .assert()
            .code(1)
            .stdout("")
            .stderr(contains("no-such-folder"));
    }
}
