//! The interleaved search behind [`super::count`]: per-lane stacks of slots and the step that
//! advances one lane, in plain Rust or as x86-64 assembly.

use super::{Node, Rows, LANES, MAX_ROWS};

/// One stack level of one lane. Slot `r + 1` holds row `r`; the layout is fixed because the
/// x86-64 step addresses the fields by offset (one 64-byte line per slot).
#[repr(C, align(64))]
#[derive(Clone, Copy, Debug)]
pub(super) struct Slot {
    /// Occupied columns (offset 0).
    cols: u32,
    /// Down-left diagonal attacks on this row (offset 4).
    ld: u32,
    /// Down-right diagonal attacks on this row (offset 8).
    rd: u32,
    /// Free cells of this row not yet tried (offset 12).
    free: u32,
    /// Cells this row may use; fixed per board (offset 16).
    allowed: u32,
    _pad: u32,
    /// 1 in the last row's slot, else 0 (offset 24). The last row is entered once per
    /// solution and left after exactly one step, so the sum of `visit` over all steps is the
    /// number of solutions: no row test in the loop.
    visit: u64,
    /// Where to go when this slot is exhausted (offset 32): the nearest slot below with an
    /// untried cell. Exhausted slots are skipped at once ("eager pop"), so every step places
    /// a queen and no step is spent popping.
    resume: *mut Slot,
    _tail: [u64; 3],
}

// The x86-64 step's inline assembly addresses these fields by offset: keep them in step.
const _: () = {
    use std::mem::{offset_of, size_of};
    assert!(offset_of!(Slot, cols) == 0);
    assert!(offset_of!(Slot, ld) == 4);
    assert!(offset_of!(Slot, rd) == 8);
    assert!(offset_of!(Slot, free) == 12);
    assert!(offset_of!(Slot, allowed) == 16);
    assert!(offset_of!(Slot, visit) == 24);
    assert!(offset_of!(Slot, resume) == 32);
    assert!(size_of::<Slot>() == 64);
};

impl Default for Slot {
    fn default() -> Self {
        Slot {
            cols: 0,
            ld: 0,
            rd: 0,
            free: 0,
            allowed: 0,
            _pad: 0,
            visit: 0,
            resume: std::ptr::null_mut(),
            _tail: [0; 3],
        }
    }
}

/// Slots per lane: a sentinel below row 0, rows 0..n-1, and row n (never entered).
const SLOTS: usize = MAX_ROWS + 2;

/// One search step on the lane whose current slot is `*p` (which has an untried cell): take
/// the lowest untried cell, write the child into the slot above (with its resume point), move
/// up if the child's row has a free cell, else stay if this row has cells left, else resume.
pub(super) trait Step {
    /// # Safety
    /// `*p` must be a lane's slot with `free != 0` below its last slot, and every `resume`
    /// pointer reachable from it must point into the same lane (or its sentinel).
    unsafe fn step(p: &mut *mut Slot, visits: &mut u64);
}

/// The step in plain Rust, for any CPU.
pub(super) struct RustStep;

impl Step for RustStep {
    #[inline(always)]
    unsafe fn step(p: &mut *mut Slot, visits: &mut u64) {
        // SAFETY: the caller guarantees `*p` and the slot above it are in bounds.
        let (cur, next) = unsafe { (&mut **p, &mut *(*p).add(1)) };
        let avail = cur.free;
        let bit = avail & avail.wrapping_neg();
        cur.free = avail ^ bit;
        let resume = if cur.free != 0 { *p } else { cur.resume };
        next.resume = resume;
        next.cols = cur.cols | bit;
        next.ld = (cur.ld | bit) << 1;
        next.rd = (cur.rd | bit) >> 1;
        next.free = next.allowed & !(next.cols | next.ld | next.rd);
        *visits += cur.visit;
        *p = if next.free != 0 {
            (*p).wrapping_add(1)
        } else {
            resume
        };
    }
}

/// The step as one block of x86-64 assembly: no branches, few instructions, and the compiler
/// cannot turn the pointer update back into (mispredicted) jumps.
#[cfg(target_arch = "x86_64")]
pub(super) struct AsmStep;

