// The tree's subtrees (tree.wgsl's second half, in the same module): `rest` builds each
// subtree the top levels listed in one workgroup, depth first, and orders each leaf of two
// blocks it makes so that the second block's keys share skip bits, from the sampled
// queries it holds for the leaf (no dispatch of its own, and no read of the fill's sample
// again).
//
// A node of at most `p.held` keys (HELD_EACH an invocation at most) that splits or orders a leaf of two blocks is built with its
// keys held in registers, read once and written once, where its
// subtree leaves them in `stored`: a stable partition keeps the order of the keys on each
// side, so the keys of any node below it are, in order, the held ones in its range taken
// invocation by invocation, slot by slot, and a split or a round of ordering only
// renumbers their places. The tree is the one the partitions through memory build.

// An invocation's held keys, where each now lies, and how many it holds.
var<private> hold_keys: array<vec2<u32>, HELD_EACH>;
var<private> hold_at: array<u32, HELD_EACH>;
var<private> hold_len: u32;
// The range of the node whose keys are held (empty: none).
var<workgroup> hold_range: vec2<u32>;

// Reads node `e`'s keys (in `temp` where `in_temp`) into `hold_*`, a run of consecutive
// ones an invocation.
fn hold_node(li: u32, e: Node, in_temp: bool) {
    let n = e.keys.y - e.keys.x;
    let chunk = (n + GROUP_SIZE - 1u) / GROUP_SIZE;
    let a = min(e.keys.x + li * chunk, e.keys.y);
    hold_len = min(a + chunk, e.keys.y) - a;
    for (var k = 0u; k < hold_len; k = k + 1u) {
        hold_keys[k] = key_at(in_temp, a + k);
        hold_at[k] = a + k;
    }
    if (li == 0u) {
        hold_range = e.keys;
        acc = acc + n;
    }
}

// Writes the held keys where their subtree left them, in `stored`, and holds none.
fn release(li: u32) {
    for (var k = 0u; k < hold_len; k = k + 1u) {
        stored[hold_at[k]] = hold_keys[k];
    }
    hold_len = 0u;
    storageBarrier();
    if (li == 0u) {
        let n = hold_range.y - hold_range.x;
        acc = acc + n;
        wrote = wrote + n;
        hold_range = vec2<u32>(0u);
    }
}

// Whether held key k lies in [lo, hi).
fn holds(k: u32, lo: u32, hi: u32) -> bool {
    return hold_at[k] >= lo && hold_at[k] < hi;
}

// `part_across` of the held keys: renumbers those of [lo, hi) as it would place them;
// returns how many are without `bit`.
fn part_held(li: u32, lo: u32, hi: u32, bit: u32) -> u32 {
    var zeros = 0u;
    var ones = 0u;
    for (var k = 0u; k < hold_len; k = k + 1u) {
        if (holds(k, lo, hi)) {
            if (has_bit(hold_keys[k], bit)) {
                ones = ones + 1u;
            } else {
                zeros = zeros + 1u;
            }
        }
    }
    let z = excl_scan(li, zeros);
    let o = excl_scan(li, ones);
    var zi = lo + z.x;
    var oi = lo + z.y + o.x;
    for (var k = 0u; k < hold_len; k = k + 1u) {
        if (holds(k, lo, hi)) {
            if (has_bit(hold_keys[k], bit)) {
                hold_at[k] = oi;
                oi = oi + 1u;
            } else {
                hold_at[k] = zi;
                zi = zi + 1u;
            }
        }
    }
    return z.y;
}

// `count_keys` of node `e`'s held keys: those whose place in it is a multiple of the
// stride.
fn count_held(li: u32, f: Fill, e: Node, most: u32) -> u32 {
    if (li < 128u) {
        atomicStore(&bits[li], 0u);
    }
    workgroupBarrier();
    let n = e.keys.y - e.keys.x;
    let step = max(n / most, 1u);
    let mask = f.live & ~e.used;
    for (var k = 0u; k < hold_len; k = k + 1u) {
        if (holds(k, e.keys.x, e.keys.y) && (hold_at[k] - e.keys.x) % step == 0u) {
            count_bits(0u, hold_keys[k] & mask);
        }
    }
    return (n + step - 1u) / step;
}

