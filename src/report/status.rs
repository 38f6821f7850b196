//! `nqueens status`: how far a cluster run is, for people or as JSON.

use std::io::{self, Write};

use super::{json, more_problems, plural, printable, Format, MAX_LISTED};
use crate::shard::checkpoint::Holder;
use crate::shard::{Problem, ProblemKind, StaleShard, StatusReport};

/// Writes one line for people, every control character in it escaped: the names and fields
/// it holds come from files, which may hold anything.
macro_rules! say {
    ($out:expr, $($arg:tt)*) => {
        writeln!($out, "{}", printable(&format!($($arg)*)))
    };
}

/// Writes a status report as JSON, or as lines for people (text and markdown alike).
pub fn render_status(r: &StatusReport, format: Format, out: &mut dyn Write) -> io::Result<()> {
    match format {
        Format::Json => json::write(r, out),
        Format::Text | Format::Markdown => text(r, out),
    }
}

/// The lines for people.
fn text(r: &StatusReport, out: &mut dyn Write) -> io::Result<()> {
    run_line(r, out)?;
    progress_lines(r, out)?;
    running_line(r, out)?;
    stale_lines(r, out)?;
    for c in &r.cpus {
        let each = duration(c.mean_shard_s);
        let on = match &c.gpu {
            Some(gpu) => format!("gpu: {gpu} (host CPU {})", c.cpu),
            None => format!("cpu: {}", c.cpu),
        };
        say!(
            out,
            "{on}: {} done, {each} each on average",
            plural(c.shards, "shard")
        )?;
    }
    rerun_lines(r, out)?;
    for note in &r.notes {
        say!(out, "note: {note}")?;
    }
    if !r.problems.is_empty() {
        say!(out, "problems ({}):", r.problems.len())?;
        for p in r.problems.iter().take(MAX_LISTED) {
            say!(out, "  - {}", p.message)?;
        }
        if let Some(more) = more_problems(r.problems.len()) {
            say!(out, "  {more}")?;
        }
        let damaged = |p: &Problem| matches!(p.kind, ProblemKind::Corrupted | ProblemKind::Foreign);
        if r.problems.iter().any(damaged) {
            say!(
                out,
                "  (a rerun neither resumes nor replaces a file it cannot read as its shard's: \
                 move the damaged or foreign ones aside before rerunning their shards)"
            )?;
        }
    }
    Ok(())
}

/// What the run is.
fn run_line(r: &StatusReport, out: &mut dyn Write) -> io::Result<()> {
    let text = |v: &Option<String>| v.clone().unwrap_or_else(|| "?".into());
    say!(
        out,
        "run '{}': N = {}, {} engine ({}), plan {}, {}, K = {}; {} read, written by \
         nqueens {}",
        r.run_dir,
        r.n.map_or("?".into(), |n| n.to_string()),
        text(&r.engine),
        text(&r.plan),
        text(&r.plan_hash),
        plural(r.plan_tasks.unwrap_or_default(), "task"),
        plural(r.shards.unwrap_or_default(), "shard"),
        plural(r.files, "file"),
        r.versions.join(", ")
    )
}

/// Shards, share done, partial total, pace and ETA.
fn progress_lines(r: &StatusReport, out: &mut dyn Write) -> io::Result<()> {
    let k = r.shards.unwrap_or_default();
    say!(
        out,
        "shards: {} done, {} in progress (with a checkpoint: {} running, {} not), {} not \
         started, of {k}",
        r.done,
        r.in_progress,
        r.running.len(),
        r.in_progress - r.running.len(),
        r.not_started
    )?;
    say!(
        out,
        "done: {:.2}% of the plan's {} ({} tasks)",
        r.done_share * 100.0,
        r.share_of,
        r.tasks_done
    )?;
    if r.complete {
        say!(
            out,
            "complete: every shard has a result; merge checks them and gives the total:"
        )?;
        match &r.merge {
            Some(line) => say!(out, "  {line}")?,
            None => say!(
                out,
                "  nqueens merge with the folder '{}' (its path is not UTF-8 text, so no line \
                 to paste is printed)",
                r.results_dir.as_deref().unwrap_or(&r.run_dir)
            )?,
        }
    } else {
        say!(
            out,
            "partial total: {} (the counts so far, NOT the number of solutions)",
            r.partial_total
        )?;
    }
    if let (Some(span), Some(rate)) = (r.span_s, r.share_per_hour) {
        let eta = r.eta_s.map_or("?".into(), duration);
        say!(
            out,
            "pace: {:.2}% of the plan per hour since the first start {} ago ({} of shard \
             time); ETA {eta} at that pace",
            rate * 100.0,
            duration(span),
            duration(r.shard_seconds)
        )?;
    }
    Ok(())
}

