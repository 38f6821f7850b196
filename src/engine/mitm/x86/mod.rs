//! Hand-written x86-64 loops for the matcher's two hot spots: the block count (each query
//! ANDs one table entry per chunk of a 512-key block and counts the ones) and the half join.
//!
//! The block count is written once, generic over [`Wide`]: how a level holds a 512-key set
//! (two ymm registers for AVX2, one zmm for AVX-512) and counts its ones (VPOPCNTQ lane counts
//! where the CPU has them; otherwise byte counts by a nibble lookup with `vpshufb`, added up
//! over several queries and folded into 64-bit sums with `vpsadbw` only before a byte could
//! overflow). The chunk count and the number of blocks are const generics, so the loop over
//! chunks is unrolled and reads no bounds. The levels below VPOPCNTQ thus share every line of
//! control flow with one another and with the AVX-512 path; only the five primitives differ.
//!
//! Everything here is `unsafe` and needs the CPU features of its level: [`super::simd`] calls
//! it only at a level that was detected on the running CPU.

use std::arch::x86_64::*;

use super::kernels::{
    count_blocks_generic, count_packed_generic, packed_chunks, packed_entry, packed_per_block,
    Lanes, LeafBits,
};

mod build;
mod join;

pub(crate) use build::{bit_counts_avx512bw, build_block_avx2, build_block_avx512};
pub(crate) use join::{
    join_avx2, join_avx512, partition_avx2, partition_avx512, split_avx2, split_avx512,
};

/// Bytes per table entry.
const ENTRY: usize = std::mem::size_of::<Lanes>();

/// A 512-key set in registers, and how one level counts its ones.
///
/// # Safety
/// Every method needs the CPU features of the implementing level: call them only from a
/// `#[target_feature]` function that enables those features, into which they inline.
pub(crate) trait Wide {
    /// The 512 bits.
    type Set: Copy;
    /// A running count of ones (bytes or 64-bit lanes, per level); also the register of
    /// 64-bit sums that tallies are folded into.
    type Tally: Copy;
    /// Sets that may be added to one tally before a lane could overflow.
    const FOLD: usize;
    /// Loads an entry from a 64-byte aligned address.
    unsafe fn load(p: *const u8) -> Self::Set;
    /// Bitwise AND.
    unsafe fn and(a: Self::Set, b: Self::Set) -> Self::Set;
    /// An empty tally (or empty sums).
    unsafe fn zero() -> Self::Tally;
    /// Adds the ones of `s` to `t`.
    unsafe fn tally(t: Self::Tally, s: Self::Set) -> Self::Tally;
    /// Adds a tally to the 64-bit sums.
    unsafe fn fold(sums: Self::Tally, t: Self::Tally) -> Self::Tally;
    /// The grand total of the sums.
    unsafe fn total(sums: Self::Tally) -> u64;
}

/// AVX2: two ymm per set, byte popcounts by nibble lookup.
pub(crate) enum Avx2 {}

/// AVX-512F/BW without VPOPCNTQ: one zmm per set, byte popcounts by nibble lookup.
pub(crate) enum Avx512Bw {}

/// AVX-512 with VPOPCNTQ: one zmm per set, 64-bit lane popcounts.
pub(crate) enum Avx512 {}

/// Ones per nibble value, for `vpshufb` (one copy per 128-bit lane).
const NIBBLE_ONES: [i8; 16] = [0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4];

/// The ones of each byte of `v` (0..=8 per byte).
#[inline(always)]
unsafe fn ones_per_byte_256(v: __m256i) -> __m256i {
    // SAFETY: AVX2 is enabled in every caller (see `Wide`).
    unsafe {
        let table = _mm256_loadu_si256([NIBBLE_ONES, NIBBLE_ONES].as_ptr() as *const __m256i);
        let low = _mm256_set1_epi8(0x0f);
        let lo = _mm256_and_si256(v, low);
        let hi = _mm256_and_si256(_mm256_srli_epi16::<4>(v), low);
        _mm256_add_epi8(
            _mm256_shuffle_epi8(table, lo),
            _mm256_shuffle_epi8(table, hi),
        )
    }
}

impl Wide for Avx2 {
    type Set = [__m256i; 2];
    type Tally = __m256i;
    // A set adds at most 16 per byte (8 from each half): 15 sets stay below 256.
    const FOLD: usize = 15;

    #[inline(always)]
    unsafe fn load(p: *const u8) -> Self::Set {
        // SAFETY: the caller passes a 64-byte aligned entry; AVX2 is enabled.
        unsafe {
            [
                _mm256_load_si256(p as *const __m256i),
                _mm256_load_si256(p.add(32) as *const __m256i),
            ]
        }
    }

