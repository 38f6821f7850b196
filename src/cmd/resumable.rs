//! `nqueens count` with `--checkpoint`, `--shard` or `--out`: long counts that survive being
//! stopped, and parts of a count for a cluster (issue 5).

use std::io::Write as _;
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use nqueens::plan::{thread_pool, Plan};
use nqueens::report::{json, Format};
use nqueens::shard::{checkpoint, stable_plan, Checkpoint, PartialResult, Recorder, ShardSpec};
use nqueens::CountOptions;
use serde::Serialize;

use super::count::{commentary, publish, Args};
use crate::cli::Global;
use crate::exit::Exit;
use crate::progress::Bar;

/// The `--shard` value: explicit, or from the Slurm array environment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShardArg {
    /// `auto`: from `SLURM_ARRAY_TASK_*`.
    Auto,
    /// `I/K`.
    Spec(ShardSpec),
}

/// Parses `--shard`: `auto` or `I/K`.
pub fn parse_shard(s: &str) -> Result<ShardArg, String> {
    if s.trim() == "auto" {
        return Ok(ShardArg::Auto);
    }
    s.parse().map(ShardArg::Spec).map_err(|e| e.to_string())
}

/// Parses a positive number of seconds, fractions allowed.
pub fn parse_seconds(s: &str) -> Result<Duration, String> {
    match s.trim().parse::<f64>() {
        Ok(x) if x.is_finite() && x > 0.0 && x <= 1e9 => Ok(Duration::from_secs_f64(x)),
        _ => Err(format!(
            "'{s}' is not a positive number of seconds (e.g. 5 or 0.5)"
        )),
    }
}

/// Runs a checkpointed and/or sharded count.
pub fn run(
    args: &Args,
    n: u32,
    options: &CountOptions,
    global: &Global,
) -> anyhow::Result<ExitCode> {
    let shard = match args.shard {
        None => ShardSpec::whole(),
        Some(ShardArg::Spec(spec)) => spec,
        Some(ShardArg::Auto) => ShardSpec::from_slurm_env()?,
    };
    let plan = stable_plan(n, options)?;
    if let Some(out) = &args.out {
        check_writable(out)?;
    }
    // Held until this function returns (or the process ends): a second run on the same
    // checkpoint is refused instead of racing this one (issue 11).
    let _lock = args
        .checkpoint
        .as_deref()
        .map(checkpoint::lock)
        .transpose()?;
    let start = match &args.checkpoint {
        Some(path) => Checkpoint::resume_or_new(path, plan.as_ref(), shard)?,
        None => Checkpoint::new(plan.as_ref(), shard)?,
    };
    let resumed = start.tasks_done > 0;
    let recorder = Arc::new(Recorder::new(args.checkpoint.clone(), start));
    // Fail now, not hours from now, if the checkpoint cannot be written.
    recorder.save()?;
    if let Some(path) = &args.checkpoint {
        save_on_signal(Arc::clone(&recorder), global.quiet)?;
        if resumed && !global.quiet {
            let snap = recorder.snapshot();
            let msg = format!(
                "{} of {} tasks left",
                snap.remaining(),
                shard.len(plan.len())
            );
            eprintln!("nqueens: resuming from '{}': {msg}", path.display());
        }
    }
    let pool = thread_pool(options.checked_threads()?)?;
    let bar = Bar::new(global.quiet);
    let every = args.checkpoint_every;
    let total = checkpoint::run(plan.as_ref(), &pool, &recorder, every, &bar);
    bar.finish();
    let total = total?;
    match &args.out {
        Some(out) => write_shard(plan.as_ref(), shard, &recorder, out, global),
        None => report_count(plan.as_ref(), total, options, &recorder, global),
    }
}

/// Checks up front that the result file can be created (its folder exists and is writable),
/// so a long shard does not fail only at the end.
fn check_writable(out: &Path) -> anyhow::Result<()> {
    let dir = match out.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let probe = dir.join(format!(
        ".{}.probe",
        out.file_name().unwrap_or_default().to_string_lossy()
    ));
    std::fs::write(&probe, b"")
        .and_then(|()| std::fs::remove_file(&probe))
        .with_context(|| format!("cannot write the result file '{}'", out.display()))
}

/// On Ctrl-C or SIGTERM: save what is finished and exit with status 130 at once (tasks in
/// flight are dropped; they are counted again on resume).
fn save_on_signal(recorder: Arc<Recorder>, quiet: bool) -> anyhow::Result<()> {
    ctrlc::set_handler(move || {
        recorder.request_stop();
        let path = recorder.path().map(|p| p.display().to_string());
        match recorder.save() {
            Ok(()) if !quiet => eprintln!(
                "\nnqueens: interrupted; progress saved to '{}'; run the same command to resume",
                path.unwrap_or_default()
            ),
            Ok(()) => {}
            Err(e) => eprintln!("\nnqueens: interrupted, and saving the checkpoint failed: {e}"),
        }
        std::process::exit(i32::from(Exit::Interrupted as u8));
    })
    .context("installing the Ctrl-C/SIGTERM handler")
}

/// The whole count, printed like a plain `nqueens count`.
fn report_count(
    plan: &dyn Plan,
    total: u128,
    options: &CountOptions,
    recorder: &Recorder,
    global: &Global,
) -> anyhow::Result<ExitCode> {
    let count = nqueens::finish(plan, total, options, recorder.elapsed())?;
    publish(&count, &commentary(&count), global)
}

/// What `count --out` prints on stdout with `--json` (the file itself holds every task).
#[derive(Debug, Serialize)]
struct ShardSummary<'a> {
    schema: &'static str,
    n: u32,
    shard: String,
    tasks: usize,
    plan_tasks: usize,
    total: String,
    elapsed_s: f64,
    out: &'a Path,
}

/// Writes the shard's result file and prints its partial total.
fn write_shard(
    plan: &dyn Plan,
    shard: ShardSpec,
    recorder: &Recorder,
    out: &Path,
    global: &Global,
) -> anyhow::Result<ExitCode> {
    let done = recorder.snapshot();
    let summary = (done.tasks_done as usize, done.total, done.digest);
    let mut result = PartialResult::new(plan, shard, summary, recorder.elapsed());
    result.save(out)?;
    let summary = ShardSummary {
        schema: "nqueens.shard-summary/1",
        n: result.n,
        shard: shard.to_string(),
        tasks: result.tasks,
        plan_tasks: result.plan_tasks,
        total: result.total.to_string(),
        elapsed_s: result.elapsed_s,
        out,
    };
    let mut stdout = std::io::stdout().lock();
    match global.format() {
        Format::Json => json::write(&summary, &mut stdout)?,
        Format::Text | Format::Markdown => writeln!(&mut stdout, "{}", result.total)?,
    }
    if !global.quiet {
        eprintln!(
            "nqueens: shard {shard} of N = {}: {} solutions from {} of {} tasks ({} engine, {}), \
             {:.3} s; wrote '{}' (add up all K files with 'nqueens merge')",
            result.n,
            result.total,
            result.tasks,
            result.plan_tasks,
            result.engine,
            result.plan,
            result.elapsed_s,
            out.display()
        );
    }
    Ok(Exit::Ok.into())
}
