//! Output files that already exist: a command replaces its own earlier output of the same
//! kind (a shard's result of the same run, a previous bench export) without being asked, and
//! anything else only with `--force`. A typo must not turn a binary or a paper into a report.

use std::path::Path;

use crate::exit::UsageError;

/// The most bytes read to recognise an earlier output (bench reports and plots are a few
/// kilobytes; shard results are read by their own loader, which has its own cap).
pub(crate) const MAX_RECOGNISED_BYTES: u64 = 1 << 20;

/// Refuses, as a usage error, to let `flag` replace `path` unless `force` is set, nothing is
/// there, it is an empty file (what `mktemp` or `touch` leaves), or `earlier` accepts it as
/// this command's own output; `earlier` says otherwise what the file is ("is not …").
/// Anything but a regular file is left to the write, which refuses it with its own words.
pub(crate) fn check(
    path: &Path,
    flag: &str,
    force: bool,
    earlier: impl FnOnce(&Path) -> Result<(), String>,
) -> Result<(), UsageError> {
    let Ok(meta) = std::fs::metadata(path) else {
        return Ok(());
    };
    if force || !meta.is_file() || meta.len() == 0 {
        return Ok(());
    }
    earlier(path).map_err(|what| {
        UsageError(format!(
            "{flag} '{}' exists and {what}: it is left as it is (use --force to replace it, \
             or another name)",
            path.display()
        ))
    })
}

/// The first [`MAX_RECOGNISED_BYTES`] of `path` as text, for a recogniser; `None` if it is
/// larger or not UTF-8 (then it is no output of ours).
pub(crate) fn read_text(path: &Path) -> Option<String> {
    let file = std::fs::File::open(path).ok()?;
    let bytes = nqueens::shard::read_at_most(file, MAX_RECOGNISED_BYTES).ok()??;
    String::from_utf8(bytes).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_missing_empty_or_recognised_files_are_replaced_without_force() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out");
        let mine = |_: &Path| Ok(());
        let theirs = |_: &Path| Err("is not mine".to_string());
        assert!(check(&path, "--out", false, theirs).is_ok(), "missing");
        std::fs::write(&path, b"").unwrap();
        assert!(check(&path, "--out", false, theirs).is_ok(), "empty");
        std::fs::write(&path, b"#!/bin/sh\n").unwrap();
        let err = check(&path, "--out", false, theirs).unwrap_err().0;
        assert!(
            err.contains("is not mine") && err.contains("--force"),
            "{err}"
        );
        assert!(check(&path, "--out", false, mine).is_ok());
        assert!(check(&path, "--out", true, theirs).is_ok());
        assert!(
            check(dir.path(), "--out", false, theirs).is_ok(),
            "a folder"
        );
    }
}
