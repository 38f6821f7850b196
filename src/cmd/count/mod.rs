//! `nqueens count N`: count the solutions for an N×N board.
//!
//! The modules form no cycle: [`args`] and [`publish`] are leaves; [`resumable`] (checkpoints
//! and shards), [`mask`] (blocked cells) and [`stdin`] (the judge format) use them; this
//! module dispatches to all of them.

mod args;
mod mask;
mod publish;
mod resumable;
mod stdin;

use std::process::ExitCode;

use anyhow::Context;
use nqueens::recheck::Fault;
use nqueens::{CountOptions, Plan, Stopwatch};

pub(crate) use args::Args;
use publish::{commentary, publish};

use crate::cmd::messages::note;
use crate::cmd::workers;
use crate::options::Global;
use crate::progress::Bar;

/// Runs `nqueens count`.
pub(crate) fn run(args: &Args, global: &Global) -> anyhow::Result<ExitCode> {
    let options = CountOptions::new()
        .engine(&args.engine)
        .threads(global.threads())
        .split_depth(args.split_depth)
        .unique(args.unique)
        .recheck(args.recheck)
        .fault(args.test_inject_fault.map(|task| Fault { task, delta: 1 }));
    // Bad usage is refused before a GPU is opened (seconds, and a message about the GPU).
    resumable::check_distinct(args)?;
    // A board the GPU leaves to the CPU opens none (seconds, and a device for nothing).
    let options = match args.gpu.check(&options, args.n, global.quiet)? {
        true => args.gpu.apply(options, global.quiet)?,
        false => options,
    };
    if args.stdin {
        return stdin::run(&options, &args.engine, global);
    }
    let n = args.n.context("N is required")?;
    if let Some(path) = &args.mask {
        return mask::run(n, path, global);
    }
    tell_cost(n, &args.engine, global.quiet);
    if args.checkpoint.is_some() || args.out.is_some() {
        return resumable::run(args, n, &options, global);
    }
    let start = Stopwatch::start();
    let plan = options.plan(n)?;
    tell_fallback(&args.engine, plan.as_ref(), global.quiet);
    let options = fit_threads(&options, plan.as_ref(), plan.len(), global.quiet)?;
    let bar = Bar::new(global.quiet);
    let result = nqueens::count_plan(plan.as_ref(), &options, &bar, start);
    bar.finish();
    let count = result.map_err(|e| crate::cmd::gpu::after_failure(e.into(), None))?;
    publish(&count, &commentary(&count), global)
}

/// `options` with as many of its threads as `plan`'s workers fit in memory, for `tasks`
/// tasks (fewer with a note; an error if not one fits).
fn fit_threads(
    options: &CountOptions,
    plan: &dyn Plan,
    tasks: usize,
    quiet: bool,
) -> anyhow::Result<CountOptions> {
    let what = format!("N = {} on the {} engine", plan.n(), plan.engine());
    let threads = workers::fit(options.workers(tasks)?, plan.worker_bytes(), &what, quiet)?;
    Ok(options.clone().threads(threads))
}

/// Says which engine counts a board that the engine asked for leaves to another (the mitm
/// engine's boards below N = 4), unless quiet: the report names the engine that counted,
/// and the user should not have to spot that it is not the one asked for.
pub(super) fn tell_fallback(asked: &str, plan: &dyn Plan, quiet: bool) {
    if asked != nqueens::engine::AUTO && plan.engine() != asked && !quiet {
        note!(
            "N = {} is counted with the {} engine: the {asked} engine leaves boards this small \
             to it",
            plan.n(),
            plan.engine()
        );
    }
}

/// Says what a board past the fast engine's reach costs (unless quiet).
pub(super) fn tell_cost(n: u32, engine: &str, quiet: bool) {
    if let (Some(cost), false) = (nqueens::engine::beyond_mitm(n, engine), quiet) {
        note!("{cost}. Checkpoint it (--checkpoint) and shard it (--shard) as any long count.");
    }
}
