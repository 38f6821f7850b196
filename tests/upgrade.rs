//! A run whose checkpoint an older nqueens wrote (schema `nqueens.checkpoint/2`) resumes after
//! the upgrade without losing its finished tasks.
//!
//! The fixtures are checkpoints written by the nqueens of commit 0ad88ec, the last one that
//! wrote schema 2:
//! - `checkpoint-v2-n14-stopped.json`: `count 14 --checkpoint F --recheck 1
//!   --test-inject-fault 300 -j2`, stopped by the mismatch on task 300 with 588 of 1716 tasks
//!   saved (some marked rechecked);
//! - `checkpoint-v2-n12-wrong.json`: `count 12 --checkpoint F --test-inject-fault 0`, complete,
//!   with task 0 saved one too high (total 14201).
//!
//! Runs also survive an upgrade that keeps their plan: the `v0.0.9-*` fixtures were written by
//! a build whose package version was 0.0.9 (see `tests/fixtures/README.md`); a checkpoint or
//! shard file of another version is accepted when its plan hash is this version's.

mod common;

use std::path::{Path, PathBuf};

use common::nqueens;
use nqueens::shard::checkpoint::{CHECKPOINT_SCHEMA, CHECKPOINT_SCHEMA_2};
use nqueens::shard::Checkpoint;
use predicates::prelude::*;

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Copies fixture `name` into `dir` and returns the copy's path.
fn fixture(dir: &Path, name: &str) -> PathBuf {
    let from = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
    let to = dir.join(name);
    std::fs::copy(from, &to).unwrap();
    to
}

fn schema(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    let value: serde_json::Value = serde_json::from_str(&text).unwrap();
    value["schema"].as_str().unwrap().to_string()
}

#[test]
fn a_stopped_schema_2_run_resumes_to_the_exact_total_and_is_saved_as_schema_3() {
    let dir = tempfile::tempdir().unwrap();
    let cp = fixture(dir.path(), "checkpoint-v2-n14-stopped.json");
    assert_eq!(schema(&cp), CHECKPOINT_SCHEMA_2);
    let before = Checkpoint::load(&cp).unwrap().unwrap();
    assert_eq!((before.tasks_done, before.total), (588, 141_258));
    assert_eq!(before.blocks.inherited.len(), 588);

    nqueens()
        .args(["count", "14", "--checkpoint", s(&cp)])
        .assert()
        .success()
        .stdout("365596\n")
        .stderr(
            predicate::str::contains("1128 of 1716 tasks left")
                .and(predicate::str::contains("588 of the saved tasks"))
                .and(predicate::str::contains("schema 2")),
        );

    // The upgraded file is schema 3, keeps the inherited part and loads again.
    assert_eq!(schema(&cp), CHECKPOINT_SCHEMA);
    let after = Checkpoint::load(&cp).unwrap().unwrap();
    assert_eq!((after.remaining(), after.total), (0, 365_596));
    assert_eq!(after.blocks.inherited, before.blocks.inherited);
    assert!(!before.rechecked.is_empty());
    assert_eq!(
        after.rechecked, before.rechecked,
        "the rechecked marks are kept"
    );
    // Run again: the total at once, from the schema 3 file.
    nqueens()
        .args(["count", "14", "-q", "--checkpoint", s(&cp)])
        .assert()
        .success()
        .stdout("365596\n");
}

#[test]
fn a_tampered_schema_2_checkpoint_is_refused_and_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let cp = fixture(dir.path(), "checkpoint-v2-n14-stopped.json");
    let text = std::fs::read_to_string(&cp).unwrap();
    let tampered = text.replacen("\"total\":\"141258\"", "\"total\":\"141259\"", 1);
    assert_ne!(tampered, text);
    std::fs::write(&cp, &tampered).unwrap();
    nqueens()
        .args(["count", "14", "--checkpoint", s(&cp)])
        .assert()
        .failure()
        .stdout("")
        .stderr(predicate::str::contains("checksum"));
    assert_eq!(std::fs::read_to_string(&cp).unwrap(), tampered);
}

