//! `nqueens count` with `--checkpoint`, `--shard` or `--out`: long counts that survive being
//! stopped, and parts of a count for a cluster.

use std::path::Path;
use std::process::ExitCode;
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::Arc;

use anyhow::Context;
use nqueens::report::{render_shard_summary, ShardSummary};
use nqueens::shard::blocks::SavedCheck;
use nqueens::shard::{
    check_writable, is_same_file, Identity, PartialResult, ResumableCount, Resume, ShardSpec,
};
use nqueens::work::GpuWork;
use nqueens::CountOptions;

use super::args::{Args, ShardArg};
use super::publish::{commentary, publish};
use crate::cmd::messages::{message, note};
use crate::cmd::{plural, replace, workers};
use crate::exit::{Exit, UsageError};
use crate::options::Global;
use crate::progress::Bar;

/// The smallest probe for a checkpoint file: it grows as tasks finish, and the first real
/// save (made before counting) checks the rest.
const CHECKPOINT_PROBE_BYTES: usize = 4096;

/// Runs a checkpointed and/or sharded count.
pub(super) fn run(
    args: &Args,
    n: u32,
    options: &CountOptions,
    global: &Global,
) -> anyhow::Result<ExitCode> {
    // First: from here a signal only asks, and the main thread, the only one that ends the
    // process, saves last. A signal before the count starts waits in the channel.
    let events = listen_for_signals()?;
    let shard = match args.shard {
        None => ShardSpec::whole(),
        Some(ShardArg::Spec(spec)) => spec,
        Some(ShardArg::Auto(k)) => ShardSpec::from_array_env(k).context("--shard auto")?,
    };
    let resume = Resume {
        checkpoint: args.checkpoint.clone(),
        every: args.checkpoint_every,
        shard,
    };
    let count = ResumableCount::new(n, options, resume)?;
    check_outputs(args, &count)?;
    let plan = count.plan();
    super::tell_fallback(&args.engine, plan, global.quiet);
    let what = format!("N = {n} on the {} engine", plan.engine());
    let asked = options.workers(count.shard_tasks())?;
    let threads = workers::fit(asked, plan.worker_bytes(), &what, global.quiet)?;
    let count = count.with_threads(threads);
    let count = Arc::new(count.open()?);
    tell_resumed(&count, global);
    let job = Job {
        count: Arc::clone(&count),
        options: options.clone(),
        quiet: global.quiet,
    };
    let (total, save_failure) = match wait_for(job, events) {
        Outcome::Done(total) => (total, None),
        Outcome::Interrupted => return Err(interrupted(&count, global.quiet)),
        Outcome::SaveFailed(e) => match count.complete_total() {
            Some(total) => (total, Some(e)),
            None => return Err(save_failed(e, &count)),
        },
        Outcome::Failed(e) => {
            return Err(crate::cmd::gpu::after_failure(
                e,
                args.checkpoint.as_deref(),
            ))
        }
    };
    let status = match &args.out {
        Some(out) => write_shard(&count, out, global)?,
        None => report_count(&count, total, global)?,
    };
    match save_failure {
        // The count above is complete and printed; only the checkpoint is behind.
        Some(e) => Err(save_failed(e, &count)),
        None => Ok(status),
    }
}

/// Says that a checkpoint was resumed, and what its tasks from an older schema mean.
fn tell_resumed(count: &ResumableCount, global: &Global) {
    let (Some(path), true) = (count.checkpoint(), count.resumed() > 0 && !global.quiet) else {
        return;
    };
    let left = count.remaining();
    let all = count.shard_tasks();
    message!(
        "resuming from '{}': {left} of {all} tasks left",
        path.display()
    );
    if let Some(version) = count.resumed_from_version() {
        note!(
            "the checkpoint was written by nqueens {version}; its plan hash is this \
             version's, so its finished tasks are kept"
        );
    }
    let inherited = count.inherited();
    if inherited > 0 {
        note!(
            "{inherited} of the saved tasks were finished under checkpoint schema 2 (an \
             older nqueens), which kept no per-block sums: --recheck cannot search them \
             for a wrong count. The checkpoint is now saved as schema 3; tasks finished \
             from here on are searchable."
        );
    }
}

