//! Run-time CPU dispatch for the matcher's inner loops.
//!
//! The loops in [`super::kernels`] are written once, generic and `#[inline(always)]`; here each
//! is instantiated inside functions compiled for a CPU level (`#[target_feature]`), and the
//! best level the running CPU supports is picked once. POPCNT matters most (about 3× on the
//! published program); wider vectors help the block loops.

use super::kernels::{self, Lanes, Layout, LeafBits};
#[cfg(target_arch = "x86_64")]
use super::x86;
use std::sync::OnceLock;

mod case;

pub use case::BlockCountCase;

/// An instruction-set level the matcher can run at.
///
/// A level above [`Level::PORTABLE`] can only be obtained from [`Level::detect`] or
/// [`available_levels`], after the running CPU was found to support it: the field is
/// private, so safe code cannot make a level that runs instructions the CPU lacks, and the
/// dispatchers below may enter `#[target_feature]` code on the strength of the level alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Level(Isa);

/// The instruction sets behind a [`Level`], lowest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Isa {
    /// Plain Rust, any CPU.
    Portable,
    /// x86-64 with POPCNT.
    Popcnt,
    /// x86-64 with AVX2, BMI2 and POPCNT.
    Avx2,
    /// x86-64 with AVX-512F/BW, AVX2, BMI2 and POPCNT, without VPOPCNTQ (Skylake-SP,
    /// Cascade Lake).
    Avx512bw,
    /// x86-64 with AVX-512F/BW, VPOPCNTQ, AVX2, BMI2 and POPCNT.
    Avx512,
}

/// Every level by name, lowest first (the names `NQUEENS_ISA` accepts).
const NAMED: [(Isa, &str); 5] = [
    (Isa::Portable, "portable"),
    (Isa::Popcnt, "popcnt"),
    (Isa::Avx2, "avx2"),
    (Isa::Avx512bw, "avx512bw"),
    (Isa::Avx512, "avx512"),
];

/// The level names, lowest first.
pub(crate) const LEVEL_NAMES: [&str; 5] = {
    let mut names = [""; 5];
    let mut i = 0;
    while i < names.len() {
        names[i] = NAMED[i].1;
        i += 1;
    }
    names
};

/// The environment variable that caps the detected level.
pub(crate) const CAP_VAR: &str = crate::env::ISA_VAR;

impl Level {
    /// Plain Rust, on any CPU.
    pub(crate) const PORTABLE: Level = Level(Isa::Portable);

    /// The level the matcher runs at: the best this CPU supports, capped by `NQUEENS_ISA`
    /// (see [`cap`]); read once.
    pub(crate) fn detect() -> Level {
        static BEST: OnceLock<Level> = OnceLock::new();
        *BEST.get_or_init(|| best_up_to(cap().ok().flatten()))
    }

    /// A short name for reports.
    pub(crate) fn name(self) -> &'static str {
        NAMED
            .iter()
            .find(|(isa, _)| *isa == self.0)
            .map_or("portable", |(_, name)| name)
    }

    /// Whether the level includes BMI2 (`pext`).
    pub(crate) fn has_bmi2(self) -> bool {
        self.0 >= Isa::Avx2
    }

    /// Whether `pext` is worth using: the level has it and the CPU runs it in hardware.
    pub(crate) fn has_fast_pext(self) -> bool {
        self.has_bmi2() && pext_in_hardware()
    }
}

/// Whether this CPU runs `pext` in hardware. AMD before Zen 3 (families 0x15 to 0x18:
/// Bulldozer to Zen 2, and Hygon's Zen) has BMI2 but runs `pext` in microcode, tens to
/// hundreds of cycles per instruction: a cliff on the EPYC Rome nodes many clusters run.
fn pext_in_hardware() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        static FAST: OnceLock<bool> = OnceLock::new();
        *FAST.get_or_init(|| {
            use std::arch::x86_64::__cpuid;
            // Leaves 0 (vendor) and 1 (family) exist on every x86-64 CPU.
            let (leaf0, leaf1) = (__cpuid(0), __cpuid(1));
            let mut vendor = [0u8; 12];
            for (i, r) in [leaf0.ebx, leaf0.edx, leaf0.ecx].iter().enumerate() {
                vendor[4 * i..4 * i + 4].copy_from_slice(&r.to_le_bytes());
            }
            !microcoded_pext(&vendor, family(leaf1.eax))
        })
    }
    #[cfg(not(target_arch = "x86_64"))]
    false
}