#[test]
fn a_wrong_count_saved_under_schema_2_is_explained_and_recheck_says_what_it_cannot_search() {
    let dir = tempfile::tempdir().unwrap();
    let cp = fixture(dir.path(), "checkpoint-v2-n12-wrong.json");
    let count = |extra: &[&str]| {
        nqueens()
            .args(["count", "12", "--checkpoint", s(&cp)])
            .args(extra)
            .assert()
    };
    // The wrong total still says how many tasks came from which checkpoint, and that the
    // inherited ones cannot be searched (so it does not send the user to --recheck).
    count(&["-q"]).code(3).stdout("14201\n").stderr(
        predicate::str::contains("5535 of the 5535 tasks")
            .and(predicate::str::contains("taken from the checkpoint"))
            .and(predicate::str::contains(s(&cp)))
            .and(predicate::str::contains(
                "They were all saved under checkpoint schema 2",
            ))
            .and(predicate::str::contains("delete the checkpoint")),
    );
    // --recheck has no block to search, and does not pretend otherwise.
    count(&["--recheck", "1"]).code(3).stdout("14201\n").stderr(
        predicate::str::contains("5535 of the saved tasks were finished under checkpoint")
            .and(predicate::str::contains("rechecking a share").not()),
    );
    assert_eq!(schema(&cp), CHECKPOINT_SCHEMA);
    // Deleting the checkpoint is the way out, as the message says.
    std::fs::remove_file(&cp).unwrap();
    count(&["-q"]).success().stdout("14200\n");
}

/// This build's version, which the fixtures' 0.0.9 is not.
const VERSION: &str = env!("CARGO_PKG_VERSION");

#[test]
fn a_checkpoint_of_another_version_with_the_same_plan_resumes_to_the_exact_total() {
    assert_ne!(VERSION, "0.0.9");
    let dir = tempfile::tempdir().unwrap();
    let cp = fixture(dir.path(), "v0.0.9-n14-stopped.ckpt");
    let before = Checkpoint::load(&cp).unwrap().unwrap();
    assert_eq!(
        (before.identity.version.as_str(), before.tasks_done),
        ("0.0.9", 338)
    );
    nqueens()
        .args(["count", "14", "--checkpoint", s(&cp)])
        .assert()
        .success()
        .stdout("365596\n")
        .stderr(
            predicate::str::contains("1378 of 1716 tasks left")
                .and(predicate::str::contains("written by nqueens 0.0.9")),
        );
    // From now on the file is this version's.
    let after = Checkpoint::load(&cp).unwrap().unwrap();
    assert_eq!(
        (after.identity.version.as_str(), after.remaining()),
        (VERSION, 0)
    );
}

#[test]
fn a_checkpoint_of_another_version_and_plan_is_refused_naming_both_versions() {
    let dir = tempfile::tempdir().unwrap();
    let cp = fixture(dir.path(), "v0.0.9-n12-depth4.ckpt");
    let text = std::fs::read(&cp).unwrap();
    nqueens()
        .args([
            "count",
            "12",
            "--engine",
            "symmetry",
            "--checkpoint",
            s(&cp),
        ])
        .assert()
        .failure()
        .stdout("")
        .stderr(
            predicate::str::contains("written by nqueens 0.0.9")
                .and(predicate::str::contains(format!("nqueens {VERSION})")))
                .and(predicate::str::contains("split depth 4")),
        );
    assert_eq!(
        std::fs::read(&cp).unwrap(),
        text,
        "the checkpoint is left alone"
    );
}

#[test]
fn shards_of_two_versions_merge_and_the_versions_are_reported() {
    let dir = tempfile::tempdir().unwrap();
    fixture(dir.path(), "v0.0.9-n12-shard-0-of-3.json");
    fixture(dir.path(), "v0.0.9-n12-shard-1-of-3.json");
    let ours = dir.path().join("shard-2-of-3.json");
    nqueens()
        .args(["count", "12", "-q", "--shard", "2/3", "--out", s(&ours)])
        .assert()
        .success();
    let out = nqueens()
        .args(["merge", "--json", s(dir.path())])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["total"], "14200");
    assert_eq!(report["versions"], serde_json::json!(["0.0.9", VERSION]));
    nqueens()
        .args(["merge", s(dir.path())])
        .assert()
        .success()
        .stderr(predicate::str::contains(format!(
            "written by nqueens 0.0.9, {VERSION}"
        )));
    let status = nqueens()
        .args(["status", "--json", s(dir.path())])
        .output()
        .unwrap();
    let status: serde_json::Value = serde_json::from_slice(&status.stdout).unwrap();
    assert_eq!(status["versions"], serde_json::json!(["0.0.9", VERSION]));
    assert_eq!(status["complete"], true);
}
