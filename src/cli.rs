//! Command-line definition (clap derive). Doc comments here are the `--help` text.
//!
//! Each subcommand flattens in the option groups it uses ([`crate::options`]), so clap itself
//! shows them in that subcommand's help and refuses the others.

use std::fmt::Write as _;
use std::process::ExitCode;

use clap::builder::StyledStr;
use clap::error::{ContextKind, ContextValue, ErrorFormatter, ErrorKind};
use clap::{CommandFactory, Parser, Subcommand};

use crate::cmd;
use crate::exit::UsageError;
use crate::options::{
    FormatArg, Global, Quiet, RecordFormat, ReportFormat, SolutionFormat, ThreadList, Threads,
};

// `cmd/estimate.rs` reads these from here; everything else imports them from their modules.

/// Count N-Queens solutions fast, and solve the companion puzzles.
#[derive(Debug, Parser)]
#[command(name = "nqueens", version, about, propagate_version = true)]
pub(crate) struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands, each with the option groups it uses.
#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Count the solutions for an N×N board
    Count {
        #[command(flatten)]
        args: cmd::count::Args,
        #[command(flatten)]
        threads: Threads,
        #[command(flatten)]
        quiet: Quiet,
        #[command(flatten)]
        format: ReportFormat,
    },
    /// Print every solution of an N×N board, in lexicographic order
    Solutions {
        #[command(flatten)]
        args: cmd::solutions::Args,
        #[command(flatten)]
        quiet: Quiet,
        #[command(flatten)]
        format: SolutionFormat,
    },
    /// Print one solution for an N×N board (N up to 4294967295)
    Place {
        #[command(flatten)]
        args: cmd::place::Args,
        #[command(flatten)]
        quiet: Quiet,
        #[command(flatten)]
        format: SolutionFormat,
    },
    /// Check claimed solutions, one permutation per line
    Verify {
        #[command(flatten)]
        args: cmd::verify::Args,
        #[command(flatten)]
        quiet: Quiet,
        #[command(flatten)]
        format: RecordFormat,
    },
    /// Count the ways to put N black and N white queens on a board with blocked cells
    #[command(name = "two-colour", visible_alias = "two-color")]
    TwoColour {
        #[command(flatten)]
        args: cmd::two_colour::Args,
        #[command(flatten)]
        threads: Threads,
        #[command(flatten)]
        quiet: Quiet,
        #[command(flatten)]
        format: ReportFormat,
    },
    /// Benchmark this machine on a fixed, verified workload
    Bench {
        #[command(flatten)]
        args: cmd::bench::Args,
        #[command(flatten)]
        threads: ThreadList,
        #[command(flatten)]
        quiet: Quiet,
        #[command(flatten)]
        format: ReportFormat,
    },
    /// Check and add up shard result files (from `count --shard I/K --out FILE`)
    Merge {
        #[command(flatten)]
        args: cmd::merge::Args,
        #[command(flatten)]
        quiet: Quiet,
        #[command(flatten)]
        format: RecordFormat,
    },
    /// How far a cluster run is: shards done, share of the plan, ETA, reruns (reads only)
    Status {
        #[command(flatten)]
        args: cmd::status::Args,
        #[command(flatten)]
        quiet: Quiet,
        #[command(flatten)]
        format: RecordFormat,
    },
    /// Estimate what a count will cost (core-hours, wall time, memory, shards) from a sample
    Estimate {
        #[command(flatten)]
        args: cmd::estimate::Args,
        #[command(flatten)]
        threads: Threads,
        #[command(flatten)]
        quiet: Quiet,
        #[command(flatten)]
        format: RecordFormat,
    },
    /// List the GPUs `--gpu-device` can pick (a build with `--features gpu`)
    Gpus {
        #[command(flatten)]
        args: cmd::gpu::Args,
        #[command(flatten)]
        quiet: Quiet,
        #[command(flatten)]
        format: RecordFormat,
    },
    /// Print shell completions
    Completions(cmd::completions::Args),
    /// Keep one core busy in one way for a while (for scripts/node-check.sh)
    #[command(hide = true)]
    Load(cmd::load::Args),
}

