//! `nqueens two-colour FILE`: count placements of N black and N white queens.

use std::path::PathBuf;
use std::process::ExitCode;

use nqueens::plan::SEARCH_WORKER_BYTES;
use nqueens::puzzles::two_colour::{self, TwoColour};
use nqueens::report::{render_two_colour, TwoColourReport};

use crate::cmd::messages::message;
use crate::cmd::{input, plural, workers};
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

/// Runs `nqueens two-colour`.
pub(crate) fn run(args: &Args, global: &Global) -> anyhow::Result<ExitCode> {
    let text = input::read_to_string(&args.file, input::MAX_BOARD_BYTES, "a two-colour board")?;
    let mask = two_colour::parse(&text, &input::source_name(&args.file))?;
    let what = format!("a two-colour board of n = {}", mask.n());
    let threads = workers::fit(global.threads(), SEARCH_WORKER_BYTES, &what, global.quiet)?;
    let result = two_colour::count_with_symmetry(&mask, threads, !args.no_symmetry)?;
    let report = TwoColourReport::from(&result);
    render_two_colour(&report, global.format(), &mut std::io::stdout().lock())?;
    if !global.quiet {
        message!("{}", commentary(&result));
    }
    Ok(Exit::Ok.into())
}

fn commentary(r: &TwoColour) -> String {
    let fit = if r.solutions == 1 { "fits" } else { "fit" };
    let symmetries = match r.symmetries {
        1 => "1 symmetry".to_string(),
        k => format!("{k} symmetries"),
    };
    format!(
        "n = {}: {} {fit} the mask, {}; {symmetries} ({} processed), {}, {:.3} s",
        r.n,
        plural(r.solutions, "solution"),
        plural(r.pairs, "ordered disjoint pair"),
        r.representatives,
        plural(r.threads, "thread"),
        r.elapsed.as_secs_f64()
    )
}