#[cfg(any(target_arch = "x86_64", test))]
/// The display family of a CPUID leaf 1 `eax` (base family, plus the extended family when the
/// base is 0xF).
fn family(eax: u32) -> u32 {
    let base = eax >> 8 & 0xF;
    match base {
        0xF => base + (eax >> 20 & 0xFF),
        _ => base,
    }
}

#[cfg(any(target_arch = "x86_64", test))]
/// Whether a CPU of this vendor and family runs `pext` in microcode.
fn microcoded_pext(vendor: &[u8; 12], family: u32) -> bool {
    matches!(vendor, b"AuthenticAMD" | b"HygonGenuine") && (0x15..=0x18).contains(&family)
}

/// The best available level at or below `cap` (the best of all without a cap).
fn best_up_to(cap: Option<&'static str>) -> Level {
    let limit = cap.map_or(Isa::Avx512, |name| {
        NAMED
            .iter()
            .find(|(_, n)| *n == name)
            .map_or(Isa::Avx512, |(isa, _)| *isa)
    });
    available_levels()
        .into_iter()
        .filter(|l| l.0 <= limit)
        .max()
        .unwrap_or(Level::PORTABLE)
}

/// The level named by `NQUEENS_ISA`: `Ok(None)` when it is unset or empty, `Err` with the
/// value when it names no level.
pub(crate) fn cap() -> Result<Option<&'static str>, String> {
    match std::env::var(CAP_VAR) {
        Err(std::env::VarError::NotPresent) => Ok(None),
        Err(std::env::VarError::NotUnicode(raw)) => Err(raw.to_string_lossy().into_owned()),
        Ok(value) => parse_cap(&value),
    }
}

/// Parses a cap's value (case-insensitive, surrounding blanks ignored).
fn parse_cap(value: &str) -> Result<Option<&'static str>, String> {
    let wanted = value.trim().to_ascii_lowercase();
    if wanted.is_empty() {
        return Ok(None);
    }
    LEVEL_NAMES
        .iter()
        .find(|&&name| name == wanted)
        .map(|&name| Some(name))
        .ok_or_else(|| value.to_string())
}

