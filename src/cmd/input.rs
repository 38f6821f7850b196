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