/// Before anything is read or counted: the result file and the checkpoint are two files,
/// neither is a folder, device or FIFO, both can be written at the size they will need
/// (a full disk, a requeued run), and the result file replaces nothing but this shard's
/// earlier result (unless `--force`).
fn check_outputs(args: &Args, count: &ResumableCount) -> anyhow::Result<()> {
    let sized = [
        (args.out.as_deref(), count.largest_result_len()),
        (args.checkpoint.as_deref(), CHECKPOINT_PROBE_BYTES),
    ];
    for (path, bytes) in sized {
        if let Some(path) = path {
            check_writable(path, bytes)
                .with_context(|| format!("cannot write '{}'", path.display()))?;
        }
    }
    if let Some(out) = &args.out {
        replace::check(out, "--out", args.force, |path| earlier_result(path, count))?;
    }
    check_distinct(args)
}

/// Refuses `--out` and `--checkpoint` naming one file, however spelled.
pub(super) fn check_distinct(args: &Args) -> anyhow::Result<()> {
    if let (Some(out), Some(cp)) = (&args.out, &args.checkpoint) {
        if is_same_file(out, cp) {
            return Err(UsageError(format!(
                "--out and --checkpoint name the same file ('{}' and '{}'): the result would \
                 replace the checkpoint; give them different names",
                out.display(),
                cp.display()
            ))
            .into());
        }
    }
    Ok(())
}

/// Whether the result file at `path` is this shard's own, from an earlier run of the same
/// plan (so writing it again loses nothing); else what it is, for the refusal.
fn earlier_result(path: &Path, count: &ResumableCount) -> Result<(), String> {
    let old = PartialResult::load(path).map_err(|e| match e {
        nqueens::Error::ResultCorrupt { message, .. } => {
            format!("is not a shard result file of nqueens ({message})")
        }
        other => format!("cannot be read as a shard result file ({other})"),
    })?;
    let now = Identity::new(count.plan(), count.shard());
    let run = |id: &Identity| (id.n, id.engine.clone(), id.plan_hash.clone(), id.plan_tasks);
    if run(&old.identity) == run(&now) && old.identity.shard == now.shard {
        return Ok(());
    }
    let name = |id: &Identity| {
        format!(
            "shard {} of N = {} ({} engine, plan {})",
            id.shard, id.n, id.engine, id.plan_hash
        )
    };
    Err(format!(
        "holds the result of {}, not of this run's {}",
        name(&old.identity),
        name(&now)
    ))
}

/// What the main thread hears while the count runs: a signal, or the count's end.
enum Event {
    Signal,
    Finished(Result<u128, nqueens::Error>),
}

/// How the count ended.
enum Outcome {
    Done(u128),
    Interrupted,
    /// A checkpoint save failed (the run stopped; the last good checkpoint is on disk).
    SaveFailed(nqueens::Error),
    Failed(anyhow::Error),
}

/// Installs the Ctrl-C/SIGTERM handler, and passes SIGUSR1 on as SIGTERM. It only tells the
/// main thread; it never saves or exits itself, so it never cuts a save short. Returns the
/// channel the main thread listens on, and a sender for the solver thread.
fn listen_for_signals() -> anyhow::Result<(Sender<Event>, Receiver<Event>)> {
    let (tell, events) = mpsc::channel();
    let signal = tell.clone();
    ctrlc::set_handler(move || {
        // Fails only once the main thread stopped listening: the count is over by then.
        let _ = signal.send(Event::Signal);
    })
    .context("installing the Ctrl-C/SIGTERM handler")?;
    crate::cmd::signals::usr1_as_term().context("installing the SIGUSR1 handler")?;
    Ok((tell, events))
}

/// Everything the solver thread owns.
struct Job {
    count: Arc<ResumableCount>,
    options: CountOptions,
    quiet: bool,
}

