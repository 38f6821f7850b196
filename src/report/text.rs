//! Plain-text rendering: results only, one value per line.

use std::io::{self, Write};

use super::CountReport;

/// The total on one line, then the unique count on its own line if present.
pub fn count(report: &CountReport, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "{}", report.total)?;
    if let Some(u) = &report.unique {
        writeln!(out, "{u}")?;
    }
    Ok(())
}
