//! Files: outputs that would replace what is not theirs, empty checkpoints, bad paths,
//! long problem lists, and a run that is done but cannot be merged.

use serde_json::Value;

use super::*;

#[test]
fn an_empty_checkpoint_file_is_no_checkpoint_yet() {
    let dir = tempfile::tempdir().unwrap();
    let ckpt = dir.path().join("c.ckpt");
    std::fs::write(&ckpt, b"").unwrap(); // what touch or mktemp leaves
    let (code, _, _) = run(&["status", s(dir.path())]);
    assert_eq!(
        code, 1,
        "an empty checkpoint is no run yet, not a damaged file"
    );
    let (code, stdout, stderr) = run(&["count", "10", "--checkpoint", s(&ckpt)]);
    assert_eq!((code, stdout.as_str()), (0, "724\n"), "{stderr}");
    nqueens::shard::Checkpoint::load(&ckpt).unwrap().unwrap();
}

#[test]
fn out_replaces_only_this_shards_earlier_result() {
    let dir = tempfile::tempdir().unwrap();
    let binary = dir.path().join("nq");
    std::fs::write(&binary, b"\x7fELF not a result").unwrap();
    let (code, _, stderr) = run(&["count", "10", "--out", s(&binary)]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("--force"), "{stderr}");
    assert_eq!(std::fs::read(&binary).unwrap(), b"\x7fELF not a result");
    let out = dir.path().join("r.json");
    std::fs::write(&out, b"").unwrap(); // what mktemp leaves
    for _ in 0..2 {
        assert_eq!(run(&["count", "10", "--out", s(&out), "-q"]).0, 0);
    }
    let before = std::fs::read(&out).unwrap();
    let (code, _, stderr) = run(&["count", "10", "--shard", "1/2", "--out", s(&out)]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("shard 0/1") && stderr.contains("shard 1/2"),
        "{stderr}"
    );
    assert_eq!(std::fs::read(&out).unwrap(), before);
    let forced = run(&["count", "10", "--shard", "1/2", "--out", s(&out), "--force"]);
    assert_eq!(forced.0, 0);
    assert_eq!(
        run(&["count", "10", "--out", s(&binary), "--force", "-q"]).0,
        0
    );
}

#[test]
fn bench_exports_replace_only_earlier_exports() {
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let (json, md, svg) = (path("b.json"), path("b.md"), path("b.svg"));
    let bench = |extra: &[&str]| {
        let args = [
            "bench",
            "--size",
            "tiny",
            "-j",
            "1",
            "-q",
            "--export-json",
            &json,
        ];
        let exports = ["--export-markdown", &md, "--plot", &svg];
        run(&[&args[..], &exports, extra].concat())
    };
    assert_eq!(bench(&[]).0, 0);
    assert_eq!(bench(&[]).0, 0, "earlier exports are replaced");
    let (_, stdout, _) = run(&["bench", "--compare", &json, &json, "--json"]);
    let compared: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(compared["schema"], "nqueens.bench-compare/1");
    assert_eq!(compared["ratios"][0]["ratio"], 1.0);
    let notes = path("notes.txt");
    std::fs::write(&notes, "my notes\n").unwrap();
    for flag in ["--export-json", "--export-markdown", "--plot"] {
        let (code, _, stderr) = run(&["bench", "--size", "tiny", "-q", flag, &notes]);
        assert_eq!(code, 2, "{flag}: {stderr}");
        assert!(
            stderr.contains(flag) && stderr.contains("--force"),
            "{stderr}"
        );
    }
    // A report of one kind is no export of another.
    let (code, _, _) = run(&["bench", "--size", "tiny", "-q", "--plot", &json]);
    assert_eq!(code, 2);
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "my notes\n");
}

