// The batch's bookkeeping on the GPU, so that the host reads nothing back until the batch
// is done: each join's sizes and decisions once its keys are counted (`join_sizes`), where
// each job writes its keys (`job_dest`), each fill's blocks once its tree is built
// (`alloc_blocks`, `place_blocks`), and each fill's routes once they are counted
// (`plan_routes`). Each stage writes its totals into the header of `scan` (HEAD_*) and the
// next stages' dispatch sizes into `args` (ARGS_*).
//
// Room is given out in join order: a join whose share would pass an arena's end is marked
// (FILL_OVER_*) and counts nothing, and so are the joins after it (their shares start
// later); the host redoes them in a later batch. A join is never counted in part.

@group(0) @binding(0) var<uniform> p: Batch;
// binding 1: `results` (results.wgsl).
@group(0) @binding(2) var<storage, read> jobs: array<Job>;
@group(0) @binding(3) var<storage, read> joins: array<JoinDesc>;
@group(0) @binding(4) var<storage, read_write> scan: array<u32>;
@group(0) @binding(5) var<storage, read_write> fills: array<Fill>;
@group(0) @binding(6) var<storage, read> leaves: array<vec2<u32>>;
@group(0) @binding(7) var<storage, read_write> blocks: array<vec4<u32>>;
@group(0) @binding(8) var<storage, read> sides: array<Side>;
// The indirect dispatches' arguments (ARGS_*: three words each).
@group(0) @binding(9) var<storage, read_write> args: array<u32>;

var<workgroup> part: array<u32, GROUP_SIZE>;
var<workgroup> carry: array<u32, 8>;

// The exclusive prefix of `v` over the workgroup, and the workgroup's total.
fn excl_scan(li: u32, v: u32) -> vec2<u32> {
    part[li] = v;
    workgroupBarrier();
    for (var stride = 1u; stride < GROUP_SIZE; stride = stride * 2u) {
        var add = 0u;
        if (li >= stride) {
            add = part[li - stride];
        }
        workgroupBarrier();
        part[li] = part[li] + add;
        workgroupBarrier();
    }
    let total = part[GROUP_SIZE - 1u];
    let before = part[li] - v;
    workgroupBarrier();
    return vec2<u32>(before, total);
}

// The prefix of `v` over every join so far (chunk by chunk, `carry[c]` holding the total
// of the chunks before), and the total with this chunk.
fn running(li: u32, c: u32, v: u32) -> vec2<u32> {
    let s = excl_scan(li, v);
    let base = carry[c];
    workgroupBarrier();
    if (li == 0u) {
        carry[c] = base + s.y;
    }
    workgroupBarrier();
    return vec2<u32>(base + s.x, base + s.y);
}

// The offset of job j's first key (the scanned item counts end with the total).
fn key_at(j: u32) -> u32 {
    return scan[p.items_at + jobs[j].first_item];
}

// The join and role of job j.
fn sides_of(j: u32) -> vec2<u32> {
    let d = sides[jobs[j].side_tag & JOB_SIDE_MASK];
    return vec2<u32>(d.join, d.role);
}

fn ceil_div(a: u32, b: u32) -> u32 {
    return (a + b - 1u) / b;
}

// What one join needs of each arena, and its decisions.
struct Need {
    status: u32,
    sizes: vec4<u32>,
    stored: u32,
    queries: u32,
    ties: u32,
    nodes: u32,
    leaves: u32,
    tie_groups: u32,
}