    #[inline(always)]
    unsafe fn and(a: Self::Set, b: Self::Set) -> Self::Set {
        // SAFETY: AVX2 is enabled.
        unsafe { [_mm256_and_si256(a[0], b[0]), _mm256_and_si256(a[1], b[1])] }
    }

    #[inline(always)]
    unsafe fn zero() -> Self::Tally {
        // SAFETY: AVX2 is enabled.
        unsafe { _mm256_setzero_si256() }
    }

    #[inline(always)]
    unsafe fn tally(t: Self::Tally, s: Self::Set) -> Self::Tally {
        // SAFETY: AVX2 is enabled.
        unsafe {
            let both = _mm256_add_epi8(ones_per_byte_256(s[0]), ones_per_byte_256(s[1]));
            _mm256_add_epi8(t, both)
        }
    }

    #[inline(always)]
    unsafe fn fold(sums: Self::Tally, t: Self::Tally) -> Self::Tally {
        // SAFETY: AVX2 is enabled.
        unsafe { _mm256_add_epi64(sums, _mm256_sad_epu8(t, _mm256_setzero_si256())) }
    }

    #[inline(always)]
    unsafe fn total(sums: Self::Tally) -> u64 {
        // SAFETY: AVX2 is enabled.
        unsafe {
            let pair = _mm_add_epi64(
                _mm256_castsi256_si128(sums),
                _mm256_extracti128_si256::<1>(sums),
            );
            (_mm_cvtsi128_si64(pair) + _mm_extract_epi64::<1>(pair)) as u64
        }
    }
}

/// The methods of [`Wide`] that both AVX-512 levels share: a set is one zmm register, and so
/// are the tallies and sums.
macro_rules! zmm_sets {
    () => {
        #[inline(always)]
        unsafe fn load(p: *const u8) -> Self::Set {
            // SAFETY: the caller passes a 64-byte aligned entry; AVX-512F is enabled.
            unsafe { _mm512_load_si512(p as *const __m512i) }
        }

        #[inline(always)]
        unsafe fn and(a: Self::Set, b: Self::Set) -> Self::Set {
            // SAFETY: AVX-512F is enabled.
            unsafe { _mm512_and_si512(a, b) }
        }

        #[inline(always)]
        unsafe fn zero() -> Self::Tally {
            // SAFETY: AVX-512F is enabled.
            unsafe { _mm512_setzero_si512() }
        }

        #[inline(always)]
        unsafe fn total(sums: Self::Tally) -> u64 {
            // SAFETY: AVX-512F is enabled.
            unsafe { _mm512_reduce_add_epi64(sums) as u64 }
        }
    };
}

impl Wide for Avx512Bw {
    type Set = __m512i;
    type Tally = __m512i;
    // A set adds at most 8 per byte: 31 sets stay below 256.
    const FOLD: usize = 31;

    zmm_sets!();

    #[inline(always)]
    unsafe fn tally(t: Self::Tally, s: Self::Set) -> Self::Tally {
        // SAFETY: AVX-512F/BW are enabled.
        unsafe {
            let four = [NIBBLE_ONES; 4];
            let table = _mm512_loadu_si512(four.as_ptr() as *const __m512i);
            let low = _mm512_set1_epi8(0x0f);
            let lo = _mm512_and_si512(s, low);
            let hi = _mm512_and_si512(_mm512_srli_epi16::<4>(s), low);
            let ones = _mm512_add_epi8(
                _mm512_shuffle_epi8(table, lo),
                _mm512_shuffle_epi8(table, hi),
            );
            _mm512_add_epi8(t, ones)
        }
    }

    #[inline(always)]
    unsafe fn fold(sums: Self::Tally, t: Self::Tally) -> Self::Tally {
        // SAFETY: AVX-512F/BW are enabled.
        unsafe { _mm512_add_epi64(sums, _mm512_sad_epu8(t, _mm512_setzero_si512())) }
    }
}

impl Wide for Avx512 {
    type Set = __m512i;
    type Tally = __m512i;
    // 64-bit lanes: no fold is ever needed inside one call.
    const FOLD: usize = usize::MAX;

    zmm_sets!();

    #[inline(always)]
    unsafe fn tally(t: Self::Tally, s: Self::Set) -> Self::Tally {
        // SAFETY: AVX-512 VPOPCNTDQ is enabled.
        unsafe { _mm512_add_epi64(t, _mm512_popcnt_epi64(s)) }
    }

    #[inline(always)]
    unsafe fn fold(sums: Self::Tally, t: Self::Tally) -> Self::Tally {
        // SAFETY: AVX-512F is enabled.
        unsafe { _mm512_add_epi64(sums, t) }
    }
}