/// Runs the count on its own thread and waits for it or for a signal, whichever comes
/// first. On a signal the count is not waited for: tasks in flight are dropped (they are
/// counted again on resume) and the caller ends the process.
fn wait_for(job: Job, (tell, events): (Sender<Event>, Receiver<Event>)) -> Outcome {
    std::thread::spawn(move || {
        let result = solve(&job);
        let _ = tell.send(Event::Finished(result));
    });
    match events.recv() {
        Ok(Event::Finished(Ok(total))) => Outcome::Done(total),
        Ok(Event::Signal | Event::Finished(Err(nqueens::Error::Interrupted))) => {
            Outcome::Interrupted
        }
        Ok(Event::Finished(Err(e @ nqueens::Error::Io { .. }))) => Outcome::SaveFailed(e),
        Ok(Event::Finished(Err(e))) => Outcome::Failed(e.into()),
        Err(e) => Outcome::Failed(anyhow::anyhow!("the count thread vanished ({e})")),
    }
}

/// Rechecks the saved blocks when asked, then solves the tasks the checkpoint lacks, with a
/// progress bar.
fn solve(job: &Job) -> Result<u128, nqueens::Error> {
    let count = job.count.as_ref();
    if let (Some(recheck), false, true) =
        (job.options.rechecking(), job.quiet, count.searchable() > 0)
    {
        message!(
            "rechecking a share {} of the checkpoint's {} saved tasks in blocks first",
            recheck.fraction(),
            count.searchable(),
        );
    }
    if let Some(found) = count.recheck_saved()? {
        tell_saved_check(&found, job);
    }
    let bar = Bar::new(job.quiet);
    let total = count.count(&bar);
    bar.finish();
    total
}

/// Says what the recheck of the saved blocks found: every wrong block loudly, the rest
/// unless quiet.
fn tell_saved_check(found: &SavedCheck, job: &Job) {
    for bad in &found.replaced {
        let tasks: Vec<String> = bad
            .rounds
            .clone()
            .filter_map(|r| job.count.shard().task(r, job.count.plan().len()))
            .take(MAX_TASKS_NAMED)
            .map(|t| t.to_string())
            .collect();
        let more = if bad.rounds.len() > MAX_TASKS_NAMED {
            ", …"
        } else {
            ""
        };
        message!(
            "WRONG COUNT IN THE CHECKPOINT: block {} (tasks {}{more}) was saved with {} \
             solutions, but both code paths now give {}; its counts are replaced. Suspect \
             the hardware of the session that saved it.",
            bad.block,
            tasks.join(", "),
            bad.saved,
            bad.now
        );
    }
    if !job.quiet {
        message!(
            "rechecked {} of the checkpoint's saved tasks ({}) on the portable code path: {}",
            found.tasks,
            plural(found.blocks, "block"),
            match found.replaced.len() {
                0 => "all agree with the saved counts".to_string(),
                k => format!("{} replaced", plural(k, "wrong block")),
            }
        );
    }
}

/// The most task ids named for a wrong block.
const MAX_TASKS_NAMED: usize = 8;

/// After Ctrl-C or SIGTERM: the last save, and the error that ends the run with status 130,
/// saying what was kept (a bare [`nqueens::Error::Interrupted`], which prints nothing, when
/// quiet and all is well). Nothing is written after the count is interrupted, so the process
/// may end at once.
fn interrupted(count: &ResumableCount, quiet: bool) -> anyhow::Error {
    let said = match (count.interrupt(), count.checkpoint()) {
        (Ok(()), _) if quiet => None,
        (Ok(()), Some(path)) => Some(format!(
            "interrupted; progress saved to '{}'; run the same command to resume",
            path.display()
        )),
        (Ok(()), None) => Some("interrupted; nothing saved (no --checkpoint)".to_string()),
        (Err(e), _) => Some(format!(
            "interrupted, and saving the checkpoint failed: {e}; the last good checkpoint \
             ({} tasks done) is kept",
            count.saved_tasks()
        )),
    };
    let error = anyhow::Error::from(nqueens::Error::Interrupted);
    match said {
        Some(said) => error.context(said),
        None => error,
    }
}

/// The error for a checkpoint save that failed: what is kept, and what to do.
fn save_failed(e: nqueens::Error, count: &ResumableCount) -> anyhow::Error {
    let path = count.checkpoint().map(|p| p.display().to_string());
    anyhow::Error::from(e).context(format!(
        "saving the checkpoint '{}' failed, so the run stopped; the last good checkpoint \
         ({} of {} tasks done) is kept: run the same command to resume once the \
         file can be written",
        path.unwrap_or_default(),
        count.saved_tasks(),
        count.shard_tasks()
    ))
}