fn need_of(j: u32) -> Need {
    var n: Need;
    let d = joins[j];
    let w0 = key_at(d.jobs.x);
    let e0 = key_at(d.jobs.y);
    let t0 = key_at(d.jobs.z);
    let t1 = key_at(d.jobs.w);
    let end = key_at(d.jobs_end);
    let west = e0 - w0;
    let east = t0 - e0;
    let tw = t1 - t0;
    let te = end - t1;
    n.sizes = vec4<u32>(west, east, tw, te);
    var swap = false;
    n.status = 0u;
    if (west == 0u || east == 0u) {
        n.status = FILL_EMPTY;
    } else if ((d.flags & JOIN_PORTION) != 0u) {
        swap = (d.flags & JOIN_EAST_STORED) != 0u;
        let all = select(west, east, swap);
        let kept = min(all - min(d.lo, all), d.cap);
        if (kept == 0u) {
            n.status = FILL_EMPTY;
        }
        // The keys it stores, as the row reports them.
        n.sizes = select(vec4<u32>(kept, east, tw, te), vec4<u32>(west, kept, tw, te), swap);
    } else {
        // As the CPU: the east side is stored where the west one is smaller and fits a fill.
        // The CPU stores an east side past a fill a fill's portion at a time: here such a
        // join is marked too large, stored side east, and the host cuts it into portions
        // (storing the west side instead, its many queries visited up to 4 times the blocks).
        let wants = (d.flags & JOIN_SWAP) != 0u && west <= d.cap && east > west;
        swap = wants && east <= d.cap;
        if (wants && !swap) {
            n.status = FILL_TOO_LARGE | FILL_SWAPPED;
        } else if (!swap && west > d.cap) {
            n.status = select(FILL_TOO_LARGE, FILL_REFUSED, (d.flags & JOIN_REFUSE) != 0u);
        }
    }
    if (n.status != 0u) {
        return n;
    }
    n.stored = select(n.sizes.x, n.sizes.y, swap);
    n.queries = select(east, west, swap);
    n.status = select(0u, FILL_SWAPPED, swap);
    if ((d.flags & JOIN_TIES) != 0u && tw > 0u && te > 0u) {
        n.ties = tw + te;
        n.tie_groups = ceil_div(tw, GROUP_SIZE) * ceil_div(te, TIE_EAST);
    }
    let leaf_cap = 4u * ceil_div(n.stored, p.leaf_keys) + 4u;
    n.leaves = leaf_cap + 1u;
    n.nodes = 2u * leaf_cap;
    return n;
}

// Fill j's tree counters (tree.wgsl): its root's node slot and leaf slot taken.
fn start_tree(j: u32) {
    let at = p.tree_at + j * TREE_WORDS;
    scan[at + TREE_NODES] = 1u;
    scan[at + TREE_LEAVES] = 0u;
    scan[at + TREE_BLOCKS] = 0u;
    scan[at + TREE_RESERVED] = 1u;
    scan[at + TREE_UNFINISHED] = 0u;
    scan[at + TREE_TESTS] = 0u;
    scan[at + TREE_TESTS + 1u] = 0u;
    scan[at + TREE_ROOT] = 0u;
}

// Fill j's tree as its counters say, once built: its nodes, leaves and blocks, or marked
// unfinished.
fn end_tree(j: u32) {
    let f = fills[j];
    if ((f.status & FILL_ERRORS) != 0u || f.stored == f.stored_end) {
        return;
    }
    let at = p.tree_at + j * TREE_WORDS;
    add64_at(p.result_stats + 2u * STAT_TREE_TESTS, vec2<u32>(scan[at + TREE_TESTS],
        scan[at + TREE_TESTS + 1u]));
    // The host splits a join past a batch's blocks on the bit its root split on.
    atomicOr(&results[row(j) + RESULT_STATUS], scan[at + TREE_ROOT] << FILL_ROOT_SHIFT);
    let unfinished = scan[at + TREE_UNFINISHED];
    if (unfinished == TREE_PAST_ROOM) {
        // Stopped at its root: past the blocks' room by the blocks its keys need at least;
        // its root pass's cuts in the words a counted join's tests take (top.wgsl).
        fills[j].status = f.status | FILL_OVER_BLOCKS;
        fills[j].blocks = scan[at + TREE_BLOCKS];
        atomicStore(&results[row(j) + RESULT_TESTS], scan[at + TREE_NODES]);
        atomicStore(&results[row(j) + RESULT_TESTS + 1u], scan[at + TREE_LEAVES]);
        return;
    }
    if (unfinished != 0u) {
        fills[j].status = f.status | FILL_UNFINISHED;
        return;
    }
    fills[j].tree_end = f.root + scan[at + TREE_NODES];
    fills[j].leaves = scan[at + TREE_LEAVES];
    fills[j].blocks = scan[at + TREE_BLOCKS];
}

