//! Command-line definition (clap derive). Doc comments here are the `--help` text.

use std::num::NonZeroUsize;
use std::time::Duration;

use clap::builder::{PossibleValuesParser, TypedValueParser};
use clap::{Arg, Args, CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum};
use nqueens::{MAX_N, MAX_THREADS, MIN_N};

use crate::cmd;
use crate::exit::UsageError;

/// Count N-Queens solutions fast, and solve the companion puzzles.
#[derive(Debug, Parser)]
#[command(name = "nqueens", version, about, propagate_version = true)]
pub(crate) struct Cli {
    /// Options every subcommand accepts.
    #[command(flatten)]
    pub global: Global,
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Options shared by every subcommand.
#[derive(Debug, Args)]
pub(crate) struct Global {
    /// Worker threads [default: all logical CPUs]; `bench` takes a list such as 1,2,4
    #[arg(short = 'j', long, global = true, value_name = "N", value_parser = parse_thread_list)]
    pub threads: Option<ThreadList>,

    /// No progress bar or commentary; results still print
    #[arg(short, long, global = true)]
    pub quiet: bool,

    /// Output format of results on stdout
    #[arg(long, global = true, value_enum, default_value_t = FormatArg::Text)]
    pub format: FormatArg,

    /// Shorthand for --format json
    #[arg(long, global = true, conflicts_with_all = ["markdown", "format"])]
    pub json: bool,

    /// Shorthand for --format markdown
    #[arg(long, global = true, conflicts_with = "format")]
    pub markdown: bool,
}

/// One or more thread counts, as given to `-j/--threads`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ThreadList(pub Vec<NonZeroUsize>);

impl Global {
    /// The thread count to use: the flag's (first) value, or every logical CPU.
    pub(crate) fn threads(&self) -> usize {
        self.threads
            .as_ref()
            .map_or_else(|| num_cpus::get().min(MAX_THREADS), |list| list.0[0].get())
    }

    /// The single thread count for commands that take one; a list is a usage error.
    pub(crate) fn single_threads(&self) -> Result<usize, UsageError> {
        match &self.threads {
            Some(list) if list.0.len() > 1 => Err(UsageError(
                "this command takes one thread count, not a list".to_string(),
            )),
            _ => Ok(self.threads()),
        }
    }

    /// The thread counts given, if any.
    pub(crate) fn thread_list(&self) -> Option<Vec<usize>> {
        self.threads
            .as_ref()
            .map(|list| list.0.iter().map(|t| t.get()).collect())
    }

    /// The format asked for, with the shorthands applied.
    pub(crate) fn format_arg(&self) -> FormatArg {
        match (self.json, self.markdown) {
            (true, _) => FormatArg::Json,
            (false, true) => FormatArg::Markdown,
            (false, false) => self.format,
        }
    }

    /// The output format (`--json` and `--markdown` conflict with an explicit `--format`).
    pub(crate) fn format(&self) -> nqueens::report::Format {
        use nqueens::report::Format;
        match (self.json, self.markdown, self.format) {
            (true, _, _) | (false, false, FormatArg::Json) => Format::Json,
            (false, true, _) | (false, false, FormatArg::Markdown) => Format::Markdown,
            (false, false, FormatArg::Text | FormatArg::Board | FormatArg::Perm) => Format::Text,
        }
    }
}

/// Output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum FormatArg {
    /// Plain values
    Text,
    /// One JSON object
    Json,
    /// A markdown table
    Markdown,
    /// Boards of `.` and `Q` (solutions, place)
    Board,
    /// One line of 1-based positions per solution (solutions, place)
    Perm,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Count the solutions for an N×N board
    Count(cmd::count::Args),
    /// Print every solution of an N×N board, in lexicographic order
    Solutions(cmd::solutions::Args),
    /// Print one solution for an N×N board (N up to 4294967295)
    Place(cmd::place::Args),
    /// Check claimed solutions, one permutation per line
    Verify(cmd::verify::Args),
    /// Count the ways to put N black and N white queens on a board with blocked cells
    #[command(name = "two-colour", visible_alias = "two-color")]
    TwoColour(cmd::two_colour::Args),
    /// Benchmark this machine on a fixed, verified workload
    Bench(cmd::bench::Args),
    /// Check and add up shard result files (from `count --shard I/K --out FILE`)
    Merge(cmd::merge::Args),
    /// Estimate what a count will cost (core-hours, wall time, memory, shards) from a sample
    Estimate(cmd::estimate::Args),
    /// Print shell completions
    Completions(cmd::completions::Args),
}

impl Command {
    /// The subcommand's name, as typed on the command line.
    pub(crate) fn name(&self) -> &'static str {
        match self {
            Command::Count(_) => "count",
            Command::Solutions(_) => "solutions",
            Command::Place(_) => "place",
            Command::Verify(_) => "verify",
            Command::TwoColour(_) => "two-colour",
            Command::Bench(_) => "bench",
            Command::Merge(_) => "merge",
            Command::Estimate(_) => "estimate",
            Command::Completions(_) => "completions",
        }
    }
}

