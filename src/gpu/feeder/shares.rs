//! Counter shares: what one join did, from its request and results row, and its share of
//! what its batch did (counters and each pass's GPU seconds), split among the batch's joins.

use super::submission::Submission;
use crate::gpu::layout::{
    wide, FILL_ERRORS, FILL_SWAPPED, RESULT_BLOCKS, RESULT_HITS, RESULT_ROUTES, RESULT_SIZES,
    RESULT_STATUS, RESULT_TESTS,
};
use crate::gpu::request::Request;
use crate::gpu::slot::PASSES;
use crate::work::Work;

/// What one join did, from its request and results row.
pub(super) fn joined_work(request: &Request, row: &[u32]) -> Work {
    let sizes: Vec<u64> = row[RESULT_SIZES as usize..][..4]
        .iter()
        .map(|&x| u64::from(x))
        .collect();
    let status = row[RESULT_STATUS as usize];
    let counted = status & FILL_ERRORS == 0;
    let swapped = status & FILL_SWAPPED != 0;
    let (stored, queries) = if swapped {
        (sizes[1], sizes[0])
    } else {
        (sizes[0], sizes[1])
    };
    let mut work = Work {
        half_pairs_tested: request.all_pairs(),
        keys_built: sizes.iter().sum(),
        ..Work::default()
    };
    if counted {
        work.stored_keys = stored;
        work.queries = queries;
        work.pair_product = stored * queries;
        work.blocks_built = u64::from(row[RESULT_BLOCKS as usize]);
        work.visited_pairs = u64::from(row[RESULT_ROUTES as usize]);
        work.routing_tests = wide(row, RESULT_TESTS);
        work.hits = wide(row, RESULT_HITS);
        work.direct_pairs = sizes[2] * sizes[3];
    }
    work
}

/// One of [`Work`]'s counters.
type Counter = fn(&mut Work) -> &mut u64;

/// Each join's share of a batch's work in each pass, to split the passes' GPU seconds and
/// the batch's counters.
pub(super) struct Shares {
    /// Per pass, each join's weight and their total.
    weights: Vec<(Vec<f64>, f64)>,
    /// Each join's bytes of jobs, sides, description and carried words.
    uploads: Vec<f64>,
    /// Each join's routes where its row counts them (no error): the block count keeps the
    /// chunks of those visits only, so a join cut or queued again takes none of them.
    counted_routes: Vec<f64>,
}

impl Shares {
    pub(super) fn of(rows: &[&[u32]], entries: &[Submission]) -> Self {
        let per_join = |f: &dyn Fn(&[u32], &Request) -> f64| -> (Vec<f64>, f64) {
            let w: Vec<f64> = rows
                .iter()
                .zip(entries)
                .map(|(r, s)| f(r, &s.request))
                .collect();
            let total = w.iter().sum();
            (w, total)
        };
        let size = |r: &[u32], i: usize| f64::from(r[RESULT_SIZES as usize + i]);
        let weights = vec![
            per_join(&|_, q| q.items() as f64),
            per_join(&|r, _| size(r, 0) + size(r, 1)),
            per_join(&|r, _| f64::from(r[RESULT_BLOCKS as usize])),
            per_join(&|r, _| wide(r, RESULT_TESTS) as f64),
            per_join(&|r, _| f64::from(r[RESULT_ROUTES as usize])),
            per_join(&|r, _| size(r, 2) * size(r, 3)),
        ];
        let uploads = entries
            .iter()
            .map(|s| s.request.upload_bytes() as f64)
            .collect();
        let counted_routes = rows
            .iter()
            .map(|r| {
                let counted = r[RESULT_STATUS as usize] & FILL_ERRORS == 0;
                if counted {
                    f64::from(r[RESULT_ROUTES as usize])
                } else {
                    0.0
                }
            })
            .collect();
        Shares {
            weights,
            uploads,
            counted_routes,
        }
    }

