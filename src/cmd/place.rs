//! `nqueens place N`: one solution, for N up to 4294967295.

use std::io::Write;
use std::process::ExitCode;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use anyhow::Context;
use clap::ValueEnum;
use nqueens::puzzles::place::{self, Construction};
use nqueens::report::Format;
use nqueens::Error;

use crate::cmd::judge::{Answers, Question, Questions};
use crate::cmd::messages::message;
use crate::exit::{Exit, UsageError};
use crate::options::{FormatArg, Global};
use crate::parse::{whole, Whole};

/// Arguments of `nqueens place`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Board size, 1 to 4294967295 (2 and 3 have no solution)
    #[arg(required_unless_present = "stdin", value_parser = parse_size)]
    pub n: Option<u64>,

    /// How to find the solution
    #[arg(short, long, value_enum, default_value_t = Method::Construct)]
    pub method: Method,

    /// Random seed for min-conflicts [default: from the clock, printed on stderr]
    #[arg(long, value_name = "S")]
    pub seed: Option<u64>,

    /// Judge format: one N per line on stdin (0 or end of input ends), one answer each (the
    /// solution, "no solution", or a blank line for a blank line; boards are separated by a
    /// blank line; JSON Lines with --json)
    #[arg(long, conflicts_with = "n")]
    pub stdin: bool,
}

/// Ways of finding one solution.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Method {
    /// Explicit O(n) construction, streamed (no memory needed)
    Construct,
    /// Random solution by conflict-minimising local search (Sosic & Gu)
    MinConflicts,
}

/// The largest board `--format board` draws.
const MAX_BOARD: u64 = 1000;

/// Parses a board size for `place` (any whole number; the library checks the range).
fn parse_size(s: &str) -> Result<u64, String> {
    let max = place::MAX_PLACE_N;
    match whole(s) {
        Whole::Number(n) if (1..=max as i64).contains(&n) => Ok(n as u64),
        Whole::Number(_) | Whole::TooLong => Err(format!("out of range 1..{max}")),
        Whole::Malformed => Err(format!("not a whole number from 1 to {max}")),
    }
}

/// How the solution is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Layout {
    Line,
    Board,
    Json,
}

/// Runs `nqueens place`.
pub(crate) fn run(args: &Args, global: &Global) -> anyhow::Result<ExitCode> {
    let layout = layout(global)?;
    if args.seed.is_some() && args.method != Method::MinConflicts {
        return Err(UsageError(
            "--seed is for --method min-conflicts (the construction is not random)".to_string(),
        )
        .into());
    }
    let seed = args.seed.unwrap_or_else(clock_seed);
    let announce = args.method == Method::MinConflicts && args.seed.is_none() && !global.quiet;
    if args.stdin {
        if announce {
            message!("seed {seed}");
        }
        return judge(args, layout, seed);
    }
    let n = args.n.context("N is required")?;
    // A board above the limit is refused at once: there is no run to reproduce.
    if announce && n <= place::MAX_MIN_CONFLICTS_N {
        message!("seed {seed}");
    }
    let start = Instant::now();
    let mut out = std::io::stdout().lock();
    solve(&mut out, n, args.method, seed, layout)?;
    out.flush()?;
    if !global.quiet {
        let secs = start.elapsed().as_secs_f64();
        message!("n = {n}: {}, {secs:.3} s", method_name(args.method));
    }
    Ok(Exit::Ok.into())
}

/// A seed for runs that did not ask for one.
fn clock_seed() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

/// The layout the global format flags select.
fn layout(global: &Global) -> Result<Layout, Error> {
    match global.format() {
        Format::Json => Ok(Layout::Json),
        Format::Text if global.format == FormatArg::Board => Ok(Layout::Board),
        Format::Text => Ok(Layout::Line),
        Format::Markdown => Err(Error::Unsupported {
            engine: "place",
            what: "--format markdown (use perm, board or json)".to_string(),
        }),
    }
}

