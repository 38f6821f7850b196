//! What `count --out` prints on stdout: the shard's total, or a summary with `--json` (the
//! result file itself holds every task).

use std::io::{self, Write};
use std::path::PathBuf;
use std::time::Duration;

use serde::Serialize;

use super::{json, Format};
use crate::shard::PartialResult;

/// The schema tag of a shard summary.
pub const SHARD_SUMMARY_SCHEMA: &str = "nqueens.shard-summary/1";

/// A shard's summary, as printed.
///
/// JSON fields: `schema` ([`SHARD_SUMMARY_SCHEMA`]), `n`, `shard` (`I/K`), `tasks` (in the
/// shard), `plan_tasks`, `total` (a decimal string), `elapsed_s`, `cpu_s` (process CPU
/// seconds of this run, all threads; null after a resume), `rechecked`, `out` (the result
/// file written), and `gpu` (only where a GPU joined: what it did in this session, the
/// same object as `count --json` has, [`crate::work::GpuWork`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ShardSummary {
    /// Schema tag, [`SHARD_SUMMARY_SCHEMA`].
    pub schema: &'static str,
    /// Board size.
    pub n: u32,
    /// The shard, as `I/K`.
    pub shard: String,
    /// Tasks in the shard.
    pub tasks: usize,
    /// Tasks in the whole plan.
    pub plan_tasks: usize,
    /// The shard's total.
    pub total: String,
    /// Seconds spent counting.
    pub elapsed_s: f64,
    /// Process CPU seconds of this run, all threads together (`None` after a resume).
    pub cpu_s: Option<f64>,
    /// Tasks re-solved on the portable code path with the same count.
    pub rechecked: usize,
    /// The result file.
    pub out: PathBuf,
    /// What the GPU did in this session (`--gpu`; absent otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpu: Option<crate::work::GpuWork>,
}

impl ShardSummary {
    /// The summary of `result`, written to `out`, that took `cpu` of process CPU time.
    pub fn new(result: &PartialResult, out: PathBuf, cpu: Option<Duration>) -> Self {
        ShardSummary {
            schema: SHARD_SUMMARY_SCHEMA,
            n: result.identity.n,
            shard: result.identity.shard.to_string(),
            tasks: result.tasks,
            plan_tasks: result.identity.plan_tasks,
            total: result.total.to_string(),
            elapsed_s: result.elapsed_s,
            cpu_s: cpu.map(|d| d.as_secs_f64()),
            rechecked: result.rechecked,
            out,
            gpu: None,
        }
    }

    /// The summary with what the GPU did (`None`: counted on the CPU).
    pub fn with_gpu(mut self, gpu: Option<crate::work::GpuWork>) -> Self {
        self.gpu = gpu;
        self
    }
}

/// Writes the summary with JSON, else the total alone.
pub fn render_shard_summary(
    s: &ShardSummary,
    format: Format,
    out: &mut dyn Write,
) -> io::Result<()> {
    match format {
        Format::Json => json::write(s, out),
        Format::Text | Format::Markdown => writeln!(out, "{}", s.total),
    }
}