/// How a subcommand takes `-j/--threads`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Threads {
    /// It runs on one thread: `-j` is refused.
    None,
    /// One thread count.
    One,
    /// A list of thread counts, each run in turn (`bench`).
    List,
}

/// The global options a subcommand uses: its help shows only these, and the others are
/// refused rather than ignored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Scope {
    /// How it takes `-j`.
    pub threads: Threads,
    /// Whether it has progress or commentary for `-q` to silence.
    pub quiet: bool,
    /// The output formats it can write.
    pub formats: &'static [FormatArg],
}

/// The global options the subcommand called `name` uses (`None`: no such subcommand).
pub(crate) fn scope(name: &str) -> Option<Scope> {
    use FormatArg::{Board, Json, Markdown, Perm, Text};
    let (threads, quiet, formats): (_, _, &'static [FormatArg]) = match name {
        "count" | "two-colour" => (Threads::One, true, &[Text, Json, Markdown]),
        "bench" => (Threads::List, true, &[Text, Json, Markdown]),
        "estimate" => (Threads::One, true, &[Text, Json]),
        "solutions" | "place" => (Threads::None, true, &[Text, Json, Board, Perm]),
        "verify" | "merge" => (Threads::None, true, &[Text, Json]),
        "completions" => (Threads::None, false, &[Text]),
        _ => return None,
    };
    Some(Scope {
        threads,
        quiet,
        formats,
    })
}

/// The command line: [`Cli`] with each subcommand showing only the global options it uses, in
/// its own words. The others stay accepted but hidden, so `cmd::run` can refuse them with a
/// clear message.
pub(crate) fn command() -> clap::Command {
    let cli = Cli::command();
    let globals: Vec<Arg> = cli
        .get_arguments()
        .filter(|a| a.is_global_set())
        .cloned()
        .collect();
    let names: Vec<String> = cli
        .get_subcommands()
        .map(|c| c.get_name().to_string())
        .collect();
    names.iter().fold(cli, |cli, name| {
        let scope = scope(name).expect("every subcommand has a scope");
        cli.mut_subcommand(name, |sub| specialise(sub, scope, &globals))
    })
}

/// Gives `sub` its own copy of each global option, worded or hidden for `scope`. A
/// subcommand's own copy takes the place of the propagated one, and its value still reaches
/// [`Global`] (same id, still global).
fn specialise(sub: clap::Command, scope: Scope, globals: &[Arg]) -> clap::Command {
    let shown = |f: FormatArg| scope.formats.contains(&f);
    globals.iter().fold(sub, |sub, arg| {
        let arg = arg.clone().help_heading("Common options");
        let arg = match arg.get_id().as_str() {
            "threads" => match scope.threads {
                Threads::None => arg.hide(true),
                Threads::One => arg.help("Worker threads [default: all logical CPUs]"),
                Threads::List => arg.help(
                    "Worker threads: a count, or a list such as 1,2,4 measured in turn \
                     [default: 1, 2, 4, … up to all logical CPUs]",
                ),
            },
            "quiet" => arg.hide(!scope.quiet),
            "format" => arg
                .hide(scope.formats.len() < 2)
                .value_parser(format_parser(scope.formats)),
            "json" => arg.hide(!shown(FormatArg::Json)),
            "markdown" => arg.hide(!shown(FormatArg::Markdown)),
            _ => arg,
        };
        sub.arg(arg)
    })
}

/// Parses `--format`: every value is accepted (so a format the command cannot write gets a
/// message that says so), but help and errors list only the ones in `formats`.
fn format_parser(formats: &'static [FormatArg]) -> impl TypedValueParser<Value = FormatArg> {
    let values = FormatArg::value_variants().iter().filter_map(|f| {
        let value = f.to_possible_value()?;
        Some(value.hide(!formats.contains(f)))
    });
    PossibleValuesParser::new(values)
        .map(|name| FormatArg::from_str(&name, false).expect("one of the listed values"))
}

/// Parses the process's arguments with [`command`]'s definition.
pub(crate) fn try_parse() -> Result<Cli, clap::Error> {
    let mut command = command();
    let mut matches = command.try_get_matches_from_mut(std::env::args_os())?;
    Cli::from_arg_matches_mut(&mut matches).map_err(|e| e.format(&mut command))
}

/// Parses a board size, naming the accepted range on error.
pub(crate) fn parse_n(s: &str) -> Result<u32, String> {
    let range = format!("N must be a whole number from {MIN_N} to {MAX_N}");
    match parse_whole(s) {
        Some(Some(n)) if (i64::from(MIN_N)..=i64::from(MAX_N)).contains(&n) => Ok(n as u32),
        Some(_) => Err(format!("out of range {MIN_N}..{MAX_N} ({range})")),
        None => Err(format!("not a whole number ({range})")),
    }
}

