//! `--recheck FRACTION` and injected faults, in counts, shards and `bench`.

use super::*;

#[test]
fn recheck_confirms_a_fraction_of_the_tasks() {
    for engine in ["mirror", "symmetry", "mitm"] {
        let (code, stdout, stderr) = run(&[
            "count",
            "13",
            "-e",
            engine,
            "--recheck",
            "0.5",
            "--json",
            "-j",
            "2",
        ]);
        assert_eq!(code, 0, "{engine}: {stderr}");
        let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
        assert_eq!(v["total"], "73712", "{engine}");
        let tasks = v["tasks"].as_u64().unwrap();
        let rechecked = v["rechecked"].as_u64().unwrap();
        assert!(
            rechecked > 0 && rechecked < tasks,
            "{engine}: {rechecked} of {tasks}"
        );
    }
    let (_, stdout, _) = run(&["count", "13", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert!(v["rechecked"].is_null());
}

#[test]
fn recheck_fractions_outside_zero_to_one_are_usage_errors() {
    for bad in ["0", "1.5", "-0.1", "NaN", "lots"] {
        nqueens()
            .args(["count", "8", &format!("--recheck={bad}")])
            .assert()
            .code(2)
            .stderr(predicate::str::contains("--recheck"));
    }
}

#[test]
fn an_injected_fault_is_caught_named_and_exits_3() {
    for engine in ["mirror", "symmetry", "mitm"] {
        nqueens()
            .args([
                "count",
                "13",
                "-e",
                engine,
                "--recheck",
                "1",
                "--test-inject-fault",
                "2",
            ])
            .assert()
            .code(3)
            .stdout("")
            .stderr(predicate::str::contains("RECHECK MISMATCH on task 2"));
    }
}

#[test]
fn a_recheck_mismatch_writes_no_result_and_keeps_the_task_out_of_the_checkpoint() {
    let dir = tempfile::tempdir().unwrap();
    let (cp, out) = (dir.path().join("cp"), dir.path().join("out.json"));
    nqueens()
        .args([
            "count",
            "10",
            "-q",
            "--recheck",
            "1",
            "--test-inject-fault",
            "3",
        ])
        .arg("--checkpoint")
        .arg(&cp)
        .arg("--out")
        .arg(&out)
        .assert()
        .code(3)
        .stdout("")
        .stderr(predicate::str::contains("RECHECK MISMATCH on task 3"));
    assert!(!out.exists(), "no shard file claims success");
    // The whole plan is shard 0/1, whose round r is task r (the checkpoint records rounds, not task ids).
    let saved = nqueens::shard::Checkpoint::load(&cp).unwrap().unwrap();
    assert!(!saved.done.contains(3), "the suspect count is not kept");
    assert!(saved.tasks_done > 0, "the other finished tasks are kept");
    // The same command without the fault resumes, solves task 3 again and succeeds.
    nqueens()
        .args(["count", "10", "-q", "--recheck", "1", "--checkpoint"])
        .arg(&cp)
        .arg("--out")
        .arg(&out)
        .assert()
        .success()
        .stdout("724\n");
}

#[test]
fn shard_files_record_rechecked_tasks_and_merge_reports_them() {
    let dir = tempfile::tempdir().unwrap();
    let mut rechecked = 0;
    for i in 0..2 {
        let out = dir.path().join(format!("s{i}.json"));
        nqueens()
            .args([
                "count",
                "12",
                "-q",
                "--recheck",
                "0.2",
                "--shard",
                &format!("{i}/2"),
                "--out",
            ])
            .arg(&out)
            .assert()
            .success();
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
        // A count of rechecked tasks, not a list, so shard files stay small.
        let count = v["rechecked"].as_u64().unwrap() as usize;
        assert!(count > 0);
        rechecked += count;
    }
    let (code, stdout, stderr) = run(&["merge", "--json", dir.path().to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["total"], "14200");
    assert_eq!(v["rechecked"].as_u64().unwrap() as usize, rechecked);
}

#[test]
fn bench_burn_in_rechecks_and_catches_an_injected_fault() {
    nqueens()
        .args([
            "bench",
            "--size",
            "tiny",
            "-q",
            "-j",
            "1",
            "--recheck",
            "1",
            "--test-inject-fault",
            "0",
        ])
        .assert()
        .code(3)
        .stderr(predicate::str::contains("RECHECK MISMATCH on task 0"));
    let (code, stdout, stderr) = run(&[
        "bench",
        "--size",
        "tiny",
        "-q",
        "-j",
        "1",
        "--duration",
        "0.001",
        "--json",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["verified"], true);
    assert!(
        v["rechecked"].as_u64().unwrap() > 0,
        "a burn-in rechecks by default"
    );
}

#[test]
fn bench_exports_are_checked_before_the_benchmark_runs() {
    let dir = tempfile::tempdir().unwrap();
    for flag in ["--export-json", "--export-markdown", "--plot"] {
        nqueens()
            .args(["bench", "-q", "-j", "1", flag])
            .arg(dir.path())
            .assert()
            .code(2)
            .stdout("")
            .stderr(predicate::str::contains(
                "is a folder; refusing to replace it",
            ));
    }
}
