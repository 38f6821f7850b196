//! `nqueens completions SHELL`: shell completion scripts.

use std::io::Write;
use std::process::ExitCode;

use anyhow::Context;

use clap_complete::Shell;

use crate::exit::Exit;

/// Arguments of `nqueens completions`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The shell to generate completions for
    #[arg(value_enum)]
    pub shell: Shell,
}

/// Writes the completion script to stdout.
///
/// The script is built in memory first: clap_complete panics when its writer fails, while a
/// closed pipe (`| head -1`) must exit 0 and a full disk must be a clear error.
/// `command` is the whole command line's definition, passed in so this module need not import
/// the one that imports it.
pub(crate) fn run(args: &Args, command: &mut clap::Command) -> anyhow::Result<ExitCode> {
    let mut script = Vec::new();
    clap_complete::generate(args.shell, command, "nqueens", &mut script);
    let mut out = std::io::stdout().lock();
    out.write_all(&script)
        .and_then(|()| out.flush())
        .context("writing the completion script to stdout")?;
    Ok(Exit::Ok.into())
}