/// Finds and writes one solution for `n`.
fn solve(
    out: &mut impl Write,
    n: u64,
    method: Method,
    seed: u64,
    layout: Layout,
) -> anyhow::Result<()> {
    if layout == Layout::Board && n > MAX_BOARD {
        return Err(Error::Unsupported {
            engine: "place",
            what: format!("--format board for n > {MAX_BOARD} (use perm)"),
        }
        .into());
    }
    match method {
        Method::Construct => {
            let c = Construction::new(n)?;
            match layout {
                Layout::Line => {
                    c.write(out, b' ')?;
                    out.write_all(b"\n")?;
                }
                _ => write(out, c.iter(), layout, n, method_name(method))?,
            }
        }
        Method::MinConflicts => {
            let rows = place::min_conflicts(n, seed)?;
            write(out, rows.iter().copied(), layout, n, method_name(method))?;
        }
    }
    Ok(())
}

/// Writes the rows of one solution in `layout`.
fn write(
    out: &mut impl Write,
    rows: impl Iterator<Item = u32>,
    layout: Layout,
    n: u64,
    method: &str,
) -> std::io::Result<()> {
    match layout {
        Layout::Line => place::write_line(out, rows),
        Layout::Board => place::write_board(out, &rows.collect::<Vec<u32>>()),
        Layout::Json => {
            write!(
                out,
                "{{\"schema\":\"{PLACE_SCHEMA}\",\"n\":{n},\"method\":\"{method}\",\"rows\":["
            )?;
            place::write_joined(out, rows, b',')?;
            out.write_all(b"]}\n")
        }
    }
}

/// The schema tag of `place --json` output (one object per board).
pub(crate) const PLACE_SCHEMA: &str = "nqueens.place/1";

/// The line `--stdin` prints for an n without a solution (2 and 3).
pub(crate) const NO_SOLUTION: &str = "no solution";

/// Writes the marker line for an n without a solution, in `layout`.
fn no_solution_line(
    out: &mut impl Write,
    n: u64,
    method: Method,
    layout: Layout,
) -> std::io::Result<()> {
    match layout {
        Layout::Json => writeln!(
            out,
            "{{\"schema\":\"{PLACE_SCHEMA}\",\"n\":{n},\"method\":\"{}\",\"rows\":null}}",
            method_name(method)
        ),
        Layout::Line | Layout::Board => writeln!(out, "{NO_SOLUTION}"),
    }
}

/// The answer to a blank question line: a blank line (JSON: an object with no n).
fn blank_line(out: &mut impl Write, method: Method, layout: Layout) -> std::io::Result<()> {
    match layout {
        Layout::Json => writeln!(
            out,
            "{{\"schema\":\"{PLACE_SCHEMA}\",\"n\":null,\"method\":\"{}\",\"rows\":null}}",
            method_name(method)
        ),
        Layout::Line | Layout::Board => writeln!(out),
    }
}

/// The method's name, as the command line spells it.
fn method_name(method: Method) -> &'static str {
    match method {
        Method::Construct => "construct",
        Method::MinConflicts => "min-conflicts",
    }
}

/// The judge format: one N per line in, one answer out: the solution, [`NO_SOLUTION`], or
/// a blank line for a blank line. Boards (`--format board`) are separated by a blank line.
fn judge(args: &Args, layout: Layout, seed: u64) -> anyhow::Result<ExitCode> {
    let mut status = Exit::Ok;
    let mut questions = Questions::stdin();
    let mut answers = Answers::new(std::io::stdout().lock());
    let mut first = true;
    loop {
        answers.before(&questions)?;
        let Some(question) = questions.next_line(parse_size) else {
            break;
        };
        let out = answers.out();
        if layout == Layout::Board && !std::mem::take(&mut first) {
            writeln!(out)?;
        }
        let n = match question? {
            Question::Size(n) => n,
            Question::Blank => {
                blank_line(out, args.method, layout)?;
                answers.answered()?;
                continue;
            }
        };
        match solve(out, n, args.method, seed, layout) {
            Err(e)
                if e.downcast_ref::<Error>()
                    .is_some_and(|e| matches!(e, Error::NoSolution { .. })) =>
            {
                // One output line per input line, always, so a judge can match
                // them up: a marker line keeps the
                // answers aligned with the questions.
                no_solution_line(out, n, args.method, layout)?;
                message!("{e}");
                status = Exit::Failure;
            }
            other => other?,
        }
        answers.answered()?;
    }
    answers.flush()?;
    Ok(status.into())
}
