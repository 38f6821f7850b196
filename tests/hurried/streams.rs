//! Output that comes while the work goes on, judge loops, and the shapes of line-by-line
//! output.

use std::io::Read;

use super::*;

#[test]
fn issue_51_solutions_come_out_as_they_are_found_and_a_closed_pipe_ends_the_run() {
    let mut child = spawn(nqueens_std().args(["solutions", "32", "--format", "perm"]));
    let mut stdout = child.stdout.take().unwrap();
    // The first solution of N = 32 takes about a second, the next ones come a few a second:
    // the first read must not wait for a 64 KiB block to fill (half a minute).
    let mut first = vec![0u8; 1 << 20];
    let got = stdout.read(&mut first).unwrap();
    assert!(got > 0 && got < 16 << 10, "first write of {got} bytes");
    let line = String::from_utf8_lossy(&first[..got]);
    let cols: Vec<usize> = line
        .lines()
        .next()
        .unwrap()
        .split(' ')
        .map(|c| c.parse().unwrap())
        .collect();
    assert_eq!(cols.len(), 32);
    assert!(common::is_solution(
        &cols.iter().map(|c| c - 1).collect::<Vec<_>>()
    ));
    drop(stdout);
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
