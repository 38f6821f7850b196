//! Reading the input files of the puzzle subcommands (`-` means standard input).

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
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

/// The longest line the judge format reads (a board size needs a few bytes).
pub(crate) const MAX_JUDGE_LINE: u64 = 1024;

/// The judge format on stdin: one size per line (blank lines skipped) until a line `0` or the
/// end of input. Yields each size as parsed by `parse`, or an error naming its line. Lines
/// longer than [`MAX_JUDGE_LINE`] bytes are an error, so endless input without newlines
/// (`/dev/zero`) cannot take unbounded memory.
pub(crate) fn judge_sizes<T>(
    parse: impl Fn(&str) -> Result<T, String>,
) -> impl Iterator<Item = anyhow::Result<T>> {
    judge_sizes_from(std::io::stdin().lock(), parse)
}

/// [`judge_sizes`] on any reader.
pub(crate) fn judge_sizes_from<T>(
    mut input: impl BufRead,
    parse: impl Fn(&str) -> Result<T, String>,
) -> impl Iterator<Item = anyhow::Result<T>> {
    let mut index = 0;
    let mut done = false;
    std::iter::from_fn(move || loop {
        if done {
            return None;
        }
        index += 1;
        let error = |message: String| {
            let e = nqueens::Error::Parse {
                source_name: "<stdin>".to_string(),
                line: index,
                column: None,
                message,
            };
            Some(Err(anyhow::Error::from(e)))
        };
        let line = match read_line(&mut input) {
            Ok(Some(line)) => line,
            Ok(None) => return None,
            Err(message) => {
                done = true;
                return error(message);
            }
        };
        let text = line.trim();
        if text.is_empty() {
            continue;
        }
        if is_end_marker(text) {
            return None;
        }
        return match parse(text) {
            Ok(value) => Some(Ok(value)),
            Err(message) => error(message),
        };
    })
}

/// One line of at most [`MAX_JUDGE_LINE`] bytes, without its newline (`None` at the end).
fn read_line(input: &mut impl BufRead) -> Result<Option<String>, String> {
    let mut bytes = Vec::new();
    input
        .by_ref()
        .take(MAX_JUDGE_LINE + 1)
        .read_until(b'\n', &mut bytes)
        .map_err(|e| format!("reading standard input: {e}"))?;
    if bytes.is_empty() {
        return Ok(None);
    }
    if bytes.last() == Some(&b'\n') {
        bytes.pop();
    } else if bytes.len() as u64 > MAX_JUDGE_LINE {
        return Err(format!("line longer than {MAX_JUDGE_LINE} bytes"));
    }
    String::from_utf8(bytes)
        .map(Some)
        .map_err(|_| "not UTF-8 text".to_string())
}

/// Whether a judge line ends the input: the number zero, however written (`0`, `00`, `+0`).
fn is_end_marker(text: &str) -> bool {
    let digits = text.strip_prefix('+').unwrap_or(text);
    !digits.is_empty() && digits.bytes().all(|b| b == b'0')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sizes(input: &[u8]) -> Vec<Result<u32, String>> {
        judge_sizes_from(input, |s| s.parse::<u32>().map_err(|e| e.to_string()))
            .map(|r| r.map_err(|e| e.to_string()))
            .collect()
    }

    #[test]
    fn zero_in_any_spelling_ends_the_input() {
        for end in ["0", "00", "+0", " 000 "] {
            let text = format!("4\n{end}\n5\n");
            assert_eq!(sizes(text.as_bytes()), vec![Ok(4)], "{end}");
        }
    }

    #[test]
    fn an_endless_line_is_an_error_not_unbounded_memory() {
        let zeros = vec![0u8; 10 * MAX_JUDGE_LINE as usize];
        let out = sizes(&zeros);
        assert_eq!(out.len(), 1);
        assert!(out[0].as_ref().unwrap_err().contains("longer than"));
    }

    proptest::proptest! {
        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..3000)) {
            let out = sizes(&bytes);
            proptest::prop_assert!(out.len() <= bytes.len() + 1);
        }
    }
}
