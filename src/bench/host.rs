//! What a benchmark ran on: [`HostInfo`].

use serde::{Deserialize, Serialize};

/// What the benchmark ran on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostInfo {
    /// CPU model name, with the numbers that tell models apart (see [`crate::cpu::name`]).
    pub cpu: String,
    /// Logical CPUs.
    pub logical_cores: usize,
    /// Physical cores.
    pub physical_cores: usize,
    /// SIMD and bit-manipulation features detected at run time.
    pub features: Vec<String>,
    /// The kernel code path chosen for this CPU.
    pub code_path: String,
    /// The matcher's instruction-set level (see [`crate::engine::matcher_level`]).
    #[serde(default)]
    pub isa: String,
    /// Operating system.
    pub os: String,
    /// CPU architecture.
    pub arch: String,
    /// nqueens version.
    pub version: String,
    /// Git commit nqueens was built from (`unknown` outside a checkout).
    pub commit: String,
}

impl HostInfo {
    /// Describes this machine.
    pub fn detect() -> Self {
        HostInfo {
            cpu: crate::cpu::name(),
            logical_cores: num_cpus::get(),
            physical_cores: num_cpus::get_physical(),
            features: cpu_features(),
            code_path: crate::engine::code_paths(),
            isa: crate::engine::matcher_level().to_string(),
            os: std::env::consts::OS.to_string(),
            arch: std::env::consts::ARCH.to_string(),
            version: env!("CARGO_PKG_VERSION").to_string(),
            commit: env!("NQUEENS_GIT_COMMIT").to_string(),
        }
    }
}

/// The features that matter to the engines, as detected now.
fn cpu_features() -> Vec<String> {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::is_x86_feature_detected as has;
        let table = [
            ("popcnt", has!("popcnt")),
            ("bmi1", has!("bmi1")),
            ("bmi2", has!("bmi2")),
            ("avx2", has!("avx2")),
            ("avx512f", has!("avx512f")),
            ("avx512vpopcntdq", has!("avx512vpopcntdq")),
        ];
        table
            .iter()
            .filter(|(_, on)| *on)
            .map(|(name, _)| name.to_string())
            .collect()
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        Vec::new()
    }
}
