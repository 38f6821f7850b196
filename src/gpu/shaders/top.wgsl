// The tree's top levels (tree.wgsl's, in the same module), a dispatch each and a workgroup
// a node: a node splits on its bit, and where a child is large that child on its own, and
// so on for TOP_DEPTH of the tree's levels, all in one pass over the keys, into up to
// TOP_PARTS nodes of the next level. A top level's pass reads and writes every key of the
// fill (HBM's traffic, not L2's), so several of the tree's levels a pass cut the tree's
// largest cost by as much.
//
// Each node of a pass chooses its bit as every node does (tree.wgsl), from keys sampled by
// stride: the pass's first node from TOP_SAMPLE of its keys, each node below it from those
// of them that fall in it, with the sampled queries that reach it. A node below the first
// is split in the same pass where those keys say it holds more than SUBTREE_KEYS keys (it
// would go on to the next level) and a bit splits them; every split's children are not
// empty (some but not all of its sampled keys have its bit). The nodes of a pass are
// numbered as in a heap (1 the first, 2i and 2i + 1 the children of i without and with its
// bit), and a key goes to the part below the last split on its path: the parts in order are
// a stable partition. Wide nodes (wide.wgsl) split the same way across workgroups, so the
// tree does not depend on which did.

// TOP_DEPTH, TOP_PARTS and TOP_SAMPLE (layout.rs): the tree's levels one top pass splits,
// the parts it moves keys into (eight: the scans take them four at once), and the keys
// sampled by stride at its first node.

// The pass's cuts (the bit of each node of the heap, NONE: not split, or not a node) and
// the first of each split's node slots.
var<workgroup> cuts: array<u32, TOP_PARTS>;
var<workgroup> cut_slots: array<u32, TOP_PARTS>;
// The sampled keys of each node of the depth being chosen, and each node's path: the bits
// it used and took (xy, zw), where it is a node (`on`).
var<workgroup> node_sampled: array<atomic<u32>, 4>;
var<workgroup> paths: array<vec4<u32>, 4>;
var<workgroup> path_on: array<u32, 4>;

// Counts of a pass's eight parts, four to a vector.
struct Eight {
    lo: vec4<u32>,
    hi: vec4<u32>,
}

// One key of part j.
fn unit(j: u32) -> Eight {
    let v = vec4<u32>(j);
    let one = vec4<u32>(1u);
    let none = vec4<u32>(0u);
    return Eight(select(none, one, v == vec4<u32>(0u, 1u, 2u, 3u)),
        select(none, one, v == vec4<u32>(4u, 5u, 6u, 7u)));
}

fn plus(a: Eight, b: Eight) -> Eight {
    return Eight(a.lo + b.lo, a.hi + b.hi);
}

// Part j's count.
fn in_part(a: Eight, j: u32) -> u32 {
    return select(a.lo, a.hi, j >= 4u)[j & 3u];
}

// The part key k goes to by the pass's `cuts`.
fn part_of(k: vec2<u32>) -> u32 {
    var i = 1u;
    for (var d = 0u; d < TOP_DEPTH; d = d + 1u) {
        let c = cuts[i];
        i = 2u * i + select(0u, 1u, c != NONE && has_bit(k, c));
    }
    return i - TOP_PARTS;
}

// The first part below heap node i of depth d, and past its last.
fn parts_below(i: u32, d: u32) -> vec2<u32> {
    let s = TOP_DEPTH - d;
    return vec2<u32>((i << s) - TOP_PARTS, ((i + 1u) << s) - TOP_PARTS);
}

// The keys of parts [r.x, r.y) of counts `t`.
fn keys_in(t: Eight, r: vec2<u32>) -> u32 {
    var n = 0u;
    for (var j = r.x; j < r.y; j = j + 1u) {
        n = n + in_part(t, j);
    }
    return n;
}

// The path of each node of depth d of the pass from node `e` (thread 0): where every node
// above it on its way splits, the bits its way used and those whose child with the bit it
// took.
fn set_paths(e: Node, d: u32) {
    let first = 1u << d;
    for (var j = 0u; j < first; j = j + 1u) {
        let i = first + j;
        var used = e.used;
        var taken = e.taken;
        var on = 1u;
        for (var up = d; up > 0u; up = up - 1u) {
            let c = cuts[i >> up];
            if (c == NONE) {
                on = 0u;
                break;
            }
            used = with_bit(used, c);
            if (((i >> (up - 1u)) & 1u) == 1u) {
                taken = with_bit(taken, c);
            }
        }
        paths[j] = vec4<u32>(used, taken);
        path_on[j] = on;
    }
}