// The bit to split node `e` of `rest` on, by the rule of a top level's (top.wgsl) with
// `p.key_sample` keys (in `temp` where `in_temp`, or held: `in_regs`): reads the queries listed for it (`e.pad`
// of them), or lists them from the fill's sample (NONE). Returns the bit and how many
// queries reach the node (more than LISTED: not all are listed).
fn choose_listed(li: u32, f: Fill, e: Node, in_temp: bool, in_regs: bool) -> vec2<u32> {
    if (li == 0u) {
        atomicStore(&listing, 0u);
    }
    var sampled = 0u;
    if (in_regs) {
        sampled = count_held(li, f, e, p.key_sample);
    } else {
        sampled = count_keys(li, f, e, in_temp, p.key_sample);
    }
    let read = select(sampled, 0u, in_regs);
    let s = sample_of(f);
    let mask = f.live & ~e.used;
    if (e.pad != NONE) {
        read_listed(li, f, e.pad);
        for (var k = 0u; k < held; k = k + 1u) {
            count_bits(64u, held_qs[k] & mask);
        }
        return vec2<u32>(pick(li, e, sampled, e.pad, read), e.pad);
    }
    for (var i = li; i < s.x; i = i + GROUP_SIZE) {
        let q = queries[f.queries + i * s.y] & f.live;
        if (disjoint(q, e.taken)) {
            let k = atomicAdd(&listing, 1u);
            if (k < LISTED) {
                listed[k] = i;
            }
            count_bits(64u, q & mask);
        }
    }
    let bit = pick(li, e, sampled, s.x, read);
    if (li == 0u) {
        listed_len = atomicLoad(&listing);
    }
    return vec2<u32>(bit, workgroupUniformLoad(&listed_len));
}

// Reads the first `len` listed queries into each invocation's `held_*`.
fn read_listed(li: u32, f: Fill, len: u32) {
    let s = sample_of(f);
    held = 0u;
    for (var k = 0u; k < LISTED_EACH; k = k + 1u) {
        let i = li + k * GROUP_SIZE;
        if (i >= len) {
            break;
        }
        let id = listed[i];
        held_ids[k] = id;
        held_qs[k] = queries[f.queries + id * s.y] & f.live;
        held = k + 1u;
    }
}

// `read_listed`, for a node that listed them from its fill's sample (and has not counted
// those reads).
fn hold_listed(li: u32, f: Fill, e: Node, len: u32) {
    read_listed(li, f, len);
    if (li == 0u) {
        tested(e.fill, len);
        acc = acc + len;
    }
}

// Moves the held queries without `bit` to the front of the listed ones, those with it after
// them; returns how many are without it.
fn part_listed(li: u32, bit: u32) -> u32 {
    var zeros = 0u;
    for (var k = 0u; k < held; k = k + 1u) {
        zeros = zeros + select(1u, 0u, has_bit(held_qs[k], bit));
    }
    // Every invocation has read its entries before any writes (the scans' barriers).
    let z = excl_scan(li, zeros);
    let o = excl_scan(li, held - zeros);
    var zi = z.x;
    var oi = z.y + o.x;
    for (var k = 0u; k < held; k = k + 1u) {
        if (has_bit(held_qs[k], bit)) {
            listed[oi] = held_ids[k];
            oi = oi + 1u;
        } else {
            listed[zi] = held_ids[k];
            zi = zi + 1u;
        }
    }
    workgroupBarrier();
    return z.y;
}

