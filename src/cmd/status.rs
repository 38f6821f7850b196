//! `nqueens status RUN_DIR`: how far a cluster run is, from its result files and checkpoints.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, SystemTime};

use anyhow::Context as _;
use nqueens::report::render_status;
use nqueens::shard::slurm::detect_max_array_size;
use nqueens::shard::{status, StatusOptions};
use nqueens::CountOptions;

use crate::exit::Exit;
use crate::options::Global;
use crate::parse::parse_span;

/// Arguments of `nqueens status`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The run directory: the OUTDIR of scripts/slurm/submit.sh, or any folder of shard
    /// result files (*.json) and checkpoints (*.ckpt), read with its subfolders one level down
    #[arg(value_name = "RUN_DIR")]
    pub dir: PathBuf,

    /// Where a checkpoint's lock cannot be probed: a shard whose checkpoint has not been
    /// written for longer than this is reported as stale (likely dead), e.g. 30m, 2h, 1d.
    /// Elsewhere the lock tells: a held one is running, a free one stopped, at once
    #[arg(long, value_name = "TIME", default_value = "2h", value_parser = parse_span)]
    pub stale_after: Duration,

    /// The cluster's MaxArraySize for the rerun lines (default: from 'scontrol show
    /// config', else Slurm's default 1001)
    #[arg(long, value_name = "SIZE", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_array_size: Option<u32>,

    /// The split depth the run was counted with, if one was given (to rebuild its plan and
    /// cost model)
    #[arg(long, value_name = "ROWS")]
    pub split_depth: Option<u32>,
}

/// Runs `nqueens status`: prints the report; exits 3 if a file is damaged, unreadable or of
/// another run (the report names each), 1 if the folder holds no run at all.
pub(crate) fn run(args: &Args, global: &Global) -> anyhow::Result<ExitCode> {
    let options = StatusOptions {
        count: CountOptions::new().split_depth(args.split_depth),
        stale_after: args.stale_after,
        max_array_size: args
            .max_array_size
            .map_or_else(detect_max_array_size, |m| m as usize),
        now: SystemTime::now(),
    };
    let report = status(&args.dir, &options)
        .with_context(|| format!("reading the run in '{}'", args.dir.display()))?;
    render_status(&report, global.format(), &mut std::io::stdout().lock())?;
    Ok(if report.is_clean() {
        Exit::Ok
    } else {
        Exit::Mismatch
    }
    .into())
}
