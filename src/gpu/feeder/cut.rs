//! Cut plans: how a join that found no room in a batch is cut, from the sizes its results
//! row measured before it ran out of room.

use crate::gpu::layout::{
    FILL_ERRORS, FILL_OVER_BLOCKS, FILL_OVER_ROUTES, FILL_ROOT_SHIFT, FILL_STOPPED, FILL_SWAPPED,
    FILL_UNFINISHED, RESULT_BLOCKS, RESULT_ROUTES, RESULT_SIZES, RESULT_STATUS, RESULT_TESTS,
    ROLE_EAST, ROLE_WEST, ROOT_CUTS_MARK, ROOT_DEPTH, ROOT_PARTS,
};
use crate::gpu::request::Request;
use crate::gpu::slot::Capacity;

/// Whether a join's own blocks or routes, as its results row counts them, pass a batch's
/// room: it would not fit alone either.
pub(super) fn past_room(row: &[u32], cap: &Capacity) -> bool {
    let status = row[RESULT_STATUS as usize];
    let over = |flag: u32, at: u32, room: u32| status & flag != 0 && row[at as usize] > room;
    over(FILL_OVER_BLOCKS, RESULT_BLOCKS, cap.blocks)
        || over(FILL_OVER_ROUTES, RESULT_ROUTES, cap.routes)
}

/// The parts of a join whose blocks or routes alone pass a batch's room, its stored side
/// split as its tree splits it: on its root's bit (its results row says which), and where
/// the row carries its root pass's cuts (a tree stopped there, past the blocks' room), on
/// its children's and theirs too, into as many parts as its blocks need, up to eight, in
/// one round. The parts are subtrees of the whole tree, so they visit about the blocks the
/// whole would (a cut into runs of jobs makes trees that every query meets: 1.33 times the
/// visits in the test), and share its routes. Past the routes' room, only where its stored
/// side has the more pairs: a cut of its queries makes the whole tree again for each part,
/// a split makes the queries' half join again for each. `None` where its tree did not get
/// that far, the bit cannot split it, or it passes [`ROOT_SPLIT_ROOMS`] batches' room.
pub(super) fn root_split(request: &Request, row: &[u32], cap: &Capacity) -> Option<Vec<Request>> {
    let status = row[RESULT_STATUS as usize];
    let bit = (status >> FILL_ROOT_SHIFT).checked_sub(1)?;
    let stored = stored_role(row);
    let (used, room) = match status & FILL_ERRORS {
        FILL_OVER_BLOCKS => (row[RESULT_BLOCKS as usize], cap.blocks),
        FILL_OVER_ROUTES if request.pairs(stored) >= request.pairs(query_role(row)) => {
            (row[RESULT_ROUTES as usize], cap.routes)
        }
        _ => return None,
    };
    if !past_room(row, cap) || u64::from(used) > ROOT_SPLIT_ROOMS * u64::from(room) {
        return None;
    }
    let (cuts, depth) = match root_cuts(row) {
        Some(cuts) => (cuts, split_depth(f64::from(used) / f64::from(room))),
        None => (heap_of(bit), 1),
    };
    let parts = split_by(request, &cuts, 1, depth, stored);
    (parts.len() >= 2).then_some(parts)
}

/// The most batches' blocks (or routes) a join split as its tree splits may take: its
/// parts, split again where they still pass the room, fit within about two rounds. Each
/// round makes every part's half join again (each tests all the join's pairs to keep its
/// own keys), so a join of more rooms is cut into runs of jobs at once. (Splitting them
/// all in halves, N = 28's sample on lavapipe's 5,391 blocks a batch, with joins of up to
/// six rooms, visited 0.73 times the blocks but, building every part's tree before the
/// stop at the root, built 1.3 times the trees and tested 1.7 times the half join's pairs:
/// more in all than it saved.)
const ROOT_SPLIT_ROOMS: u64 = 8;

/// A tree's cuts in a heap's order from 1 (a node `i`'s children `2i` without its bit and
/// `2i + 1` with it), `None` where a node does not split.
type Cuts = [Option<u32>; ROOT_PARTS as usize];

/// The root's bit alone.
fn heap_of(bit: u32) -> Cuts {
    let mut cuts = [None; ROOT_PARTS as usize];
    cuts[1] = Some(bit);
    cuts
}

/// The root pass's cuts a results row carries (top.wgsl's `stop_past_room`), if it does.
fn root_cuts(row: &[u32]) -> Option<Cuts> {
    let words = [row[RESULT_TESTS as usize], row[RESULT_TESTS as usize + 1]];
    if words[1] & ROOT_CUTS_MARK == 0 {
        return None;
    }
    Some(std::array::from_fn(|i| {
        let byte = |i: usize| (words[(i - 1) / 4] >> (8 * ((i - 1) % 4))) & 0xff;
        (i > 0).then(|| byte(i).checked_sub(1)).flatten()
    }))
}

