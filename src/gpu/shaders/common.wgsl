// Shared by every module (the host prepends it): 64-bit keys as two 32-bit halves, and the
// flat index of a dispatch laid out in rows.
//
// A key is a vec2<u32>: x holds bits 0..31, y bits 32..63. WGSL has no 64-bit integers
// on every device, so sums of 64 bits carry by hand.

// Workgroups per row of a dispatch: a dimension holds at most 65535 of them.
const ROW: u32 = 32768u;

// The index of a workgroup in a dispatch of rows of ROW workgroups.
fn flat_group(wg: vec3<u32>) -> u32 {
    return wg.x + wg.y * ROW;
}

// Whether key k has bit b (0..63).
fn has_bit(k: vec2<u32>, b: u32) -> bool {
    if (b < 32u) {
        return ((k.x >> b) & 1u) == 1u;
    }
    return ((k.y >> (b - 32u)) & 1u) == 1u;
}

// Whether a and b share no bit.
fn disjoint(a: vec2<u32>, b: vec2<u32>) -> bool {
    let m = a & b;
    return (m.x | m.y) == 0u;
}

// acc + v, with the carry into the high half.
fn add64(acc: vec2<u32>, v: u32) -> vec2<u32> {
    let lo = acc.x + v;
    return vec2<u32>(lo, acc.y + select(0u, 1u, lo < v));
}

// a + b over 64 bits.
fn add64v(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
    let lo = a.x + b.x;
    return vec2<u32>(lo, a.y + b.y + select(0u, 1u, lo < b.x));
}

// Packs the bits of key k under mask m: the first 30 of them into bits 0..29 of x, the
// rest into y from bit 0 (so no 5-bit chunk straddles the halves). Masks have at most 60
// bits (the host checks).
fn pack60(k: vec2<u32>, m: vec2<u32>) -> vec2<u32> {
    var x = 0u;
    var y = 0u;
    var i = 0u;
    var mm = m.x;
    loop {
        if (mm == 0u) {
            break;
        }
        let b = countTrailingZeros(mm);
        let bit = (k.x >> b) & 1u;
        if (i < 30u) {
            x = x | (bit << i);
        } else {
            y = y | (bit << (i - 30u));
        }
        i = i + 1u;
        mm = mm & (mm - 1u);
    }
    mm = m.y;
    loop {
        if (mm == 0u) {
            break;
        }
        let b = countTrailingZeros(mm);
        let bit = (k.y >> b) & 1u;
        if (i < 30u) {
            x = x | (bit << i);
        } else {
            y = y | (bit << (i - 30u));
        }
        i = i + 1u;
        mm = mm & (mm - 1u);
    }
    return vec2<u32>(x, y);
}

// Chunk j (5 bits) of a key packed by pack60.
fn chunk5(p: vec2<u32>, j: u32) -> u32 {
    if (j < 6u) {
        return (p.x >> (5u * j)) & 31u;
    }
    return (p.y >> (5u * (j - 6u))) & 31u;
}
