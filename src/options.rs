//! The option groups subcommands share (`-j`, `-q`, `--format` and its shorthands), each a
//! small clap `Args` struct that a subcommand flattens in when it uses it, so clap itself shows
//! and refuses them; and [`Global`], what they amount to, as the subcommands read it.

use std::num::NonZeroUsize;

use clap::builder::{PossibleValuesParser, TypedValueParser};
use clap::{Args, ValueEnum};
use nqueens::report::Format;
use nqueens::MAX_THREADS;

use crate::exit::UsageError;
use crate::parse::{parse_one_thread_count, parse_thread_list, ThreadCounts};

/// `-j/--threads` for a command that runs on one thread count.
#[derive(Debug, Args)]
#[command(next_help_heading = "Common options")]
pub(crate) struct Threads {
    /// Worker threads [default: all logical CPUs]
    #[arg(short = 'j', long, value_name = "N", value_parser = parse_one_thread_count)]
    threads: Option<NonZeroUsize>,
}

/// `-j/--threads` for `bench`, which measures a list of thread counts in turn.
#[derive(Debug, Args)]
#[command(next_help_heading = "Common options")]
pub(crate) struct ThreadList {
    /// Worker threads: a count, or a list such as 1,2,4 measured in turn [default: 1, 2, 4, …
    /// up to all logical CPUs]
    #[arg(short = 'j', long, value_name = "N", value_parser = parse_thread_list)]
    threads: Option<ThreadCounts>,
}

/// `-q/--quiet`.
#[derive(Debug, Args)]
#[command(next_help_heading = "Common options")]
pub(crate) struct Quiet {
    /// No progress bar or commentary; results still print
    #[arg(short, long)]
    quiet: bool,
}

/// Declares an output-format group: `--format` with its `--json` and `--markdown` shorthands,
/// showing only the formats in `writes`. The others stay accepted but hidden, so that
/// [`FormatArg::check`] can say what the command writes instead of clap listing values.
macro_rules! format_group {
    ($(#[$doc:meta])* $name:ident, writes: [$($writes:ident),+], markdown_hidden: $hidden:expr) => {
        $(#[$doc])*
        #[derive(Debug, Args)]
        #[command(next_help_heading = "Common options")]
        pub(crate) struct $name {
            /// Output format of results on stdout
            #[arg(long, default_value = "text", value_parser = writable(Self::WRITES))]
            format: FormatArg,

            /// Shorthand for --format json
            #[arg(long, conflicts_with_all = ["markdown", "format"])]
            json: bool,

            /// Shorthand for --format markdown
            #[arg(long, conflicts_with = "format", hide = $hidden)]
            markdown: bool,
        }

        impl $name {
            /// The formats the command writes.
            const WRITES: &'static [FormatArg] = &[$(FormatArg::$writes),+];

            /// The format asked for, with the shorthands applied; a usage error if the
            /// command cannot write it.
            pub(crate) fn chosen(&self) -> Result<FormatArg, UsageError> {
                let asked = match (self.json, self.markdown) {
                    (true, _) => FormatArg::Json,
                    (false, true) => FormatArg::Markdown,
                    (false, false) => self.format,
                };
                asked.check(Self::WRITES)
            }
        }
    };
}

format_group!(
    /// `--format` and its shorthands, for commands that write a report.
    ReportFormat, writes: [Text, Json, Markdown], markdown_hidden: false
);
format_group!(
    /// `--format` and `--json`, for commands that write plain text or JSON.
    RecordFormat, writes: [Text, Json], markdown_hidden: true
);
format_group!(
    /// `--format` and `--json`, for commands that print solutions.
    SolutionFormat, writes: [Text, Json, Board, Perm], markdown_hidden: true
);

/// Parses `--format`: every value is accepted (so a format the command cannot write gets a
/// message that says so), but help and errors list only the ones in `writes`.
fn writable(writes: &'static [FormatArg]) -> impl TypedValueParser<Value = FormatArg> {
    let values = FormatArg::value_variants().iter().filter_map(|f| {
        let value = f.to_possible_value()?;
        Some(value.hide(!writes.contains(f)))
    });
    PossibleValuesParser::new(values)
        .map(|name| FormatArg::from_str(&name, false).expect("one of the listed values"))
}

/// Every output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum FormatArg {
    /// Plain values
    Text,
    /// JSON: one object, or JSON Lines (one object per line) where the answers come line by
    /// line (--stdin, verify, solutions)
    Json,
    /// A markdown table
    Markdown,
    /// Boards of `.` and `Q` (solutions, place)
    Board,
    /// One line of 1-based positions per solution (solutions, place)
    Perm,
}

impl FormatArg {
    /// `self`, if it is one of the formats a command `writes`; else a usage error naming them.
    fn check(self, writes: &[FormatArg]) -> Result<FormatArg, UsageError> {
        if writes.contains(&self) {
            return Ok(self);
        }
        let name = |f: &FormatArg| {
            f.to_possible_value()
                .map(|v| v.get_name().to_string())
                .unwrap_or_default()
        };
        let choices: Vec<String> = writes.iter().map(name).collect();
        Err(UsageError(format!(
            "this command cannot write --format {} (it writes {})",
            name(&self),
            choices.join(", ")
        )))
    }
}

impl Threads {
    /// The count given, if any, as a list of one.
    pub(crate) fn list(&self) -> Option<Vec<NonZeroUsize>> {
        self.threads.map(|t| vec![t])
    }
}

impl ThreadList {
    /// The counts given, if any.
    pub(crate) fn list(&self) -> Option<Vec<NonZeroUsize>> {
        self.threads.as_ref().map(|counts| counts.0.clone())
    }
}

impl Quiet {
    /// Whether `-q` was given.
    pub(crate) fn is_set(&self) -> bool {
        self.quiet
    }
}

/// The common options as a subcommand reads them, whichever groups it takes (a command
/// without `-q`, say, reads `quiet: false`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Global {
    /// The thread counts given with `-j`, if any (a list only for `bench`).
    pub threads: Option<Vec<NonZeroUsize>>,
    /// No progress bar or commentary.
    pub quiet: bool,
    /// The output format, with the shorthands applied.
    pub format: FormatArg,
}

impl Global {
    /// The thread count to use: the flag's (first) value, or every logical CPU.
    pub(crate) fn threads(&self) -> usize {
        self.threads
            .as_ref()
            .map_or_else(|| num_cpus::get().min(MAX_THREADS), |list| list[0].get())
    }

    /// The thread counts given, if any.
    pub(crate) fn thread_list(&self) -> Option<Vec<usize>> {
        self.threads
            .as_ref()
            .map(|list| list.iter().map(|t| t.get()).collect())
    }

    /// The output format of the library's renderers (boards and permutations are text).
    pub(crate) fn format(&self) -> Format {
        match self.format {
            FormatArg::Json => Format::Json,
            FormatArg::Markdown => Format::Markdown,
            FormatArg::Text | FormatArg::Board | FormatArg::Perm => Format::Text,
        }
    }
}
