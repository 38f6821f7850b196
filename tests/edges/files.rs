//! Save periods, and one file named for two roles.

use super::*;

#[test]
fn the_shortest_save_period_finishes_and_shorter_ones_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let cp = dir.path().join("cp.json");
    // A liveness check: the run used to spin at 100% CPU for ever (the timeout is generous).
    nqueens()
        .args([
            "count",
            "12",
            "-q",
            "--checkpoint-every",
            "0.001",
            "--checkpoint",
            s(&cp),
        ])
        .timeout(std::time::Duration::from_secs(120))
        .assert()
        .success()
        .stdout("14200\n");
    for tiny in ["1e-9", "0.0009"] {
        nqueens()
            .args([
                "count",
                "12",
                "-q",
                "--checkpoint-every",
                tiny,
                "--checkpoint",
                s(&cp),
            ])
            .assert()
            .code(2)
            .stdout("")
            .stderr(predicate::str::contains("shortest period"));
    }
}

// One file for --checkpoint and --out; the lock belongs to the file.

#[test]
fn one_file_for_checkpoint_and_out_is_a_usage_error_in_any_spelling() {
    let dir = tempfile::tempdir().unwrap();
    let x = dir.path().join("x.json");
    let dotted = dir.path().join(".").join("x.json");
    let link = dir.path().join("link.json");
    for (cp, out) in [(&x, &x), (&x, &dotted)] {
        nqueens()
            .args([
                "count",
                "10",
                "--shard",
                "0/2",
                "--checkpoint",
                s(cp),
                "--out",
                s(out),
            ])
            .assert()
            .code(2)
            .stdout("")
            .stderr(predicate::str::contains("same file"));
        assert!(names_in(dir.path()).is_empty(), "nothing is written");
    }
    std::fs::write(&x, b"").unwrap();
    std::os::unix::fs::symlink(&x, &link).unwrap();
    nqueens()
        .args(["count", "10", "--checkpoint", s(&x), "--out", s(&link)])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("same file"));
    assert_eq!(std::fs::read(&x).unwrap(), b"", "the file is untouched");
}

#[test]
fn two_bench_exports_to_one_file_are_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let (json, md) = (dir.path().join("r"), dir.path().join(".").join("r"));
    nqueens()
        .args([
            "bench",
            "-q",
            "--export-json",
            s(&json),
            "--export-markdown",
            s(&md),
        ])
        .assert()
        .code(2)
        .stdout("")
        .stderr(predicate::str::contains("same file"));
    assert!(names_in(dir.path()).is_empty(), "nothing is written");
}

#[test]
fn the_checkpoint_lock_holds_for_every_spelling_of_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let cp = dir.path().join("cp.json");
    nqueens()
        .args(["count", "8", "-q", "--checkpoint", s(&cp)])
        .assert()
        .success();
    let link = dir.path().join("link.json");
    std::os::unix::fs::symlink(&cp, &link).unwrap();
    // This process holds the lock, as a running count would.
    let _held = nqueens::shard::checkpoint::lock(&cp).unwrap();
    for spelling in [dir.path().join(".").join("cp.json"), link] {
        nqueens()
            .args(["count", "8", "-q", "--checkpoint", s(&spelling)])
            .assert()
            .code(1)
            .stderr(predicate::str::contains(
                "in use by another nqueens process",
            ));
    }
}

#[test]
fn a_second_run_through_a_hard_link_to_a_running_checkpoint_is_refused() {
    use std::process::Stdio;
    let dir = tempfile::tempdir().unwrap();
    let (cp, link) = (dir.path().join("a.ckpt"), dir.path().join("b.ckpt"));
    let args = |file: &Path| {
        let file = file.to_str().unwrap().to_string();
        [
            "count",
            "17",
            "--engine",
            "mirror",
            "-j1",
            "-q",
            "--checkpoint",
            &file,
        ]
        .map(String::from)
        .to_vec()
    };
    // The first run starts afresh: the file it locks by identity is the one it saves.
    let mut first = crate::common::nqueens_std()
        .args(args(&cp))
        .args(["--checkpoint-every", "1000"])
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    assert!(wait_for_file(&cp), "no first save");
    // The run locks the file it saved just after saving it: wait for that, then stop it, so
    // it holds its locks until killed, however long the second run takes to start.
    let locked = || {
        let file = std::fs::File::open(&cp).unwrap();
        matches!(
            file.try_lock_shared(),
            Err(std::fs::TryLockError::WouldBlock)
        )
    };
    let waited = std::time::Instant::now();
    while !locked() {
        assert!(
            waited.elapsed().as_secs() < 120,
            "the saved file was never locked"
        );
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    signal(&first, libc::SIGSTOP);
    std::fs::hard_link(&cp, &link).unwrap();
    let second = nqueens().args(args(&link)).output().unwrap();
    first.kill().unwrap();
    first.wait().unwrap();
    assert_eq!(second.status.code(), Some(1), "{second:?}");
    let err = String::from_utf8_lossy(&second.stderr);
    assert!(err.contains("in use by another nqueens process"), "{err}");
}
