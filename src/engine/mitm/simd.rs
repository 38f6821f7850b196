//! Run-time CPU dispatch for the matcher's inner loops.
//!
//! The loops in [`super::kernels`] are written once, generic and `#[inline(always)]`; here each
//! is instantiated inside functions compiled for a CPU level (`#[target_feature]`), and the
//! best level the running CPU supports is picked once. POPCNT matters most (about 3× on the
//! published program); wider vectors help the block loops.

use super::kernels::{self, Lanes, Layout};
use std::sync::OnceLock;

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
    /// x86-64 with AVX-512F/BW, VPOPCNTQ and BMI2.
    Avx512,
}

impl Level {
    /// Plain Rust, on any CPU.
    pub(crate) const PORTABLE: Level = Level(Isa::Portable);

    /// The best level this CPU supports (detected once).
    pub(crate) fn detect() -> Level {
        static BEST: OnceLock<Level> = OnceLock::new();
        *BEST.get_or_init(|| {
            available_levels()
                .into_iter()
                .max()
                .unwrap_or(Level::PORTABLE)
        })
    }

    /// A short name for reports.
    pub(crate) fn name(self) -> &'static str {
        match self.0 {
            Isa::Portable => "portable",
            Isa::Popcnt => "popcnt",
            Isa::Avx2 => "avx2",
            Isa::Avx512 => "avx512",
        }
    }

    /// Whether the level includes BMI2 (`pext`).
    pub(crate) fn has_bmi2(self) -> bool {
        self.0 >= Isa::Avx2
    }
}

/// Every level the running CPU supports, lowest first (the portable one always). This and
/// [`Level::detect`] are the only places a level above portable is made.
pub(crate) fn available_levels() -> Vec<Level> {
    let mut levels = vec![Level::PORTABLE];
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("popcnt") {
            levels.push(Level(Isa::Popcnt));
            let bmi2 = std::arch::is_x86_feature_detected!("bmi2");
            if bmi2 && std::arch::is_x86_feature_detected!("avx2") {
                levels.push(Level(Isa::Avx2));
            }
            if bmi2
                && std::arch::is_x86_feature_detected!("avx512f")
                && std::arch::is_x86_feature_detected!("avx512bw")
                && std::arch::is_x86_feature_detected!("avx512vpopcntdq")
            {
                levels.push(Level(Isa::Avx512));
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
                Isa::Avx512 => unsafe { x86::avx512($($arg),*) },
                _ => $body($($arg),*),
            }
        }
    };
}

dispatch! {
    /// Builds one block's tables (see [`kernels::build_block_generic`]).
    fn build_block(keys: &[u64], layout: &Layout, table: &mut [Lanes]) -> () =
        kernels::build_block_generic;
}

dispatch! {
    /// Counts disjoint pairs directly (see [`kernels::count_direct_generic`]).
    fn count_direct(keys: &[u64], queries: &[u64]) -> u64 = kernels::count_direct_generic;
}

/// Counts disjoint pairs against one or two blocks (see
/// [`kernels::count_blocks_generic`]).
///
/// # Safety
/// `tables` must hold one or two whole blocks of `per` entries, and every offset in `index`
/// must be that of an entry below `per` (the AVX-512 path reads without bounds checks).
#[inline]
pub(crate) unsafe fn count_blocks(
    level: Level,
    tables: &[Lanes],
    per: usize,
    index: &[u32],
    stride: usize,
    range: std::ops::Range<usize>,
) -> u64 {
    #[cfg(target_arch = "x86_64")]
    if level.0 == Isa::Avx512 {
        // SAFETY: an AVX-512 level is only constructed after detecting its features; the
        // caller guarantees the bounds.
        return unsafe { avx512::count_blocks(tables, per, index, stride, range) };
    }
    count_blocks_portable(level, tables, per, index, stride, range)
}

dispatch! {
    /// The autovectorised block count, for levels below AVX-512.
    fn count_blocks_portable(
        tables: &[Lanes], per: usize, index: &[u32], stride: usize, range: std::ops::Range<usize>
    ) -> u64 = kernels::count_blocks_generic;
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
    #[cfg(target_arch = "x86_64")]
    if level.0 == Isa::Avx512 {
        // SAFETY: an AVX-512 level is only constructed after detecting its features.
        return unsafe { avx512::join(outer, inner, forbid, extra, out) };
    }
    join_portable(level, outer, inner, forbid, extra, out)
}

