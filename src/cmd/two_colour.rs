//! `nqueens two-colour FILE`: count placements of N black and N white queens.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use nqueens::puzzles::two_colour::{self, TwoColour};
use nqueens::report::Format;
use serde_json::json;

use crate::cmd::input;
use crate::cmd::messages::message;
use crate::exit::Exit;
use crate::options::Global;

/// Arguments of `nqueens two-colour`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The board: a line with n, then n lines of n cells, 1 allowed and 0 blocked (- for stdin)
    #[arg(value_name = "FILE", default_value = "-")]
    pub file: PathBuf,

    /// Process every solution instead of one per symmetry orbit (a slower cross-check)
    #[arg(long)]
    pub no_symmetry: bool,
}

/// The schema tag of the JSON output.
const SCHEMA: &str = "nqueens.two-colour/1";

/// Runs `nqueens two-colour`.
pub(crate) fn run(args: &Args, global: &Global) -> anyhow::Result<ExitCode> {
    let text = input::read_to_string(&args.file, input::MAX_BOARD_BYTES, "a two-colour board")?;
    let mask = two_colour::parse(&text, &input::source_name(&args.file))?;
    let result =
        two_colour::count_with_symmetry(&mask, global.single_threads()?, !args.no_symmetry)?;
    let mut out = std::io::stdout().lock();
    match global.format() {
        Format::Json => {
            serde_json::to_writer(&mut out, &report(&result))?;
            writeln!(out)?;
        }
        Format::Markdown => {
            writeln!(out, "| n | fitting solutions | ordered pairs |")?;
            writeln!(out, "|---|---|---|")?;
            writeln!(
                out,
                "| {} | {} | {} |",
                result.n, result.solutions, result.pairs
            )?;
        }
        Format::Text => writeln!(out, "{}", result.pairs)?,
    }
    if !global.quiet {
        message!("{}", commentary(&result));
    }
    Ok(Exit::Ok.into())
}

fn report(r: &TwoColour) -> serde_json::Value {
    json!({
        "schema": SCHEMA,
        "version": env!("CARGO_PKG_VERSION"),
        "n": r.n,
        "solutions": r.solutions,
        "pairs": r.pairs.to_string(),
        "symmetries": r.symmetries,
        "representatives": r.representatives,
        "threads": r.threads,
        "elapsed_s": r.elapsed.as_secs_f64(),
    })
}

fn commentary(r: &TwoColour) -> String {
    format!(
        "n = {}: {} solutions fit the mask, {} ordered disjoint pairs; {} symmetries \
         ({} processed), {} threads, {:.3} s",
        r.n,
        r.solutions,
        r.pairs,
        r.symmetries,
        r.representatives,
        r.threads,
        r.elapsed.as_secs_f64()
    )
}