impl Command {
    /// Whether `-q` was given (before the other options are checked: the CPU-level note
    /// comes first).
    pub(crate) fn is_quiet(&self) -> bool {
        match self {
            Command::Count { quiet, .. }
            | Command::Solutions { quiet, .. }
            | Command::Place { quiet, .. }
            | Command::Verify { quiet, .. }
            | Command::TwoColour { quiet, .. }
            | Command::Bench { quiet, .. }
            | Command::Merge { quiet, .. }
            | Command::Status { quiet, .. }
            | Command::Gpus { quiet, .. }
            | Command::Estimate { quiet, .. } => quiet.is_set(),
            Command::Completions(_) | Command::Load(_) => false,
        }
    }

    /// The common options, as the subcommand reads them; a usage error for a format it
    /// cannot write.
    pub(crate) fn global(&self) -> Result<Global, UsageError> {
        let quiet = self.is_quiet();
        let global = |threads, format| Global {
            threads,
            quiet,
            format,
        };
        Ok(match self {
            Command::Count {
                threads, format, ..
            }
            | Command::TwoColour {
                threads, format, ..
            } => global(threads.list(), format.chosen()?),
            Command::Estimate {
                threads, format, ..
            } => global(threads.list(), format.chosen()?),
            Command::Bench {
                threads, format, ..
            } => global(threads.list(), format.chosen()?),
            Command::Solutions { format, .. } | Command::Place { format, .. } => {
                global(None, format.chosen()?)
            }
            Command::Verify { format, .. }
            | Command::Merge { format, .. }
            | Command::Gpus { format, .. }
            | Command::Status { format, .. } => global(None, format.chosen()?),
            Command::Completions(_) | Command::Load(_) => global(None, FormatArg::Text),
        })
    }

    /// Runs the subcommand with its common options.
    pub(crate) fn run(&self, global: &Global) -> anyhow::Result<ExitCode> {
        match self {
            Command::Count { args, .. } => cmd::count::run(args, global),
            Command::Solutions { args, .. } => cmd::solutions::run(args, global),
            Command::Place { args, .. } => cmd::place::run(args, global),
            Command::Verify { args, .. } => cmd::verify::run(args, global),
            Command::TwoColour { args, .. } => cmd::two_colour::run(args, global),
            Command::Bench { args, .. } => cmd::bench::run(args, global),
            Command::Merge { args, .. } => cmd::merge::run(args, global),
            Command::Status { args, .. } => cmd::status::run(args, global),
            Command::Estimate { args, .. } => cmd::estimate::run(args, global),
            Command::Gpus { args, .. } => cmd::gpu::run(args, global),
            Command::Completions(args) => cmd::completions::run(args, &mut Cli::command()),
            Command::Load(args) => cmd::load::run(args),
        }
    }
}

/// Parses the process's arguments; errors are formatted as one line by [`OneLine`].
pub(crate) fn try_parse() -> Result<Cli, clap::error::Error<OneLine>> {
    Cli::try_parse().map_err(|e| e.apply::<OneLine>())
}

/// Formats a clap error as one line from its context: the command's errors are one line on
/// stderr (`nqueens: …`), with the accepted values where clap knows them.
pub(crate) struct OneLine;

impl ErrorFormatter for OneLine {
    fn format_error(error: &clap::error::Error<Self>) -> StyledStr {
        let mut line = StyledStr::new();
        let _ = write!(line, "{}", headline(error));
        if let Some(ContextValue::Strings(values)) = error
            .get(ContextKind::ValidValue)
            .filter(|v| !matches!(v, ContextValue::Strings(list) if list.is_empty()))
        {
            let _ = write!(line, " [possible values: {}]", values.join(", "));
        }
        line
    }
}

