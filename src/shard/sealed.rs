//! Checksums and crash-safe writes for result and checkpoint files.
//!
//! A file is sealed with the SHA-256 of its own JSON serialisation taken with the `checksum`
//! field empty, so any edit to a count, an id or the identity is detected on load. Files are
//! written to a temporary sibling, flushed to disk and renamed over the target, so a reader
//! (or a run resumed after `kill -9` or a power cut) sees either the complete old or the
//! complete new file, never a mixture.

use std::fs::File;
use std::io::{Read, Write};
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
    format!("sha256:{}", hex(&Sha256::digest(bytes)))
}

/// `bytes` in lower-case hexadecimal.
pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
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

/// Reads `reader` to its end if it holds at most `max` bytes; `Ok(None)` if it holds more.
/// Never reads or allocates more than `max + 1` bytes, so endless input (`/dev/zero`) or a
/// huge file is refused cheaply.
///
/// # Errors
/// Any error of the reader.
pub fn read_at_most(reader: impl Read, max: u64) -> std::io::Result<Option<Vec<u8>>> {
    let mut bytes = Vec::new();
    reader.take(max.saturating_add(1)).read_to_end(&mut bytes)?;
    Ok((bytes.len() as u64 <= max).then_some(bytes))
}

/// Reads at most `max` bytes of a regular file; a larger file, or a device or FIFO (e.g.
/// `/dev/zero`), is refused before anything big is allocated, and before it is opened: a
/// FIFO's `open` waits for a writer that may never come.
pub(crate) fn read_capped(path: &Path, max: u64) -> Result<Vec<u8>, String> {
    let file = open_regular(path)?;
    read_at_most(file, max)
        .map_err(|e| format!("cannot read it: {e}"))?
        .ok_or_else(|| format!("it is larger than any file of this kind ({max} bytes at most)"))
}

/// Opens `path` for reading if it is a regular file (after links), without ever waiting: it
/// is looked at before it is opened, and opened without blocking in case it was swapped for
/// a FIFO in between. The error says what it is instead.
pub(crate) fn open_regular(path: &Path) -> Result<File, String> {
    let cannot = |e: std::io::Error| format!("cannot read it: {e}");
    if let Some(why) = not_regular(&std::fs::metadata(path).map_err(cannot)?) {
        return Err(why);
    }
    let file = open_nonblocking(path).map_err(cannot)?;
    match not_regular(&file.metadata().map_err(cannot)?) {
        Some(why) => Err(why),
        None => Ok(file),
    }
}

/// Opens `path` read-only without waiting on a FIFO or a device (`O_NONBLOCK`, which regular
/// files ignore).
pub(crate) fn open_nonblocking(path: &Path) -> std::io::Result<File> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, libc::O_NONBLOCK);
    options.open(path)
}

/// Why a file with metadata `meta` is not a regular file (`"it is a FIFO (named pipe), not a
/// regular file"`), or `None` if it is one.
pub(crate) fn not_regular(meta: &std::fs::Metadata) -> Option<String> {
    let kind = meta.file_type();
    if kind.is_file() {
        return None;
    }
    let what = match kind.is_dir() {
        true => Some("a folder"),
        false => unix_kind(&kind),
    };
    Some(match what {
        Some(what) => format!("it is {what}, not a regular file"),
        None => "it is not a regular file".to_string(),
    })
}

/// The name of a Unix special file's kind.
#[cfg(unix)]
fn unix_kind(kind: &std::fs::FileType) -> Option<&'static str> {
    use std::os::unix::fs::FileTypeExt as _;
    let names = [
        (kind.is_fifo(), "a FIFO (named pipe)"),
        (kind.is_socket(), "a socket"),
        (kind.is_char_device(), "a character device"),
        (kind.is_block_device(), "a block device"),
    ];
    names.into_iter().find(|(is, _)| *is).map(|(_, name)| name)
}

#[cfg(not(unix))]
fn unix_kind(_kind: &std::fs::FileType) -> Option<&'static str> {
    None
}

