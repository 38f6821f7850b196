//! One module per subcommand; each owns its `Args` and a `run` function.

pub mod bench;
pub mod completions;
pub mod count;
pub mod estimate;
pub mod input;
pub mod merge;
pub mod messages;
pub mod place;
pub mod solutions;
pub mod two_colour;
pub mod verify;

use std::process::ExitCode;

use clap::ValueEnum;

use crate::cli::{Cli, Command, FormatArg};
use crate::exit::UsageError;

/// `1 solution`, `2 solutions`: a count with its noun in the right number.
pub fn plural(count: impl std::fmt::Display, noun: &str) -> String {
    let text = count.to_string();
    let s = if text == "1" { "" } else { "s" };
    format!("{text} {noun}{s}")
}

/// Runs the selected subcommand.
pub fn run(cli: &Cli) -> anyhow::Result<ExitCode> {
    check_format(cli)?;
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

/// The output formats each subcommand can write; any other is a usage error rather than
/// silently ignored (issue 12, item 9).
fn formats(command: &Command) -> &'static [FormatArg] {
    use FormatArg::{Board, Json, Markdown, Perm, Text};
    match command {
        Command::Count(_) | Command::TwoColour(_) | Command::Bench(_) => &[Text, Json, Markdown],
        Command::Solutions(_) | Command::Place(_) => &[Text, Json, Board, Perm],
        Command::Verify(_) | Command::Merge(_) | Command::Estimate(_) => &[Text, Json],
        Command::Completions(_) => &[Text],
    }
}

/// Refuses a `--format` (or `--json`/`--markdown`) the subcommand cannot write.
fn check_format(cli: &Cli) -> Result<(), UsageError> {
    let asked = cli.global.format_arg();
    let allowed = formats(&cli.command);
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
