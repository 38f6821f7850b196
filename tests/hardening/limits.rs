//! Panics, liveness, worker counts and inputs too large or endless.

use super::*;

// Panics.

#[test]
fn bench_duration_too_long_is_a_usage_error() {
    nqueens()
        .args(["bench", "--duration", "1e300"])
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("at most").and(predicate::str::contains("panicked").not()),
        );
}

#[test]
fn completions_into_a_closed_pipe_exit_0() {
    let out = with_closed_stdout(&["completions", "bash"], None);
    assert_no_panic(&out, 0);
}

#[cfg(target_os = "linux")]
#[test]
fn completions_onto_a_full_disk_is_a_clear_error() {
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .expect("/dev/full exists on Linux");
    let out = nqueens_std()
        .args(["completions", "bash"])
        .stdout(full)
        .output()
        .unwrap();
    assert_no_panic(&out, 1);
    assert!(String::from_utf8_lossy(&out.stderr).contains("No space left"));
}

// The checkpoint saver thread missed its wake-up when the run finished first, and the
// process then waited out a whole save period. With a period of 11 days, any missed wake-up
// hangs until the (generous) timeout; this is a liveness check, not a timing assertion.

#[test]
fn a_finished_run_does_not_wait_for_the_next_checkpoint_save() {
    let dir = tempfile::tempdir().unwrap();
    for i in 0..20 {
        let cp = dir.path().join(format!("cp{i}"));
        let out = dir.path().join(format!("out{i}.json"));
        nqueens()
            .args([
                "count",
                "6",
                "-q",
                "--checkpoint-every",
                "1000000",
                "--checkpoint",
            ])
            .arg(&cp)
            .arg("--out")
            .arg(&out)
            .timeout(std::time::Duration::from_secs(120))
            .assert()
            .success()
            .stdout("4\n");
    }
}

// Never more workers than tasks, and a sane cap on the thread count.

#[test]
fn a_one_task_count_starts_one_worker() {
    let (code, stdout, stderr) = run(&["count", "1", "-j", "1024", "--json"]);
    assert_eq!(code, 0, "{stderr}");
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["total"], "1");
    assert_eq!(v["threads"], 1);
}

#[test]
fn thread_counts_above_the_cap_are_usage_errors() {
    nqueens()
        .args(["count", "12", "-j", "4096"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("from 1 to 1024"));
}

// `yes '2 4 1 3' | nqueens verify | head -1` must end: verify stops reading when its
// stdout is closed. The input is endless (like `yes`), and the reading end of stdout is closed
// before nqueens writes anything; a process that keeps reading never ends and is killed after
// a generous liveness limit.

#[test]
fn verify_stops_reading_an_endless_input_when_stdout_is_closed() {
    let mut child = nqueens_std()
        .arg("verify")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let mut stdin = child.stdin.take().unwrap();
    let feeder = std::thread::spawn(move || {
        use std::io::Write;
        let block = "2 4 1 3\n".repeat(8192);
        while stdin.write_all(block.as_bytes()).is_ok() {}
    });
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if std::time::Instant::now() > deadline {
            child.kill().unwrap();
            panic!("verify kept reading after its stdout was closed");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    feeder.join().unwrap();
    assert_eq!(status.code(), Some(0));
}

// Place: min-conflicts refuses a board it cannot hold, up front, naming the limit.

#[test]
fn min_conflicts_refuses_huge_boards_up_front() {
    nqueens()
        .args(["place", "-m", "min-conflicts", "4294967295", "--seed", "1"])
        .timeout(std::time::Duration::from_secs(60))
        .assert()
        .code(2)
        .stdout("")
        .stderr(predicate::str::contains("at most 10000000"));
}

#[test]
fn a_refused_min_conflicts_board_prints_no_seed() {
    nqueens()
        .args(["place", "-m", "min-conflicts", "4294967295"])
        .timeout(std::time::Duration::from_secs(60))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("at most 10000000"))
        .stderr(predicate::str::contains("seed").not());
}

// One output line per input line in the judge format.

#[test]
fn place_stdin_prints_one_line_per_input_line() {
    nqueens()
        .args(["place", "--stdin"])
        .write_stdin("8\n2\n10\n")
        .assert()
        .code(1)
        .stdout("2 4 6 8 3 1 7 5\nno solution\n2 4 6 8 10 1 3 5 7 9\n");
    let (_, stdout, _) = run_stdin(&["place", "--stdin", "--json"], "3\n4\n");
    let lines: Vec<serde_json::Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    assert!(lines[0]["rows"].is_null());
    assert_eq!(lines[1]["rows"], serde_json::json!([2, 4, 1, 3]));
}

// Reading /dev/zero (or any huge input) is a clear error, never unbounded memory.

#[cfg(target_os = "linux")]
#[test]
fn dev_zero_as_input_is_a_clear_error() {
    let cases: [(&[&str], &str); 3] = [
        (
            &["count", "8", "--mask", "/dev/zero"],
            "larger than 65536 bytes",
        ),
        (&["two-colour", "/dev/zero"], "larger than 65536 bytes"),
        (
            &["bench", "--compare", "/dev/zero", "/dev/zero"],
            "larger than 1048576 bytes",
        ),
    ];
    for (args, message) in cases {
        nqueens()
            .args(args)
            .timeout(std::time::Duration::from_secs(60))
            .assert()
            .code(2)
            .stderr(predicate::str::contains(message));
    }
    for args in [
        &["count", "--stdin"][..],
        &["place", "--stdin"],
        &["verify"],
    ] {
        let out = nqueens_std()
            .args(args)
            .stdin(std::fs::File::open("/dev/zero").unwrap())
            .output()
            .unwrap();
        assert_no_panic(&out, 2);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.len() < 500, "the message quotes too much: {stderr}");
    }
}

#[test]
fn huge_board_files_are_refused_with_their_size() {
    let board = format!("4\n{}", "1 1 1 1\n".repeat(20_000));
    nqueens()
        .args(["two-colour", "-"])
        .write_stdin(board)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("too large for a two-colour board"));
}