// The node of depth d (its index among that depth's) key k reaches, by the cuts so far.
fn node_at(k: vec2<u32>, d: u32) -> u32 {
    var i = 1u;
    for (var up = 0u; up < d; up = up + 1u) {
        i = 2u * i + select(0u, 1u, has_bit(k, cuts[i]));
    }
    return i - (1u << d);
}

// Chooses the cuts of the nodes of depth d >= 1 of node `e`'s pass from its `sampled` keys
// (by `step`) and its fill's sampled queries (every invocation, uniformly).
fn choose_depth(li: u32, f: Fill, e: Node, d: u32, sampled: u32, step: u32) {
    let first = 1u << d;
    // Every invocation is done with the last depth's counts.
    workgroupBarrier();
    if (li == 0u) {
        set_paths(e, d);
    }
    for (var i = li; i < 128u * first; i = i + GROUP_SIZE) {
        atomicStore(&bits[i], 0u);
    }
    if (li < first) {
        atomicStore(&node_sampled[li], 0u);
    }
    workgroupBarrier();
    let in_temp = level_in_temp();
    for (var i = li; i < sampled; i = i + GROUP_SIZE) {
        let k = key_at(in_temp, e.keys.x + i * step);
        let j = node_at(k, d);
        if (path_on[j] == 1u) {
            atomicAdd(&node_sampled[j], 1u);
            count_bits(128u * j, k & f.live & ~paths[j].xy);
        }
    }
    let s = sample_of(f);
    for (var i = li; i < s.x; i = i + GROUP_SIZE) {
        let q = queries[f.queries + i * s.y] & f.live;
        for (var j = 0u; j < first; j = j + 1u) {
            if (path_on[j] == 1u && disjoint(q, paths[j].zw)) {
                count_bits(128u * j + 64u, q & ~paths[j].xy);
            }
        }
    }
    workgroupBarrier();
    if (li == 0u) {
        tested(e.fill, sampled + s.x);
        acc = acc + sampled + s.x;
        let n = e.keys.y - e.keys.x;
        for (var j = 0u; j < first; j = j + 1u) {
            let m = atomicLoad(&node_sampled[j]);
            // Large: by its share of the sample, more keys than a subtree takes.
            let large = f32(m) * f32(n) > f32(SUBTREE_KEYS) * f32(sampled);
            var c = NONE;
            if (path_on[j] == 1u && large) {
                c = best_bit(128u * j, m);
            }
            cuts[first + j] = c;
        }
    }
}

// Chooses the cuts of top node `e`'s pass, and reserves their slots (every invocation,
// uniformly): a node below the first is split only where a slot is left for it too. False
// where `e` does not split.
fn plan_top(li: u32, f: Fill, e: Node) -> bool {
    let in_temp = level_in_temp();
    let sampled = count_keys(li, f, e, in_temp, TOP_SAMPLE);
    let s = sample_of(f);
    let mask = f.live & ~e.used;
    for (var i = li; i < s.x; i = i + GROUP_SIZE) {
        let q = queries[f.queries + i * s.y] & f.live;
        if (disjoint(q, e.taken)) {
            count_bits(64u, q & mask);
        }
    }
    let bit = pick(li, e, sampled, s.x, sampled);
    if (bit == NONE) {
        return false;
    }
    if (li == 0u) {
        for (var i = 0u; i < TOP_PARTS; i = i + 1u) {
            cuts[i] = NONE;
        }
        cuts[1] = bit;
    }
    let step = max((e.keys.y - e.keys.x) / TOP_SAMPLE, 1u);
    for (var d = 1u; d < TOP_DEPTH; d = d + 1u) {
        choose_depth(li, f, e, d, sampled, step);
    }
    if (li == 0u) {
        reserve_top(f, e);
    }
    return workgroupUniformLoad(&cuts[1]) != NONE;
}

