// Shared by every module (the host prepends it): 64-bit keys as two 32-bit halves, and the
// flat index of a dispatch laid out in rows.
//
// A key is a vec2<u32>: x holds bits 0..31, y bits 32..63. WGSL has no 64-bit integers
// on every device, so sums of 64 bits carry by hand.

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

// The bits of x under mask m, packed to the low end (a portable pext): each of five
// steps moves the bits that have an odd number of mask holes below them (in the current
// step's unit) down by that unit, as in Hacker's Delight's compress. Written out without
// a loop: Mesa's CPU driver stops any loop after 65535 rounds in one invocation, and a
// pack per route would reach that.
fn compress(x0: u32, m0: u32) -> u32 {
    var x = x0 & m0;
    var m = m0;
    var mk = ~m << 1u;
    var mp: u32;
    var mv: u32;
    var t: u32;
    // Step 1 (by 1).
    mp = mk ^ (mk << 1u);
    mp = mp ^ (mp << 2u);
    mp = mp ^ (mp << 4u);
    mp = mp ^ (mp << 8u);
    mp = mp ^ (mp << 16u);
    mv = mp & m;
    m = (m ^ mv) | (mv >> 1u);
    t = x & mv;
    x = (x ^ t) | (t >> 1u);
    mk = mk & ~mp;
    // Step 2 (by 2).
    mp = mk ^ (mk << 1u);
    mp = mp ^ (mp << 2u);
    mp = mp ^ (mp << 4u);
    mp = mp ^ (mp << 8u);
    mp = mp ^ (mp << 16u);
    mv = mp & m;
    m = (m ^ mv) | (mv >> 2u);
    t = x & mv;
    x = (x ^ t) | (t >> 2u);
    mk = mk & ~mp;
    // Step 3 (by 4).
    mp = mk ^ (mk << 1u);
    mp = mp ^ (mp << 2u);
    mp = mp ^ (mp << 4u);
    mp = mp ^ (mp << 8u);
    mp = mp ^ (mp << 16u);
    mv = mp & m;
    m = (m ^ mv) | (mv >> 4u);
    t = x & mv;
    x = (x ^ t) | (t >> 4u);
    mk = mk & ~mp;
    // Step 4 (by 8).
    mp = mk ^ (mk << 1u);
    mp = mp ^ (mp << 2u);
    mp = mp ^ (mp << 4u);
    mp = mp ^ (mp << 8u);
    mp = mp ^ (mp << 16u);
    mv = mp & m;
    m = (m ^ mv) | (mv >> 8u);
    t = x & mv;
    x = (x ^ t) | (t >> 8u);
    mk = mk & ~mp;
    // Step 5 (by 16).
    mp = mk ^ (mk << 1u);
    mp = mp ^ (mp << 2u);
    mp = mp ^ (mp << 4u);
    mp = mp ^ (mp << 8u);
    mp = mp ^ (mp << 16u);
    mv = mp & m;
    t = x & mv;
    x = (x ^ t) | (t >> 16u);
    return x;
}

// Packs the bits of key k under mask m: the first 30 of them into bits 0..29 of x, the
// rest into y from bit 0 (so no 5-bit chunk straddles the halves). Masks have at most 60
// bits (the host checks).
fn pack60(k: vec2<u32>, m: vec2<u32>) -> vec2<u32> {
    let lo = compress(k.x, m.x);
    let hi = compress(k.y, m.y);
    let n = countOneBits(m.x);
    // The packed value lo | hi << n over 64 bits, as (vx, vy).
    var vx = lo;
    var vy = hi;
    if (n < 32u) {
        vx = lo | (hi << n);
        vy = select(0u, hi >> (32u - n), n > 0u);
    }
    return vec2<u32>(vx & 0x3fffffffu, (vx >> 30u) | (vy << 2u));
}

// Chunk j (5 bits) of a key packed by pack60.
fn chunk5(p: vec2<u32>, j: u32) -> u32 {
    if (j < 6u) {
        return (p.x >> (5u * j)) & 31u;
    }
    return (p.y >> (5u * (j - 6u))) & 31u;
}

// Workgroups in a dispatch of `groups` laid out in rows of ROW.
fn row_args(groups: u32) -> vec3<u32> {
    if (groups <= ROW) {
        return vec3<u32>(groups, 1u, 1u);
    }
    return vec3<u32>(ROW, (groups + ROW - 1u) / ROW, 1u);
}
