//! The report model and its renderers.
//!
//! Commands build a serde model ([`CountReport`], [`ShardSummary`], [`EstimateReport`], …)
//! and hand it to a pure renderer: text ([`text`]), JSON ([`json`]) or markdown
//! ([`markdown`]). Nothing here computes anything.

mod compare;
mod estimate;
pub mod json;
pub mod markdown;
mod puzzles;
mod shard;
mod status;
pub mod text;

pub use compare::{render_comparison, SpeedRatio, COMPARE_SCHEMA};
pub use estimate::{
    render_estimate, CountersReport, EstimateReport, ExtrapolationReport, GpuSpanReport,
    PiecesReport, Span, SpeedReport, WorkReport, ESTIMATE_SCHEMA,
};
pub use puzzles::{
    render_two_colour, render_verdict, TwoColourReport, Verdict, TWO_COLOUR_SCHEMA, VERDICT_SCHEMA,
};
pub use shard::{render_shard_summary, ShardSummary, SHARD_SUMMARY_SCHEMA};
pub use status::render_status;

use std::io::{self, Write};

use serde::{Deserialize, Serialize};

use crate::bench::BenchReport;
use crate::Count;

/// The schema tag of a count report.
pub const COUNT_SCHEMA: &str = "nqueens.count/1";

/// Output format of a report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Format {
    /// Plain values, one per line.
    #[default]
    Text,
    /// One JSON object.
    Json,
    /// A markdown table.
    Markdown,
}

/// One finished count, as printed and exported.
///
/// JSON fields: `schema` (`"nqueens.count/1"`), `version` (of the tool), `n`, `total` and
/// `unique` (decimal strings, so no digit is lost past 2^53; `unique` is null unless asked
/// for), `engine`, `plan`, `tasks`, `threads`, `elapsed_s`, `cpu_s` (process CPU seconds over
/// the same span, all threads; null where not measured, e.g. after a resume), `verified` and
/// `unique_verified` (true/false against OEIS, null when no value is published), `code_path`
/// (the kernel variant chosen for this CPU), `isa` (the matcher's instruction-set level, as
/// `NQUEENS_ISA` names it), `rechecked` (tasks re-solved on the portable code path with
/// the same count; null without `--recheck`), `cpu` (see [`crate::cpu::name`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CountReport {
    /// Schema tag, [`COUNT_SCHEMA`].
    pub schema: String,
    /// Version of nqueens that produced the report.
    pub version: String,
    /// Board size.
    pub n: u32,
    /// Number of solutions, as a decimal string.
    pub total: String,
    /// Number of fundamental solutions, as a decimal string.
    pub unique: Option<String>,
    /// Engine name.
    pub engine: String,
    /// Plan parameters.
    pub plan: String,
    /// Number of tasks in the plan.
    pub tasks: usize,
    /// Worker threads.
    pub threads: usize,
    /// Wall-clock seconds.
    pub elapsed_s: f64,
    /// Process CPU seconds over the same span, all threads together (see [`Count::cpu`]).
    #[serde(default)]
    pub cpu_s: Option<f64>,
    /// Agreement of `total` with OEIS A000170.
    pub verified: Option<bool>,
    /// Agreement of `unique` with OEIS A002562.
    pub unique_verified: Option<bool>,
    /// Kernel code path used on this CPU.
    pub code_path: String,
    /// The matcher's instruction-set level (see [`crate::engine::matcher_level`]).
    #[serde(default)]
    pub isa: String,
    /// Tasks re-solved on the portable code path with the same count (`--recheck`).
    #[serde(default)]
    pub rechecked: Option<usize>,
    /// The CPU counted on (see [`crate::cpu::name`]).
    #[serde(default)]
    pub cpu: String,
    /// What the GPU did over the whole count (`--gpu`; absent otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu: Option<crate::work::GpuWork>,
}

impl From<&Count> for CountReport {
    fn from(c: &Count) -> Self {
        CountReport {
            schema: COUNT_SCHEMA.to_string(),
            version: env!("CARGO_PKG_VERSION").to_string(),
            n: c.n,
            total: c.total.to_string(),
            unique: c.unique.map(|u| u.to_string()),
            engine: c.engine.to_string(),
            plan: c.plan.clone(),
            tasks: c.tasks,
            threads: c.threads,
            elapsed_s: c.elapsed.as_secs_f64(),
            cpu_s: c.cpu.map(|d| d.as_secs_f64()),
            verified: c.verified,
            unique_verified: c.unique_verified,
            code_path: crate::engine::code_paths(),
            isa: crate::engine::matcher_level().to_string(),
            rechecked: c.rechecked,
            cpu: crate::cpu::name(),
            gpu: c.gpu.clone(),
        }
    }
}

/// Writes `report` in `format`.
pub fn render_count(report: &CountReport, format: Format, out: &mut dyn Write) -> io::Result<()> {
    match format {
        Format::Text => text::count(report, out),
        Format::Json => json::write(report, out),
        Format::Markdown => markdown::count(report, out),
    }
}

