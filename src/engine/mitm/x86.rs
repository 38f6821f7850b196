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

use super::kernels::{count_blocks_generic, fill_tables, Lanes, Layout};

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
                for b in 0..B {
                    let t = base.add(b * per * ENTRY);
                    let mut acc = W::load(t.add(e[0]));
                    for &ej in &e[1..] {
                        acc = W::and(acc, W::load(t.add(ej)));
                    }
                    tally = W::tally(tally, acc);
                }
            }
            sums = W::fold(sums, tally);
        }
        start = stop;
    }
    // SAFETY: as above.
    unsafe { W::total(sums) }
}

/// Defines `$name`: [`super::simd::count_blocks`] for the `Wide` level `$wide`, compiled
/// with `$features`.
macro_rules! count_blocks_at {
    ($($name:ident: $wide:ty, $features:literal, $cpu:literal;)*) => {$(
        #[doc = concat!("[`super::simd::count_blocks`] at the ", stringify!($wide), " level.")]
        ///
        /// # Safety
        #[doc = concat!("The CPU has ", $cpu, "; the contract of [`super::simd::count_blocks`].")]
        #[target_feature(enable = $features)]
        pub(crate) unsafe fn $name(
            tables: &[Lanes],
            per: usize,
            index: &[u32],
            stride: usize,
            range: std::ops::Range<usize>,
        ) -> u64 {
            // SAFETY: forwarded.
            unsafe { count_blocks::<$wide>(tables, per, index, stride, range) }
        }
    )*};
}

count_blocks_at! {
    count_blocks_avx2: Avx2, "avx2,popcnt", "AVX2 and POPCNT";
    count_blocks_avx512bw: Avx512Bw, "avx512f,avx512bw,avx2,popcnt",
        "AVX-512F/BW, AVX2 and POPCNT";
    count_blocks_avx512: Avx512, "avx512f,avx512bw,avx512vpopcntdq,avx2,popcnt",
        "AVX-512F/BW/VPOPCNTDQ, AVX2 and POPCNT";
}

/// [`super::simd::build_block`] at the AVX2 level: the keys are bit-sliced 32 at a time by
/// a byte transpose (`vpshufb` and three rounds of unpacks) and one `vpmovmskb` per key bit,
/// instead of a 64×64 bit transpose. The keys come out in another order within each group of
/// 32 ([`slot_of`]), which the block's count does not see: every set of the block, `valid`
/// included, uses the same order.
///
/// # Safety
/// The CPU has AVX2 and POPCNT.
#[target_feature(enable = "avx2,popcnt")]
pub(crate) unsafe fn build_block_avx2(keys: &[u64], layout: &Layout, table: &mut [Lanes]) {
    // SAFETY: AVX2 is enabled.
    unsafe { build_block_sliced(keys, layout, table) }
}

/// [`build_block_avx2`] compiled for AVX-512, where the table fill ANDs whole zmm registers.
///
/// # Safety
/// The CPU has AVX-512F/BW, AVX2 and POPCNT.
#[target_feature(enable = "avx512f,avx512bw,avx2,popcnt")]
pub(crate) unsafe fn build_block_avx512(keys: &[u64], layout: &Layout, table: &mut [Lanes]) {
    // SAFETY: AVX2 is enabled.
    unsafe { build_block_sliced(keys, layout, table) }
}

/// The body of [`build_block_avx2`]; needs AVX2.
#[inline(always)]
unsafe fn build_block_sliced(keys: &[u64], layout: &Layout, table: &mut [Lanes]) {
    let mut slices = [Lanes::ZERO; 64];
    let mut valid = Lanes::ZERO;
    for (lane, group) in keys.chunks(64).enumerate() {
        let (low, high) = group.split_at(group.len().min(32));
        // SAFETY: AVX2 is enabled.
        let planes = unsafe { [byte_planes(low), byte_planes(high)] };
        for (byte, [mut a, mut b]) in (0..8).map(|b| (b, [planes[0][b], planes[1][b]])) {
            for bit in (0..8).rev() {
                // SAFETY: AVX2 is enabled (caller).
                let (ma, mb) = unsafe { (_mm256_movemask_epi8(a), _mm256_movemask_epi8(b)) };
                // Bit 7 of each byte is key bit 8·byte + bit; a key without it is in the set.
                let without = !(u64::from(ma as u32) | u64::from(mb as u32) << 32);
                slices[8 * byte + bit].0[lane] = without;
                // SAFETY: as above.
                unsafe { (a, b) = (_mm256_add_epi8(a, a), _mm256_add_epi8(b, b)) };
            }
        }
        valid.0[lane] = slots(low.len()) | slots(high.len()) << 32;
    }
    fill_tables(&slices, valid, layout, table);
}

