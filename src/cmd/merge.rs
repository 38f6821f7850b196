//! `nqueens merge FILES...|DIR`: check shard result files and add them up.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use nqueens::report::{json, verified_label, Format};
use nqueens::shard::merge::{expand_paths, merge, MergeReport};

use crate::cmd::messages::{message, note};
use crate::exit::Exit;
use crate::options::Global;

/// Arguments of `nqueens merge`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Shard result files written by `count --shard I/K --out FILE`, or folders holding them
    /// (their `*.json` files)
    #[arg(required = true, value_name = "FILES|DIR")]
    pub paths: Vec<PathBuf>,
}

/// Runs `nqueens merge`: prints the total only if every check passes; otherwise lists every
/// problem on stderr and exits with status 3.
pub(crate) fn run(args: &Args, global: &Global) -> anyhow::Result<ExitCode> {
    let files = expand_paths(&args.paths)?;
    let report = merge(&files);
    let mut out = std::io::stdout().lock();
    // stdout carries only an accepted total; the JSON report always prints (its `total` is
    // null and its `problems` list why when the merge is refused).
    match (global.format(), &report.total) {
        (Format::Json, _) => json::write(&report, &mut out)?,
        (_, Some(total)) if report.is_ok() => writeln!(out, "{total}")?,
        (_, _) => {}
    }
    for note in &report.duplicates {
        if !global.quiet {
            note!("{note}");
        }
    }
    if report.is_ok() {
        if !global.quiet {
            message!("{}", summary(&report));
        }
        return Ok(Exit::Ok.into());
    }
    let problems = super::plural(report.problems.len(), "problem");
    message!("merge refused: {problems}:");
    for p in &report.problems {
        eprintln!("  - {}", p.message);
    }
    Ok(Exit::Mismatch.into())
}

/// One line for people about a good merge.
fn summary(r: &MergeReport) -> String {
    format!(
        "merged {} shards of N = {} ({} engine, {}, plan {}) from {} files written by \
         nqueens {}: {} solutions; {:.3} s of shard time; {} rechecked on the portable code \
         path; matches OEIS A000170: {}",
        r.shards.unwrap_or_default(),
        r.n.unwrap_or_default(),
        r.engine.as_deref().unwrap_or("?"),
        r.plan.as_deref().unwrap_or("?"),
        r.plan_hash.as_deref().unwrap_or("?"),
        r.files.len(),
        r.versions.join(", "),
        r.total.as_deref().unwrap_or("?"),
        r.elapsed_s,
        super::plural(r.rechecked, "task"),
        verified_label(r.verified)
    )
}