// Takes the next node off the stack (thread 0): a leaf of one block or two, or one that
// may split.
fn pop() {
    if (depth == 0u) {
        mode = BUILD_DONE;
        return;
    }
    depth = depth - 1u;
    cur = stack[depth];
    let n = cur.keys.y - cur.keys.x;
    mode = select(BUILD_LEAF, BUILD_PAIR, n > p.leaf_keys);
    if (n > 2u * p.leaf_keys) {
        mode = BUILD_SPLIT;
    }
}

// The tree levels above node `e`: one bit of its path's `used` a split.
fn depth_of(e: Node) -> u32 {
    return countOneBits(e.used.x) + countOneBits(e.used.y);
}

// Each subtree, depth first, a workgroup each. Its keys pass from one buffer to the other
// at each split, as the top levels' do (the root's lie in `temp` where its `pad` is 1), so
// a node's buffer follows its depth; a leaf in `temp` copies its keys back to `stored`,
// where leaves and blocks read them. Below a node of at most `p.held` keys they are held
// instead, and written to `stored` once.
@compute @workgroup_size(GROUP_SIZE)
fn rest(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let g = flat_group(wg);
    if (g >= min(atomicLoad(&scan[list_len(TOP_LEVELS)]), p.subtree_cap)) {
        return;
    }
    let root = lists[list_at(TOP_LEVELS) + g];
    let f = fills[root.fill];
    // The depth parity at which a node's keys lie in `temp`: the root's where its `pad` is
    // 1, else the other.
    let temp_parity = (depth_of(root) + root.pad + 1u) & 1u;
    if (li == 0u) {
        stack[0] = root;
        // Its sampled queries are not listed yet.
        stack[0].pad = NONE;
        depth = 1u;
        mode = BUILD_SPLIT;
        // Workgroup memory starts as the last kernel left it.
        hold_range = vec2<u32>(0u);
    }
    var built = 0u;
    // A tree of k leaves has 2k - 1 nodes, and a fill at most `leaf_cap` leaves.
    for (var it = 0u; it < 2u * f.leaf_cap; it = it + 1u) {
        // Every invocation has read the last node before thread 0 takes the next.
        workgroupBarrier();
        if (li == 0u) {
            pop();
        }
        let m = workgroupUniformLoad(&mode);
        let e = workgroupUniformLoad(&cur);
        // The held keys are written once their node's subtree is built: the next node lies
        // outside it.
        let range = workgroupUniformLoad(&hold_range);
        let within = e.keys.x >= range.x && e.keys.y <= range.y;
        if (range.y > range.x && (m == BUILD_DONE || !within)) {
            release(li);
        }
        if (m == BUILD_DONE) {
            break;
        }
        built = built + 1u;
        let in_temp = (depth_of(e) & 1u) == temp_parity;
        var in_regs = range.y > range.x && within;
        if (!in_regs && m != BUILD_LEAF && e.keys.y - e.keys.x <= min(p.held, HELD_EACH * GROUP_SIZE)) {
            hold_node(li, e, in_temp);
            in_regs = true;
        }
        if (m == BUILD_PAIR) {
            built = built + order_pair(li, f, e, in_temp, in_regs);
            if (li == 0u) {
                leaf(f, e);
            }
            continue;
        }
        var bit = NONE;
        var reach = NONE;
        if (m == BUILD_SPLIT) {
            let c = choose_listed(li, f, e, in_temp, in_regs);
            bit = c.x;
            reach = c.y;
        }
        if (!split_node(li, f, e, bit, in_temp, in_regs)) {
            let back = settle(li, e.keys.x, e.keys.y, in_temp && !in_regs);
            if (li == 0u) {
                acc = acc + back;
                wrote = wrote + back;
                leaf(f, e);
            }
            continue;
        }
        if (li == 0u && e.node == f.root) {
            atomicStore(&scan[counter(e.fill, TREE_ROOT)], bit + 1u);
        }
        // The child without the bit is reached by the node's queries, the other by those
        // without it: moved to the front.
        var without = NONE;
        if (reach <= LISTED) {
            if (e.pad == NONE) {
                hold_listed(li, f, e, reach);
            }
            without = part_listed(li, bit);
        }
        if (li == 0u) {
            stack[depth] = kids[0];
            stack[depth].pad = select(NONE, reach, reach <= LISTED);
            stack[depth + 1u] = kids[1];
            stack[depth + 1u].pad = without;
            depth = depth + 2u;
        }
    }
    let range = workgroupUniformLoad(&hold_range);
    if (range.y > range.x) {
        release(li);
    }
    // A subtree cut short would route queries past keys: the fill counts nothing, and the
    // host cuts its join.
    if (li == 0u && mode != BUILD_DONE) {
        unfinished(root.fill);
    }
    if (li == 0u && built > 0u) {
        stat_add(STAT_SUBTREES, 1u);
        stat_add(STAT_REST_ITERATIONS, built);
        stat_max_high(STAT_REST_ACCESSES_PEAK, built);
        stat_add(STAT_REST_ACCESSES, acc);
        stat_add(STAT_REST_WRITES, wrote);
        stat_max(STAT_REST_ACCESSES_PEAK, acc);
    }
}

