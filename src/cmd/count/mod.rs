//! `nqueens count N`: count the solutions for an N×N board.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use clap::builder::{PossibleValue, PossibleValuesParser};
use nqueens::recheck::{Fault, Recheck};
use nqueens::report::{render_count, CountReport};
use nqueens::{engine, known, Count, CountOptions};

use super::resumable;
use crate::cli::{parse_n, Global};
use crate::exit::Exit;
use crate::progress::{human, Bar};

/// Arguments of `nqueens count`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Board size, 1 to 32
    #[arg(
        value_parser = parse_n,
        allow_negative_numbers = true,
        required_unless_present = "stdin"
    )]
    pub n: Option<u32>,

    /// Counting engine (auto picks the fastest for N)
    #[arg(short, long, default_value = engine::AUTO, value_parser = engine_values())]
    pub engine: String,

    /// Rows pre-placed per task [default: chosen for the thread count]
    #[arg(long, value_name = "ROWS")]
    pub split_depth: Option<u32>,

    /// Also count fundamental solutions (distinct up to rotation and reflection)
    #[arg(long)]
    pub unique: bool,

    /// Judge format: read one N per line from stdin (a line "0" or end of input ends), print
    /// one count per line
    #[arg(long, conflicts_with = "n")]
    pub stdin: bool,

    /// Save progress to FILE every few seconds and on Ctrl-C/SIGTERM; if FILE exists, resume
    /// from it (finished tasks are not counted again)
    #[arg(long, value_name = "FILE", conflicts_with = "stdin")]
    pub checkpoint: Option<PathBuf>,

    /// Seconds between checkpoint saves (fractions allowed, e.g. 0.5)
    #[arg(long, value_name = "SECS", default_value = "5", value_parser = resumable::parse_seconds, requires = "checkpoint")]
    pub checkpoint_every: Duration,

    /// Count only part I (0-based) of K of the work, balanced by expected cost: `I/K`, or
    /// `auto` in a Slurm array job (from SLURM_ARRAY_TASK_ID/_MIN/_COUNT); needs --out
    #[arg(long, value_name = "I/K|auto", requires = "out", value_parser = resumable::parse_shard)]
    pub shard: Option<resumable::ShardArg>,

    /// Write the shard's result file (JSON with per-task counts and a checksum, for
    /// `nqueens merge`) to FILE; without --shard it holds the whole count (shard 0/1)
    #[arg(long, value_name = "FILE", conflicts_with_all = ["stdin", "unique"])]
    pub out: Option<PathBuf>,

    /// Re-solve a deterministic random FRACTION (0 < FRACTION ≤ 1, e.g. 0.01) of the tasks on
    /// the portable code path, on another thread, and compare: a mismatch names the task,
    /// exits with status 3 and writes no result
    #[arg(long, value_name = "FRACTION", value_parser = parse_fraction)]
    pub recheck: Option<Recheck>,

    /// Testing only: add 1 to the fast code path's count of task TASK, as a faulty core would
    #[arg(long, value_name = "TASK", hide = true)]
    pub test_inject_fault: Option<usize>,

    /// Count on a board with blocked cells: FILE (or - for stdin) has N lines of N cells,
    /// 1 or . allowed, 0 or # blocked
    #[arg(long, value_name = "FILE", conflicts_with_all = ["stdin", "unique", "split_depth", "engine", "checkpoint", "shard", "out", "recheck"])]
    pub mask: Option<std::path::PathBuf>,
}

/// The engine names with their one-line summaries, for `--help`.
fn engine_values() -> PossibleValuesParser {
    let auto = PossibleValue::new(engine::AUTO).help("the fastest engine for N on this machine");
    let rest = engine::ENGINES
        .iter()
        .map(|e| PossibleValue::new(e.name()).help(e.summary()));
    PossibleValuesParser::new(std::iter::once(auto).chain(rest))
}

/// Parses a `--recheck` fraction.
pub fn parse_fraction(s: &str) -> Result<Recheck, String> {
    let fraction: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("'{s}' is not a number (e.g. 0.01)"))?;
    Recheck::new(fraction).map_err(|e| e.to_string())
}

/// Runs `nqueens count`.
pub fn run(args: &Args, global: &Global) -> anyhow::Result<ExitCode> {
    let options = CountOptions::new()
        .engine(&args.engine)
        .threads(global.single_threads()?)
        .split_depth(args.split_depth)
        .unique(args.unique)
        .recheck(args.recheck)
        .fault(args.test_inject_fault.map(|task| Fault { task, delta: 1 }));
    if args.stdin {
        return judge(&options, global);
    }
    let n = args.n.context("N is required")?;
    if let Some(path) = &args.mask {
        return crate::cmd::count_mask::run(n, path, global);
    }
    if args.checkpoint.is_some() || args.out.is_some() {
        return resumable::run(args, n, &options, global);
    }
    let bar = Bar::new(global.quiet);
    let result = nqueens::count_with_progress(n, &options, &bar);
    bar.finish();
    let count = result?;
    publish(&count, &commentary(&count), global)
}

/// Prints a finished count on stdout, `note` on stderr (unless quiet), and returns the exit
/// status (3 when a value disagrees with OEIS).
pub fn publish(count: &Count, note: &str, global: &Global) -> anyhow::Result<ExitCode> {
    render_count(
        &CountReport::from(count),
        global.format(),
        &mut std::io::stdout().lock(),
    )?;
    if !global.quiet {
        eprintln!("nqueens: {note}");
    }
    Ok(verdict(count).into())
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
    let check = match c.rechecked {
        Some(k) => format!(
            "{check}; {} also solved on the portable code path, all agree",
            super::plural(k, "task")
        ),
        None => check.to_string(),
    };
    format!(
        "N = {}: {}{}; {} engine ({}, {}), {}, {:.3} s, {} solutions/s; {}",
        c.n,
        super::plural(c.total, "solution"),
        unique,
        c.engine,
        c.plan,
        super::plural(c.tasks, "task"),
        super::plural(c.threads, "thread"),
        secs,
        human(rate),
        check
    )
}

/// Exit status for a finished count; reports a disagreement with OEIS loudly.
fn verdict(c: &Count) -> Exit {
    if c.is_consistent() {
        return Exit::Ok;
    }
    if c.verified == Some(false) {
        let expected = known::total(c.n).unwrap_or_default();
        eprintln!(
            "nqueens: WRONG ANSWER: computed {} solutions for N = {}, but OEIS A000170 says {}. \
             Suspect the hardware (CPU, memory, overclock) or a bug.",
            c.total, c.n, expected
        );
    }
    if let (Some(u), Some(false)) = (c.unique, c.unique_verified) {
        let expected = known::unique(c.n).unwrap_or_default();
        eprintln!(
            "nqueens: WRONG ANSWER: computed {u} fundamental solutions for N = {}, \
             but OEIS A002562 says {expected}.",
            c.n
        );
    }
    Exit::Mismatch
}

/// The judge format: one N per line in, one count per line out.
fn judge(options: &CountOptions, global: &Global) -> anyhow::Result<ExitCode> {
    let mut status = Exit::Ok;
    let mut out = std::io::stdout().lock();
    for n in crate::cmd::input::judge_sizes(parse_n) {
        let n = n?;
        let count = nqueens::count(n, options)?;
        render_count(&CountReport::from(&count), global.format(), &mut out)?;
        out.flush()?;
        if verdict(&count) != Exit::Ok {
            status = Exit::Mismatch;
        }
    }
    Ok(status.into())
}
