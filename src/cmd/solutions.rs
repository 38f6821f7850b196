//! `nqueens solutions N`: print every solution, streamed, in lexicographic order.

use std::io::{BufWriter, Write};
use std::process::ExitCode;

use nqueens::puzzles::solutions::{write_board, write_perm, Solutions};
use nqueens::report::Format;

use crate::cmd::messages::message;
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
pub(crate) fn run(args: &Args, global: &Global) -> anyhow::Result<ExitCode> {
    let layout = layout(global)?;
    let mut walk = Solutions::new(args.n)?;
    let mut out = BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    let limit = args.limit.unwrap_or(u64::MAX);
    let mut printed = 0u64;
    while printed < limit {
        let Some(cols) = walk.next_solution() else {
            break;
        };
        write_one(&mut out, cols, layout, printed == 0)?;
        printed += 1;
    }
    out.flush()?;
    if !global.quiet {
        let printed = super::plural(printed, "solution");
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
fn write_one(
    out: &mut impl Write,
    cols: &[u32],
    layout: Layout,
    first: bool,
) -> std::io::Result<()> {
    match layout {
        Layout::Board => {
            if !first {
                out.write_all(b"\n")?;
            }
            write_board(out, cols)
        }
        Layout::Perm => write_perm(out, cols),
        Layout::Json => {
            let one_based: Vec<u32> = cols.iter().map(|c| c + 1).collect();
            serde_json::to_writer(&mut *out, &one_based)?;
            out.write_all(b"\n")
        }
    }
}
