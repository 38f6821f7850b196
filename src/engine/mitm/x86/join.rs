//! The half join and the trie's partition at AVX2 and AVX-512: several words per step, the
//! disjoint ones packed to the front.

use std::arch::x86_64::*;

use crate::engine::mitm::kernels::{partition_from, split_from};

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

/// [`super::super::simd::join`] at the AVX2 level: four south words per step, the disjoint ones
/// moved to the front by a table-driven `vpermd` and stored whole; the output advances by their
/// number. The last one to three words take one masked step (the lists are short: a few words a
/// side is typical).
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

/// [`super::super::simd::join`] with AVX-512F: eight south words per step, the disjoint ones packed
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

/// The whole steps of four words of `src[..n]`: those without `bits` stored in order from
/// `zeros`, the others from `ones`, each store writing four slots of which only the counted
/// ones are kept. Returns the counts written to each side and the words read.
///
/// # Safety
/// The CPU has AVX2 and POPCNT; `src` holds `n` words; `ones` has room for `n + 4`, and so
/// has `zeros`, unless it is `src` itself (every store then lands on slots already read).
#[target_feature(enable = "avx2,popcnt")]
unsafe fn split_steps_avx2(
    src: *const u64,
    n: usize,
    bits: u64,
    (zeros, ones): (*mut u64, *mut u64),
) -> (usize, usize, usize) {
    let vb = _mm256_set1_epi64x(bits as i64);
    let (mut z, mut o, mut i) = (0usize, 0usize, 0usize);
    // SAFETY: loads read src[i..i + 4] with i + 4 <= n; stores write 4 slots at z <= i and
    // o <= i (the caller's contract).
    unsafe {
        while i + 4 <= n {
            let s = _mm256_loadu_si256(src.add(i) as *const __m256i);
            let free = _mm256_cmpeq_epi64(_mm256_and_si256(vb, s), _mm256_setzero_si256());
            let kept = _mm256_movemask_pd(_mm256_castsi256_pd(free)) as usize;
            let front = _mm256_loadu_si256(COMPRESS[kept].as_ptr() as *const __m256i);
            let back = _mm256_loadu_si256(COMPRESS[kept ^ 15].as_ptr() as *const __m256i);
            let (k, w) = (
                _mm256_permutevar8x32_epi32(s, front),
                _mm256_permutevar8x32_epi32(s, back),
            );
            _mm256_storeu_si256(zeros.add(z) as *mut __m256i, k);
            _mm256_storeu_si256(ones.add(o) as *mut __m256i, w);
            z += kept.count_ones() as usize;
            o += 4 - kept.count_ones() as usize;
            i += 4;
        }
    }
    (z, o, i)
}

/// [`split_steps_avx2`] with AVX-512F: eight words per step, each side packed by VPCOMPRESSQ.
///
/// # Safety
/// As [`split_steps_avx2`], with AVX-512F and room for `n + 8`.
#[target_feature(enable = "avx512f,popcnt")]
unsafe fn split_steps_avx512(
    src: *const u64,
    n: usize,
    bits: u64,
    (zeros, ones): (*mut u64, *mut u64),
) -> (usize, usize, usize) {
    let vb = _mm512_set1_epi64(bits as i64);
    let (mut z, mut o, mut i) = (0usize, 0usize, 0usize);
    // SAFETY: as in `split_steps_avx2`, eight slots at a time.
    unsafe {
        while i + 8 <= n {
            let s = _mm512_loadu_si512(src.add(i) as *const __m512i);
            let k = _mm512_testn_epi64_mask(vb, s);
            _mm512_storeu_si512(
                zeros.add(z) as *mut __m512i,
                _mm512_maskz_compress_epi64(k, s),
            );
            _mm512_storeu_si512(
                ones.add(o) as *mut __m512i,
                _mm512_maskz_compress_epi64(!k, s),
            );
            z += k.count_ones() as usize;
            o += 8 - k.count_ones() as usize;
            i += 8;
        }
    }
    (z, o, i)
}

/// [`super::super::simd::partition`] at the AVX2 level: four keys per step, the keys without
/// `bits` compacted in place, the others through `ones`.
///
/// # Safety
/// The CPU has AVX2 and POPCNT.
#[target_feature(enable = "avx2,popcnt")]
pub(crate) unsafe fn partition_avx2(keys: &mut [u64], bits: u64, ones: &mut Vec<u64>) -> usize {
    let n = keys.len();
    ones.clear();
    ones.reserve(n + 4);
    let src = keys.as_mut_ptr();
    // SAFETY: the kept keys are stored over `keys` itself, on slots already read; `ones`
    // has room for n + 4.
    let (zeros, set, i) = unsafe { split_steps_avx2(src, n, bits, (src, ones.as_mut_ptr())) };
    // SAFETY: the first `set` slots of `ones` were written.
    unsafe { ones.set_len(set) };
    partition_from(keys, bits, ones, (zeros, i))
}

/// [`super::super::simd::partition`] with AVX-512F: eight keys per step.
///
/// # Safety
/// The CPU has AVX-512F and POPCNT.
#[target_feature(enable = "avx512f,popcnt")]
pub(crate) unsafe fn partition_avx512(keys: &mut [u64], bits: u64, ones: &mut Vec<u64>) -> usize {
    let n = keys.len();
    ones.clear();
    ones.reserve(n + 8);
    let src = keys.as_mut_ptr();
    // SAFETY: as in `partition_avx2`, with room for n + 8.
    let (zeros, set, i) = unsafe { split_steps_avx512(src, n, bits, (src, ones.as_mut_ptr())) };
    // SAFETY: the first `set` slots of `ones` were written.
    unsafe { ones.set_len(set) };
    partition_from(keys, bits, ones, (zeros, i))
}

/// [`super::super::simd::split`] at the AVX2 level: four words per step.
///
/// # Safety
/// The CPU has AVX2 and POPCNT.
#[target_feature(enable = "avx2,popcnt")]
pub(crate) unsafe fn split_avx2(
    words: &[u64],
    bits: u64,
    zeros: &mut Vec<u64>,
    ones: &mut Vec<u64>,
) {
    let n = words.len();
    zeros.clear();
    ones.clear();
    zeros.reserve(n + 4);
    ones.reserve(n + 4);
    let out = (zeros.as_mut_ptr(), ones.as_mut_ptr());
    // SAFETY: `words` holds n words; both outputs have room for n + 4.
    let (z, o, i) = unsafe { split_steps_avx2(words.as_ptr(), n, bits, out) };
    // SAFETY: the first z and o slots were written.
    unsafe {
        zeros.set_len(z);
        ones.set_len(o);
    }
    split_from(&words[i..], bits, zeros, ones);
}

/// [`super::super::simd::split`] with AVX-512F: eight words per step.
///
/// # Safety
/// The CPU has AVX-512F and POPCNT.
#[target_feature(enable = "avx512f,popcnt")]
pub(crate) unsafe fn split_avx512(
    words: &[u64],
    bits: u64,
    zeros: &mut Vec<u64>,
    ones: &mut Vec<u64>,
) {
    let n = words.len();
    zeros.clear();
    ones.clear();
    zeros.reserve(n + 8);
    ones.reserve(n + 8);
    let out = (zeros.as_mut_ptr(), ones.as_mut_ptr());
    // SAFETY: `words` holds n words; both outputs have room for n + 8.
    let (z, o, i) = unsafe { split_steps_avx512(words.as_ptr(), n, bits, out) };
    // SAFETY: the first z and o slots were written.
    unsafe {
        zeros.set_len(z);
        ones.set_len(o);
    }
    split_from(&words[i..], bits, zeros, ones);
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