/// Byte `b` of up to 32 keys (missing keys read as zero) in register `b`, key `k` at byte
/// [`slot_of`]`(k)`. Plain loops, no closures: a closure would not inherit the target
/// features, and its intrinsics would not inline.
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn byte_planes(keys: &[u64]) -> [__m256i; 8] {
    let mut padded = [0u64; 32];
    padded[..keys.len()].copy_from_slice(keys);
    // Within each 128-bit lane (two keys), byte b of both keys side by side.
    let pairs = _mm256_setr_epi8(
        0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15, //
        0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15,
    );
    let zero = _mm256_setzero_si256();
    let mut r = [zero; 8];
    for (i, v) in r.iter_mut().enumerate() {
        // SAFETY: reads padded[4i..4i + 4], inside the 32 words.
        let raw = unsafe { _mm256_loadu_si256(padded.as_ptr().add(4 * i) as *const __m256i) };
        *v = _mm256_shuffle_epi8(raw, pairs);
    }
    // Pairs of registers: 16-bit units → 32-bit units (bytes 0..4 low, 4..8 high).
    let mut s = [zero; 8];
    for i in 0..4 {
        s[2 * i] = _mm256_unpacklo_epi16(r[2 * i], r[2 * i + 1]);
        s[2 * i + 1] = _mm256_unpackhi_epi16(r[2 * i], r[2 * i + 1]);
    }
    // 32-bit units → 64-bit units: t[4g + 2h + x] holds bytes 4h + 2x and 4h + 2x + 1 of
    // register group g.
    let mut t = [zero; 8];
    for g in 0..2 {
        for h in 0..2 {
            let (a, b) = (s[4 * g + h], s[4 * g + 2 + h]);
            t[4 * g + 2 * h] = _mm256_unpacklo_epi32(a, b);
            t[4 * g + 2 * h + 1] = _mm256_unpackhi_epi32(a, b);
        }
    }
    // 64-bit units → whole lanes: byte b of all 32 keys.
    let mut planes = [zero; 8];
    for i in 0..4 {
        planes[2 * i] = _mm256_unpacklo_epi64(t[i], t[4 + i]);
        planes[2 * i + 1] = _mm256_unpackhi_epi64(t[i], t[4 + i]);
    }
    planes
}

/// Where [`byte_planes`] puts key `k` (< 32): the five bits of `k`, `g z y l x` from high to
/// low (`k = 4·register + 2·lane + x`, `register = 4g + 2z + y`), come out as `l g z y x`.
const fn slot_of(k: usize) -> usize {
    let (g, z, y, l, x) = (k >> 4 & 1, k >> 3 & 1, k >> 2 & 1, k >> 1 & 1, k & 1);
    l << 4 | g << 3 | z << 2 | y << 1 | x
}

/// The slots of the first `len` keys of a group of 32.
fn slots(len: usize) -> u64 {
    (0..len).fold(0, |m, k| m | 1 << slot_of(k))
}

/// For each 4-bit mask of kept 64-bit lanes, the `vpermd` indices that move the kept lanes,
/// in order, to the front (AVX2 has no compress instruction).
const COMPRESS: [[u32; 8]; 16] = compress_table();

/// Builds [`COMPRESS`].
const fn compress_table() -> [[u32; 8]; 16] {
    let mut table = [[0u32; 8]; 16];
    let mut mask = 0;
    while mask < 16 {
        let (mut out, mut lane) = (0, 0);
        while lane < 4 {
            if mask >> lane & 1 == 1 {
                table[mask][2 * out] = 2 * lane as u32;
                table[mask][2 * out + 1] = 2 * lane as u32 + 1;
                out += 1;
            }
            lane += 1;
        }
        mask += 1;
    }
    table
}

