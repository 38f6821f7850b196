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

mod search;

#[cfg(target_arch = "x86_64")]
use search::AsmStep;
use search::{Lanes, RustStep, Step};

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

#[cfg(test)]
mod tests;
