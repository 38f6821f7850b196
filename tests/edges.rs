//! Nothing is lost at the edges of a long run (signals during saves, reused PIDs,
//! full disks, faults saved in checkpoints, one file for two roles, tiny save periods,
//! refused merges, small boards). One regression test (or more) per numbered item; the
//! slow, many-try versions are `#[ignore]`d.

mod common;

use std::path::{Path, PathBuf};

use common::{nqueens, run};
use predicates::prelude::*;

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// The names in a folder, sorted.
fn names_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

// A refused merge prints nothing on stdout.

#[test]
fn issue_24_a_refused_merge_prints_no_total_on_stdout() {
    let dir = tempfile::tempdir().unwrap();
    let files: Vec<PathBuf> = (0..3)
        .map(|i| {
            let out = dir.path().join(format!("s{i}.json"));
            let shard = format!("{i}/3");
            // Shard 1/3 starts with task 1: a fault there gives a sealed, wrong file.
            let fault = if i == 1 { "1" } else { "999999" };
            nqueens()
                .args(["count", "11", "-q", "--shard", &shard, "--out", s(&out)])
                .args(["--test-inject-fault", fault])
                .assert()
                .success();
            out
        })
        .collect();
    nqueens()
        .arg("merge")
        .args(&files)
        .assert()
        .code(3)
        .stdout("")
        .stderr(predicate::str::contains("merge refused").and(predicate::str::contains("2681")));
    let out = nqueens()
        .args(["merge", "--json"])
        .args(&files)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    let report: nqueens::shard::MergeReport = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report.total, None, "a refused merge carries no total");
    assert_eq!(report.problems.len(), 1, "{:?}", report.problems);
}

// Every engine option works at every N from 1.

#[test]
fn issue_24_every_engine_counts_unique_solutions_on_the_smallest_boards() {
    // (N, solutions, fundamental solutions): OEIS A000170 and A002562.
    for (n, total, unique) in [(1, "1", "1"), (2, "0", "0"), (3, "0", "0"), (4, "2", "1")] {
        for engine in ["auto", "symmetry", "mitm"] {
            let (code, stdout, stderr) =
                run(&["count", &n.to_string(), "-e", engine, "--unique", "--json"]);
            assert_eq!(code, 0, "N = {n}, {engine}: {stderr}");
            let json: serde_json::Value = serde_json::from_str(&stdout).unwrap();
            assert_eq!(json["total"], total, "N = {n}, {engine}");
            assert_eq!(json["unique"], unique, "N = {n}, {engine}");
        }
    }
}

#[test]
fn issue_24_a_split_depth_for_mitm_is_refused_at_every_n() {
    for n in ["1", "2", "3", "4", "8"] {
        nqueens()
            .args(["count", n, "-e", "mitm", "--split-depth", "1"])
            .assert()
            .code(2)
            .stderr(predicate::str::contains("does not support --split-depth"));
    }
}

// A tiny save period once starved the end of the run.