#[test]
fn paths_of_the_kernel_and_spans_too_long_are_named_for_what_they_are() {
    let (code, _, stderr) = run(&["count", "10", "--out", "/proc/self/mem"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("/proc file system"), "{stderr}");
    assert!(!stderr.contains("No such file"), "{stderr}");
    let (code, _, stderr) = run(&["estimate", "10", "--per-task", "9999999d"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("longer than"), "{stderr}");
}

#[test]
fn merge_of_nothing_fails_as_status_does() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nonexistent");
    assert_eq!(run(&["merge", s(&missing)]).0, 1);
    assert_eq!(run(&["status", s(&missing)]).0, 1);
    assert_eq!(run(&["merge", s(dir.path())]).0, 1, "an empty folder");
}

/// A run of N = 10 in 2 shards, both done, under `dir/shards`.
fn finished_run(dir: &Path) {
    let shards = dir.join("shards");
    std::fs::create_dir(&shards).unwrap();
    for i in 0..2 {
        let out = shards.join(format!("shard-{i}.json"));
        let spec = format!("{i}/2");
        assert_eq!(
            run(&["count", "10", "--shard", &spec, "--out", s(&out), "-q"]).0,
            0
        );
    }
}

#[test]
fn long_problem_lists_are_cut_with_a_count() {
    let dir = tempfile::tempdir().unwrap();
    finished_run(dir.path());
    for i in 0..30 {
        std::fs::write(dir.path().join(format!("shards/junk-{i:02}.json")), "{").unwrap();
    }
    let (code, _, stderr) = run(&["merge", s(&dir.path().join("shards"))]);
    assert_eq!(code, 3);
    assert!(stderr.contains("30 problems"), "{stderr}");
    assert_eq!(stderr.matches("  - ").count(), 20, "{stderr}");
    assert!(stderr.contains("and 10 more problems"), "{stderr}");
    let (code, stdout, _) = run(&["status", s(dir.path())]);
    assert_eq!(code, 3);
    assert_eq!(stdout.matches("  - ").count(), 20, "{stdout}");
    assert!(stdout.contains("and 10 more problems"), "{stdout}");
}

#[test]
fn status_calls_a_run_complete_only_when_merge_takes_it() {
    let dir = tempfile::tempdir().unwrap();
    finished_run(dir.path());
    let (_, stdout, _) = run(&["status", s(dir.path())]);
    assert!(stdout.contains("complete:"), "{stdout}");
    // A damaged copy among the results: merge refuses the folder.
    let shards = dir.path().join("shards");
    let text = std::fs::read_to_string(shards.join("shard-0.json")).unwrap();
    std::fs::write(
        shards.join("shard-0-copy.json"),
        text.replace("\"n\":10", "\"n\":11"),
    )
    .unwrap();
    assert_eq!(run(&["merge", s(&shards)]).0, 3);
    let (_, stdout, _) = run(&["status", s(dir.path())]);
    assert!(!stdout.contains("complete:"), "{stdout}");
    assert!(stdout.contains("refuses"), "{stdout}");
    let (_, json, _) = run(&["status", "--json", s(dir.path())]);
    let v: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["complete"], false);
}

#[test]
fn one_of_a_thing_is_not_called_many() {
    let dir = tempfile::tempdir().unwrap();
    let mask = dir.path().join("mask");
    std::fs::write(&mask, "0111\n1111\n1111\n1111\n").unwrap();
    let (_, _, stderr) = run(&["count", "4", "--mask", s(&mask), "-j", "1"]);
    assert!(
        stderr.contains("1 blocked cell:") && stderr.contains("1 thread,"),
        "{stderr}"
    );
    let board = "4\n1 0 1 1\n1 1 1 1\n1 1 1 1\n1 1 1 1\n";
    let (_, _, stderr) = run_with_input(&["two-colour", "-j", "1"], board);
    assert!(stderr.contains("1 solution fits the mask"), "{stderr}");
    assert!(stderr.contains("1 thread,"), "{stderr}");
    assert!(!stderr.contains(" 1 threads"), "{stderr}");
}
