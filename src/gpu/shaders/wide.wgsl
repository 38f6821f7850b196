// A top level's nodes split across workgroups (tree.wgsl's `top` hands them out, past
// `p.wide` keys): the node's own workgroup chooses its bit and reserves its slots and tiles
// (`go_wide`), `wide_count` counts each tile's keys without the bit, and `wide_move` moves
// them to the other key buffer, each tile summing its node's counts before it, as stably as
// `part_stored` does; the node's first tile writes its split. Part of the tree's module.

// Word w (WIDE_*) of the wide split of the level's node g.
fn wide_word(g: u32, w: u32) -> u32 {
    return p.wide_at + g * WIDE_WORDS + w;
}

// The first tile `go_wide` handed out, or NONE.
var<workgroup> first_tile: u32;

// Readies node `e` (the level's g-th) to be split on `bit` across workgroups: reserves its
// slots and its tiles, each tile's first word naming the node. Where it has no slot to
// spare it goes on as a subtree (a leaf); where the level has no tile to spare its fill is
// unfinished (the host cuts its join).
fn go_wide(li: u32, g: u32, f: Fill, e: Node, bit: u32) {
    if (li == 0u) {
        slots = select(NONE, reserve_split(e.fill, f), bit != NONE);
    }
    let a = workgroupUniformLoad(&slots);
    if (a == NONE) {
        if (li == 0u) {
            unsplit(e);
        }
        return;
    }
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
        atomicStore(&scan[p.tiles_at + 2u * (first + i)], g);
    }
    if (li == 0u) {
        atomicStore(&scan[wide_word(g, WIDE_BIT)], bit);
        atomicStore(&scan[wide_word(g, WIDE_SLOTS)], a);
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
    let g = atomicLoad(&scan[p.tiles_at + 2u * t]);
    let e = top_node(g);
    let lo = e.keys.x + (t - atomicLoad(&scan[wide_word(g, WIDE_FIRST)])) * WIDE_TILE;
    return Tile(e, g, vec2<u32>(lo, min(lo + WIDE_TILE, e.keys.y)));
}

// Counts each tile's keys without its node's bit (the tile's second word).
@compute @workgroup_size(GROUP_SIZE)
fn wide_count(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let t = flat_group(wg);
    let x = tile_at(t);
    if (x.e.fill == NONE) {
        return;
    }
    let bit = atomicLoad(&scan[wide_word(x.g, WIDE_BIT)]);
    let from_temp = level_in_temp();
    var zeros = 0u;
    for (var i = x.keys.x + li; i < x.keys.y; i = i + GROUP_SIZE) {
        zeros = zeros + select(1u, 0u, has_bit(key_at(from_temp, i), bit));
    }
    let s = excl_scan(li, zeros);
    if (li == 0u) {
        atomicStore(&scan[p.tiles_at + 2u * t + 1u], s.y);
    }
}

// The keys without its node's bit in the tiles of node g (the level's) before tile t, and
// in all of them: each tile's workgroup sums its node's counts itself (a node has at most a
// few hundred tiles), so no step of its own scans them.
fn zeros_around(li: u32, g: u32, t: u32) -> vec2<u32> {
    let first = atomicLoad(&scan[wide_word(g, WIDE_FIRST)]);
    let tiles = atomicLoad(&scan[wide_word(g, WIDE_TILES)]);
    var before = 0u;
    var all = 0u;
    for (var i = li; i < tiles; i = i + GROUP_SIZE) {
        let z = atomicLoad(&scan[p.tiles_at + 2u * (first + i) + 1u]);
        all = all + z;
        before = before + select(0u, z, first + i < t);
    }
    return vec2<u32>(excl_scan(li, before).y, excl_scan(li, all).y);
}

// Moves each tile's keys to the other buffer, where its node's keys go once partitioned:
// those without the bit first, in order, then those with it, in order (as `part_across`).
// The node's first tile also writes its split and places its children, as `split_node` and
// `top` do.
@compute @workgroup_size(GROUP_SIZE)
fn wide_move(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let t = flat_group(wg);
    let x = tile_at(t);
    if (x.e.fill == NONE) {
        return;
    }
    let bit = atomicLoad(&scan[wide_word(x.g, WIDE_BIT)]);
    let zeros = zeros_around(li, x.g, t);
    let mid = x.e.keys.x + zeros.y;
    if (li == 0u && t == atomicLoad(&scan[wide_word(x.g, WIDE_FIRST)])) {
        tested(x.e.fill, x.e.keys.y - x.e.keys.x);
        let two = split(x.e, bit, mid, atomicLoad(&scan[wide_word(x.g, WIDE_SLOTS)]));
        place(two[0]);
        place(two[1]);
    }
    let from_temp = level_in_temp();
    var z = x.e.keys.x + zeros.x;
    var o = mid + (x.keys.x - x.e.keys.x - zeros.x);
    for (var base = x.keys.x; base < x.keys.y; base = base + GROUP_SIZE) {
        let i = base + li;
        var k = vec2<u32>(0u);
        if (i < x.keys.y) {
            k = key_at(from_temp, i);
        }
        let zero = i < x.keys.y && !has_bit(k, bit);
        let s = excl_scan(li, select(0u, 1u, zero));
        if (zero) {
            put_key(!from_temp, z + s.x, k);
        } else if (i < x.keys.y) {
            put_key(!from_temp, o + li - s.x, k);
        }
        z = z + s.y;
        o = o + min(GROUP_SIZE, x.keys.y - base) - s.y;
    }
}