// Zeroes what the batch's later kernels add to or append to: `scan`'s header (lists,
// tiles, totals), the work counters and each join's sums. Here, not in clears before the
// batch: a clear is a dependent step of its own, and none of it is read before this.
fn zero_batch(li: u32) {
    if (li < HEAD_WORDS) {
        scan[li] = 0u;
    }
    for (var i = li; i < STATS_WORDS; i = i + GROUP_SIZE) {
        atomicStore(&results[i], 0u);
    }
    for (var j = li; j < p.joins; j = j + GROUP_SIZE) {
        for (var w = 0u; w < RESULT_SIZES; w = w + 1u) {
            atomicStore(&results[row(j) + w], 0u);
        }
    }
    // Written below by thread 0: every zero lands first.
    storageBarrier();
    workgroupBarrier();
}

// Each join's sizes, decisions and shares of the arenas; the half join's destinations and
// the tree, route and tie dispatches follow from them.
@compute @workgroup_size(GROUP_SIZE)
fn join_sizes(@builtin(local_invocation_index) li: u32) {
    if (li < 8u) {
        carry[li] = 0u;
    }
    zero_batch(li);
    workgroupBarrier();
    let chunks = ceil_div(p.joins, GROUP_SIZE);
    for (var c = 0u; c < chunks; c = c + 1u) {
        let j = c * GROUP_SIZE + li;
        var n: Need;
        if (j < p.joins) {
            n = need_of(j);
        }
        let s = running(li, 0u, n.stored);
        let q = running(li, 1u, n.queries);
        let t = running(li, 2u, n.ties);
        let nodes = running(li, 3u, n.nodes);
        let leaves = running(li, 4u, n.leaves);
        let groups = running(li, 5u, n.tie_groups);
        if (j >= p.joins) {
            continue;
        }
        var status = n.status;
        let over = s.x + n.stored > p.stored_cap || q.x + n.queries > p.queries_cap
            || t.x + n.ties > p.ties_cap || nodes.x + n.nodes > p.node_cap || leaves.x + n.leaves > p.leaf_cap;
        if (over) {
            status = status | FILL_OVER_KEYS;
        }
        let ok = (status & FILL_ERRORS) == 0u;
        var f: Fill;
        f.stored = s.x;
        f.stored_end = s.x + select(0u, n.stored, ok);
        f.queries = q.x;
        f.queries_end = q.x + select(0u, n.queries, ok);
        f.root = nodes.x;
        f.tree_end = nodes.x;
        f.leaf_base = leaves.x;
        f.leaves = 0u;
        f.block_base = 0u;
        f.blocks = 0u;
        f.status = status;
        let d = joins[j];
        f.live = d.live;
        f.node_cap = n.nodes;
        f.leaf_cap = select(0u, n.leaves - 1u, n.leaves > 0u);
        let swapped = (status & FILL_SWAPPED) != 0u;
        let ones = vec4<u32>(1u);
        f.stored_w = select(d.factors, ones, swapped);
        f.query_w = select(ones, d.factors, swapped);
        fills[j] = f;
        start_tree(j);
        let has_ties = ok && n.ties > 0u;
        let at = p.ties_at + j * TIE_WORDS;
        scan[at] = t.x;
        scan[at + 1u] = select(0u, n.sizes.z, has_ties);
        scan[at + 2u] = select(0u, n.sizes.w, has_ties);
        scan[at + 3u] = groups.x;
        let r = row(j);
        atomicStore(&results[r + RESULT_SIZES], n.sizes.x);
        atomicStore(&results[r + RESULT_SIZES + 1u], n.sizes.y);
        atomicStore(&results[r + RESULT_SIZES + 2u], select(0u, n.sizes.z, has_ties));
        atomicStore(&results[r + RESULT_SIZES + 3u], select(0u, n.sizes.w, has_ties));
        atomicStore(&results[r + RESULT_STATUS], status);
    }
    if (li == 0u) {
        let queries = min(carry[1], p.queries_cap);
        let groups = carry[5];
        scan[HEAD_QUERIES] = queries;
        scan[HEAD_TIE_GROUPS] = groups;
        // Routing walks one query an invocation (route.wgsl).
        let route = row_args(ceil_div(queries, GROUP_SIZE));
        args[ARGS_ROUTE] = route.x;
        args[ARGS_ROUTE + 1u] = route.y;
        args[ARGS_ROUTE + 2u] = route.z;
        let ties = row_args(groups);
        args[ARGS_TIES] = ties.x;
        args[ARGS_TIES + 1u] = ties.y;
        args[ARGS_TIES + 2u] = ties.z;
    }
}

