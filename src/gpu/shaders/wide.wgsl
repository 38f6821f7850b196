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

// Loads the cuts of node g's pass (WIDE_CUTS) into `cuts`, and its splits' slots
// (WIDE_SLOTS) into `cut_slots` (every invocation, uniformly).
fn load_cuts(li: u32, g: u32) {
    if (li < TOP_PARTS) {
        cuts[li] = atomicLoad(&scan[wide_word(g, WIDE_CUTS + li)]);
        cut_slots[li] = atomicLoad(&scan[wide_word(g, WIDE_SLOTS + li)]);
    }
    workgroupBarrier();
}

// Counts packed as tiles keep them: part j in the low (even j) or high half of word j / 2,
// four words to a vector (a tile's or a round's counts stay below 65,536).
struct Packed {
    w: array<vec4<u32>, PACKED_QUADS>,
}

fn packed(a: Parts) -> Packed {
    var c = a;
    var out: Packed;
    for (var i = 0u; i < PACKED_QUADS; i = i + 1u) {
        let lo = c.q[2u * i];
        let hi = c.q[2u * i + 1u];
        out.w[i] = vec4<u32>(lo.x | (lo.y << 16u), lo.z | (lo.w << 16u),
            hi.x | (hi.y << 16u), hi.z | (hi.w << 16u));
    }
    return out;
}

fn unpacked(v: Packed) -> Parts {
    var c = v;
    var out: Parts;
    for (var i = 0u; i < PACKED_QUADS; i = i + 1u) {
        let low = c.w[i] & vec4<u32>(0xffffu);
        let high = c.w[i] >> vec4<u32>(16u);
        out.q[2u * i] = vec4<u32>(low.x, high.x, low.y, high.y);
        out.q[2u * i + 1u] = vec4<u32>(low.z, high.z, low.w, high.w);
    }
    return out;
}

// The exclusive prefix of packed counts over the workgroup and their totals (every
// invocation, uniformly; a round's or a tile's, so below 65,536 each).
struct PackedScan {
    before: Packed,
    total: Packed,
}

fn excl_scan_packed(li: u32, v: Packed) -> PackedScan {
    var c = v;
    var out: PackedScan;
    for (var i = 0u; i < PACKED_QUADS; i = i + 1u) {
        let s = excl_scan4(li, c.w[i]);
        out.before.w[i] = s.before;
        out.total.w[i] = s.total;
    }
    return out;
}

// Counts each tile's keys in each part of its node's pass (its words from 1, packed).
@compute @workgroup_size(GROUP_SIZE)
fn wide_count(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let t = flat_group(wg);
    let x = tile_at(t);
    if (x.e.fill == NONE) {
        return;
    }
    load_cuts(li, x.g);
    let from_temp = level_in_temp();
    var mine: Parts;
    for (var i = x.keys.x + li; i < x.keys.y; i = i + GROUP_SIZE) {
        mine = plus(mine, unit(part_of(key_at(from_temp, i))));
    }
    let s = excl_scan_packed(li, packed(mine));
    if (li < TILE_WORDS - 1u) {
        var total = s.total;
        atomicStore(&scan[tile_word(t, 1u + li)], total.w[li / 4u][li % 4u]);
    }
}

// Each part's keys in the tiles of node g (the level's) before tile t, and in all of them
// (`before`, `total`): each tile's workgroup sums its node's counts itself, so no step of
// its own scans them.
struct Around {
    before: Parts,
    total: Parts,
}

fn parts_around(li: u32, g: u32, t: u32) -> Around {
    let first = atomicLoad(&scan[wide_word(g, WIDE_FIRST)]);
    let tiles = atomicLoad(&scan[wide_word(g, WIDE_TILES)]);
    var before: Parts;
    var all: Parts;
    for (var i = li; i < tiles; i = i + GROUP_SIZE) {
        var w: Packed;
        for (var k = 0u; k < TILE_WORDS - 1u; k = k + 1u) {
            w.w[k / 4u][k % 4u] = atomicLoad(&scan[tile_word(first + i, 1u + k)]);
        }
        let z = unpacked(w);
        all = plus(all, z);
        if (first + i < t) {
            before = plus(before, z);
        }
    }
    return Around(excl_scan_parts(li, before).total, excl_scan_parts(li, all).total);
}

// Keys of a tile one invocation moves, held in registers between its count and its move.
const TILE_EACH: u32 = WIDE_TILE / GROUP_SIZE;

// Moves each tile's keys to the other buffer, where its node's keys go once partitioned
// into its pass's parts, each in order (as `part_top`): each invocation reads its run of
// TILE_EACH keys once, holds them while one scan of the runs' counts places them, and
// writes them (a scan a round of 256 keys made the move wait on barriers, more so the
// more parts). The node's first tile also writes its pass's splits and places the nodes
// they make, as `build_top` does.
@compute @workgroup_size(GROUP_SIZE)
fn wide_move(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let t = flat_group(wg);
    let x = tile_at(t);
    if (x.e.fill == NONE) {
        return;
    }
    load_cuts(li, x.g);
    let around = parts_around(li, x.g, t);
    if (li == 0u && t == atomicLoad(&scan[wide_word(x.g, WIDE_FIRST)])) {
        tested(x.e.fill, x.e.keys.y - x.e.keys.x);
        split_top(x.e, around.total);
    }
    let from_temp = level_in_temp();
    let a = min(x.keys.x + li * TILE_EACH, x.keys.y);
    let b = min(a + TILE_EACH, x.keys.y);
    var run: array<vec2<u32>, TILE_EACH>;
    var mine: Parts;
    for (var i = a; i < b; i = i + 1u) {
        let k = key_at(from_temp, i);
        run[i - a] = k;
        mine = plus(mine, unit(part_of(k)));
    }
    let s = excl_scan_packed(li, packed(mine));
    var at = plus(starts(x.e.keys.x, around.total, around.before), unpacked(s.before));
    for (var i = a; i < b; i = i + 1u) {
        let k = run[i - a];
        let j = part_of(k);
        put_key(!from_temp, in_part(at, j), k);
        at = plus(at, unit(j));
    }
}
