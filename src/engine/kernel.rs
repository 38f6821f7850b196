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
pub const LANES: usize = 4;

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
pub fn full_mask(n: u32) -> u32 {
    if n >= 32 {
        u32::MAX
    } else {
        (1u32 << n) - 1
    }
}

/// A partial placement: rows `0..row` are filled; the masks say what attacks row `row`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Node {
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
    pub const ROOT: Node = Node {
        row: 0,
        cols: 0,
        ld: 0,
        rd: 0,
    };

    /// The cells of row `row` where a queen may go.
    pub fn free(&self, rows: &Rows) -> u32 {
        rows.allowed(self.row) & !(self.cols | self.ld | self.rd)
    }

    /// The node after placing a queen at column bit `bit` of row `row`.
    pub fn place(&self, bit: u32) -> Node {
        Node {
            row: self.row + 1,
            cols: self.cols | bit,
            ld: (self.ld | bit) << 1,
            rd: (self.rd | bit) >> 1,
        }
    }

    /// The children of this node (one per free cell), in column order.
    pub fn children<'a>(&self, rows: &'a Rows) -> impl Iterator<Item = Node> + 'a {
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
pub fn bits(mut mask: u32) -> impl Iterator<Item = u32> {
    std::iter::from_fn(move || {
        let b = mask & mask.wrapping_neg();
        mask ^= b;
        (b != 0).then_some(b)
    })
}

/// Expands `nodes` until every node has filled `row` rows (or the board); dead ends vanish.
pub fn expand_to(rows: &Rows, nodes: Vec<Node>, row: u32) -> Vec<Node> {
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
pub fn expand_at_least(rows: &Rows, mut nodes: Vec<Node>, target: usize) -> Vec<Node> {
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

/// Counts the completions of every node in `nodes` (the sum over all of them).
pub fn count(rows: &Rows, nodes: &[Node]) -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("bmi1")
            && std::arch::is_x86_feature_detected!("popcnt")
        {
            // SAFETY: the features the function was compiled for were just detected.
            return unsafe { count_bmi(rows, nodes) };
        }
    }
    count_portable(rows, nodes)
}

/// The name of the code path [`count`] takes on this CPU.
pub fn code_path() -> &'static str {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("bmi1")
            && std::arch::is_x86_feature_detected!("popcnt")
        {
            return "x86-64 bmi1+popcnt";
        }
    }
    "portable"
}

/// [`count`] compiled for CPUs with BMI1 (`blsi`, `andn`) and POPCNT.
///
/// # Safety
/// The CPU must support `bmi1` and `popcnt`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "bmi1,popcnt")]
unsafe fn count_bmi(rows: &Rows, nodes: &[Node]) -> u64 {
    count_generic(rows, nodes)
}

/// [`count`] for any CPU.
pub fn count_portable(rows: &Rows, nodes: &[Node]) -> u64 {
    count_generic(rows, nodes)
}

#[inline(always)]
fn count_generic(rows: &Rows, nodes: &[Node]) -> u64 {
    let n = rows.n();
    let (deep, shallow): (Vec<Node>, Vec<Node>) = nodes.iter().partition(|x| x.row + 1 < n);
    let mut total: u64 = shallow.iter().map(|x| count_near_end(rows, x)).sum();
    let mut lanes = Lanes::new();
    total += lanes.run(rows, &deep);
    total
}

/// Completions of a node in the last row or past it.
fn count_near_end(rows: &Rows, node: &Node) -> u64 {
    if node.row >= rows.n() {
        1
    } else {
        u64::from(node.free(rows).count_ones())
    }
}

/// The interleaved search state: a stack per lane, indexed by row.
struct Lanes {
    cols: [[u32; MAX_ROWS]; LANES],
    ld: [[u32; MAX_ROWS]; LANES],
    rd: [[u32; MAX_ROWS]; LANES],
    free: [[u32; MAX_ROWS]; LANES],
    /// The row each lane is working on; below `base` when the lane is finished.
    depth: [isize; LANES],
    /// The row each lane started at.
    base: [isize; LANES],
}

