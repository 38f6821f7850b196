//! The matcher's inner loops, written once and generic: the block tables, the block count,
//! the direct count, the query indexing and the half join.
//!
//! Everything here is `#[inline(always)]` and safe; [`super::simd`] instantiates each loop
//! per CPU level and picks the level at run time, and [`super::matcher`], [`super::bucket`]
//! and [`super::half`] call the dispatched versions. This module depends on nothing else in
//! the engine, so the dispatch layer sits on top of it.

/// Keys per block.
pub(crate) const BLOCK: usize = 512;

/// What a sieve did since its counters were last taken: always counted, at a cost of a few
/// additions per block or per call, far from the per-pair loops.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Visits {
    /// Blocks bit-sliced.
    pub built: u64,
    /// (query, block) pairs counted.
    pub blocks: u64,
    /// (query, key) pairs compared one by one.
    pub direct: u64,
    /// Queries routed or filtered by a test of their bits.
    pub routing: u64,
}

/// 512 bits: one bit per key of a block.
#[repr(C, align(64))]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Lanes(pub [u64; 8]);

impl Lanes {
    /// All 512 bits set.
    pub(crate) const ONES: Lanes = Lanes([!0; 8]);
    /// No bit set.
    pub(crate) const ZERO: Lanes = Lanes([0; 8]);
}

/// Where each chunk of a key sits: chunk `j` is `(key >> shift[j]) & mask[j]`, and its
/// `mask[j] + 1` table entries start at `offset[j]` within a block.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Layout {
    /// Right shift of each chunk.
    pub shift: Vec<u32>,
    /// Mask of each chunk after the shift.
    pub mask: Vec<u64>,
    /// First table entry of each chunk.
    pub offset: Vec<usize>,
    /// Table entries per block.
    pub per_block: usize,
}

impl Layout {
    /// Chunks of at most `k` usable bits (as even as possible) over the low `bits` key bits;
    /// a chunk widens over the `holes` (bits no stored key has), which then cost nothing per
    /// query.
    pub(crate) fn new(bits: u32, holes: u64, k: u32) -> Self {
        let usable = (0..bits).filter(|p| holes >> p & 1 == 0).count() as u32;
        let chunks = usable.div_ceil(k).max(1);
        let mut layout = Layout::default();
        let mut p = 0;
        for j in 0..chunks {
            // The first `usable % chunks` chunks take one bit more.
            let want = usable / chunks + u32::from(j < usable % chunks);
            let mut width = 0;
            let mut used = 0;
            while p + width < bits && (used < want || holes >> (p + width) & 1 == 1) {
                used += u32::from(holes >> (p + width) & 1 == 0);
                width += 1;
            }
            layout.shift.push(p);
            layout.mask.push((1u64 << width) - 1);
            layout.offset.push(layout.per_block);
            layout.per_block += 1 << width;
            p += width;
        }
        layout
    }

    /// The layout of keys packed onto `bits` low bits (see [`count_packed_generic`]):
    /// chunk `j` is bits `PACKED_BITS·j ..` of the key, its entries start at
    /// `PACKED_ENTRIES·j`, and only the last chunk may be narrower.
    pub(crate) fn packed(bits: u32) -> Self {
        let chunks = packed_chunks(bits);
        let mut layout = Layout::default();
        for j in 0..chunks as u32 {
            let width = (bits - (PACKED_BITS * j).min(bits)).min(PACKED_BITS);
            layout.shift.push(PACKED_BITS * j);
            layout.mask.push((1u64 << width) - 1);
            layout.offset.push(layout.per_block);
            layout.per_block += 1 << width;
        }
        layout
    }

    /// The number of chunks.
    pub(crate) fn chunks(&self) -> usize {
        self.shift.len()
    }

    /// The key bits the chunks cover: every bit a table reads is below this (the vector
    /// block builds slice no byte above it).
    #[cfg(target_arch = "x86_64")]
    pub(crate) fn bits(&self) -> u32 {
        let last = self.chunks().saturating_sub(1);
        self.shift
            .get(last)
            .map_or(0, |s| s + self.mask[last].count_ones())
    }

    /// Writes the byte offset (within a block) of each query's table entry in every chunk:
    /// entry `j` of query `i` goes to `out[j * stride + i]`.
    #[inline(always)]
    pub(crate) fn index_generic(&self, queries: &[u64], out: &mut [u32], stride: usize) {
        for j in 0..self.chunks() {
            let (shift, mask, offset) = (self.shift[j], self.mask[j], self.offset[j] as u64);
            let row = &mut out[j * stride..][..queries.len()];
            for (o, &q) in row.iter_mut().zip(queries) {
                *o = ((((q >> shift) & mask) + offset) * LANES_BYTES) as u32;
            }
        }
    }
}

