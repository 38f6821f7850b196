//! `nqueens solutions N`: print every solution, streamed, in lexicographic order.

use std::io::Write;
use std::process::ExitCode;

use nqueens::puzzles::solutions::{write_board, write_perm, Solutions};
use nqueens::report::Format;

use crate::cmd::messages::message;
use crate::cmd::stream;
use crate::exit::Exit;
use crate::options::{FormatArg, Global};
use crate::parse::parse_n;

/// Arguments of `nqueens solutions`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Board size, 1 to 32
    #[arg(value_parser = parse_n, allow_negative_numbers = true)]
    pub n: u32,

    /// Stop after this many solutions
    #[arg(long, value_name = "K")]
    pub limit: Option<u64>,
}

/// How one solution is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Layout {
    Board,
    Perm,
    Json,
}

/// Runs `nqueens solutions`: boards (default; `--format board`), `--format perm` or `--json`.
/// Each solution is on a terminal the moment it is found, and through a pipe within a tenth
/// of a second (see [`stream`]).
pub(crate) fn run(args: &Args, global: &Global) -> anyhow::Result<ExitCode> {
    let layout = layout(global)?;
    let mut walk = Solutions::new(args.n)?;
    let limit = args.limit.unwrap_or(u64::MAX);
    let (tell, printed) = std::sync::mpsc::channel();
    stream::to_stdout(move |sink| {
        let mut found = 0u64;
        while found < limit {
            let Some(cols) = walk.next_solution() else {
                break;
            };
            let first = found == 0;
            if sink
                .push(|buf| write_one(buf, cols, layout, first))
                .is_err()
            {
                return;
            }
            found += 1;
        }
        let _ = tell.send(found);
    })?;
    if !global.quiet {
        let printed = super::plural(printed.recv().unwrap_or_default(), "solution");
        message!("N = {}: {printed} printed", args.n);
    }
    Ok(Exit::Ok.into())
}

/// The layout the global format flags select.
fn layout(global: &Global) -> Result<Layout, nqueens::Error> {
    match global.format() {
        Format::Json => Ok(Layout::Json),
        Format::Text if global.format == FormatArg::Perm => Ok(Layout::Perm),
        Format::Text => Ok(Layout::Board),
        Format::Markdown => Err(nqueens::Error::Unsupported {
            engine: "solutions",
            what: "--format markdown (use board, perm or json)".to_string(),
        }),
    }
}

/// Writes one solution; boards are separated by a blank line.
fn write_one(out: &mut Vec<u8>, cols: &[u32], layout: Layout, first: bool) {
    // Writing to a vector cannot fail.
    let _ = match layout {
        Layout::Board => {
            if !first {
                out.push(b'\n');
            }
            write_board(out, cols)
        }
        Layout::Perm => write_perm(out, cols),
        Layout::Json => write_json(out, cols),
    };
}

/// One solution as a JSON line: `{"schema":…,"n":…,"cols":[…]}`, the 1-based column of the
/// queen in each row.
fn write_json(out: &mut Vec<u8>, cols: &[u32]) -> std::io::Result<()> {
    write!(
        out,
        "{{\"schema\":\"{SOLUTION_SCHEMA}\",\"n\":{},\"cols\":[",
        cols.len()
    )?;
    let mut number = itoa::Buffer::new();
    for (i, c) in cols.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(number.format(c + 1).as_bytes());
    }
    out.extend_from_slice(b"]}\n");
    Ok(())
}

/// The schema tag of each `solutions --json` line.
pub(crate) const SOLUTION_SCHEMA: &str = "nqueens.solution/1";
