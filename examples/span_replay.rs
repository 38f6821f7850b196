//! The GPU span model of a saved `estimate N --gpu --json`, priced again without sampling
//! again: the counters of its sampled tasks do not change with the model's constants, the
//! slot (`NQUEENS_GPU_SLOT_MIB`) or the workers, so a refit of `src/gpu/model/rates.rs` (a
//! rebuild) or another slot is priced in a second, where sampling N = 27 again took 23
//! minutes on lavapipe. `cargo run --release --features gpu --example span_replay --
//! est-27.json [WORKERS]` (16 by default). The plan's counters are taken as one stratum's.

use std::collections::BTreeMap;
use std::process::exit;

use nqueens::gpu::{span_model, StratumWork};
use nqueens::Work;

/// The passes of a batch, as `estimate`'s `gpu_span_pass_seconds` names them.
const PASSES: [&str; 6] = ["half_join", "sieve", "tables", "routing", "count", "ties"];

fn fail(why: &str) -> ! {
    eprintln!("span_replay: {why}");
    exit(2);
}

/// The plan's tasks and counters (each its central estimate) of an estimate's JSON.
fn stratum(json: &serde_json::Value) -> Option<StratumWork> {
    let tasks = json["tasks"].as_f64()?;
    let plan = json["work"]["counters"]["plan"].as_object()?;
    let counters: BTreeMap<&'static str, f64> = Work::default()
        .counters()
        .into_iter()
        .filter_map(|(name, _)| Some((name, plan.get(name)?["estimate"].as_f64()?)))
        .collect();
    Some(StratumWork { tasks, counters })
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(path) = args.first() else {
        fail("usage: span_replay ESTIMATE.json [WORKERS]");
    };
    let workers = match args.get(1).map(|w| w.parse::<usize>()) {
        None => 16,
        Some(Ok(w)) if w > 0 => w,
        Some(_) => fail("WORKERS is a whole number from 1"),
    };
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| fail(&format!("{path}: {e}")));
    let json: serde_json::Value =
        serde_json::from_str(&text).unwrap_or_else(|e| fail(&format!("{path}: {e}")));
    let Some(s) = stratum(&json) else {
        fail(&format!(
            "{path}: not an `estimate --json` with work counters"
        ));
    };
    let Some(e) = span_model(&[s], workers) else {
        fail(&format!(
            "{path}: its counters are not a GPU's (`estimate --gpu`)"
        ));
    };
    let hours = |s: f64| s / 3600.0;
    println!(
        "{} workers: {:.4e} batches of {:.1} steps; span {:.4} h at 5 µs, {:.4} h at 30 µs; \
         GPU idle {:.3}",
        workers,
        e.batches,
        e.steps / e.batches.max(1.0),
        hours(e.seconds[0]),
        hours(e.seconds[1]),
        e.idle_share
    );
    for (name, at) in PASSES.iter().zip(e.passes[1]) {
        println!("  {name}: {:.4} h at 30 µs", hours(at));
    }
}
