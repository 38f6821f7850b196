// Bit-slices each block of up to 512 sorted keys on its mixed bits (those some but not all
// of its keys have): the keys are packed onto those bits, cut into chunks of 5, and for
// every chunk and each of its 32 values m the table keeps the 512-bit set of keys that
// share no bit with m. A query that shares no bit with the block's AND then meets exactly
// the keys in the AND of its chunks' sets.
//
// A chunk's 32 sets come from five: the keys with each of its bits. Invocation (c, w) reads
// the 32 keys of word w once, in a skewed order (key 32w + (j + w) mod 32 at step j), so
// the 16 invocations of a chunk read 16 different banks and the two chunks of a warp the
// same words; then s[m] = A[m mod 4] & H[m / 4], where A and H are the sets of the low two
// and high three bits of m, each an AND of earlier ones. The layout (row pairs, the last
// unpaired chunk in both halves) is the block count's bank swizzle (count.wgsl).
//
// After the chunk tables (SETS): the set of keys of the exception weight, then the set of
// each class's keys (CLASS_SETS), and in `info` the block's AND, mixed bits, chunk count
// and weighing mode with its weights (`weighing`).

@group(0) @binding(0) var<uniform> p: Batch;
@group(0) @binding(1) var<storage, read> fills: array<Fill>;
@group(0) @binding(2) var<storage, read> sorted: array<vec2<u32>>;
@group(0) @binding(3) var<storage, read> blocks: array<vec4<u32>>;
@group(0) @binding(4) var<storage, read> scan: array<u32>;
@group(0) @binding(5) var<storage, read_write> tables: array<u32>;
@group(0) @binding(6) var<storage, read_write> info: array<vec4<u32>>;
// binding 7: `results` (results.wgsl), for the work counters.

// The packed keys: key i's low word at i, its high word at BLOCK_KEYS + i (one bank per
// key).
var<workgroup> packed: array<u32, 2u * BLOCK_KEYS>;
// Each key's class (4 for no key).
var<workgroup> class_of: array<u32, BLOCK_KEYS>;
var<workgroup> red: array<vec4<u32>, GROUP_SIZE>;
var<workgroup> red_classes: array<u32, GROUP_SIZE>;
var<workgroup> tested: atomic<u32>;

// The AND and OR of the block's live keys, and the classes they have (every invocation
// gets them; the classes in red_classes[0]).
fn and_or(li: u32, a: vec2<u32>, o: vec2<u32>, classes: u32) -> vec4<u32> {
    red[li] = vec4<u32>(a, o);
    red_classes[li] = classes;
    workgroupBarrier();
    for (var stride = GROUP_SIZE / 2u; stride > 0u; stride = stride / 2u) {
        if (li < stride) {
            let x = red[li];
            let y = red[li + stride];
            red[li] = vec4<u32>(x.xy & y.xy, x.zw | y.zw);
            red_classes[li] = red_classes[li] | red_classes[li + stride];
        }
        workgroupBarrier();
    }
    return red[0];
}

// v's component c (0..3), without a dynamic vector index.
fn of_class(v: vec4<u32>, c: u32) -> u32 {
    return select(select(v.x, v.y, c == 1u), select(v.z, v.w, c == 3u), c >= 2u);
}

// How the block count weighs a block (count.wgsl): its mode, its weights, the query weights
// packed a byte each, and the classes whose keys make the exception set.
struct Weighing {
    mode: u32,
    weights: vec4<u32>,
    packed_q: u32,
    exceptions: u32,
}

// The cheapest mode for a block whose keys have the classes `present`, with stored weights
// `sw` and query weights `qw` (each at most 255: the host checks).
fn weighing(present: u32, sw: vec4<u32>, qw: vec4<u32>) -> Weighing {
    let base = of_class(sw, firstTrailingBit(present));
    var other = base;
    var exceptions = 0u;
    var three = false;
    for (var c = 0u; c < 4u; c = c + 1u) {
        let w = of_class(sw, c);
        if (((present >> c) & 1u) == 0u || w == base) {
            continue;
        }
        three = three || (exceptions != 0u && w != other);
        other = w;
        exceptions = exceptions | (1u << c);
    }
    let packed_q = qw.x | (qw.y << 8u) | (qw.z << 16u) | (qw.w << 24u);
    let q_uniform = all(qw == vec4<u32>(qw.x));
    var r = Weighing(3u, sw, packed_q, exceptions);
    if (q_uniform && exceptions == 0u) {
        r = Weighing(0u, vec4<u32>(base * qw.x, 0u, 0u, 0u), packed_q, 0u);
    } else if (q_uniform && !three) {
        r = Weighing(1u, vec4<u32>(base * qw.x, other * qw.x, 0u, 0u), packed_q, exceptions);
    } else if (exceptions == 0u) {
        r = Weighing(2u, vec4<u32>(base, 0u, 0u, 0u), packed_q, 0u);
    }
    return r;
}

