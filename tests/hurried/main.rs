//! What a hurried or hostile user trips on: output that waits, a slow judge loop, files
//! replaced without a word, threads past memory, empty checkpoints, boards past the fast
//! engine, the batch system's warning signal, output shapes and small wording. One module per
//! kind; the helpers they share are here.

#[path = "../common/mod.rs"]
mod common;
mod files;
mod lines;
mod runs;
mod streams;

use std::path::Path;
use std::process::{Child, Command, Output, Stdio};

use common::{nqueens, nqueens_std, run};

pub(crate) fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Starts `cmd` with stdin, stdout and stderr piped.
pub(crate) fn spawn(cmd: &mut Command) -> Child {
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Sends `signal` to a child process.
pub(crate) fn signal(child: &Child, signal: libc::c_int) {
    let pid = libc::pid_t::try_from(child.id()).unwrap();
    // SAFETY: kill(2) with a live child's PID and a valid signal number has no memory effect.
    assert_eq!(unsafe { libc::kill(pid, signal) }, 0);
}

/// Waits until `path` is a non-empty file (the run's first save is done); false after two
/// minutes.
pub(crate) fn wait_for_save(path: &Path) -> bool {
    let start = std::time::Instant::now();
    while std::fs::metadata(path).map_or(true, |m| m.len() == 0) {
        if start.elapsed() > std::time::Duration::from_secs(120) {
            return false;
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    true
}

/// `nqueens args` with `stdin` as its input; (status, stdout, stderr).
pub(crate) fn run_with_input(args: &[&str], stdin: &str) -> (i32, String, String) {
    let out = nqueens().args(args).write_stdin(stdin).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `nqueens args` with an address-space limit (`ulimit -v`) of `bytes`.
pub(crate) fn with_address_space(bytes: u64, args: &[&str]) -> Output {
    use std::os::unix::process::CommandExt as _;
    let mut cmd = nqueens_std();
    cmd.args(args);
    // SAFETY: between fork and exec only setrlimit(2), which is async-signal-safe, runs.
    unsafe {
        cmd.pre_exec(move || {
            let limit = libc::rlimit {
                rlim_cur: bytes,
                rlim_max: bytes,
            };
            if libc::setrlimit(libc::RLIMIT_AS, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    cmd.output().unwrap()
}
