//! Slurm job arrays of any size: a cluster refuses an array whose indices reach its
//! `MaxArraySize` (1001 unless configured), so K shards are submitted as several arrays of at
//! most that many tasks, array task `T` of the array at offset `O` counting shard `O + T`.

use std::fmt::Write as _;
use std::time::{Duration, Instant};

/// Slurm's default `MaxArraySize`: array indices run from 0 to 1000.
pub const DEFAULT_MAX_ARRAY_SIZE: usize = 1001;

/// The `MaxArraySize` in the text of `scontrol show config`; `None` if it is not there.
pub fn max_array_size_from_config(text: &str) -> Option<usize> {
    text.lines().find_map(|line| {
        let (key, value) = line.split_once('=')?;
        let size = value.trim().parse().ok()?;
        (key.trim() == "MaxArraySize" && size > 0).then_some(size)
    })
}

/// How long `scontrol` may take to answer: without a reachable controller it retries for
/// many seconds, and an estimate or status must not wait for that.
const SCONTROL_WAIT: Duration = Duration::from_secs(3);

/// This cluster's `MaxArraySize` from `scontrol show config`, or
/// [`DEFAULT_MAX_ARRAY_SIZE`] where Slurm cannot be asked (no `scontrol`, no controller
/// answering within a few seconds).
pub fn detect_max_array_size() -> usize {
    scontrol_config()
        .and_then(|text| max_array_size_from_config(&text))
        .unwrap_or(DEFAULT_MAX_ARRAY_SIZE)
}

/// The output of `scontrol show config`, if it succeeds within [`SCONTROL_WAIT`].
fn scontrol_config() -> Option<String> {
    use std::io::Read as _;
    use std::process::{Command, Stdio};
    let mut child = Command::new("scontrol")
        .args(["show", "config"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if started.elapsed() < SCONTROL_WAIT => {
                std::thread::sleep(Duration::from_millis(20))
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    };
    // The configuration is a few kilobytes; a pipe holds 64 kB, so the child never blocks
    // on writing before it exits. Read at most 1 MB of it.
    let mut text = String::new();
    let stdout = child.stdout.take()?;
    stdout.take(1 << 20).read_to_string(&mut text).ok()?;
    status.success().then_some(text)
}

/// One Slurm array of a submission: its task `T` counts shard `offset + T`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ArrayChunk {
    /// The shard index of array task 0.
    pub offset: usize,
    /// The `--array` list, e.g. `0-3,7,9-12` (indices relative to `offset`).
    pub list: String,
    /// How many tasks the list names.
    pub tasks: usize,
}

/// The inclusive ranges of the sorted, distinct `indices`.
pub fn ranges(indices: impl IntoIterator<Item = usize>) -> Vec<(usize, usize)> {
    let mut out: Vec<(usize, usize)> = Vec::new();
    for i in indices {
        match out.last_mut() {
            Some((_, end)) if end.checked_add(1) == Some(i) => *end = i,
            _ => out.push((i, i)),
        }
    }
    out
}

/// The arrays that run exactly the shards in `ranges` (inclusive, ascending, disjoint) with
/// every index below `max_array_size`: one array per block of `max_array_size` shards that
/// holds any of them. At most `max_chunks` arrays are made (the caller compares their
/// `tasks` with what it asked for), so a forged K cannot make the list endless.
pub fn array_chunks(
    ranges: &[(usize, usize)],
    max_array_size: usize,
    max_chunks: usize,
) -> Vec<ArrayChunk> {
    let max = max_array_size.max(1);
    let mut chunks: Vec<ArrayChunk> = Vec::new();
    for &(mut from, to) in ranges {
        while from <= to {
            let offset = from / max * max;
            let new_chunk = chunks.last().is_none_or(|c| c.offset != offset);
            if new_chunk && chunks.len() == max_chunks {
                return chunks;
            }
            let end = to.min(offset + (max - 1));
            add_range(&mut chunks, offset, from - offset, end - offset);
            match end.checked_add(1) {
                Some(next) => from = next,
                None => break,
            }
        }
    }
    chunks
}

/// Adds the relative range `a..=b` to the chunk at `offset` (the last one, or a new one).
fn add_range(chunks: &mut Vec<ArrayChunk>, offset: usize, a: usize, b: usize) {
    if chunks.last().is_none_or(|c| c.offset != offset) {
        chunks.push(ArrayChunk {
            offset,
            list: String::new(),
            tasks: 0,
        });
    }
    let chunk = chunks.last_mut().expect("just pushed");
    if !chunk.list.is_empty() {
        chunk.list.push(',');
    }
    let _ = match a == b {
        true => write!(chunk.list, "{a}"),
        false => write!(chunk.list, "{a}-{b}"),
    };
    chunk.tasks += b - a + 1;
}

/// `word` quoted for a POSIX shell (as is when it needs no quoting).
pub fn shell_quote(word: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "-_./=:,+%@".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        return word.to_string();
    }
    format!("'{}'", word.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn max_array_size_is_read_from_scontrol_output() {
        let text = "MailProg                = /bin/true\nMaxArraySize            = 4\n";
        assert_eq!(max_array_size_from_config(text), Some(4));
        assert_eq!(max_array_size_from_config("MaxJobCount = 10000\n"), None);
    }

    #[test]
    fn chunks_keep_every_index_below_the_limit_and_cover_each_shard_once() {
        let ranges = ranges([0, 1, 2, 3, 5, 9, 10, 11, 12, 13]);
        assert_eq!(ranges, vec![(0, 3), (5, 5), (9, 13)]);
        let chunks = array_chunks(&ranges, 4, 100);
        assert_eq!(array_chunks(&ranges, 4, 2).len(), 2);
        let lists: Vec<(usize, &str)> = chunks.iter().map(|c| (c.offset, &*c.list)).collect();
        assert_eq!(
            lists,
            vec![(0, "0-3"), (4, "1"), (8, "1-3"), (12, "0-1")],
            "{chunks:?}"
        );
        assert_eq!(chunks.iter().map(|c| c.tasks).sum::<usize>(), 10);
    }

    #[test]
    fn shell_words_are_quoted_only_when_needed() {
        assert_eq!(shell_quote("--engine"), "--engine");
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
        assert_eq!(shell_quote(""), "''");
    }
}
