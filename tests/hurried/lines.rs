//! Lines for people that fit the run: control characters in names escaped, the merge line of
//! a complete run, results kept in two folders, a forged plan size, a GPU's shards told from
//! a CPU's, a finished checkpoint's label, and estimates whose target cannot be met.

use std::time::Duration;

use nqueens::shard::{stable_plan, Digest, PartialResult, ShardSpec, ShardTotals};
use nqueens::CountOptions;
use serde_json::Value;

use super::*;

/// A run of N = 10 in 2 shards, both done, under `dir/shards`.
fn finished_run(dir: &Path) {
    let shards = dir.join("shards");
    std::fs::create_dir_all(&shards).unwrap();
    for i in 0..2 {
        let out = shards.join(format!("shard-{i}.json"));
        let spec = format!("{i}/2");
        let args = ["count", "10", "--shard", &spec, "--out", s(&out), "-q"];
        assert_eq!(run(&args).0, 0);
    }
}

/// Whether `text` holds a control character other than its line breaks.
fn has_control(text: &str) -> bool {
    text.chars().any(|c| c.is_control() && c != '\n')
}

#[test]
fn control_characters_in_names_are_escaped_in_status_and_merge() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run \x1b[31mred\r\x07 a\nb");
    finished_run(&dir);
    std::fs::write(dir.join("shards/bad\x1b[2J.json"), "{").unwrap();
    let (code, stdout, _) = run(&["status", s(&dir)]);
    assert_eq!(code, 3, "{stdout}");
    assert!(!has_control(&stdout), "{stdout:?}");
    assert!(stdout.contains("\\x1b[31mred\\r\\x07 a\\nb"), "{stdout}");
    assert!(stdout.contains("bad\\x1b[2J.json"), "{stdout}");
    let (code, _, stderr) = run(&["merge", s(&dir.join("shards"))]);
    assert_eq!(code, 3);
    assert!(!has_control(&stderr), "{stderr:?}");
    assert!(stderr.contains("bad\\x1b[2J.json"), "{stderr}");
    // An error naming the folder is one line too.
    let missing = dir.join("gone\x1b[0m");
    let (code, _, stderr) = run(&["status", s(&missing)]);
    assert_eq!(code, 1);
    assert!(
        !has_control(&stderr) && stderr.lines().count() == 1,
        "{stderr:?}"
    );
}

#[test]
fn results_of_one_run_in_two_folders_are_complete_and_merge_together() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    finished_run(&dir);
    std::fs::create_dir(dir.join("more")).unwrap();
    std::fs::rename(
        dir.join("shards/shard-1.json"),
        dir.join("more/shard-1.json"),
    )
    .unwrap();
    let (code, stdout, _) = run(&["status", s(&dir)]);
    assert_eq!(code, 0, "{stdout}");
    assert!(stdout.contains("complete:"), "{stdout}");
    assert!(!stdout.contains("refuses"), "{stdout}");
    let line = stdout
        .lines()
        .find_map(|l| l.trim_start().strip_prefix("nqueens merge "))
        .unwrap_or_else(|| panic!("no merge line: {stdout}"));
    let folders: Vec<&str> = line.split(' ').collect();
    assert_eq!(folders, [s(&dir.join("more")), s(&dir.join("shards"))]);
    let (code, total, _) = run(&["merge", folders[0], folders[1]]);
    assert_eq!((code, total.trim()), (0, "724"));
}

#[test]
fn a_result_claiming_a_plan_of_two_to_the_forty_tasks_is_read_in_what_it_holds() {
    let dir = tempfile::tempdir().unwrap();
    let plan = stable_plan(10, &CountOptions::new()).unwrap();
    let huge = 1usize << 40;
    let totals = ShardTotals {
        tasks: huge,
        total: 724,
        digest: Digest(1),
    };
    let mut forged = PartialResult::new(plan.as_ref(), ShardSpec::whole(), totals, Duration::ZERO);
    forged.identity.plan_tasks = huge;
    forged.save(&dir.path().join("forged.json")).unwrap();
    // Every task of the claimed plan visited would take hours; what the file holds, moments.
    let (_, v) = {
        let (code, out, err) = run(&["status", "--json", s(dir.path())]);
        let v: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {err}"));
        (code, v)
    };
    assert_eq!(v["done"], 1, "{v}");
    assert_eq!(v["tasks_done"].as_u64(), Some(huge as u64), "{v}");
    assert_eq!(v["share_of"], "tasks", "{v}");
}

#[test]
fn a_gpu_shard_is_listed_apart_from_the_cpu_shards() {
    let dir = tempfile::tempdir().unwrap();
    finished_run(dir.path());
    let path = dir.path().join("shards/shard-1.json");
    let mut result = PartialResult::load(&path).unwrap();
    result.identity.plan = format!("{}, GPU Test GPU", result.identity.plan);
    result.save(&path).unwrap();
    let (code, stdout, _) = run(&["status", s(dir.path())]);
    assert_eq!(code, 0, "{stdout}");
    let gpu: Vec<&str> = stdout.lines().filter(|l| l.starts_with("gpu: ")).collect();
    let cpu: Vec<&str> = stdout.lines().filter(|l| l.starts_with("cpu: ")).collect();
    assert_eq!(gpu.len(), 1, "{stdout}");
    assert!(gpu[0].starts_with("gpu: Test GPU (host CPU "), "{stdout}");
    assert!(gpu[0].contains(": 1 shard done"), "{stdout}");
    assert_eq!(cpu.len(), 1, "{stdout}");
    assert!(cpu[0].contains(": 1 shard done"), "{stdout}");
}

#[test]
fn a_finished_checkpoint_keeps_the_label_of_what_counted_it() {
    let dir = tempfile::tempdir().unwrap();
    let ckpt = dir.path().join("c.ckpt");
    let out = dir.path().join("r.json");
    let args = ["count", "12", "-e", "mitm", "-q", "--checkpoint", s(&ckpt)];
    assert_eq!(run(&args).0, 0);
    let label = nqueens::shard::Checkpoint::load(&ckpt)
        .unwrap()
        .unwrap()
        .identity
        .plan;
    // Opened again by a build of another matcher level, which counts nothing.
    let status = nqueens_std()
        .args(args)
        .args(["--out", s(&out)])
        .env(nqueens::engine::ISA_VAR, "portable")
        .status()
        .unwrap();
    assert!(status.success());
    let after = nqueens::shard::Checkpoint::load(&ckpt).unwrap().unwrap();
    assert_eq!(after.identity.plan, label);
    assert_eq!(PartialResult::load(&out).unwrap().identity.plan, label);
}

#[test]
fn an_estimate_whose_target_no_array_task_can_meet_prints_no_line() {
    let (code, stdout, _) = run(&["estimate", "30", "-q"]);
    assert_eq!(code, 0, "{stdout}");
    assert!(stdout.contains("the target cannot be met"), "{stdout}");
    assert!(
        !stdout.contains("sbatch --array") && !stdout.contains("--time="),
        "{stdout}"
    );
    let (code, json, _) = run(&["estimate", "30", "-q", "--json"]);
    assert_eq!(code, 0);
    let v: Value = serde_json::from_str(&json).unwrap();
    assert!(v["sbatch"].is_null() && v["sbatch_time_s"].is_null(), "{v}");
    // An engine with no figure that far is a usage error, whichever it is.
    for engine in ["mirror", "mitm"] {
        let (code, _, stderr) = run(&["estimate", "30", "-e", engine, "-q"]);
        assert_eq!(code, 2, "{engine}: {stderr}");
    }
}