/// Levels of the root pass to split a join of `rooms` batches' room on: parts of about
/// [`RANGE_SHARE`] of a room each where its cuts are even (a root's keys split 40:60 in
/// N = 28's joins, so the larger parts take more), at least two parts, at most the levels
/// a row carries the cuts of (`ROOT_DEPTH`).
fn split_depth(rooms: f64) -> u32 {
    let parts = (rooms / RANGE_SHARE).max(2.0);
    (parts.log2().ceil() as u32).min(ROOT_DEPTH)
}

/// `request`'s parts below heap node `i` of `cuts`, `depth` levels down at most.
fn split_by(request: &Request, cuts: &Cuts, i: usize, depth: u32, stored: u32) -> Vec<Request> {
    let cut = cuts.get(i).copied().flatten().filter(|_| depth > 0);
    match cut.and_then(|bit| request.split_on(bit, stored)) {
        Some([without, with]) => {
            let mut parts = split_by(&without, cuts, 2 * i, depth - 1, stored);
            parts.extend(split_by(&with, cuts, 2 * i + 1, depth - 1, stored));
            parts
        }
        None => vec![request.clone()],
    }
}

/// The role a join's results row says it stored.
pub(super) fn stored_role(row: &[u32]) -> u32 {
    if row[RESULT_STATUS as usize] & FILL_SWAPPED != 0 {
        ROLE_EAST
    } else {
        ROLE_WEST
    }
}

/// Of a batch's room, the share a part of a cut join aims at: parts come out uneven.
pub(crate) const CUT_SHARE: f64 = 0.5;

/// How to cut a join: the role to cut, and into how many parts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct CutPlan {
    pub(super) role: u32,
    pub(super) parts: u64,
}

/// How to cut a join that found no room alone in a batch of capacity `cap` on a device
/// (`software`: a CPU driver), from its results row (the sizes the GPU measured before it
/// ran out of room).
pub(super) fn cut_plan(
    request: &Request,
    row: &[u32],
    status: u32,
    cap: &Capacity,
    software: bool,
) -> CutPlan {
    let plan = |role, parts| CutPlan { role, parts };
    let (stored_role, query_role) = (stored_role(row), query_role(row));
    let size = |role: u32| row[(RESULT_SIZES + role) as usize];
    let (stored, queries) = (size(stored_role), size(query_role));
    if status & (FILL_UNFINISHED | FILL_STOPPED) != 0 {
        // Fewer stored keys make a smaller tree: on a GPU (a list of nodes to build ran out
        // of room) halved until one is finished; on a software driver, whose loop limit
        // stopped a subtree (or, alone in its batch, a block count workgroup), cut at once
        // to fills that one workgroup builds within it.
        let parts = if software {
            u64::from(stored).div_ceil(SOFTWARE_TREE_KEYS).max(2)
        } else {
            2
        };
        return plan(stored_role, parts);
    }
    if status & FILL_OVER_ROUTES != 0 {
        let routes = f64::from(row[RESULT_ROUTES as usize]);
        return plan(query_role, over(routes, cap.routes));
    }
    if status & FILL_OVER_BLOCKS != 0 {
        let blocks = f64::from(row[RESULT_BLOCKS as usize]);
        return plan(stored_role, over(blocks, cap.blocks));
    }
    // No room for its keys (or what they take: samples, tree slots, tied halves).
    let by_queries = over(f64::from(queries), cap.queries);
    let by_stored = over(f64::from(stored), cap.stored.min(cap.leaves / 5 * 512));
    if stored == 0 && queries == 0 {
        return plan(larger_role(request), 2);
    }
    if by_queries > by_stored {
        plan(query_role, by_queries)
    } else {
        plan(stored_role, by_stored)
    }
}

/// How to cut a portion ([`JOIN_PORTION`](crate::gpu::layout::JOIN_PORTION)) that found no
/// room alone: as [`cut_plan`] says, but its stored side is a range of the stored keys, cut
/// only into smaller ranges: as many as its blocks need where it passed their room (each
/// makes all its side's keys again to keep its range, so fewer and fuller than a join's
/// parts), else halves; where that range is down to one key, its queries are cut by jobs
/// instead (the queries of a portion of one key can pass a small slot's room).
pub(super) fn portion_plan(
    request: &Request,
    row: &[u32],
    status: u32,
    cap: &Capacity,
    software: bool,
) -> CutPlan {
    let plan = cut_plan(request, row, status, cap, software);
    if plan.role != stored_role(row) {
        return plan;
    }
    if request.desc.cap >= 2 {
        let parts = if status & FILL_OVER_BLOCKS != 0 {
            let blocks = f64::from(row[RESULT_BLOCKS as usize]);
            (blocks / (RANGE_SHARE * f64::from(cap.blocks)))
                .ceil()
                .max(2.0) as u64
        } else {
            2
        };
        return CutPlan { parts, ..plan };
    }
    let role = query_role(row);
    let queries = f64::from(row[(RESULT_SIZES + role) as usize]);
    CutPlan {
        role,
        parts: over(queries, cap.queries),
    }
}

