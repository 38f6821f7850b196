//! One module per subcommand; each owns its `Args` and a `run` function.

pub(crate) mod bench;
pub(crate) mod completions;
pub(crate) mod count;
pub(crate) mod estimate;
pub(crate) mod input;
pub(crate) mod merge;
pub(crate) mod messages;
pub(crate) mod place;
pub(crate) mod solutions;
pub(crate) mod two_colour;
pub(crate) mod verify;

use std::process::ExitCode;

use clap::ValueEnum;

use crate::cli::{self, Cli, Command, FormatArg, Scope, Threads};
use crate::exit::UsageError;

/// `1 solution`, `2 solutions`: a count with its noun in the right number.
pub(crate) fn plural(count: impl std::fmt::Display, noun: &str) -> String {
    let text = count.to_string();
    let s = if text == "1" { "" } else { "s" };
    format!("{text} {noun}{s}")
}

/// Runs the selected subcommand.
pub(crate) fn run(cli: &Cli) -> anyhow::Result<ExitCode> {
    let scope = cli::scope(cli.command.name()).expect("every subcommand has a scope");
    check_threads(cli, scope)?;
    check_format(cli, scope)?;
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

/// Refuses `-j` for a subcommand that runs on one thread, rather than ignoring it.
fn check_threads(cli: &Cli, scope: Scope) -> Result<(), UsageError> {
    if scope.threads == Threads::None && cli.global.threads.is_some() {
        return Err(UsageError(format!(
            "'{}' takes no thread count (-j/--threads)",
            cli.command.name()
        )));
    }
    Ok(())
}

/// Refuses a `--format` (or `--json`/`--markdown`) the subcommand cannot write, rather than
/// ignoring it (the formats are in [`cli::scope`]).
fn check_format(cli: &Cli, scope: Scope) -> Result<(), UsageError> {
    let asked = cli.global.format_arg();
    let allowed = scope.formats;
    if allowed.contains(&asked) {
        return Ok(());
    }
    let name = |f: &FormatArg| {
        f.to_possible_value()
            .map(|v| v.get_name().to_string())
            .unwrap_or_default()
    };
    let choices: Vec<String> = allowed.iter().map(name).collect();
    Err(UsageError(format!(
        "this command cannot write --format {} (it writes {})",
        name(&asked),
        choices.join(", ")
    )))
}
