//! A full disk at the end of a run.

use super::*;

#[test]
fn the_up_front_probe_writes_as_much_as_the_result_needs() {
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
fn a_result_file_that_cannot_be_written_still_reaches_the_user() {
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
fn a_failed_checkpoint_save_keeps_the_last_good_one_and_stops_cleanly() {
    let top = tempfile::tempdir().unwrap();
    let (dir, moved) = (top.path().join("run"), top.path().join("moved"));
    std::fs::create_dir(&dir).unwrap();
    let cp = dir.join("ck.json");
    // A save after every task: the first task after the pause saves, and fails, however
    // fast the machine.
    let args = [
        "count",
        "16",
        "-e",
        "mirror",
        "-j",
        "1",
        "-q",
        "--checkpoint-every",
        "0.001",
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

#[test]
fn a_count_printed_onto_a_full_disk_is_in_the_error() {
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

/// The variable that turns the real full-disk test's skip into a failure (CI sets it: it
/// runs as root, where the mount must work).
const REQUIRE_TMPFS: &str = "NQUEENS_REQUIRE_TMPFS";

#[test]
#[ignore = "mounts a 64 KiB tmpfs (needs root; skips, saying so, where mounting is not allowed)"]
fn on_a_real_full_disk_nothing_is_lost() {
    let Some(disk) = TinyDisk::mount() else {
        assert!(
            std::env::var_os(REQUIRE_TMPFS).is_none(),
            "cannot mount a tmpfs here, and {REQUIRE_TMPFS} is set"
        );
        // Past the test harness's capture, so that a passing run still shows what it skipped.
        let note = "on_a_real_full_disk_nothing_is_lost: SKIPPED, cannot mount a tmpfs here \
                    (needs root): the real full disk was not tested\n";
        std::io::Write::write_all(&mut std::io::stderr(), note.as_bytes()).unwrap();
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

    // Full at the end: the total and the record still reach the user. No periodic save
    // comes first, however long the count takes: the end's saves are the ones that fail.
    let child = spawn_piped(common::nqueens_std().args([
        "count",
        "16",
        "-j",
        "1",
        "-q",
        "--checkpoint-every",
        "3600",
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

    // Full in the middle: the last good checkpoint stays, and the run resumes from it. It
    // saves after every task, so the next task's save is the one that fails, however fast
    // the machine.
    let args = [
        "count",
        "16",
        "-e",
        "mirror",
        "-j",
        "1",
        "-q",
        "--checkpoint-every",
        "0.001",
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
