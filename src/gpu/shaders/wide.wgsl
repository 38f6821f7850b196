// A top level's nodes split across workgroups (top.wgsl's `top` hands them out, past
// `p.wide` keys): the node's own workgroup chooses its pass's cuts and reserves their slots
// and its tiles (`go_wide`), `wide_count` counts each tile's keys in each of the pass's
// parts, and `wide_move` moves them to the other key buffer, each tile summing its node's
// counts before it, as stably as `part_top` does; the node's first tile writes the pass's
// splits. Part of the tree's module.

// Word w (WIDE_*) of the wide split of the level's node g.
fn wide_word(g: u32, w: u32) -> u32 {
    return p.wide_at + g * WIDE_WORDS + w;
}

// Word w of tile t: its node's number in the level, then its parts' keys (16 bits each).
fn tile_word(t: u32, w: u32) -> u32 {
    return p.tiles_at + TILE_WORDS * t + w;
}

// The first tile `go_wide` handed out, or NONE.
var<workgroup> first_tile: u32;

// Readies top node `e` (the level's g-th) to be split by its pass's cuts (`cuts`,
// `cut_slots`) across workgroups: reserves its tiles, each tile's first word naming the
// node. Where the level has no tile to spare its fill is unfinished (the host cuts its
// join).
fn go_wide(li: u32, g: u32, e: Node) {
    let tiles = (e.keys.y - e.keys.x + WIDE_TILE - 1u) / WIDE_TILE;
    if (li == 0u) {
        var first = atomicAdd(&scan[HEAD_TILES + p.level], tiles);
        if (first + tiles > p.tile_cap) {
            unfinished(e.fill);
            first = NONE;
        }
        first_tile = first;
        stat_add(level_stat(p.level, LEVEL_TILES), tiles);
    }
    let first = workgroupUniformLoad(&first_tile);
    if (first == NONE) {
        return;
    }
    for (var i = li; i < tiles; i = i + GROUP_SIZE) {
        atomicStore(&scan[tile_word(first + i, 0u)], g);
    }
    if (li < TOP_PARTS) {
        atomicStore(&scan[wide_word(g, WIDE_CUTS + li)], cuts[li]);
        atomicStore(&scan[wide_word(g, WIDE_SLOTS + li)], cut_slots[li]);
    }
    if (li == 0u) {
        atomicStore(&scan[wide_word(g, WIDE_FIRST)], first);
        atomicStore(&scan[wide_word(g, WIDE_TILES)], tiles);
    }
}

// A tile of a node split across workgroups: the node, its number in the level, and the
// tile's keys.
struct Tile {
    e: Node,
    g: u32,
    keys: vec2<u32>,
}

// Tile t of the level, with `e.fill` NONE past the tiles handed out.
fn tile_at(t: u32) -> Tile {
    if (t >= min(atomicLoad(&scan[HEAD_TILES + p.level]), p.tile_cap)) {
        return Tile(no_node(), NONE, vec2<u32>(0u));
    }
    let g = atomicLoad(&scan[tile_word(t, 0u)]);
    let e = top_node(g);
    let lo = e.keys.x + (t - atomicLoad(&scan[wide_word(g, WIDE_FIRST)])) * WIDE_TILE;
    return Tile(e, g, vec2<u32>(lo, min(lo + WIDE_TILE, e.keys.y)));
}

// The cuts of node g's pass (WIDE_CUTS), and its splits' slots (WIDE_SLOTS).
fn wide_cuts(g: u32) -> Cuts {
    var c: array<u32, TOP_PARTS>;
    for (var i = 0u; i < TOP_PARTS; i = i + 1u) {
        c[i] = atomicLoad(&scan[wide_word(g, WIDE_CUTS + i)]);
    }
    return Cuts(c);
}

fn wide_slots(g: u32) -> array<u32, TOP_PARTS> {
    var c: array<u32, TOP_PARTS>;
    for (var i = 0u; i < TOP_PARTS; i = i + 1u) {
        c[i] = atomicLoad(&scan[wide_word(g, WIDE_SLOTS + i)]);
    }
    return c;
}

// One key counted in part j, packed as tiles keep their counts: part j in the low (even j)
// or high half of word j / 2 (a tile's or a round's counts stay below 65,536).
fn one_in(j: u32) -> vec4<u32> {
    var v = vec4<u32>(0u);
    v[j / 2u] = 1u << (16u * (j % 2u));
    return v;
}

