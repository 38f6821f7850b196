//! The symmetry engine and `--unique` through the command line.

mod common;

use common::nqueens;
use predicates::str::contains;

#[test]
fn unique_prints_after_the_total() {
    nqueens()
        .args(["count", "8", "--unique"])
        .arg("--quiet")
        .assert()
        .success()
        .stdout("92\n12\n");
}

#[test]
fn unique_works_for_every_engine_choice_that_supports_it() {
    for n in ["1", "2", "3", "4", "5", "11"] {
        let expected = match n {
            "1" => "1\n1\n",
            "2" | "3" => "0\n0\n",
            "4" => "2\n1\n",
            "5" => "10\n2\n",
            _ => "2680\n341\n",
        };
        nqueens()
            .args(["count", n, "--unique", "--engine", "symmetry"])
            .arg("--quiet")
            .assert()
            .success()
            .stdout(expected);
    }
}

#[test]
fn json_carries_the_unique_count() {
    let out = nqueens()
        .args(["count", "10", "--unique", "--json", "-j", "2"])
        .arg("--quiet")
        .output()
        .unwrap();
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["total"], "724");
    assert_eq!(v["unique"], "92");
    assert_eq!(v["unique_verified"], true);
    assert_eq!(v["engine"], "symmetry");
}

#[test]
fn unique_without_it_is_null() {
    let out = nqueens()
        .args(["count", "9", "--json", "--engine", "symmetry"])
        .arg("--quiet")
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["total"], "352");
    assert!(v["unique"].is_null());
}

#[test]
fn symmetry_engine_counts_and_auto_picks_it_at_12() {
    nqueens()
        .args(["count", "12", "--engine", "symmetry", "--split-depth", "3"])
        .arg("--quiet")
        .assert()
        .success()
        .stdout("14200\n");
    let out = nqueens()
        .args(["count", "12", "--json"])
        .arg("--quiet")
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["engine"], "symmetry");
    assert_eq!(v["total"], "14200");
    assert_eq!(nqueens::engine::auto(12).name(), "symmetry");
}

#[test]
fn unique_with_the_mirror_engine_is_a_usage_error() {
    nqueens()
        .args(["count", "8", "--unique", "--engine", "mirror"])
        .arg("--quiet")
        .assert()
        .code(2)
        .stderr(contains("symmetry"));
}

#[test]
fn help_lists_the_symmetry_engine() {
    nqueens()
        .args(["count", "--help"])
        .arg("--quiet")
        .assert()
        .success()
        .stdout(contains("symmetry"));
}
