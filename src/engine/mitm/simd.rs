//! Run-time CPU dispatch for the matcher's inner loops.
//!
//! The loops in [`super::matcher`] are written once, generic and `#[inline(always)]`; here each
//! is instantiated inside functions compiled for a CPU level (`#[target_feature]`), and the
//! best level the running CPU supports is picked once. POPCNT matters most (about 3× on the
//! published program); wider vectors help the block loops.

use super::matcher::{self, Lanes};
use std::sync::OnceLock;

/// An instruction-set level the matcher can run at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// Plain Rust, any CPU.
    Portable,
    /// x86-64 with POPCNT.
    Popcnt,
    /// x86-64 with AVX2 and POPCNT.
    Avx2,
    /// x86-64 with AVX-512F/BW and VPOPCNTQ.
    Avx512,
}

impl Level {
    /// The best level this CPU supports (detected once).
    pub fn detect() -> Level {
        static BEST: OnceLock<Level> = OnceLock::new();
        *BEST.get_or_init(|| {
            available_levels()
                .into_iter()
                .max()
                .unwrap_or(Level::Portable)
        })
    }

    /// A short name for reports.
    pub fn name(self) -> &'static str {
        match self {
            Level::Portable => "portable",
            Level::Popcnt => "popcnt",
            Level::Avx2 => "avx2",
            Level::Avx512 => "avx512",
        }
    }
}

/// Every level the running CPU supports, lowest first (the portable one always).
pub fn available_levels() -> Vec<Level> {
    let mut levels = vec![Level::Portable];
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("popcnt") {
            levels.push(Level::Popcnt);
            if std::arch::is_x86_feature_detected!("avx2") {
                levels.push(Level::Avx2);
            }
            if std::arch::is_x86_feature_detected!("avx512f")
                && std::arch::is_x86_feature_detected!("avx512bw")
                && std::arch::is_x86_feature_detected!("avx512vpopcntdq")
            {
                levels.push(Level::Avx512);
            }
        }
    }
    levels
}

/// Generates a dispatcher `$name(level, args…)` over per-level instantiations of `$body`.
macro_rules! dispatch {
    ($(#[$doc:meta])* fn $name:ident($($arg:ident: $ty:ty),*) -> $ret:ty = $body:path;) => {
        $(#[$doc])*
        #[inline]
        pub fn $name(level: Level, $($arg: $ty),*) -> $ret {
            #[cfg(target_arch = "x86_64")]
            mod x86 {
                use super::*;
                #[target_feature(enable = "popcnt")]
                pub fn popcnt($($arg: $ty),*) -> $ret { $body($($arg),*) }
                #[target_feature(enable = "avx2,popcnt")]
                pub fn avx2($($arg: $ty),*) -> $ret { $body($($arg),*) }
                #[target_feature(enable = "avx512f,avx512bw,avx512vpopcntdq,avx2,popcnt")]
                pub fn avx512($($arg: $ty),*) -> $ret { $body($($arg),*) }
            }
            match level {
                // SAFETY: a level above Portable is only ever constructed by
                // `available_levels`, after detecting the features it enables.
                #[cfg(target_arch = "x86_64")]
                Level::Popcnt => unsafe { x86::popcnt($($arg),*) },
                #[cfg(target_arch = "x86_64")]
                Level::Avx2 => unsafe { x86::avx2($($arg),*) },
                #[cfg(target_arch = "x86_64")]
                Level::Avx512 => unsafe { x86::avx512($($arg),*) },
                _ => $body($($arg),*),
            }
        }
    };
}

dispatch! {
    /// Builds one block's tables (see [`matcher::build_block_generic`]).
    fn build_block(keys: &[u64], bits: u32, k: u32, table: &mut [Lanes]) -> () =
        matcher::build_block_generic;
}

dispatch! {
    /// Counts disjoint pairs against one block (see [`matcher::count_block_generic`]).
    fn count_block(table: &[Lanes], k: u32, chunks: u32, queries: &[u64]) -> u64 =
        matcher::count_block_generic;
}

dispatch! {
    /// Counts disjoint pairs directly (see [`matcher::count_direct_generic`]).
    fn count_direct(keys: &[u64], queries: &[u64]) -> u64 = matcher::count_direct_generic;
}
