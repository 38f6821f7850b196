// Each fill's sieve tree, built as the CPU's trie builds its own: the stored keys of a node
// are partitioned on the bit that rules out the most pairs there, (keys with it among at
// most KEY_SAMPLE keys of the node, by stride) × (sampled queries that reach the node with
// it), until a node holds at most `leaf_keys` keys. The child whose keys have the bit is met
// only by the queries without it, the other by them all: the sampled queries that reach a
// node are those of the fill's sample (at most `query_sample` of its queries, by stride)
// without any bit of the node's `taken` mask (the bits of the splits whose child with the
// bit its path took).
//
// Level by level, then subtree by subtree. `top` (top.wgsl) takes the nodes of one level,
// a workgroup each (level 0: each fill's root): a node of more than SUBTREE_KEYS keys is
// split, and its large children and theirs in the same pass (a top level is up to
// TOP_DEPTH of the tree's levels), and the nodes they make join the next level's list;
// smaller nodes, and those the last level the host recorded makes, join the list of
// subtrees. The nodes of a level
// hold disjoint keys, so their workgroups work side by side. `rest` then builds each
// subtree in one workgroup, depth first. Every partition moves keys from one key buffer
// into the other and leaves them there (each key passes a level twice, read to count and
// moved, not copied back as well): a top level's nodes hold their keys in `stored` at even
// levels and in `temp` at odd ones (a subtree's root in `temp` has `pad` 1), a subtree's
// alternate with their depth, and a leaf whose keys lie in `temp` copies them back to
// `stored`, where leaves and blocks read them. At a wide level (`p.wide`), a node of more
// than `p.wide` keys is not partitioned by its own workgroup: `top` chooses its bits and
// hands out tiles of WIDE_TILE keys, `wide_count` counts each tile's keys in each part,
// and `wide_move` (each tile summing its node's counts before it) moves them to the other
// buffer, a tile a workgroup, as stably as `top` does; the node's first tile writes its
// splits (wide.wgsl).
// A large fill's top levels so spread over many workgroups, and no invocation's loops run
// long (a software driver stops them: lavapipe after 65,535 iterations of an invocation,
// every loop together).
//
// A node of at most two blocks' keys is a leaf, as in the CPU's trie. `rest` orders the
// keys of one of more than a block's keys, so that every key of its second block has some
// bits: a query with one of them skips that block (routing tests each block's AND), and
// the queries with the bits chosen one by one, each the one most sampled queries without
// the bits so far have, among those enough of the keys with them have to fill the second
// block. Splitting such a node instead (the children each a block or less) filled its
// blocks less, and its queries visited a quarter more blocks than the CPU's at N = 22.
//
// Nodes: a split is [bit, child without it, child with it, 0]; a leaf is [LEAF | leaf slot,
// 0, 0, next], next being the node a walk goes to after it (NONE: the end), so that
// `route.wgsl` walks without a stack. Node, leaf and block slots are handed out by each
// fill's counters (TREE_* words of `scan`), so where a node lies depends on timing but the
// tree does not: partitions are stable, and a node's bit depends on its keys and the
// sample only. A split first reserves a leaf slot for its second child (a node with none
// to spare is a leaf); a list or slot that runs out marks the fill unfinished, and the
// host cuts its join. Every loop is bounded by the data.

@group(0) @binding(0) var<uniform> p: Batch;
@group(0) @binding(1) var<storage, read> fills: array<Fill>;
@group(0) @binding(2) var<storage, read_write> stored: array<vec2<u32>>;
@group(0) @binding(3) var<storage, read_write> temp: array<vec2<u32>>;
@group(0) @binding(4) var<storage, read> queries: array<vec2<u32>>;
@group(0) @binding(5) var<storage, read_write> tree: array<vec4<u32>>;
@group(0) @binding(6) var<storage, read_write> leaves: array<vec2<u32>>;
@group(0) @binding(7) var<storage, read_write> scan: array<atomic<u32>>;
// The lists of nodes to build: each top level's after the first, then the subtrees'
// (their lengths are HEAD_LISTS words of `scan`).
@group(0) @binding(8) var<storage, read_write> lists: array<Node>;
// The indirect dispatch arguments (ARGS_* words) of the subtrees' list, kept by the top
// levels' kernels that append to it (a buffer of their own, which the host sets to no
// workgroups): a dispatch cannot read its arguments from a buffer it binds to write, so
// `rest` binds another here, and writes none.
@group(0) @binding(9) var<storage, read_write> args_out: array<atomic<u32>>;

const NONE: u32 = 0xffffffffu;
// A path splits on each key bit at most once: at most 61 levels below a subtree's root,
// and the stack holds one pending child per level.
const STACK: u32 = 66u;