/// Shards a live process is running.
fn running_line(r: &StatusReport, out: &mut dyn Write) -> io::Result<()> {
    if r.running.is_empty() {
        return Ok(());
    }
    let listed = listed(r.running.iter().map(|i| i.to_string()));
    say!(
        out,
        "running: {} (a live process holds each checkpoint's lock; never stale, however long \
         a task takes): {listed}",
        plural(r.running.len(), "shard")
    )
}

/// Shards in progress that no process is running, by how that is known.
fn stale_lines(r: &StatusReport, out: &mut dyn Write) -> io::Result<()> {
    let of = |process: Holder| -> Vec<&StaleShard> {
        r.stale.iter().filter(|s| s.process == process).collect()
    };
    let idle =
        |s: &&StaleShard| format!("{} ({} since its last save)", s.shard, duration(s.idle_s));
    let stopped = of(Holder::Stopped);
    if !stopped.is_empty() {
        say!(
            out,
            "stale: {} stopped (no process holds the checkpoint's lock: killed, stopped or \
             failed; rerun them): {}",
            plural(stopped.len(), "shard"),
            listed(stopped.iter().map(idle))
        )?;
    }
    let unknown = of(Holder::Unknown);
    if !unknown.is_empty() {
        say!(
            out,
            "stale: {} whose checkpoint has not been written for over {} and whose lock \
             cannot be probed here (likely dead, or waiting in the queue; a checkpoint is \
             saved only after a task finishes): {}",
            plural(unknown.len(), "shard"),
            duration(r.stale_after_s),
            listed(unknown.iter().map(idle))
        )?;
    }
    Ok(())
}

/// The first [`MAX_LISTED`] items, joined, and how many more there are.
fn listed(items: impl ExactSizeIterator<Item = String>) -> String {
    let more = items.len().saturating_sub(MAX_LISTED);
    let mut text: Vec<String> = items.take(MAX_LISTED).collect::<Vec<_>>();
    if more > 0 {
        text.push(format!("and {more} more"));
    }
    text.join(", ")
}

/// The unfinished shards and the lines that rerun them.
fn rerun_lines(r: &StatusReport, out: &mut dyn Write) -> io::Result<()> {
    if r.unfinished.is_empty() {
        return Ok(());
    }
    let listed: Vec<&str> = r
        .unfinished
        .iter()
        .take(MAX_LISTED)
        .map(String::as_str)
        .collect();
    let more = r.unfinished.len() - listed.len();
    let more = if more > 0 {
        format!(" and {more} more ranges")
    } else {
        String::new()
    };
    say!(out, "unfinished shards: {}{more}", listed.join(","))?;
    if r.rerun.is_empty() {
        return Ok(());
    }
    say!(
        out,
        "rerun them (arrays within MaxArraySize {}; running shards left out):",
        r.max_array_size
    )?;
    for line in &r.rerun {
        say!(out, "  {line}")?;
    }
    Ok(())
}

/// Seconds for people: `45 s`, `12 min`, `3.3 h`, `2.1 d`.
fn duration(seconds: f64) -> String {
    match seconds {
        s if s < 120.0 => format!("{s:.0} s"),
        s if s < 7200.0 => format!("{:.0} min", s / 60.0),
        s if s < 172_800.0 => format!("{:.1} h", s / 3600.0),
        s => format!("{:.1} d", s / 86_400.0),
    }
}
