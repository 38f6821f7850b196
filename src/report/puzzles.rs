//! The outputs of `two-colour` and `verify`: a serde model each, with its renderers.
//!
//! JSON fields are declared in alphabetical order: that is the order these outputs have
//! always had (they were once written through a sorted map), and scripts may compare them
//! byte for byte.

use std::io::{self, Write};

use serde::Serialize;

use super::{plural, Format};
use crate::puzzles::two_colour::TwoColour;
use crate::puzzles::verify::PermutationCheck;

/// The schema tag of the two-colour report.
pub const TWO_COLOUR_SCHEMA: &str = "nqueens.two-colour/1";

/// A two-colour count, as printed.
///
/// JSON fields: `elapsed_s`, `n`, `pairs` (a decimal string: it may pass 2^53),
/// `representatives`, `schema` ([`TWO_COLOUR_SCHEMA`]), `solutions`, `symmetries`, `threads`,
/// `version` (of the tool).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TwoColourReport {
    /// Wall-clock seconds.
    pub elapsed_s: f64,
    /// Board size.
    pub n: u32,
    /// Ordered (black, white) pairs of fitting solutions that share no cell.
    pub pairs: String,
    /// Solutions processed as black (one per orbit).
    pub representatives: u64,
    /// Schema tag, [`TWO_COLOUR_SCHEMA`].
    pub schema: &'static str,
    /// N-Queens solutions that fit the mask.
    pub solutions: u64,
    /// Symmetries of the square that leave the mask unchanged.
    pub symmetries: usize,
    /// Worker threads.
    pub threads: usize,
    /// Version of nqueens.
    pub version: &'static str,
}

impl From<&TwoColour> for TwoColourReport {
    fn from(r: &TwoColour) -> Self {
        TwoColourReport {
            elapsed_s: r.elapsed.as_secs_f64(),
            n: r.n,
            pairs: r.pairs.to_string(),
            representatives: r.representatives,
            schema: TWO_COLOUR_SCHEMA,
            solutions: r.solutions,
            symmetries: r.symmetries,
            threads: r.threads,
            version: env!("CARGO_PKG_VERSION"),
        }
    }
}

/// Writes a two-colour count in `format`: the number of pairs, one JSON object, or a
/// markdown table.
pub fn render_two_colour(
    r: &TwoColourReport,
    format: Format,
    out: &mut dyn Write,
) -> io::Result<()> {
    match format {
        Format::Json => {
            serde_json::to_writer(&mut *out, r)?;
            writeln!(out)
        }
        Format::Markdown => {
            writeln!(out, "| n | fitting solutions | ordered pairs |")?;
            writeln!(out, "|---|---|---|")?;
            writeln!(out, "| {} | {} | {} |", r.n, r.solutions, r.pairs)
        }
        Format::Text => writeln!(out, "{}", r.pairs),
    }
}

/// The schema tag of each `verify --json` line.
pub const VERDICT_SCHEMA: &str = "nqueens.verdict/1";

/// The verdict on one claimed solution, as `verify` prints it.
///
/// JSON fields: `checked` (false for a `no solution` line without a board size to check it
/// against), `claim` (`solution`, or `no solution` for that line), `conflicts`, `line`, `n`
/// (`null` for an unchecked `no solution`), `problems` (the first few, in words), `schema`
/// ([`VERDICT_SCHEMA`]), `valid`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Verdict {
    /// Whether the line could be checked.
    pub checked: bool,
    /// What the line claims: `solution` or `no solution`.
    pub claim: &'static str,
    /// The total number of problems.
    pub conflicts: u64,
    /// The input line of the permutation (1-based).
    pub line: usize,
    /// The board size, if known.
    pub n: Option<u64>,
    /// The first problems, in words.
    pub problems: Vec<String>,
    /// Schema tag, [`VERDICT_SCHEMA`].
    pub schema: &'static str,
    /// Whether the line is a right answer.
    pub valid: bool,
}

impl Verdict {
    /// The verdict on the permutation read from `line`.
    pub fn new(line: usize, check: &PermutationCheck) -> Self {
        Verdict {
            checked: true,
            claim: "solution",
            conflicts: check.conflicts,
            line,
            n: Some(check.n),
            problems: check.problems.iter().map(ToString::to_string).collect(),
            schema: VERDICT_SCHEMA,
            valid: check.is_valid(),
        }
    }

    /// The verdict on a `no solution` line, for a board of `size` if known: right for
    /// n = 2 and 3 only, and not checked without a size.
    pub fn no_solution(line: usize, size: Option<u64>) -> Self {
        let valid = size.is_some_and(|n| n == 2 || n == 3);
        let problem = match size {
            None => Some(
                "not checked: right only for n = 2 and 3 (give --size to check it)".to_string(),
            ),
            Some(n) if !valid => Some(format!("n = {n} has solutions")),
            Some(_) => None,
        };
        Verdict {
            checked: size.is_some(),
            claim: "no solution",
            conflicts: u64::from(size.is_some() && !valid),
            line,
            n: size,
            problems: problem.into_iter().collect(),
            schema: VERDICT_SCHEMA,
            valid,
        }
    }
}

/// Writes a verdict: one JSON line, or a line of text followed by its problems.
pub fn render_verdict(v: &Verdict, format: Format, out: &mut dyn Write) -> io::Result<()> {
    if format == Format::Json {
        serde_json::to_writer(&mut *out, v)?;
        return writeln!(out);
    }
    let line = v.line;
    let n = v.n.map_or("unknown".to_string(), |n| n.to_string());
    match (v.claim, v.checked, v.valid) {
        ("no solution", true, true) => {
            return writeln!(out, "line {line}: valid, no solution for n = {n}")
        }
        ("no solution", true, false) => writeln!(out, "line {line}: INVALID, no solution claimed")?,
        ("no solution", false, _) => writeln!(out, "line {line}: no solution claimed")?,
        (_, _, true) => return writeln!(out, "line {line}: valid, n = {n}"),
        _ => {
            let conflicts = plural(v.conflicts, "conflict");
            writeln!(out, "line {line}: INVALID, n = {n}, {conflicts}")?;
        }
    }
    for p in &v.problems {
        writeln!(out, "  {p}")?;
    }
    let more = v.conflicts.saturating_sub(v.problems.len() as u64);
    if more > 0 {
        writeln!(out, "  ... and {more} more")?;
    }
    Ok(())
}
