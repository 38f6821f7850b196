//! The completion kernel shared by the backtracking engines.
//!
//! A partial placement is a [`Node`]: the next row to fill and three bitmasks (occupied
//! columns, and the diagonals that attack that row from the left and from the right). A
//! [`Rows`] template says which cells each row may use, so the same kernel serves the plain
//! board, boards with blocked cells, and boards with pre-placed queens (a pre-placed row allows
//! only its queen's cell).
//!
//! [`count`] runs an iterative, branch-free depth-first search. A recursive search is one long
//! dependency chain plus an unpredictable branch per node; here [`LANES`] independent searches
//! are interleaved in one loop, each step chooses push / stay / pop with arithmetic rather than
//! branches, and the last row is counted without descending into it. The CPU overlaps the
//! lanes' dependency chains. The stack is a structure of arrays, indexed by row.

/// How many independent searches one thread interleaves.
pub(crate) const LANES: usize = 4;

/// The most rows a board may have (row masks are `u32`).
const MAX_ROWS: usize = 32;

/// Which cells each row of an `n`×`n` board may use (bit `c` = column `c`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rows {
    n: u32,
    allowed: [u32; MAX_ROWS],
}

impl Rows {
    /// Every cell of an `n`×`n` board is allowed. `n` must be 1..=32.
    pub fn full(n: u32) -> Self {
        assert!((1..=32).contains(&n), "board size {n} out of range");
        let mask = full_mask(n);
        Rows {
            n,
            allowed: [mask; MAX_ROWS],
        }
    }

    /// Rows with the given allowed-cell masks (one per row; bits past `n` are ignored).
    pub fn from_masks(masks: &[u32]) -> Self {
        let n = masks.len() as u32;
        let mut rows = Rows::full(n);
        for (slot, m) in rows.allowed.iter_mut().zip(masks) {
            *slot = m & full_mask(n);
        }
        rows
    }

    /// The board size.
    pub fn n(&self) -> u32 {
        self.n
    }

    /// The allowed cells of row `r`.
    pub fn allowed(&self, r: u32) -> u32 {
        self.allowed[r as usize]
    }

    /// Restricts row `r` to the cells in `mask`.
    pub fn restrict(&mut self, r: u32, mask: u32) {
        self.allowed[r as usize] &= mask;
    }
}

/// The low `n` bits set.
pub(crate) fn full_mask(n: u32) -> u32 {
    if n >= 32 {
        u32::MAX
    } else {
        (1u32 << n) - 1
    }
}

/// A partial placement: rows `0..row` are filled; the masks say what attacks row `row`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub(crate) struct Node {
    /// The next row to fill.
    pub row: u32,
    /// Occupied columns.
    pub cols: u32,
    /// Cells of row `row` attacked along down-left diagonals (shifted left each row).
    pub ld: u32,
    /// Cells of row `row` attacked along down-right diagonals (shifted right each row).
    pub rd: u32,
}

impl Node {
    /// The empty board.
    pub(crate) const ROOT: Node = Node {
        row: 0,
        cols: 0,
        ld: 0,
        rd: 0,
    };

    /// The cells of row `row` where a queen may go.
    pub(crate) fn free(&self, rows: &Rows) -> u32 {
        rows.allowed(self.row) & !(self.cols | self.ld | self.rd)
    }

    /// The node after placing a queen at column bit `bit` of row `row`.
    pub(crate) fn place(&self, bit: u32) -> Node {
        Node {
            row: self.row + 1,
            cols: self.cols | bit,
            ld: (self.ld | bit) << 1,
            rd: (self.rd | bit) >> 1,
        }
    }

    /// The children of this node (one per free cell), in column order.
    pub(crate) fn children<'a>(&self, rows: &'a Rows) -> impl Iterator<Item = Node> + 'a {
        let node = *self;
        let free = if node.row < rows.n() {
            node.free(rows)
        } else {
            0
        };
        bits(free).map(move |b| node.place(b))
    }
}

/// The set bits of `mask`, lowest first, each as a one-bit mask.
pub(crate) fn bits(mut mask: u32) -> impl Iterator<Item = u32> {
    std::iter::from_fn(move || {
        let b = mask & mask.wrapping_neg();
        mask ^= b;
        (b != 0).then_some(b)
    })
}