/// [`super::simd::join`] at the AVX2 level: four south words per step, the disjoint ones
/// moved to the front by a table-driven `vpermd` and stored whole; the output advances by
/// their number. The last one to three words take one masked step (the lists are short: a
/// few words a side is typical).
///
/// # Safety
/// The CPU has AVX2 and POPCNT.
#[target_feature(enable = "avx2,popcnt")]
pub(crate) unsafe fn join_avx2(
    outer: &[u64],
    inner: &[u64],
    forbid: u64,
    extra: u64,
    out: &mut Vec<u64>,
) {
    let m = inner.len();
    let tail = m % 4;
    // Lanes below `tail` of the last, partial step.
    let lanes = _mm256_cmpgt_epi64(
        _mm256_set1_epi64x(tail as i64),
        _mm256_setr_epi64x(0, 1, 2, 3),
    );
    for &n in outer.iter().filter(|&&n| n & forbid == 0) {
        out.reserve(m + 4);
        let base = out.len();
        let vn = _mm256_set1_epi64x((n | forbid) as i64);
        let vx = _mm256_set1_epi64x((n | extra) as i64);
        let (mut len, mut i) = (0usize, 0usize);
        // SAFETY: full loads read inner[i..i + 4] with i + 4 <= m, the masked one only the
        // lanes below m; each store writes 4 slots at base + len with len <= i < m, inside
        // the m + 4 reserved ones. Only the first `len` are kept.
        unsafe {
            let dst = out.as_mut_ptr().add(base);
            let src = inner.as_ptr();
            while i + 4 <= m {
                let s = _mm256_loadu_si256(src.add(i) as *const __m256i);
                let (words, kept) = pack4(s, vn, vx, 0b1111);
                _mm256_storeu_si256(dst.add(len) as *mut __m256i, words);
                len += kept;
                i += 4;
            }
            if tail != 0 {
                let s = _mm256_maskload_epi64(src.add(i) as *const i64, lanes);
                let (words, kept) = pack4(s, vn, vx, (1 << tail) - 1);
                _mm256_storeu_si256(dst.add(len) as *mut __m256i, words);
                len += kept;
            }
            out.set_len(base + len);
        }
    }
}

/// The four words `s` ORed with `vx`, those of the lanes `valid` (a 4-bit mask) that are
/// disjoint from `vn` moved to the front; and their number.
#[target_feature(enable = "avx2,popcnt")]
#[inline]
fn pack4(s: __m256i, vn: __m256i, vx: __m256i, valid: usize) -> (__m256i, usize) {
    let free = _mm256_cmpeq_epi64(_mm256_and_si256(vn, s), _mm256_setzero_si256());
    let kept = _mm256_movemask_pd(_mm256_castsi256_pd(free)) as usize & valid;
    // SAFETY: `kept` < 16 indexes the table; a row is 32 bytes.
    let perm = unsafe { _mm256_loadu_si256(COMPRESS[kept].as_ptr() as *const __m256i) };
    let words = _mm256_permutevar8x32_epi32(_mm256_or_si256(s, vx), perm);
    (words, kept.count_ones() as usize)
}

/// [`super::simd::join`] with AVX-512F: eight south words per step, the disjoint ones packed
/// by VPCOMPRESSQ.
///
/// # Safety
/// The CPU has AVX-512F and POPCNT.
#[target_feature(enable = "avx512f,popcnt")]
pub(crate) unsafe fn join_avx512(
    outer: &[u64],
    inner: &[u64],
    forbid: u64,
    extra: u64,
    out: &mut Vec<u64>,
) {
    let m = inner.len();
    let tail = (1u8 << (m % 8)).wrapping_sub(1);
    for &n in outer.iter().filter(|&&n| n & forbid == 0) {
        out.reserve(m + 8);
        let base = out.len();
        let vn = _mm512_set1_epi64((n | forbid) as i64);
        let vx = _mm512_set1_epi64((n | extra) as i64);
        let mut len = 0usize;
        let mut i = 0usize;
        // SAFETY: loads stay inside `inner` (full vectors below m, then a masked tail); each
        // store writes 8 slots at base + len with len <= i, inside the m + 8 reserved ones.
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_compress_table_moves_kept_lanes_to_the_front_in_order() {
        for (mask, row) in COMPRESS.iter().enumerate() {
            let kept: Vec<u32> = (0..4).filter(|l| mask >> l & 1 == 1).collect();
            for (slot, &lane) in kept.iter().enumerate() {
                assert_eq!(row[2 * slot..2 * slot + 2], [2 * lane, 2 * lane + 1]);
            }
        }
    }
}