/// Of a batch's blocks, the share a portion (or a range of one cut for them) aims at:
/// blocks a key vary little (N = 28's portions held 388 to 430 keys a block), and each
/// portion makes all its side's keys again.
pub(super) const RANGE_SHARE: f64 = 0.75;

/// Parts that bring `used` within the share of `room` a part aims at: two at least.
fn over(used: f64, room: u32) -> u64 {
    (used / (CUT_SHARE * f64::from(room))).ceil().max(2.0) as u64
}

/// Stored keys whose tree one workgroup builds within lavapipe's loop limit (65,535
/// iterations an invocation, every loop together), for a fill whose subtree ran past it
/// (its top levels, built level by level, were fewer than it needed): a tree of 149,477
/// keys at N = 22 built by one workgroup ran past it, its thirds (about 50,000 keys each)
/// stayed within.
const SOFTWARE_TREE_KEYS: u64 = 1 << 15;

/// The role a join's results row says it queried.
pub(super) fn query_role(row: &[u32]) -> u32 {
    if stored_role(row) == ROLE_WEST {
        ROLE_EAST
    } else {
        ROLE_WEST
    }
}

/// The side of `request` with more pairs.
pub(super) fn larger_role(request: &Request) -> u32 {
    if request.pairs(ROLE_WEST) >= request.pairs(ROLE_EAST) {
        ROLE_WEST
    } else {
        ROLE_EAST
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::layout::{split, JoinDesc, FILL_OVER_KEYS, JOIN_PORTION, RESULT_WORDS};

    /// A batch's room, its queries arena 1,000 keys.
    fn room() -> Capacity {
        Capacity {
            joins: 16,
            jobs: 1000,
            sides: 100,
            items: 10_000,
            words: 10_000,
            stored: 1000,
            queries: 1000,
            ties: 100,
            nodes: 100,
            leaves: 100,
            blocks: 50,
            routes: 10_000,
            wide_keys: 1 << 17,
            held_keys: 4096,
        }
    }

    /// The results row of a join that stored `stored` west keys against `queries` east ones
    /// and ended with `status`.
    fn row(stored: u32, queries: u32, status: u32) -> Vec<u32> {
        let mut row = vec![0; RESULT_WORDS as usize];
        row[RESULT_SIZES as usize] = stored;
        row[RESULT_SIZES as usize + 1] = queries;
        row[RESULT_STATUS as usize] = status;
        row
    }

    /// A portion of `keys` stored keys of a join of 10 west and 3,000 east keys.
    fn portion(keys: u32) -> Request {
        let desc = JoinDesc {
            flags: JOIN_PORTION,
            cap: keys,
            ..JoinDesc::default()
        };
        Request::of_keys(&[0; 10], &[0; 3000], desc)
    }

    /// A portion is halved while its range can be; one of a single key whose queries pass
    /// the room is cut on its queries (it was refused as a join that cannot be cut, and
    /// small slots could not count N = 24).
    #[test]
    fn a_portion_of_one_key_is_cut_on_its_queries() {
        let (cap, status) = (room(), FILL_OVER_KEYS);
        let halved = portion_plan(&portion(10), &row(10, 900, status), status, &cap, false);
        assert_eq!(halved.role, ROLE_WEST);
        let cut = portion_plan(&portion(1), &row(1, 3000, status), status, &cap, false);
        assert_eq!(
            cut,
            CutPlan {
                role: ROLE_EAST,
                parts: 6
            }
        );
        // Its queries past the room: cut on them whatever its range.
        let cut = portion_plan(&portion(10), &row(10, 3000, status), status, &cap, false);
        assert_eq!(cut.role, ROLE_EAST);
    }

    /// A join past the routes' room is split on its root's bit where its stored side has
    /// the more pairs (each part of a cut of its queries makes the whole tree again); where
    /// its queries have, or past four rooms, it is not (a cut by jobs follows).
    #[test]
    fn a_join_past_the_routes_room_is_split_where_its_tree_weighs_most() {
        let cap = room();
        let desc = JoinDesc {
            live: split(0xff),
            ..JoinDesc::default()
        };
        let status = FILL_OVER_ROUTES | 4 << FILL_ROOT_SHIFT;
        let over = |stored: u32, queries: u32, routes: u32| {
            let mut r = row(stored, queries, status);
            r[RESULT_ROUTES as usize] = routes;
            r
        };
        let tall = Request::of_keys(&[1; 300], &[2; 10], desc);
        let parts = root_split(&tall, &over(300, 10, 25_000), &cap).expect("split");
        let fixed = |r: &Request| {
            r.sides
                .iter()
                .all(|s| s.role != ROLE_WEST || s.exact_mask[0] & 8 != 0)
        };
        assert!(parts.iter().all(fixed));
        assert!(root_split(&tall, &over(300, 10, 90_000), &cap).is_none());
        assert!(root_split(&tall, &over(300, 10, 9_000), &cap).is_none());
        let wide = Request::of_keys(&[1; 10], &[2; 300], desc);
        assert!(root_split(&wide, &over(10, 300, 25_000), &cap).is_none());
    }

    /// A portion past the blocks' room is cut at once into the ranges its blocks need, each
    /// about three quarters of the room (halving took a round, and a half join of all its
    /// side's keys, for each doubling); past the keys' room it is halved.
    #[test]
    fn a_portion_past_the_blocks_room_is_cut_into_ranges_at_once() {
        let (cap, status) = (room(), FILL_OVER_BLOCKS);
        let mut over = row(1000, 10, status);
        over[RESULT_BLOCKS as usize] = 200;
        let plan = portion_plan(&portion(1000), &over, status, &cap, false);
        assert_eq!((plan.role, plan.parts), (ROLE_WEST, 6));
        over[RESULT_BLOCKS as usize] = 51;
        let plan = portion_plan(&portion(1000), &over, status, &cap, false);
        assert_eq!(plan.parts, 2);
        let keys = portion_plan(
            &portion(1000),
            &row(1000, 10, FILL_OVER_KEYS),
            FILL_OVER_KEYS,
            &cap,
            false,
        );
        assert_eq!((keys.role, keys.parts), (ROLE_WEST, 2));
    }

    /// A join stopped at its root, past four rooms of blocks, is split on its root pass's
    /// cuts into eight parts at once, each with its path's bits; one past two rooms into
    /// four; a row without the cuts on its root's bit alone.
    #[test]
    fn a_join_stopped_at_its_root_is_split_on_its_root_pass_in_one_round() {
        let cap = room();
        let desc = JoinDesc {
            live: split(0xff),
            ..JoinDesc::default()
        };
        let request = Request::of_keys(&[1; 300], &[2; 10], desc);
        let status = FILL_OVER_BLOCKS | 2 << FILL_ROOT_SHIFT;
        let stopped = |blocks: u32| {
            let mut r = row(300, 10, status);
            r[RESULT_BLOCKS as usize] = blocks;
            // Bits 1 (the root), 2 and 3, then 4 to 7, each plus one, a byte each.
            r[RESULT_TESTS as usize] = 2 | 3 << 8 | 4 << 16 | 5 << 24;
            r[RESULT_TESTS as usize + 1] = 6 | 7 << 8 | 8 << 16 | ROOT_CUTS_MARK;
            r
        };
        let stored_bits = |r: &Request| {
            let s = r.sides.iter().find(|s| s.role == ROLE_WEST).unwrap();
            (s.exact_mask[0], s.exact_bits[0])
        };
        let parts = root_split(&request, &stopped(160), &cap).expect("split");
        let paths: Vec<_> = parts.iter().map(stored_bits).collect();
        // Heap order: node 2 (without bit 1) splits on bit 2, node 3 (with it) on bit 3;
        // node 4 (without 1 and 2) on bit 4, 5 (without 1, with 2) on 5, 6 on 6, 7 on 7.
        let b = |bits: &[u32]| bits.iter().map(|&k| 1u32 << k).sum::<u32>();
        let want = [
            (b(&[1, 2, 4]), 0),
            (b(&[1, 2, 4]), b(&[4])),
            (b(&[1, 2, 5]), b(&[2])),
            (b(&[1, 2, 5]), b(&[2, 5])),
            (b(&[1, 3, 6]), b(&[1])),
            (b(&[1, 3, 6]), b(&[1, 6])),
            (b(&[1, 3, 7]), b(&[1, 3])),
            (b(&[1, 3, 7]), b(&[1, 3, 7])),
        ];
        assert_eq!(paths, want);
        assert_eq!(
            root_split(&request, &stopped(90), &cap).map(|p| p.len()),
            Some(4)
        );
        assert_eq!(
            root_split(&request, &stopped(60), &cap).map(|p| p.len()),
            Some(2)
        );
        assert!(root_split(&request, &stopped(401), &cap).is_none());
        let mut plain = stopped(160);
        plain[RESULT_TESTS as usize + 1] = 0;
        assert_eq!(root_split(&request, &plain, &cap).map(|p| p.len()), Some(2));
    }
}