/// The bits of `key` under `mask`, packed to the low end (a portable `pext`).
#[inline(always)]
pub(crate) fn pack_bits_generic(key: u64, mask: u64) -> u64 {
    let (mut out, mut m, mut i) = (0, mask, 0);
    while m != 0 {
        out |= (key >> m.trailing_zeros() & 1) << i;
        m &= m - 1;
        i += 1;
    }
    out
}

/// Bytes per table entry.
const LANES_BYTES: u64 = 64;

/// Key bits per chunk of a packed layout ([`Layout::packed`]).
pub(crate) const PACKED_BITS: u32 = 6;

/// Table entries of a whole chunk of a packed layout.
pub(crate) const PACKED_ENTRIES: usize = 1 << PACKED_BITS;

/// Chunks of a packed layout of `bits` bits (at least one).
pub(crate) fn packed_chunks(bits: u32) -> usize {
    bits.div_ceil(PACKED_BITS).max(1) as usize
}

/// Table entries per block of [`Layout::packed`]`(bits)`, without building the layout.
pub(crate) fn packed_per_block(bits: u32) -> usize {
    let whole = packed_chunks(bits) - 1;
    PACKED_ENTRIES * whole + (1 << (bits - PACKED_BITS * whole as u32))
}

/// The table entry of chunk `j` for a packed query `q` (whose bits above the layout's are
/// clear).
#[inline(always)]
pub(crate) fn packed_entry(q: u64, j: usize) -> usize {
    (q >> (PACKED_BITS as usize * j)) as usize % PACKED_ENTRIES + PACKED_ENTRIES * j
}

/// Transposes a 64×64 bit matrix in place: afterwards bit `i` of row `p` is what bit `p` of
/// row `i` was.
#[inline(always)]
pub(crate) fn transpose64(m: &mut [u64; 64]) {
    let mut j = 32usize;
    let mut mask = 0x0000_0000_FFFF_FFFFu64;
    while j != 0 {
        let mut k = 0usize;
        while k < 64 {
            let t = ((m[k] >> j) ^ m[k + j]) & mask;
            m[k] ^= t << j;
            m[k + j] ^= t;
            k = (k + j + 1) & !j;
        }
        j >>= 1;
        mask ^= mask << j;
    }
}

/// How many of every `step`-th word of `words` have each bit outside `clear`: 64 words at a
/// time are transposed, so that one popcount counts a bit over all of them (about 8 times
/// fewer operations than a loop over every word's set bits).
#[inline(always)]
pub(crate) fn bit_counts_generic(words: &[u64], step: usize, clear: u64) -> [u32; 64] {
    let mut counts = [0u32; 64];
    let mut m = [0u64; 64];
    let mut filled = 0;
    let mut add = |m: &mut [u64; 64]| {
        transpose64(m);
        for (c, row) in counts.iter_mut().zip(m.iter()) {
            *c += row.count_ones();
        }
    };
    for &w in words.iter().step_by(step) {
        m[filled] = w & !clear;
        filled += 1;
        if filled == 64 {
            add(&mut m);
            filled = 0;
        }
    }
    if filled > 0 {
        m[filled..].fill(0);
        add(&mut m);
    }
    counts
}

/// Builds one block's tables from up to 512 keys, generic over the inlined CPU level.
#[inline(always)]
pub(crate) fn build_block_generic(keys: &[u64], layout: &Layout, table: &mut [Lanes]) {
    let mut slices = [Lanes::ZERO; 64];
    let mut valid = Lanes::ZERO;
    for (lane, group) in keys.chunks(64).enumerate() {
        let mut m = [!0u64; 64];
        for (row, &key) in m.iter_mut().zip(group) {
            *row = !key;
        }
        transpose64(&mut m);
        for (slice, row) in slices.iter_mut().zip(m) {
            slice.0[lane] = row;
        }
        valid.0[lane] = if group.len() == 64 {
            !0
        } else {
            (1u64 << group.len()) - 1
        };
    }
    fill_tables(&slices, valid, layout, table);
}

/// Fills one block's tables from its bit slices: `slices[p]` holds the keys without bit `p`
/// and `valid` the positions that hold a key (in any one order of the block's keys, the same
/// for all 65 sets).
#[inline(always)]
pub(crate) fn fill_tables(
    slices: &[Lanes; 64],
    valid: Lanes,
    layout: &Layout,
    table: &mut [Lanes],
) {
    for j in 0..layout.chunks() {
        let chunk = &mut table[layout.offset[j]..][..layout.mask[j] as usize + 1];
        chunk[0] = if j == 0 { valid } else { Lanes::ONES };
        let first = layout.shift[j] as usize;
        for s in 1..chunk.len() {
            let low = s.trailing_zeros() as usize;
            let prev = chunk[s & (s - 1)];
            let slice = &slices[first + low];
            chunk[s] = Lanes(std::array::from_fn(|w| prev.0[w] & slice.0[w]));
        }
    }
}

