//! The GPU cost models, stated once.
//!
//! - **The span model**, the headline figure: a batch lasts the sum over its dependent steps
//!   of the longest of the step latency, the step's longest workgroup and its work spread
//!   over the whole GPU ([`steps`]); a run lasts the sum over its batches, as a count of J
//!   workers forms them ([`batches`]). Rates are in [`rates`], each with its source; the
//!   step latency, never measured, is a parameter reported at 5 and 30 µs. A count reports
//!   it over the batches it formed (`count --json`'s `gpu` object), an estimate over the
//!   batches its plan would form (`estimate --gpu --json`'s `gpu_span_seconds`), the joins
//!   its sample cut run whole where the modelled GPU's batch holds them (`whole.rs`).
//! - **The throughput sum** ([`model_seconds`], `gpu_model_seconds`): every kind of work at
//!   the whole GPU's rate and a few microseconds a step, every batch charged the most steps
//!   a batch may record. It cannot see a narrow step; it stays for comparison with earlier
//!   rounds, not as a bound.
//!
//! `docs/gpu.md` has the figures and what they were checked against.

mod batches;
mod rates;
mod steps;
mod whole;

use std::collections::BTreeMap;

pub use batches::StratumWork;
pub(crate) use rates::LATENCIES;
use rates::{BYTES_UP_PER_SECOND, ROUTING_TESTS_PER_SECOND, VISITS_PER_SECOND};
pub(crate) use steps::{span, Level, Shape};

use super::join::{RESIDENT_BYTES, TASKS_IN_FLIGHT};
use super::layout::TOP_LEVELS;
use super::memory;
use super::slot::{batch_steps, Capacity, WIDE_STEPS};

/// What the span model says of a whole plan.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct SpanEstimate {
    /// Bytes of the batch slots the count has: an H100's by default.
    pub slot_bytes: u64,
    /// The batches a count of the plan forms.
    pub batches: f64,
    /// The GPU's critical path, seconds, at each of the reported step latencies (5, 30 µs).
    pub seconds: [f64; 2],
    /// The same work at the whole GPU's width, seconds.
    pub full_width_seconds: f64,
    /// The share of the span (at 5 µs) the GPU is not working at full width.
    pub idle_share: f64,
    /// Each pass's critical path at each latency (the passes of a batch: half join, sieve,
    /// tables, routing, count, ties).
    pub passes: [[f64; 6]; 2],
    /// Dependent steps of all those batches.
    pub steps: f64,
}

/// The binding size of a discrete GPU's storage buffer (Vulkan on NVIDIA: 4 GiB less one
/// byte), for the slot a count of the model's plan would have.
const GPU_BINDING: u64 = u32::MAX as u64;

/// The steps of `shape`'s batch that the host records: all the span model lists but wgpu's
/// own checks of indirect dispatches, which wgpu adds.
pub(crate) fn host_steps(shape: &Shape) -> u64 {
    let without = Shape {
        validation: false,
        ..shape.clone()
    };
    steps::steps(&without).len() as u64
}

/// The bytes of the slot a count on an H100 gets: `NQUEENS_GPU_SLOT_MIB`, else the default
/// by its memory (12.5 GiB).
fn gpu_slot_bytes() -> u64 {
    super::join::slot_bytes()
        .ok()
        .flatten()
        .unwrap_or(memory::sizes_for(memory::H100_BYTES).0)
}

/// The span of a plan whose strata are `strata`, counted by `workers` workers on one GPU of
/// the H100 / H200 class with an H100's default slot (or `NQUEENS_GPU_SLOT_MIB`'s). `None` where
/// the counters are not a GPU's.
pub fn span_model(strata: &[StratumWork], workers: usize) -> Option<SpanEstimate> {
    if strata.iter().all(|s| !s.counters.contains_key("gpu_steps")) {
        return None;
    }
    let slot_bytes = gpu_slot_bytes();
    let cap = Capacity::of(slot_bytes, GPU_BINDING);
    let mut out = SpanEstimate {
        slot_bytes,
        batches: 0.0,
        seconds: [0.0; 2],
        full_width_seconds: 0.0,
        idle_share: 0.0,
        passes: [[0.0; 6]; 2],
        steps: 0.0,
    };
    for s in strata.iter().filter(|s| s.tasks > 0.0) {
        let s = &whole::held_whole(s, &cap);
        let packing = batches::packing(s, &cap, workers);
        let mut shape = batches::shape(s, packing);
        shape.block_scan = f64::from(cap.blocks) + 1.0;
        out.batches += packing.batches;
        for (i, &latency) in LATENCIES.iter().enumerate() {
            let one = span(&shape, latency);
            out.seconds[i] += packing.batches * one.seconds;
            for (sum, pass) in out.passes[i].iter_mut().zip(one.passes) {
                *sum += packing.batches * pass;
            }
            if i == 0 {
                out.full_width_seconds += packing.batches * one.full;
                out.steps += packing.batches * one.steps as f64;
            }
        }
    }
    out.idle_share = if out.seconds[0] > 0.0 {
        1.0 - out.full_width_seconds / out.seconds[0]
    } else {
        0.0
    };
    Some(out)
}