// Reserves the slots of the pass's splits, from its first node down (thread 0): a node
// whose parent did not split is none, and one without a slot to spare does not split.
fn reserve_top(f: Fill, e: Node) {
    for (var i = 1u; i < TOP_PARTS; i = i + 1u) {
        if (i > 1u && cuts[i / 2u] == NONE) {
            cuts[i] = NONE;
        }
        var a = NONE;
        if (cuts[i] != NONE) {
            a = reserve_split(e.fill, f);
        }
        if (a == NONE) {
            cuts[i] = NONE;
        }
        cut_slots[i] = a;
    }
}

// Writes the splits of top node `e`'s pass (`cuts`, `cut_slots`), its parts holding `t`
// keys each; leaves the nodes of the next level in `kids` (thread 0).
fn split_top(e: Node, t: Eight) {
    var nodes: array<Node, 16>;
    nodes[1] = e;
    var n = 0u;
    for (var i = 1u; i < 2u * TOP_PARTS; i = i + 1u) {
        // A node of the pass where its parent splits.
        if (i > 1u && cuts[i / 2u] == NONE) {
            continue;
        }
        if (i < TOP_PARTS && cuts[i] != NONE) {
            let d = firstLeadingBit(i);
            let mid = nodes[i].keys.x + keys_in(t, parts_below(2u * i, d + 1u));
            let two = split(nodes[i], cuts[i], mid, cut_slots[i]);
            nodes[2u * i] = two[0];
            nodes[2u * i + 1u] = two[1];
        } else {
            kids[n] = nodes[i];
            n = n + 1u;
        }
    }
    kid_count = n;
}

// Moves the keys of [lo, hi) from the level's key buffer to the same places of the other,
// in the parts `part_of` names, each in order; returns each part's keys.
fn part_top(li: u32, lo: u32, hi: u32) -> Eight {
    let from_temp = level_in_temp();
    let chunk = (hi - lo + GROUP_SIZE - 1u) / GROUP_SIZE;
    let a = min(lo + li * chunk, hi);
    let b = min(a + chunk, hi);
    var mine = Eight(vec4<u32>(0u), vec4<u32>(0u));
    for (var i = a; i < b; i = i + 1u) {
        mine = plus(mine, unit(part_of(key_at(from_temp, i))));
    }
    let low = excl_scan4(li, mine.lo);
    let high = excl_scan4(li, mine.hi);
    let t = Eight(low.total, high.total);
    var at = starts(lo, t, Eight(low.before, high.before));
    for (var i = a; i < b; i = i + 1u) {
        let k = key_at(from_temp, i);
        let j = part_of(k);
        put_key(!from_temp, in_part(at, j), k);
        at = plus(at, unit(j));
    }
    return t;
}

// Where each part's keys go from `lo`, parts holding `t` keys, `before` of each ahead.
fn starts(lo: u32, t: Eight, before: Eight) -> Eight {
    let x = t.lo;
    let first = vec4<u32>(0u, x.x, x.x + x.y, x.x + x.y + x.z);
    let low = vec4<u32>(lo) + first;
    let high = vec4<u32>(low.w + x.w) + vec4<u32>(0u, t.hi.x, t.hi.x + t.hi.y,
        t.hi.x + t.hi.y + t.hi.z);
    return Eight(low + before.lo, high + before.hi);
}

// Sends a top-level child to the next level's list, or to the subtrees', marked (`pad` 1)
// where its keys lie in `temp`.
fn place(e: Node) {
    let next = p.level + 1u;
    let big = e.keys.y - e.keys.x > SUBTREE_KEYS;
    var kid = e;
    kid.pad = select(0u, 1u, !level_in_temp());
    append(select(TOP_LEVELS, next, big && next < p.top_levels), kid);
}

// Places the nodes `split_top` left in `kids` (thread 0).
fn place_kids() {
    for (var i = 0u; i < kid_count; i = i + 1u) {
        place(kids[i]);
    }
}

// Sends a top-level node that does not split to the subtrees', marked as `place` marks.
fn unsplit(e: Node) {
    var n = e;
    n.pad = select(0u, 1u, level_in_temp());
    append(TOP_LEVELS, n);
}

// No node: its fill is NONE.
fn no_node() -> Node {
    return Node(vec2<u32>(0u), 0u, NONE, vec2<u32>(0u), vec2<u32>(0u), NONE, 0u);
}

