//! Snapshots of the text and markdown outputs of `count`, `bench` and `merge`.
//!
//! The snapshots live in `tests/snapshots/`. Whatever depends on the machine or the moment
//! (times, rates, the host line, the version and commit, plan hashes, temporary paths) is
//! replaced by a placeholder before comparing; thread counts are given explicitly, so the
//! outputs are the same on every machine. To accept an intended change, run the tests with
//! `INSTA_UPDATE=always` (or `cargo insta review`) and commit the updated `.snap` files.

mod common;

use std::path::Path;

use common::nqueens;

/// Filters shared by every snapshot here: times and rates in the commentary lines.
const TIMING: [(&str, &str); 3] = [
    (r"\d+\.\d+ s\b", "[TIME] s"),
    (r"\d+(\.\d+)? (k |M |G )?solutions/s", "[RATE] solutions/s"),
    (r"\b[0-9a-f]{32}\b", "[HASH]"),
];

/// Runs `nqueens args` (with `stdin`) and renders status, stdout and stderr as one text.
fn transcript(args: &[&str], stdin: &str) -> String {
    transcript_in(Path::new("."), args, stdin)
}

/// Like [`transcript`], in the working directory `dir` (so paths in the output are relative).
fn transcript_in(dir: &Path, args: &[&str], stdin: &str) -> String {
    let mut cmd = nqueens();
    let out = cmd
        .current_dir(dir)
        .args(args)
        .write_stdin(stdin)
        .output()
        .unwrap();
    format!(
        "$ nqueens {}\nstatus: {}\n--- stdout\n{}--- stderr\n{}",
        args.join(" "),
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    )
}

/// Asserts a snapshot with the timing filters plus `extra` ones.
fn assert_filtered(name: &str, text: &str, extra: &[(&str, &str)]) {
    let mut settings = insta::Settings::clone_current();
    for (pattern, replacement) in TIMING.iter().chain(extra) {
        settings.add_filter(pattern, *replacement);
    }
    settings.bind(|| insta::assert_snapshot!(name, text));
}

#[test]
fn count_prints_the_total_on_stdout_and_a_summary_on_stderr() {
    let text = transcript(&["count", "10", "-j", "2", "--engine", "mirror"], "");
    assert_filtered("count_text", &text, &[]);
}

#[test]
fn count_unique_prints_two_lines_and_names_the_fundamental_solutions() {
    let text = transcript(
        &["count", "10", "-j", "2", "--unique", "-e", "symmetry"],
        "",
    );
    assert_filtered("count_unique_text", &text, &[]);
}

#[test]
fn count_markdown_is_a_one_row_table() {
    let args = [
        "count",
        "11",
        "-j",
        "2",
        "-q",
        "-e",
        "symmetry",
        "--unique",
        "--markdown",
    ];
    let time_cell = (r"(?m)\| [0-9.]+ \| (yes|no|-) \|$", "| [TIME] | $1 |");
    assert_filtered("count_markdown", &transcript(&args, ""), &[time_cell]);
}

#[test]
fn count_stdin_answers_one_line_per_question() {
    let text = transcript(&["count", "--stdin", "-j", "2", "-q"], "1\n4\n8\n10\n0\n");
    assert_filtered("count_stdin_text", &text, &[]);
}

/// Writes the shard files of `count 10 --shard I/3` for the shards in `which` into `dir`.
fn shards(dir: &Path, which: &[u32]) {
    for i in which {
        let out = dir.join(format!("shard-{i}.json"));
        let shard = format!("{i}/3");
        let args = ["count", "10", "-e", "mirror", "-j", "1", "-q", "--shard"];
        nqueens()
            .args(args)
            .args([shard.as_str(), "--out", out.to_str().unwrap()])
            .assert()
            .success();
    }
}

#[test]
fn merge_prints_the_total_and_what_it_merged() {
    let dir = tempfile::tempdir().unwrap();
    shards(dir.path(), &[0, 1, 2]);
    let text = transcript_in(dir.path(), &["merge", "."], "");
    let version = [(
        r"written by nqueens [^:]+:",
        "written by nqueens [VERSION]:",
    )];
    assert_filtered("merge_text", &text, &version);
}

#[test]
fn merge_lists_a_missing_shard_and_exits_3() {
    let dir = tempfile::tempdir().unwrap();
    shards(dir.path(), &[0, 2]);
    let text = transcript_in(dir.path(), &["merge", "."], "");
    assert_filtered("merge_missing_text", &text, &[]);
}

#[test]
fn merge_has_no_markdown_output_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    shards(dir.path(), &[0, 1, 2]);
    let text = transcript_in(dir.path(), &["merge", "--markdown", "."], "");
    assert_filtered("merge_markdown", &text, &[]);
}

/// Filters for a one-thread `bench` report: the host, version and score lines and the
/// measured cells of its one row (its copies, speed-up, efficiency and core speed are fixed).
const BENCH: [(&str, &str); 5] = [
    (r"host: .*", "host: [HOST]"),
    (
        r"nqueens \d+\.\d+\.\d+\S* \([^)]*\)",
        "nqueens [VERSION] ([COMMIT])",
    ),
    (r"score: [0-9.]+", "score: [SCORE]"),
    (
        r"(?m)^( +1) +1 +[0-9.]+ +[0-9.]+ +[0-9.e+]+ +1\.00 +100% +\d+% +100%$",
        "$1 1 [WALL] [CPU] [SOL/S] 1.00 100% [BUSY] 100%",
    ),
    (
        r"\| 1 \| 1 \| [0-9.]+ \| [0-9.]+ \| [0-9.e+]+ \| 1\.00 \| 100% \| \d+% \| 100% \|",
        "| 1 | 1 | [WALL] | [CPU] | [SOL/S] | 1.00 | 100% | [BUSY] | 100% |",
    ),
];

#[test]
fn bench_text_and_markdown_reports_have_the_documented_layout() {
    let dir = tempfile::tempdir().unwrap();
    let md = dir.path().join("bench.md");
    let args = [
        "bench",
        "--size",
        "tiny",
        "-q",
        "-j",
        "1",
        "--export-markdown",
    ];
    let out = nqueens().args(args).arg(&md).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    assert_filtered("bench_text", &text, &BENCH);
    let markdown = std::fs::read_to_string(&md).unwrap();
    assert_filtered("bench_markdown", &markdown, &BENCH);
}
