//! `nqueens bench --compare A B`: B's speed over A's, per thread count, from two saved reports.

use std::path::Path;

use nqueens::bench::{self, BenchReport};
use nqueens::report::{self, Format, SpeedRatio};

use crate::cmd::messages::warning;
use crate::exit::{Exit, UsageError};

/// The largest bench report `--compare` reads (real ones are a few kB).
const MAX_REPORT_BYTES: u64 = 1 << 20;

fn read_report(path: &Path) -> anyhow::Result<BenchReport> {
    let text = crate::cmd::input::read_to_string(path, MAX_REPORT_BYTES, "a bench report")?;
    let not_report =
        |why: String| UsageError(format!("'{}' is not a bench report: {why}", path.display()));
    let value: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| not_report(e.to_string()))?;
    match value.get("schema").and_then(|s| s.as_str()) {
        Some(bench::BENCH_SCHEMA) => {}
        Some(other) => {
            return Err(not_report(format!(
                "its schema is '{other}', not '{}'",
                bench::BENCH_SCHEMA
            ))
            .into())
        }
        None => return Err(not_report("it has no schema field".to_string()).into()),
    }
    let report: BenchReport =
        serde_json::from_value(value).map_err(|e| not_report(e.to_string()))?;
    if let Some(r) = report
        .results
        .iter()
        .find(|r| !(r.solutions_per_s.is_finite() && r.solutions_per_s > 0.0))
    {
        return Err(not_report(format!(
            "its speed at -j {} is {} solutions/s",
            r.threads, r.solutions_per_s
        ))
        .into());
    }
    // A bench measures each thread count once: two rows for one would leave the ratio to
    // whichever is read first.
    let rows = &report.results;
    if let Some(t) = (0..rows.len()).find_map(|i| {
        rows[..i]
            .iter()
            .any(|r| r.threads == rows[i].threads)
            .then_some(rows[i].threads)
    }) {
        return Err(not_report(format!("it has two rows for -j {t}")).into());
    }
    Ok(report)
}

/// `--compare A B`: B's solutions/s over A's, per thread count.
pub(super) fn compare(a: &Path, b: &Path, format: Format) -> anyhow::Result<Exit> {
    let (ra, rb) = (read_report(a)?, read_report(b)?);
    if ra.workload != rb.workload {
        warning!("the two reports ran different workloads; ratios are rough");
    }
    if ra.gpu != rb.gpu {
        let on = |gpu: &Option<String>| gpu.as_deref().unwrap_or("the CPU").to_string();
        warning!(
            "the two reports joined on different devices ({} and {})",
            on(&ra.gpu),
            on(&rb.gpu)
        );
    }
    let ratios = bench::compare(&ra, &rb);
    if ratios.is_empty() {
        let list = |r: &BenchReport| {
            let t: Vec<String> = r.results.iter().map(|x| x.threads.to_string()).collect();
            t.join(",")
        };
        anyhow::bail!(
            "nothing to compare: the reports have no thread count in common ('{}': {}; '{}': {})",
            a.display(),
            list(&ra),
            b.display(),
            list(&rb)
        );
    }
    let ratios: Vec<SpeedRatio> = ratios
        .into_iter()
        .map(|(threads, ratio)| SpeedRatio::new(threads, ratio))
        .collect();
    report::render_comparison(&ratios, format, &mut std::io::stdout().lock())?;
    Ok(Exit::Ok)
}
