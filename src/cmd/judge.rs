//! The judge format (`count --stdin`, `place --stdin`): one size per line in, one answer per
//! line out, fast for a million lines from a file and prompt for a judge that waits for
//! each answer before it writes the next question.
//!
//! Answers are buffered and written when no whole question is left to read (the judge may be
//! waiting for them), when a tenth of a second has passed since the last write (a slow
//! answer holds none back), and at the end; never once per line.

use std::io::{BufRead, BufReader, Read, Write};
use std::time::{Duration, Instant};

/// The longest line the judge format reads (a board size needs a few bytes).
pub(crate) const MAX_JUDGE_LINE: u64 = 1024;

/// The most time an answer waits in the buffer while more are computed.
const MAX_DELAY: Duration = Duration::from_millis(100);

/// Read buffer: many questions per read from a file or pipe.
const READ_BUFFER: usize = 1 << 16;

/// One line of judge input: a size, or a blank line (which gets a blank answer, so answers
/// stay aligned with questions).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Question<T> {
    /// A size, as the parser read it.
    Size(T),
    /// A line of nothing but blanks.
    Blank,
}

/// Questions: one size per line until a line `0` or the end of input.
/// Lines longer than [`MAX_JUDGE_LINE`] bytes are an error, so endless input without
/// newlines (`/dev/zero`) cannot take unbounded memory.
pub(crate) struct Questions<R> {
    input: BufReader<R>,
    line: usize,
    done: bool,
}

impl Questions<std::io::Stdin> {
    /// The questions on standard input.
    pub(crate) fn stdin() -> Self {
        Questions::new(std::io::stdin())
    }
}

impl<R: Read> Questions<R> {
    /// The questions read from `input`.
    pub(crate) fn new(input: R) -> Self {
        Questions {
            input: BufReader::with_capacity(READ_BUFFER, input),
            line: 0,
            done: false,
        }
    }

    /// Whether reading the next question may wait for input: no whole line is buffered,
    /// so the answers so far must be out first.
    pub(crate) fn may_wait(&self) -> bool {
        !self.input.buffer().contains(&b'\n')
    }

    /// The next size, as `parse` reads it, or an error naming its line, blank lines
    /// skipped; `None` at the end.
    pub(crate) fn next<T>(
        &mut self,
        parse: impl Fn(&str) -> Result<T, String>,
    ) -> Option<anyhow::Result<T>> {
        loop {
            match self.next_line(&parse)? {
                Ok(Question::Blank) => continue,
                Ok(Question::Size(size)) => return Some(Ok(size)),
                Err(e) => return Some(Err(e)),
            }
        }
    }

    /// The next line: a size, as `parse` reads it, or a blank line; an error naming its
    /// line; `None` at the end.
    pub(crate) fn next_line<T>(
        &mut self,
        parse: impl Fn(&str) -> Result<T, String>,
    ) -> Option<anyhow::Result<Question<T>>> {
        if self.done {
            return None;
        }
        self.line += 1;
        let line = match read_line(&mut self.input) {
            Ok(Some(line)) => line,
            Ok(None) => return None,
            Err(message) => {
                self.done = true;
                return Some(Err(self.error(message)));
            }
        };
        let text = line.trim();
        if text.is_empty() {
            return Some(Ok(Question::Blank));
        }
        if is_end_marker(text) {
            self.done = true;
            return None;
        }
        Some(
            parse(text)
                .map(Question::Size)
                .map_err(|message| self.error(message)),
        )
    }

    /// The number of the line read last (from 1).
    pub(crate) fn line(&self) -> usize {
        self.line
    }

    fn error(&self, message: String) -> anyhow::Error {
        nqueens::Error::Parse {
            source_name: "<stdin>".to_string(),
            line: self.line,
            column: None,
            message,
        }
        .into()
    }
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

/// Answers, buffered and written out as the module docs say.
pub(crate) struct Answers<W: Write> {
    out: std::io::BufWriter<W>,
    written: Instant,
}

impl<W: Write> Answers<W> {
    /// Answers written to `out`.
    pub(crate) fn new(out: W) -> Self {
        Answers {
            out: std::io::BufWriter::with_capacity(READ_BUFFER, out),
            written: Instant::now(),
        }
    }

    /// Where to write the next answer.
    pub(crate) fn out(&mut self) -> &mut impl Write {
        &mut self.out
    }

    /// After an answer: writes what is buffered if it has waited long enough.
    pub(crate) fn answered(&mut self) -> std::io::Result<()> {
        if self.written.elapsed() >= MAX_DELAY {
            self.flush()?;
        }
        Ok(())
    }

    /// Before reading a question: writes what is buffered if `questions` may wait.
    pub(crate) fn before<R: Read>(&mut self, questions: &Questions<R>) -> std::io::Result<()> {
        if questions.may_wait() {
            self.flush()?;
        }
        Ok(())
    }

    /// Writes everything buffered.
    pub(crate) fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()?;
        self.written = Instant::now();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sizes(input: &[u8]) -> Vec<Result<u32, String>> {
        let mut questions = Questions::new(input);
        std::iter::from_fn(|| questions.next(|s| s.parse::<u32>().map_err(|e| e.to_string())))
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
    fn blank_lines_are_questions_of_their_own_where_asked_for() {
        let mut questions = Questions::new(&b"4\n\n  \n5\n"[..]);
        let parse = |s: &str| s.parse::<u32>().map_err(|e| e.to_string());
        let lines: Vec<Question<u32>> = std::iter::from_fn(|| questions.next_line(parse))
            .map(Result::unwrap)
            .collect();
        use Question::{Blank, Size};
        assert_eq!(lines, [Size(4), Blank, Blank, Size(5)]);
        assert_eq!(questions.line(), 5, "the end of input is read as line 5");
        assert_eq!(sizes(b"4\n\n5\n"), vec![Ok(4), Ok(5)], "next skips them");
    }

    #[test]
    fn an_endless_line_is_an_error_not_unbounded_memory() {
        let zeros = vec![0u8; 10 * MAX_JUDGE_LINE as usize];
        let out = sizes(&zeros);
        assert_eq!(out.len(), 1);
        assert!(out[0].as_ref().unwrap_err().contains("longer than"));
    }

    #[test]
    fn answers_wait_only_while_whole_questions_are_buffered() {
        let mut questions = Questions::new(&b"4\n5\n6"[..]);
        assert!(questions.may_wait(), "nothing read yet");
        let parse = |s: &str| s.parse::<u32>().map_err(|e| e.to_string());
        assert_eq!(questions.next(parse).unwrap().unwrap(), 4);
        assert!(!questions.may_wait(), "5 is buffered");
        assert_eq!(questions.next(parse).unwrap().unwrap(), 5);
        assert!(
            questions.may_wait(),
            "6 has no newline yet: the judge may be typing"
        );
        let mut answers = Answers::new(Vec::new());
        writeln!(answers.out(), "92").unwrap();
        answers.before(&questions).unwrap();
        assert_eq!(
            answers.out.get_ref(),
            b"92\n",
            "out before the judge is waited for"
        );
    }

    proptest::proptest! {
        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..3000)) {
            let out = sizes(&bytes);
            proptest::prop_assert!(out.len() <= bytes.len() + 1);
        }
    }
}
