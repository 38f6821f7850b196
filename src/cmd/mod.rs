//! One module per subcommand; each owns its `Args` and a `run` function.

pub mod bench;
pub mod completions;
pub mod count;
pub mod count_mask;
pub mod estimate;
pub mod input;
pub mod merge;
pub mod place;
pub mod resumable;
pub mod solutions;
pub mod two_colour;
pub mod verify;

use std::process::ExitCode;

use crate::cli::{Cli, Command};

/// Runs the selected subcommand.
pub fn run(cli: &Cli) -> anyhow::Result<ExitCode> {
    match &cli.command {
        Command::Count(args) => count::run(args, &cli.global),
        Command::Solutions(args) => solutions::run(args, &cli.global),
        Command::Place(args) => place::run(args, &cli.global),
        Command::Verify(args) => verify::run(args, &cli.global),
        Command::TwoColour(args) => two_colour::run(args, &cli.global),
        Command::Bench(args) => bench::run(args, &cli.global),
        Command::Merge(args) => merge::run(args, &cli.global),
        Command::Estimate(args) => estimate::run(args, &cli.global),
        Command::Completions(args) => completions::run(args),
    }
}
