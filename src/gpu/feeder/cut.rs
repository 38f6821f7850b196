//! Cut plans: how a join that found no room in a batch is cut, from the sizes its results
//! row measured before it ran out of room.

use crate::gpu::layout::{
    FILL_OVER_BLOCKS, FILL_OVER_ROUTES, FILL_SWAPPED, FILL_UNFINISHED, RESULT_BLOCKS,
    RESULT_ROUTES, RESULT_SIZES, RESULT_STATUS, ROLE_EAST, ROLE_WEST,
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

/// The role a join's results row says it stored.
pub(super) fn stored_role(row: &[u32]) -> u32 {
    if row[RESULT_STATUS as usize] & FILL_SWAPPED != 0 {
        ROLE_EAST
    } else {
        ROLE_WEST
    }
}

/// Of a batch's room, the share a part of a cut join aims at: parts come out uneven.
const CUT_SHARE: f64 = 0.5;

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
    let stored_role = stored_role(row);
    let query_role = if stored_role == ROLE_WEST {
        ROLE_EAST
    } else {
        ROLE_WEST
    };
    let size = |role: u32| row[(RESULT_SIZES + role) as usize];
    let (stored, queries) = (size(stored_role), size(query_role));
    let over = |used: f64, room: u32| (used / (CUT_SHARE * f64::from(room))).ceil().max(2.0);
    if status & FILL_UNFINISHED != 0 {
        // Fewer stored keys make a smaller tree: on a GPU (a list of nodes to build ran out
        // of room) halved until one is finished; on a software driver, whose loop limit
        // stopped a subtree, cut at once to fills that one workgroup builds within it.
        let parts = if software {
            u64::from(stored).div_ceil(SOFTWARE_TREE_KEYS).max(2)
        } else {
            2
        };
        return plan(stored_role, parts);
    }
    if status & FILL_OVER_ROUTES != 0 {
        let routes = f64::from(row[RESULT_ROUTES as usize]);
        return plan(query_role, over(routes, cap.routes) as u64);
    }
    if status & FILL_OVER_BLOCKS != 0 {
        let blocks = f64::from(row[RESULT_BLOCKS as usize]);
        return plan(stored_role, over(blocks, cap.blocks) as u64);
    }
    // No room for its keys (or what they take: samples, tree slots, tied halves).
    let by_queries = over(f64::from(queries), cap.queries);
    let by_stored = over(f64::from(stored), cap.stored.min(cap.leaves / 5 * 512));
    if stored == 0 && queries == 0 {
        return plan(larger_role(request), 2);
    }
    if by_queries > by_stored {
        plan(query_role, by_queries as u64)
    } else {
        plan(stored_role, by_stored as u64)
    }
}

/// Stored keys whose tree one workgroup builds within lavapipe's loop limit (65,535
/// iterations an invocation, every loop together), for a fill whose subtree ran past it
/// (its top levels, built level by level, were fewer than it needed): a tree of 149,477
/// keys at N = 22 built by one workgroup ran past it, its thirds (about 50,000 keys each)
/// stayed within.
const SOFTWARE_TREE_KEYS: u64 = 1 << 15;

/// The side of `request` with more pairs.
pub(super) fn larger_role(request: &Request) -> u32 {
    if request.pairs(ROLE_WEST) >= request.pairs(ROLE_EAST) {
        ROLE_WEST
    } else {
        ROLE_EAST
    }
}
