//! Checksums and crash-safe writes for result and checkpoint files.
//!
//! A file is sealed with the SHA-256 of its own JSON serialisation taken with the `checksum`
//! field empty, so any edit to a count, an id or the identity is detected on load. Files are
//! written to a temporary sibling, flushed to disk and renamed over the target, so a reader
//! (or a run resumed after `kill -9` or a power cut) sees either the complete old or the
//! complete new file, never a mixture.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;
use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::error::Error;

/// A file model that carries its own checksum.
pub(crate) trait Sealed: Serialize {
    /// The `checksum` field.
    fn checksum_mut(&mut self) -> &mut String;
}

/// The checksum `value` should carry: SHA-256 of its JSON with the checksum field empty.
pub(crate) fn digest<T: Sealed>(value: &mut T) -> String {
    let saved = std::mem::take(value.checksum_mut());
    let bytes = serde_json::to_vec(value).expect("file models always serialise");
    *value.checksum_mut() = saved;
    let hash = Sha256::digest(bytes);
    let hex: String = hash.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

/// Stores the right checksum in `value`.
pub(crate) fn seal<T: Sealed>(value: &mut T) {
    let d = digest(value);
    *value.checksum_mut() = d;
}

/// Whether the checksum stored in `value` matches its contents.
pub(crate) fn is_intact<T: Sealed>(value: &mut T) -> bool {
    let d = digest(value);
    *value.checksum_mut() == d
}

/// Seals `value` and writes it to `path` atomically, as one line of JSON.
pub(crate) fn save<T: Sealed>(value: &mut T, path: &Path) -> Result<(), Error> {
    seal(value);
    let mut bytes = serde_json::to_vec(value).expect("file models always serialise");
    bytes.push(b'\n');
    write_atomic(path, &bytes)
}

/// The largest shard result file read (they hold no per-task list: a few hundred bytes).
pub(crate) const MAX_SHARD_BYTES: u64 = 1 << 16;

/// The largest checkpoint read (a done set of any plan up to N = 28 takes at most 4 MB as
/// base64 of a run-compressed bitmap, see `checkpoint.rs`).
pub(crate) const MAX_CHECKPOINT_BYTES: u64 = 16 << 20;

/// Reads at most `max` bytes of a regular file; a larger file, or a device or FIFO (e.g.
/// `/dev/zero`), is refused before anything big is allocated (issue 12, item 3).
pub(crate) fn read_capped(path: &Path, max: u64) -> Result<Vec<u8>, String> {
    use std::io::Read as _;
    let file = File::open(path).map_err(|e| format!("cannot read it: {e}"))?;
    let meta = file
        .metadata()
        .map_err(|e| format!("cannot read it: {e}"))?;
    if !meta.is_file() {
        return Err("it is not a regular file".into());
    }
    let mut bytes = Vec::new();
    file.take(max + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read it: {e}"))?;
    if bytes.len() as u64 > max {
        return Err(format!(
            "it is larger than any file of this kind ({max} bytes at most)"
        ));
    }
    Ok(bytes)
}

/// Reads and parses a sealed file of at most `max` bytes whose `schema` must be `schema`;
/// the error text says what is wrong, for people.
pub(crate) fn load<T: Sealed + DeserializeOwned>(
    path: &Path,
    schema: &str,
    max: u64,
) -> Result<T, String> {
    let text = read_capped(path, max)?;
    let value: serde_json::Value = serde_json::from_slice(&text).map_err(|e| {
        if e.is_eof() {
            format!("it is truncated ({e})")
        } else {
            format!("it is not valid JSON ({e})")
        }
    })?;
    match value.get("schema").and_then(|s| s.as_str()) {
        Some(s) if s == schema => {}
        Some(other) => return Err(format!("it is a '{other}' file, not '{schema}'")),
        None => return Err(format!("it is not a '{schema}' file (no schema field)")),
    }
    let mut parsed: T =
        serde_json::from_value(value).map_err(|e| format!("it is malformed ({e})"))?;
    if !is_intact(&mut parsed) {
        return Err("its checksum does not match its contents (corrupted or edited)".into());
    }
    Ok(parsed)
}

/// Writes `bytes` to `path` so that `path` always holds either its old or its new contents:
/// write a temporary sibling (`.NAME.PID.tmp`, created new), fsync it, rename it over `path`,
/// fsync the folder.
///
/// Only a regular file is ever replaced: a symbolic link to a regular file is followed (the
/// file it points to is replaced, the link kept), and anything else that exists at `path` (a
/// folder, a device such as `/dev/null`, a FIFO, a socket, a dangling link) is refused
/// (issue 12): the rename would otherwise turn it into a regular file.
///
/// # Errors
/// [`Error::NotRegularFile`] for such a target; [`Error::Io`] naming the file that could not
/// be written.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    let target = write_target(path)?;
    let (dir, tmp) = temp_sibling(&target)?;
    let written = write_new(&tmp, bytes).and_then(|()| {
        std::fs::rename(&tmp, &target).map_err(|error| Error::Io {
            path: target.clone(),
            error,
        })
    });
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written?;
    // Make the rename itself durable. Some file systems refuse to sync a folder; the data
    // is already safe then, so that is not an error.
    if let Ok(d) = File::open(&dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// Checks, before any long work, that [`write_atomic`] will be able to write `path`: it is
/// not something other than a regular file, and a temporary file can be created next to it.
///
/// # Errors
/// As [`write_atomic`].
pub fn check_writable(path: &Path) -> Result<(), Error> {
    let target = write_target(path)?;
    let (_, tmp) = temp_sibling(&target)?;
    let probe = write_new(&tmp, b"");
    let _ = std::fs::remove_file(&tmp);
    probe
}

/// The file a write to `path` replaces: `path`, or the regular file a symbolic link at `path`
/// leads to.
fn write_target(path: &Path) -> Result<PathBuf, Error> {
    let refuse = |kind: &str| Error::NotRegularFile {
        path: path.to_path_buf(),
        kind: kind.to_string(),
    };
    let meta = match std::fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(path.to_path_buf()),
        Err(error) => {
            return Err(Error::Io {
                path: path.to_path_buf(),
                error,
            })
        }
    };
    if meta.is_file() {
        return Ok(path.to_path_buf());
    }
    if !meta.file_type().is_symlink() {
        return Err(refuse(file_kind(&meta.file_type())));
    }
    let target = std::fs::canonicalize(path).map_err(|_| refuse("a symbolic link to nothing"))?;
    match std::fs::metadata(&target) {
        Ok(m) if m.is_file() => Ok(target),
        Ok(m) => Err(refuse(&format!(
            "a symbolic link to {}",
            file_kind(&m.file_type())
        ))),
        Err(_) => Err(refuse("a symbolic link to nothing")),
    }
}

/// What a non-regular file is, for messages.
fn file_kind(t: &std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_block_device() || t.is_char_device() {
            return "a device";
        }
        if t.is_fifo() {
            return "a FIFO";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    if t.is_dir() {
        "a folder"
    } else {
        "not a regular file"
    }
}

/// The folder of `target` and the temporary file to write there before the rename.
fn temp_sibling(target: &Path) -> Result<(PathBuf, PathBuf), Error> {
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = target.file_name().ok_or_else(|| Error::Io {
        path: target.to_path_buf(),
        error: std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a file name"),
    })?;
    let tmp = format!(".{}.{}.tmp", name.to_string_lossy(), std::process::id());
    Ok((dir.clone(), dir.join(tmp)))
}

/// Creates `path`, which must not exist (never follows a link planted there), and writes and
/// syncs `bytes`.
fn write_new(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    let io = |error| Error::Io {
        path: path.to_path_buf(),
        error,
    };
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .map_err(io)?;
    file.write_all(bytes).map_err(io)?;
    file.sync_all().map_err(io)
}

/// Seconds rounded to whole milliseconds.
///
/// Sealed files hold floats only in this form: a short decimal parses back to exactly the same
/// `f64`, so the checksum of a re-read file always matches (serde_json's default float parser
/// may be off by one unit in the last place for long decimals).
pub(crate) fn millis(seconds: f64) -> f64 {
    (seconds * 1000.0).round() / 1000.0
}

/// Serde helpers for `u128` counts as decimal strings (no digit lost past 2^53 in JSON tools).
pub(crate) mod decimal {
    use serde::{Deserialize, Deserializer, Serializer};

    /// Writes a count as a decimal string.
    pub(crate) fn serialize<S: Serializer>(value: &u128, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(value)
    }

    /// Reads a count from a decimal string.
    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<u128, D::Error> {
        let text = String::deserialize(d)?;
        text.parse()
            .map_err(|_| serde::de::Error::custom(format!("'{text}' is not a count")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn devices_are_refused_before_anything_is_written() {
        // Only the target check runs: nothing is created next to /dev/null.
        let err = write_target(Path::new("/dev/null")).unwrap_err();
        assert!(err.to_string().contains("is a device"), "{err}");
    }

    #[test]
    fn regular_files_are_replaced_and_no_temporary_file_is_left() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.json");
        write_atomic(&path, b"one").unwrap();
        write_atomic(&path, b"two").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"two");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        check_writable(&path).unwrap();
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}
