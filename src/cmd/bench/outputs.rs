//! What `nqueens bench` writes: the report on stdout, the exports and the plot, each output
//! file checked before the benchmark runs.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Context;
use nqueens::bench::BenchReport;
use nqueens::report::{self, Format};

use super::Args;
use crate::cmd::replace;
use crate::exit::UsageError;
use crate::options::Global;

/// Prints the report and writes the requested exports and plot. The files are written
/// whatever became of the printing: a reader that closed the pipe (`| head -1`) or a full
/// disk behind stdout takes the printed copy, not the files asked for; its error comes after.
pub(super) fn publish(report: &BenchReport, args: &Args, global: &Global) -> anyhow::Result<()> {
    let printed = print(report, global.format());
    write_files(report, args)?;
    printed
}

/// Prints the report on stdout, flushed, so that a write error shows here.
fn print(report: &BenchReport, format: Format) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    report::render_bench(report, format, &mut out)
        .and_then(|()| out.flush())
        .context("printing the report")
}

/// Writes the requested exports and plot.
fn write_files(report: &BenchReport, args: &Args) -> anyhow::Result<()> {
    if let Some(path) = &args.export_json {
        write_report(path, report, Format::Json)?;
    }
    if let Some(path) = &args.export_markdown {
        write_report(path, report, Format::Markdown)?;
    }
    if let Some(path) = &args.plot {
        crate::plot::scaling(report, path)
            .with_context(|| format!("drawing '{}'", path.display()))?;
    }
    Ok(())
}

/// Writes an export atomically: only a regular file is ever replaced.
fn write_report(path: &Path, report: &BenchReport, format: Format) -> anyhow::Result<()> {
    let mut text = Vec::new();
    report::render_bench(report, format, &mut text)?;
    nqueens::shard::write_atomic(path, &text)
        .with_context(|| format!("writing '{}'", path.display()))
}

/// The bytes the up-front probe writes for each export: more than a report or plot takes
/// (a few kB), so a disk too full for it fails before the benchmark, not after.
const EXPORT_PROBE_BYTES: usize = 1 << 16;

/// Checks every output file before the benchmark runs, so a bad path fails at once; two
/// exports to one file (the second would replace the first), or one that would replace
/// a file that is not an earlier export of its kind (without `--force`), are usage errors.
pub(super) fn check_outputs(args: &Args) -> anyhow::Result<()> {
    let kinds: [(&Option<PathBuf>, &str, Recogniser); 3] = [
        (&args.export_json, "--export-json", is_json_report),
        (
            &args.export_markdown,
            "--export-markdown",
            is_markdown_report,
        ),
        (&args.plot, "--plot", is_plot),
    ];
    for (path, flag, earlier) in kinds {
        if let Some(path) = path {
            replace::check(path, flag, args.force, earlier)?;
        }
    }
    let outputs: Vec<&PathBuf> = [&args.export_json, &args.export_markdown, &args.plot]
        .into_iter()
        .flatten()
        .collect();
    for path in &outputs {
        nqueens::shard::check_writable(path, EXPORT_PROBE_BYTES)
            .with_context(|| format!("cannot write '{}'", path.display()))?;
    }
    for (i, a) in outputs.iter().enumerate() {
        if let Some(b) = outputs[i + 1..]
            .iter()
            .find(|b| nqueens::shard::is_same_file(a, b))
        {
            return Err(UsageError(format!(
                "two exports name the same file ('{}' and '{}'); give each its own",
                a.display(),
                b.display()
            ))
            .into());
        }
    }
    Ok(())
}

/// Says whether a file is an earlier output of one kind (see [`replace::check`]).
type Recogniser = fn(&Path) -> Result<(), String>;

/// An earlier `--export-json`: JSON with a bench schema (of any version).
fn is_json_report(path: &Path) -> Result<(), String> {
    let schema = replace::read_text(path)
        .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok())
        .and_then(|v| v.get("schema")?.as_str().map(String::from));
    match schema {
        Some(s) if s.starts_with("nqueens.bench/") => Ok(()),
        _ => Err("is not a bench report of nqueens".into()),
    }
}

/// An earlier `--export-markdown`: the summary list every version starts it with.
fn is_markdown_report(path: &Path) -> Result<(), String> {
    match replace::read_text(path) {
        Some(text) if text.starts_with("- workload: ") && text.contains("\n- nqueens ") => Ok(()),
        _ => Err("is not a markdown bench report of nqueens".into()),
    }
}

/// An earlier `--plot`: an SVG drawing with the plot's title.
fn is_plot(path: &Path) -> Result<(), String> {
    match replace::read_text(path) {
        Some(text) if text.starts_with("<svg") && text.contains("nqueens bench (") => Ok(()),
        _ => Err("is not a bench plot of nqueens".into()),
    }
}
