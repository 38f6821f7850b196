//! How many worker threads a run starts: those asked for, or fewer where their memory
//! would not fit in what this process may use (a failed allocation would abort the run part
//! of the way through), with a note; and a note for far more threads than CPUs.

use nqueens::memory::{self, Bound};

use crate::cmd::messages::note;

/// Threads per logical CPU from which `-j` gets a note: beyond that they only take turns.
const MANY_PER_CPU: usize = 2;

/// The workers to start of `asked`, each holding `worker_bytes` (see
/// [`nqueens::Plan::worker_bytes`]) while working on `what` (e.g. `N = 26 on the mitm
/// engine`): [`note_many`], then [`fit_memory`].
///
/// # Errors
/// As [`fit_memory`].
pub(crate) fn fit(
    asked: usize,
    worker_bytes: u64,
    what: &str,
    quiet: bool,
) -> anyhow::Result<usize> {
    note_many(asked, quiet);
    fit_memory(asked, worker_bytes, what, quiet)
}

/// A note (unless quiet) when `asked` threads are far more than the logical CPUs.
pub(crate) fn note_many(asked: usize, quiet: bool) {
    let cpus = num_cpus::get();
    if asked > MANY_PER_CPU * cpus && !quiet {
        note!(
            "{asked} threads on {}: threads beyond the CPUs only take turns on them, and \
             each takes time to start and memory of its own (-j {cpus} keeps every CPU busy)",
            crate::cmd::plural(cpus, "logical CPU")
        );
    }
}

/// How many of `asked` workers of `worker_bytes` each fit in the memory this process may
/// use: all of them, or fewer with a note (unless quiet).
///
/// # Errors
/// When not even one worker fits, naming the bound.
pub(crate) fn fit_memory(
    asked: usize,
    worker_bytes: u64,
    what: &str,
    quiet: bool,
) -> anyhow::Result<usize> {
    let bounds = memory::bounds();
    let tightest = bounds
        .iter()
        .map(|b| (memory::workers_within(b, worker_bytes), b))
        .min_by_key(|(fits, _)| *fits);
    let Some((fits, bound)) = tightest.filter(|(fits, _)| *fits < asked as u64) else {
        return Ok(asked);
    };
    let need = need(worker_bytes, bound);
    if fits == 0 {
        anyhow::bail!(
            "not enough memory for one worker: {what} needs about {need}, but {} leaves {} \
             free",
            bound.what,
            memory::size(bound.free)
        );
    }
    if !quiet {
        note!(
            "{what} needs about {need}; {} leaves {} free, enough for {fits} of the {} \
             asked: running on {fits}",
            bound.what,
            memory::size(bound.free),
            crate::cmd::plural(asked, "thread")
        );
    }
    Ok(fits as usize)
}

/// What one worker needs under `bound`, for people.
fn need(worker_bytes: u64, bound: &Bound) -> String {
    let memory = memory::size(worker_bytes);
    if bound.address_space {
        format!(
            "{memory} per worker thread (and {} of address space besides)",
            memory::size(memory::THREAD_ADDRESS_SPACE)
        )
    } else {
        format!("{memory} per worker thread")
    }
}