/// The schema tag of a file that must be `schema` (or `older`, a previous schema still
/// read); the error text says what the file is instead, for people.
pub(crate) fn expect_schema<'a>(
    value: &'a serde_json::Value,
    schema: &str,
    older: Option<&str>,
) -> Result<&'a str, String> {
    match value.get("schema").and_then(|s| s.as_str()) {
        Some(s) if s == schema || Some(s) == older => Ok(s),
        Some(other) => Err(match older {
            Some(older) => {
                format!("it is a '{other}' file, not '{schema}' (or the older '{older}')")
            }
            None => format!("it is a '{other}' file, not '{schema}'"),
        }),
        None => Err(format!("it is not a '{schema}' file (no schema field)")),
    }
}

/// Reads at most `max` bytes of `path` as JSON, before any schema is known.
pub(crate) fn read_json(path: &Path, max: u64) -> Result<serde_json::Value, String> {
    let text = read_capped(path, max)?;
    serde_json::from_slice(&text).map_err(|e| {
        if e.is_eof() {
            format!("it is truncated ({e})")
        } else {
            format!("it is not valid JSON ({e})")
        }
    })
}

/// Parses `value` as a `T` and checks its checksum over `T`'s own serialisation, so each
/// file model checks the layout it was written with.
pub(crate) fn parse<T: Sealed + DeserializeOwned>(value: serde_json::Value) -> Result<T, String> {
    let mut parsed: T =
        serde_json::from_value(value).map_err(|e| format!("it is malformed ({e})"))?;
    if !is_intact(&mut parsed) {
        return Err("its checksum does not match its contents (corrupted or edited)".into());
    }
    Ok(parsed)
}

/// Writes `bytes` to `path` so that `path` always holds either its old or its new contents:
/// write a temporary sibling (`.NAME.RANDOM.tmp`), fsync it, rename it over `path`, fsync the
/// folder.
///
/// The temporary file has a random name, is created exclusively (never following a link
/// planted there) and another name is tried on a clash ([`tempfile`] does all three), so a
/// file left by a killed process, even one with the same PID (a container's PID 1, a Slurm
/// requeue in a fresh PID namespace), never stands in the way. On any
/// failure it is removed, so a full disk leaves no half-written file.
///
/// Only a regular file is ever replaced: a symbolic link to a regular file is followed (the
/// file it points to is replaced, the link kept), and anything else that exists at `path` (a
/// folder, a device such as `/dev/null`, a FIFO, a socket, a dangling link) is refused
/// (a FIFO, device or folder): the rename would otherwise turn it into a regular file.
///
/// # Errors
/// [`Error::NotRegularFile`] for such a target; [`Error::Io`] naming the file that could not
/// be written.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    write_atomic_with(path, |file| file.write_all(bytes))
}

