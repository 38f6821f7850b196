//! The `nqueens count` command line: stdout, JSON, judge input, and every bad input.

mod common;

use common::{nqueens, run};
use predicates::prelude::*;
use serde_json::Value;

#[test]
fn count_prints_only_the_total_on_stdout() {
    nqueens()
        .args(["count", "8"])
        .assert()
        .success()
        .stdout("92\n")
        .stderr(predicate::str::contains("matches OEIS A000170"));
}

#[test]
fn quiet_keeps_stderr_empty() {
    nqueens()
        .args(["count", "10", "-q", "-j", "2"])
        .assert()
        .success()
        .stdout("724\n")
        .stderr("");
}

#[test]
fn json_output_parses_and_has_the_documented_fields() {
    let (code, stdout, _) = run(&["count", "12", "--json", "-j", "3"]);
    assert_eq!(code, 0);
    let v: Value = serde_json::from_str(&stdout).expect("stdout is JSON");
    assert_eq!(v["schema"], "nqueens.count/1");
    assert_eq!(v["n"], 12);
    assert_eq!(v["total"], "14200");
    assert_eq!(v["threads"], 3);
    assert_eq!(v["verified"], true);
    assert!(v["engine"].is_string());
    assert!(v["elapsed_s"].as_f64().is_some_and(|s| s >= 0.0));
    assert!(v["unique"].is_null());
}

#[test]
fn format_markdown_prints_a_table() {
    let (code, stdout, _) = run(&["count", "6", "--format", "markdown"]);
    assert_eq!(code, 0);
    assert!(stdout.starts_with("| N | solutions |"), "{stdout}");
    assert!(stdout.contains("| 6 | 4 |"), "{stdout}");
}

#[test]
fn split_depth_and_engine_flags_are_accepted() {
    nqueens()
        .args(["count", "11", "--engine", "mirror", "--split-depth", "3"])
        .assert()
        .success()
        .stdout("2680\n");
}

#[test]
fn stdin_judge_format_stops_at_zero() {
    nqueens()
        .args(["count", "--stdin"])
        .write_stdin("1\n4\n\n8\n0\n10\n")
        .assert()
        .success()
        // The blank line gets a blank answer: answers stay aligned with questions.
        .stdout("1\n2\n\n92\n");
}

#[test]
fn stdin_judge_format_also_stops_at_end_of_input() {
    nqueens()
        .args(["count", "--stdin", "-q"])
        .write_stdin("6\n7")
        .assert()
        .success()
        .stdout("4\n40\n");
}

#[test]
fn stdin_bad_line_is_a_usage_error_naming_the_line() {
    nqueens()
        .args(["count", "--stdin"])
        .write_stdin("4\nfive\n")
        .assert()
        .code(2)
        .stdout("2\n")
        .stderr(predicate::str::contains("line 2"));
}

