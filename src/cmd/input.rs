//! Reading the input files of the puzzle subcommands (`-` means standard input).

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use anyhow::Context;

/// Read buffer for large inputs (a permutation for n = 10^8 is about 0.9 GB of text).
const BUFFER: usize = 1 << 20;

/// The name of an input in messages: the path, or `<stdin>` for `-`.
pub fn source_name(path: &Path) -> String {
    if is_stdin(path) {
        "<stdin>".to_string()
    } else {
        path.display().to_string()
    }
}

fn is_stdin(path: &Path) -> bool {
    path.as_os_str() == "-"
}

/// Opens `path` (or stdin for `-`) as a buffered reader.
pub fn open(path: &Path) -> anyhow::Result<Box<dyn BufRead>> {
    if is_stdin(path) {
        return Ok(Box::new(BufReader::with_capacity(BUFFER, std::io::stdin())));
    }
    let file = File::open(path).with_context(|| format!("reading '{}'", path.display()))?;
    Ok(Box::new(BufReader::with_capacity(BUFFER, file)))
}

/// Reads all of `path` (or stdin for `-`) as text.
pub fn read_to_string(path: &Path) -> anyhow::Result<String> {
    let mut text = String::new();
    open(path)?
        .read_to_string(&mut text)
        .with_context(|| format!("reading '{}'", source_name(path)))?;
    Ok(text)
}

/// The judge format on stdin: one size per line (blank lines skipped) until a line `0` or the
/// end of input. Yields each size as parsed by `parse`, or an error naming its line.
pub fn judge_sizes<T>(
    parse: impl Fn(&str) -> Result<T, String>,
) -> impl Iterator<Item = anyhow::Result<T>> {
    let mut lines = std::io::stdin().lock().lines().enumerate();
    std::iter::from_fn(move || loop {
        let (index, line) = lines.next()?;
        let line = match line.context("reading standard input") {
            Ok(line) => line,
            Err(e) => return Some(Err(e)),
        };
        let text = line.trim();
        if text.is_empty() {
            continue;
        }
        if text == "0" {
            return None;
        }
        let parsed = parse(text).map_err(|message| nqueens::Error::Parse {
            source_name: "<stdin>".to_string(),
            line: index + 1,
            column: None,
            message,
        });
        return Some(parsed.map_err(anyhow::Error::from));
    })
}