/// [`write_atomic`] with the contents written by `write` (a seam for tests that fail the
/// write part-way, as a full disk does).
pub(crate) fn write_atomic_with(
    path: &Path,
    write: impl FnOnce(&mut File) -> std::io::Result<()>,
) -> Result<(), Error> {
    let target = write_target(path)?;
    let (dir, name) = parent_and_name(&target)?;
    let tmp = write_temp(&dir, &name, write)?;
    // On failure the temporary file comes back inside the error and is removed when dropped.
    tmp.persist(&target).map_err(|e| Error::Io {
        path: target.clone(),
        error: e.error,
    })?;
    // Make the rename itself durable. Some file systems refuse to sync a folder; the data
    // is already safe then, so that is not an error.
    if let Ok(d) = File::open(&dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// Checks, before any long work, that [`write_atomic`] will be able to write `bytes` bytes to
/// `path`: it is not something other than a regular file, and a temporary file of that size
/// can be written and synced next to it. Writing the real size matters: an empty file can
/// be created on a full disk.
///
/// # Errors
/// As [`write_atomic`].
pub fn check_writable(path: &Path, bytes: usize) -> Result<(), Error> {
    let target = write_target(path)?;
    let (dir, name) = parent_and_name(&target)?;
    let zeros = [0u8; 4096];
    let probe = write_temp(&dir, &name, |file| {
        let mut left = bytes;
        while left > 0 {
            let chunk = left.min(zeros.len());
            file.write_all(&zeros[..chunk])?;
            left -= chunk;
        }
        Ok(())
    })?;
    // Dropping the probe removes it.
    drop(probe);
    Ok(())
}

/// Whether writes to `a` and `b` replace the same file, however the paths are spelled
/// (`x.json`, `./x.json`, `dir/../x.json`, a symbolic link to it, a linked folder). `false`
/// when either cannot be resolved (its folder is missing): [`check_writable`] reports that.
pub fn is_same_file(a: &Path, b: &Path) -> bool {
    matches!((resolved_target(a), resolved_target(b)), (Ok(x), Ok(y)) if x == y)
}

/// The file a write to `path` replaces, as an absolute path without links: the canonical
/// folder and the file's name. Two spellings of one file give the same path, so a lock or a
/// comparison keyed on it belongs to the file, not to the spelling.
pub(crate) fn resolved_target(path: &Path) -> Result<PathBuf, Error> {
    let target = write_target(path)?;
    let (dir, name) = parent_and_name(&target)?;
    let dir = std::fs::canonicalize(&dir).map_err(|error| Error::Io { path: dir, error })?;
    Ok(dir.join(name))
}

/// Creates a temporary file in `dir`, named after `name`, writes it with `write` and syncs it.
fn write_temp(
    dir: &Path,
    name: &std::ffi::OsStr,
    write: impl FnOnce(&mut File) -> std::io::Result<()>,
) -> Result<tempfile::NamedTempFile, Error> {
    let prefix = temp_prefix(name);
    // tempfile picks the random name and retries on a clash; the file is opened here, created
    // new (never following a link planted there) with the default mode of a new file (0666
    // less the umask): a result file must stay readable by the group that merges it.
    let open = |path: &Path| {
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path)
    };
    let mut tmp = tempfile::Builder::new()
        .prefix(&prefix)
        .suffix(".tmp")
        .rand_bytes(8)
        .make_in(dir, open)
        .map_err(|error| Error::Io {
            path: dir.to_path_buf(),
            // The folder itself may well exist ("/proc/self: No such file or directory"
            // would puzzle anyone): say what failed in it.
            error: std::io::Error::new(
                error.kind(),
                format!("cannot create a file in this folder ({error})"),
            ),
        })?;
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |error| Error::Io { path, error }
    };
    write(tmp.as_file_mut()).map_err(io(tmp.path()))?;
    tmp.as_file().sync_all().map_err(io(tmp.path()))?;
    Ok(tmp)
}

/// The longest file-name part of a temporary file's prefix, in bytes: with the dot, the
/// separator, 8 random characters and `.tmp`, the name stays within the 255 bytes most file
/// systems allow, whatever the length of the target's name.
const MAX_TEMP_STEM: usize = 200;

/// `.NAME.`, with NAME cut (at a character boundary) to [`MAX_TEMP_STEM`] bytes.
fn temp_prefix(name: &std::ffi::OsStr) -> String {
    let name = name.to_string_lossy();
    let mut end = name.len().min(MAX_TEMP_STEM);
    while !name.is_char_boundary(end) {
        end -= 1;
    }
    format!(".{}.", &name[..end])
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
        if let Some(kind) = kernel_file(path) {
            return Err(refuse(kind));
        }
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

/// What `path` is, if it looks like a regular file but lives on a file system of the kernel
/// (`/proc`, `/sys`): no file can be created next to it, and writing it is no result file.
#[cfg(target_os = "linux")]
fn kernel_file(path: &Path) -> Option<&'static str> {
    use std::os::unix::ffi::OsStrExt;
    const PROC_SUPER_MAGIC: i64 = 0x9fa0;
    const SYSFS_MAGIC: i64 = 0x6265_6572;
    let name = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
    // SAFETY: all zeros is a valid value of this plain C struct.
    let mut fs: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: `name` is a NUL-terminated path and `fs` a writable struct statfs(2) fills in.
    if unsafe { libc::statfs(name.as_ptr(), &mut fs) } != 0 {
        return None;
    }
    // `f_type`'s type differs between platforms (a 64-bit integer on 64-bit Linux).
    #[allow(clippy::useless_conversion)]
    let kind = i64::from(fs.f_type);
    match kind {
        PROC_SUPER_MAGIC => Some("a file of the kernel's /proc file system"),
        SYSFS_MAGIC => Some("a file of the kernel's /sys file system"),
        _ => None,
    }
}

