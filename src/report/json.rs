//! JSON rendering: one top-level object per report.

use std::io::{self, Write};

use serde::Serialize;

/// Writes `value` as one line of JSON.
pub fn write<T: Serialize>(value: &T, out: &mut dyn Write) -> io::Result<()> {
    serde_json::to_writer(&mut *out, value)?;
    writeln!(out)
}
