//! Plain-text rendering: results only, one value per line.

use std::io::{self, Write};

use super::{bench_summary, bench_table, CountReport};
use crate::bench::BenchReport;

/// The total on one line, then the unique count on its own line if present.
pub fn count(report: &CountReport, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "{}", report.total)?;
    if let Some(u) = &report.unique {
        writeln!(out, "{u}")?;
    }
    Ok(())
}

/// A table with columns padded to their widest cell, two spaces apart.
pub fn table(header: &[&str], body: &[Vec<String>], out: &mut dyn Write) -> io::Result<()> {
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in body {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let head: Vec<String> = header.iter().map(|h| h.to_string()).collect();
    for row in std::iter::once(&head).chain(body) {
        let cells: Vec<String> = row
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c:>w$}"))
            .collect();
        writeln!(out, "{}", cells.join("  "))?;
    }
    Ok(())
}

/// A benchmark: summary lines, then the per-thread-count table.
pub fn bench(report: &BenchReport, out: &mut dyn Write) -> io::Result<()> {
    let (header, rows) = bench_table(report);
    for line in bench_summary(report) {
        writeln!(out, "{line}")?;
    }
    writeln!(out)?;
    table(&header, &rows, out)
}