#[test]
fn bad_inputs_get_one_line_errors_naming_the_range_and_exit_2() {
    let cases: [&[&str]; 5] = [
        &["count", "0"],
        &["count", "33"],
        &["count", "abc"],
        &["count", "-4"],
        &["count", "8", "--threads", "0"],
    ];
    for args in cases {
        let (code, stdout, stderr) = run(args);
        assert_eq!(code, 2, "{args:?}");
        assert!(stdout.is_empty(), "{args:?}: {stdout}");
        assert_eq!(stderr.trim_end().lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.contains("from 1 to"), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
}

#[test]
fn out_of_range_split_depth_is_a_usage_error() {
    let (code, _, stderr) = run(&["count", "8", "--engine", "mirror", "--split-depth", "20"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("split depth must be between"), "{stderr}");
}

#[test]
fn unknown_engine_is_rejected_with_the_choices() {
    let (code, _, stderr) = run(&["count", "8", "--engine", "quantum"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("mirror"), "{stderr}");
}

#[test]
fn mitm_by_name_refuses_boards_past_its_range() {
    // Asked by name, mitm is refused alone: the user chose it (auto takes the symmetry
    // engine there; see tests/hurried).
    let (code, stdout, stderr) = run(&["count", "30", "--engine", "mitm"]);
    assert_eq!((code, stdout.as_str()), (2, ""));
    assert!(
        stderr.contains("mitm engine does not support N = 30"),
        "{stderr}"
    );
    assert!(!stderr.contains("auto picks"), "{stderr}");
}

#[test]
fn missing_n_is_a_usage_error() {
    let (code, _, _) = run(&["count"]);
    assert_eq!(code, 2);
}

#[test]
fn help_lists_the_engines() {
    nqueens()
        .args(["count", "--help"])
        .assert()
        .success()
        .stdout(predicate::str::contains("mirror").and(predicate::str::contains("auto")));
}

// Each subcommand's help shows only the common options it uses (they follow the
// subcommand), and options it cannot use are refused.

#[test]
fn count_help_words_threads_for_count_and_hides_unwritable_formats() {
    nqueens()
        .args(["count", "--help"])
        .assert()
        .success()
        .stdout(
            predicate::str::contains("--threads")
                .and(predicate::str::contains("bench takes").not())
                .and(predicate::str::contains("perm").not()),
        );
    nqueens()
        .args(["bench", "--help"])
        .assert()
        .success()
        .stdout(predicate::str::contains("1,2,4"));
    nqueens()
        .args(["completions", "--help"])
        .assert()
        .success()
        .stdout(predicate::str::contains("--threads").not())
        .stdout(predicate::str::contains("--format").not());
}

#[test]
fn a_format_or_thread_count_a_command_cannot_use_is_a_usage_error() {
    let cases: [&[&str]; 5] = [
        &["count", "8", "--format", "perm"],
        &["bench", "--format", "board"],
        &["completions", "bash", "--json"],
        &["verify", "-j", "2", "-"],
        &["-j", "2", "merge", "x.json"],
    ];
    for args in cases {
        let (code, stdout, stderr) = run(args);
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert_eq!(stdout, "", "{args:?}");
        assert!(stderr.starts_with("nqueens: "), "{args:?}: {stderr}");
    }
}

/// Every subcommand a user types (the hidden `load` aside).
const SUBCOMMANDS: [&str; 11] = [
    "count",
    "solutions",
    "place",
    "verify",
    "two-colour",
    "bench",
    "merge",
    "status",
    "estimate",
    "gpus",
    "completions",
];

/// Parses `script` with `shell` if it is installed: `Some(passed)`, or `None` (said, past
/// the harness's capture) where it is not.
fn parsed_by(shell: &str, flag: &str, script: &str) -> Option<bool> {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("completions");
    std::fs::write(&file, script).unwrap();
    match std::process::Command::new(shell)
        .arg(flag)
        .arg(&file)
        .output()
    {
        Ok(out) => {
            let ok = out.status.success();
            if !ok {
                eprintln!("{shell} {flag}: {}", String::from_utf8_lossy(&out.stderr));
            }
            Some(ok)
        }
        Err(e) => {
            let note = format!("completions: {shell} not installed ({e}): its script not parsed\n");
            std::io::Write::write_all(&mut std::io::stderr(), note.as_bytes()).unwrap();
            None
        }
    }
}

#[test]
fn completions_for_every_shell_name_every_subcommand_and_parse() {
    let parsers = [("bash", "-n"), ("fish", "--no-execute"), ("zsh", "-n")];
    for shell in ["bash", "elvish", "fish", "powershell", "zsh"] {
        let (code, script, stderr) = run(&["completions", shell]);
        assert_eq!(code, 0, "{shell}: {stderr}");
        assert!(stderr.is_empty(), "{shell}: {stderr}");
        assert!(script.lines().count() > 20, "{shell}: {script}");
        for sub in SUBCOMMANDS {
            assert!(script.contains(sub), "{shell} lacks {sub}");
        }
        assert!(script.contains("threads"), "{shell}: the global flags too");
        if let Some((_, flag)) = parsers.iter().find(|(name, _)| *name == shell) {
            assert_ne!(parsed_by(shell, flag, &script), Some(false), "{shell}");
        }
    }
    let (code, _, stderr) = run(&["completions", "tcsh"]);
    assert_eq!(code, 2, "{stderr}");
}