/// Seconds of one dependent step (a dispatch, copy or clear the next waits on): a few
/// microseconds on a discrete GPU, the figure until `scripts/gpu-check.sh` times
/// 1,000 empty ones in a row.
pub(crate) const STEP_SECONDS: f64 = 3e-6;

/// Keys the table build tests per second (one workgroup memory read and five bit inserts
/// each): predicted, not yet timed on a GPU.
const TABLE_KEY_TESTS_PER_SECOND: f64 = 1e12;

/// Keys and sampled queries the tree build reads per second: predicted, not yet timed on a
/// GPU. A node's workgroup reads its fill's sampled queries in coalesced loads and counts the
/// bits of those that reach it with workgroup atomics: 8,192 in about a microsecond on one SM
/// of an H100 (some 9e9 reads a second); 132 SMs would make 1e12. A fifth of that,
/// for the barriers between a subtree's nodes and the top levels' few large nodes.
const TREE_TESTS_PER_SECOND: f64 = 2e11;

/// The throughput sum (the model before the span model): the modelled GPU seconds of a run of
/// `tasks` tasks whose work, scaled to the whole run, is `counters` (by [`crate::Work`]
/// field name). Steps are those of the run's batches: a
/// count hands a batch at least a worker's step of tasks (`TASKS_IN_FLIGHT`), whatever the
/// sampled tasks (each solved alone) took, each with as many tree levels built level by
/// level as a batch ever records, and the sampled tasks' steps that split a level's
/// largest nodes across workgroups (a count's batch takes the most of its tasks', not
/// their sum), at most every top level of every batch. Resident quarter words are uploaded once a run: scaled
/// up from a sample, they would be charged once per task that read them first, so they
/// count at most a discrete GPU's resident room. `None` where the counters are not a GPU's.
pub fn model_seconds(counters: &BTreeMap<&str, f64>, tasks: usize) -> Option<f64> {
    let get = |name: &str| counters.get(name).copied();
    get("gpu_steps")?;
    let batches = (tasks as f64 / TASKS_IN_FLIGHT as f64).ceil();
    // A count's batch splits its levels across workgroups for its largest fill, so at most
    // what its tasks' own batches did: the sample's wide steps, scaled, bound the run's. So
    // does every batch splitting each of its top levels, a far closer bound where the
    // sampled tasks have large fills (N = 22: 6.5 million steps scaled, 176,000 so).
    let most_wide = batches * (WIDE_STEPS * u64::from(TOP_LEVELS)) as f64;
    let wide = get("gpu_wide_steps").unwrap_or(0.0).min(most_wide);
    let steps = batches * batch_steps(TOP_LEVELS) as f64 + wide;
    let resident = get("gpu_resident_bytes")?;
    let bytes_up = get("gpu_bytes_up")? - resident + resident.min(RESIDENT_BYTES[0] as f64);
    Some(
        steps * STEP_SECONDS
            + get("visited_pairs")? / VISITS_PER_SECOND
            + bytes_up / BYTES_UP_PER_SECOND
            + get("routing_tests")? / ROUTING_TESTS_PER_SECOND
            + get("table_key_tests")? / TABLE_KEY_TESTS_PER_SECOND
            + get("tree_tests")? / TREE_TESTS_PER_SECOND,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_term_adds_its_own_rate() {
        let names = [
            "gpu_steps",
            "visited_pairs",
            "gpu_bytes_up",
            "gpu_resident_bytes",
            "routing_tests",
            "table_key_tests",
            "tree_tests",
        ];
        let mut c: BTreeMap<&str, f64> = names.iter().map(|&n| (n, 0.0)).collect();
        let base = model_seconds(&c, TASKS_IN_FLIGHT).unwrap();
        assert!((base - batch_steps(TOP_LEVELS) as f64 * STEP_SECONDS).abs() < 1e-12);
        c.insert("visited_pairs", 20e9);
        let visits = model_seconds(&c, TASKS_IN_FLIGHT).unwrap() - base;
        assert!((visits - 20e9 / VISITS_PER_SECOND).abs() < 1e-9);
        // Resident words count once, up to the resident room: a sample scaled to a plan
        // would charge them once per task.
        let room = RESIDENT_BYTES[0] as f64;
        c.insert("gpu_bytes_up", 1e9 + 50.0 * room);
        c.insert("gpu_resident_bytes", 50.0 * room);
        let up = model_seconds(&c, TASKS_IN_FLIGHT).unwrap() - base - visits;
        assert!((up - (1e9 + room) / BYTES_UP_PER_SECOND).abs() < 1e-9);
        // Wide steps count as the sample's, scaled, up to every top level of every batch.
        let with_wide = |steps: f64| {
            let mut c = c.clone();
            c.insert("gpu_wide_steps", steps);
            model_seconds(&c, 10 * TASKS_IN_FLIGHT).unwrap()
        };
        let wide = |steps: f64| with_wide(steps) - with_wide(0.0);
        let most = 10.0 * (WIDE_STEPS * u64::from(TOP_LEVELS)) as f64;
        assert!((wide(100.0) - 100.0 * STEP_SECONDS).abs() < 1e-12);
        assert!((wide(1e9) - most * STEP_SECONDS).abs() < 1e-12);
        c.remove("routing_tests");
        assert_eq!(model_seconds(&c, 1), None);
        assert_eq!(model_seconds(&BTreeMap::new(), 1), None);
    }
}
