//! The step every way of counting ends with: print the count, say how it went, and pick the
//! exit status from the comparison with OEIS. A leaf: it imports no sibling module.

use std::process::ExitCode;

use anyhow::Context as _;
use nqueens::report::{render_count, CountReport};
use nqueens::{known, Count};

use crate::cmd::messages::message;
use crate::cmd::plural;
use crate::exit::Exit;
use crate::options::Global;
use crate::progress::human;

/// Prints a finished count on stdout, `note` on stderr (unless quiet), and returns the exit
/// status (3 when a value disagrees with OEIS).
pub(super) fn publish(count: &Count, note: &str, global: &Global) -> anyhow::Result<ExitCode> {
    // Stdout may be a file on a disk that filled up during the count: the error then
    // carries the result, so it is not lost.
    render_count(
        &CountReport::from(count),
        global.format(),
        &mut std::io::stdout().lock(),
    )
    .with_context(|| {
        let unique = count
            .unique
            .map(|u| format!(", {u} fundamental"))
            .unwrap_or_default();
        format!(
            "printing the result (N = {}: {} solutions{unique})",
            count.n, count.total
        )
    })?;
    if !global.quiet {
        message!("{note}");
    }
    Ok(oeis_status(count).into())
}

/// One line for people: what was counted, how, how fast, and whether it matches OEIS.
pub(super) fn commentary(c: &Count) -> String {
    let secs = c.elapsed.as_secs_f64();
    let rate = c.total as f64 / secs.max(1e-9);
    let check = match c.verified {
        Some(true) => "matches OEIS A000170",
        Some(false) => "DOES NOT MATCH OEIS A000170",
        None => "no published value to check against",
    };
    let unique = c
        .unique
        .map(|u| format!(" ({u} fundamental)"))
        .unwrap_or_default();
    // A GPU run's second path is the CPU engine ([`nqueens::Plan::solve_portable`]).
    let second = if c.gpu.is_some() {
        "by the CPU engine"
    } else {
        "on the portable code path"
    };
    let check = match c.rechecked {
        Some(k) => format!(
            "{check}; {} also solved {second}, all agree",
            plural(k, "task")
        ),
        None => check.to_string(),
    };
    let host_joins = c.gpu.as_ref().map_or(0, |g| g.host_joins);
    let check = if host_joins > 0 {
        let joins = plural(host_joins, "join");
        format!("{check}; {joins} too large for the GPU's batches made on the CPU")
    } else {
        check
    };
    format!(
        "N = {}: {}{}; {} engine ({}, {}), {}, {:.3} s, {} solutions/s; {}",
        c.n,
        plural(c.total, "solution"),
        unique,
        c.engine,
        c.plan,
        plural(c.tasks, "task"),
        plural(c.threads, "thread"),
        secs,
        human(rate),
        check
    )
}

/// The exit status of a finished count from its comparison with OEIS; a disagreement is
/// reported loudly.
pub(super) fn oeis_status(c: &Count) -> Exit {
    if c.is_consistent() {
        return Exit::Ok;
    }
    if c.verified == Some(false) {
        let expected = known::total(c.n).unwrap_or_default();
        message!(
            "WRONG ANSWER: computed {} solutions for N = {}, but OEIS A000170 says {}. \
             Suspect the hardware (CPU, memory, overclock) or a bug.",
            c.total,
            c.n,
            expected
        );
    }
    if let (Some(u), Some(false)) = (c.unique, c.unique_verified) {
        let expected = known::unique(c.n).unwrap_or_default();
        message!(
            "WRONG ANSWER: computed {u} fundamental solutions for N = {}, \
             but OEIS A002562 says {expected}.",
            c.n
        );
    }
    Exit::Mismatch
}