const BUILD_LEAF: u32 = 0u;
const BUILD_SPLIT: u32 = 1u;
const BUILD_DONE: u32 = 2u;
const BUILD_PAIR: u32 = 3u;

// Set bits among the sampled keys (0..63) and the sampled queries (64..127) of a node; a
// top level's node counts those of up to TOP_GROUP (four) nodes of its pass at once
// (top.wgsl), 128 words each.
var<workgroup> bits: array<atomic<u32>, 512>;
var<workgroup> chosen: u32;
// The first of a split's two node slots, or NONE; a subtree's split's children (thread
// 0's).
var<workgroup> slots: u32;
var<workgroup> kids: array<Node, 2>;
// `rest`: the nodes waiting to be built, the one being built and what to do with it.
var<workgroup> stack: array<Node, STACK>;
var<workgroup> depth: u32;
var<workgroup> cur: Node;
var<workgroup> mode: u32;
// `rest`: the sampled queries that reach the node being built, as indices into its fill's
// sample: for each node on the stack, a prefix of `listed` (its `pad`: how many, or NONE
// where its subtree has not listed them yet). A split moves the queries without its bit to
// the front, so the prefix of its child with the bit lies within its own, and the building
// of that child's subtree, which goes first, only reorders that prefix. Each invocation
// holds the entries it read (`held_*`, every GROUP_SIZE-th from its index) from choosing
// the bit to partitioning them, and a leaf of two blocks its queries to order its keys.
const LISTED: u32 = 4096u;
const LISTED_EACH: u32 = LISTED / GROUP_SIZE;
var<workgroup> listed: array<u32, LISTED>;
var<workgroup> listing: atomic<u32>;
var<workgroup> listed_len: u32;
var<private> held: u32;
var<private> held_ids: array<u32, LISTED_EACH>;
var<private> held_qs: array<vec2<u32>, LISTED_EACH>;

// A leaf of two blocks' AND of its keys, and which of the queries held for it (`held_qs`)
// are still alive: without its skip bits so far (subtrees.wgsl).
var<workgroup> key_and: array<atomic<u32>, 2>;
var<private> alive: u32;

// Thread 0's tally of the keys and sampled queries its workgroup reads or writes in global
// memory, every pass counted (a partition's count and move are two, a leaf's copy back to
// `stored` one), for the work counters it adds once at the end
// (`results.wgsl`).
var<private> acc: u32;
// Of those passes, the keys thread 0's workgroup wrote (a move's, a copy back's): a pass
// that moves a key reads and writes it, two accesses of the memory where `acc` counts one,
// and the span model prices the memory's traffic.
var<private> wrote: u32;

// The exclusive prefix of `v` over the workgroup, and the workgroup's total.
fn excl_scan(li: u32, v: u32) -> vec2<u32> {
    let s = excl_scan4(li, vec4<u32>(v, 0u, 0u, 0u));
    return vec2<u32>(s.before.x, s.total.x);
}

// The workgroup's scans' values (top.wgsl scans four counts at once).
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

// Word w (TREE_*) of fill fid's counters in `scan`.
fn counter(fid: u32, w: u32) -> u32 {
    return p.tree_at + fid * TREE_WORDS + w;
}

// Adds v to the keys and sampled queries fill fid's build read (thread 0).
fn tested(fid: u32, v: u32) {
    let at = counter(fid, TREE_TESTS);
    let old = atomicAdd(&scan[at], v);
    if (old + v < old) {
        atomicAdd(&scan[at + 1u], 1u);
    }
}

fn unfinished(fid: u32) {
    atomicOr(&scan[counter(fid, TREE_UNFINISHED)], 1u);
}

// Adds the set bits of k to `bits` from `at` (0: keys, 64: queries).
fn count_bits(at: u32, k: vec2<u32>) {
    var x = k.x;
    for (var i = 0u; i < 32u && x != 0u; i = i + 1u) {
        atomicAdd(&bits[at + firstTrailingBit(x)], 1u);
        x = x & (x - 1u);
    }
    var y = k.y;
    for (var i = 0u; i < 32u && y != 0u; i = i + 1u) {
        atomicAdd(&bits[at + 32u + firstTrailingBit(y)], 1u);
        y = y & (y - 1u);
    }
}

// The fill's query sample: how many, and the stride between them.
fn sample_of(f: Fill) -> vec2<u32> {
    let q = f.queries_end - f.queries;
    let qs = min(q, p.query_sample);
    return vec2<u32>(qs, max(q / max(qs, 1u), 1u));
}