/// Counts disjoint pairs against one or two blocks: see [`super::simd::count_blocks`], whose
/// safety contract this shares (and the CPU features of `W`).
#[inline(always)]
unsafe fn count_blocks<W: Wide>(
    tables: &[Lanes],
    per: usize,
    index: &[u32],
    stride: usize,
    range: std::ops::Range<usize>,
) -> u64 {
    let two = tables.len() == 2 * per;
    let chunks = index.len() / stride.max(1);
    // Checked once per call, outside the loops: the loops read below `range.end` in each of
    // the `chunks` rows of the index, without bounds checks.
    assert!(range.end <= stride && chunks * stride <= index.len());
    debug_assert!(tables.len() == per || two);
    debug_assert!((0..chunks).all(|j| {
        index[j * stride..][range.clone()]
            .iter()
            .all(|&o| (o as usize) < per * ENTRY)
    }));
    macro_rules! by_chunks {
        ($($c:literal)*) => {
            match (chunks, two) {
                $(($c, false) => unsafe { count::<W, $c, 1>(tables, per, index, stride, range) },
                  ($c, true) => unsafe { count::<W, $c, 2>(tables, per, index, stride, range) },)*
                _ => count_blocks_generic(tables, per, index, stride, range),
            }
        };
    }
    by_chunks!(1 2 3 4 5 6 7 8 9 10 11 12)
}

/// [`count_blocks`] for `C` chunks and `B` blocks, the chunk loop unrolled.
#[inline(always)]
unsafe fn count<W: Wide, const C: usize, const B: usize>(
    tables: &[Lanes],
    per: usize,
    index: &[u32],
    stride: usize,
    range: std::ops::Range<usize>,
) -> u64 {
    let base = tables.as_ptr() as *const u8;
    // SAFETY: row j starts at j·stride and holds `stride` entries (checked by the caller).
    let rows: [*const u32; C] = std::array::from_fn(|j| unsafe { index.as_ptr().add(j * stride) });
    let step = (W::FOLD / B).max(1);
    // SAFETY: the features of `W` are enabled (caller).
    let mut sums = unsafe { W::zero() };
    let mut start = range.start;
    while start < range.end {
        let stop = range.end.min(start.saturating_add(step));
        // SAFETY: the features of `W` are enabled (caller); every offset read is that of an
        // entry below `per` (caller's contract), block b starts b·per entries in, and `Lanes`
        // is 64-byte aligned; i < range.end <= stride.
        unsafe {
            let mut tally = W::zero();
            for i in start..stop {
                let e: [usize; C] = std::array::from_fn(|j| *rows[j].add(i) as usize);
                tally = and_tally::<W, C, B>(tally, base, per, e);
            }
            sums = W::fold(sums, tally);
        }
        start = stop;
    }
    // SAFETY: as above.
    unsafe { W::total(sums) }
}

/// Adds to `tally`, for each of `B` blocks of `per` entries from `base`, the ones of the AND
/// of the entries at byte offsets `e` (one query's entries, one per chunk).
///
/// # Safety
/// The features of `W` are enabled; every offset lies in a block, and `base` is 64-byte
/// aligned and holds `B` blocks.
#[inline(always)]
unsafe fn and_tally<W: Wide, const C: usize, const B: usize>(
    mut tally: W::Tally,
    base: *const u8,
    per: usize,
    e: [usize; C],
) -> W::Tally {
    for b in 0..B {
        // SAFETY: the caller's contract.
        unsafe {
            let t = base.add(b * per * ENTRY);
            let mut acc = W::load(t.add(e[0]));
            for &ej in &e[1..] {
                acc = W::and(acc, W::load(t.add(ej)));
            }
            tally = W::tally(tally, acc);
        }
    }
    tally
}

/// Counts disjoint pairs of queries against one or two blocks of a packed layout: see
/// [`super::simd::count_packed`], whose contract this shares (and the CPU features of `W`,
/// with BMI2).
#[inline(always)]
unsafe fn count_packed<W: Wide>(
    tables: &[Lanes],
    per: usize,
    bits: LeafBits,
    queries: &[u64],
) -> (u64, u64) {
    let two = tables.len() == 2 * per;
    let width = bits.mixed.count_ones();
    // Checked once per call: every entry a query reads lies in its block.
    assert!(tables.len() == per || two);
    assert!(per == packed_per_block(width));
    macro_rules! by_chunks {
        ($($c:literal)*) => {
            match (packed_chunks(width), two) {
                $(($c, false) => unsafe { packed::<W, $c, 1>(tables, per, bits, queries) },
                  ($c, true) => unsafe { packed::<W, $c, 2>(tables, per, bits, queries) },)*
                _ => count_packed_generic(tables, per, bits, queries),
            }
        };
    }
    by_chunks!(1 2 3 4 5 6 7 8 9 10 11)
}

