//! Whether a run whose shards are all done can be merged: `nqueens status` says "complete"
//! only when `nqueens merge` would accept the results.

use std::path::PathBuf;

use super::StatusReport;
use crate::shard::merge::{expand_paths, merge};

/// Whether `nqueens merge` accepts the results: it is run on their folders (it only reads).
/// A refusal (a damaged, foreign or conflicting result there, a total that disagrees with
/// OEIS) means the run is not complete, with a note saying why.
pub(super) fn check(folders: &[PathBuf], report: &mut StatusReport) {
    if folders.is_empty() {
        return;
    }
    let merged = expand_paths(folders).map(|files| merge(&files));
    let problems: Vec<String> = match merged {
        Ok(m) => m.problems.into_iter().map(|p| p.message).collect(),
        Err(e) => vec![e.to_string()],
    };
    let Some(first) = problems.first() else {
        return;
    };
    report.complete = false;
    let more = match problems.len() - 1 {
        0 => String::new(),
        k => format!(" (and {k} more)"),
    };
    let dirs: Vec<String> = folders
        .iter()
        .map(|f| format!("'{}'", f.display()))
        .collect();
    report.notes.push(format!(
        "every shard has a result, but nqueens merge of {} refuses them: {first}{more}",
        dirs.join(", ")
    ));
}
