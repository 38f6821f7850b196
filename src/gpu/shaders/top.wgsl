// The tree's top levels (tree.wgsl's, in the same module), a dispatch each and a workgroup
// a node: a node splits on its bit, and where a child is large that child on its own, and
// so on for TOP_DEPTH of the tree's levels, all in one pass over the keys, into up to
// TOP_PARTS nodes of the next level. A top level's pass reads and writes every key of the
// fill (HBM's traffic, not L2's), so several of the tree's levels a pass cut the tree's
// largest cost by as much.
//
// Each node of a pass chooses its bit as every node does (tree.wgsl), from keys sampled by
// stride: the pass's first node from up to TOP_SAMPLE of its keys (`top_sample`), each node
// below it from those of them that fall in it, with the sampled queries that reach it, four
// nodes of a depth a read of them (TOP_GROUP: `bits` holds four). A node below the first is
// split in the same pass where those keys say it holds more than SUBTREE_KEYS keys (it
// would go on to the next level) and a bit splits them; every split's children are not
// empty (some but not all of its sampled keys have its bit). The nodes of a pass are
// numbered as in a heap (1 the first, 2i and 2i + 1 the children of i without and with its
// bit), and a key goes to the part below the last split on its path: the parts in order are
// a stable partition. Wide nodes (wide.wgsl) split the same way across workgroups, so the
// tree does not depend on which did.

// TOP_DEPTH, TOP_PARTS and TOP_SAMPLE (layout.rs): the tree's levels one top pass splits,
// the parts it moves keys into (TOP_QUADS vectors of four: the scans take them four at
// once), and the keys sampled by stride at its first node. TOP_GROUP: the nodes of one
// depth whose sampled bits `bits` counts at once.

// The pass's cuts (the bit of each node of the heap, NONE: not split, or not a node) and
// the first of each split's node slots.
var<workgroup> cuts: array<u32, TOP_PARTS>;
var<workgroup> cut_slots: array<u32, TOP_PARTS>;
// The sampled keys of each node of the depth being chosen, and each node's path: the bits
// it used and took (xy, zw); the depth's nodes (those whose parents split) in order
// (`on_list`, `on_count`), and each node's place among them (`on_rank`, NONE: none).
var<workgroup> node_sampled: array<atomic<u32>, TOP_PARTS>;
var<workgroup> paths: array<vec4<u32>, TOP_PARTS>;
var<workgroup> on_list: array<u32, TOP_PARTS>;
var<workgroup> on_rank: array<u32, TOP_PARTS>;
var<workgroup> on_count: u32;

// Counts of a pass's parts, four to a vector (a function's `var` of it starts at zero).
struct Parts {
    q: array<vec4<u32>, TOP_QUADS>,
}

// One key of part j.
fn unit(j: u32) -> Parts {
    var a: Parts;
    for (var i = 0u; i < TOP_QUADS; i = i + 1u) {
        let v = vec4<u32>(4u * i) + vec4<u32>(0u, 1u, 2u, 3u);
        a.q[i] = select(vec4<u32>(0u), vec4<u32>(1u), v == vec4<u32>(j));
    }
    return a;
}

fn plus(a: Parts, b: Parts) -> Parts {
    var c = a;
    var d = b;
    for (var i = 0u; i < TOP_QUADS; i = i + 1u) {
        c.q[i] = c.q[i] + d.q[i];
    }
    return c;
}

// Part j's count.
fn in_part(a: Parts, j: u32) -> u32 {
    var c = a;
    return c.q[j >> 2u][j & 3u];
}

// The exclusive prefix of each part's count over the workgroup (`before`), and the
// workgroup's totals (every invocation, uniformly).
struct PartsScan {
    before: Parts,
    total: Parts,
}

