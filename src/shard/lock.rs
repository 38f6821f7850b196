//! The lock that keeps two processes off one checkpoint.

use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use super::sealed;
use crate::error::Error;

/// An advisory lock on a checkpoint: an exclusive lock on the file `.NAME.lock` beside it
/// (beside the file a symbolic link leads to) and, when the checkpoint exists, on the
/// checkpoint file itself, held until dropped (or the process ends, even by `kill -9`).
///
/// The second lock follows the file's identity rather than its name: a hard link is another
/// name of the same file, so its `.NAME.lock` differs, but its inode is the one locked here.
/// The holder keeps that file open, so its lock outlives the saves that rename a new file
/// over the name, and [`Lock::follow`] locks each new file as it is saved, so a hard link
/// made to it later is refused too.
#[derive(Debug)]
pub struct Lock {
    _file: File,
    _checkpoint: Option<File>,
    /// The file last saved under the name, locked by [`Lock::follow`].
    saved: Mutex<Option<File>>,
}

impl Lock {
    /// Locks the file now at `path` (just saved by the holder, renamed over the name) by its
    /// identity, in place of the one saved before. Best effort: where it cannot be locked,
    /// the lock by name still holds.
    pub fn follow(&self, path: &Path) {
        let Ok(target) = sealed::resolved_target(path) else {
            return;
        };
        if let Ok(Some(file)) = lock_file_itself(path, &target) {
            *self.saved.lock().unwrap_or_else(|e| e.into_inner()) = Some(file);
        }
    }
}

/// Locks the checkpoint `path` against other processes.
///
/// # Errors
/// [`Error::CheckpointLocked`] if another process holds it (still, after trying again for
/// 0.1 s: `status` may hold it shared for an instant, see [`holder`]), [`Error::CheckpointCorrupt`] if
/// `path` exists and is not a regular file, [`Error::Io`] if the lock file cannot be opened.
pub fn lock(path: &Path) -> Result<Lock, Error> {
    // A device, FIFO or folder is never a checkpoint: refuse it before creating anything
    // beside it (`--checkpoint /dev/zero` would otherwise be read without end).
    if let Some(message) = std::fs::metadata(path)
        .ok()
        .and_then(|meta| sealed::not_regular(&meta))
    {
        return Err(Error::CheckpointCorrupt {
            path: path.to_path_buf(),
            message,
        });
    }
    // The lock belongs to the file, not to its spelling: `x.json`, `./x.json` and a link to
    // it all lock `.x.json.lock` beside the file itself.
    let target = sealed::resolved_target(path)?;
    let lock_path = lock_path_of(&target);
    // Without waiting: a FIFO planted as the lock file would block a plain open.
    let mut open = OpenOptions::new();
    open.create(true).truncate(false).write(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut open, libc::O_NONBLOCK);
    let file = open.open(&lock_path).map_err(|error| Error::Io {
        path: lock_path.clone(),
        error,
    })?;
    match try_lock_patiently(&file) {
        Ok(()) => {}
        Err(std::fs::TryLockError::WouldBlock) => {
            return Err(Error::CheckpointLocked {
                path: path.to_path_buf(),
                lock: lock_path,
            })
        }
        Err(std::fs::TryLockError::Error(error)) => {
            return Err(Error::Io {
                path: lock_path,
                error,
            })
        }
    }
    let checkpoint = lock_file_itself(path, &target)?;
    Ok(Lock {
        _file: file,
        _checkpoint: checkpoint,
        saved: Mutex::new(None),
    })
}

/// Locks the existing checkpoint file `target` (named `path` by the user) by its identity, so a run reaching it through
/// a hard link (another name, another `.NAME.lock`) is refused too. `None` if there is no
/// file yet, or the file system cannot lock it (the lock by name still holds).
fn lock_file_itself(path: &Path, target: &Path) -> Result<Option<File>, Error> {
    // Read-write where allowed: NFS emulates these locks with byte-range locks, which need
    // a file opened for writing to be exclusive. Nothing is ever written through it.
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .open(target)
        .or_else(|_| File::open(target));
    let Ok(file) = file else {
        return Ok(None);
    };
    match try_lock_patiently(&file) {
        Ok(()) => Ok(Some(file)),
        Err(std::fs::TryLockError::WouldBlock) => Err(Error::CheckpointLocked {
            path: path.to_path_buf(),
            lock: target.to_path_buf(),
        }),
        Err(std::fs::TryLockError::Error(_)) => Ok(None),
    }
}

/// Tries to lock `file` exclusively, again for a few milliseconds if it is held: `status`
/// probes a lock by holding it shared for an instant ([`holder`]), and a run starting in that
/// instant must not take the probe for a second run. A real holder keeps its lock for the
/// whole run, so a true refusal is only that much later.
fn try_lock_patiently(file: &File) -> Result<(), std::fs::TryLockError> {
    let mut tries = 0;
    loop {
        match file.try_lock() {
            Err(std::fs::TryLockError::WouldBlock) if tries < PATIENT_TRIES => {
                tries += 1;
                #[cfg(test)]
                tests::between_tries();
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            other => return other,
        }
    }
}

/// How often [`try_lock_patiently`] tries again, 10 ms apart.
const PATIENT_TRIES: u32 = 10;

/// Whether a process is on a checkpoint, as its lock says ([`holder`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Holder {
    /// A live process holds the checkpoint's lock: its run is going on.
    Running,
    /// No process holds it: the run that wrote the checkpoint ended, was stopped or was
    /// killed (a lock dies with its process, even by `kill -9`).
    Stopped,
    /// The lock could not be probed (a file system without locks, a lock file that cannot be
    /// opened): only the checkpoint's age can tell.
    Unknown,
}

