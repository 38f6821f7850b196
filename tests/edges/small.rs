//! Small boards and refused merges.

use super::*;

#[test]
fn a_refused_merge_prints_no_total_on_stdout() {
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
fn every_engine_counts_unique_solutions_on_the_smallest_boards() {
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
fn a_split_depth_for_mitm_is_refused_at_every_n() {
    for n in ["1", "2", "3", "4", "8"] {
        nqueens()
            .args(["count", n, "-e", "mitm", "--split-depth", "1"])
            .assert()
            .code(2)
            .stderr(predicate::str::contains("does not support --split-depth"));
    }
}