/// Elsewhere there is no such file system to tell apart.
#[cfg(not(target_os = "linux"))]
fn kernel_file(_: &Path) -> Option<&'static str> {
    None
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

/// The folder of `target` (`.` for a bare name) and its file name.
fn parent_and_name(target: &Path) -> Result<(PathBuf, std::ffi::OsString), Error> {
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = target.file_name().ok_or_else(|| Error::Io {
        path: target.to_path_buf(),
        error: std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a file name"),
    })?;
    Ok((dir, name.to_os_string()))
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

/// Serde helpers for lists of `u128` counts as decimal strings.
pub(crate) mod decimal_list {
    use serde::ser::SerializeSeq as _;
    use serde::{Deserialize, Deserializer, Serializer};

    /// Writes counts as decimal strings.
    pub(crate) fn serialize<S: Serializer>(values: &[u128], s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(values.len()))?;
        for v in values {
            seq.serialize_element(&v.to_string())?;
        }
        seq.end()
    }

    /// Reads counts from decimal strings.
    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u128>, D::Error> {
        Vec::<String>::deserialize(d)?
            .iter()
            .map(|text| {
                text.parse()
                    .map_err(|_| serde::de::Error::custom(format!("'{text}' is not a count")))
            })
            .collect()
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
        check_writable(&path, 10_000).unwrap();
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn a_write_that_fails_part_way_keeps_the_old_file_and_leaves_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.json");
        write_atomic(&path, b"old").unwrap();
        // As a full disk does: some bytes go out, then the write fails.
        let err = write_atomic_with(&path, |file| {
            file.write_all(b"half")?;
            Err(std::io::Error::from_raw_os_error(28))
        })
        .unwrap_err();
        assert!(err.to_string().contains("No space left"), "{err}");
        assert_eq!(std::fs::read(&path).unwrap(), b"old");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn stale_temporary_files_and_long_names_do_not_stop_a_write() {
        let dir = tempfile::tempdir().unwrap();
        // A name of the longest legal length: its temporary file must still fit.
        let long = "n".repeat(250) + ".json";
        let path = dir.path().join(&long);
        // What the old scheme (`.NAME.PID.tmp`) left after a kill, with this very PID.
        let stale = dir
            .path()
            .join(format!(".x.json.{}.tmp", std::process::id()));
        std::fs::write(&stale, b"stale").unwrap();
        for target in [path.clone(), dir.path().join("x.json")] {
            check_writable(&target, 100).unwrap();
            write_atomic(&target, b"new").unwrap();
            assert_eq!(std::fs::read(&target).unwrap(), b"new");
        }
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 3);
    }

    #[cfg(unix)]
    #[test]
    fn written_files_get_the_mode_of_any_new_file() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let (atomic, plain) = (dir.path().join("a.json"), dir.path().join("p.json"));
        write_atomic(&atomic, b"x").unwrap();
        std::fs::write(&plain, b"x").unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode();
        assert_eq!(mode(&atomic), mode(&plain), "not tempfile's private 0600");
    }

    #[test]
    fn spellings_and_links_of_one_file_are_the_same_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.json");
        let dotted = dir.path().join(".").join("x.json");
        assert!(is_same_file(&path, &dotted));
        assert!(!is_same_file(&path, &dir.path().join("y.json")));
        #[cfg(unix)]
        {
            std::fs::write(&path, b"x").unwrap();
            let link = dir.path().join("link.json");
            std::os::unix::fs::symlink(&path, &link).unwrap();
            assert!(is_same_file(&path, &link));
        }
    }
}
