// The tree's subtrees and leaves of two blocks (tree.wgsl's second half, in the same
// module): `rest` builds each subtree the top levels listed in one workgroup, depth first;
// `pairs` orders each leaf of two blocks so that the second block's keys share skip bits.

// The bit to split node `e` of `rest` on, by the rule of a top level's (top.wgsl) with
// `p.key_sample` keys (in `temp` where `in_temp`): reads the queries listed for it (`e.pad`
// of them), or lists them from the fill's sample (NONE). Returns the bit and how many
// queries reach the node (more than LISTED: not all are listed).
fn choose_listed(li: u32, f: Fill, e: Node, in_temp: bool) -> vec2<u32> {
    if (li == 0u) {
        atomicStore(&listing, 0u);
    }
    let sampled = count_keys(li, f, e, in_temp, p.key_sample);
    let s = sample_of(f);
    let mask = f.live & ~e.used;
    if (e.pad != NONE) {
        read_listed(li, f, e.pad);
        for (var k = 0u; k < held; k = k + 1u) {
            count_bits(64u, held_qs[k] & mask);
        }
        return vec2<u32>(pick(li, e, sampled, e.pad), e.pad);
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
    let bit = pick(li, e, sampled, s.x);
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
// where leaves and blocks read them.
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
        if (m == BUILD_DONE) {
            break;
        }
        built = built + 1u;
        let e = workgroupUniformLoad(&cur);
        let in_temp = (depth_of(e) & 1u) == temp_parity;
        if (m == BUILD_PAIR) {
            let back = settle(li, e.keys.x, e.keys.y, in_temp);
            if (li == 0u) {
                acc = acc + back;
                leaf(f, e);
                append(PAIRS, e);
            }
            continue;
        }
        var bit = NONE;
        var reach = NONE;
        if (m == BUILD_SPLIT) {
            let c = choose_listed(li, f, e, in_temp);
            bit = c.x;
            reach = c.y;
        }
        if (!split_node(li, f, e, bit, in_temp)) {
            let back = settle(li, e.keys.x, e.keys.y, in_temp);
            if (li == 0u) {
                acc = acc + back;
                leaf(f, e);
            }
            continue;
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
    // A subtree cut short would route queries past keys: the fill counts nothing, and the
    // host cuts its join.
    if (li == 0u && mode != BUILD_DONE) {
        unfinished(root.fill);
    }
    if (li == 0u && built > 0u) {
        stat_add(STAT_SUBTREES, 1u);
        stat_add(STAT_REST_ITERATIONS, built);
        stat_max(STAT_REST_ITERATIONS_PEAK, built);
        stat_add(STAT_REST_ACCESSES, acc);
        stat_max(STAT_REST_ACCESSES_PEAK, acc);
    }
}

// The AND of the keys of node `e`, over the fill's live bits.
fn and_of(li: u32, f: Fill, e: Node) -> vec2<u32> {
    if (li < 2u) {
        atomicStore(&key_and[li], 0xffffffffu);
    }
    workgroupBarrier();
    var acc = f.live;
    for (var i = e.keys.x + li; i < e.keys.y; i = i + GROUP_SIZE) {
        acc = acc & stored[i];
    }
    atomicAnd(&key_and[0], acc.x);
    atomicAnd(&key_and[1], acc.y);
    workgroupBarrier();
    return vec2<u32>(atomicLoad(&key_and[0]), atomicLoad(&key_and[1])) & f.live;
}

// The bit to add to a leaf's skip bits `mask` (or NONE): the one most sampled queries
// reaching the leaf without the bits so far have, among those at least `need` of its keys
// with them ([lo, hi) of `temp` where `in_temp`, else of `stored`) have; not `all`, the
// bits every key has (a query with one
// skips both blocks anyway). The lowest of equals.
fn skip_bit(
    li: u32,
    f: Fill,
    e: Node,
    lo: u32,
    need: u32,
    bits_so_far: vec4<u32>,
    in_temp: bool,
) -> u32 {
    let mask = bits_so_far.xy;
    let all = bits_so_far.zw;
    let s = sample_of(f);
    let n = workgroupUniformLoad(&reach_len);
    let gathered = n <= REACH;
    let len = select(s.x, n, gathered);
    if (li < 128u) {
        atomicStore(&bits[li], 0u);
    }
    if (li == 0u) {
        atomicStore(&reached, 0u);
    }
    workgroupBarrier();
    let open = f.live & ~(mask | all);
    for (var i = lo + li; i < e.keys.y; i = i + GROUP_SIZE) {
        count_bits(0u, key_at(in_temp, i) & open);
    }
    if (gathered) {
        for (var i = li; i < len; i = i + GROUP_SIZE) {
            count_bits(64u, reach_at(i) & open);
        }
    } else {
        for (var i = li; i < len; i = i + GROUP_SIZE) {
            let q = queries[f.queries + i * s.y] & f.live;
            if (disjoint(q, e.taken | mask)) {
                let k = atomicAdd(&reached, 1u);
                if (k < REACH) {
                    set_reach(k, q);
                }
                count_bits(64u, q & open);
            }
        }
    }
    workgroupBarrier();
    if (li == 0u) {
        tested(e.fill, e.keys.y - lo + len);
        acc = acc + e.keys.y - lo + len;
        if (!gathered) {
            reach_len = atomicLoad(&reached);
        }
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

// Drops the gathered queries with `bit` (a skip bit now: they no longer reach the second
// block's choices), so that the next round reads only the others.
fn drop_queries(li: u32, bit: u32) {
    let n = workgroupUniformLoad(&reach_len);
    if (n > REACH) {
        return;
    }
    var mine: array<vec2<u32>, REACH_EACH>;
    var kept = 0u;
    for (var k = 0u; k < REACH_EACH; k = k + 1u) {
        let i = li + k * GROUP_SIZE;
        if (i < n) {
            let q = reach_at(i);
            if (!has_bit(q, bit)) {
                mine[kept] = q;
                kept = kept + 1u;
            }
        }
    }
    // Every invocation has read its entries before any writes (the scan's barriers).
    let at = excl_scan(li, kept);
    for (var k = 0u; k < kept; k = k + 1u) {
        set_reach(at.x + k, mine[k]);
    }
    if (li == 0u) {
        reach_len = at.y;
    }
}

// Each leaf of two blocks, a workgroup each: its keys ordered so that those of its second
// block share the skip bits (see the top).
@compute @workgroup_size(GROUP_SIZE)
fn pairs(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let g = flat_group(wg);
    if (g >= min(atomicLoad(&scan[list_len(PAIRS)]), p.pair_cap)) {
        return;
    }
    let e = lists[list_at(PAIRS) + g];
    let f = fills[e.fill];
    let all = and_of(li, f, e);
    if (li == 0u) {
        // None gathered yet: the first round reads the fill's sample.
        reach_len = NONE;
        acc = e.keys.y - e.keys.x;
    }
    let need = e.keys.y - e.keys.x - p.leaf_keys;
    var lo = e.keys.x;
    var mask = vec2<u32>(0u);
    var rounds = 0u;
    // The keys from `lo` pass from one buffer to the other each round; those placed (the
    // ones without the round's bit) go back to `stored` where they are in `temp`.
    var in_temp = false;
    // Each round adds a bit the keys from `lo` do not all have: at most 64 rounds.
    for (var r = 0u; r < 64u; r = r + 1u) {
        rounds = r + 1u;
        let b = skip_bit(li, f, e, lo, need, vec4<u32>(mask, all), in_temp);
        if (b == NONE) {
            break;
        }
        let zeros = part_across(li, lo, e.keys.y, b, in_temp);
        in_temp = !in_temp;
        let back = settle(li, lo, lo + zeros, in_temp);
        if (li == 0u) {
            acc = acc + 2u * (e.keys.y - lo) + back;
        }
        lo = lo + zeros;
        mask = with_bit(mask, b);
        drop_queries(li, b);
    }
    let back = settle(li, lo, e.keys.y, in_temp);
    if (li == 0u) {
        acc = acc + back;
        stat_add(STAT_PAIR_LEAVES, 1u);
        stat_add(STAT_PAIR_ROUNDS, rounds);
        stat_max(STAT_PAIR_ROUNDS_PEAK, rounds);
        stat_add(STAT_PAIR_ACCESSES, acc);
        stat_max(STAT_PAIR_ACCESSES_PEAK, acc);
    }
}
