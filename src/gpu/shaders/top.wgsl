// The tree's top levels (tree.wgsl's, in the same module), a dispatch each and a workgroup
// a node: a node splits on its bit and, where a child is large, that child on its own,
// both levels in one pass over the keys, into up to four nodes of the next level. A top
// level's pass reads and writes every key of the fill (HBM's traffic, not L2's), so two
// levels a pass halve the tree's largest cost.
//
// The node's bit is chosen as every node's is (tree.wgsl), from TOP_SAMPLE keys by stride
// (four times a subtree's node's); each child's from the sampled keys that fall in it and
// the sampled queries that reach it, by the same rule. A child is split in the same pass
// where those keys say it holds more than SUBTREE_KEYS keys (it would go on to the next
// level) and a bit splits them; every split's children are not empty (some but not all of
// its sampled keys have its bit). The partition is stable: keys without the node's bit
// first, each child's without its own bit before those with it. Wide nodes (wide.wgsl)
// split the same way across workgroups, so the tree does not depend on which did.

// Keys sampled by stride at a top level's node to choose its bit and its children's.
const TOP_SAMPLE: u32 = 2048u;

// The node's bit and its children's (NONE: no split there), and the children's slots.
var<workgroup> kid_cuts: vec2<u32>;
var<workgroup> reserved: vec3<u32>;
// Sampled keys without and with the node's bit.
var<workgroup> kid_sampled: array<atomic<u32>, 2>;
var<workgroup> part4: array<vec4<u32>, GROUP_SIZE>;

// The exclusive prefix of `v` over the workgroup, four counts at once (`before`), and the
// workgroup's totals.
struct Scan4 {
    before: vec4<u32>,
    total: vec4<u32>,
}

fn excl_scan4(li: u32, v: vec4<u32>) -> Scan4 {
    part4[li] = v;
    workgroupBarrier();
    for (var stride = 1u; stride < GROUP_SIZE; stride = stride * 2u) {
        var add = vec4<u32>(0u);
        if (li >= stride) {
            add = part4[li - stride];
        }
        workgroupBarrier();
        part4[li] = part4[li] + add;
        workgroupBarrier();
    }
    let total = part4[GROUP_SIZE - 1u];
    let before = part4[li] - v;
    workgroupBarrier();
    return Scan4(before, total);
}

// The exclusive prefix of the four counts: where each part starts after the first.
fn starts(t: vec4<u32>) -> vec4<u32> {
    return vec4<u32>(0u, t.x, t.x + t.y, t.x + t.y + t.z);
}

// Which of a top node's four parts key k goes to: 2 if it has `bit`, plus 1 if it has
// its child's cut (`cuts`: the child without the bit's, then the one with it's; NONE: none).
fn part_of(k: vec2<u32>, bit: u32, cuts: vec2<u32>) -> u32 {
    let c = select(0u, 1u, has_bit(k, bit));
    let cut = cuts[c];
    return 2u * c + select(0u, 1u, cut != NONE && has_bit(k, cut));
}

// The best bit for a child of a top node among its `sampled` keys' counts at `keys` in
// `bits` and its queries' at `qs`, as `pick` chooses (thread 0); NONE where there is none
// or the child is not large (its share of the node's `whole` sample of `n` keys).
fn pick_kid(keys: u32, qs: u32, sampled: u32, whole: u32, n: u32) -> u32 {
    if (f32(sampled) * f32(n) <= f32(SUBTREE_KEYS) * f32(whole)) {
        return NONE;
    }
    var best = NONE;
    var score = 0u;
    for (var b = 0u; b < 64u; b = b + 1u) {
        let k = atomicLoad(&bits[keys + b]);
        let s = k * atomicLoad(&bits[qs + b]);
        if (k > 0u && k < sampled && s > score) {
            best = b;
            score = s;
        }
    }
    return best;
}

// The bit to split top node `e` on and its children's (`choose`'s rule for each), as
// (bit, cut of the child without it, cut of the child with it), NONE where none.
fn choose_top(li: u32, f: Fill, e: Node) -> vec3<u32> {
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
    let bit = pick(li, e, sampled, s.x);
    if (bit == NONE) {
        return vec3<u32>(NONE);
    }
    // The children's counts: the child without the bit is reached by the node's queries
    // (64..127 already), the other by those without the bit.
    if (li < 192u) {
        atomicStore(&bits[128u + li], 0u);
    }
    if (li < 2u) {
        atomicStore(&kid_sampled[li], 0u);
    }
    workgroupBarrier();
    let n = e.keys.y - e.keys.x;
    let step = max(n / TOP_SAMPLE, 1u);
    let kmask = mask & ~with_bit(vec2<u32>(0u), bit);
    for (var i = li; i < sampled; i = i + GROUP_SIZE) {
        let k = key_at(in_temp, e.keys.x + i * step);
        let c = select(0u, 1u, has_bit(k, bit));
        atomicAdd(&kid_sampled[c], 1u);
        count_bits(128u + 64u * c, k & kmask);
    }
    for (var i = li; i < s.x; i = i + GROUP_SIZE) {
        let q = queries[f.queries + i * s.y] & f.live;
        if (disjoint(q, e.taken) && !has_bit(q, bit)) {
            count_bits(256u, q & kmask);
        }
    }
    workgroupBarrier();
    if (li == 0u) {
        tested(e.fill, sampled + s.x);
        acc = acc + sampled + s.x;
        let s0 = atomicLoad(&kid_sampled[0]);
        let s1 = atomicLoad(&kid_sampled[1]);
        kid_cuts = vec2<u32>(pick_kid(128u, 64u, s0, sampled, n), pick_kid(192u, 256u, s1, sampled, n));
    }
    let cuts = workgroupUniformLoad(&kid_cuts);
    return vec3<u32>(bit, cuts);
}

