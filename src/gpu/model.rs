//! The GPU cost model, stated once: a whole run's GPU seconds from its work counters, as
//! `estimate --gpu --json` reports them (`gpu_model_seconds`). The rates are what a GPU of
//! the H100 / H200 class is expected to sustain, not what any one run measured; each says
//! where it comes from, and `docs/gpu.md` records every refit against a GPU's timestamps.

use std::collections::BTreeMap;

use super::join::{RESIDENT_BYTES, TASKS_IN_FLIGHT};
use super::layout::TOP_LEVELS;
use super::slot::{batch_steps, WIDE_STEPS};

/// Seconds of one dependent step (a dispatch, copy or clear the next waits on): a few
/// microseconds on a discrete GPU, the figure until `scripts/gpu-check.sh` times
/// 1,000 empty ones in a row.
pub(crate) const STEP_SECONDS: f64 = 3e-6;

/// (query, block) visits per second of the block count: the microbenchmark's rate on an
/// H100 (22.8 G visits/s) rounded down; this block count reached 9.7 G on an H200 with its
/// routes read one at a time, and runs at the microbenchmark's rate with them staged.
const VISITS_PER_SECOND: f64 = 20e9;

/// Bytes per second of uploads (PCIe 5 ×16, about 60% of its peak).
const BYTES_UP_PER_SECOND: f64 = 20e9;

/// Routing tests per second (each a few integer operations on data in L2).
const ROUTING_TESTS_PER_SECOND: f64 = 1e12;

/// Keys the table build tests per second (one workgroup memory read and five bit inserts
/// each): predicted, not yet timed on a GPU.
const TABLE_KEY_TESTS_PER_SECOND: f64 = 1e12;

/// Keys and sampled queries the tree build reads per second: predicted, not yet timed on a
/// GPU. A node's workgroup reads its fill's sampled queries in coalesced loads and counts the
/// bits of those that reach it with workgroup atomics: 8,192 in about a microsecond on one SM
/// of an H100 (some 9e9 reads a second); 132 SMs would make 1e12. A fifth of that,
/// for the barriers between a subtree's nodes and the top levels' few large nodes.
const TREE_TESTS_PER_SECOND: f64 = 2e11;

/// The modelled GPU seconds of a run of `tasks` tasks whose work, scaled to the whole run,
/// is `counters` (by [`crate::Work`] field name). Steps are those of the run's batches: a
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
