//! Shared helpers for the integration tests.
#![allow(dead_code)]

use assert_cmd::Command;

#[cfg(unix)]
pub(crate) mod slurm;

/// The `nqueens` binary under test (assert_cmd), without any scheduler's array variables
/// (a test run inside an array job behaves like one outside it) or a matcher level cap.
pub(crate) fn nqueens() -> Command {
    Command::from_std(nqueens_std())
}

/// The same binary as a plain `std` command, for tests that spawn it or set up its stdio.
pub(crate) fn nqueens_std() -> std::process::Command {
    let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("nqueens"));
    for var in nqueens::shard::scheduler::array_vars() {
        cmd.env_remove(var);
    }
    // A level cap in the developer's shell would change what the tests measure.
    cmd.env_remove(nqueens::engine::ISA_VAR);
    cmd
}

/// Runs `nqueens` with `args` and returns (status code, stdout, stderr).
pub(crate) fn run(args: &[&str]) -> (i32, String, String) {
    let out = nqueens().args(args).output().expect("nqueens runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Number of N-Queens solutions by brute force: every permutation of columns, checked for
/// diagonal attacks. Independent of every engine; fine up to N = 10.
pub(crate) fn brute_force(n: usize) -> u64 {
    let mut perm: Vec<usize> = (0..n).collect();
    let mut count = 0;
    permute(&mut perm, 0, &mut count);
    count
}

fn permute(perm: &mut Vec<usize>, k: usize, count: &mut u64) {
    if k == perm.len() {
        *count += u64::from(is_solution(perm));
        return;
    }
    for i in k..perm.len() {
        perm.swap(k, i);
        permute(perm, k + 1, count);
        perm.swap(k, i);
    }
}

/// Whether the permutation (column of the queen in each row) has no diagonal attack.
pub(crate) fn is_solution(perm: &[usize]) -> bool {
    (0..perm.len()).all(|a| (a + 1..perm.len()).all(|b| perm[a].abs_diff(perm[b]) != b - a))
}
