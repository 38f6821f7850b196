//! What the GPU tests share: the machine's GPU (or a skip), random keys and their brute-force
//! join, and a join through the whole batch pipeline.

use std::sync::Arc;

use crate::gpu::device::Gpu;
use crate::gpu::join::{wait, GpuJoiner};
use crate::gpu::layout::{split, JoinDesc};
use crate::gpu::request::Request;
use crate::gpu::slot::Capacity;
use crate::work::Work;

/// The machine's GPU, or `None` (the test then passes, saying so), unless
/// `NQUEENS_REQUIRE_GPU` is set: CI, which installs a driver, must not skip them unseen.
pub(super) fn gpu(test: &str) -> Option<Gpu> {
    match Gpu::open(None) {
        Ok(gpu) => Some(gpu),
        Err(e) if std::env::var_os("NQUEENS_REQUIRE_GPU").is_some() => {
            panic!("{test}: no GPU, and NQUEENS_REQUIRE_GPU is set: {e}")
        }
        Err(e) => {
            eprintln!("{test}: skipped, no GPU: {e}");
            None
        }
    }
}

/// Random keys of `bits` bits, each set with probability about `density`, with a random
/// class in bits 61..63.
pub(super) fn keys(rng: &mut fastrand::Rng, len: usize, bits: u32, density: f64) -> Vec<u64> {
    (0..len)
        .map(|_| {
            let key = (0..bits).fold(0u64, |k, b| k | u64::from(rng.f64() < density) << b);
            key | u64::from(rng.u32(..4)) << 61
        })
        .collect()
}

/// The weights of a join of west keys weighted by `factors` (by class), as the GPU weighs
/// them: Σ over disjoint (west, east) pairs of the west key's factor, and the pairs.
pub(super) fn brute(west: &[u64], east: &[u64], factors: [u32; 4], live: u64) -> (u64, u64) {
    let class = |k: u64| (k >> 61 & 3) as usize;
    let mut total = (0u64, 0u64);
    for &w in west {
        for &e in east.iter().filter(|&&e| w & e & live == 0) {
            let _ = e;
            total.0 += u64::from(factors[class(w)]);
            total.1 += 1;
        }
    }
    total
}

/// A joiner with small batch slots (so that joins pass them and are redone or cut).
pub(super) fn small_joiner(gpu: &Gpu) -> GpuJoiner {
    let cap = Capacity::of_budget(&gpu.device, 4 << 20);
    GpuJoiner::with_capacity(Arc::clone(&gpu.device), cap, 1 << 12, None)
}

/// The count of the join of `west` and `east` keys, weighted by `factors` on the `live`
/// bits with `flags` ([`JoinDesc`]), through the whole batch pipeline.
pub(super) fn join_keys(
    joiner: &GpuJoiner,
    west: &[u64],
    east: &[u64],
    factors: [u32; 4],
    live: u64,
    flags: u32,
) -> (Option<u64>, Work) {
    let desc = JoinDesc {
        flags,
        cap: u32::MAX,
        factors,
        live: split(live),
        ..JoinDesc::default()
    };
    let request = Request::of_keys(west, east, desc);
    let rx = joiner.submit_request(request).unwrap();
    let mut work = Work::default();
    let count = wait(rx, &mut work).unwrap();
    (count, work)
}