    /// The batch's counters `batch` split among its joins, each counter's parts adding up to
    /// it: a pass's by the joins' weights in that pass, uploads by each join's own, the rest
    /// evenly. An estimate scales each sampled task's counters to the plan by the task's
    /// stratum, so a batch's counters all put on its first join made one sample's estimate
    /// turn on which of its tasks happened to share a batch (the tree build's term of
    /// `count 21`'s model by a quarter).
    pub(super) fn split(&self, batch: &Work) -> Vec<Work> {
        let n = self.uploads.len();
        let even = vec![1.0; n];
        let mut parts = vec![Work::default(); n];
        let counters: [(Counter, &[f64]); 30] = [
            (|w| &mut w.tree_tests, &self.weights[1].0),
            (|w| &mut w.gpu_top_nodes, &self.weights[1].0),
            (|w| &mut w.gpu_top_accesses, &self.weights[1].0),
            (|w| &mut w.gpu_wide_tiles, &self.weights[1].0),
            (|w| &mut w.gpu_subtrees, &self.weights[1].0),
            (|w| &mut w.gpu_rest_iterations, &self.weights[1].0),
            (|w| &mut w.gpu_rest_accesses, &self.weights[1].0),
            (|w| &mut w.gpu_top_writes, &self.weights[1].0),
            (|w| &mut w.gpu_rest_writes, &self.weights[1].0),
            (|w| &mut w.gpu_pair_leaves, &self.weights[1].0),
            (|w| &mut w.gpu_pair_rounds, &self.weights[1].0),
            (|w| &mut w.gpu_pair_accesses, &self.weights[1].0),
            (|w| &mut w.gpu_route_walkers, &self.weights[3].0),
            (|w| &mut w.gpu_pairs_written, &self.weights[0].0),
            (|w| &mut w.gpu_jobs, &self.weights[0].0),
            (|w| &mut w.gpu_count_loads, &self.weights[4].0),
            (|w| &mut w.gpu_visit_chunks, &self.counted_routes),
            (|w| &mut w.gpu_batches, &even),
            (|w| &mut w.gpu_dependent_steps, &even),
            (|w| &mut w.table_key_tests, &self.weights[2].0),
            (|w| &mut w.table_chunks, &self.weights[2].0),
            (|w| &mut w.route_atomics, &self.weights[3].0),
            (|w| &mut w.gpu_bytes_up, &self.uploads),
            (|w| &mut w.gpu_resident_bytes, &self.uploads),
            (|w| &mut w.gpu_word_sets, &self.uploads),
            (|w| &mut w.gpu_submits, &even),
            (|w| &mut w.gpu_waits, &even),
            (|w| &mut w.gpu_steps, &even),
            (|w| &mut w.gpu_wide_steps, &even),
            (|w| &mut w.gpu_bytes_down, &even),
        ];
        let mut whole = *batch;
        for (field, weights) in counters {
            let total = std::mem::take(field(&mut whole));
            for (part, x) in parts.iter_mut().zip(apportion(total, weights)) {
                *field(part) = x;
            }
        }
        // Anything not split stays with the first join.
        if let Some(first) = parts.first_mut() {
            first.add(&whole);
        }
        parts
    }

    /// Adds join `i`'s share of each pass's seconds to `work`.
    pub(super) fn add_seconds(&self, i: usize, passes: &[f64; 6], work: &mut Work) {
        let mut mine = [0.0; 6];
        for (p, (w, total)) in self.weights.iter().enumerate() {
            let share = if *total > 0.0 {
                w[i] / total
            } else {
                1.0 / w.len() as f64
            };
            mine[p] = passes[p] * share;
        }
        work.gpu_half_join_seconds += mine[0];
        work.gpu_sieve_seconds += mine[1];
        work.gpu_tables_seconds += mine[2];
        work.gpu_routing_seconds += mine[3];
        work.count_kernel_seconds += mine[4];
        work.gpu_ties_seconds += mine[5];
    }
}

/// `total` in whole parts in proportion to `weights` (evenly where they sum to 0), adding
/// up to it: part k ends where the running share of the weights up to k, rounded down,
/// does (monotone, so no part is negative), and the last at the total.
fn apportion(total: u64, weights: &[f64]) -> Vec<u64> {
    let sum: f64 = weights.iter().sum();
    let even = sum.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater);
    let of = if even { weights.len() as f64 } else { sum };
    let mut run = 0.0;
    let mut start = 0;
    let mut parts = Vec::with_capacity(weights.len());
    for (k, &w) in weights.iter().enumerate() {
        run += if even { 1.0 } else { w };
        let end = if k + 1 == weights.len() {
            total
        } else {
            ((total as f64 * run / of).floor() as u64).clamp(start, total)
        };
        parts.push(end - start);
        start = end;
    }
    parts
}

/// Each pass's seconds from its two resolved timestamps (`period` nanoseconds a tick); a
/// pass whose counter went backwards (a reset) counts nothing.
pub(super) fn pass_seconds(stamps: &[u32], period: f32) -> [f64; 6] {
    let mut out = [0.0; 6];
    for (p, o) in out.iter_mut().enumerate().take(PASSES.len()) {
        let t = |k: usize| u64::from(stamps[2 * k]) | u64::from(stamps[2 * k + 1]) << 32;
        let (begin, end) = (t(2 * p), t(2 * p + 1));
        *o = end.saturating_sub(begin) as f64 * f64::from(period) * 1e-9;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A batch's counter split among its joins adds up to it exactly, in proportion,
    /// whatever the weights (all 0: evenly; one join: all of it).
    #[test]
    fn a_counter_apportioned_adds_up_to_it_in_proportion() {
        assert_eq!(apportion(10, &[1.0, 1.0, 3.0]), vec![2, 2, 6]);
        assert_eq!(apportion(1, &[0.0, 0.0, 0.0]), vec![0, 0, 1]);
        assert_eq!(apportion(7, &[0.0; 7]), vec![1; 7]);
        assert_eq!(apportion(5, &[2.5]), vec![5]);
        assert_eq!(apportion(0, &[1.0, 2.0]), vec![0, 0]);
        let mut rng = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..1000 {
            rng = rng
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let n = 1 + (rng >> 60) as usize;
            let total = rng >> (rng & 63);
            let weights: Vec<f64> = (0..n).map(|k| ((rng >> (k * 4)) & 15) as f64).collect();
            let parts = apportion(total, &weights);
            assert_eq!(parts.iter().sum::<u64>(), total, "{total} by {weights:?}");
            let sum: f64 = weights.iter().sum();
            for (p, w) in parts.iter().zip(&weights) {
                let want = if sum > 0.0 {
                    total as f64 * w / sum
                } else {
                    total as f64 / n as f64
                };
                // Within one of its share; past 2^53, within a double's rounding of it.
                let slack = 1.0 + total as f64 * 1e-15;
                assert!(
                    (*p as f64 - want).abs() <= slack,
                    "{parts:?} by {weights:?}"
                );
            }
        }
    }
}