/// Who holds the lock of checkpoint `path`, asked without taking anything from a holder:
/// a shared lock is tried on the lock file and on the checkpoint itself, each opened
/// read-only (nothing is created), and let go at once. A running process's exclusive lock
/// makes the try fail and is left as it was; a run starting at that very instant waits the
/// few milliseconds out ([`lock`] tries again for that long).
///
/// Both files are asked because the holder locks the checkpoint file it saved last only just
/// after renaming it into place ([`Lock::follow`]), while its lock file stays held throughout.
pub fn holder(path: &Path) -> Holder {
    let Ok(target) = sealed::resolved_target(path) else {
        return Holder::Unknown;
    };
    match (is_held(&lock_path_of(&target)), is_held(&target)) {
        (Some(true), _) | (_, Some(true)) => Holder::Running,
        (Some(false), _) => Holder::Stopped,
        (None, _) => Holder::Unknown,
    }
}

/// Whether another process holds a lock on `path`: `Some(false)` if it is free or there is
/// no such file (every run creates its lock file before it saves), `None` if it cannot tell.
fn is_held(path: &Path) -> Option<bool> {
    // Without waiting: `status` must not block on a FIFO planted as a lock file.
    let file = match sealed::open_nonblocking(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Some(false),
        Err(_) => return None,
    };
    match file.try_lock_shared() {
        // Dropping the file lets the shared lock go.
        Ok(()) => Some(false),
        Err(std::fs::TryLockError::WouldBlock) => Some(true),
        Err(std::fs::TryLockError::Error(_)) => None,
    }
}

/// The lock file of the checkpoint `target` (resolved, [`sealed::resolved_target`]).
fn lock_path_of(target: &Path) -> PathBuf {
    let dir = target.parent().unwrap_or(Path::new("."));
    dir.join(lock_name(target.file_name().unwrap_or_default()))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_checkpoint_reached_through_a_hard_link_is_refused_while_held() {
        let tmp = tempfile::tempdir().unwrap();
        let (name, link) = (tmp.path().join("a.ckpt"), tmp.path().join("b.ckpt"));
        std::fs::write(&name, "{}").unwrap();
        std::fs::hard_link(&name, &link).unwrap();
        let held = lock(&name).unwrap();
        let err = lock(&link).unwrap_err();
        assert!(matches!(err, Error::CheckpointLocked { .. }), "{err}");
        // The holder's saves rename new files over its name; the link still names the file
        // it locked, so the refusal lasts.
        std::fs::write(tmp.path().join("new"), "{}").unwrap();
        std::fs::rename(tmp.path().join("new"), &name).unwrap();
        assert!(matches!(lock(&link), Err(Error::CheckpointLocked { .. })));
        drop(held);
        assert!(lock(&link).is_ok(), "free again once the holder is gone");
    }

    #[test]
    fn a_held_lock_says_running_and_a_free_one_stopped_and_the_probe_creates_nothing() {
        let tmp = tempfile::tempdir().unwrap();
        let name = tmp.path().join("a.ckpt");
        std::fs::write(&name, "{}").unwrap();
        // Never run here: no lock file, and asking makes none.
        assert_eq!(holder(&name), Holder::Stopped);
        assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 1);
        let held = lock(&name).unwrap();
        assert_eq!(holder(&name), Holder::Running);
        // The probe took nothing: the holder still holds, and a second run is refused.
        assert!(matches!(lock(&name), Err(Error::CheckpointLocked { .. })));
        assert_eq!(holder(&name), Holder::Running);
        drop(held);
        assert_eq!(
            holder(&name),
            Holder::Stopped,
            "a lock dies with its holder"
        );
    }

    #[test]
    fn a_run_starting_while_status_probes_is_not_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let name = tmp.path().join("a.ckpt");
        drop(lock(&name).unwrap());
        // What a probe holds, let go of between the run's first and second tries.
        let probe = File::open(lock_path_of(&sealed::resolved_target(&name).unwrap())).unwrap();
        probe.lock_shared().unwrap();
        LET_GO.with(|held| *held.borrow_mut() = Some(probe));
        assert!(lock(&name).is_ok());
        assert!(
            LET_GO.with(|held| held.borrow().is_none()),
            "refused at first, the run tried again"
        );
    }

    thread_local! {
        /// What a test on this thread holds until a lock is tried again ([`between_tries`]).
        static LET_GO: std::cell::RefCell<Option<File>> = const { std::cell::RefCell::new(None) };
    }

    /// Called between two tries of a held lock: lets go of what this thread's test holds, so
    /// a test can end a probe at that point whatever the clock says.
    pub(super) fn between_tries() {
        LET_GO.with(|held| drop(held.borrow_mut().take()));
    }

    #[test]
    fn a_hard_link_to_a_file_saved_after_the_lock_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let (name, link) = (tmp.path().join("a.ckpt"), tmp.path().join("b.ckpt"));
        // A fresh run: no file to lock yet; its first save makes one.
        let held = lock(&name).unwrap();
        crate::shard::write_atomic(&name, b"{}").unwrap();
        held.follow(&name);
        std::fs::hard_link(&name, &link).unwrap();
        assert!(matches!(lock(&link), Err(Error::CheckpointLocked { .. })));
    }
}
