//! Command-line definition (clap derive). Doc comments here are the `--help` text.

use std::num::NonZeroUsize;
use std::time::Duration;

use clap::{Args, Parser, Subcommand, ValueEnum};
use nqueens::{MAX_N, MAX_THREADS, MIN_N};

use crate::cmd;
use crate::exit::UsageError;

/// Count N-Queens solutions fast, and solve the companion puzzles.
#[derive(Debug, Parser)]
#[command(name = "nqueens", version, about, propagate_version = true)]
pub struct Cli {
    /// Options every subcommand accepts.
    #[command(flatten)]
    pub global: Global,
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Options shared by every subcommand.
#[derive(Debug, Args)]
pub struct Global {
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
pub struct ThreadList(pub Vec<NonZeroUsize>);

impl Global {
    /// The thread count to use: the flag's (first) value, or every logical CPU.
    pub fn threads(&self) -> usize {
        self.threads
            .as_ref()
            .map_or_else(|| num_cpus::get().min(MAX_THREADS), |list| list.0[0].get())
    }

    /// The single thread count for commands that take one; a list is a usage error.
    pub fn single_threads(&self) -> Result<usize, UsageError> {
        match &self.threads {
            Some(list) if list.0.len() > 1 => Err(UsageError(
                "this command takes one thread count, not a list".to_string(),
            )),
            _ => Ok(self.threads()),
        }
    }

    /// The thread counts given, if any.
    pub fn thread_list(&self) -> Option<Vec<usize>> {
        self.threads
            .as_ref()
            .map(|list| list.0.iter().map(|t| t.get()).collect())
    }

    /// The format asked for, with the shorthands applied.
    pub fn format_arg(&self) -> FormatArg {
        match (self.json, self.markdown) {
            (true, _) => FormatArg::Json,
            (false, true) => FormatArg::Markdown,
            (false, false) => self.format,
        }
    }

    /// The output format (`--json` and `--markdown` conflict with an explicit `--format`).
    pub fn format(&self) -> nqueens::report::Format {
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
pub enum FormatArg {
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
pub enum Command {
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

/// Parses a board size, naming the accepted range on error.
pub fn parse_n(s: &str) -> Result<u32, String> {
    let range = format!("N must be a whole number from {MIN_N} to {MAX_N}");
    match parse_whole(s) {
        Some(Some(n)) if (i64::from(MIN_N)..=i64::from(MAX_N)).contains(&n) => Ok(n as u32),
        Some(_) => Err(format!("out of range {MIN_N}..{MAX_N} ({range})")),
        None => Err(format!("not a whole number ({range})")),
    }
}

/// Reads a whole number: `None` if `s` is not one, `Some(None)` if it is one too long for
/// `i64` (so "99999999999999999999" is out of range, not "not a whole number"; issue 12).
pub fn parse_whole(s: &str) -> Option<Option<i64>> {
    let s = s.trim();
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(s.parse::<i64>().ok())
}

/// Parses a number of seconds above 0 and at most `max` (fractions allowed, e.g. 0.5).
pub fn parse_seconds(s: &str, max: f64) -> Result<Duration, String> {
    match s.trim().parse::<f64>() {
        Ok(x) if x > 0.0 && x <= max => Duration::try_from_secs_f64(x).map_err(|e| e.to_string()),
        _ => Err(format!(
            "'{s}' is not a positive number of seconds, at most {max} (e.g. 5 or 0.5)"
        )),
    }
}

/// Parses a comma-separated list of thread counts (one value for most commands).
pub fn parse_thread_list(s: &str) -> Result<ThreadList, String> {
    s.split(',')
        .map(parse_threads)
        .collect::<Result<Vec<_>, _>>()
        .map(ThreadList)
}

/// Parses a thread count, naming the accepted range on error.
pub fn parse_threads(s: &str) -> Result<NonZeroUsize, String> {
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