#[cfg(target_arch = "x86_64")]
impl Step for AsmStep {
    #[inline(always)]
    unsafe fn step(p: &mut *mut Slot, visits: &mut u64) {
        // SAFETY: the caller guarantees the slots involved are in bounds and the CPU has BMI1
        // (`blsi`, `andn`); offsets follow `Slot`'s `repr(C)` layout (64 bytes a slot).
        unsafe {
            std::arch::asm!(
                "mov {a:e}, dword ptr [{p} + 12]",
                "blsi {b:e}, {a:e}",
                "xor {a:e}, {b:e}",
                "mov dword ptr [{p} + 12], {a:e}",
                "mov {t}, qword ptr [{p} + 32]",
                "test {a:e}, {a:e}",
                "cmovnz {t}, {p}",
                "mov qword ptr [{p} + 96], {t}",
                "mov {c:e}, dword ptr [{p}]",
                "or {c:e}, {b:e}",
                "mov {l:e}, dword ptr [{p} + 4]",
                "or {l:e}, {b:e}",
                "add {l:e}, {l:e}",
                "or {b:e}, dword ptr [{p} + 8]",
                "shr {b:e}, 1",
                "mov dword ptr [{p} + 64], {c:e}",
                "mov dword ptr [{p} + 68], {l:e}",
                "mov dword ptr [{p} + 72], {b:e}",
                "or {c:e}, {l:e}",
                "or {c:e}, {b:e}",
                "add {v}, qword ptr [{p} + 24]",
                "andn {c:e}, {c:e}, dword ptr [{p} + 80]",
                "mov dword ptr [{p} + 76], {c:e}",
                "lea {l}, [{p} + 64]",
                "cmovz {l}, {t}",
                "mov {p}, {l}",
                p = inout(reg) *p,
                v = inout(reg) *visits,
                a = out(reg) _,
                b = out(reg) _,
                t = out(reg) _,
                c = out(reg) _,
                l = out(reg) _,
                options(nostack),
            );
        }
    }
}

/// [`LANES`] independent searches, each with its own stack of slots.
pub(super) struct Lanes {
    slots: [[Slot; SLOTS]; LANES],
}

impl Lanes {
    /// Stacks whose `allowed` and `visit` fields describe `rows`.
    pub(super) fn new(rows: &Rows) -> Self {
        let n = rows.n() as usize;
        let mut template = [Slot::default(); SLOTS];
        for r in 0..n {
            template[r + 1].allowed = rows.allowed(r as u32);
        }
        template[n].visit = 1;
        Lanes {
            slots: [template; LANES],
        }
    }

    /// Counts completions of all `nodes` (each has row + 1 < n).
    #[inline(always)]
    pub(super) fn run<S: Step>(&mut self, rows: &Rows, nodes: &[Node]) -> u64 {
        let mut queue = nodes.iter().filter(|x| x.free(rows) != 0);
        let mut visits = 0u64;
        let mut cur = [std::ptr::null_mut::<Slot>(); LANES];
        let mut base = [std::ptr::null_mut::<Slot>(); LANES];
        let mut full = true;
        for i in 0..LANES {
            match queue.next() {
                Some(node) => (cur[i], base[i]) = self.load(i, rows, node),
                None => {
                    (cur[i], base[i]) = self.idle(i);
                    full = false;
                }
            }
        }
        // SAFETY: every `cur[i]` stays within lane i's slots: it starts at a node's row
        // (<= n - 2) with a free cell, moves up only into rows < n (row n allows nothing),
        // resumes only to slots at or above its base's sentinel, and is stepped only while it
        // is at or above its base.
        unsafe {
            if full {
                'outer: loop {
                    for lane in cur.iter_mut() {
                        S::step(lane, &mut visits);
                    }
                    for i in 0..LANES {
                        if cur[i] < base[i] {
                            match queue.next() {
                                Some(node) => (cur[i], base[i]) = self.load(i, rows, node),
                                None => break 'outer,
                            }
                        }
                    }
                }
            }
            // The queue is empty: finish the lanes still busy, one at a time.
            for i in 0..LANES {
                while cur[i] >= base[i] {
                    S::step(&mut cur[i], &mut visits);
                }
            }
        }
        visits
    }

    /// Starts lane `i` on `node`; returns its current and base slot pointers.
    fn load(&mut self, i: usize, rows: &Rows, node: &Node) -> (*mut Slot, *mut Slot) {
        let slot = &mut self.slots[i][node.row as usize + 1];
        slot.cols = node.cols;
        slot.ld = node.ld;
        slot.rd = node.rd;
        slot.free = node.free(rows);
        let p: *mut Slot = slot;
        slot.resume = p.wrapping_sub(1);
        (p, p)
    }

    /// A lane with no work: already below its base.
    fn idle(&mut self, i: usize) -> (*mut Slot, *mut Slot) {
        let lane = self.slots[i].as_mut_ptr();
        (lane, lane.wrapping_add(1))
    }
}