/// Expands `nodes` until every node has filled `row` rows (or the board); dead ends vanish.
pub(crate) fn expand_to(rows: &Rows, nodes: Vec<Node>, row: u32) -> Vec<Node> {
    let row = row.min(rows.n());
    let mut out = Vec::with_capacity(nodes.len());
    let mut stack = nodes;
    stack.reverse();
    while let Some(node) = stack.pop() {
        if node.row >= row {
            out.push(node);
        } else {
            let before = stack.len();
            stack.extend(node.children(rows));
            stack[before..].reverse();
        }
    }
    out
}

/// Expands `nodes` row by row until there are at least `target` of them, or none can be
/// expanded further without reaching the last row.
pub(crate) fn expand_at_least(rows: &Rows, mut nodes: Vec<Node>, target: usize) -> Vec<Node> {
    while nodes.len() < target {
        let Some(min_row) = nodes.iter().map(|x| x.row).min() else {
            break;
        };
        if min_row + 2 >= rows.n() {
            break;
        }
        nodes = expand_to(rows, nodes, min_row + 1);
    }
    nodes
}

/// Start nodes [`count_subtree`] hands the kernel per call, so its lanes stay busy and the
/// single-lane tail of each call is short.
pub(crate) const SUBTREE_NODES: usize = 128 * LANES;

/// Counts the completions of one node: expands it into at least [`SUBTREE_NODES`] start nodes
/// (fewer near the last row), then runs [`count`] on them. The engines' tasks end here.
fn count_subtree(rows: &Rows, node: Node) -> u64 {
    count(rows, &expand_at_least(rows, vec![node], SUBTREE_NODES))
}

/// [`count_subtree`] on the portable code path only (plain Rust step, whatever the CPU): the
/// second code path `--recheck` compares against.
fn count_subtree_portable(rows: &Rows, node: Node) -> u64 {
    count_portable(rows, &expand_at_least(rows, vec![node], SUBTREE_NODES))
}

/// A start node and how many boards it stands for (2 for a start whose mirror image is
/// counted with it): the tasks of the plans that expand the whole board from its first row.
pub(crate) type Weighted = (Node, u8);

/// The solutions a weighted start stands for: [`count_subtree`] times its weight.
pub(crate) fn count_weighted(rows: &Rows, (node, weight): Weighted) -> u128 {
    u128::from(count_subtree(rows, node)) * u128::from(weight)
}

/// [`count_weighted`] on the portable code path only (see [`count_subtree_portable`]).
pub(crate) fn count_weighted_portable(rows: &Rows, (node, weight): Weighted) -> u128 {
    u128::from(count_subtree_portable(rows, node)) * u128::from(weight)
}

/// Counts the completions of every node in `nodes` (the sum over all of them).
pub(crate) fn count(rows: &Rows, nodes: &[Node]) -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("bmi1") {
            // SAFETY: the feature the function was compiled for was just detected.
            return unsafe { count_bmi(rows, nodes) };
        }
    }
    count_portable(rows, nodes)
}

/// The name of the code path [`count`] takes on this CPU.
pub(crate) fn code_path() -> &'static str {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("bmi1") {
            return "x86-64 bmi1 (asm step)";
        }
    }
    "portable"
}

/// [`count`] with the hand-scheduled x86-64 step (BMI1 `blsi`/`andn`, conditional moves).
///
/// # Safety
/// The CPU must support `bmi1`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "bmi1")]
unsafe fn count_bmi(rows: &Rows, nodes: &[Node]) -> u64 {
    count_with::<AsmStep>(rows, nodes)
}

/// [`count`] for any CPU (plain Rust step).
pub(crate) fn count_portable(rows: &Rows, nodes: &[Node]) -> u64 {
    count_with::<RustStep>(rows, nodes)
}

#[inline(always)]
fn count_with<S: Step>(rows: &Rows, nodes: &[Node]) -> u64 {
    let n = rows.n();
    let (deep, shallow): (Vec<Node>, Vec<Node>) = nodes.iter().partition(|x| x.row + 1 < n);
    let near_end: u64 = shallow.iter().map(|x| count_near_end(rows, x)).sum();
    let mut lanes = Lanes::new(rows);
    near_end + lanes.run::<S>(rows, &deep)
}

/// Completions of a node in the last row or past it.
fn count_near_end(rows: &Rows, node: &Node) -> u64 {
    if node.row >= rows.n() {
        1
    } else {
        u64::from(node.free(rows).count_ones())
    }
}

