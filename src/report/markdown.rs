//! Markdown rendering: GitHub-style tables.

use std::io::{self, Write};

use super::{bench_summary, bench_table, verified_label, CountReport};
use crate::bench::BenchReport;

/// Writes a markdown table: a header row, the separator, then the body rows.
pub fn table(header: &[&str], body: &[Vec<String>], out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "| {} |", header.join(" | "))?;
    let rule: Vec<&str> = header.iter().map(|_| "---").collect();
    writeln!(out, "| {} |", rule.join(" | "))?;
    for row in body {
        writeln!(out, "| {} |", row.join(" | "))?;
    }
    Ok(())
}

/// One count as a one-row table.
pub fn count(r: &CountReport, out: &mut dyn Write) -> io::Result<()> {
    count_header(out)?;
    count_row(r, out)
}

/// The header and rule of a table of counts (one row each: [`count_row`]), so that counts
/// printed one after another make one table.
pub fn count_header(out: &mut dyn Write) -> io::Result<()> {
    table(&COUNT_HEADER, &[], out)
}

/// One count as a row of the table [`count_header`] starts.
pub fn count_row(r: &CountReport, out: &mut dyn Write) -> io::Result<()> {
    let row = [
        r.n.to_string(),
        r.total.clone(),
        r.unique.clone().unwrap_or_else(|| "-".to_string()),
        r.engine.clone(),
        r.threads.to_string(),
        format!("{:.3}", r.elapsed_s),
        verified_label(r.verified).to_string(),
    ];
    writeln!(out, "| {} |", row.join(" | "))
}

/// The row of the table [`count_header`] starts for a blank line of judge input: dashes,
/// so the rows stay aligned with the questions.
pub fn count_blank_row(out: &mut dyn Write) -> io::Result<()> {
    let row = ["-"; COUNT_HEADER.len()];
    writeln!(out, "| {} |", row.join(" | "))
}

/// The columns of a table of counts.
const COUNT_HEADER: [&str; 7] = [
    "N",
    "solutions",
    "unique",
    "engine",
    "threads",
    "time (s)",
    "verified",
];

/// A benchmark: summary lines as a list, then the table.
pub fn bench(report: &BenchReport, out: &mut dyn Write) -> io::Result<()> {
    let (header, rows) = bench_table(report);
    for line in bench_summary(report) {
        writeln!(out, "- {line}")?;
    }
    writeln!(out)?;
    table(&header, &rows, out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_has_header_rule_and_rows() {
        let mut out = Vec::new();
        table(&["a", "b"], &[vec!["1".into(), "2".into()]], &mut out).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "| a | b |\n| --- | --- |\n| 1 | 2 |\n"
        );
    }
}
