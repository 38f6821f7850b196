//! What `bench --compare A B` prints: B's speed over A's, per thread count.

use std::io::{self, Write};

use serde::Serialize;

use super::{json, markdown, text, Format};

/// The schema tag of `bench --compare --json`.
pub const COMPARE_SCHEMA: &str = "nqueens.bench-compare/1";

/// B's speed over A's at one thread count.
///
/// JSON: `{"schema": COMPARE_SCHEMA, "ratios": [...]}`, each ratio an object with the fields
/// `ratio` (rounded to three decimals, as the table shows it) and `threads`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SpeedRatio {
    /// B's solutions/s divided by A's, rounded to three decimals.
    pub ratio: f64,
    /// The thread count.
    pub threads: usize,
}

impl SpeedRatio {
    /// The ratio at `threads`, rounded to three decimals (a quotient of two whole numbers,
    /// so it is the double nearest the three-decimal value).
    pub fn new(threads: usize, ratio: f64) -> Self {
        SpeedRatio {
            ratio: (ratio * 1000.0).round() / 1000.0,
            threads,
        }
    }
}

/// The JSON document of a comparison.
#[derive(Serialize)]
struct Comparison<'a> {
    schema: &'static str,
    ratios: &'a [SpeedRatio],
}

/// Writes the ratios: a table (text or markdown) or one JSON object (see [`SpeedRatio`]).
pub fn render_comparison(
    ratios: &[SpeedRatio],
    format: Format,
    out: &mut dyn Write,
) -> io::Result<()> {
    let header = ["threads", "B/A speed"];
    let body: Vec<Vec<String>> = ratios
        .iter()
        .map(|r| vec![r.threads.to_string(), format!("{:.3}", r.ratio)])
        .collect();
    match format {
        Format::Markdown => markdown::table(&header, &body, out),
        Format::Json => json::write(
            &Comparison {
                schema: COMPARE_SCHEMA,
                ratios,
            },
            out,
        ),
        Format::Text => text::table(&header, &body, out),
    }
}
