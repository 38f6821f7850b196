//! The library's error type.
//!
//! Every fallible library function returns [`Error`]; user input never causes a panic. The
//! binary maps these to exit codes (see `src/exit.rs`).

use std::path::PathBuf;

/// The smallest board size the counters accept.
pub const MIN_N: u32 = 1;
/// The largest board size the counters accept (row masks are `u32`, totals `u128`).
pub const MAX_N: u32 = 32;

/// Everything that can go wrong in the library.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The board size is outside the supported range.
    #[error("N must be between {min} and {max}, got {n}")]
    BoardSize {
        /// The size that was asked for (any `u64` or `i64` fits).
        n: i128,
        /// Smallest accepted size.
        min: u32,
        /// Largest accepted size.
        max: u32,
    },
    /// The thread count is zero or absurdly large.
    #[error("thread count must be between 1 and {max}, got {threads}")]
    Threads {
        /// The count that was asked for.
        threads: usize,
        /// Largest accepted count.
        max: usize,
    },
    /// The split depth does not fit the board.
    #[error("split depth must be between {min} and {max} for N = {n}, got {depth}")]
    SplitDepth {
        /// Board size.
        n: u32,
        /// Depth that was asked for.
        depth: u32,
        /// Smallest accepted depth.
        min: u32,
        /// Largest accepted depth.
        max: u32,
    },
    /// The engine name is not one the library knows.
    #[error("unknown engine '{name}' (choose one of: {choices})")]
    UnknownEngine {
        /// The name that was asked for (at most its first 40 characters).
        name: String,
        /// Comma-separated list of valid names.
        choices: String,
    },
    /// The matcher level cap names no level.
    #[error("{var}='{value}' names no matcher level (accepted: {choices})", var = crate::env::ISA_VAR)]
    UnknownIsa {
        /// The value that was given (at most 40 characters of it).
        value: String,
        /// Comma-separated list of valid names.
        choices: String,
    },
    /// The engine cannot count this N (or this option).
    #[error("the {engine} engine does not support {what}")]
    Unsupported {
        /// Engine name.
        engine: &'static str,
        /// What it cannot do, e.g. "N = 40".
        what: String,
    },
    /// The engine's tasks are fixed, so a split depth cannot be chosen (the mitm engine).
    #[error("the {engine} engine does not support a split depth (its tasks are fixed row splits)")]
    SplitDepthUnsupported {
        /// Engine name.
        engine: &'static str,
    },
    /// `auto` picked an engine that cannot count this N, though other engines can.
    #[error(
        "{refusal}; auto picks it at N = {n}, but {} can count it",
        engine_list(others)
    )]
    AutoUnsupported {
        /// Board size.
        n: u32,
        /// Why the picked engine refused.
        refusal: Box<Error>,
        /// The engines that take this N (and what else was asked), fastest first.
        others: Vec<&'static str>,
    },
    /// The engine cannot count fundamental solutions.
    #[error("the {engine} engine does not support unique counts")]
    UniqueUnsupported {
        /// Engine name (the one asked for).
        engine: &'static str,
    },
    /// The rayon thread pool could not be built.
    #[error("could not start the worker threads: {0}")]
    ThreadPool(String),
    /// Malformed input text (masks, judge input, permutations, result files).
    #[error("{source_name}: line {line}{}: {message}", column.map(|c| format!(", column {c}")).unwrap_or_default())]
    Parse {
        /// Where the text came from (a path or `<stdin>`).
        source_name: String,
        /// 1-based line number.
        line: usize,
        /// 1-based column, when it is known.
        column: Option<usize>,
        /// What is wrong.
        message: String,
    },
    /// Reading or writing a file failed.
    // The message already includes the I/O error, so it is not also a `source` (an error
    // chain printed with `{:#}` would show it twice).
    #[error("{}: {error}", path.display())]
    Io {
        /// The file involved.
        path: PathBuf,
        /// The underlying error.
        error: std::io::Error,
    },
    /// A file to be written exists and is not a regular file (a folder, a device, a FIFO, a
    /// dangling link): it is never replaced.
    #[error("'{}' is {kind}; refusing to replace it with a regular file (give another path)", path.display())]
    NotRegularFile {
        /// The path given.
        path: PathBuf,
        /// What is there, e.g. "a folder".
        kind: String,
    },
    /// A recheck fraction is invalid.
    #[error("invalid recheck fraction: {0}")]
    Recheck(String),
    /// A task's count differs between the fast and the portable code path (`--recheck`):
    /// faulty hardware or a bug. Nothing is written as a result.
    #[error("{}", mismatch_text(*task, *fast, *portable, device.as_deref()))]
    RecheckMismatch {
        /// The task.
        task: usize,
        /// Its count on the fast path: the assembly or SIMD one, or a GPU's.
        fast: u128,
        /// Its count on the CPU's portable path.
        portable: u128,
        /// The device whose joins gave `fast`, as the plan names it (`GPU NAME`; `None`: the
        /// CPU's fast path did).
        device: Option<String>,
    },
    /// The puzzle has no solution (e.g. `place` for n = 2 or 3).
    #[error("no solution exists for n = {n}")]
    NoSolution {
        /// The board size.
        n: u64,
    },
    /// The run was interrupted (Ctrl-C or SIGTERM) before it finished.
    #[error("interrupted")]
    Interrupted,
    /// A shard specification (`I/K` or `auto`) is invalid or cannot be resolved.
    #[error("invalid shard: {0}")]
    Shard(String),
    /// A checkpoint file is unreadable, truncated or fails its checksum; it is left untouched.
    #[error("checkpoint '{}' is unusable: {message} (it was left untouched; move it away to start over)", path.display())]
    CheckpointCorrupt {
        /// The checkpoint file.
        path: PathBuf,
        /// What is wrong with it.
        message: String,
    },
    /// A shard result file is unreadable, truncated, not a result file, fails its checksum or
    /// has a field out of range.
    #[error("'{}': {message}", path.display())]
    ResultCorrupt {
        /// The result file.
        path: PathBuf,
        /// What is wrong with it.
        message: String,
    },
    /// A checkpoint belongs to another run (board size, engine, plan or shard; the tool
    /// version alone does not matter).
    #[error("checkpoint '{}' belongs to another run: {message}; refusing to mix results", path.display())]
    CheckpointMismatch {
        /// The checkpoint file.
        path: PathBuf,
        /// Which identity fields differ.
        message: String,
    },
    /// A count does not fit the 128-bit total (a forged or corrupted input).
    #[error("{0} does not fit in 128 bits")]
    Overflow(String),
    /// A run directory holds no shard result or checkpoint file that can be read.
    #[error("'{}' holds no shard result or checkpoint file that can be read ({files} files, {problems} of them unreadable, damaged or foreign)", dir.display())]
    NoRun {
        /// The folder read.
        dir: PathBuf,
        /// The `*.json` and `*.ckpt` files found.
        files: usize,
        /// How many of them were refused.
        problems: usize,
    },
    /// No GPU can be used (`--gpu`): a build without the `gpu` feature, no Vulkan loader,
    /// no adapter, or the device asked for is not there. The message names what to do.
    #[error("{0}")]
    NoGpu(String),
    /// The GPU failed during a run (device lost, out of memory): the count of the task it
    /// was on is discarded, and every task finished before it is kept.
    #[error("the GPU failed: {0}")]
    Gpu(String),
    /// A job needs more memory than this process may take: refused before anything of it
    /// was allocated, or an allocation the system refused. A run-time error, not a usage one.
    #[error("not enough memory: {what} needs {}, but {reason}", crate::memory::size(*need))]
    Memory {
        /// What needs it, for people.
        what: String,
        /// The bytes it needs.
        need: u64,
        /// Why they are not there, for people (e.g. `the memory available on this machine
        /// leaves 3.2 GB free`).
        reason: String,
    },
    /// A checkpoint is in use by another running process; two writers would
    /// overwrite each other's progress.
    #[error("checkpoint '{}' is in use by another nqueens process (lock '{}' is held)", path.display(), lock.display())]
    CheckpointLocked {
        /// The checkpoint file.
        path: PathBuf,
        /// The lock file beside it.
        lock: PathBuf,
    },
}

