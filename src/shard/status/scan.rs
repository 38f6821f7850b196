//! Reading the files of a run directory for [`status`](super::status): every shard result
//! and checkpoint, each read once and kept only as a small summary, so memory follows the
//! number of files. Nothing is locked or written.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::error::Error;
use crate::shard::checkpoint::{DoneSet, CHECKPOINT_SCHEMA, CHECKPOINT_SCHEMA_2};
use crate::shard::merge::{Problem, ProblemKind};
use crate::shard::sealed;
use crate::shard::{Checkpoint, Identity, PartialResult, SHARD_SCHEMA};

/// One shard result or checkpoint file, summarised.
#[derive(Debug)]
pub(crate) struct Seen {
    /// The file, as found, for messages.
    pub(crate) file: String,
    /// The file, as found (its name may not be UTF-8).
    pub(crate) path: PathBuf,
    /// The run and shard it belongs to.
    pub(crate) identity: Identity,
    /// When it was last written (`None` where the file system does not say).
    pub(crate) modified: Option<SystemTime>,
    /// Sum of the counts it holds.
    pub(crate) total: u128,
    /// Seconds spent on it, over all sessions.
    pub(crate) elapsed_s: f64,
    /// What kind of file it is.
    pub(crate) what: What,
}

/// A result (the shard is done) or a checkpoint (the rounds done so far).
#[derive(Debug)]
pub(crate) enum What {
    /// A shard result file, with the CPU that finished it (empty for older versions).
    Result { cpu: String },
    /// A checkpoint with its done rounds.
    Checkpoint { done: DoneSet },
}

/// Everything read from a run directory.
#[derive(Debug, Default)]
pub(crate) struct Scan {
    /// The shard results and checkpoints that could be read.
    pub(crate) seen: Vec<Seen>,
    /// Files that could not be read, are damaged, or are not of this tool.
    pub(crate) problems: Vec<Problem>,
    /// Other nqueens files (merge or count reports) and empty checkpoints, skipped.
    pub(crate) skipped: usize,
}

/// The `*.json` and `*.ckpt` files directly in `dir` and in its folders one level down
/// (`scripts/slurm/submit.sh` puts them in `shards/` and `checkpoints/`), sorted. Hidden
/// files are skipped: they are locks and the temporary files of writes in progress; so are
/// folders one level down, named `*.json` or not, as `merge` skips them. Anything else so
/// named is listed, FIFOs and devices included: [`scan`] names each without opening it.
///
/// # Errors
/// [`Error::Io`] if `dir` cannot be listed.
pub(crate) fn list(dir: &Path) -> Result<Vec<PathBuf>, Error> {
    let mut files = Vec::new();
    for path in entries(dir)? {
        if path.is_dir() {
            // A subfolder that cannot be listed is reported by name, as a file would be.
            match entries(&path) {
                Ok(inner) => {
                    files.extend(inner.into_iter().filter(|p| is_run_file(p) && !p.is_dir()))
                }
                Err(_) => files.push(path),
            }
        } else if is_run_file(&path) {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}

/// The visible entries of `dir`.
fn entries(dir: &Path) -> Result<Vec<PathBuf>, Error> {
    let io = |error| Error::Io {
        path: dir.to_path_buf(),
        error,
    };
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(io)? {
        let path = entry.map_err(io)?.path();
        let hidden = path
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with('.'));
        if !hidden {
            out.push(path);
        }
    }
    Ok(out)
}

/// Whether `path` is named like a result or checkpoint file.
fn is_run_file(path: &Path) -> bool {
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    name.ends_with(".json") || name.ends_with(".ckpt")
}

/// Reads every file of `files`, one at a time.
pub(crate) fn scan(files: &[PathBuf]) -> Scan {
    let mut out = Scan::default();
    for path in files {
        let file = path.display().to_string();
        match read_one(path) {
            Ok(Some(seen)) => out.seen.push(seen),
            Ok(None) => out.skipped += 1,
            Err((kind, why)) => out.problems.push(Problem {
                kind,
                message: format!("{file}: {why}"),
            }),
        }
    }
    out
}

/// One file: `None` for another nqueens report or an empty checkpoint, a problem for
/// anything unreadable, damaged or foreign.
fn read_one(path: &Path) -> Result<Option<Seen>, (ProblemKind, String)> {
    let corrupted = |why: String| (ProblemKind::Corrupted, why);
    let meta = std::fs::metadata(path)
        .map_err(|e| (ProblemKind::Unreadable, format!("cannot read it: {e}")))?;
    if let Some(why) = sealed::not_regular(&meta) {
        return Err((ProblemKind::Unreadable, why));
    }
    if meta.is_file() && meta.len() == 0 && path.extension().is_some_and(|e| e == "ckpt") {
        // An empty checkpoint is one a job script made for a run not started yet.
        return Ok(None);
    }
    let value = sealed::read_json(path, sealed::MAX_CHECKPOINT_BYTES).map_err(|why| {
        let kind = match why.starts_with("cannot read") || why.ends_with("not a regular file") {
            true => ProblemKind::Unreadable,
            false => ProblemKind::Corrupted,
        };
        (kind, why)
    })?;
    let schema = value.get("schema").and_then(|s| s.as_str()).unwrap_or("");
    let (identity, total, elapsed_s, what) = match schema {
        SHARD_SCHEMA if meta.len() > sealed::MAX_SHARD_BYTES => {
            return Err(corrupted("it is larger than any shard result file".into()))
        }
        SHARD_SCHEMA => {
            let r = PartialResult::from_value(value).map_err(corrupted)?;
            let what = What::Result { cpu: r.cpu };
            (r.identity, r.total, r.elapsed_s, what)
        }
        CHECKPOINT_SCHEMA | CHECKPOINT_SCHEMA_2 => {
            let cp = Checkpoint::from_value(value).map_err(corrupted)?;
            let what = What::Checkpoint { done: cp.done };
            (cp.identity, cp.total, cp.elapsed_s, what)
        }
        s if s.starts_with("nqueens.shard/") || s.starts_with("nqueens.checkpoint/") => {
            return Err(corrupted(format!(
                "its schema '{s}' is not one this version reads ({SHARD_SCHEMA}, \
                 {CHECKPOINT_SCHEMA}, {CHECKPOINT_SCHEMA_2})"
            )))
        }
        s if s.starts_with("nqueens.") => return Ok(None),
        _ => {
            let why = "it is not an nqueens shard result or checkpoint file".to_string();
            return Err((ProblemKind::Foreign, why));
        }
    };
    Ok(Some(Seen {
        file: path.display().to_string(),
        path: path.to_path_buf(),
        identity,
        modified: meta.modified().ok(),
        total,
        elapsed_s,
        what,
    }))
}