fn excl_scan_parts(li: u32, a: Parts) -> PartsScan {
    var c = a;
    var out: PartsScan;
    for (var i = 0u; i < TOP_QUADS; i = i + 1u) {
        let s = excl_scan4(li, c.q[i]);
        out.before.q[i] = s.before;
        out.total.q[i] = s.total;
    }
    return out;
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
fn keys_in(t: Parts, r: vec2<u32>) -> u32 {
    var n = 0u;
    for (var j = r.x; j < r.y; j = j + 1u) {
        n = n + in_part(t, j);
    }
    return n;
}

// The path of each node of depth d of the pass from node `e` (thread 0): where every node
// above it on its way splits, the bits its way used and those whose child with the bit it
// took; the list of those nodes. The others do not split.
fn set_paths(e: Node, d: u32) {
    let first = 1u << d;
    on_count = 0u;
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
        on_rank[j] = NONE;
        cuts[first + j] = NONE;
        if (on == 1u) {
            on_rank[j] = on_count;
            on_list[on_count] = j;
            on_count = on_count + 1u;
        }
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
// (by `step`) and its fill's sampled queries (every invocation, uniformly), TOP_GROUP of
// the depth's nodes a read of them.
fn choose_depth(li: u32, f: Fill, e: Node, d: u32, sampled: u32, step: u32) {
    // Every invocation is done with the last depth's counts.
    workgroupBarrier();
    if (li == 0u) {
        set_paths(e, d);
    }
    let nodes = workgroupUniformLoad(&on_count);
    for (var g0 = 0u; g0 < nodes; g0 = g0 + TOP_GROUP) {
        choose_group(li, f, e, d, vec2<u32>(g0, min(g0 + TOP_GROUP, nodes)), sampled, step);
    }
}

// Chooses the cuts of the depth's nodes [r.x, r.y) of `on_list` (`choose_depth`).
fn choose_group(li: u32, f: Fill, e: Node, d: u32, r: vec2<u32>, sampled: u32, step: u32) {
    // Every invocation is done with the last group's counts.
    workgroupBarrier();
    for (var i = li; i < 128u * (r.y - r.x); i = i + GROUP_SIZE) {
        atomicStore(&bits[i], 0u);
    }
    if (li < r.y - r.x) {
        atomicStore(&node_sampled[on_list[r.x + li]], 0u);
    }
    workgroupBarrier();
    let in_temp = level_in_temp();
    for (var i = li; i < sampled; i = i + GROUP_SIZE) {
        let k = key_at(in_temp, e.keys.x + i * step);
        let j = node_at(k, d);
        let g = on_rank[j];
        if (g != NONE && g >= r.x && g < r.y) {
            atomicAdd(&node_sampled[j], 1u);
            count_bits(128u * (g - r.x), k & f.live & ~paths[j].xy);
        }
    }
    let s = sample_of(f);
    for (var i = li; i < s.x; i = i + GROUP_SIZE) {
        let q = queries[f.queries + i * s.y] & f.live;
        for (var g = r.x; g < r.y; g = g + 1u) {
            let j = on_list[g];
            if (disjoint(q, paths[j].zw)) {
                count_bits(128u * (g - r.x) + 64u, q & ~paths[j].xy);
            }
        }
    }
    workgroupBarrier();
    if (li == 0u) {
        tested(e.fill, sampled + s.x);
        acc = acc + sampled + s.x;
        let n = e.keys.y - e.keys.x;
        let first = 1u << d;
        for (var g = r.x; g < r.y; g = g + 1u) {
            let j = on_list[g];
            let m = atomicLoad(&node_sampled[j]);
            // Large: by its share of the sample, more keys than a subtree takes.
            if (f32(m) * f32(n) > f32(SUBTREE_KEYS) * f32(sampled)) {
                cuts[first + j] = best_bit(128u * (g - r.x), m);
            }
        }
    }
}

// The keys a top node of n keys samples, at most: 1,024 for each subtree's worth of them,
// so every node of its pass that splits (more than SUBTREE_KEYS keys) chooses from about
// 1,024 or more, and up to TOP_SAMPLE (512 a node of the pass's deepest level). A node of
// a few subtrees' keys sampled TOP_SAMPLE would read them all, twice, for a pass of one
// or two levels.
fn top_sample(n: u32) -> u32 {
    return min(TOP_SAMPLE, max(n / SUBTREE_KEYS, 1u) * 1024u);
}

// Chooses the cuts of top node `e`'s pass, and reserves their slots (every invocation,
// uniformly): a node below the first is split only where a slot is left for it too. False
// where `e` does not split.
fn plan_top(li: u32, f: Fill, e: Node) -> bool {
    let in_temp = level_in_temp();
    let most = top_sample(e.keys.y - e.keys.x);
    let sampled = count_keys(li, f, e, in_temp, most);
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
    let step = max((e.keys.y - e.keys.x) / most, 1u);
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
// keys each, and places the nodes it makes of the next level (thread 0).
fn split_top(e: Node, t: Parts) {
    var nodes: array<Node, 2 * TOP_PARTS>;
    nodes[1] = e;
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
            place(nodes[i]);
        }
    }
}

// Moves the keys of [lo, hi) from the level's key buffer to the same places of the other,
// in the parts `part_of` names, each in order; returns each part's keys.
fn part_top(li: u32, lo: u32, hi: u32) -> Parts {
    let from_temp = level_in_temp();
    let chunk = (hi - lo + GROUP_SIZE - 1u) / GROUP_SIZE;
    let a = min(lo + li * chunk, hi);
    let b = min(a + chunk, hi);
    var mine: Parts;
    for (var i = a; i < b; i = i + 1u) {
        mine = plus(mine, unit(part_of(key_at(from_temp, i))));
    }
    let s = excl_scan_parts(li, mine);
    let t = s.total;
    var at = starts(lo, t, s.before);
    for (var i = a; i < b; i = i + 1u) {
        let k = key_at(from_temp, i);
        let j = part_of(k);
        put_key(!from_temp, in_part(at, j), k);
        at = plus(at, unit(j));
    }
    return t;
}

// Where each part's keys go from `lo`, parts holding `t` keys, `before` of each ahead.
fn starts(lo: u32, t: Parts, before: Parts) -> Parts {
    var c = t;
    var b = before;
    var out: Parts;
    var run = lo;
    for (var i = 0u; i < TOP_QUADS; i = i + 1u) {
        let x = c.q[i];
        out.q[i] = vec4<u32>(run) + vec4<u32>(0u, x.x, x.x + x.y, x.x + x.y + x.z) + b.q[i];
        run = run + x.x + x.y + x.z + x.w;
    }
    return out;
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
// (thread 0): the blocks they take at least, and the cuts of the pass's first ROOT_PARTS
// - 1 nodes (its first three levels) in its node and leaf counters, which no other node of
// it reads now: each bit plus one (0: no split), a byte each in the heap's order from its
// first node, four to a word, the second word marked.
fn stop_past_room(fid: u32, n: u32) {
    atomicStore(&scan[counter(fid, TREE_BLOCKS)], n / PAST_ROOM_KEYS + 1u);
    var packed = vec2<u32>(0u, ROOT_CUTS_MARK);
    for (var i = 1u; i < ROOT_PARTS; i = i + 1u) {
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
    }
}
