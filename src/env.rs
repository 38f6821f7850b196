//! Names of the environment variables the library reads.
//!
//! A leaf module: the error type names them in its messages, and the modules that read them
//! depend on the error type, so the names live below both.

/// The environment variable that caps the matcher's instruction-set level (public as
/// `nqueens::engine::ISA_VAR`).
pub(crate) const ISA_VAR: &str = "NQUEENS_ISA";
