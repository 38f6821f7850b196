//! Settling a landed join: answered from its results row, or queued again, whole or cut.

use std::sync::{Arc, Mutex};

use super::cut::{
    cut_plan, past_room, portion_plan, query_role, root_split, stored_role, RANGE_SHARE,
};
use super::run::Loop;
use super::submission::{Reply, Submission, Whole};
use crate::gpu::layout::{
    wide, FILL_EMPTY, FILL_ERRORS, FILL_REFUSED, FILL_STOPPED, FILL_TOO_LARGE, FILL_UNFINISHED,
    JOIN_PORTION, RESULT_BLOCKS, RESULT_ROUTES, RESULT_SIZES, RESULT_STATUS, RESULT_WEIGHTED,
    ROLE_EAST,
};
use crate::gpu::request::Request;
use crate::work::Work;

impl Loop {
    /// Answers a join from its results row, or queues it again, whole or cut.
    /// `first`: it was its batch's first join, which gets every arena's room first;
    /// `alone`: its batch's only one.
    pub(super) fn settle(
        &mut self,
        s: Submission,
        row: &[u32],
        work: Work,
        (first, alone): (bool, bool),
    ) {
        let status = row[RESULT_STATUS as usize] & FILL_ERRORS;
        if status == 0 || status & FILL_EMPTY != 0 {
            let count = if status == 0 {
                wide(row, RESULT_WEIGHTED)
            } else {
                0
            };
            s.reply.send(Ok((Some(count), work)));
        } else if status & FILL_REFUSED != 0 {
            s.reply.send(Ok((None, work)));
        } else if status & FILL_TOO_LARGE != 0 {
            // Its stored side passes a fill: stored a portion at a time, as the CPU does,
            // each within what the batches so far say fills most of a batch's blocks (a
            // portion past them is cut into ranges, after a half join of all its keys).
            let role = stored_role(row);
            let keys = row[(RESULT_SIZES + role) as usize];
            let most = self
                .sizes
                .keys_for(RANGE_SHARE * f64::from(self.cap.blocks));
            let parts = s.request.portions(role == ROLE_EAST, keys, most);
            self.queue_parts(s, parts, work, Some(row));
        } else if status == FILL_STOPPED && !alone {
            // A software driver stopped a block count workgroup that met its routes beside
            // other joins': a workgroup that meets many small fills' blocks may be stopped
            // whoever they are, so cutting this one need not help (a join of N = 27 was
            // cut down to one job this way, and the run failed). Alone, a stop is its own.
            self.queue.push_front(Submission { alone: true, ..s });
        } else if !first
            && status & (FILL_UNFINISHED | FILL_STOPPED) == 0
            && !past_room(row, &self.cap)
        {
            // No room left in its batch after the joins before it: at the front of the
            // queue, so early in the next batch, with the joins after it. (A tree not
            // finished is the join's own, not its batch's: it is cut wherever it ran; so is
            // one whose blocks or routes alone pass a batch's, or that had the room first.)
            self.queue.push_front(s);
        } else if s.request.desc.flags & JOIN_PORTION != 0 {
            // A portion is a range of its stored keys: that side is cut only into smaller
            // ranges, at once into as many as its blocks need; its queries are cut by jobs
            // as any join's (that leaves its stored keys).
            let software = self.dev.adapter.software;
            let plan = portion_plan(&s.request, row, status, &self.cap, software);
            if plan.role == stored_role(row) {
                let parts = s.request.ranges(plan.parts);
                self.queue_parts(s, parts, work, Some(row));
            } else {
                let most = (s.request.pairs(plan.role) / plan.parts).max(1);
                self.cut(s, plan.role, most, work, Some(row));
            }
        } else if let Some(parts) = root_split(&s.request, row, &self.cap) {
            // Its blocks (or routes) alone pass a batch's: its stored side split as its
            // tree's root splits it.
            self.queue_parts(s, parts, work, Some(row));
        } else {
            // No room even alone: cut the side that fills the arena it passed, into as many
            // parts as its measured sizes say.
            let software = self.dev.adapter.software;
            let plan = cut_plan(&s.request, row, status, &self.cap, software);
            let most = (s.request.pairs(plan.role) / plan.parts).max(1);
            self.cut(s, plan.role, most, work, Some(row));
        }
    }

    /// Queues the parts of `s` cut on role `role` into runs of at most `most` pairs, first in
    /// line; their counts add up to its count. A join that cannot be cut fails. `row`: the
    /// results row of its try, if it ran.
    pub(super) fn cut(
        &mut self,
        s: Submission,
        role: u32,
        most: u64,
        work: Work,
        row: Option<&[u32]>,
    ) {
        let parts = s.request.cut(role, most);
        self.queue_parts(s, parts, work, row);
    }

    /// Queues `parts`, requests whose counts add up to that of `s`, first in line. Fewer
    /// than two: `s` cannot be cut, and fails. Where it ran (`row`, its try's results), its
    /// parts make its pairs again, and what it needs of a batch is noted: a GPU whose
    /// batches hold it whole would not cut it.
    fn queue_parts(&mut self, s: Submission, parts: Vec<Request>, work: Work, row: Option<&[u32]>) {
        if parts.len() < 2 {
            let why = "a join too large for the GPU's batch buffers, and it cannot be cut";
            s.reply.send(Err(why.to_string()));
            return;
        }
        let mut work = Work {
            regenerations: parts.len() as u64 - 1,
            ..work
        };
        if let Some(row) = row {
            note_cut(row, &mut work);
            note_tried(&mut work);
        }
        let whole = Whole::new(parts.len(), work, s.reply).tried(row.is_some());
        let whole = Arc::new(Mutex::new(whole));
        for request in parts.into_iter().rev() {
            self.queue.push_front(Submission {
                request,
                reply: Reply::Part(Arc::clone(&whole)),
                seq: s.seq,
                alone: false,
                again: s.again || row.is_some(),
            });
        }
    }
}

/// Notes in `work` what a join cut after its try (whose results row is `row`) needs of a
/// batch to run whole: its stored keys and queries, as its half join counted them all, and
/// the blocks and routes its try measured (its parts' add up at the end: [`Whole`]).
fn note_cut(row: &[u32], work: &mut Work) {
    let size = |r: u32| u64::from(row[(RESULT_SIZES + r) as usize]);
    let stored = size(stored_role(row));
    work.gpu_cut_keys += stored;
    work.gpu_cut_stored_peak = work.gpu_cut_stored_peak.max(stored);
    work.gpu_cut_queries_peak = work.gpu_cut_queries_peak.max(size(query_role(row)));
    let blocks = u64::from(row[RESULT_BLOCKS as usize]);
    let routes = u64::from(row[RESULT_ROUTES as usize]);
    work.gpu_cut_blocks_peak = work.gpu_cut_blocks_peak.max(blocks);
    work.gpu_cut_routes_peak = work.gpu_cut_routes_peak.max(routes);
}

/// Notes a cut try's own share of its batches' tree work (`work`: what the try did).
fn note_tried(work: &mut Work) {
    work.gpu_tried_top_accesses += work.gpu_top_accesses + work.gpu_top_writes;
    work.gpu_tried_wide_tiles += work.gpu_wide_tiles;
    work.gpu_tried_rest_accesses += work.gpu_rest_accesses + work.gpu_rest_writes;
}
