//! `nqueens merge FILES...|DIR`: check shard result files and add them up.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use nqueens::report::{json, more_problems, printable, verified_label, Format, MAX_LISTED};
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

/// Runs `nqueens merge`: prints the total only if every check passes; otherwise lists the
/// problems on stderr (the first [`MAX_LISTED`]; `--json` has them all) and exits with
/// status 3. Paths that are not there, or no file to merge, fail with status 1.
pub(crate) fn run(args: &Args, global: &Global) -> anyhow::Result<ExitCode> {
    // A path that is not there, or no file at all, is a failed command (as for `status`),
    // not a mismatch among shards.
    for path in &args.paths {
        std::fs::symlink_metadata(path).with_context(|| format!("reading '{}'", path.display()))?;
    }
    let files = expand_paths(&args.paths)?;
    if files.is_empty() {
        anyhow::bail!("no shard result files (*.json) to merge in the paths given");
    }
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
            note!("{}", printable(note));
        }
    }
    if report.is_ok() {
        if !global.quiet {
            message!("{}", printable(&summary(&report)));
        }
        return Ok(Exit::Ok.into());
    }
    let problems = super::plural(report.problems.len(), "problem");
    message!("merge refused: {problems}:");
    for p in report.problems.iter().take(MAX_LISTED) {
        eprintln!("  - {}", printable(&p.message));
    }
    if let Some(more) = more_problems(report.problems.len()) {
        eprintln!("  {more}");
    }
    Ok(Exit::Mismatch.into())
}

/// One line for people about a good merge.
fn summary(r: &MergeReport) -> String {
    format!(
        "merged {} of N = {} ({} engine, {}, plan {}) from {} written by nqueens {}: {}; \
         {:.3} s of shard time; {} rechecked on the portable code path; matches OEIS \
         A000170: {}",
        super::plural(r.shards.unwrap_or_default(), "shard"),
        r.n.unwrap_or_default(),
        r.engine.as_deref().unwrap_or("?"),
        r.plan.as_deref().unwrap_or("?"),
        r.plan_hash.as_deref().unwrap_or("?"),
        super::plural(r.files.len(), "file"),
        r.versions.join(", "),
        super::plural(r.total.as_deref().unwrap_or("?"), "solution"),
        r.elapsed_s,
        super::plural(r.rechecked, "task"),
        verified_label(r.verified)
    )
}