// Key i of `temp` where `in_temp`, else of `stored` (a workgroup's choice is uniform).
fn key_at(in_temp: bool, i: u32) -> vec2<u32> {
    if (in_temp) {
        return temp[i];
    }
    return stored[i];
}

fn put_key(in_temp: bool, i: u32, k: vec2<u32>) {
    if (in_temp) {
        temp[i] = k;
    } else {
        stored[i] = k;
    }
}

// Whether the nodes of the top level being built hold their keys in `temp`.
fn level_in_temp() -> bool {
    return (p.level & 1u) == 1u;
}

// Clears `bits` and counts the set bits of node e's sampled keys (bits 0..63: at most
// `most` keys, by stride), read from `temp` where `in_temp`; returns how many it sampled.
fn count_keys(li: u32, f: Fill, e: Node, in_temp: bool, most: u32) -> u32 {
    if (li < 128u) {
        atomicStore(&bits[li], 0u);
    }
    workgroupBarrier();
    let n = e.keys.y - e.keys.x;
    let step = max(n / most, 1u);
    let sampled = (n + step - 1u) / step;
    let mask = f.live & ~e.used;
    for (var i = li; i < sampled; i = i + GROUP_SIZE) {
        count_bits(0u, key_at(in_temp, e.keys.x + i * step) & mask);
    }
    return sampled;
}

// Once every invocation has counted `bits`, the bit a node splits on (`reads` sampled
// queries were read, and `read` of its sampled keys from global memory).
fn pick(li: u32, e: Node, sampled: u32, reads: u32, read: u32) -> u32 {
    workgroupBarrier();
    if (li == 0u) {
        tested(e.fill, sampled + reads);
        acc = acc + read + reads;
        chosen = best_bit(0u, sampled);
    }
    return workgroupUniformLoad(&chosen);
}

// The bit with the most (sampled keys with it) × (sampled queries that reach the node with
// it), among those some but not all of its `sampled` keys have, the lowest of equals (NONE:
// none), by the counts of `bits` from `at` (keys, then queries: 128 words).
fn best_bit(at: u32, sampled: u32) -> u32 {
    var best = NONE;
    var score = 0u;
    for (var b = 0u; b < 64u; b = b + 1u) {
        let k = atomicLoad(&bits[at + b]);
        let s = k * atomicLoad(&bits[at + 64u + b]);
        if (k > 0u && k < sampled && s > score) {
            best = b;
            score = s;
        }
    }
    return best;
}

// Moves the keys of [lo, hi) of `temp` (where `from_temp`, else of `stored`) into the same
// places of the other buffer, those without `bit` first, in order, and those with it after
// them, in order; returns how many are without it. The keys stay there: the next split
// moves them back, so a key passes each level twice (read to count, and moved).
fn part_across(li: u32, lo: u32, hi: u32, bit: u32, from_temp: bool) -> u32 {
    let chunk = (hi - lo + GROUP_SIZE - 1u) / GROUP_SIZE;
    let a = min(lo + li * chunk, hi);
    let b = min(a + chunk, hi);
    var zeros = 0u;
    for (var i = a; i < b; i = i + 1u) {
        zeros = zeros + select(1u, 0u, has_bit(key_at(from_temp, i), bit));
    }
    let s = excl_scan(li, zeros);
    var z = lo + s.x;
    var o = lo + s.y + (a - lo - s.x);
    for (var i = a; i < b; i = i + 1u) {
        let k = key_at(from_temp, i);
        if (has_bit(k, bit)) {
            put_key(!from_temp, o, k);
            o = o + 1u;
        } else {
            put_key(!from_temp, z, k);
            z = z + 1u;
        }
    }
    storageBarrier();
    return s.y;
}

// Copies the keys of [lo, hi) from `temp` back to `stored`, where leaves and blocks read
// them (every invocation; none where they are in `stored`). Returns the keys copied.
fn settle(li: u32, lo: u32, hi: u32, in_temp: bool) -> u32 {
    if (!in_temp) {
        return 0u;
    }
    for (var i = lo + li; i < hi; i = i + GROUP_SIZE) {
        stored[i] = temp[i];
    }
    storageBarrier();
    return hi - lo;
}

// Two node slots for a split of fill fid (the first one's index), once a leaf slot is
// reserved for its second child; NONE where the fill has none to spare.
fn reserve_split(fid: u32, f: Fill) -> u32 {
    let r = atomicAdd(&scan[counter(fid, TREE_RESERVED)], 1u);
    if (r + 1u > f.leaf_cap) {
        atomicSub(&scan[counter(fid, TREE_RESERVED)], 1u);
        return NONE;
    }
    let a = atomicAdd(&scan[counter(fid, TREE_NODES)], 2u);
    if (a + 2u > f.node_cap) {
        // Reserved leaves bound the nodes (a tree of k leaves has 2k - 1): never here.
        unfinished(fid);
        return NONE;
    }
    return f.root + a;
}

