//! Runs: threads past memory and CPUs, boards past the fast engine, and the batch system's
//! warning before a time limit.

use std::io::{BufRead, BufReader};

use super::*;

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn sigusr1_saves_the_checkpoint_and_exits_as_interrupted() {
    let dir = tempfile::tempdir().unwrap();
    let ckpt = dir.path().join("c.ckpt");
    let args = [
        "count",
        "18",
        "-e",
        "mirror",
        "-j",
        "1",
        "--checkpoint",
        s(&ckpt),
    ];
    let every = ["--checkpoint-every", "0.05"];
    let child = spawn(nqueens_std().args(args).args(every));
    assert!(wait_for_save(&ckpt));
    signal(&child, libc::SIGUSR1);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("progress saved"),
        "{}",
        text(&out.stderr)
    );
    nqueens::shard::Checkpoint::load(&ckpt).unwrap().unwrap();
}

#[test]
fn the_slurm_array_script_asks_for_the_warning_and_the_count_gets_it() {
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/scripts/slurm/count-array.sbatch"
    );
    let text_of = std::fs::read_to_string(script).unwrap();
    assert!(text_of.contains("\n#SBATCH --signal=B:USR1@"), "{text_of}");
    let dir = tempfile::tempdir().unwrap();
    let child = spawn(
        Command::new("bash")
            .args([script, "18", s(dir.path()), "-e", "mirror"])
            .env("NQUEENS", assert_cmd::cargo::cargo_bin("nqueens"))
            .env("CHECKPOINT_EVERY", "0.05")
            .envs([("SLURM_ARRAY_TASK_ID", "0"), ("SLURM_ARRAY_TASK_MIN", "0")])
            .envs([
                ("SLURM_ARRAY_TASK_MAX", "0"),
                ("SLURM_ARRAY_TASK_COUNT", "1"),
            ]),
    );
    let ckpt = dir.path().join("checkpoints/shard-0.ckpt");
    assert!(wait_for_save(&ckpt));
    // With B:, Slurm signals the batch shell only: the script must be the count itself.
    signal(&child, libc::SIGUSR1);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", text(&out.stderr));
    nqueens::shard::Checkpoint::load(&ckpt).unwrap().unwrap();
}

#[test]
fn auto_counts_boards_past_the_mitm_engine_and_says_what_they_cost() {
    let mut child = spawn(nqueens_std().args(["count", "30"]));
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut note = String::new();
    stderr.read_line(&mut note).unwrap();
    // The count has started: it is stopped here, after a few core-years' worth of notice.
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(
        note.contains("symmetry engine") && note.contains("core-years"),
        "{note}"
    );
    let (code, stdout, stderr) = run(&["estimate", "31"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("symmetry engine"), "{stderr}");
    assert!(stdout.contains("NOT MEASURED"), "{stdout}");
    let (code, _, stderr) = run(&["count", "30", "-e", "mitm"]);
    assert_eq!(code, 2, "asked by name, mitm still refuses: {stderr}");
}

/// An address space that holds the binary and a few dozen workers of N = 16, not 256.
const TIGHT: u64 = 1_500_000 << 10;

#[test]
fn threads_past_the_address_space_are_cut_not_started_and_failed() {
    let out = with_address_space(TIGHT, &["count", "16", "-e", "mitm", "-j", "256"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(text(&out.stdout), "14772512\n");
    assert!(
        stderr.contains("ulimit -v") && stderr.contains("running on"),
        "{stderr}"
    );
    let board = format!("6\n{}", "1 1 1 1 1 1\n".repeat(6));
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("board");
    std::fs::write(&file, board).unwrap();
    let out = with_address_space(TIGHT, &["two-colour", "-j", "256", s(&file)]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "12\n");
    let estimate = [
        "estimate",
        "14",
        "-j",
        "256",
        "--calibrate",
        "0.05s",
        "--json",
        "-q",
    ];
    let out = with_address_space(TIGHT, &estimate);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let threads = report["threads"].as_u64().unwrap();
    assert!((1..256).contains(&threads), "{report}");
}

#[test]
fn a_count_not_one_worker_fits_is_refused_not_aborted() {
    let out = with_address_space(300 << 20, &["count", "24", "-e", "mitm", "-j", "2"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("not enough memory for one worker"),
        "{stderr}"
    );
}

#[test]
fn far_more_threads_than_cpus_get_a_note() {
    let (code, _, stderr) = run(&["count", "14", "-e", "mitm", "-j", "400"]);
    assert_eq!(code, 0);
    assert!(stderr.contains("note: 400 threads on"), "{stderr}");
    let (_, _, quiet) = run(&["count", "14", "-e", "mitm", "-j", "400", "-q"]);
    assert_eq!(quiet, "");
}
