//! The README's console examples run as written: each `$ command` of a `console` block, run
//! by `sh` with this build's `nqueens` first on `PATH`, prints the lines shown below it
//! (stdout, or stderr for a command that prints nothing on stdout, as a terminal shows it).

use std::path::Path;
use std::process::Command;

use serde_json::Value;

/// A command of the README and the lines it shows after it.
#[derive(Debug)]
struct Example {
    command: String,
    shown: Vec<String>,
}

#[test]
fn the_readme_console_examples_print_what_the_readme_shows() {
    let examples = examples(include_str!("../README.md"));
    // The reader must find them, or a README without examples would pass.
    assert!(examples.len() >= 15, "{examples:#?}");
    for example in &examples {
        let printed = run(&example.command);
        assert_eq!(
            printed.len(),
            example.shown.len(),
            "`{}` printed {printed:#?}",
            example.command
        );
        for (shown, printed) in example.shown.iter().zip(&printed) {
            assert!(
                same(shown, printed),
                "`{}`: {shown} / {printed}",
                example.command
            );
        }
    }
}

#[test]
fn examples_are_read_from_console_blocks_only() {
    let text = "```sh\n$ nqueens count 4\n```\n```console\n$ a\n1\n2\n$ b\n```\n";
    let found = examples(text);
    assert_eq!(found.len(), 2);
    assert_eq!((found[0].command.as_str(), found[0].shown.len()), ("a", 2));
    assert!(found[1].shown.is_empty());
}

/// Every `$ command` of the `console` blocks of `text`, with the lines after it.
fn examples(text: &str) -> Vec<Example> {
    let mut found: Vec<Example> = Vec::new();
    let mut in_console = false;
    for line in text.lines() {
        if line.starts_with("```") {
            in_console = line == "```console";
            continue;
        }
        if !in_console {
            continue;
        }
        if let Some(command) = line.strip_prefix("$ ") {
            found.push(Example {
                command: command.to_string(),
                shown: Vec::new(),
            });
        } else if let Some(example) = found.last_mut() {
            example.shown.push(line.to_string());
        }
    }
    found
}

/// The lines `command` prints: stdout, or stderr where stdout is empty.
fn run(command: &str) -> Vec<String> {
    let bin = Path::new(env!("CARGO_BIN_EXE_nqueens")).parent().unwrap();
    let path = std::env::join_paths(std::iter::once(bin.to_path_buf()).chain(
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
    ))
    .unwrap();
    let out = Command::new("sh")
        .args(["-c", command])
        .env("PATH", path)
        .env_remove("NQUEENS_ISA")
        .output()
        .expect("sh runs");
    let stream = if out.stdout.is_empty() {
        out.stderr
    } else {
        out.stdout
    };
    String::from_utf8_lossy(&stream)
        .lines()
        .map(str::to_string)
        .collect()
}

/// Whether `printed` is the line the README shows: the same text (blanks at the ends
/// aside), or for a JSON object the same fields, with the same values where they do not
/// depend on the machine (time, threads, plan split, CPU level).
fn same(shown: &str, printed: &str) -> bool {
    if !shown.starts_with('{') {
        return shown.trim() == printed.trim();
    }
    let (Ok(Value::Object(a)), Ok(Value::Object(b))) = (
        serde_json::from_str::<Value>(shown),
        serde_json::from_str::<Value>(printed),
    ) else {
        return false;
    };
    let stable = ["schema", "n", "total", "unique", "engine", "verified"];
    a.keys().eq(b.keys()) && stable.iter().all(|k| a.get(*k) == b.get(*k))
}
