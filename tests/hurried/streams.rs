//! Output that comes while the work goes on, judge loops, and the shapes of line-by-line
//! output.

use std::io::{BufRead, BufReader, Read, Write};

use serde_json::Value;

use super::*;

#[test]
fn solutions_come_out_as_they_are_found_and_a_closed_pipe_ends_the_run() {
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

#[test]
fn a_blank_judge_line_gets_a_blank_answer_so_answers_stay_aligned() {
    let input = "8\n\n10\n  \n0\n";
    let (code, stdout, _) = run_with_input(&["count", "--stdin"], input);
    assert_eq!((code, stdout.as_str()), (0, "92\n\n724\n\n"));
    let (_, json, _) = run_with_input(&["count", "--stdin", "--json"], input);
    let answers: Vec<Value> = json
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(answers.len(), 4, "{json}");
    assert!(
        answers[1]["n"].is_null() && answers[1]["total"].is_null(),
        "{json}"
    );
    assert_eq!(answers[1]["schema"], "nqueens.count/1");
    let (_, table, _) = run_with_input(&["count", "--stdin", "--markdown"], input);
    assert_eq!(table.lines().count(), 2 + 4, "{table}");
}

#[test]
fn a_judge_line_that_cannot_be_counted_is_named_by_its_number() {
    let (code, stdout, stderr) =
        run_with_input(&["count", "--stdin", "-e", "mitm"], "8\n\n30\n9\n");
    assert_eq!(code, 2, "{stderr}");
    assert_eq!(stdout, "92\n\n", "the answers before it are out");
    assert!(stderr.contains("<stdin>: line 3: N = 30"), "{stderr}");
}

#[test]
fn a_board_the_engine_asked_for_leaves_to_another_says_so() {
    let (code, stdout, stderr) = run(&["count", "3", "-e", "mitm"]);
    assert_eq!((code, stdout.trim()), (0, "0"));
    assert!(
        stderr.contains("N = 3 is counted with the symmetry engine"),
        "{stderr}"
    );
    let (_, _, quiet) = run(&["count", "3", "-e", "mitm", "-q"]);
    assert!(quiet.is_empty(), "{quiet}");
    let (_, _, auto) = run(&["count", "3"]);
    assert!(!auto.contains("is counted with"), "{auto}");
}

#[test]
fn count_stdin_counts_each_board_once() {
    let (code, stdout, _) = run_with_input(&["count", "--stdin", "--json"], "11\n9\n11\n11\n");
    assert_eq!(code, 0);
    let answers: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let totals: Vec<&str> = answers
        .iter()
        .map(|a| a["total"].as_str().unwrap())
        .collect();
    assert_eq!(totals, ["2680", "352", "2680", "2680"]);
    // Each count on the kept pool still measures the process's CPU time, as `count --json` does.
    #[cfg(unix)]
    assert!(answers.iter().all(|a| a["cpu_s"].is_f64()), "{stdout}");
    // Repeated boards are the same answer, counted once (its time included).
    assert_eq!(answers[0], answers[2]);
    assert_eq!(answers[0], answers[3]);
}

#[test]
fn a_hundred_thousand_judge_lines_are_all_answered_in_order() {
    let sizes: Vec<u32> = (0..100_000).map(|i| 1 + i % 10).collect();
    let input: String = sizes.iter().map(|n| format!("{n}\n")).collect();
    let (code, stdout, _) = run_with_input(&["count", "--stdin"], &input);
    assert_eq!(code, 0);
    let got: Vec<u128> = stdout.lines().map(|l| l.parse().unwrap()).collect();
    let want: Vec<u128> = sizes
        .iter()
        .map(|&n| nqueens::known::total(n).unwrap())
        .collect();
    assert_eq!(got, want);
    let (code, stdout, _) = run_with_input(&["place", "--stdin"], &input);
    assert_eq!(code, 1, "n = 2 and 3 have no solution");
    assert_eq!(stdout.lines().count(), sizes.len());
}

/// A judge that writes one question and waits for its answer before the next.
fn ask_one_at_a_time(args: &[&str], questions: &[&str]) -> Vec<String> {
    let mut child = spawn(nqueens_std().args(args));
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut answers = Vec::new();
    for q in questions {
        writeln!(stdin, "{q}").unwrap();
        stdin.flush().unwrap();
        let mut line = String::new();
        stdout.read_line(&mut line).unwrap();
        answers.push(line.trim_end().to_string());
    }
    drop(stdin);
    assert!(child.wait().unwrap().success());
    answers
}

#[test]
fn a_judge_waiting_for_each_answer_gets_it() {
    let counts = ask_one_at_a_time(&["count", "--stdin"], &["8", "10", "8"]);
    assert_eq!(counts, ["92", "724", "92"]);
    let places = ask_one_at_a_time(&["place", "--stdin"], &["4", "5"]);
    assert_eq!(places, ["2 4 1 3", "2 4 1 3 5"]);
}

#[test]
fn count_stdin_markdown_is_one_table() {
    let (code, stdout, _) = run_with_input(&["count", "--stdin", "--markdown"], "6\n8\n6\n");
    assert_eq!(code, 0);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 5, "{stdout}");
    assert!(lines[0].starts_with("| N | solutions"), "{stdout}");
    assert!(lines[1].starts_with("| --- |"), "{stdout}");
    for (row, start) in lines[2..]
        .iter()
        .zip(["| 6 | 4 |", "| 8 | 92 |", "| 6 | 4 |"])
    {
        assert!(row.starts_with(start), "{stdout}");
    }
}

#[test]
fn line_by_line_json_carries_a_schema_and_help_says_json_lines() {
    let schema = |line: &str| -> String {
        let v: Value = serde_json::from_str(line).unwrap();
        v["schema"].as_str().unwrap_or_default().to_string()
    };
    let (_, stdout, _) = run(&["solutions", "6", "--json"]);
    assert_eq!(stdout.lines().count(), 4);
    for line in stdout.lines() {
        assert_eq!(schema(line), "nqueens.solution/1");
        let v: Value = serde_json::from_str(line).unwrap();
        let cols: Vec<usize> = v["cols"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c.as_u64().unwrap() as usize - 1)
            .collect();
        assert!(common::is_solution(&cols));
    }
    let (_, stdout, _) = run_with_input(&["verify", "--json"], "2 4 1 3\n1 2 3 4\n");
    for line in stdout.lines() {
        assert_eq!(schema(line), "nqueens.verdict/1");
    }
    let (_, stdout, _) = run_with_input(&["place", "--stdin", "--json"], "4\n3\n");
    for line in stdout.lines() {
        assert_eq!(schema(line), "nqueens.place/1");
    }
    let (_, stdout, _) = run(&["place", "8", "--json"]);
    assert_eq!(schema(stdout.trim_end()), "nqueens.place/1");
    for command in ["count", "verify", "place", "solutions"] {
        let (_, help, _) = run(&[command, "--help"]);
        assert!(help.contains("JSON Lines"), "{command}: {help}");
    }
}