// Part j's count of packed counts `v`.
fn count_in(v: vec4<u32>, j: u32) -> u32 {
    return (v[j / 2u] >> (16u * (j % 2u))) & 0xffffu;
}

// Counts each tile's keys in each part of its node's pass (its words 1 to 4, packed).
@compute @workgroup_size(GROUP_SIZE)
fn wide_count(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let t = flat_group(wg);
    let x = tile_at(t);
    if (x.e.fill == NONE) {
        return;
    }
    let c = wide_cuts(x.g);
    let from_temp = level_in_temp();
    var mine = vec4<u32>(0u);
    for (var i = x.keys.x + li; i < x.keys.y; i = i + GROUP_SIZE) {
        mine = mine + one_in(part_of(key_at(from_temp, i), c));
    }
    let s = excl_scan4(li, mine);
    if (li < 4u) {
        atomicStore(&scan[tile_word(t, 1u + li)], s.total[li]);
    }
}

// Each part's keys in the tiles of node g (the level's) before tile t, and in all of them
// (`before`, `total`): each tile's workgroup sums its node's counts itself, so no step of
// its own scans them.
fn parts_around(li: u32, g: u32, t: u32) -> array<array<u32, TOP_PARTS>, 2> {
    let first = atomicLoad(&scan[wide_word(g, WIDE_FIRST)]);
    let tiles = atomicLoad(&scan[wide_word(g, WIDE_TILES)]);
    var before: array<u32, TOP_PARTS>;
    var all: array<u32, TOP_PARTS>;
    for (var i = li; i < tiles; i = i + GROUP_SIZE) {
        var w = vec4<u32>(0u);
        for (var k = 0u; k < 4u; k = k + 1u) {
            w[k] = atomicLoad(&scan[tile_word(first + i, 1u + k)]);
        }
        for (var j = 0u; j < TOP_PARTS; j = j + 1u) {
            let z = count_in(w, j);
            all[j] = all[j] + z;
            before[j] = before[j] + select(0u, z, first + i < t);
        }
    }
    let b0 = excl_scan4(li, vec4<u32>(before[0], before[1], before[2], before[3])).total;
    let b1 = excl_scan4(li, vec4<u32>(before[4], before[5], before[6], before[7])).total;
    let a0 = excl_scan4(li, vec4<u32>(all[0], all[1], all[2], all[3])).total;
    let a1 = excl_scan4(li, vec4<u32>(all[4], all[5], all[6], all[7])).total;
    return array<array<u32, TOP_PARTS>, 2>(eight(b0, b1), eight(a0, a1));
}

// Moves each tile's keys to the other buffer, where its node's keys go once partitioned
// into its pass's parts, each in order (as `part_top`). The node's first tile also writes
// its pass's splits and places the nodes they make, as `build_top` does.
@compute @workgroup_size(GROUP_SIZE)
fn wide_move(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let t = flat_group(wg);
    let x = tile_at(t);
    if (x.e.fill == NONE) {
        return;
    }
    let c = wide_cuts(x.g);
    let around = parts_around(li, x.g, t);
    if (li == 0u && t == atomicLoad(&scan[wide_word(x.g, WIDE_FIRST)])) {
        tested(x.e.fill, x.e.keys.y - x.e.keys.x);
        split_top(x.e, c, wide_slots(x.g), around[1]);
        place_kids();
    }
    let from_temp = level_in_temp();
    var at = starts(x.e.keys.x, around[1], around[0]);
    for (var base = x.keys.x; base < x.keys.y; base = base + GROUP_SIZE) {
        let i = base + li;
        var k = vec2<u32>(0u);
        var one = vec4<u32>(0u);
        var j = 0u;
        if (i < x.keys.y) {
            k = key_at(from_temp, i);
            j = part_of(k, c);
            one = one_in(j);
        }
        let s = excl_scan4(li, one);
        if (i < x.keys.y) {
            put_key(!from_temp, at[j] + count_in(s.before, j), k);
        }
        for (var q = 0u; q < TOP_PARTS; q = q + 1u) {
            at[q] = at[q] + count_in(s.total, q);
        }
    }
}