#[test]
fn issue_24_the_shortest_save_period_finishes_and_shorter_ones_are_refused() {
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
fn issue_24_one_file_for_checkpoint_and_out_is_a_usage_error_in_any_spelling() {
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
fn issue_24_two_bench_exports_to_one_file_are_a_usage_error() {
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
fn issue_24_the_checkpoint_lock_holds_for_every_spelling_of_the_file() {
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

// Signals during saves, and temporary files left by a process with the same PID.

#[test]
fn issue_24_a_stale_temporary_file_with_this_pid_does_not_block_a_run() {
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
fn issue_24_a_checkpoint_and_result_with_the_longest_legal_names_work() {
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

/// The temporary files in a folder (what an interrupted save would leave).
fn temporary_files(dir: &Path) -> Vec<String> {
    names_in(dir)
        .into_iter()
        .filter(|n| n.ends_with(".tmp"))
        .collect()
}

/// Sends `signal` to a child process.
fn signal(child: &std::process::Child, signal: libc::c_int) {
    let pid = libc::pid_t::try_from(child.id()).unwrap();
    // SAFETY: kill(2) with a live child's PID and a valid signal number has no memory effect.
    assert_eq!(unsafe { libc::kill(pid, signal) }, 0);
}

/// Waits until `path` exists (the run's first save is done); false after two minutes.
/// Starts `cmd` with stdout and stderr piped.
fn spawn_piped(cmd: &mut std::process::Command) -> std::process::Child {
    cmd.stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

/// Runs `change` (a disk filling up, a folder going away) while `child` is stopped, then lets
/// it go on and waits for it.
fn paused_while(child: std::process::Child, change: impl FnOnce()) -> std::process::Output {
    signal(&child, libc::SIGSTOP);
    change();
    signal(&child, libc::SIGCONT);
    child.wait_with_output().unwrap()
}

fn wait_for_file(path: &Path) -> bool {
    let start = std::time::Instant::now();
    while !path.exists() {
        if start.elapsed() > std::time::Duration::from_secs(120) {
            return false;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    true
}

/// The inode of `path`, if it exists.
fn inode(path: &Path) -> Option<u64> {
    use std::os::unix::fs::MetadataExt as _;
    std::fs::metadata(path).ok().map(|m| m.ino())
}

/// Waits until `path` is a file other than `before` (a save replaced it); false after two
/// minutes.
fn wait_for_new_inode(path: &Path, before: Option<u64>) -> bool {
    let start = std::time::Instant::now();
    while inode(path).is_none() || inode(path) == before {
        if start.elapsed() > std::time::Duration::from_secs(120) {
            return false;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    true
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
    for _ in 0..tries {
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
        std::thread::sleep(std::time::Duration::from_micros(fastrand::u64(0..250_000)));
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
    assert!(interrupted > 0, "no try was interrupted: use a larger N");
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

#[test]
fn issue_24_sigterm_during_saves_leaves_no_temporary_file_and_resumes_exactly() {
    term_during_saves(15, "2279184", 4);
}

#[test]
#[ignore = "50 runs of N = 16, each stopped at a random moment: about a minute"]
fn issue_24_fifty_sigterms_during_saves_leave_no_temporary_file() {
    term_during_saves(16, "14772512", 50);
}

// A full disk at the end of a run.

/// Runs `nqueens args` with a file-size limit of `bytes` (writing past it fails with EFBIG,
/// as a full disk fails with ENOSPC); needs no privilege.
fn with_file_size_limit(bytes: u64, args: &[&str]) -> std::process::Output {
    use std::os::unix::process::CommandExt as _;
    let mut cmd = common::nqueens_std();
    cmd.args(args);
    // SAFETY: between fork and exec only async-signal-safe calls are made (setrlimit, signal).
    unsafe {
        cmd.pre_exec(move || {
            let limit = libc::rlimit {
                rlim_cur: bytes,
                rlim_max: bytes,
            };
            if libc::setrlimit(libc::RLIMIT_FSIZE, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // Else the write past the limit kills the process instead of failing.
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            Ok(())
        });
    }
    cmd.output().unwrap()
}

#[test]
fn issue_24_the_up_front_probe_writes_as_much_as_the_result_needs() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("o.json");
    // An empty probe fits in 100 bytes; a result file does not, so this must fail before
    // counting, not after.
    let run = with_file_size_limit(100, &["count", "16", "-q", "--out", s(&out)]);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("cannot write") && stderr.contains("too large"),
        "{stderr}"
    );
    assert!(run.stdout.is_empty(), "nothing was counted");
    assert!(names_in(dir.path()).is_empty(), "no probe is left");
}

#[test]
fn issue_24_a_result_file_that_cannot_be_written_still_reaches_the_user() {
    let dir = tempfile::tempdir().unwrap();
    let (cp, outdir) = (dir.path().join("ck.json"), dir.path().join("results"));
    std::fs::create_dir(&outdir).unwrap();
    let out = outdir.join("o.json");
    let child = spawn_piped(common::nqueens_std().args([
        "count",
        "16",
        "-j",
        "1",
        "-q",
        "--checkpoint",
        s(&cp),
        "--out",
        s(&out),
    ]));
    // After the probes (the first save follows them), the results folder goes away, as
    // space does on a disk that fills up: the result file can no longer be written.
    assert!(wait_for_file(&cp));
    let run = paused_while(child, || std::fs::remove_dir(&outdir).unwrap());
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(1), "{stderr}");
    assert!(
        run.stdout.is_empty(),
        "stdout carries only accepted results"
    );
    assert!(
        stderr.contains("cannot write") && stderr.contains("14772512 solutions"),
        "{stderr}"
    );
    // The record printed on stderr is a valid result file: saved by hand, it merges.
    let record = stderr
        .lines()
        .find(|l| l.starts_with('{'))
        .expect("the record");
    let saved = dir.path().join("saved.json");
    std::fs::write(&saved, format!("{record}\n")).unwrap();
    nqueens()
        .args(["merge", s(&saved)])
        .assert()
        .success()
        .stdout("14772512\n");
}

#[test]
fn issue_24_a_failed_checkpoint_save_keeps_the_last_good_one_and_stops_cleanly() {
    let top = tempfile::tempdir().unwrap();
    let (dir, moved) = (top.path().join("run"), top.path().join("moved"));
    std::fs::create_dir(&dir).unwrap();
    let cp = dir.join("ck.json");
    let args = [
        "count",
        "16",
        "-e",
        "mirror",
        "-j",
        "1",
        "-q",
        "--checkpoint-every",
        "0.3",
    ];
    let child = spawn_piped(
        common::nqueens_std()
            .args(args)
            .args(["--checkpoint", s(&cp)]),
    );
    assert!(wait_for_file(&cp));
    // Stop it just after a periodic save replaced the file (a new inode), so no save is in
    // flight: moving the folder under a save would strand its temporary file, which a full
    // disk never does.
    assert!(wait_for_new_inode(&cp, inode(&cp)));
    // Saves from now on fail: the folder they go to is gone.
    let run = paused_while(child, || std::fs::rename(&dir, &moved).unwrap());
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("the last good checkpoint"), "{stderr}");
    assert!(run.stdout.is_empty(), "an unfinished count prints no total");
    assert_eq!(temporary_files(&moved), Vec::<String>::new());
    std::fs::rename(&moved, &dir).unwrap();
    nqueens::shard::Checkpoint::load(&cp).unwrap().unwrap();
    nqueens()
        .args(args)
        .args(["--checkpoint", s(&cp)])
        .assert()
        .success()
        .stdout("14772512\n");
}

// A wrong count saved in a checkpoint.

#[test]
fn issue_24_a_wrong_count_in_a_checkpoint_is_explained_found_and_counted_again() {
    let dir = tempfile::tempdir().unwrap();
    let cp = dir.path().join("f.json");
    let count = |extra: &[&str]| {
        nqueens()
            .args(["count", "12", "--checkpoint", s(&cp)])
            .args(extra)
            .assert()
    };
    // Task 0's count is off by one on the fast path, and the run saves it.
    count(&["-q", "--test-inject-fault", "0"])
        .code(3)
        .stdout("14201\n");
    // A resume takes it from the checkpoint, and says so.
    count(&["-q"]).code(3).stdout("14201\n").stderr(
        predicate::str::contains("taken from the checkpoint")
            .and(predicate::str::contains(s(&cp)))
            .and(predicate::str::contains("--recheck")),
    );
    // --recheck 1 re-solves every saved block, names the wrong one and replaces it.
    count(&["--recheck", "1"])
        .success()
        .stdout("14200\n")
        .stderr(
            predicate::str::contains("WRONG COUNT IN THE CHECKPOINT: block 0 (tasks 0")
                .and(predicate::str::contains("saved with")),
        );
    let saved = nqueens::shard::Checkpoint::load(&cp).unwrap().unwrap();
    assert_eq!(saved.total, 14200, "the replaced counts are saved");
    count(&["-q"]).success().stdout("14200\n");
}

#[test]
fn issue_24_a_count_printed_onto_a_full_disk_is_in_the_error() {
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .expect("/dev/full exists on Linux");
    let out = common::nqueens_std()
        .args(["count", "10", "-q"])
        .stdout(full)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("N = 10: 724 solutions") && stderr.contains("No space left"),
        "{stderr}"
    );
}

/// A 64 KiB tmpfs mounted on a new folder, unmounted when dropped; `None` where mounting is
/// not allowed (not root, no tmpfs, a container without the capability).
struct TinyDisk {
    path: PathBuf,
    _dir: tempfile::TempDir,
}

impl TinyDisk {
    fn mount() -> Option<TinyDisk> {
        let dir = tempfile::tempdir().ok()?;
        let path = dir.path().join("tiny");
        std::fs::create_dir(&path).ok()?;
        let mounted = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=64k", "tmpfs", s(&path)])
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|status| status.success());
        mounted.then_some(TinyDisk { path, _dir: dir })
    }

    /// Fills the disk with the file `filler`.
    fn fill(&self) {
        use std::io::Write as _;
        let mut file = std::fs::File::create(self.path.join("filler")).unwrap();
        while file.write_all(&[0u8; 4096]).is_ok() {}
        let _ = file.sync_all();
    }

    /// Removes the filler.
    fn empty(&self) {
        std::fs::remove_file(self.path.join("filler")).unwrap();
    }
}

impl Drop for TinyDisk {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg(&self.path)
            .status();
    }
}

#[test]
#[ignore = "mounts a 64 KiB tmpfs (needs root; skips where mounting is not allowed)"]
fn issue_24_on_a_real_full_disk_nothing_is_lost() {
    let Some(disk) = TinyDisk::mount() else {
        eprintln!("skipped: cannot mount a tmpfs here");
        return;
    };
    let (cp, out) = (disk.path.join("ck.json"), disk.path.join("o.json"));
    // Full from the start: the probe fails before any counting.
    disk.fill();
    let run = nqueens()
        .args(["count", "16", "-q", "--out", s(&out)])
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(1));
    assert!(run.stdout.is_empty(), "nothing was counted");
    assert!(String::from_utf8_lossy(&run.stderr).contains("No space left"));
    assert_eq!(names_in(&disk.path), ["filler"]);
    disk.empty();

    // Full at the end: the total and the record still reach the user.
    let child = spawn_piped(common::nqueens_std().args([
        "count",
        "16",
        "-j",
        "1",
        "-q",
        "--checkpoint",
        s(&cp),
        "--out",
        s(&out),
    ]));
    assert!(wait_for_file(&cp));
    let run = paused_while(child, || disk.fill());
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(1), "{stderr}");
    assert!(
        run.stdout.is_empty(),
        "stdout carries only accepted results"
    );
    assert!(stderr.contains("No space left") && stderr.contains("\"total\":\"14772512\""));
    assert_eq!(temporary_files(&disk.path), Vec::<String>::new());
    nqueens::shard::Checkpoint::load(&cp).unwrap().unwrap();
    disk.empty();
    std::fs::remove_file(&cp).unwrap();

    // Full in the middle: the last good checkpoint stays, and the run resumes from it.
    let args = [
        "count",
        "16",
        "-e",
        "mirror",
        "-j",
        "1",
        "-q",
        "--checkpoint-every",
        "0.3",
    ];
    let child = spawn_piped(
        common::nqueens_std()
            .args(args)
            .args(["--checkpoint", s(&cp)]),
    );
    assert!(wait_for_file(&cp));
    let run = paused_while(child, || disk.fill());
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("the last good checkpoint"), "{stderr}");
    assert_eq!(temporary_files(&disk.path), Vec::<String>::new());
    nqueens::shard::Checkpoint::load(&cp).unwrap().unwrap();
    disk.empty();
    nqueens()
        .args(args)
        .args(["--checkpoint", s(&cp)])
        .assert()
        .success()
        .stdout("14772512\n");
}