// The AND of the keys of node `e` (in `temp` where `in_temp`, or held: `in_regs`), over the fill's
// live bits.
fn and_of(li: u32, f: Fill, e: Node, in_temp: bool, in_regs: bool) -> vec2<u32> {
    if (li < 2u) {
        atomicStore(&key_and[li], 0xffffffffu);
    }
    workgroupBarrier();
    var acc = f.live;
    if (in_regs) {
        for (var k = 0u; k < hold_len; k = k + 1u) {
            if (holds(k, e.keys.x, e.keys.y)) {
                acc = acc & hold_keys[k];
            }
        }
    } else {
        for (var i = e.keys.x + li; i < e.keys.y; i = i + GROUP_SIZE) {
            acc = acc & key_at(in_temp, i);
        }
    }
    atomicAnd(&key_and[0], acc.x);
    atomicAnd(&key_and[1], acc.y);
    workgroupBarrier();
    return vec2<u32>(atomicLoad(&key_and[0]), atomicLoad(&key_and[1])) & f.live;
}

// Holds the sampled queries that reach leaf `e` in each invocation's `held_qs`, all
// `alive`: those listed for it (`e.pad`), or, where its subtree listed none (a root), those
// of the fill's sample it reaches. Returns the queries read.
fn hold_reach(li: u32, f: Fill, e: Node) -> u32 {
    var reads = e.pad;
    if (e.pad != NONE) {
        read_listed(li, f, e.pad);
    } else {
        let s = sample_of(f);
        reads = s.x;
        held = 0u;
        for (var k = 0u; k < LISTED_EACH; k = k + 1u) {
            let i = li + k * GROUP_SIZE;
            if (i >= s.x) {
                break;
            }
            let q = queries[f.queries + i * s.y] & f.live;
            if (disjoint(q, e.taken)) {
                held_qs[held] = q;
                held = held + 1u;
            }
        }
    }
    alive = (1u << held) - 1u;
    return reads;
}

