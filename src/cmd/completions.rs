//! `nqueens completions SHELL`: shell completion scripts.

use std::process::ExitCode;

use clap::CommandFactory;
use clap_complete::Shell;

use crate::cli::Cli;
use crate::exit::Exit;

/// Arguments of `nqueens completions`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The shell to generate completions for
    #[arg(value_enum)]
    pub shell: Shell,
}

/// Writes the completion script to stdout.
pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let mut cmd = Cli::command();
    clap_complete::generate(args.shell, &mut cmd, "nqueens", &mut std::io::stdout());
    Ok(Exit::Ok.into())
}
