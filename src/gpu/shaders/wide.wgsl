// A top level's nodes split across workgroups (top.wgsl's `top` hands them out, past
// `p.wide` keys): the node's own workgroup chooses its bits and reserves its slots and tiles
// (`go_wide`), `wide_count` counts each tile's keys in each of the node's four parts, and
// `wide_move` moves them to the other key buffer, each tile summing its node's counts before
// it, as stably as `part_top` does; the node's first tile writes its splits. Part of the
// tree's module.

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

// Readies node `e` (the level's g-th) to be split on `bit`, and its children by `cuts`, into
// the slots `r` across workgroups: reserves its tiles, each tile's first word naming the
// node. Where the level has no tile to spare its fill is unfinished (the host cuts its
// join).
fn go_wide(li: u32, g: u32, e: Node, bit: u32, cuts: vec2<u32>, r: vec3<u32>) {
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
    if (li == 0u) {
        atomicStore(&scan[wide_word(g, WIDE_BIT)], bit);
        atomicStore(&scan[wide_word(g, WIDE_FIRST)], first);
        atomicStore(&scan[wide_word(g, WIDE_TILES)], tiles);
        for (var c = 0u; c < 3u; c = c + 1u) {
            atomicStore(&scan[wide_word(g, WIDE_SLOTS + c)], r[c]);
        }
        for (var c = 0u; c < 2u; c = c + 1u) {
            atomicStore(&scan[wide_word(g, WIDE_CUTS + c)], cuts[c]);
        }
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

// The cuts of node g's split (WIDE_CUTS), and its slots (WIDE_SLOTS on).
fn wide_cuts(g: u32) -> vec2<u32> {
    let at = wide_word(g, WIDE_CUTS);
    return vec2<u32>(atomicLoad(&scan[at]), atomicLoad(&scan[at + 1u]));
}

fn wide_slots(g: u32) -> vec3<u32> {
    let at = wide_word(g, WIDE_SLOTS);
    return vec3<u32>(atomicLoad(&scan[at]), atomicLoad(&scan[at + 1u]), atomicLoad(&scan[at + 2u]));
}

// Counts each tile's keys in each of its node's four parts (its words 1 and 2).
@compute @workgroup_size(GROUP_SIZE)
fn wide_count(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let t = flat_group(wg);
    let x = tile_at(t);
    if (x.e.fill == NONE) {
        return;
    }
    let bit = atomicLoad(&scan[wide_word(x.g, WIDE_BIT)]);
    let cuts = wide_cuts(x.g);
    let from_temp = level_in_temp();
    var mine = vec4<u32>(0u);
    for (var i = x.keys.x + li; i < x.keys.y; i = i + GROUP_SIZE) {
        let j = part_of(key_at(from_temp, i), bit, cuts);
        mine[j] = mine[j] + 1u;
    }
    let s = excl_scan4(li, mine);
    if (li == 0u) {
        atomicStore(&scan[tile_word(t, 1u)], s.total.x | (s.total.y << 16u));
        atomicStore(&scan[tile_word(t, 2u)], s.total.z | (s.total.w << 16u));
    }
}

// Each part's keys in the tiles of node g (the level's) before tile t, and in all of them:
// each tile's workgroup sums its node's counts itself, so no step of its own scans them.
fn parts_around(li: u32, g: u32, t: u32) -> Scan4 {
    let first = atomicLoad(&scan[wide_word(g, WIDE_FIRST)]);
    let tiles = atomicLoad(&scan[wide_word(g, WIDE_TILES)]);
    var before = vec4<u32>(0u);
    var all = vec4<u32>(0u);
    for (var i = li; i < tiles; i = i + GROUP_SIZE) {
        let a = atomicLoad(&scan[tile_word(first + i, 1u)]);
        let b = atomicLoad(&scan[tile_word(first + i, 2u)]);
        let z = vec4<u32>(a & 0xffffu, a >> 16u, b & 0xffffu, b >> 16u);
        all = all + z;
        if (first + i < t) {
            before = before + z;
        }
    }
    return Scan4(excl_scan4(li, before).total, excl_scan4(li, all).total);
}

// Moves each tile's keys to the other buffer, where its node's keys go once partitioned
// into its four parts, each in order (as `part_top`). The node's first tile also writes
// its splits and places the nodes they make, as `build_top` does.
@compute @workgroup_size(GROUP_SIZE)
fn wide_move(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let t = flat_group(wg);
    let x = tile_at(t);
    if (x.e.fill == NONE) {
        return;
    }
    let bit = atomicLoad(&scan[wide_word(x.g, WIDE_BIT)]);
    let cuts = wide_cuts(x.g);
    let around = parts_around(li, x.g, t);
    if (li == 0u && t == atomicLoad(&scan[wide_word(x.g, WIDE_FIRST)])) {
        tested(x.e.fill, x.e.keys.y - x.e.keys.x);
        split_top(x.e, bit, cuts, wide_slots(x.g), around.total);
        place_kids();
    }
    let from_temp = level_in_temp();
    var at = x.e.keys.x + starts(around.total) + around.before;
    for (var base = x.keys.x; base < x.keys.y; base = base + GROUP_SIZE) {
        let i = base + li;
        var k = vec2<u32>(0u);
        var one = vec4<u32>(0u);
        var j = 0u;
        if (i < x.keys.y) {
            k = key_at(from_temp, i);
            j = part_of(k, bit, cuts);
            one[j] = 1u;
        }
        let s = excl_scan4(li, one);
        if (i < x.keys.y) {
            put_key(!from_temp, at[j] + s.before[j], k);
        }
        at = at + s.total;
    }
}