/// Counts (key, query) pairs with disjoint bits against the blocks of `tables` (`per`
/// entries each), for the queries `range`, whose entries are byte offsets in `index`
/// (chunk-major, see [`Layout::index_generic`]); generic over the CPU level.
#[inline(always)]
pub(crate) fn count_blocks_generic(
    tables: &[Lanes],
    per: usize,
    index: &[u32],
    stride: usize,
    range: std::ops::Range<usize>,
) -> u64 {
    let chunks = index.len() / stride.max(1);
    let mut total = 0u64;
    for i in range {
        for block in tables.chunks_exact(per) {
            let entry = |j: usize| &block[index[j * stride + i] as usize / LANES_BYTES as usize].0;
            let mut acc = *entry(0);
            for j in 1..chunks {
                let t = entry(j);
                for w in 0..8 {
                    acc[w] &= t[w];
                }
            }
            total += acc.iter().map(|x| u64::from(x.count_ones())).sum::<u64>();
        }
    }
    total
}

/// A leaf's bits as the packed count reads them: a query with any `common` bit (one every
/// key of the leaf has) fits no key and is skipped; the others are packed onto `mixed`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LeafBits {
    /// The bits the leaf's blocks are sliced on, packed to the low end.
    pub mixed: u64,
    /// The bits every key of the leaf has.
    pub common: u64,
}

/// Counts (key, query) pairs with disjoint bits against the blocks of `tables` (`per`
/// entries each) sliced through [`Layout::packed`]`(bits.mixed.count_ones())`, for `queries`
/// as they are: a query with a common bit is skipped, the others are packed onto the mixed
/// bits and their entries computed from the packed bits, with no index to write and read.
/// Returns the pairs and the queries counted (not skipped). Generic over the CPU level.
#[inline(always)]
pub(crate) fn count_packed_generic(
    tables: &[Lanes],
    per: usize,
    bits: LeafBits,
    queries: &[u64],
) -> (u64, u64) {
    let chunks = packed_chunks(bits.mixed.count_ones());
    let (mut total, mut kept) = (0u64, 0u64);
    for &q in queries.iter().filter(|&&q| q & bits.common == 0) {
        let q = pack_bits_generic(q, bits.mixed);
        kept += 1;
        for block in tables.chunks_exact(per) {
            let mut acc = block[packed_entry(q, 0)].0;
            for j in 1..chunks {
                let t = &block[packed_entry(q, j)].0;
                for w in 0..8 {
                    acc[w] &= t[w];
                }
            }
            total += acc.iter().map(|x| u64::from(x.count_ones())).sum::<u64>();
        }
    }
    (total, kept)
}

/// Partitions `keys[i..]` one by one, `keys[..i]` being split already into `keys[..zeros]`
/// (without any of `bits`) and `ones` (with some), then puts `ones` after the keys without;
/// returns how many those are. The tail of the vector partitions, and the whole of the
/// portable one.
#[inline(always)]
pub(crate) fn partition_from(
    keys: &mut [u64],
    bits: u64,
    ones: &mut Vec<u64>,
    (zeros, i): (usize, usize),
) -> usize {
    let mut zeros = zeros;
    for i in i..keys.len() {
        let k = keys[i];
        if k & bits == 0 {
            keys[zeros] = k;
            zeros += 1;
        } else {
            ones.push(k);
        }
    }
    keys[zeros..].copy_from_slice(ones);
    zeros
}

/// Appends the words of `words` without any of `bits` to `zeros` and the others to `ones`,
/// in order.
pub(crate) fn split_from(words: &[u64], bits: u64, zeros: &mut Vec<u64>, ones: &mut Vec<u64>) {
    for &w in words {
        if w & bits == 0 {
            zeros.push(w);
        } else {
            ones.push(w);
        }
    }
}

/// Counts disjoint (key, query) pairs by direct comparison, generic over the CPU level.
#[inline(always)]
pub(crate) fn count_direct_generic(keys: &[u64], queries: &[u64]) -> u64 {
    let mut total = 0u64;
    for &q in queries {
        total += keys.iter().filter(|&&k| k & q == 0).count() as u64;
    }
    total
}

/// Appends `n | s | extra` for every pair `(n, s)` with `n`, `s` and `forbid` pairwise
/// disjoint, without branching per pair.
#[inline(always)]
pub(crate) fn join_generic(
    north: &[u64],
    south: &[u64],
    forbid: u64,
    extra: u64,
    out: &mut Vec<u64>,
) {
    for &n in north.iter().filter(|&&n| n & forbid == 0) {
        let n_or_f = n | forbid;
        out.reserve(south.len());
        let base = out.len();
        let spare = &mut out.spare_capacity_mut()[..south.len()];
        let mut len = 0usize;
        for &s in south {
            // Write unconditionally, advance only on a disjoint pair; `len` never passes
            // the number of pairs seen, so the write stays in the reserved capacity.
            spare[len.min(south.len() - 1)].write(n | s | extra);
            len += usize::from(n_or_f & s == 0);
        }
        // SAFETY: the first `len` spare slots were initialised above.
        unsafe { out.set_len(base + len) };
    }
}