// Where each job writes its keys (DEST_WORDS words): `DEST_* << DEST_SHIFT | offset`, the
// offset of its first key kept in that arena (DEST_NONE: its join counts nothing here),
// then how many of its keys are skipped and how many kept (a portion stores some only).
@compute @workgroup_size(GROUP_SIZE)
fn job_dest(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let j = flat_group(wg) * GROUP_SIZE + li;
    if (j >= p.jobs) {
        return;
    }
    let side = sides_of(j);
    let f = fills[side.x];
    let d = joins[side.x];
    let role = side.y;
    let off = key_at(j) - key_at(d.jobs[role]);
    var dest = DEST_NONE << DEST_SHIFT;
    // Keys skipped before the first one kept, and kept after them.
    var skip = 0u;
    var keep = 0xffffffffu;
    if ((f.status & FILL_ERRORS) == 0u) {
        let swapped = (f.status & FILL_SWAPPED) != 0u;
        let at = p.ties_at + side.x * TIE_WORDS;
        if (role == ROLE_WEST || role == ROLE_EAST) {
            let stored = (role == ROLE_WEST) != swapped;
            if (stored && (d.flags & JOIN_PORTION) != 0u) {
                // Its keys within the portion (keys lo to lo + the fill's size of the side).
                let end = off + key_at(j + 1u) - key_at(j);
                let first = max(off, d.lo);
                let last = min(end, d.lo + (f.stored_end - f.stored));
                if (first < last) {
                    dest = DEST_STORED << DEST_SHIFT | (f.stored + first - d.lo);
                    skip = first - off;
                    keep = last - first;
                }
            } else if (stored) {
                dest = DEST_STORED << DEST_SHIFT | (f.stored + off);
            } else {
                dest = DEST_QUERIES << DEST_SHIFT | (f.queries + off);
            }
        } else if (scan[at + 1u] > 0u) {
            let east = select(0u, scan[at + 1u], role == ROLE_TIED_EAST);
            dest = DEST_TIES << DEST_SHIFT | (scan[at] + east + off);
        }
    }
    let at = p.dest_at + DEST_WORDS * j;
    scan[at] = dest;
    scan[at + 1u] = skip;
    scan[at + 2u] = keep;
}

// Each fill's tree as built, and its blocks, given out in order; the tables' dispatch.
@compute @workgroup_size(GROUP_SIZE)
fn alloc_blocks(@builtin(local_invocation_index) li: u32) {
    if (li < 8u) {
        carry[li] = 0u;
    }
    workgroupBarrier();
    let chunks = ceil_div(p.joins, GROUP_SIZE);
    for (var c = 0u; c < chunks; c = c + 1u) {
        let j = c * GROUP_SIZE + li;
        if (j < p.joins) {
            end_tree(j);
        }
    }
    var valid_end = 0u;
    for (var c = 0u; c < chunks; c = c + 1u) {
        let j = c * GROUP_SIZE + li;
        var need = 0u;
        if (j < p.joins && (fills[j].status & FILL_ERRORS) == 0u) {
            need = fills[j].blocks;
        }
        let b = running(li, 0u, need);
        if (j >= p.joins) {
            continue;
        }
        if ((fills[j].status & FILL_ERRORS) != 0u) {
            continue;
        }
        if (b.x + need > p.block_cap) {
            // Its blocks stay counted, so that the host knows how far to cut it.
            fills[j].status = fills[j].status | FILL_OVER_BLOCKS;
        } else {
            fills[j].block_base = b.x;
            valid_end = max(valid_end, b.x + need);
        }
    }
    part[li] = valid_end;
    workgroupBarrier();
    for (var stride = GROUP_SIZE / 2u; stride > 0u; stride = stride / 2u) {
        if (li < stride) {
            part[li] = max(part[li], part[li + stride]);
        }
        workgroupBarrier();
    }
    if (li == 0u) {
        scan[HEAD_BLOCKS] = part[0];
        let a = row_args(part[0]);
        args[ARGS_TABLES] = a.x;
        args[ARGS_TABLES + 1u] = a.y;
        args[ARGS_TABLES + 2u] = a.z;
    }
}

