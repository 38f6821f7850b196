//! `nqueens two-colour FILE`: count placements of N black and N white queens.

use std::path::PathBuf;
use std::process::ExitCode;

use nqueens::memory;
use nqueens::plan::SEARCH_WORKER_BYTES;
use nqueens::puzzles::two_colour::{self, Cost, TwoColour, TwoColourOptions};
use nqueens::report::{render_two_colour, TwoColourReport};

use crate::cmd::messages::message;
use crate::cmd::{input, plural, workers};
use crate::exit::Exit;
use crate::options::Global;
use crate::progress::Bar;

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
    let cost = two_colour::cost(&mask);
    if !global.quiet && cost.index_bytes >= SAY_COST_FROM {
        message!("{}", cost_line(&cost));
    }
    let options = TwoColourOptions::new()
        .threads(threads)
        .symmetry(!args.no_symmetry);
    let bar = Bar::new(global.quiet);
    let result = two_colour::count_with(&mask, &options, &bar);
    bar.finish();
    let result = result?;
    let report = TwoColourReport::from(&result);
    render_two_colour(&report, global.format(), &mut std::io::stdout().lock())?;
    if !global.quiet {
        message!("{}", commentary(&result));
    }
    Ok(Exit::Ok.into())
}

/// The index size from which the count says up front what it will take (smaller boards
/// take well under a second).
const SAY_COST_FROM: u128 = 1_000_000;

/// What the count will keep in memory, said before it starts.
fn cost_line(c: &Cost) -> String {
    let bytes = u64::try_from(c.index_bytes).unwrap_or(u64::MAX);
    let fit = if c.solutions == 1 { "fits" } else { "fit" };
    if c.exact {
        format!(
            "n = {}: {} {fit} the mask (OEIS A000170); their index takes {}",
            c.n,
            plural(c.solutions, "solution"),
            memory::size(bytes)
        )
    } else {
        format!(
            "n = {}: about {} {fit} the mask (sampled); their index takes about {}",
            c.n,
            plural(c.solutions, "solution"),
            memory::size(bytes)
        )
    }
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
