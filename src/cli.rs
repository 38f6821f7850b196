//! Command-line definition (clap derive). Doc comments here are the `--help` text.

use std::num::NonZeroUsize;

use clap::{Args, Parser, Subcommand, ValueEnum};
use nqueens::{MAX_N, MAX_THREADS, MIN_N};

use crate::cmd;

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
    /// Worker threads [default: all logical CPUs]
    #[arg(short = 'j', long, global = true, value_name = "N", value_parser = parse_threads)]
    pub threads: Option<NonZeroUsize>,

    /// No progress bar or commentary; results still print
    #[arg(short, long, global = true)]
    pub quiet: bool,

    /// Output format of results on stdout
    #[arg(long, global = true, value_enum, default_value_t = FormatArg::Text)]
    pub format: FormatArg,

    /// Shorthand for --format json
    #[arg(long, global = true)]
    pub json: bool,
}

impl Global {
    /// The thread count to use: the flag, or every logical CPU.
    pub fn threads(&self) -> usize {
        self.threads.map_or_else(num_cpus::get, NonZeroUsize::get)
    }

    /// The output format, with `--json` taking precedence.
    pub fn format(&self) -> nqueens::report::Format {
        use nqueens::report::Format;
        match (self.json, self.format) {
            (true, _) | (false, FormatArg::Json) => Format::Json,
            (false, FormatArg::Text | FormatArg::Board | FormatArg::Perm) => Format::Text,
            (false, FormatArg::Markdown) => Format::Markdown,
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
    /// Print shell completions
    Completions(cmd::completions::Args),
}

/// Parses a board size, naming the accepted range on error.
pub fn parse_n(s: &str) -> Result<u32, String> {
    let range = format!("N must be a whole number from {MIN_N} to {MAX_N}");
    match s.trim().parse::<i64>() {
        Ok(n) if (i64::from(MIN_N)..=i64::from(MAX_N)).contains(&n) => Ok(n as u32),
        Ok(_) => Err(format!("out of range ({range})")),
        Err(_) => Err(format!("not a whole number ({range})")),
    }
}

/// Parses a thread count, naming the accepted range on error.
pub fn parse_threads(s: &str) -> Result<NonZeroUsize, String> {
    let range = format!("threads must be a whole number from 1 to {MAX_THREADS}");
    match s.trim().parse::<i64>() {
        Ok(t) if (1..=MAX_THREADS as i64).contains(&t) => {
            Ok(NonZeroUsize::new(t as usize).expect("t >= 1"))
        }
        Ok(_) => Err(format!("out of range ({range})")),
        Err(_) => Err(format!("not a whole number ({range})")),
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
    fn zero_threads_is_rejected() {
        assert!(parse_threads("0").unwrap_err().contains("from 1"));
        assert_eq!(parse_threads("3").unwrap().get(), 3);
    }
}
