//! Files never clobbered, options never silently ignored.

use super::*;

// Writes never clobber what is not a regular file, and an unwritable target fails
// before the count.

#[test]
fn out_and_checkpoint_refuse_a_folder_before_counting() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("some_dir");
    std::fs::create_dir(&target).unwrap();
    for flag in ["--out", "--checkpoint"] {
        nqueens()
            .args(["count", "10", "-q", flag])
            .arg(&target)
            .assert()
            .code(2)
            .stdout("")
            .stderr(predicate::str::contains(
                "is a folder; refusing to replace it",
            ));
        assert!(target.is_dir());
        assert_eq!(names_in(dir.path()), ["some_dir"], "nothing left behind");
    }
}

#[test]
fn out_into_a_missing_folder_fails_before_counting() {
    let dir = tempfile::tempdir().unwrap();
    nqueens()
        .args(["count", "10", "-q", "--out"])
        .arg(dir.path().join("missing/x.json"))
        .assert()
        .code(1)
        .stdout("")
        .stderr(predicate::str::contains("cannot write"));
}

#[cfg(unix)]
#[test]
fn fifos_and_dangling_links_are_never_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    // A link to a FIFO, not to a real device: a regression here must not damage the system
    // (the /dev/null case itself is a unit test of the target check, which writes nothing).
    let to_fifo = dir.path().join("fifo-link");
    std::os::unix::fs::symlink(&fifo, &to_fifo).unwrap();
    let dangling = dir.path().join("dangling");
    std::os::unix::fs::symlink(dir.path().join("nowhere"), &dangling).unwrap();
    let cases = [
        (fifo.clone(), "a FIFO"),
        (to_fifo.clone(), "a symbolic link to a FIFO"),
        (dangling.clone(), "a symbolic link to nothing"),
    ];
    for (target, kind) in &cases {
        for flag in ["--out", "--checkpoint"] {
            nqueens()
                .args(["count", "6", "-q", flag])
                .arg(target)
                .timeout(std::time::Duration::from_secs(60))
                .assert()
                .code(2)
                .stderr(predicate::str::contains(*kind));
        }
    }
    use std::os::unix::fs::FileTypeExt;
    assert!(std::fs::symlink_metadata(&fifo)
        .unwrap()
        .file_type()
        .is_fifo());
    assert!(std::fs::symlink_metadata(&to_fifo)
        .unwrap()
        .file_type()
        .is_symlink());
    assert!(std::fs::symlink_metadata(&dangling)
        .unwrap()
        .file_type()
        .is_symlink());
}

#[cfg(unix)]
#[test]
fn a_link_to_a_regular_file_is_followed_and_kept() {
    let dir = tempfile::tempdir().unwrap();
    let real = dir.path().join("real.json");
    // Empty, as `mktemp` leaves it: a file `--out` may replace.
    std::fs::write(&real, "").unwrap();
    let link = dir.path().join("link.json");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    nqueens()
        .args(["count", "6", "-q", "--out"])
        .arg(&link)
        .assert()
        .success()
        .stdout("4\n");
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&real).unwrap()).unwrap();
    assert_eq!(written["total"], "4");
    assert_eq!(names_in(dir.path()), ["link.json", "real.json"]);
}

// Options that would be silently ignored are usage errors.

#[test]
fn ignored_options_are_usage_errors() {
    let cases: [(&[&str], &str); 9] = [
        (
            &["count", "16", "-e", "mitm", "--split-depth", "3"],
            "does not support --split-depth",
        ),
        (
            &["count", "8", "-e", "mitm", "--split-depth", "0"],
            "--split-depth",
        ),
        (
            &["count", "8", "-e", "mitm", "--split-depth", "1000"],
            "--split-depth",
        ),
        (
            &["count", "8", "--format", "board"],
            "cannot write --format board",
        ),
        (
            &["count", "8", "--json", "--format", "markdown"],
            "cannot be used with",
        ),
        (
            &["merge", "--format", "perm", "x.json"],
            "cannot write --format perm",
        ),
        (
            &["verify", "--markdown", "-"],
            "cannot write --format markdown",
        ),
        (&["verify", "--size", "0", "-"], "0 is not in 1.."),
        (
            &["place", "8", "--seed", "5"],
            "--seed is for --method min-conflicts",
        ),
    ];
    for (args, message) in cases {
        nqueens()
            .args(args)
            .write_stdin("2 4 1 3\n")
            .assert()
            .code(2)
            .stdout("")
            .stderr(predicate::str::contains(message));
    }
}

#[test]
fn a_split_depth_with_auto_picks_a_backtracking_engine() {
    let (code, stdout, stderr) = run(&["count", "13", "--split-depth", "2", "--json"]);
    assert_eq!(code, 0, "{stderr}");
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["total"], "73712");
    assert_eq!(v["engine"], "symmetry");
    assert!(v["plan"].as_str().unwrap().contains("split depth 2"));
}

#[cfg(unix)]
#[test]
fn a_broken_link_in_a_merge_folder_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let shard = dir.path().join("shard-0.json");
    nqueens()
        .args(["count", "8", "-q", "--shard", "0/1", "--out"])
        .arg(&shard)
        .assert()
        .success();
    std::os::unix::fs::symlink(
        dir.path().join("gone.json"),
        dir.path().join("shard-1.json"),
    )
    .unwrap();
    nqueens()
        .arg("merge")
        .arg(dir.path())
        .assert()
        .code(3)
        .stderr(predicate::str::contains("shard-1.json"));
}