// The bits a node's path used with `bit` added.
fn with_bit(m: vec2<u32>, bit: u32) -> vec2<u32> {
    if (bit < 32u) {
        return m | vec2<u32>(1u << bit, 0u);
    }
    return m | vec2<u32>(0u, 1u << (bit - 32u));
}

// Makes node `e` a split on `bit` into the slots from `a` (thread 0): its keys without
// the bit are those before `mid`. Returns its children, the one without the bit first.
fn split(e: Node, bit: u32, mid: u32, a: u32) -> array<Node, 2> {
    tree[e.node] = vec4<u32>(bit, a + 1u, a, 0u);
    let used = with_bit(e.used, bit);
    // After the subtree with the bit, a walk goes on to the one without it.
    let one = Node(vec2<u32>(mid, e.keys.y), a, a + 1u, used, with_bit(e.taken, bit), e.fill, 0u);
    let zero = Node(vec2<u32>(e.keys.x, mid), a + 1u, e.next, used, e.taken, e.fill, 0u);
    return array<Node, 2>(zero, one);
}

// Splits subtree node `e` on `bit` (every invocation, uniformly): reserves its slots,
// partitions its keys from the buffer they are in (`temp` where `in_temp`) into the other,
// or where they are held in registers (`in_regs`, subtrees.wgsl) renumbers them, and writes the split, its
// children left in `kids` for thread 0. False where it does not split (no bit, or no leaf
// slot to spare).
fn split_node(li: u32, f: Fill, e: Node, bit: u32, in_temp: bool, in_regs: bool) -> bool {
    if (li == 0u) {
        slots = select(NONE, reserve_split(e.fill, f), bit != NONE);
    }
    let a = workgroupUniformLoad(&slots);
    if (a == NONE) {
        return false;
    }
    var zeros = 0u;
    if (in_regs) {
        zeros = part_held(li, e.keys.x, e.keys.y, bit);
    } else {
        zeros = part_across(li, e.keys.x, e.keys.y, bit, in_temp);
    }
    if (li == 0u) {
        tested(e.fill, e.keys.y - e.keys.x);
        if (!in_regs) {
            acc = acc + 2u * (e.keys.y - e.keys.x);
            wrote = wrote + e.keys.y - e.keys.x;
        }
        let two = split(e, bit, e.keys.x + zeros, a);
        kids[0] = two[0];
        kids[1] = two[1];
    }
    return true;
}

// Makes node `e` a leaf (thread 0).
fn leaf(f: Fill, e: Node) {
    let l = atomicAdd(&scan[counter(e.fill, TREE_LEAVES)], 1u);
    if (l >= f.leaf_cap) {
        // Reserved slots bound the leaves: never here.
        unfinished(e.fill);
        return;
    }
    let n = e.keys.y - e.keys.x;
    tree[e.node] = vec4<u32>(LEAF | (f.leaf_base + l), 0u, 0u, e.next);
    leaves[f.leaf_base + l] = vec2<u32>(e.keys.x, n);
    atomicAdd(&scan[counter(e.fill, TREE_BLOCKS)], (n + BLOCK_KEYS - 1u) / BLOCK_KEYS);
}

// Where list `list` starts in `lists` (top level 1..TOP_LEVELS-1, the subtrees' at
// TOP_LEVELS), its length's word in `scan`, and its room.
fn list_at(list: u32) -> u32 {
    return (list - 1u) * p.level_cap;
}

fn list_len(list: u32) -> u32 {
    return HEAD_LISTS + list - 1u;
}

fn list_cap(list: u32) -> u32 {
    return select(p.level_cap, p.subtree_cap, list == TOP_LEVELS);
}

// Appends `e` to list `list` (thread 0).
fn append(list: u32, e: Node) {
    let i = atomicAdd(&scan[list_len(list)], 1u);
    if (i >= list_cap(list)) {
        unfinished(e.fill);
        return;
    }
    lists[list_at(list) + i] = e;
    if (list == TOP_LEVELS) {
        grow_args(ARGS_SUBTREES, i + 1u);
    }
}

// Raises the dispatch at `at` in `args_out` to at least `groups` workgroups, in rows as
// `row_args` lays them out (its z word is 1 already): within the list's room, so within
// 65,535 a dimension.
fn grow_args(at: u32, groups: u32) {
    let a = row_args(groups);
    atomicMax(&args_out[at], a.x);
    atomicMax(&args_out[at + 1u], a.y);
}
