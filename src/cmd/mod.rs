//! One module per subcommand; each owns its `Args` and a `run` function.

pub mod bench;
pub mod completions;
pub mod count;

use std::process::ExitCode;

use crate::cli::{Cli, Command};

/// Runs the selected subcommand.
pub fn run(cli: &Cli) -> anyhow::Result<ExitCode> {
    match &cli.command {
        Command::Count(args) => count::run(args, &cli.global),
        Command::Bench(args) => bench::run(args, &cli.global),
        Command::Completions(args) => completions::run(args),
    }
}
