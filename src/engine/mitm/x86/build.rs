//! The block build at AVX2 and above: keys bit-sliced by byte shuffles and `vpmovmskb`.

use std::arch::x86_64::*;

use crate::engine::mitm::kernels::{fill_tables, Lanes, Layout};

/// [`super::super::simd::build_block`] at the AVX2 level: the keys are bit-sliced 32 at a time by a
/// byte transpose (`vpshufb` and three rounds of unpacks) and one `vpmovmskb` per key bit, instead
/// of a 64×64 bit transpose. The keys come out in another order within each group of 32
/// ([`slot_of`]), which the block's count does not see: every set of the block, `valid` included,
/// uses the same order.
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
    // Only the bytes that hold a chunk's bits are sliced: packed keys use half of them.
    let bytes = layout.bits().div_ceil(8) as usize;
    for (lane, group) in keys.chunks(64).enumerate() {
        let (low, high) = group.split_at(group.len().min(32));
        // SAFETY: AVX2 is enabled.
        let planes = unsafe { [byte_planes(low), byte_planes(high)] };
        for (byte, [mut a, mut b]) in (0..bytes).map(|b| (b, [planes[0][b], planes[1][b]])) {
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

/// [`super::super::simd::bit_counts`] with AVX-512BW: each word becomes a mask register, and
/// `vpmovm2b` turns it into 64 bytes of −1 or 0, subtracted from 64 byte counters (three
/// instructions a word), which are added up every 255 words before they could wrap.
///
/// # Safety
/// The CPU has AVX-512F/BW.
#[target_feature(enable = "avx512f,avx512bw")]
pub(crate) unsafe fn bit_counts_avx512bw(words: &[u64], step: usize, clear: u64) -> [u32; 64] {
    let mut counts = [0u32; 64];
    let mut words = words.iter().step_by(step).peekable();
    while words.peek().is_some() {
        let mut acc = _mm512_setzero_si512();
        for &w in words.by_ref().take(255) {
            acc = _mm512_sub_epi8(acc, _mm512_movm_epi8(w & !clear));
        }
        let mut bytes = [0u8; 64];
        // SAFETY: `bytes` holds 64 bytes.
        unsafe { _mm512_storeu_si512(bytes.as_mut_ptr() as *mut __m512i, acc) };
        for (c, b) in counts.iter_mut().zip(bytes) {
            *c += u32::from(b);
        }
    }
    counts
}