// The bit to add to a leaf's skip bits `mask` (or NONE): the one most held queries still
// alive (those without the bits so far) have, among those at least `need` of its keys from
// `lo` (in `temp` where `in_temp`, or held: `in_regs`) have; not `all`, the bits every key has (a query with
// one skips both blocks anyway). The lowest of equals.
fn skip_bit(
    li: u32,
    f: Fill,
    e: Node,
    lo: u32,
    need: u32,
    bits_so_far: vec4<u32>,
    in_temp: bool,
    in_regs: bool,
) -> u32 {
    let open = f.live & ~(bits_so_far.xy | bits_so_far.zw);
    if (li < 128u) {
        atomicStore(&bits[li], 0u);
    }
    workgroupBarrier();
    if (in_regs) {
        for (var k = 0u; k < hold_len; k = k + 1u) {
            if (holds(k, lo, e.keys.y)) {
                count_bits(0u, hold_keys[k] & open);
            }
        }
    } else {
        for (var i = lo + li; i < e.keys.y; i = i + GROUP_SIZE) {
            count_bits(0u, key_at(in_temp, i) & open);
        }
    }
    for (var k = 0u; k < held; k = k + 1u) {
        if ((alive & (1u << k)) != 0u) {
            count_bits(64u, held_qs[k] & open);
        }
    }
    workgroupBarrier();
    if (li == 0u) {
        tested(e.fill, e.keys.y - lo);
        acc = acc + select(e.keys.y - lo, 0u, in_regs);
        var best = NONE;
        var most = 0u;
        for (var b = 0u; b < 64u; b = b + 1u) {
            let w = atomicLoad(&bits[64u + b]);
            if (atomicLoad(&bits[b]) >= need && w > most) {
                best = b;
                most = w;
            }
        }
        chosen = best;
    }
    return workgroupUniformLoad(&chosen);
}

// Drops the held queries with `bit` (a skip bit now: they no longer reach the second
// block's choices).
fn drop_queries(bit: u32) {
    for (var k = 0u; k < held; k = k + 1u) {
        if (has_bit(held_qs[k], bit)) {
            alive = alive & ~(1u << k);
        }
    }
}

// Orders leaf `e` of two blocks (its keys in `temp` where `in_temp`) so that its second
// block's keys share skip bits: round by round the keys from `lo` pass from one buffer to
// the other, those without the round's bit placed (back in `stored` where they are in
// `temp`), or where they are held (`in_regs`), are renumbered so. Leaves every key in
// `stored` or held; returns its rounds (every invocation, uniformly).
fn order_pair(li: u32, f: Fill, e: Node, in_temp: bool, in_regs: bool) -> u32 {
    let before = acc;
    let all = and_of(li, f, e, in_temp, in_regs);
    let reads = hold_reach(li, f, e);
    if (li == 0u) {
        tested(e.fill, reads);
        acc = acc + select(e.keys.y - e.keys.x, 0u, in_regs) + reads;
    }
    let need = e.keys.y - e.keys.x - p.leaf_keys;
    var lo = e.keys.x;
    var mask = vec2<u32>(0u);
    var rounds = 0u;
    var from_temp = in_temp;
    // Each round adds a bit the keys from `lo` do not all have: at most 64 rounds.
    for (var r = 0u; r < 64u; r = r + 1u) {
        rounds = r + 1u;
        let b = skip_bit(li, f, e, lo, need, vec4<u32>(mask, all), from_temp, in_regs);
        if (b == NONE) {
            break;
        }
        if (in_regs) {
            lo = lo + part_held(li, lo, e.keys.y, b);
            mask = with_bit(mask, b);
            drop_queries(b);
            continue;
        }
        let zeros = part_across(li, lo, e.keys.y, b, from_temp);
        from_temp = !from_temp;
        let back = settle(li, lo, lo + zeros, from_temp);
        if (li == 0u) {
            acc = acc + 2u * (e.keys.y - lo) + back;
            wrote = wrote + e.keys.y - lo + back;
        }
        lo = lo + zeros;
        mask = with_bit(mask, b);
        drop_queries(b);
    }
    let back = settle(li, lo, e.keys.y, from_temp && !in_regs);
    if (li == 0u) {
        acc = acc + back;
        wrote = wrote + back;
        stat_add(STAT_PAIR_LEAVES, 1u);
        stat_add(STAT_PAIR_ROUNDS, rounds);
        stat_max_high(STAT_PAIR_ACCESSES_PEAK, rounds);
        stat_add(STAT_PAIR_ACCESSES, acc - before);
        stat_max(STAT_PAIR_ACCESSES_PEAK, acc - before);
    }
    return rounds;
}
