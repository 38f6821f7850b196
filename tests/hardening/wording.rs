//! Wording of messages, and `bench`'s checks of its own inputs.

use super::*;

// Wording.

#[test]
fn unique_on_a_small_board_names_the_engine_asked_for() {
    // Small mitm boards are counted by the symmetry engine, which has unique counts (issue
    // 24); a refusal still names the engine asked for.
    nqueens()
        .args(["count", "-e", "mitm", "--unique", "2"])
        .assert()
        .success();
    nqueens()
        .args(["count", "-e", "mirror", "--unique", "2"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "the mirror engine does not support unique",
        ));
}

#[test]
fn an_over_long_n_is_out_of_range() {
    nqueens()
        .args(["count", "123456789012345678901234567890"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("out of range 1..32"));
    nqueens()
        .args(["place", "123456789012345678901234567890"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("out of range 1..4294967295"));
}

#[test]
fn counts_of_one_are_singular() {
    nqueens()
        .args(["count", "1", "-j", "1"])
        .assert()
        .success()
        .stderr(predicate::str::contains("1 solution;").and(predicate::str::contains("1 task)")));
    nqueens()
        .args(["solutions", "1"])
        .assert()
        .success()
        .stderr(predicate::str::contains("1 solution printed"));
    nqueens()
        .args(["verify", "-"])
        .write_stdin("1 2\n")
        .assert()
        .code(1)
        .stdout(predicate::str::contains(", 1 conflict\n"));
}

#[test]
fn zero_in_any_spelling_ends_judge_input() {
    for end in ["0", "00", "+0"] {
        nqueens()
            .args(["count", "--stdin", "-q"])
            .write_stdin(format!("8\n{end}\n9\n"))
            .assert()
            .success()
            .stdout("92\n");
    }
}

#[test]
fn verify_quotes_non_ascii_characters_whole() {
    nqueens()
        .args(["verify", "-"])
        .write_stdin("1 é\n")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("unexpected character 'é'"));
}

// Bench.

/// A bench report as JSON, with one row per (threads, solutions/s).
fn bench_report(schema: &str, rows: &[(usize, f64)]) -> String {
    let results: Vec<serde_json::Value> = rows
        .iter()
        .map(|&(threads, speed)| {
            serde_json::json!({
                "threads": threads, "wall_s": 1.0, "solutions": "1", "subproblems": 1,
                "solutions_per_s": speed, "subproblems_per_s": 1.0, "speedup": 1.0,
                "efficiency": 1.0
            })
        })
        .collect();
    serde_json::json!({
        "schema": schema,
        "workload": {"name": "quick", "version": 2, "engine": "mitm", "sizes": [16]},
        "host": {"cpu": "x", "logical_cores": 1, "physical_cores": 1, "features": [],
                 "code_path": "x", "os": "x", "arch": "x", "version": "x", "commit": "x"},
        "rounds": 1, "verified": true, "results": results, "score": 1.0
    })
    .to_string()
}

#[test]
fn bench_compare_refuses_bad_reports_and_empty_comparisons() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: String| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        path.to_str().unwrap().to_string()
    };
    let good = write(
        "good.json",
        bench_report("nqueens.bench/1", &[(1, 5.0), (2, 9.0)]),
    );
    let other = write("other.json", bench_report("nqueens.count/1", &[(1, 5.0)]));
    let zero = write("zero.json", bench_report("nqueens.bench/1", &[(1, 0.0)]));
    let four = write("four.json", bench_report("nqueens.bench/1", &[(4, 7.0)]));
    let cases = [
        (&other, 2, "its schema is 'nqueens.count/1'"),
        (&zero, 2, "its speed at -j 1 is 0"),
        (&four, 1, "no thread count in common"),
    ];
    for (b, code, message) in cases {
        nqueens()
            .args(["bench", "--compare", &good, b])
            .assert()
            .code(code)
            .stdout("")
            .stderr(predicate::str::contains(message));
    }
    nqueens()
        .args(["bench", "--compare", &good, &good])
        .assert()
        .success()
        .stdout(predicate::str::contains("1.000"));
}

#[test]
fn bench_refuses_a_repeated_thread_count() {
    nqueens()
        .args(["bench", "-j", "1,1"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("thread count 1 is listed twice"));
}

#[test]
fn bench_speedup_is_relative_to_the_smallest_thread_count() {
    let (code, stdout, stderr) = run(&["bench", "--size", "tiny", "-q", "-j", "2,1", "--json"]);
    assert_eq!(code, 0, "{stderr}");
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["verified"], true);
    let rows = v["results"].as_array().unwrap();
    assert_eq!(rows[0]["threads"], 2);
    assert_eq!(rows[1]["threads"], 1);
    assert_eq!(rows[1]["speedup"], 1.0);
    assert_eq!(rows[1]["efficiency"], 1.0);
}