// Reserves the slots of top node `e`'s split by `plan` (thread 0): its own, and each
// child's that has a cut and a leaf slot to spare (else that child is not split here).
fn reserve_top(f: Fill, e: Node, plan: vec3<u32>) {
    var r = vec3<u32>(NONE);
    if (plan.x != NONE) {
        r.x = reserve_split(e.fill, f);
    }
    if (r.x != NONE && plan.y != NONE) {
        r.y = reserve_split(e.fill, f);
    }
    if (r.x != NONE && plan.z != NONE) {
        r.z = reserve_split(e.fill, f);
    }
    reserved = r;
}

// The children's cuts a split with slots `r` makes of `plan`'s.
fn cuts_of(plan: vec3<u32>, r: vec3<u32>) -> vec2<u32> {
    return vec2<u32>(select(NONE, plan.y, r.y != NONE), select(NONE, plan.z, r.z != NONE));
}

// Writes top node `e`'s split on `bit` into slots `r`, and its children's by `cuts`, its
// parts holding `t` keys each; leaves the nodes of the next level in `kids` (thread 0).
fn split_top(e: Node, bit: u32, cuts: vec2<u32>, r: vec3<u32>, t: vec4<u32>) {
    let two = split(e, bit, e.keys.x + t.x + t.y, r.x);
    var n = 0u;
    for (var c = 0u; c < 2u; c = c + 1u) {
        if (cuts[c] == NONE) {
            kids[n] = two[c];
            n = n + 1u;
        } else {
            let lo = two[c].keys.x + t[2u * c];
            let four = split(two[c], cuts[c], lo, r[1u + c]);
            kids[n] = four[0];
            kids[n + 1u] = four[1];
            n = n + 2u;
        }
    }
    kid_count = n;
}

// Moves the keys of [lo, hi) from the level's key buffer to the same places of the other,
// in the four parts `part_of` names, each in order; returns each part's keys.
fn part_top(li: u32, lo: u32, hi: u32, bit: u32, cuts: vec2<u32>) -> vec4<u32> {
    let from_temp = level_in_temp();
    let chunk = (hi - lo + GROUP_SIZE - 1u) / GROUP_SIZE;
    let a = min(lo + li * chunk, hi);
    let b = min(a + chunk, hi);
    var mine = vec4<u32>(0u);
    for (var i = a; i < b; i = i + 1u) {
        let j = part_of(key_at(from_temp, i), bit, cuts);
        mine[j] = mine[j] + 1u;
    }
    let s = excl_scan4(li, mine);
    var at = lo + starts(s.total) + s.before;
    for (var i = a; i < b; i = i + 1u) {
        let k = key_at(from_temp, i);
        let j = part_of(k, bit, cuts);
        put_key(!from_temp, at[j], k);
        at[j] = at[j] + 1u;
    }
    return s.total;
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
        stat_max(level_stat(p.level, LEVEL_ACCESSES_PEAK), acc);
        // The host learns from it which levels to split across workgroups.
        stat_max_high(level_stat(p.level, LEVEL_ACCESSES_PEAK), e.keys.y - e.keys.x);
    }
}

// Builds top-level node `e`, the level's g-th (every invocation, uniformly).
fn build_top(li: u32, g: u32, e: Node) {
    if (p.wide != 0u && li == 0u) {
        atomicStore(&scan[wide_word(g, WIDE_TILES)], 0u);
    }
    let f = fills[e.fill];
    let n = e.keys.y - e.keys.x;
    if (n <= SUBTREE_KEYS) {
        if (li == 0u) {
            unsplit(e);
        }
        return;
    }
    let plan = choose_top(li, f, e);
    if (li == 0u) {
        reserve_top(f, e, plan);
    }
    let r = workgroupUniformLoad(&reserved);
    if (r.x == NONE) {
        // Its subtree's workgroup finds it a leaf too.
        if (li == 0u) {
            unsplit(e);
        }
        return;
    }
    let cuts = cuts_of(plan, r);
    if (p.wide != 0u && n > p.wide) {
        go_wide(li, g, e, plan.x, cuts, r);
        return;
    }
    let t = part_top(li, e.keys.x, e.keys.y, plan.x, cuts);
    if (li == 0u) {
        tested(e.fill, n);
        acc = acc + 2u * n;
        split_top(e, plan.x, cuts, r, t);
        place_kids();
    }
}
