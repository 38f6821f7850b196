//! Signals during saves, and temporary files left by a process with the same PID.

use super::*;

#[test]
fn a_stale_temporary_file_with_this_pid_does_not_block_a_run() {
    let dir = tempfile::tempdir().unwrap();
    // `exec` keeps the shell's PID, so the planted names are exactly the old scheme's.
    let script = format!(
        "touch .ck.json.$$.tmp .o.json.$$.tmp; exec '{}' count 12 -q --checkpoint ck.json \
         --out o.json",
        assert_cmd::cargo::cargo_bin("nqueens").display()
    );
    let out = std::process::Command::new("bash")
        .args(["-c", &script])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), "14200\n");
}

#[test]
fn a_checkpoint_and_result_with_the_longest_legal_names_work() {
    let dir = tempfile::tempdir().unwrap();
    let cp = dir.path().join("c".repeat(250) + ".json");
    let out = dir.path().join("o".repeat(250) + ".json");
    for _ in 0..2 {
        nqueens()
            .args([
                "count",
                "10",
                "-q",
                "--checkpoint",
                s(&cp),
                "--out",
                s(&out),
            ])
            .assert()
            .success()
            .stdout("724\n");
    }
    assert_eq!(temporary_files(dir.path()), Vec::<String>::new());
}

#[test]
fn sigterm_during_saves_leaves_no_temporary_file_and_resumes_exactly() {
    term_during_saves(15, "2279184", 4);
}

#[test]
#[ignore = "50 runs of N = 16, each stopped at a random moment: about a minute"]
fn fifty_sigterms_during_saves_leave_no_temporary_file() {
    term_during_saves(16, "14772512", 50);
}

/// `tries` runs of `count N` saving every millisecond, each sent SIGTERM at a random moment
/// after its first save; then the same command to the end. No try may leave a temporary
/// file or a bad checkpoint, and the final count must be exact.
fn term_during_saves(n: u32, expected: &str, tries: usize) {
    let dir = tempfile::tempdir().unwrap();
    let (cp, out) = (dir.path().join("ck.json"), dir.path().join("o.json"));
    let args = |cmd: &mut std::process::Command| {
        cmd.args(["count", &n.to_string(), "-e", "mirror", "-q"])
            .args([
                "--checkpoint-every",
                "0.001",
                "--checkpoint",
                s(&cp),
                "--out",
                s(&out),
            ]);
    };
    let mut interrupted = 0;
    for attempt in 0..tries {
        let mut cmd = common::nqueens_std();
        args(&mut cmd);
        let before = inode(&cp);
        let child = cmd
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // Its first save is done (a new file): the signal handler is in place.
        assert!(wait_for_new_inode(&cp, before));
        // The first try is signalled at once, as its count starts, so that one try at least
        // is interrupted however fast the machine; the others at a random moment.
        if attempt > 0 {
            std::thread::sleep(std::time::Duration::from_micros(fastrand::u64(0..250_000)));
        }
        signal(&child, libc::SIGTERM);
        let status = child.wait_with_output().unwrap();
        let code = status.status.code();
        assert!(
            code == Some(130) || code == Some(0),
            "{code:?}: {}",
            String::from_utf8_lossy(&status.stderr)
        );
        assert_eq!(temporary_files(dir.path()), Vec::<String>::new());
        nqueens::shard::Checkpoint::load(&cp).unwrap().unwrap();
        if code == Some(130) {
            interrupted += 1;
        } else {
            // The count ended before the signal: check it, and start the next try afresh.
            let result = nqueens::shard::PartialResult::load(&out).unwrap();
            assert_eq!(result.total.to_string(), expected);
            std::fs::remove_file(&cp).unwrap();
            std::fs::remove_file(&out).unwrap();
        }
    }
    assert!(interrupted > 0, "not even the first try was interrupted");
    let mut cmd = common::nqueens_std();
    args(&mut cmd);
    let done = cmd.output().unwrap();
    assert_eq!(done.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&done.stdout),
        format!("{expected}\n")
    );
    assert_eq!(temporary_files(dir.path()), Vec::<String>::new());
    let result = nqueens::shard::PartialResult::load(&out).unwrap();
    assert_eq!(result.total.to_string(), expected);
}
