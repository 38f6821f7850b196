//! Shared helpers for the integration tests.
#![allow(dead_code)]

use assert_cmd::Command;

/// The `nqueens` binary under test, with a clean environment for progress output.
pub fn nqueens() -> Command {
    let mut cmd = Command::cargo_bin("nqueens").expect("the binary is built");
    cmd.env_remove("SLURM_ARRAY_TASK_ID");
    cmd
}

/// Runs `nqueens` with `args` and returns (status code, stdout, stderr).
pub fn run(args: &[&str]) -> (i32, String, String) {
    let out = nqueens().args(args).output().expect("nqueens runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Number of N-Queens solutions by brute force: every permutation of columns, checked for
/// diagonal attacks. Independent of every engine; fine up to N = 10.
pub fn brute_force(n: usize) -> u64 {
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
pub fn is_solution(perm: &[usize]) -> bool {
    (0..perm.len()).all(|a| (a + 1..perm.len()).all(|b| perm[a].abs_diff(perm[b]) != b - a))
}
