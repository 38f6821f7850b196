//! `nqueens count` with `--checkpoint`, `--shard` or `--out`: long counts that survive being
//! stopped, and parts of a count for a cluster (issue 5).

use std::io::Write as _;
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use nqueens::plan::{thread_pool, Plan};
use nqueens::recheck::run_checked;
use nqueens::report::{json, Format};
use nqueens::shard::{
    check_writable, checkpoint, stable_plan, Checkpoint, PartialResult, Recorder, ShardSpec,
};
use nqueens::CountOptions;
use serde::Serialize;

use super::args::{Args, ShardArg};
use super::publish::{commentary, publish};
use crate::cli::Global;
use crate::cmd::messages::message;
use crate::exit::Exit;
use crate::progress::Bar;

/// Runs a checkpointed and/or sharded count.
pub(super) fn run(
    args: &Args,
    n: u32,
    options: &CountOptions,
    global: &Global,
) -> anyhow::Result<ExitCode> {
    let shard = match args.shard {
        None => ShardSpec::whole(),
        Some(ShardArg::Spec(spec)) => spec,
        Some(ShardArg::Auto) => ShardSpec::from_slurm_env().context("--shard auto")?,
    };
    // Before anything is read or counted: never replace a folder, device or FIFO, and fail
    // now, not after the count, if a file cannot be written (issue 12, item 1).
    for path in args.out.iter().chain(&args.checkpoint) {
        check_writable(path).with_context(|| format!("cannot write '{}'", path.display()))?;
    }
    let plan = stable_plan(n, options)?;
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
            message!("resuming from '{}': {msg}", path.display());
        }
    }
    let total = solve(plan.as_ref(), shard, &recorder, args, options, global)?;
    match &args.out {
        Some(out) => write_shard(plan.as_ref(), shard, &recorder, out, global),
        None => report_count(plan.as_ref(), total, options, &recorder, global),
    }
}

/// Solves the tasks of `shard` the checkpoint lacks, rechecking a fraction on the portable
/// code path when asked. A task whose two paths disagree is dropped from the checkpoint (so a
/// resumed run solves it again) and the run fails with [`nqueens::Error::RecheckMismatch`].
fn solve(
    plan: &dyn Plan,
    shard: ShardSpec,
    recorder: &Recorder,
    args: &Args,
    options: &CountOptions,
    global: &Global,
) -> anyhow::Result<u128> {
    let pool = thread_pool(options.workers(shard.len(plan.len()))?)?;
    let bar = Bar::new(global.quiet);
    let every = args.checkpoint_every;
    let outcome = run_checked(
        plan,
        options.rechecking(),
        options.injected_fault(),
        &bar,
        &|task| recorder.record_rechecked(task),
        |plan, progress| checkpoint::run(plan, &pool, recorder, every, progress),
    );
    bar.finish();
    if let Err(nqueens::Error::RecheckMismatch { task, fast, .. }) = &outcome {
        recorder.forget(*task, *fast);
        recorder.save()?;
    }
    Ok(outcome?.0?)
}

/// On Ctrl-C or SIGTERM: save what is finished and exit with status 130 at once (tasks in
/// flight are dropped; they are counted again on resume).
fn save_on_signal(recorder: Arc<Recorder>, quiet: bool) -> anyhow::Result<()> {
    ctrlc::set_handler(move || {
        recorder.request_stop();
        let path = recorder.path().map(|p| p.display().to_string());
        match recorder.save() {
            Ok(()) if !quiet => message!(
                new_line; "interrupted; progress saved to '{}'; run the same command to resume",
                path.unwrap_or_default()
            ),
            Ok(()) => {}
            Err(e) => message!(new_line; "interrupted, and saving the checkpoint failed: {e}"),
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
    let mut count = nqueens::finish(plan, total, options, recorder.elapsed())?;
    count.rechecked = options
        .rechecking()
        .map(|_| recorder.snapshot().rechecked.len() as usize);
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
    rechecked: usize,
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
    let snapshot = recorder.snapshot();
    let summary = (
        snapshot.tasks_done as usize,
        snapshot.total,
        snapshot.digest,
    );
    let mut result = PartialResult::new(plan, shard, summary, recorder.elapsed());
    result.rechecked = snapshot.rechecked.len() as usize;
    result.save(out)?;
    let summary = ShardSummary {
        schema: "nqueens.shard-summary/1",
        n: result.n,
        shard: shard.to_string(),
        tasks: result.tasks,
        plan_tasks: result.plan_tasks,
        total: result.total.to_string(),
        elapsed_s: result.elapsed_s,
        rechecked: result.rechecked,
        out,
    };
    let mut stdout = std::io::stdout().lock();
    match global.format() {
        Format::Json => json::write(&summary, &mut stdout)?,
        Format::Text | Format::Markdown => writeln!(&mut stdout, "{}", result.total)?,
    }
    if !global.quiet {
        message!(
            "shard {shard} of N = {}: {} solutions from {} of {} tasks ({} engine, {}), \
             {:.3} s, {} rechecked on the portable code path; wrote '{}' (add up all K files \
             with 'nqueens merge')",
            result.n,
            result.total,
            result.tasks,
            result.plan_tasks,
            result.engine,
            result.plan,
            result.elapsed_s,
            result.rechecked,
            out.display()
        );
    }
    Ok(Exit::Ok.into())
}