/// The whole count, printed like a plain `nqueens count`.
fn report_count(count: &ResumableCount, total: u128, global: &Global) -> anyhow::Result<ExitCode> {
    let result = count.finish(total)?;
    let status = publish(&result, &commentary(&result), global)?;
    let resumed = count.resumed();
    if let (false, Some(path)) = (result.is_consistent(), count.checkpoint()) {
        if resumed > 0 {
            message!(
                "{resumed} of the {} tasks were counted by earlier sessions and taken from the \
                 checkpoint '{}'; a wrong count saved there comes back on every resume. {}",
                result.tasks,
                path.display(),
                saved_advice(resumed, count.inherited())
            );
        }
    }
    Ok(status)
}

/// For the wrong-total message: how to find a wrong count among `resumed` saved tasks, of
/// which `inherited` came from a schema 2 checkpoint and are in no block `--recheck` can
/// search.
fn saved_advice(resumed: u64, inherited: u64) -> String {
    const DELETE: &str = "delete the checkpoint to count everything again.";
    if inherited == 0 {
        return format!(
            "Run the same command with --recheck 1 (or a fraction) to re-solve the saved tasks \
             and find a wrong one, or {DELETE}"
        );
    }
    let why = "saved under checkpoint schema 2 (an older nqueens), which kept no per-block \
               sums, so --recheck cannot search";
    if inherited >= resumed {
        return format!("They were all {why} them: {DELETE}");
    }
    format!(
        "{inherited} of them were {why} those: run the same command with --recheck 1 (or a \
         fraction) to search the other {}, and if it finds no wrong block, {DELETE}",
        resumed - inherited
    )
}

/// Writes the shard's result file and prints its partial total. When the file cannot be
/// written (a disk that filled up during the count), the total and the sealed record go to
/// stderr, so the count is not lost, and the status is 1.
fn write_shard(count: &ResumableCount, out: &Path, global: &Global) -> anyhow::Result<ExitCode> {
    let shard = count.shard();
    let mut result = count.partial_result();
    if let Err(e) = result.save(out) {
        // stdout carries only accepted results; the count goes to stderr with the record.
        let record = result.sealed_json();
        message!(
            "cannot write '{}': {e}. The count is not lost: shard {shard} of N = {} has {} \
             solutions, and this is its result file; save the line as a .json file to merge \
             it:\n{}",
            out.display(),
            result.identity.n,
            result.total,
            record.trim_end()
        );
        return Ok(Exit::Failure.into());
    }
    let gpu = count.plan().device_work().as_ref().map(GpuWork::from);
    let summary = ShardSummary::new(&result, out.to_path_buf(), count.cpu()).with_gpu(gpu);
    render_shard_summary(&summary, global.format(), &mut std::io::stdout().lock())
        .with_context(|| format!("printing the shard's total ({})", result.total))?;
    if !global.quiet {
        message!(
            "shard {shard} of N = {}: {} from {} of {} ({} engine, {}), \
             {:.3} s, {} rechecked on the portable code path; wrote '{}' (add up all K files \
             with 'nqueens merge')",
            result.identity.n,
            plural(result.total, "solution"),
            result.tasks,
            plural(result.identity.plan_tasks, "task"),
            result.identity.engine,
            result.identity.plan,
            result.elapsed_s,
            result.rechecked,
            out.display()
        );
    }
    Ok(Exit::Ok.into())
}

#[cfg(test)]
mod tests {
    use super::saved_advice;

    #[test]
    fn the_advice_after_a_wrong_total_sends_recheck_only_to_tasks_it_can_search() {
        assert!(saved_advice(10, 0).starts_with("Run the same command with --recheck 1"));
        let all = saved_advice(10, 10);
        assert!(
            all.starts_with("They were all saved under checkpoint schema 2"),
            "{all}"
        );
        assert!(!all.contains("--recheck 1"), "{all}");
        let some = saved_advice(10, 4);
        assert!(some.starts_with("4 of them were saved under"), "{some}");
        assert!(some.contains("to search the other 6"), "{some}");
    }
}
