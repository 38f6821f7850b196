//! Every bad input gets a clear error, nothing is clobbered, faults are caught.
//! One module per kind of hardening; the helpers they share are here.

mod api;
#[path = "../common/mod.rs"]
mod common;
mod files;
mod limits;
mod parsers;
mod recheck;
mod wording;

use std::process::{Command, Output, Stdio};

use common::{nqueens, nqueens_std, run};
use predicates::prelude::*;

/// Runs `nqueens args` with its stdout a pipe whose reading end is already closed.
pub(crate) fn with_closed_stdout(args: &[&str], stdin: Option<&[u8]>) -> Output {
    let mut child = nqueens_std()
        .args(args)
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("nqueens starts");
    drop(child.stdout.take());
    if let (Some(bytes), Some(mut pipe)) = (stdin, child.stdin.take()) {
        use std::io::Write;
        let _ = pipe.write_all(bytes);
    }
    child.wait_with_output().expect("nqueens finishes")
}

/// Asserts an exit status and that nothing panicked.
pub(crate) fn assert_no_panic(out: &Output, code: i32) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(out.status.code(), Some(code), "{stderr}");
}

/// Runs `nqueens args` with `stdin` and returns (status code, stdout, stderr).
pub(crate) fn run_stdin(args: &[&str], stdin: &str) -> (i32, String, String) {
    let out = nqueens().args(args).write_stdin(stdin).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The names in `dir`, sorted.
pub(crate) fn names_in(dir: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}
