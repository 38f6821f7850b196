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
    let plot = dir.join("scaling.svg");
    let (code, stdout, stderr) = run(&[
        "bench",
        "--size",
        "tiny",
        "-q",
        "-j",
        "1,2",
        "--json",
        "--export-json",
        file,
        "--plot",
        plot.to_str().unwrap(),
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
    assert_eq!(row["copies"], 1);
    assert_eq!(row["speedup"], 1.0);
    assert_eq!(row["core_speed"], 1.0);
    for (i, row) in v["results"].as_array().unwrap().iter().enumerate() {
        for field in [
            "wall_s",
            "cpu_s",
            "solutions_per_s",
            "subproblems_per_s",
            "efficiency",
            "busy",
            "core_speed",
        ] {
            assert!(
                row[field].as_f64().is_some_and(|x| x > 0.0),
                "results[{i}].{field}"
            );
        }
    }
    assert!(v["score"].as_f64().is_some_and(|s| s > 0.0));
    let svg = std::fs::read_to_string(&plot).unwrap();
    for text in ["<svg", "speed-up", "efficiency", "core speed"] {
        assert!(svg.contains(text), "the plot has no '{text}'");
    }
    let exported: Value = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    assert_eq!(exported["schema"], v["schema"]);

    let (code, stdout, _) = run(&["bench", "--compare", file, file]);
    assert_eq!(code, 0);
    assert!(stdout.contains("1.000"), "{stdout}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn each_row_counts_the_workload_once_per_thread_up_to_the_cpus() {
    let (code, stdout, stderr) = run(&["bench", "--size", "tiny", "-q", "-j", "1,2,3", "--json"]);
    assert_eq!(code, 0, "{stderr}");
    let v: Value = serde_json::from_str(&stdout).unwrap();
    let rows = v["results"].as_array().unwrap();
    let number = |row: &Value, field: &str| -> u128 {
        let value = &row[field];
        value
            .as_str()
            .map_or_else(|| value.as_u64().unwrap().into(), |s| s.parse().unwrap())
    };
    let (solutions, tasks) = (
        number(&rows[0], "solutions"),
        number(&rows[0], "subproblems"),
    );
    assert_eq!(solutions, 724 + 2680 + 14200, "N = 10, 11, 12 once");
    let cpus = number(&v["host"], "logical_cores");
    for row in rows {
        // One copy per thread, up to one per logical CPU.
        let copies = (row["threads"].as_u64().unwrap() as u128).min(cpus);
        assert_eq!(number(row, "copies"), copies);
        assert_eq!(number(row, "solutions"), copies * solutions);
        assert_eq!(number(row, "subproblems"), copies * tasks);
    }
}

#[test]
fn a_wrong_count_in_a_row_of_copies_names_them() {
    let argv = [
        "bench",
        "--size",
        "tiny",
        "-q",
        "-j",
        "2",
        "--test-inject-fault",
        "0",
    ];
    let (code, _, stderr) = run(&argv);
    assert_eq!(code, 3, "{stderr}");
    assert!(
        stderr.contains("WRONG COUNT in the warm-up with 2 threads: N = 10 gave 725, OEIS"),
        "{stderr}"
    );
}

#[test]
fn count_json_reports_cpu_time_beside_wall_time() {
    let (code, stdout, stderr) = run(&["count", "13", "--json", "-j", "2"]);
    assert_eq!(code, 0, "{stderr}");
    let v: Value = serde_json::from_str(&stdout).unwrap();
    assert!(v["cpu_s"].as_f64().is_some_and(|s| s > 0.0), "{stdout}");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("shard.json");
    let argv = [
        "count", "13", "--shard", "0/2", "-j", "1", "--json", "--out",
    ];
    let (code, stdout, stderr) = run(&[&argv[..], &[out.to_str().unwrap()]].concat());
    assert_eq!(code, 0, "{stderr}");
    let v: Value = serde_json::from_str(&stdout).unwrap();
    assert!(v["cpu_s"].as_f64().is_some_and(|s| s > 0.0), "{stdout}");
}

#[test]
fn the_hidden_loads_run_for_the_time_asked_and_say_what_they_did() {
    let (code, stdout, stderr) = run(&["load", "vector", "--seconds", "0.05"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.starts_with("vector: "), "{stdout}");
    let (code, stdout, stderr) = run(&["load", "memory", "--seconds", "0.05", "--mib", "1"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.starts_with("memory: "), "{stdout}");
    let (code, stdout, stderr) = run(&["load", "count", "--n", "8", "--seconds", "0.05"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.starts_with("count: "), "{stdout}");
    let (code, _, stderr) = run(&["load", "memory", "--mib", "0"]);
    assert_eq!(code, 2, "{stderr}");
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

#[test]
fn far_more_threads_than_cpus_get_a_note_and_a_small_efficiency_is_not_zero() {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let many = (3 * cpus).to_string();
    let (code, out, err) = run(&["bench", "--size", "tiny", "-j", &format!("1,{many}")]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("threads beyond the CPUs"), "{err}");
    assert!(!out.contains(" 0% "), "{out}");
}

/// A one-round tiny report at 1 and 2 threads, exported to `dir/a.json`: its path.
fn tiny_report(dir: &std::path::Path) -> std::path::PathBuf {
    let path = dir.join("a.json");
    let argv = [
        "bench",
        "--size",
        "tiny",
        "-q",
        "-j",
        "1,2",
        "--export-json",
    ];
    let (code, _, stderr) = run(&[&argv[..], &[path.to_str().unwrap()]].concat());
    assert_eq!(code, 0, "{stderr}");
    path
}

/// Writes `report` to `dir/name` and returns the path as a string.
fn write_json(dir: &std::path::Path, name: &str, report: &Value) -> String {
    let path = dir.join(name);
    std::fs::write(&path, serde_json::to_string(report).unwrap()).unwrap();
    path.to_str().unwrap().to_string()
}

#[test]
fn compare_gives_the_ratio_of_two_different_reports() {
    let dir = tempfile::tempdir().unwrap();
    let a = tiny_report(dir.path());
    let mut b: Value = serde_json::from_str(&std::fs::read_to_string(&a).unwrap()).unwrap();
    // B: twice A's speed at 1 thread, three quarters of it at 2.
    for (row, factor) in b["results"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .zip([2.0, 0.75])
    {
        let speed = row["solutions_per_s"].as_f64().unwrap();
        row["solutions_per_s"] = (speed * factor).into();
    }
    let b = write_json(dir.path(), "b.json", &b);
    let a = a.to_str().unwrap();
    let (code, stdout, stderr) = run(&["bench", "--compare", a, &b, "--json"]);
    assert_eq!(code, 0, "{stderr}");
    let v: Value = serde_json::from_str(&stdout).unwrap();
    let ratios: Vec<(u64, f64)> = v["ratios"]
        .as_array()
        .unwrap_or_else(|| panic!("{stdout}"))
        .iter()
        .map(|r| (r["threads"].as_u64().unwrap(), r["ratio"].as_f64().unwrap()))
        .collect();
    assert_eq!(ratios.len(), 2, "{stdout}");
    assert_eq!(ratios[0].0, 1);
    assert!((ratios[0].1 - 2.0).abs() < 1e-9, "{stdout}");
    assert_eq!(ratios[1].0, 2);
    assert!((ratios[1].1 - 0.75).abs() < 1e-9, "{stdout}");
    // The other way round, the inverse.
    let (code, stdout, _) = run(&["bench", "--compare", &b, a]);
    assert_eq!(code, 0);
    assert!(
        stdout.contains("0.500") && stdout.contains("1.333"),
        "{stdout}"
    );
}

#[test]
fn compare_refuses_a_report_with_two_rows_for_one_thread_count() {
    let dir = tempfile::tempdir().unwrap();
    let a = tiny_report(dir.path());
    let mut twice: Value = serde_json::from_str(&std::fs::read_to_string(&a).unwrap()).unwrap();
    let rows = twice["results"].as_array_mut().unwrap();
    let mut again = rows[0].clone();
    again["solutions_per_s"] = 1.0.into();
    rows.push(again);
    let twice = write_json(dir.path(), "twice.json", &twice);
    let (code, stdout, stderr) = run(&["bench", "--compare", a.to_str().unwrap(), &twice]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stdout.is_empty(), "{stdout}");
    assert!(
        stderr.contains("not a bench report") && stderr.contains("two rows for -j 1"),
        "{stderr}"
    );
}

#[test]
fn compare_refuses_the_options_of_a_run_instead_of_ignoring_them() {
    let options: [&[&str]; 10] = [
        &["--export-json", "x.json"],
        &["--export-markdown", "x.md"],
        &["--plot", "x.svg"],
        &["-j", "2"],
        &["--size", "long"],
        &["--repeat", "2"],
        &["--duration", "5"],
        &["--recheck", "0.5"],
        &["--force"],
        &["--gpu"],
    ];
    for option in options {
        let argv = [&["bench", "--compare", "a.json", "b.json"], option].concat();
        let (code, stdout, stderr) = run(&argv);
        assert_eq!(code, 2, "{option:?}: {stderr}");
        assert!(stdout.is_empty(), "{option:?}: {stdout}");
        assert!(
            stderr.contains("cannot be used with"),
            "{option:?}: {stderr}"
        );
    }
}

#[test]
fn repeat_runs_and_verifies_that_many_rounds() {
    let (code, stdout, stderr) = run(&[
        "bench", "--size", "tiny", "-j", "1", "--repeat", "3", "--json",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let v: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["rounds"], 3);
    assert_eq!(v["verified"], true);
    assert!(v.get("interrupted").is_none(), "{stdout}");
    for round in 1..=3 {
        let line = format!("round {round} verified: every count matched");
        assert!(stderr.contains(&line), "{stderr}");
    }
    assert!(
        stderr.contains("the tiny workload v3 (N = 10, 11, 12): rows at 1 thread, 3 rounds"),
        "{stderr}"
    );
}

/// The bench's report on stdout and the exports, with stdout on `out`: what the run left.
fn exports_with_stdout(out: std::process::Stdio) -> (i32, String, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let (json, md) = (dir.path().join("r.json"), dir.path().join("r.md"));
    let output = common::nqueens_std()
        .args(["bench", "--size", "tiny", "-q", "-j", "1", "--export-json"])
        .arg(&json)
        .arg("--export-markdown")
        .arg(&md)
        .stdout(out)
        .output()
        .unwrap();
    let read = |p: &std::path::Path| std::fs::read_to_string(p).unwrap_or_default();
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stderr).into_owned(),
        read(&json),
        read(&md),
    )
}

#[cfg(target_os = "linux")]
#[test]
fn a_full_stdout_fails_the_printing_but_not_the_exports() {
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let (code, stderr, json, md) = exports_with_stdout(full.into());
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("printing the report"), "{stderr}");
    let exported: Value = serde_json::from_str(&json).unwrap_or_else(|e| panic!("{e}: {json}"));
    assert_eq!(exported["verified"], true, "{json}");
    assert!(md.starts_with("- workload: "), "{md}");
}

#[cfg(unix)]
#[test]
fn a_closed_pipe_ends_the_printing_not_the_exports() {
    let mut fds = [0; 2];
    // SAFETY: pipe(2) fills the two descriptors of the array it is given.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    // SAFETY: fds[0] is the pipe's read end, ours alone; closing it leaves a closed pipe, as
    // `| head -1` does once it has its line.
    unsafe { libc::close(fds[0]) };
    // SAFETY: fds[1] is the write end, owned by nothing else; the File takes it over.
    let write_end = unsafe { <std::fs::File as std::os::fd::FromRawFd>::from_raw_fd(fds[1]) };
    let (code, stderr, json, md) = exports_with_stdout(write_end.into());
    assert_eq!(code, 0, "{stderr}");
    let exported: Value = serde_json::from_str(&json).unwrap_or_else(|e| panic!("{e}: {json}"));
    assert_eq!(exported["verified"], true, "{json}");
    assert!(md.starts_with("- workload: "), "{md}");
}

/// A bench started with `args`, its stderr read line by line: the lines up to the first that
/// holds `wanted`.
#[cfg(unix)]
struct Running {
    child: std::process::Child,
    stderr: std::io::Lines<std::io::BufReader<std::process::ChildStderr>>,
    seen: Vec<String>,
}

#[cfg(unix)]
impl Running {
    fn start(args: &[&str]) -> Running {
        use std::io::BufRead;
        let mut child = common::nqueens_std()
            .args(args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = std::io::BufReader::new(child.stderr.take().unwrap()).lines();
        Running {
            child,
            stderr,
            seen: Vec::new(),
        }
    }

    /// Reads stderr until a line holds `wanted` (the state to wait for, never a time).
    fn wait_for(&mut self, wanted: &str) -> &str {
        for line in self.stderr.by_ref() {
            self.seen.push(line.unwrap());
            if self.seen.last().unwrap().contains(wanted) {
                return self.seen.last().unwrap();
            }
        }
        panic!("no line with '{wanted}' before the end: {:?}", self.seen);
    }

    /// Sends `signal`, then waits for the end: (status, stdout, the rest of stderr).
    fn stop(self, signal: libc::c_int) -> (i32, String, String) {
        let pid = libc::pid_t::try_from(self.child.id()).unwrap();
        // SAFETY: kill(2) with a live child's PID and a valid signal number has no memory
        // effect.
        assert_eq!(unsafe { libc::kill(pid, signal) }, 0);
        let rest: Vec<String> = self.stderr.map(Result::unwrap).collect();
        let out = self.child.wait_with_output().unwrap();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            rest.join("\n"),
        )
    }
}

#[cfg(unix)]
#[test]
fn a_signal_ends_a_burn_in_with_the_rounds_it_verified_and_status_130() {
    for signal in [libc::SIGTERM, libc::SIGUSR1, libc::SIGINT] {
        let dir = tempfile::tempdir().unwrap();
        let export = dir.path().join("burn.json");
        let mut run = Running::start(&[
            "bench",
            "--size",
            "tiny",
            "-j",
            "1",
            "--duration",
            "3600",
            "--json",
            "--export-json",
            export.to_str().unwrap(),
        ]);
        run.wait_for("round 2 verified");
        let (code, stdout, stderr) = run.stop(signal);
        assert_eq!(code, 130, "signal {signal}: {stderr}");
        assert!(stderr.contains("interrupted in round"), "{stderr}");
        let v: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"));
        assert_eq!(v["interrupted"], true);
        assert_eq!(v["verified"], true);
        assert!(v["rounds"].as_u64().is_some_and(|r| r >= 2), "{stdout}");
        assert_eq!(v["results"][0]["threads"], 1);
        let exported: Value =
            serde_json::from_str(&std::fs::read_to_string(&export).unwrap()).unwrap();
        assert_eq!(exported, v, "the export is the report printed");
    }
}

#[cfg(unix)]
#[test]
fn each_size_names_its_workload_and_a_signal_before_a_row_ends_reports_nothing() {
    let sizes = [
        ("quick", "(N = 16, 17, 18)"),
        ("standard", "(N = 18, 19, 19)"),
        ("long", "(N = 19, 20, 20)"),
    ];
    for (size, boards) in sizes {
        let mut run = Running::start(&["bench", "--size", size, "-j", "1", "--json"]);
        let line = run.wait_for("workload").to_string();
        assert!(
            line.contains(&format!("the {size} workload v3 {boards}")),
            "{line}"
        );
        let (code, stdout, stderr) = run.stop(libc::SIGTERM);
        assert_eq!(code, 130, "{size}: {stderr}");
        assert!(stdout.is_empty(), "{size}: {stdout}");
        assert!(
            stderr.contains("interrupted before the first row finished"),
            "{stderr}"
        );
    }
}