impl Error {
    /// Whether this error was caused by bad user input (exit status 2) rather than a
    /// run-time failure.
    pub fn is_usage(&self) -> bool {
        matches!(
            self,
            Error::BoardSize { .. }
                | Error::Threads { .. }
                | Error::SplitDepth { .. }
                | Error::UnknownEngine { .. }
                | Error::UnknownIsa { .. }
                | Error::Unsupported { .. }
                | Error::AutoUnsupported { .. }
                | Error::SplitDepthUnsupported { .. }
                | Error::UniqueUnsupported { .. }
                | Error::Parse { .. }
                | Error::Shard(_)
                | Error::NotRegularFile { .. }
                | Error::Recheck(_)
                | Error::NoGpu(_)
                | Error::CheckpointCorrupt { .. }
                | Error::ResultCorrupt { .. }
                | Error::CheckpointMismatch { .. }
        )
    }
}

/// Engine names as a phrase: `the mirror engine`, `the symmetry and mirror engines`.
fn engine_list(names: &[&str]) -> String {
    match names {
        [one] => format!("the {one} engine"),
        [rest @ .., last] => format!("the {} and {last} engines", rest.join(", ")),
        [] => "no other engine".to_string(),
    }
}

/// At most the first 40 characters of `text`, with `…` when cut: for quoting user input in
/// messages without echoing a whole (possibly huge) line.
pub(crate) fn excerpt(text: &str) -> String {
    const KEEP: usize = 40;
    match text.char_indices().nth(KEEP) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_string(),
    }
}

/// Checks that `n` is a board size the counters accept.
pub(crate) fn check_n(n: u32) -> Result<(), Error> {
    if (MIN_N..=MAX_N).contains(&n) {
        Ok(())
    } else {
        Err(Error::BoardSize {
            n: i128::from(n),
            min: MIN_N,
            max: MAX_N,
        })
    }
}

/// The message of a recheck mismatch. On the CPU, the fast path (assembly, vector code)
/// is the likelier culprit than the plain portable one on the same core, so the hardware is
/// named; with a GPU (`device`) either side may be wrong, and both are named.
fn mismatch_text(task: usize, fast: u128, portable: u128, device: Option<&str>) -> String {
    let head = format!("RECHECK MISMATCH on task {task}:");
    let tail = "no result was written";
    match device {
        None => format!(
            "{head} the fast code path counted {fast}, the portable one {portable}; suspect the \
             hardware (CPU, memory, overclock) or a bug; {tail}"
        ),
        Some(gpu) => format!(
            "{head} the joins on {gpu} counted {fast}, the CPU's portable code path {portable}; \
             they disagree, and either may be wrong: suspect the GPU (its driver, memory or \
             clocks), the CPU or its memory, or a bug; {tail}"
        ),
    }
}