/// [`count_packed`] for `C` chunks and `B` blocks, the chunk loop unrolled.
#[inline(always)]
unsafe fn packed<W: Wide, const C: usize, const B: usize>(
    tables: &[Lanes],
    per: usize,
    LeafBits { mixed, common }: LeafBits,
    queries: &[u64],
) -> (u64, u64) {
    let base = tables.as_ptr() as *const u8;
    let step = (W::FOLD / B).max(1);
    let mut kept = 0u64;
    // The leaf's tables were written when the sieve was filled, long before, and are read
    // here in an order set by the queries' bits: asking for every line at once overlaps
    // their misses. Only where the queries read about as many lines as the tables hold: a
    // leaf that few queries reach would fetch mostly lines no query reads.
    let lines = if queries.len() * C >= per { B * per } else { 0 };
    for line in 0..lines {
        // SAFETY: `tables` holds `B` blocks of `per` entries of one line each.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(base.add(line * ENTRY) as *const i8) };
    }
    // SAFETY: the features of `W` are enabled (caller).
    let mut sums = unsafe { W::zero() };
    for group in queries.chunks(step) {
        // SAFETY: the features of `W` and BMI2 are enabled (caller); a query packed onto
        // `mixed` has only the layout's bits, so it reads entries below `per` in each chunk
        // (checked by the caller: `per` is the packed layout's), block b starts b·per entries
        // in, and `Lanes` is 64-byte aligned.
        unsafe {
            let mut tally = W::zero();
            for &q in group {
                // Rare (a few percent of the queries that reach a leaf): a branch that is
                // almost always predicted costs less than a pass that drops them first.
                if q & common != 0 {
                    continue;
                }
                kept += 1;
                let q = _pext_u64(q, mixed);
                let e: [usize; C] = std::array::from_fn(|j| packed_entry(q, j) * ENTRY);
                tally = and_tally::<W, C, B>(tally, base, per, e);
            }
            sums = W::fold(sums, tally);
        }
    }
    // SAFETY: as above.
    (unsafe { W::total(sums) }, kept)
}

/// Defines, for each `$name: $wide, $features, $cpu`, [`super::simd`]'s `$kernel` at the
/// `Wide` level `$wide`, compiled with `$features` (one `at_level!` each).
macro_rules! at_levels {
    ($kernel:ident $sig:tt -> $ret:ty; $($name:ident: $wide:ty, $features:literal, $cpu:literal;)*) => {
        $(at_level!($kernel $sig -> $ret; $name: $wide, $features, $cpu);)*
    };
}

/// One function of [`at_levels!`].
macro_rules! at_level {
    ($kernel:ident ($($arg:ident: $ty:ty),*) -> $ret:ty;
     $name:ident: $wide:ty, $features:literal, $cpu:literal) => {
        #[doc = concat!("[`super::simd::", stringify!($kernel), "`] at the ", stringify!($wide), " level.")]
        ///
        /// # Safety
        #[doc = concat!("The CPU has ", $cpu, "; the contract of [`super::simd::", stringify!($kernel), "`].")]
        #[target_feature(enable = $features)]
        pub(crate) unsafe fn $name($($arg: $ty),*) -> $ret {
            // SAFETY: forwarded.
            unsafe { $kernel::<$wide>($($arg),*) }
        }
    };
}

at_levels! {
    count_blocks(
        tables: &[Lanes], per: usize, index: &[u32], stride: usize, range: std::ops::Range<usize>
    ) -> u64;
    count_blocks_avx2: Avx2, "avx2,popcnt", "AVX2 and POPCNT";
    count_blocks_avx512bw: Avx512Bw, "avx512f,avx512bw,avx2,popcnt",
        "AVX-512F/BW, AVX2 and POPCNT";
    count_blocks_avx512: Avx512, "avx512f,avx512bw,avx512vpopcntdq,avx2,popcnt",
        "AVX-512F/BW/VPOPCNTDQ, AVX2 and POPCNT";
}

at_levels! {
    count_packed(tables: &[Lanes], per: usize, bits: LeafBits, queries: &[u64]) -> (u64, u64);
    count_packed_avx2: Avx2, "avx2,bmi2,popcnt", "AVX2, BMI2 and POPCNT";
    count_packed_avx512bw: Avx512Bw, "avx512f,avx512bw,avx2,bmi2,popcnt",
        "AVX-512F/BW, AVX2, BMI2 and POPCNT";
    count_packed_avx512: Avx512, "avx512f,avx512bw,avx512vpopcntdq,avx2,bmi2,popcnt",
        "AVX-512F/BW/VPOPCNTDQ, AVX2, BMI2 and POPCNT";
}
