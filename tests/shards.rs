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
    let resumed = resume.assert().success().stdout("14772512\n");
    // A machine slow enough may take the signal before the first task is saved: then there
    // is nothing to resume, and the run must not say it resumed.
    if saved.done.is_empty() {
        resumed.stderr(contains("resuming").not());
    } else {
        resumed.stderr(contains("resuming"));
    }
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
        .stderr(contains("not a job array task").and(contains("SLURM_ARRAY_TASK_ID (Slurm)")));
}

/// The array variables each scheduler gives task `t` of an array of `k`, and the `--shard`
/// value its job script passes.
type ArrayTask = fn(usize, usize) -> (Vec<(&'static str, String)>, String);

/// How each scheduler numbers its array tasks (see `nqueens::shard::scheduler`).
const SCHEDULERS: [(&str, ArrayTask); 6] = [
    ("Slurm, from 3", |t, k| {
        let vars = vec![
            ("SLURM_ARRAY_TASK_ID", (3 + t).to_string()),
            ("SLURM_ARRAY_TASK_MIN", "3".into()),
            ("SLURM_ARRAY_TASK_MAX", (3 + k - 1).to_string()),
            ("SLURM_ARRAY_TASK_COUNT", k.to_string()),
        ];
        (vars, "auto".into())
    }),
    ("Grid Engine, 1-based, step 2", |t, k| {
        let vars = vec![
            ("SGE_TASK_ID", (1 + 2 * t).to_string()),
            ("SGE_TASK_FIRST", "1".into()),
            ("SGE_TASK_LAST", (1 + 2 * (k - 1)).to_string()),
            ("SGE_TASK_STEPSIZE", "2".into()),
        ];
        (vars, "auto".into())
    }),
    ("LSF, 1-based", |t, k| {
        let vars = vec![
            ("LSB_JOBINDEX", (t + 1).to_string()),
            ("LSB_JOBINDEX_END", k.to_string()),
            ("LSB_JOBINDEX_STEP", "1".into()),
        ];
        (vars, "auto".into())
    }),
    ("PBS Pro", |t, k| {
        (
            vec![("PBS_ARRAY_INDEX", t.to_string())],
            format!("auto/{k}"),
        )
    }),
    ("Torque", |t, k| {
        (vec![("PBS_ARRAYID", t.to_string())], format!("auto/{k}"))
    }),
    ("Kubernetes", |t, k| {
        (
            vec![("JOB_COMPLETION_INDEX", t.to_string())],
            format!("auto/{k}"),
        )
    }),
];

#[test]
fn shard_auto_runs_the_arrays_of_every_scheduler_and_they_merge_exactly() {
    let k = 4;
    for (name, task) in SCHEDULERS {
        let tmp = tempfile::tempdir().unwrap();
        for t in 0..k {
            let (vars, shard) = task(t, k);
            let out = tmp.path().join(format!("task-{t}.json"));
            nqueens()
                .args(["count", "12", "--shard", &shard, "--out", s(&out), "-q"])
                .envs(vars)
                .assert()
                .success();
            let result = PartialResult::load(&out).unwrap();
            assert_eq!(
                result.identity.shard.to_string(),
                format!("{t}/{k}"),
                "{name}"
            );
        }
        nqueens()
            .args(["merge", s(tmp.path())])
            .assert()
            .success()
            .stdout("14200\n");
    }
}

/// The job scripts of docs/cluster.md's section on other schedulers: (the variables of
/// task `t` of 16, the script), the Kubernetes one as its `sh -c` command.
fn documented_scripts() -> Vec<(ArrayTask, String)> {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/cluster.md"));
    let doc = doc.unwrap();
    let section = doc
        .split("## Job arrays of other schedulers")
        .nth(1)
        .and_then(|rest| rest.split("\n## ").next())
        .expect("the section is there");
    let mut out = Vec::new();
    for block in section.split("```").skip(1).step_by(2) {
        let (kind, body) = block.split_once('\n').unwrap();
        let script = match kind {
            "sh" => body.to_string(),
            // The container's command: the folded lines after `>-`, joined by blanks.
            "yaml" => {
                let lines = body.lines().skip_while(|l| !l.trim_end().ends_with(">-"));
                let folded = lines
                    .skip(1)
                    .take_while(|l| l.starts_with("              "));
                folded.map(str::trim).collect::<Vec<_>>().join(" ")
            }
            other => panic!("a block of {other}"),
        };
        let task: ArrayTask = if script.contains("#$ -t 1-16") {
            |t, k| {
                let vars = vec![
                    ("SGE_TASK_ID", (t + 1).to_string()),
                    ("SGE_TASK_FIRST", "1".into()),
                    ("SGE_TASK_LAST", k.to_string()),
                    ("SGE_TASK_STEPSIZE", "1".into()),
                ];
                (vars, String::new())
            }
        } else if script.contains("#BSUB -J \"nqueens-n20[1-16]\"") {
            |t, k| SCHEDULERS[2].1(t, k)
        } else if script.contains("#PBS -J 0-15") {
            |t, k| SCHEDULERS[3].1(t, k)
        } else if script.contains("#PBS -t 0-15") {
            |t, k| SCHEDULERS[4].1(t, k)
        } else if script.contains("$JOB_COMPLETION_INDEX") {
            |t, k| SCHEDULERS[5].1(t, k)
        } else {
            panic!("a script of no scheduler known: {script}")
        };
        assert!(script.contains("count 20 "), "{script}");
        out.push((task, script.replace("count 20 ", "count 10 ")));
    }
    out
}

#[cfg(unix)]
#[test]
fn every_scheduler_script_in_the_docs_runs_its_shards_and_they_merge() {
    let scripts = documented_scripts();
    assert_eq!(
        scripts.len(),
        5,
        "Grid Engine, LSF, PBS Pro, Torque, Kubernetes"
    );
    let bin = tempfile::tempdir().unwrap();
    let nqueens_bin = assert_cmd::cargo::cargo_bin("nqueens");
    std::os::unix::fs::symlink(nqueens_bin, bin.path().join("nqueens")).unwrap();
    let path = format!("{}:{}", s(bin.path()), std::env::var("PATH").unwrap());
    for (task, script) in scripts {
        let run = tempfile::tempdir().unwrap();
        for t in 0..16 {
            let mut cmd = StdCommand::new("bash");
            cmd.arg("-c").arg(&script).current_dir(run.path());
            for var in nqueens::shard::scheduler::array_vars() {
                cmd.env_remove(var);
            }
            cmd.env("PATH", &path).env("PBS_O_WORKDIR", run.path());
            let status = cmd.envs(task(t, 16).0).status().unwrap();
            assert!(status.success(), "task {t} of {script}");
        }
        nqueens()
            .args(["merge", s(&run.path().join("shards"))])
            .assert()
            .success()
            .stdout("724\n");
    }
}

#[test]
fn two_schedulers_at_once_or_a_k_the_array_disagrees_with_are_refused_by_name() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("x.json");
    let (mut vars, _) = SCHEDULERS[2].1(0, 4);
    vars.push(("JOB_COMPLETION_INDEX", "0".into()));
    nqueens()
        .args(["count", "10", "--shard", "auto/4", "--out", s(&out)])
        .envs(vars)
        .assert()
        .code(2)
        .stderr(contains("LSB_JOBINDEX (LSF)").and(contains("JOB_COMPLETION_INDEX (Kubernetes)")));
    let (vars, _) = SCHEDULERS[1].1(0, 4);
    nqueens()
        .args(["count", "10", "--shard", "auto/5", "--out", s(&out)])
        .envs(vars)
        .assert()
        .code(2)
        .stderr(contains("Grid Engine array of 4 tasks"));
    nqueens()
        .args(["count", "10", "--shard", "auto", "--out", s(&out)])
        .env("PBS_ARRAYID", "2")
        .assert()
        .code(2)
        .stderr(contains("PBS_ARRAYID is set (Torque)").and(contains("auto/K")));
    assert!(!out.exists());
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
