//! The lock that keeps two processes off one checkpoint.

use std::fs::{File, OpenOptions};
use std::path::Path;

use super::sealed;
use crate::error::Error;

/// An advisory lock on a checkpoint: an exclusive lock on the file `.NAME.lock` beside it
/// (beside the file a symbolic link leads to), held until dropped (or the process ends, even
/// by `kill -9`).
#[derive(Debug)]
pub struct Lock {
    _file: File,
}

/// Locks the checkpoint `path` against other processes.
///
/// # Errors
/// [`Error::CheckpointLocked`] if another process holds it, [`Error::CheckpointCorrupt`] if
/// `path` exists and is not a regular file, [`Error::Io`] if the lock file cannot be opened.
pub fn lock(path: &Path) -> Result<Lock, Error> {
    // A device, FIFO or folder is never a checkpoint: refuse it before creating anything
    // beside it (`--checkpoint /dev/zero` would otherwise be read without end).
    if let Ok(meta) = std::fs::metadata(path) {
        if !meta.is_file() {
            return Err(Error::CheckpointCorrupt {
                path: path.to_path_buf(),
                message: "it is not a regular file".into(),
            });
        }
    }
    // The lock belongs to the file, not to its spelling: `x.json`, `./x.json` and a link to
    // it all lock `.x.json.lock` beside the file itself.
    let target = sealed::resolved_target(path)?;
    let dir = target.parent().unwrap_or(Path::new("."));
    let lock_path = dir.join(lock_name(target.file_name().unwrap_or_default()));
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .map_err(|error| Error::Io {
            path: lock_path.clone(),
            error,
        })?;
    match file.try_lock() {
        Ok(()) => Ok(Lock { _file: file }),
        Err(std::fs::TryLockError::WouldBlock) => Err(Error::CheckpointLocked {
            path: path.to_path_buf(),
            lock: lock_path,
        }),
        Err(std::fs::TryLockError::Error(error)) => Err(Error::Io {
            path: lock_path,
            error,
        }),
    }
}

/// The longest checkpoint name kept whole in its lock file's name: with the dot and
/// `.lock`, the name stays within the 255 bytes most file systems allow.
const MAX_LOCK_STEM: usize = 200;

/// The lock file's name for a checkpoint called `name`: `.NAME.lock`, or for a name too
/// long for that, its first bytes and a hash of the whole name (still one lock per file).
fn lock_name(name: &std::ffi::OsStr) -> String {
    use sha2::Digest as _;
    let name = name.to_string_lossy();
    if name.len() <= MAX_LOCK_STEM {
        return format!(".{name}.lock");
    }
    let mut end = MAX_LOCK_STEM - 20;
    while !name.is_char_boundary(end) {
        end -= 1;
    }
    let hash = sha2::Sha256::digest(name.as_bytes());
    format!(".{}.{}.lock", &name[..end], sealed::hex(&hash[..8]))
}