// The keys of word w (keys 32w..32w + 31) that the block has.
fn valid_word(w: u32, keys: u32) -> u32 {
    let first = 32u * w;
    if (keys >= first + 32u) {
        return 0xffffffffu;
    }
    if (keys <= first) {
        return 0u;
    }
    return (1u << (keys - first)) - 1u;
}

// Writes entries 4h..4h + 3 of a chunk at `at` (entry m at at + 32m): a & hs; in both
// halves of the rows where `both`.
fn store4(at: u32, a: vec4<u32>, hs: u32, both: bool) {
    let v = a & vec4<u32>(hs);
    tables[at] = v.x;
    tables[at + 32u] = v.y;
    tables[at + 64u] = v.z;
    tables[at + 96u] = v.w;
    if (both) {
        tables[at + 16u] = v.x;
        tables[at + 48u] = v.y;
        tables[at + 80u] = v.z;
        tables[at + 112u] = v.w;
    }
}

// Chunk c's 32 entries for keys 32w..32w + 31 of a block of `keys` keys and `chunks`
// chunks at tables[at]; returns the keys tested.
fn chunk_tables(at: u32, c: u32, w: u32, keys: u32, chunks: u32) -> u32 {
    let valid = valid_word(w, keys);
    let word = select(0u, BLOCK_KEYS, c >= 6u) + 32u * w;
    let shift = 5u * (c % 6u);
    // Bit k of s_b: key 32w + k has the chunk's bit b.
    var s0 = 0u;
    var s1 = 0u;
    var s2 = 0u;
    var s3 = 0u;
    var s4 = 0u;
    var tests = 0u;
    if (valid != 0u) {
        for (var j = 0u; j < 32u; j = j + 1u) {
            let k = (j + w) & 31u;
            let v = packed[word + k] >> shift;
            s0 = insertBits(s0, v, k, 1u);
            s1 = insertBits(s1, v >> 1u, k, 1u);
            s2 = insertBits(s2, v >> 2u, k, 1u);
            s3 = insertBits(s3, v >> 3u, k, 1u);
            s4 = insertBits(s4, v >> 4u, k, 1u);
        }
        tests = 32u;
    }
    // Keys without each bit; A by m's bits 0 and 1, H by its bits 2, 3 and 4.
    let n0 = ~s0;
    let n1 = ~s1;
    let n2 = ~s2;
    let n3 = ~s3;
    let n4 = ~s4;
    let a = vec4<u32>(valid, valid & n0, valid & n1, valid & n0 & n1);
    let n23 = n2 & n3;
    let row = at + (c >> 1u) * PAIR_WORDS + (c & 1u) * 16u + w;
    let both = c + 1u == chunks && (chunks & 1u) == 1u;
    store4(row, a, 0xffffffffu, both);
    store4(row + 128u, a, n2, both);
    store4(row + 256u, a, n3, both);
    store4(row + 384u, a, n23, both);
    store4(row + 512u, a, n4, both);
    store4(row + 640u, a, n4 & n2, both);
    store4(row + 768u, a, n4 & n3, both);
    store4(row + 896u, a, n4 & n23, both);
    return tests;
}

