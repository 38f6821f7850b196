//! Reading the input files of the puzzle subcommands (`-` means standard input).

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::Path;

use anyhow::Context;
use nqueens::shard::read_at_most;

use crate::exit::UsageError;

/// Read buffer for large inputs (a permutation for n = 10^8 is about 0.9 GB of text).
const BUFFER: usize = 1 << 20;

/// The name of an input in messages: the path, or `<stdin>` for `-`.
pub(crate) fn source_name(path: &Path) -> String {
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
pub(crate) fn open(path: &Path) -> anyhow::Result<Box<dyn BufRead>> {
    if is_stdin(path) {
        return Ok(Box::new(BufReader::with_capacity(BUFFER, std::io::stdin())));
    }
    let file = File::open(path).with_context(|| format!("reading '{}'", path.display()))?;
    Ok(Box::new(BufReader::with_capacity(BUFFER, file)))
}

/// The largest board file (`--mask`, `two-colour`) read: a 32×32 board with blanks between
/// cells and comments is far smaller.
pub(crate) const MAX_BOARD_BYTES: u64 = 64 * 1024;

/// Reads all of `path` (or stdin for `-`) as text, refusing more than `max` bytes (so
/// `/dev/zero` or a huge file is a clear error, not unbounded memory). `what` names
/// the expected content in the message.
pub(crate) fn read_to_string(path: &Path, max: u64, what: &str) -> anyhow::Result<String> {
    let name = source_name(path);
    let Some(bytes) =
        read_at_most(open(path)?, max).with_context(|| format!("reading '{name}'"))?
    else {
        return Err(UsageError(format!(
            "'{name}' is larger than {max} bytes: too large for {what}"
        ))
        .into());
    };
    String::from_utf8(bytes)
        .map_err(|e| UsageError(format!("'{name}' is not UTF-8 text ({e}): not {what}")).into())
}