dispatch! {
    /// The scalar, branch-free join, for levels below AVX-512.
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

#[cfg(target_arch = "x86_64")]
mod bmi2 {
    use std::arch::x86_64::_pext_u64;

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

/// Hand-written AVX-512 loops: one zmm per 512-key set, VPOPCNTQ lane counters reduced once
/// per block, and VPCOMPRESSQ for the join.
#[cfg(target_arch = "x86_64")]
mod avx512 {
    use super::super::kernels::Lanes;
    use std::arch::x86_64::*;

    /// See [`super::count_blocks`]; the same safety contract.
    #[target_feature(enable = "avx512f,avx512bw,avx512vpopcntdq,popcnt")]
    pub(super) unsafe fn count_blocks(
        tables: &[Lanes],
        per: usize,
        index: &[u32],
        stride: usize,
        range: std::ops::Range<usize>,
    ) -> u64 {
        let two = tables.len() == 2 * per;
        let chunks = index.len() / stride.max(1);
        assert!(range.end <= stride);
        // SAFETY: forwarded from the caller.
        unsafe {
            macro_rules! by_chunks {
                ($($c:literal)*) => {
                    match (chunks, two) {
                        $(($c, false) => count::<$c, 1>(tables, per, index, stride, range),
                          ($c, true) => count::<$c, 2>(tables, per, index, stride, range),)*
                        _ => super::super::kernels::count_blocks_generic(
                            tables, per, index, stride, range),
                    }
                };
            }
            by_chunks!(1 2 3 4 5 6 7 8 9 10)
        }
    }

    /// [`count_blocks`] for `C` chunks and `B` blocks, fully unrolled.
    #[target_feature(enable = "avx512f,avx512bw,avx512vpopcntdq,popcnt")]
    unsafe fn count<const C: usize, const B: usize>(
        tables: &[Lanes],
        per: usize,
        index: &[u32],
        stride: usize,
        range: std::ops::Range<usize>,
    ) -> u64 {
        let base = tables.as_ptr() as *const u8;
        let rows: [&[u32]; C] = std::array::from_fn(|j| &index[j * stride..][..stride]);
        let mut sums = [_mm512_setzero_si512(); B];
        for i in range {
            let e: [usize; C] = std::array::from_fn(|j| rows[j][i] as usize);
            for (b, sum) in sums.iter_mut().enumerate() {
                // SAFETY: block b starts at b·per entries, each offset is that of an entry
                // below `per` (caller's contract); Lanes is 64-byte aligned.
                unsafe {
                    let t = base.add(b * per * 64);
                    let at = |o: usize| _mm512_load_si512(t.add(o) as *const __m512i);
                    let mut acc = at(e[0]);
                    for &ej in &e[1..] {
                        acc = _mm512_and_si512(acc, at(ej));
                    }
                    *sum = _mm512_add_epi64(*sum, _mm512_popcnt_epi64(acc));
                }
            }
        }
        let total = sums
            .iter()
            .fold(_mm512_setzero_si512(), |a, &s| _mm512_add_epi64(a, s));
        _mm512_reduce_add_epi64(total) as u64
    }

    /// See [`super::join`].
    #[target_feature(enable = "avx512f,popcnt")]
    pub(super) fn join(outer: &[u64], inner: &[u64], forbid: u64, extra: u64, out: &mut Vec<u64>) {
        let m = inner.len();
        let tail = (1u8 << (m % 8)).wrapping_sub(1);
        for &n in outer.iter().filter(|&&n| n & forbid == 0) {
            out.reserve(m + 8);
            let base = out.len();
            let vn = _mm512_set1_epi64((n | forbid) as i64);
            let vx = _mm512_set1_epi64((n | extra) as i64);
            let mut len = 0usize;
            let mut i = 0usize;
            // SAFETY: loads stay inside `inner` (full vectors below m, then a masked tail);
            // each store writes 8 slots at base + len with len <= i, inside the m + 8
            // reserved ones.
            unsafe {
                let dst = out.as_mut_ptr().add(base);
                while i + 8 <= m {
                    let s = _mm512_loadu_si512(inner.as_ptr().add(i) as *const __m512i);
                    let k = _mm512_testn_epi64_mask(vn, s);
                    let r = _mm512_maskz_compress_epi64(k, _mm512_or_si512(s, vx));
                    _mm512_storeu_si512(dst.add(len) as *mut __m512i, r);
                    len += k.count_ones() as usize;
                    i += 8;
                }
                if tail != 0 {
                    let s = _mm512_maskz_loadu_epi64(tail, inner.as_ptr().add(i) as *const i64);
                    let k = _mm512_testn_epi64_mask(vn, s) & tail;
                    let r = _mm512_maskz_compress_epi64(k, _mm512_or_si512(s, vx));
                    _mm512_storeu_si512(dst.add(len) as *mut __m512i, r);
                    len += k.count_ones() as usize;
                }
                out.set_len(base + len);
            }
        }
    }
}
