//! The streaming tokenizer of permutation lines: numbers separated by blanks, one line per
//! permutation, and (when reading answers) the line `no solution`.

use std::io::BufRead;

use crate::error::Error;

use super::stream::Stream;
use super::{PermutationCheck, MAX_LINE_VALUES};

/// The words of a line that claims there is no solution.
const NO_SOLUTION: &[u8] = b"no solution";

/// The longest line of words kept to see whether it is [`NO_SOLUTION`].
const MAX_PHRASE: usize = 64;

/// What one non-empty line held.
pub(crate) enum Line<'a> {
    /// Its values (a line of at most the buffered length).
    Values(&'a [u32]),
    /// The check of a line too long to keep, made as it streamed.
    Checked(PermutationCheck),
    /// The line `no solution`.
    NoSolution,
}

/// The state of the streaming tokenizer.
pub(crate) struct PermReader<'a> {
    source: &'a str,
    /// When reading answers: the length every line must have, and the values from which a
    /// line streams; otherwise lines past [`MAX_LINE_VALUES`] are refused.
    answers: Option<(Option<u64>, usize)>,
    values: Vec<u32>,
    /// The check of the current line once it streams.
    stream: Option<Stream>,
    /// The bytes of a line that began with something other than a number, and the column
    /// where it did (answers only: it may be `no solution`).
    phrase: Option<(Vec<u8>, usize)>,
    line: usize,
    column: usize,
    /// The number being read, and the column where it started (0: none).
    value: u64,
    start: usize,
}

impl<'a> PermReader<'a> {
    pub(crate) fn new(source: &'a str, answers: Option<(Option<u64>, usize)>) -> Self {
        PermReader {
            source,
            answers,
            values: Vec::new(),
            stream: None,
            phrase: None,
            line: 1,
            column: 0,
            value: 0,
            start: 0,
        }
    }