// Word w of the block's key sets at tables[at]: the exception set (the classes
// `exceptions`), then each class's; returns the keys tested.
fn class_sets(at: u32, w: u32, keys: u32, exceptions: u32) -> u32 {
    let word = 32u * w;
    var sets = vec4<u32>(0u);
    var tests = 0u;
    if (valid_word(w, keys) != 0u) {
        for (var j = 0u; j < 32u; j = j + 1u) {
            let k = (j + w) & 31u;
            let hit = vec4<u32>(class_of[word + k]) == vec4<u32>(0u, 1u, 2u, 3u);
            sets = insertBits(sets, select(vec4<u32>(0u), vec4<u32>(1u), hit), k, 1u);
        }
        tests = 32u;
    }
    let ex = (vec4<u32>(exceptions) >> vec4<u32>(0u, 1u, 2u, 3u)) & vec4<u32>(1u);
    let x = sets & (vec4<u32>(0u) - ex);
    tables[at + SETS + w] = x.x | x.y | x.z | x.w;
    tables[at + CLASS_SETS + w] = sets.x;
    tables[at + CLASS_SETS + 16u + w] = sets.y;
    tables[at + CLASS_SETS + 32u + w] = sets.z;
    tables[at + CLASS_SETS + 48u + w] = sets.w;
    return tests;
}

@compute @workgroup_size(GROUP_SIZE)
fn build(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let b = flat_group(wg);
    if (b >= scan[HEAD_BLOCKS]) {
        return;
    }
    // (first key, keys, leaf, fill).
    let d = blocks[b];
    let fill = d.w;
    let f = fills[fill];
    // Keys li and li + GROUP_SIZE of the block (BLOCK_KEYS = 2 · GROUP_SIZE), masked to the
    // live bits, and their classes.
    var k0 = vec2<u32>(0u);
    var k1 = vec2<u32>(0u);
    var c0 = 4u;
    var c1 = 4u;
    var a = vec2<u32>(0xffffffffu);
    var o = vec2<u32>(0u);
    var classes = 0u;
    if (li < d.y) {
        let raw = sorted[d.x + li];
        k0 = raw & f.live;
        c0 = (raw.y >> 29u) & 3u;
        a = k0;
        o = k0;
        classes = 1u << c0;
    }
    if (li + GROUP_SIZE < d.y) {
        let raw = sorted[d.x + li + GROUP_SIZE];
        k1 = raw & f.live;
        c1 = (raw.y >> 29u) & 3u;
        a = a & k1;
        o = o | k1;
        classes = classes | (1u << c1);
    }
    let ao = and_or(li, a, o, classes);
    let present = red_classes[0];
    let mixed = ao.zw & ~ao.xy;
    // At least one chunk: a block of equal keys is one table whose every entry holds them.
    let chunks = max((countOneBits(mixed.x) + countOneBits(mixed.y) + 4u) / 5u, 1u);
    // Slots past the block's keys hold 0: no set takes them (valid_word has no bit there).
    let p0 = select(vec2<u32>(0u), pack60(k0, mixed), li < d.y);
    let p1 = select(vec2<u32>(0u), pack60(k1, mixed), li + GROUP_SIZE < d.y);
    packed[li] = p0.x;
    packed[BLOCK_KEYS + li] = p0.y;
    packed[li + GROUP_SIZE] = p1.x;
    packed[BLOCK_KEYS + GROUP_SIZE + li] = p1.y;
    class_of[li] = c0;
    class_of[li + GROUP_SIZE] = c1;
    if (li == 0u) {
        atomicStore(&tested, 0u);
    }
    workgroupBarrier();
    let wt = weighing(present, f.stored_w, f.query_w);
    let at = b * TABLE_WORDS;
    var tests = 0u;
    // Invocation (c, w) builds word w of chunk c's entries: chunks ≤ 12 take the first 192.
    let c = li >> 4u;
    let w = li & 15u;
    if (c < chunks) {
        tests = chunk_tables(at, c, w, d.y, chunks);
    }
    // The last 16 invocations: word w of the key sets.
    if (li >= GROUP_SIZE - 16u) {
        tests = tests + class_sets(at, w, d.y, wt.exceptions);
    }
    if (tests > 0u) {
        atomicAdd(&tested, tests);
    }
    workgroupBarrier();
    if (li == 0u) {
        info[INFO * b] = vec4<u32>(ao.xy, mixed);
        info[INFO * b + 1u] = vec4<u32>(chunks | (wt.mode << 8u), fill, wt.packed_q, d.y);
        info[INFO * b + 2u] = wt.weights;
        stat_add(STAT_TABLE_KEY_TESTS, atomicLoad(&tested));
        stat_add(STAT_TABLE_CHUNKS, chunks);
    }
}
