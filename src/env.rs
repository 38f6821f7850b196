//! Names of the environment variables the library reads.
//!
//! A leaf module: the error type names them in its messages, and the modules that read them
//! depend on the error type, so the names live below both.

/// The environment variable that caps the matcher's instruction-set level (public as
/// `nqueens::engine::ISA_VAR`).
pub(crate) const ISA_VAR: &str = "NQUEENS_ISA";

/// The environment variable that sets the GPU memory of one batch slot, in MiB (three
/// slots are in flight): a software driver takes 256 MiB by default, far less than a GPU,
/// and so cuts large joins that a GPU runs whole; this makes its work counters a GPU's.
#[cfg(feature = "gpu")]
pub(crate) const GPU_SLOT_VAR: &str = "NQUEENS_GPU_SLOT_MIB";