// The node top-level workgroup g takes, with `fill` NONE where it takes none.
fn top_node(g: u32) -> Node {
    var e = no_node();
    if (p.level > 0u) {
        // The level's dispatch has room for its whole list; its length is known now.
        let len = min(atomicLoad(&scan[list_len(p.level)]), p.level_cap);
        if (g < len) {
            e = lists[list_at(p.level) + g];
        }
        return e;
    }
    if (g < p.joins) {
        let f = fills[g];
        if ((f.status & FILL_ERRORS) == 0u && f.stored < f.stored_end) {
            e = Node(vec2<u32>(f.stored, f.stored_end), f.root, NONE, vec2<u32>(0u),
                vec2<u32>(0u), g, 0u);
        }
    }
    return e;
}

// One top level (`p.level`): each of its large nodes split, a workgroup each; at a wide
// level, a node of more than `p.wide` keys only chooses its bits and reserves its slots
// here, and hands out the tiles `wide_*` partition it in.
@compute @workgroup_size(GROUP_SIZE)
fn top(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let g = flat_group(wg);
    let e = top_node(g);
    if (e.fill == NONE) {
        return;
    }
    build_top(li, g, e);
    if (li == 0u) {
        stat_add(level_stat(p.level, LEVEL_NODES), 1u);
        stat_add(level_stat(p.level, LEVEL_ACCESSES), acc);
        stat_add(STAT_TOP_WRITES, wrote);
        stat_max(level_stat(p.level, LEVEL_ACCESSES_PEAK), acc);
        // The host learns from it which levels to split across workgroups.
        stat_max_high(level_stat(p.level, LEVEL_ACCESSES_PEAK), e.keys.y - e.keys.x);
    }
}

// Stops fill `fid`'s tree at its root's pass, its `n` keys past the batch's blocks' room
// (thread 0): the blocks they take at least, and the pass's cuts in its node and leaf
// counters, which no other node of it reads now: each bit plus one (0: no split), a byte
// each in the heap's order from its first node, four to a word, the second word marked.
fn stop_past_room(fid: u32, n: u32) {
    atomicStore(&scan[counter(fid, TREE_BLOCKS)], n / PAST_ROOM_KEYS + 1u);
    var packed = vec2<u32>(0u, ROOT_CUTS_MARK);
    for (var i = 1u; i < TOP_PARTS; i = i + 1u) {
        let c = select(cuts[i] + 1u, 0u, cuts[i] == NONE);
        packed[(i - 1u) / 4u] |= c << (8u * ((i - 1u) % 4u));
    }
    atomicStore(&scan[counter(fid, TREE_NODES)], packed.x);
    atomicStore(&scan[counter(fid, TREE_LEAVES)], packed.y);
    atomicOr(&scan[counter(fid, TREE_UNFINISHED)], TREE_PAST_ROOM);
}

// Builds top-level node `e`, the level's g-th (every invocation, uniformly).
fn build_top(li: u32, g: u32, e: Node) {
    if (p.wide != 0u && li == 0u) {
        atomicStore(&scan[wide_word(g, WIDE_TILES)], 0u);
    }
    let f = fills[e.fill];
    let n = e.keys.y - e.keys.x;
    if (n <= SUBTREE_KEYS || !plan_top(li, f, e)) {
        // Its subtree's workgroup finds it a leaf where it does not split.
        if (li == 0u) {
            unsplit(e);
        }
        return;
    }
    if (p.level == 0u && li == 0u) {
        atomicStore(&scan[counter(e.fill, TREE_ROOT)], cuts[1] + 1u);
    }
    if (p.level == 0u && n / PAST_ROOM_KEYS >= p.block_cap) {
        // Its blocks would pass the batch's room alone: the host splits it as this pass
        // would, or cuts it, without the rest of its tree.
        if (li == 0u) {
            stop_past_room(e.fill, n);
        }
        return;
    }
    if (p.wide != 0u && n > p.wide) {
        go_wide(li, g, e);
        return;
    }
    let t = part_top(li, e.keys.x, e.keys.y);
    if (li == 0u) {
        tested(e.fill, n);
        acc = acc + 2u * n;
        wrote = wrote + n;
        split_top(e, t);
        place_kids();
    }
}