    /// Reads `input` to its end, calling `each` for every non-empty line.
    pub(crate) fn read<R: BufRead>(
        mut self,
        mut input: R,
        each: &mut dyn FnMut(usize, Line<'_>) -> Result<(), Error>,
    ) -> Result<(), Error> {
        loop {
            let buf = input.fill_buf().map_err(|e| Error::Io {
                path: self.source.into(),
                error: e,
            })?;
            if buf.is_empty() {
                break;
            }
            let len = buf.len();
            self.feed(buf, each)?;
            input.consume(len);
        }
        self.feed(b"\n", each)
    }

    /// Takes a block of input, calling `each` for every non-empty line it completes.
    fn feed(
        &mut self,
        bytes: &[u8],
        each: &mut dyn FnMut(usize, Line<'_>) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let mut i = 0;
        if self.phrase.is_some() {
            i = self.phrase_until_newline(bytes, each)?;
        }
        // Locals, not fields, in the hot loop: the pushes would otherwise force reloads.
        let (mut value, mut start, mut column) = (self.value, self.start, self.column);
        while i < bytes.len() {
            let byte = bytes[i];
            i += 1;
            column += 1;
            let digit = byte.wrapping_sub(b'0');
            if digit < 10 {
                start = if start == 0 { column } else { start };
                value = value * 10 + u64::from(digit);
                if value > u64::from(u32::MAX) {
                    self.column = column;
                    return Err(self.error(start, "number too large".to_string()));
                }
                continue;
            }
            if start != 0 {
                self.column = column;
                self.push(value as u32, start)?;
                (start, value) = (0, 0);
            }
            match byte {
                b' ' | b'\t' | b'\r' => {}
                b'\n' => {
                    self.end_line(each)?;
                    column = 0;
                }
                _ if self.may_be_phrase() => {
                    self.phrase = Some((Vec::new(), column));
                    self.column = column;
                    i = i - 1 + self.phrase_until_newline(&bytes[i - 1..], each)?;
                    column = 0;
                }
                _ => {
                    let message = unexpected(&bytes[i - 1..]);
                    return Err(self.error(column, message));
                }
            }
        }
        (self.value, self.start, self.column) = (value, start, column);
        Ok(())
    }

    /// Adds a value to the current line: kept, streamed, or refused past the limit.
    #[inline(always)]
    fn push(&mut self, value: u32, start: usize) -> Result<(), Error> {
        if let Some(stream) = &mut self.stream {
            return stream.push(value);
        }
        let limit = self.answers.map_or(MAX_LINE_VALUES, |(_, from)| from);
        if self.values.len() < limit {
            self.values.push(value);
            return Ok(());
        }
        if self.answers.is_none() {
            let message = format!("more than {MAX_LINE_VALUES} numbers on one line");
            return Err(self.error(start, message));
        }
        let mut stream = Stream::new();
        for &v in &self.values {
            stream.push(v)?;
        }
        stream.push(value)?;
        self.values = Vec::new();
        self.stream = Some(stream);
        Ok(())
    }

    /// Ends a line: hands it to `each` unless it was empty.
    fn end_line(
        &mut self,
        each: &mut dyn FnMut(usize, Line<'_>) -> Result<(), Error>,
    ) -> Result<(), Error> {
        if let Some(stream) = self.stream.take() {
            let expected = self.answers.and_then(|(expected, _)| expected);
            each(self.line, Line::Checked(stream.finish(expected)))?;
        } else if !self.values.is_empty() {
            each(self.line, Line::Values(&self.values))?;
            self.values.clear();
        }
        self.line += 1;
        Ok(())
    }

    /// Whether the line so far is empty and may be words (only when reading answers).
    fn may_be_phrase(&self) -> bool {
        self.answers.is_some() && self.values.is_empty() && self.stream.is_none()
    }

    /// Adds the bytes of a words line up to its newline (which ends the line: `no
    /// solution`, or an error at its first character) and says how many it took.
    fn phrase_until_newline(
        &mut self,
        bytes: &[u8],
        each: &mut dyn FnMut(usize, Line<'_>) -> Result<(), Error>,
    ) -> Result<usize, Error> {
        let (phrase, column) = self.phrase.as_mut().expect("in a words line");
        let end = bytes.iter().position(|&b| b == b'\n');
        phrase.extend_from_slice(&bytes[..end.unwrap_or(bytes.len())]);
        let column = *column;
        let is_answer = phrase.trim_ascii() == NO_SOLUTION;
        if phrase.len() > MAX_PHRASE || (end.is_some() && !is_answer) {
            let message = unexpected(phrase);
            return Err(self.error(column, message));
        }
        let Some(end) = end else {
            return Ok(bytes.len());
        };
        self.phrase = None;
        each(self.line, Line::NoSolution)?;
        self.line += 1;
        self.column = 0;
        Ok(end + 1)
    }

    fn error(&self, column: usize, message: String) -> Error {
        Error::Parse {
            source_name: self.source.to_string(),
            line: self.line,
            column: Some(column),
            message,
        }
    }
}

/// The message for an unexpected character at the start of `bytes`.
fn unexpected(bytes: &[u8]) -> String {
    format!(
        "unexpected character {}: expected numbers separated by blanks",
        describe_char(bytes)
    )
}

/// The character that starts `bytes`, quoted, decoded as UTF-8 (so `é` reads as `'é'`, not as
/// its first byte); a byte that starts no valid character is shown in hex.
fn describe_char(bytes: &[u8]) -> String {
    let head = &bytes[..bytes.len().min(4)];
    let valid = match std::str::from_utf8(head) {
        Ok(text) => text,
        Err(e) => std::str::from_utf8(&head[..e.valid_up_to()]).unwrap_or_default(),
    };
    match valid.chars().next() {
        Some(c) => format!("{c:?}"),
        None => format!("byte 0x{:02X} (not UTF-8 text)", bytes[0]),
    }
}
