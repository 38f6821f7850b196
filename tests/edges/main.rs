//! Nothing is lost at the edges of a long run (signals during saves, reused PIDs,
//! full disks, faults saved in checkpoints, one file for two roles, tiny save periods,
//! refused merges, small boards), one module each; the helpers they share are here. The
//! slow, many-try versions are `#[ignore]`d.

#[path = "../common/mod.rs"]
mod common;
mod files;
mod full_disk;
mod signals;
mod small;
mod wrong_count;

use std::path::{Path, PathBuf};

use common::{nqueens, run};
use predicates::prelude::*;

pub(crate) fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// The names in a folder, sorted.
pub(crate) fn names_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// The temporary files in a folder (what an interrupted save would leave).
pub(crate) fn temporary_files(dir: &Path) -> Vec<String> {
    names_in(dir)
        .into_iter()
        .filter(|n| n.ends_with(".tmp"))
        .collect()
}

/// Sends `signal` to a child process.
pub(crate) fn signal(child: &std::process::Child, signal: libc::c_int) {
    let pid = libc::pid_t::try_from(child.id()).unwrap();
    // SAFETY: kill(2) with a live child's PID and a valid signal number has no memory effect.
    assert_eq!(unsafe { libc::kill(pid, signal) }, 0);
}

/// Waits until `path` exists (the run's first save is done); false after two minutes.
/// Starts `cmd` with stdout and stderr piped.
pub(crate) fn spawn_piped(cmd: &mut std::process::Command) -> std::process::Child {
    cmd.stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

/// Runs `change` (a disk filling up, a folder going away) while `child` is stopped, then lets
/// it go on and waits for it.
pub(crate) fn paused_while(
    child: std::process::Child,
    change: impl FnOnce(),
) -> std::process::Output {
    signal(&child, libc::SIGSTOP);
    change();
    signal(&child, libc::SIGCONT);
    child.wait_with_output().unwrap()
}

pub(crate) fn wait_for_file(path: &Path) -> bool {
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
pub(crate) fn inode(path: &Path) -> Option<u64> {
    use std::os::unix::fs::MetadataExt as _;
    std::fs::metadata(path).ok().map(|m| m.ino())
}

/// Waits until `path` is a file other than `before` (a save replaced it); false after two
/// minutes.
pub(crate) fn wait_for_new_inode(path: &Path, before: Option<u64>) -> bool {
    let start = std::time::Instant::now();
    while inode(path).is_none() || inode(path) == before {
        if start.elapsed() > std::time::Duration::from_secs(120) {
            return false;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    true
}

/// Runs `nqueens args` with a file-size limit of `bytes` (writing past it fails with EFBIG,
/// as a full disk fails with ENOSPC); needs no privilege.
pub(crate) fn with_file_size_limit(bytes: u64, args: &[&str]) -> std::process::Output {
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