/// Reads a whole number: `None` if `s` is not one, `Some(None)` if it is one too long for
/// `i64` (so "99999999999999999999" is out of range, not "not a whole number").
pub(crate) fn parse_whole(s: &str) -> Option<Option<i64>> {
    let s = s.trim();
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(s.parse::<i64>().ok())
}

/// Parses a number of seconds above 0 and at most `max` (fractions allowed, e.g. 0.5).
pub(crate) fn parse_seconds(s: &str, max: f64) -> Result<Duration, String> {
    match s.trim().parse::<f64>() {
        Ok(x) if x > 0.0 && x <= max => Duration::try_from_secs_f64(x).map_err(|e| e.to_string()),
        _ => Err(format!(
            "'{s}' is not a positive number of seconds, at most {max} (e.g. 5 or 0.5)"
        )),
    }
}

/// Parses a comma-separated list of thread counts (one value for most commands).
pub(crate) fn parse_thread_list(s: &str) -> Result<ThreadList, String> {
    s.split(',')
        .map(parse_threads)
        .collect::<Result<Vec<_>, _>>()
        .map(ThreadList)
}

/// Parses a thread count, naming the accepted range on error.
pub(crate) fn parse_threads(s: &str) -> Result<NonZeroUsize, String> {
    let range = format!("threads must be a whole number from 1 to {MAX_THREADS}");
    match parse_whole(s) {
        Some(Some(t)) if (1..=MAX_THREADS as i64).contains(&t) => {
            Ok(NonZeroUsize::new(t as usize).expect("t >= 1"))
        }
        Some(_) => Err(format!("out of range 1..{MAX_THREADS} ({range})")),
        None => Err(format!("not a whole number ({range})")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_definition_is_consistent() {
        Cli::command().debug_assert();
        command().debug_assert();
    }

    #[test]
    fn every_subcommand_has_a_scope() {
        for sub in Cli::command().get_subcommands() {
            assert!(scope(sub.get_name()).is_some(), "{}", sub.get_name());
        }
    }

    #[test]
    fn command_names_match_the_parsed_subcommands() {
        let argv = [
            &["count", "8"][..],
            &["solutions", "4"],
            &["place", "8"],
            &["verify", "-"],
            &["two-colour", "f"],
            &["bench"],
            &["merge", "f"],
            &["estimate", "20"],
            &["completions", "bash"],
        ];
        let subcommands = Cli::command().get_subcommands().count();
        for args in argv {
            let cli = Cli::try_parse_from(std::iter::once("nqueens").chain(args.iter().copied()))
                .unwrap();
            assert_eq!(cli.command.name(), args[0]);
        }
        assert_eq!(subcommands, argv.len());
    }

    #[test]
    fn each_subcommand_help_shows_only_its_options() {
        let mut cli = command();
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
    fn board_sizes_outside_the_range_name_it() {
        assert_eq!(parse_n("16"), Ok(16));
        for bad in ["0", "33", "-4", "abc", ""] {
            let err = parse_n(bad).unwrap_err();
            assert!(err.contains("1 to 32"), "{bad}: {err}");
        }
    }

    #[test]
    fn over_long_numbers_are_out_of_range_not_malformed() {
        let err = parse_n("99999999999999999999999").unwrap_err();
        assert!(err.starts_with("out of range 1..32"), "{err}");
        assert!(parse_n("-99999999999999999999999")
            .unwrap_err()
            .starts_with("out of range"));
        assert!(parse_n("1e3")
            .unwrap_err()
            .starts_with("not a whole number"));
        assert!(parse_threads("99999999999999999999")
            .unwrap_err()
            .starts_with("out of range"));
    }

    proptest::proptest! {
        #[test]
        fn arbitrary_text_never_panics_the_number_parsers(s in "\\PC{0,40}") {
            let _ = parse_n(&s);
            let _ = parse_thread_list(&s);
        }

        #[test]
        fn every_size_in_range_parses_back(n in 1u32..=32) {
            proptest::prop_assert_eq!(parse_n(&n.to_string()), Ok(n));
        }
    }

    #[test]
    fn seconds_must_be_positive_and_within_the_bound() {
        assert_eq!(parse_seconds("0.5", 10.0), Ok(Duration::from_millis(500)));
        assert_eq!(parse_seconds(" 10 ", 10.0), Ok(Duration::from_secs(10)));
        for bad in ["0", "-3", "soon", "10.5", "1e300", "NaN", "inf", ""] {
            let err = parse_seconds(bad, 10.0).unwrap_err();
            assert!(err.contains("at most 10"), "{bad}: {err}");
        }
    }

    #[test]
    fn thread_lists_parse_and_reject_zero() {
        let list = parse_thread_list("1,2,4").unwrap();
        assert_eq!(
            list.0.iter().map(|t| t.get()).collect::<Vec<_>>(),
            [1, 2, 4]
        );
        assert!(parse_thread_list("1,0").is_err());
    }

    #[test]
    fn zero_threads_is_rejected() {
        assert!(parse_threads("0").unwrap_err().contains("from 1"));
        assert_eq!(parse_threads("3").unwrap().get(), 3);
    }
}
