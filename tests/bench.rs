//! `nqueens bench`: the JSON export has the documented fields; compare reads it back.

mod common;

use common::run;
use serde_json::Value;

#[test]
fn bench_json_has_the_documented_fields_and_compare_reads_it() {
    let dir = std::env::temp_dir().join(format!("nqueens-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("a.json");
    let file = file.to_str().unwrap();
    let (code, stdout, stderr) = run(&[
        "bench",
        "--size",
        "tiny",
        "-q",
        "-j",
        "1",
        "--json",
        "--export-json",
        file,
    ]);
    assert_eq!(code, 0, "{stderr}");
    let v: Value = serde_json::from_str(&stdout).expect("stdout is JSON");
    assert_eq!(v["schema"], "nqueens.bench/1");
    assert_eq!(v["workload"]["name"], "tiny");
    assert!(v["workload"]["version"].as_u64().is_some());
    assert!(v["workload"]["sizes"]
        .as_array()
        .is_some_and(|s| !s.is_empty()));
    for field in ["cpu", "code_path", "isa", "os", "version", "commit"] {
        assert!(v["host"][field].is_string(), "host.{field}");
    }
    assert!(v["host"]["logical_cores"].as_u64().is_some_and(|c| c >= 1));
    assert!(v["host"]["features"].is_array());
    assert_eq!(v["rounds"], 1);
    assert_eq!(v["verified"], true, "the report says every count matched");
    let row = &v["results"][0];
    assert_eq!(row["threads"], 1);
    assert_eq!(row["speedup"], 1.0);
    for field in [
        "wall_s",
        "solutions_per_s",
        "subproblems_per_s",
        "efficiency",
    ] {
        assert!(
            row[field].as_f64().is_some_and(|x| x > 0.0),
            "results[0].{field}"
        );
    }
    assert!(v["score"].as_f64().is_some_and(|s| s > 0.0));
    let exported: Value = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    assert_eq!(exported["schema"], v["schema"]);

    let (code, stdout, _) = run(&["bench", "--compare", file, file]);
    assert_eq!(code, 0);
    assert!(stdout.contains("1.000"), "{stdout}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn compare_rejects_a_file_that_is_not_a_report() {
    let path = std::env::temp_dir().join(format!("nqueens-notreport-{}.json", std::process::id()));
    std::fs::write(&path, "{\"hello\": 1}").unwrap();
    let p = path.to_str().unwrap();
    let (code, _, stderr) = run(&["bench", "--compare", p, p]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("not a bench report"), "{stderr}");
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn a_thread_list_is_rejected_by_count() {
    let (code, _, stderr) = run(&["count", "8", "-j", "1,2"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("one thread count"), "{stderr}");
}