/// The error's main sentence, in clap's words.
fn headline(error: &clap::error::Error<OneLine>) -> String {
    let text = |kind| match error.get(kind) {
        Some(ContextValue::String(s)) => Some(s.clone()),
        Some(ContextValue::Strings(list)) => Some(list.join(", ")),
        _ => None,
    };
    let number = |kind| match error.get(kind) {
        Some(ContextValue::Number(n)) => Some(*n),
        _ => None,
    };
    let provided = |n: isize| match n {
        2.. => format!("{n} were provided"),
        _ => format!("{n} was provided"),
    };
    let arg = text(ContextKind::InvalidArg);
    let value = text(ContextKind::InvalidValue);
    let fallback = || {
        error
            .kind()
            .as_str()
            .unwrap_or("invalid arguments")
            .to_string()
    };
    match (error.kind(), arg, value) {
        (ErrorKind::InvalidValue, Some(arg), Some(value)) if value.is_empty() => {
            format!("a value is required for '{arg}' but none was supplied")
        }
        (ErrorKind::InvalidValue, Some(arg), Some(value)) => {
            format!("invalid value '{value}' for '{arg}'")
        }
        (ErrorKind::ValueValidation, Some(arg), Some(value)) => {
            let source = std::error::Error::source(error)
                .map(|s| format!(": {s}"))
                .unwrap_or_default();
            format!("invalid value '{value}' for '{arg}'{source}")
        }
        (ErrorKind::WrongNumberOfValues, Some(arg), _) => match (
            number(ContextKind::ExpectedNumValues),
            number(ContextKind::ActualNumValues),
        ) {
            (Some(want), Some(got)) => {
                format!("{want} values required for '{arg}' but {}", provided(got))
            }
            _ => fallback(),
        },
        (ErrorKind::TooFewValues, Some(arg), _) => match (
            number(ContextKind::MinValues),
            number(ContextKind::ActualNumValues),
        ) {
            (Some(min), Some(got)) => {
                format!("{min} values required by '{arg}'; only {}", provided(got))
            }
            _ => fallback(),
        },
        (ErrorKind::TooManyValues, Some(arg), Some(value)) => {
            format!("unexpected value '{value}' for '{arg}' found; no more were expected")
        }
        (ErrorKind::UnknownArgument, Some(arg), _) => format!("unexpected argument '{arg}' found"),
        (ErrorKind::ArgumentConflict, Some(arg), _) => match text(ContextKind::PriorArg) {
            Some(prior) if prior == arg => format!("the argument '{arg}' cannot be used multiple times"),
            Some(prior) => format!("the argument '{arg}' cannot be used with '{prior}'"),
            None => format!("the argument '{arg}' cannot be used with one or more of the other specified arguments"),
        },
        (ErrorKind::MissingRequiredArgument, Some(args), _) => {
            format!("the following required arguments were not provided: {args}")
        }
        (ErrorKind::InvalidSubcommand, _, _) => match text(ContextKind::InvalidSubcommand) {
            Some(sub) => format!("unrecognized subcommand '{sub}'"),
            None => fallback(),
        },
        _ => fallback(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cli_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn each_subcommand_help_shows_only_its_options() {
        let mut cli = Cli::command();
        let help = |cli: &mut clap::Command, name: &str| {
            cli.find_subcommand_mut(name)
                .unwrap()
                .render_long_help()
                .to_string()
        };
        let count = help(&mut cli, "count");
        assert!(
            count.contains("--threads") && !count.contains("list"),
            "{count}"
        );
        assert!(
            !count.contains("perm") && count.contains("markdown"),
            "{count}"
        );
        let bench = help(&mut cli, "bench");
        assert!(bench.contains("1,2,4"), "{bench}");
        let verify = help(&mut cli, "verify");
        assert!(!verify.contains("--threads") && !verify.contains("--markdown"));
        let completions = help(&mut cli, "completions");
        for flag in ["--threads", "--quiet", "--format", "--json"] {
            assert!(!completions.contains(flag), "{flag}: {completions}");
        }
    }

    #[test]
    fn errors_are_one_line_with_the_choices() {
        let error = |argv: &[&str]| {
            let argv = std::iter::once("nqueens").chain(argv.iter().copied());
            Cli::try_parse_from(argv)
                .unwrap_err()
                .apply::<OneLine>()
                .to_string()
        };
        let cases: [(&[&str], &str); 5] = [
            (&["count", "0"], "invalid value '0' for '[N]': out of range 1..32"),
            (
                &["count", "8", "--format", "pdf"],
                "invalid value 'pdf' for '--format <FORMAT>' [possible values: text, json, markdown]",
            ),
            (&["verify", "-j", "2", "-"], "unexpected argument '-j' found"),
            (
                &["count", "8", "--json", "--format", "json"],
                "the argument '--json' cannot be used with '--format <FORMAT>'",
            ),
            (&["count"], "the following required arguments were not provided: <N>"),
        ];
        for (argv, want) in cases {
            let got = error(argv);
            assert!(got.starts_with(want), "{argv:?}: {got}");
            assert_eq!(got.trim_end().lines().count(), 1, "{argv:?}: {got}");
        }
    }
}