impl Lanes {
    fn new() -> Self {
        Lanes {
            cols: [[0; MAX_ROWS]; LANES],
            ld: [[0; MAX_ROWS]; LANES],
            rd: [[0; MAX_ROWS]; LANES],
            free: [[0; MAX_ROWS]; LANES],
            depth: [-1; LANES],
            base: [0; LANES],
        }
    }

    /// Counts completions of all `nodes` (each has row + 1 < n).
    #[inline(always)]
    fn run(&mut self, rows: &Rows, nodes: &[Node]) -> u64 {
        let mut queue = nodes.iter();
        for i in 0..LANES {
            match queue.next() {
                Some(node) => self.load(i, rows, node),
                // Fewer nodes than lanes: finish them one lane at a time.
                None => return (0..i).map(|k| self.finish(k, rows)).sum(),
            }
        }
        let last = rows.n() as isize - 1;
        let mut found = 0u64;
        'outer: loop {
            for i in 0..LANES {
                found += self.step(i, &rows.allowed, last);
            }
            for i in 0..LANES {
                if self.depth[i] < self.base[i] {
                    match queue.next() {
                        Some(node) => self.load(i, rows, node),
                        None => {
                            self.depth[i] = self.base[i] - 1;
                            break 'outer;
                        }
                    }
                }
            }
        }
        // The queue is empty: finish the lanes still busy.
        found + (0..LANES).map(|k| self.finish(k, rows)).sum::<u64>()
    }

    /// Starts lane `i` on `node`.
    #[inline(always)]
    fn load(&mut self, i: usize, rows: &Rows, node: &Node) {
        let k = node.row as usize & (MAX_ROWS - 1);
        self.cols[i][k] = node.cols;
        self.ld[i][k] = node.ld;
        self.rd[i][k] = node.rd;
        self.free[i][k] = node.free(rows);
        self.depth[i] = node.row as isize;
        self.base[i] = node.row as isize;
    }

    /// Runs lane `i` alone until its search is exhausted.
    fn finish(&mut self, i: usize, rows: &Rows) -> u64 {
        let last = rows.n() as isize - 1;
        let mut found = 0;
        while self.depth[i] >= self.base[i] {
            found += self.step(i, &rows.allowed, last);
        }
        found
    }

    /// One search step of lane `i`: take the lowest free cell of the current row; count it if
    /// it completes the board, descend if its row below has a free cell, pop if the current
    /// row had none. Returns the solutions found (0 or 1).
    #[inline(always)]
    fn step(&mut self, i: usize, allowed: &[u32; MAX_ROWS], last: isize) -> u64 {
        let d = self.depth[i];
        let k = d as usize & (MAX_ROWS - 1);
        let k1 = (k + 1) & (MAX_ROWS - 1);
        let avail = self.free[i][k];
        let bit = avail & avail.wrapping_neg();
        self.free[i][k] = avail ^ bit;
        let cols = self.cols[i][k] | bit;
        let ld = (self.ld[i][k] | bit) << 1;
        let rd = (self.rd[i][k] | bit) >> 1;
        let child = allowed[k1] & !(cols | ld | rd);
        self.cols[i][k1] = cols;
        self.ld[i][k1] = ld;
        self.rd[i][k1] = rd;
        self.free[i][k1] = child;
        let has = (avail != 0) as isize;
        let live = (child != 0) as isize;
        let at_last = (d + 1 == last) as isize;
        self.depth[i] = d + (has & live & (1 - at_last)) - (1 - has);
        (has & live & at_last) as u64
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
    fn thirty_two_columns_fit() {
        let rows = Rows::full(32);
        assert_eq!(full_mask(32), u32::MAX);
        assert_eq!(Node::ROOT.free(&rows).count_ones(), 32);
    }
}