/// One stack level of one lane. Slot `r + 1` holds row `r`; the layout is fixed because the
/// x86-64 step addresses the fields by offset (one 64-byte line per slot).
#[repr(C, align(64))]
#[derive(Clone, Copy, Debug)]
struct Slot {
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
trait Step {
    /// # Safety
    /// `*p` must be a lane's slot with `free != 0` below its last slot, and every `resume`
    /// pointer reachable from it must point into the same lane (or its sentinel).
    unsafe fn step(p: &mut *mut Slot, visits: &mut u64);
}

/// The step in plain Rust, for any CPU.
struct RustStep;

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
struct AsmStep;

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
struct Lanes {
    slots: [[Slot; SLOTS]; LANES],
}

impl Lanes {
    /// Stacks whose `allowed` and `visit` fields describe `rows`.
    fn new(rows: &Rows) -> Self {
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
    fn run<S: Step>(&mut self, rows: &Rows, nodes: &[Node]) -> u64 {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Plain recursion, the simplest correct counter.
    fn recursive(rows: &Rows, node: Node) -> u64 {
        if node.row == rows.n() {
            return 1;
        }
        node.children(rows).map(|c| recursive(rows, c)).sum()
    }

    #[test]
    fn kernel_matches_plain_recursion_on_full_boards() {
        for n in 1..=11 {
            let rows = Rows::full(n);
            assert_eq!(
                count(&rows, &[Node::ROOT]),
                recursive(&rows, Node::ROOT),
                "n = {n}"
            );
        }
    }

    #[test]
    fn kernel_matches_plain_recursion_on_many_start_nodes() {
        let rows = Rows::full(10);
        for depth in 0..=10 {
            let nodes = expand_to(&rows, vec![Node::ROOT], depth);
            assert_eq!(count(&rows, &nodes), 724, "depth {depth}");
            assert_eq!(count_portable(&rows, &nodes), 724, "depth {depth}");
        }
    }

    #[test]
    fn kernel_respects_blocked_cells() {
        // Block the main diagonal of an 8x8 board.
        let masks: Vec<u32> = (0..8).map(|r| full_mask(8) & !(1 << r)).collect();
        let rows = Rows::from_masks(&masks);
        let nodes = expand_at_least(&rows, vec![Node::ROOT], 20);
        assert_eq!(count(&rows, &nodes), recursive(&rows, Node::ROOT));
    }

    #[test]
    fn expansion_keeps_every_completion() {
        let rows = Rows::full(9);
        let nodes = expand_at_least(&rows, vec![Node::ROOT], 100);
        assert!(nodes.len() >= 100);
        assert_eq!(count(&rows, &nodes), 352);
    }

    #[test]
    fn dead_nodes_and_fewer_nodes_than_lanes_are_handled() {
        let rows = Rows::full(8);
        let dead = Node {
            row: 2,
            cols: 0b1111_1111,
            ld: 0,
            rd: 0,
        };
        let live = expand_to(&rows, vec![Node::ROOT], 1);
        for k in 0..=live.len() {
            let mut nodes = vec![dead; 3];
            nodes.extend_from_slice(&live[..k]);
            let expected: u64 = live[..k].iter().map(|x| recursive(&rows, *x)).sum();
            assert_eq!(count(&rows, &nodes), expected, "{k} live nodes");
            assert_eq!(count_portable(&rows, &nodes), expected, "{k} live nodes");
        }
    }

    proptest::proptest! {
        #[test]
        fn both_step_implementations_agree_with_recursion_on_random_masks(
            n in 4u32..=9,
            holes in proptest::collection::vec(0u32..81, 0..12),
            depth in 0u32..4,
        ) {
            let mut masks = vec![full_mask(n); n as usize];
            for h in holes {
                masks[(h / 9 % n) as usize] &= !(1 << (h % 9 % n));
            }
            let rows = Rows::from_masks(&masks);
            let nodes = expand_to(&rows, vec![Node::ROOT], depth);
            let expected = recursive(&rows, Node::ROOT);
            proptest::prop_assert_eq!(count(&rows, &nodes), expected);
            proptest::prop_assert_eq!(count_portable(&rows, &nodes), expected);
        }
    }

    #[test]
    fn thirty_two_columns_fit() {
        let rows = Rows::full(32);
        assert_eq!(full_mask(32), u32::MAX);
        assert_eq!(Node::ROOT.free(&rows).count_ones(), 32);
    }
}