// Each leaf's first block (and after a fill's last leaf, its end), and each block's keys
// (first key, keys, leaf, fill): PLACE_GROUPS workgroups a fill, each a run of its leaves
// 256 at a time. A run starts after the blocks of the leaves before it, added up first
// (their loads all in flight at once, where one workgroup's runs would wait on each other).
@compute @workgroup_size(GROUP_SIZE)
fn place_blocks(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let g = flat_group(wg);
    let fid = g / PLACE_GROUPS;
    if (fid >= p.joins) {
        return;
    }
    let f = fills[fid];
    if ((f.status & FILL_ERRORS) != 0u || f.blocks == 0u) {
        return;
    }
    let chunks = ceil_div(f.leaves, GROUP_SIZE);
    let each = ceil_div(chunks, PLACE_GROUPS);
    let c0 = min(g % PLACE_GROUPS * each, chunks);
    let c1 = min(c0 + each, chunks);
    if (c0 == c1) {
        return;
    }
    var before = 0u;
    for (var l = li; l < c0 * GROUP_SIZE; l = l + GROUP_SIZE) {
        before = before + ceil_div(leaves[f.leaf_base + l].y, BLOCK_KEYS);
    }
    var base = f.block_base + excl_scan(li, before).y;
    for (var c = c0; c < c1; c = c + 1u) {
        let l = c * GROUP_SIZE + li;
        var leaf = vec2<u32>(0u);
        if (l < f.leaves) {
            leaf = leaves[f.leaf_base + l];
        }
        let nb = ceil_div(leaf.y, BLOCK_KEYS);
        let s = excl_scan(li, nb);
        if (l < f.leaves) {
            let first = base + s.x;
            scan[p.leaf_blocks_at + f.leaf_base + l] = first;
            for (var b = 0u; b < nb; b = b + 1u) {
                let keys = min(BLOCK_KEYS, leaf.y - b * BLOCK_KEYS);
                blocks[first + b] = vec4<u32>(leaf.x + b * BLOCK_KEYS, keys, f.leaf_base + l, fid);
                // Its routes are counted and handed out from zero (the scan over the
                // blocks' counts reads past the batch's blocks, but no sum up to them does).
                scan[p.block_routes_at + first + b] = 0u;
                scan[p.block_cursor_at + first + b] = 0u;
            }
        }
        base = base + s.y;
    }
    if (li == 0u && c1 == chunks) {
        scan[p.leaf_blocks_at + f.leaf_base + f.leaves] = base;
    }
}

// Each fill's routes once they are counted and scanned: those past the routes' room are
// marked; every join's results row gets its sizes; the block count's dispatch.
@compute @workgroup_size(GROUP_SIZE)
fn plan_routes(@builtin(local_invocation_index) li: u32) {
    let total_blocks = scan[HEAD_BLOCKS];
    let chunks = ceil_div(p.joins, GROUP_SIZE);
    for (var c = 0u; c < chunks; c = c + 1u) {
        let j = c * GROUP_SIZE + li;
        if (j >= p.joins) {
            continue;
        }
        let f = fills[j];
        var routes = 0u;
        var status = f.status;
        if ((status & FILL_ERRORS) == 0u) {
            let r0 = scan[p.block_routes_at + f.block_base];
            let r1 = scan[p.block_routes_at + f.block_base + f.blocks];
            routes = r1 - r0;
            if (r1 > p.route_cap) {
                status = status | FILL_OVER_ROUTES;
                fills[j].status = status;
            }
        }
        let r = row(j);
        atomicStore(&results[r + RESULT_BLOCKS], f.blocks);
        atomicStore(&results[r + RESULT_ROUTES], routes);
        // Or'd: routing may have found a walk cut short already.
        atomicOr(&results[r + RESULT_STATUS], status);
    }
    if (li == 0u) {
        let routes = min(scan[p.block_routes_at + total_blocks], p.route_cap);
        scan[HEAD_ROUTES] = routes;
        let a = row_args(ceil_div(routes, ROUTES));
        args[ARGS_COUNT] = a.x;
        args[ARGS_COUNT + 1u] = a.y;
        args[ARGS_COUNT + 2u] = a.z;
    }
}
