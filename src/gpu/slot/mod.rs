//! A batch slot: the GPU buffers one batch of joins lives in, sized once from a memory
//! budget, with its bind groups made once; and how one batch is recorded into a single
//! command buffer (uploads, every stage, and the copy of its results) with no readback in
//! between: each stage's sizes stay on the GPU ([`super::layout`], `plan.wgsl`).
//!
//! - [`capacity`]: how much a batch holds, and where the regions of its `scan` buffer lie;
//! - [`buffers`]: the buffers, bind groups and timestamps of a slot;
//! - [`record`]: a batch recorded, and the steps it makes;
//! - [`scan`]: the dispatches of an in-place scan.

mod buffers;
mod capacity;
mod record;
mod scan;

pub(crate) use buffers::{Sizes, Slot, PASSES, STAT_WORDS};
pub(crate) use capacity::{binding, Capacity};
pub(crate) use record::{batch_steps, top_levels, upload, Packed, WIDE_STEPS};
