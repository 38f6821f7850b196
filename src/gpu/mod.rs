//! The GPU engine: the mitm engine's joins on a GPU, through wgpu (Vulkan on Linux, Metal
//! and DX12 elsewhere) and WGSL compute shaders (`src/gpu/shaders/`).
//!
//! The plan, its tasks and their counts are the CPU engine's ([`crate::engine::mitm`]): the
//! CPU still plans, searches the quarters and cuts large tasks into pieces, and each join of
//! two sides of halves goes to the GPU instead, where
//!
//! 1. the half join makes both sides' keys (every pair of disjoint north and south quarter
//!    words, in jobs of one column split and class);
//! 2. the larger side fills a sieve: a tree built on the GPU as the CPU's trie is built,
//!    each node splitting its keys on the bit that rules out the most pairs, until a leaf
//!    holds a block of 512 keys or fewer, bit-sliced on their mixed bits;
//! 3. each query walks the tree to the blocks it may meet, and the block count counts the
//!    keys it shares no bit with, 16 invocations per query, tables in workgroup memory.
//!
//! Joins go in batches: worker threads hand them to one feeder thread, which packs many
//! into one command buffer whose stages size each other on the GPU, and reads each batch's
//! results once. Totals are summed over 64 bits on the GPU and 128 on the host. Shards,
//! checkpoints and results mix freely with the CPU's: the plan fingerprint is the same.
//! Design and figures: `docs/gpu.md`.

mod device;
mod feeder;
mod join;
mod kernels;
mod layout;
mod memory;
mod model;
mod plan;
mod probe;
mod request;
mod resident;
mod shader;
mod slot;
mod stats;
mod words;

#[cfg(test)]
mod tests;

pub use device::{adapters, no_adapter, Adapter, Gpu};
pub use model::{model_seconds, span_model, SpanEstimate, StratumWork};
pub use plan::plan;
pub use probe::{probe_dispatches, DispatchProbe};
