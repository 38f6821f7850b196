//! The arguments of `nqueens count` and their parsers. A leaf: it imports no sibling module.

use std::path::PathBuf;
use std::time::Duration;

use clap::builder::{PossibleValue, PossibleValuesParser};
use nqueens::engine;
use nqueens::recheck::Recheck;
use nqueens::shard::ShardSpec;

use crate::parse::{parse_fraction, parse_n, parse_seconds};

/// Arguments of `nqueens count`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Board size, 1 to 32
    #[arg(
        value_parser = parse_n,
        allow_negative_numbers = true,
        required_unless_present = "stdin"
    )]
    pub n: Option<u32>,

    /// Counting engine (auto picks the fastest for N)
    #[arg(short, long, default_value = engine::AUTO, value_parser = engine_values())]
    pub engine: String,

    /// Rows pre-placed per task [default: chosen for the thread count]
    #[arg(long, value_name = "ROWS")]
    pub split_depth: Option<u32>,

    /// Also count fundamental solutions (distinct up to rotation and reflection)
    #[arg(long)]
    pub unique: bool,

    /// Judge format: read one N per line from stdin (a line "0" or end of input ends), print
    /// one count per line (JSON Lines with --json, one table with --markdown)
    #[arg(long, conflicts_with = "n")]
    pub stdin: bool,

    /// Save progress to FILE every few seconds and on Ctrl-C, SIGTERM or SIGUSR1; if FILE
    /// exists, resume from it (finished tasks are not counted again; an empty FILE is no
    /// checkpoint yet)
    #[arg(long, value_name = "FILE", conflicts_with = "stdin")]
    pub checkpoint: Option<PathBuf>,

    /// Seconds between checkpoint saves (fractions allowed, e.g. 0.5; at least 0.001)
    #[arg(long, value_name = "SECS", default_value = "5", value_parser = parse_checkpoint_every, requires = "checkpoint")]
    pub checkpoint_every: Duration,

    /// Count only part I (0-based) of K of the work, balanced by expected cost: `I/K`, or
    /// `auto` in a job array of Slurm, Grid Engine or LSF (I and K from the scheduler's
    /// variables), or `auto/K` (I from those, or from PBS Pro, Torque or a Kubernetes Indexed
    /// Job, counted from 0); needs --out
    #[arg(long, value_name = "I/K|auto|auto/K", requires = "out", value_parser = parse_shard)]
    pub shard: Option<ShardArg>,

    /// Write the shard's result file (JSON with per-task counts and a checksum, for
    /// `nqueens merge`) to FILE; without --shard it holds the whole count (shard 0/1)
    #[arg(long, value_name = "FILE", conflicts_with_all = ["stdin", "unique"])]
    pub out: Option<PathBuf>,

    /// Let --out replace a file that is not this shard's earlier result (an empty file, or
    /// the same shard of the same run, is replaced without it)
    #[arg(long, requires = "out")]
    pub force: bool,

    /// Re-solve a deterministic random FRACTION (0 < FRACTION ≤ 1, e.g. 0.01) of the tasks on
    /// the portable code path, on another thread, and compare: a mismatch names the task,
    /// exits with status 3 and writes no result
    #[arg(long, value_name = "FRACTION", value_parser = parse_fraction)]
    pub recheck: Option<Recheck>,

    /// Testing only: add 1 to the fast code path's count of task TASK, as a faulty core would
    #[arg(long, value_name = "TASK", hide = true)]
    pub test_inject_fault: Option<usize>,

    #[command(flatten)]
    pub gpu: crate::cmd::gpu::GpuArgs,

    /// Count on a board with blocked cells: FILE (or - for stdin) has N lines of N cells,
    /// 1 or . allowed, 0 or # blocked. Not with --stdin, --unique, --split-depth, --engine,
    /// --checkpoint, --shard, --out or --recheck (one search over the whole board)
    #[arg(long, value_name = "FILE", conflicts_with_all = ["stdin", "unique", "split_depth", "engine", "checkpoint", "shard", "out", "recheck", "gpu", "gpu_device"])]
    pub mask: Option<PathBuf>,
}

/// The engine names with their one-line summaries, for `--help`.
fn engine_values() -> PossibleValuesParser {
    let auto = PossibleValue::new(engine::AUTO).help("the fastest engine for N on this machine");
    let rest = engine::ENGINES
        .iter()
        .map(|e| PossibleValue::new(e.name()).help(e.summary()));
    PossibleValuesParser::new(std::iter::once(auto).chain(rest))
}

/// The `--shard` value: explicit, or from a job array's variables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ShardArg {
    /// `auto` (K from the scheduler) or `auto/K`: see `nqueens::shard::scheduler`.
    Auto(Option<usize>),
    /// `I/K`.
    Spec(ShardSpec),
}

/// Parses `--shard`: `auto`, `auto/K` or `I/K`.
pub(super) fn parse_shard(s: &str) -> Result<ShardArg, String> {
    let s = s.trim();
    if s == "auto" {
        return Ok(ShardArg::Auto(None));
    }
    if let Some(k) = s.strip_prefix("auto/") {
        return match k.trim().parse::<usize>() {
            Ok(k) if k > 0 => Ok(ShardArg::Auto(Some(k))),
            _ => Err(format!(
                "'{s}' is not of the form auto/K with K a number of shards from 1 (e.g. auto/16)"
            )),
        };
    }
    s.parse().map(ShardArg::Spec).map_err(|e| e.to_string())
}

/// The longest `--checkpoint-every` accepted, in seconds.
const MAX_CHECKPOINT_EVERY_S: f64 = 1e9;

/// The shortest `--checkpoint-every` accepted, in seconds: a save (write, fsync, rename)
/// takes about this long, so shorter periods only keep one core busy saving.
const MIN_CHECKPOINT_EVERY_S: f64 = 0.001;

/// Parses `--checkpoint-every`: a number of seconds from [`MIN_CHECKPOINT_EVERY_S`], fractions
/// allowed.
fn parse_checkpoint_every(s: &str) -> Result<Duration, String> {
    let every = parse_seconds(s, MAX_CHECKPOINT_EVERY_S)?;
    if every.as_secs_f64() < MIN_CHECKPOINT_EVERY_S {
        return Err(format!(
            "'{s}' is shorter than the shortest period between saves, \
             {MIN_CHECKPOINT_EVERY_S} s"
        ));
    }
    Ok(every)
}