/// The most problems a report lists for people; the rest are counted (JSON lists them all).
pub const MAX_LISTED: usize = 20;

/// The line that counts the problems past the first [`MAX_LISTED`] of `total`, if any.
pub fn more_problems(total: usize) -> Option<String> {
    let more = total.checked_sub(MAX_LISTED).filter(|&m| m > 0)?;
    Some(format!(
        "... and {} (--json lists them all)",
        plural(more, "more problem")
    ))
}

/// `text` with every control character written as an escape (`\n`, `\t`, `\r`, `\x1b`,
/// `\u{9b}`), for a line for people that names files or quotes them: a name holding a
/// newline, a carriage return or an escape sequence must neither forge a line nor act on the
/// terminal it is printed to.
pub fn printable(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(char::is_control) {
        return text.into();
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() && (c as u32) < 0x80 => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c if c.is_control() => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    out.into()
}

/// `1 solution`, `2 solutions`: a count with its noun in the right number.
pub fn plural(count: impl std::fmt::Display, noun: &str) -> String {
    let text = count.to_string();
    let s = if text == "1" { "" } else { "s" };
    format!("{text} {noun}{s}")
}

/// Formats an optional verification flag for people.
pub fn verified_label(verified: Option<bool>) -> &'static str {
    match verified {
        Some(true) => "yes",
        Some(false) => "NO",
        None => "unknown",
    }
}

/// Writes a benchmark report in `format`.
pub fn render_bench(report: &BenchReport, format: Format, out: &mut dyn Write) -> io::Result<()> {
    match format {
        Format::Text => text::bench(report, out),
        Format::Json => json::write(report, out),
        Format::Markdown => markdown::bench(report, out),
    }
}

/// The per-thread-count table of a benchmark: header and rows, shared by text and markdown.
pub fn bench_table(report: &BenchReport) -> (Vec<&'static str>, Vec<Vec<String>>) {
    let header = vec![
        "threads",
        "copies",
        "wall (s)",
        "CPU (s)",
        "solutions/s",
        "speed-up",
        "efficiency",
        "busy",
        "core speed",
    ];
    let rows = report
        .results
        .iter()
        .map(|r| {
            vec![
                r.threads.to_string(),
                r.copies.to_string(),
                format!("{:.3}", r.wall_s),
                r.cpu_s
                    .map_or_else(|| "-".to_string(), |c| format!("{c:.3}")),
                format!("{:.3e}", r.solutions_per_s),
                format!("{:.2}", r.speedup),
                percent(Some(r.efficiency)),
                percent(r.busy),
                percent(r.core_speed),
            ]
        })
        .collect();
    (header, rows)
}

/// A share as a percentage for the bench table; under 1% with two decimals, so 1000 threads
/// on 2 CPUs read 0.08%, not 0% beside a speed-up of 0.75.
fn percent(x: Option<f64>) -> String {
    x.map_or_else(
        || "-".to_string(),
        |x| match 100.0 * x {
            p if p > 0.0 && p < 0.005 => "<0.01%".to_string(),
            p if p > 0.0 && p < 0.995 => format!("{p:.2}%"),
            p => format!("{p:.0}%"),
        },
    )
}

/// Lines describing the workload, the host and the score of a benchmark.
pub fn bench_summary(r: &BenchReport) -> Vec<String> {
    let w = &r.workload;
    let h = &r.host;
    let sizes: Vec<String> = w.sizes.iter().map(u32::to_string).collect();
    let mut lines = vec![
        format!(
            "workload: {:?} v{} ({} engine, N = {}, once per thread in each row), {} verified \
             round(s)",
            w.name,
            w.version,
            w.engine,
            sizes.join(", "),
            r.rounds
        )
        .to_lowercase(),
        format!(
            "host: {}, {} logical / {} physical cores, {} {}, features: {}, code path: {}",
            h.cpu,
            h.logical_cores,
            h.physical_cores,
            h.os,
            h.arch,
            h.features.join(" "),
            h.code_path
        ),
        format!("nqueens {} ({})", h.version, h.commit),
    ];
    if let Some(gpu) = &r.gpu {
        lines.push(format!("joins on {gpu}, fed by each row's threads"));
    }
    lines.extend([format!(
        "score: {:.2} (million solutions per second at the best thread count)",
        r.score
    )]);
    if r.rechecked > 0 {
        lines.push(format!(
            "recheck: {} tasks also solved on the portable code path, all agree",
            r.rechecked
        ));
    }
    if r.interrupted {
        lines.push("interrupted: the rows below are those finished before it stopped".into());
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_shares_keep_two_decimals_and_none_reads_as_zero() {
        assert_eq!(percent(Some(0.8 / 1000.0)), "0.08%");
        assert_eq!(percent(Some(1e-6)), "<0.01%");
        assert_eq!(percent(Some(0.0)), "0%");
        assert_eq!(percent(Some(0.5)), "50%");
        assert_eq!(percent(Some(1.0)), "100%");
        assert_eq!(percent(None), "-");
    }
}