/// Every level the running CPU supports, lowest first (the portable one always). This and
/// [`Level::detect`] are the only places a level above portable is made.
pub(crate) fn available_levels() -> Vec<Level> {
    #[cfg_attr(not(target_arch = "x86_64"), allow(unused_mut))]
    let mut levels = vec![Level::PORTABLE];
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::is_x86_feature_detected as has;
        if has!("popcnt") {
            levels.push(Level(Isa::Popcnt));
            if has!("bmi2") && has!("avx2") {
                levels.push(Level(Isa::Avx2));
                if has!("avx512f") && has!("avx512bw") {
                    levels.push(Level(Isa::Avx512bw));
                    if has!("avx512vpopcntdq") {
                        levels.push(Level(Isa::Avx512));
                    }
                }
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
        pub(crate) fn $name(level: Level, $($arg: $ty),*) -> $ret {
            #[cfg(target_arch = "x86_64")]
            mod x86 {
                use super::*;
                #[target_feature(enable = "popcnt")]
                pub(super) fn popcnt($($arg: $ty),*) -> $ret { $body($($arg),*) }
                #[target_feature(enable = "avx2,popcnt")]
                pub(super) fn avx2($($arg: $ty),*) -> $ret { $body($($arg),*) }
                #[target_feature(enable = "avx512f,avx512bw,avx2,popcnt")]
                pub(super) fn avx512bw($($arg: $ty),*) -> $ret { $body($($arg),*) }
                #[target_feature(enable = "avx512f,avx512bw,avx512vpopcntdq,avx2,popcnt")]
                pub(super) fn avx512($($arg: $ty),*) -> $ret { $body($($arg),*) }
            }
            match level.0 {
                // SAFETY: a level above Portable is only ever constructed by
                // `available_levels`, after detecting the features it enables (the field of
                // `Level` is private to this module).
                #[cfg(target_arch = "x86_64")]
                Isa::Popcnt => unsafe { x86::popcnt($($arg),*) },
                #[cfg(target_arch = "x86_64")]
                Isa::Avx2 => unsafe { x86::avx2($($arg),*) },
                #[cfg(target_arch = "x86_64")]
                Isa::Avx512bw => unsafe { x86::avx512bw($($arg),*) },
                #[cfg(target_arch = "x86_64")]
                Isa::Avx512 => unsafe { x86::avx512($($arg),*) },
                _ => $body($($arg),*),
            }
        }
    };
}

/// Builds one block's tables (see [`kernels::build_block_generic`]); at AVX2 and above the
/// keys are bit-sliced by byte shuffles and `vpmovmskb` instead of a bit transpose.
#[inline]
pub(crate) fn build_block(level: Level, keys: &[u64], layout: &Layout, table: &mut [Lanes]) {
    // SAFETY: a level is only constructed after detecting the features it enables.
    #[cfg(target_arch = "x86_64")]
    unsafe {
        match level.0 {
            Isa::Avx2 => return x86::build_block_avx2(keys, layout, table),
            Isa::Avx512bw | Isa::Avx512 => return x86::build_block_avx512(keys, layout, table),
            Isa::Portable | Isa::Popcnt => {}
        }
    }
    build_block_portable(level, keys, layout, table)
}

dispatch! {
    /// The generic block build, for the levels below AVX2 (and the tests' reference).
    fn build_block_portable(keys: &[u64], layout: &Layout, table: &mut [Lanes]) -> () =
        kernels::build_block_generic;
}

dispatch! {
    /// Counts disjoint pairs directly (see [`kernels::count_direct_generic`]).
    fn count_direct(keys: &[u64], queries: &[u64]) -> u64 = kernels::count_direct_generic;
}

/// Counts disjoint pairs against one or two blocks (see
/// [`kernels::count_blocks_generic`]): hand-written at AVX2 and above, the generic loop
/// compiled for plain x86-64 (or the target) below.
///
/// # Safety
/// `tables` must hold one or two whole blocks of `per` entries, and every offset in `index`
/// that is read (rows `0..chunks`, columns `range`) must be that of an entry below `per`:
/// the hand-written paths read without bounds checks.
#[inline]
pub(crate) unsafe fn count_blocks(
    level: Level,
    tables: &[Lanes],
    per: usize,
    index: &[u32],
    stride: usize,
    range: std::ops::Range<usize>,
) -> u64 {
    // SAFETY: a level is only constructed after detecting the features it enables (the
    // field of `Level` is private to this module); the caller guarantees the bounds.
    #[cfg(target_arch = "x86_64")]
    unsafe {
        match level.0 {
            Isa::Avx2 => return x86::count_blocks_avx2(tables, per, index, stride, range),
            Isa::Avx512bw => return x86::count_blocks_avx512bw(tables, per, index, stride, range),
            Isa::Avx512 => return x86::count_blocks_avx512(tables, per, index, stride, range),
            // With POPCNT the generic loop moves every word out of the SSE registers to count
            // it, which is slower than SSE2's vectorised count.
            Isa::Portable | Isa::Popcnt => {}
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = level;
    kernels::count_blocks_generic(tables, per, index, stride, range)
}

/// Counts disjoint pairs of `queries` against one or two blocks sliced through
/// [`Layout::packed`]`(bits.mixed.count_ones())` (see [`kernels::count_packed_generic`]):
/// queries with a common bit are skipped, and each other query's table entries come from
/// its bits packed onto the mixed ones, so no index is written. Returns the pairs and the
/// queries counted. Panics unless `tables` holds one or two whole blocks of that layout.
#[inline]
pub(crate) fn count_packed(
    level: Level,
    tables: &[Lanes],
    per: usize,
    bits: LeafBits,
    queries: &[u64],
) -> (u64, u64) {
    assert!(tables.len() == per || tables.len() == 2 * per);
    assert_eq!(per, kernels::packed_per_block(bits.mixed.count_ones()));
    // SAFETY: a level is only constructed after detecting the features it enables (BMI2
    // from AVX2 up); the kernels check the table shape themselves.
    #[cfg(target_arch = "x86_64")]
    unsafe {
        match level.0 {
            Isa::Avx2 => return x86::count_packed_avx2(tables, per, bits, queries),
            Isa::Avx512bw => return x86::count_packed_avx512bw(tables, per, bits, queries),
            Isa::Avx512 => return x86::count_packed_avx512(tables, per, bits, queries),
            Isa::Portable | Isa::Popcnt => {}
        }
    }
    count_packed_portable(level, tables, per, bits, queries)
}

dispatch! {
    /// The generic packed count, below AVX2.
    fn count_packed_portable(
        tables: &[Lanes], per: usize, bits: LeafBits, queries: &[u64]
    ) -> (u64, u64) = kernels::count_packed_generic;
}

/// Writes the table entry offsets of `queries` (see [`Layout::index_generic`]).
#[inline]
pub(crate) fn index(
    level: Level,
    layout: &Layout,
    queries: &[u64],
    out: &mut [u32],
    stride: usize,
) {
    index_portable(level, layout, queries, out, stride)
}

/// Writes the table entry offsets of all `queries` to `index` (chunk-major, grown as needed
/// and never shrunk); returns the stride between chunks.
pub(crate) fn index_all(
    level: Level,
    layout: &Layout,
    queries: &[u64],
    index: &mut Vec<u32>,
) -> usize {
    let stride = queries.len().next_multiple_of(8);
    let need = stride * layout.chunks();
    // Every read position is written below; only grow, never clear.
    if index.len() < need {
        index.resize(need, 0);
    }
    self::index(level, layout, queries, index, stride);
    stride
}

dispatch! {
    /// The autovectorised query indexing.
    fn index_portable(
        layout: &Layout, queries: &[u64], out: &mut [u32], stride: usize
    ) -> () = Layout::index_generic;
}

/// How many of every `step`-th word of `words` have each bit outside `clear` (see
/// [`kernels::bit_counts_generic`]).
pub(crate) fn bit_counts(level: Level, words: &[u64], step: usize, clear: u64) -> [u32; 64] {
    // SAFETY: a level is only constructed after detecting the features it enables.
    #[cfg(target_arch = "x86_64")]
    if matches!(level.0, Isa::Avx512bw | Isa::Avx512) {
        return unsafe { x86::bit_counts_avx512bw(words, step, clear) };
    }
    let _ = level;
    kernels::bit_counts_generic(words, step, clear)
}

/// Moves the keys without any of `bits` to the front of `keys`, in order, and the others
/// after them, in order; returns how many are without. `ones` is scratch.
pub(crate) fn partition(level: Level, keys: &mut [u64], bits: u64, ones: &mut Vec<u64>) -> usize {
    // SAFETY: a level is only constructed after detecting the features it enables.
    #[cfg(target_arch = "x86_64")]
    unsafe {
        match level.0 {
            Isa::Avx2 => return x86::partition_avx2(keys, bits, ones),
            Isa::Avx512bw | Isa::Avx512 => return x86::partition_avx512(keys, bits, ones),
            Isa::Portable | Isa::Popcnt => {}
        }
    }
    let _ = level;
    ones.clear();
    kernels::partition_from(keys, bits, ones, (0, 0))
}

/// Replaces `zeros` by the words of `words` without any of `bits` and `ones` by the others,
/// each in order.
pub(crate) fn split(
    level: Level,
    words: &[u64],
    bits: u64,
    zeros: &mut Vec<u64>,
    ones: &mut Vec<u64>,
) {
    // SAFETY: a level is only constructed after detecting the features it enables.
    #[cfg(target_arch = "x86_64")]
    unsafe {
        match level.0 {
            Isa::Avx2 => return x86::split_avx2(words, bits, zeros, ones),
            Isa::Avx512bw | Isa::Avx512 => return x86::split_avx512(words, bits, zeros, ones),
            Isa::Portable | Isa::Popcnt => {}
        }
    }
    let _ = level;
    zeros.clear();
    ones.clear();
    kernels::split_from(words, bits, zeros, ones);
}

/// Appends `n | s | extra` for every pair of `north` × `south` with `n`, `s` and `forbid`
/// pairwise disjoint.
#[inline]
pub(crate) fn join(
    level: Level,
    north: &[u64],
    south: &[u64],
    forbid: u64,
    extra: u64,
    out: &mut Vec<u64>,
) {
    if north.is_empty() || south.is_empty() {
        return;
    }
    // The longer list goes inside, where the vector loop runs.
    let (outer, inner) = if north.len() <= south.len() {
        (north, south)
    } else {
        (south, north)
    };
    // SAFETY: a level is only constructed after detecting the features it enables.
    #[cfg(target_arch = "x86_64")]
    unsafe {
        match level.0 {
            Isa::Avx2 => return x86::join_avx2(outer, inner, forbid, extra, out),
            Isa::Avx512bw | Isa::Avx512 => {
                return x86::join_avx512(outer, inner, forbid, extra, out)
            }
            Isa::Portable | Isa::Popcnt => {}
        }
    }
    join_portable(level, outer, inner, forbid, extra, out)
}

dispatch! {
    /// The scalar, branch-free join, for the levels below AVX2 (and the tests' reference).
    fn join_portable(
        north: &[u64], south: &[u64], forbid: u64, extra: u64, out: &mut Vec<u64>
    ) -> () =
        kernels::join_generic;
}

/// Appends `keys` to `out` sorted by `pext(key, mask)` (a counting sort over `2^cuts`
/// values); returns each value's end position in `out`. Needs BMI2: only called at levels
/// that include it.
pub(crate) fn sort_pext(keys: &[u64], mask: u64, cuts: usize, out: &mut Vec<u64>) -> Vec<usize> {
    #[cfg(target_arch = "x86_64")]
    {
        assert!(std::arch::is_x86_feature_detected!("bmi2"));
        // SAFETY: BMI2 was just checked.
        unsafe { bmi2::sort_pext(keys, mask, cuts, out) }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (keys, mask, cuts, out);
        unreachable!("levels above Portable exist only on x86-64")
    }
}

/// Replaces each of `keys` by its bits under `mask`, packed to the low end (`pext`): in
/// hardware at the levels that include BMI2, bit by bit below them.
pub(crate) fn pack_bits(level: Level, keys: &mut [u64], mask: u64) {
    #[cfg(target_arch = "x86_64")]
    if level.has_bmi2() {
        assert!(std::arch::is_x86_feature_detected!("bmi2"));
        // SAFETY: BMI2 was just checked.
        return unsafe { bmi2::pack_bits(keys, mask) };
    }
    let _ = level;
    for k in keys {
        *k = kernels::pack_bits_generic(*k, mask);
    }
}

#[cfg(target_arch = "x86_64")]
mod bmi2 {
    use std::arch::x86_64::_pext_u64;

    /// See [`super::pack_bits`].
    #[target_feature(enable = "bmi2")]
    pub(super) fn pack_bits(keys: &mut [u64], mask: u64) {
        for k in keys {
            *k = _pext_u64(*k, mask);
        }
    }

    /// See [`super::sort_pext`].
    #[target_feature(enable = "bmi2")]
    pub(super) fn sort_pext(
        keys: &[u64],
        mask: u64,
        cuts: usize,
        out: &mut Vec<u64>,
    ) -> Vec<usize> {
        let base = out.len();
        let mut next = vec![0usize; 1 << cuts];
        for &k in keys {
            next[_pext_u64(k, mask) as usize] += 1;
        }
        let mut acc = base;
        for slot in next.iter_mut() {
            (acc, *slot) = (acc + *slot, acc);
        }
        out.resize(base + keys.len(), 0);
        for &k in keys {
            let b = _pext_u64(k, mask) as usize;
            out[next[b]] = k;
            next[b] += 1;
        }
        next
    }
}

#[cfg(test)]
mod tests;
