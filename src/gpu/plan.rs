//! The GPU's plan: the mitm engine's plan, its joins handed to a [`GpuJoiner`].

use std::sync::Arc;

use super::device::Gpu;
use super::join::{slot_bytes, GpuJoiner};
use crate::engine::mitm::{check_quarters, MitmPlan, MITM_MIN_N};
use crate::engine::{Engine, PlanOptions};
use crate::error::{check_n, Error};
use crate::plan::Plan;

/// Largest quarter size whose prepared quarters a GPU plan keeps for the whole run, and so
/// keeps resident on the GPU (h = 11: N = 22 and 23, about 300 MB per task kind; larger
/// quarters are carried by each join).
pub(crate) const SHARED_H: u32 = 11;

/// The mitm plan of an `n`×`n` board whose joins run on `gpu`: the same tasks, counts and
/// fingerprint as `nqueens::engine::plan("mitm", n, …)`. Boards below the mitm engine's
/// smallest get the CPU's plan.
///
/// # Errors
/// As the mitm engine: a board size out of range or too large for it.
pub fn plan(gpu: &Gpu, n: u32) -> Result<Box<dyn Plan>, Error> {
    check_n(n)?;
    let mitm = crate::engine::mitm::Mitm;
    if n < MITM_MIN_N {
        return mitm.plan(n, &PlanOptions::default());
    }
    check_quarters(n)?;
    let joiner = Arc::new(GpuJoiner::new(
        Arc::clone(&gpu.device),
        slot_bytes()?,
        gpu.fail_after,
    ));
    Ok(Box::new(MitmPlan::with_joiner(n, joiner, SHARED_H)))
}
