//! The shader text: each `.wgsl` file under `src/gpu/shaders/` after the constants the
//! host shares (put in from Rust, so that a size is written once), the shared helpers and
//! types, the results row where a kernel adds to it, and the block count's per-visit loops,
//! generated for every chunk count as unrolled code.

use std::fmt::Write as _;

use super::layout::{CHUNK_WORDS, GROUP_SIZE, PAIR_WORDS, TOP_LEVELS};

/// Routes a block count workgroup takes. Mesa's CPU driver (lavapipe) stops loops after
/// 65,535 rounds, silently: a workgroup may meet a block per route, and each block costs a
/// few rounds (its table's load, a stage of routes, their visits, the block), so 2,048
/// routes were to stay below the limit. They do not always (a workgroup whose routes spread
/// over 1,265 blocks, in a join of N = 28, was stopped after some 2,800 rounds of its own),
/// so a software driver's count also checks its visits (count.wgsl, "Loop limit"). A GPU
/// would take more routes (on an H200, 8,192 ran 2% faster); this is lavapipe's bound.
pub(crate) const ROUTES_PER_GROUP: u64 = 2048;

/// Slots of a routing workgroup's block histogram (a power of two; three words each, as
/// much workgroup memory as the block count's tables). Routing walks one query an
/// invocation, on every device: a walk is a chain of dependent loads, so the routing steps
/// last as long as their longest invocation's walks, and eight queries an invocation made
/// the longest 2.2–3.4 times the mean's (and passed a software driver's loop limit). The
/// histogram is shared by the workgroup's 256 queries.
const ROUTE_SLOTS: u32 = 2048;

/// Slots a block looks at in the histogram before it counts with global atomics.
const ROUTE_PROBES: u32 = 32;

/// `vec4<u32>` words of each block's description in `info`: [AND, mixed bits], [chunks and
/// weighing mode, fill, packed query weights, keys], [weights].
pub(crate) const BLOCK_INFO: u64 = 3;

/// Routes the block count reads into workgroup memory at once (count.wgsl): one an
/// invocation.
const STAGE: u32 = GROUP_SIZE;

/// Workgroup memory the largest kernel holds: the block count's tables of 12 chunks, a
/// stage of routes (two words each) and its flag of a workgroup stopped short (rounded up
/// to 16 bytes).
pub(crate) const WORKGROUP_BYTES: u32 = CHUNK_WORDS * 4 + STAGE * 8 + 16;

/// A work counter the kernels keep on the GPU, after the join rows of `results`: two u32
/// words (low, high) each. A sum is added to with `stat_add` (64 bits); a peak, the most one
/// workgroup or invocation did in the batch, with `stat_max` (its low word). The peaks and
/// the tree's levels (below) are what the span model needs: how long a step's longest
/// workgroup runs beside how much the step does in all (`src/gpu/model/`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stat {
    /// Keys the table build read and tested, one chunk (or the classes) of one key each.
    TableKeyTests,
    /// Chunks of all blocks' tables built.
    TableChunks,
    /// Global atomic read-modify-writes made by the routing passes.
    RouteAtomics,
    /// Keys and sampled queries the tree build read to choose bits and partition keys.
    TreeTests,
    /// Subtrees built (`rest` workgroups that built a node), their node iterations (each a
    /// chain of barriers) and their accesses: keys and sampled queries read or written in
    /// global memory, every pass counted (a partition's count, move and copy back are three;
    /// a subtree's copy from `temp` of the keys a top level left there, one).
    Subtrees,
    RestIterations,
    RestAccesses,
    /// The most accesses of one subtree's workgroup, and in its high word the most node
    /// iterations (two peaks a slot: the counters read back each batch are a budget).
    RestAccessesPeak,
    /// Keys the subtrees' passes wrote (a move's, a copy back's): each also one of their
    /// accesses, read and written where `RestAccesses` counts one.
    RestWrites,
    /// Keys the top levels' workgroups moved (as `RestWrites`; one counter for all the
    /// levels, as the counters read back each batch are a budget).
    TopWrites,
    /// Leaves of two blocks ordered (`pairs` workgroups), their rounds and accesses, and
    /// the most accesses of one workgroup (the most rounds in its high word).
    PairLeaves,
    PairRounds,
    PairAccesses,
    PairAccessesPeak,
    /// Routing invocations that walked a query, and the most tests one made in one walk of
    /// all its queries (its dependent chain: each test a load the next one waits on).
    RouteWalkers,
    RouteTestsPeak,
    /// Half join pairs the write pass tested (items with keys in their join's kept range).
    PairsWritten,
    /// The blocks' tables the block count's workgroups loaded, and the most one loaded.
    CountLoads,
    CountLoadsPeak,
    /// Their visits times the chunks of each visited block's tables, in fills without an
    /// error (those a results row counts).
    VisitChunks,
}

impl Stat {
    pub(crate) const ALL: [Stat; 20] = [
        Stat::TableKeyTests,
        Stat::TableChunks,
        Stat::RouteAtomics,
        Stat::TreeTests,
        Stat::Subtrees,
        Stat::RestIterations,
        Stat::RestAccesses,
        Stat::RestAccessesPeak,
        Stat::RestWrites,
        Stat::TopWrites,
        Stat::PairLeaves,
        Stat::PairRounds,
        Stat::PairAccesses,
        Stat::PairAccessesPeak,
        Stat::RouteWalkers,
        Stat::RouteTestsPeak,
        Stat::PairsWritten,
        Stat::CountLoads,
        Stat::CountLoadsPeak,
        Stat::VisitChunks,
    ];

    /// The name the shaders know it by.
    fn constant(self) -> &'static str {
        match self {
            Stat::TableKeyTests => "STAT_TABLE_KEY_TESTS",
            Stat::TableChunks => "STAT_TABLE_CHUNKS",
            Stat::RouteAtomics => "STAT_ROUTE_ATOMICS",
            Stat::TreeTests => "STAT_TREE_TESTS",
            Stat::Subtrees => "STAT_SUBTREES",
            Stat::RestIterations => "STAT_REST_ITERATIONS",
            Stat::RestAccesses => "STAT_REST_ACCESSES",
            Stat::RestAccessesPeak => "STAT_REST_ACCESSES_PEAK",
            Stat::RestWrites => "STAT_REST_WRITES",
            Stat::TopWrites => "STAT_TOP_WRITES",
            Stat::PairLeaves => "STAT_PAIR_LEAVES",
            Stat::PairRounds => "STAT_PAIR_ROUNDS",
            Stat::PairAccesses => "STAT_PAIR_ACCESSES",
            Stat::PairAccessesPeak => "STAT_PAIR_ACCESSES_PEAK",
            Stat::RouteWalkers => "STAT_ROUTE_WALKERS",
            Stat::RouteTestsPeak => "STAT_ROUTE_TESTS_PEAK",
            Stat::PairsWritten => "STAT_PAIRS_WRITTEN",
            Stat::CountLoads => "STAT_COUNT_LOADS",
            Stat::CountLoadsPeak => "STAT_COUNT_LOADS_PEAK",
            Stat::VisitChunks => "STAT_VISIT_CHUNKS",
        }
    }
}

/// A counter of each top level of the tree (`top`, and its nodes split across workgroups),
/// after the [`Stat`]s: `LEVEL_STATS` slots a level, for levels 0 to `TOP_LEVELS - 1`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LevelStat {
    /// Nodes the level's workgroups took.
    Nodes,
    /// Their accesses (as [`Stat::RestAccesses`] counts them).
    Accesses,
    /// The most accesses of one of its workgroups (the low word), and the most keys of one
    /// of its nodes (the high word).
    AccessesPeak,
    /// Tiles handed out to split its largest nodes across workgroups.
    Tiles,
}

impl LevelStat {
    pub(crate) const ALL: [LevelStat; 4] = [
        LevelStat::Nodes,
        LevelStat::Accesses,
        LevelStat::AccessesPeak,
        LevelStat::Tiles,
    ];

    fn constant(self) -> &'static str {
        match self {
            LevelStat::Nodes => "LEVEL_NODES",
            LevelStat::Accesses => "LEVEL_ACCESSES",
            LevelStat::AccessesPeak => "LEVEL_ACCESSES_PEAK",
            LevelStat::Tiles => "LEVEL_TILES",
        }
    }

    /// Its slot for level `level`.
    pub(crate) fn slot(self, level: u32) -> u32 {
        Stat::ALL.len() as u32 + level * LevelStat::ALL.len() as u32 + self as u32
    }
}

/// u32 words of the work counters: two a slot, the [`Stat`]s, then each top level's.
pub(crate) const STATS_WORDS: u64 =
    2 * (Stat::ALL.len() + LevelStat::ALL.len() * TOP_LEVELS as usize) as u64;

/// The modes in which the block count weighs a block's visits (chosen per block by the
/// table build, tables.wgsl `weighing`).
const MODES: [&str; 3] = ["plain", "exception", "queries"];

/// The constants the routing and the block count share with the host, for a device
/// (`software`: a CPU driver) whose block count tallies its visits where a loop limit may
/// stop it (`VISIT_TALLY`, count.wgsl).
fn prelude(software: bool) -> String {
    let mut s = super::layout::prelude();
    let consts: [(&str, u64); 10] = [
        ("CHUNK_WORDS", u64::from(CHUNK_WORDS)),
        ("PAIR_WORDS", u64::from(PAIR_WORDS)),
        ("STAGE", u64::from(STAGE)),
        ("SETS", u64::from(CHUNK_WORDS)),
        ("CLASS_SETS", u64::from(CHUNK_WORDS) + 16),
        ("INFO", BLOCK_INFO),
        ("ROUTES", ROUTES_PER_GROUP),
        ("VISIT_TALLY", u64::from(software)),
        ("ROUTE_SLOTS", u64::from(ROUTE_SLOTS)),
        ("ROUTE_PROBES", u64::from(ROUTE_PROBES)),
    ];
    for (name, value) in consts {
        let _ = writeln!(s, "const {name}: u32 = {value}u;");
    }
    let _ = writeln!(
        s,
        "const ROUTE_SLOT_BITS: u32 = {}u;",
        ROUTE_SLOTS.trailing_zeros()
    );
    for (i, stat) in Stat::ALL.iter().enumerate() {
        let _ = writeln!(s, "const {}: u32 = {i}u;", stat.constant());
    }
    let _ = writeln!(s, "const STAT_LEVELS: u32 = {}u;", Stat::ALL.len());
    let _ = writeln!(s, "const STATS_WORDS: u32 = {STATS_WORDS}u;");
    let _ = writeln!(s, "const LEVEL_STATS: u32 = {}u;", LevelStat::ALL.len());
    for (i, stat) in LevelStat::ALL.iter().enumerate() {
        let _ = writeln!(s, "const {}: u32 = {i}u;", stat.constant());
    }
    s
}

/// The source of a module: the prelude, the shared helpers and types, the results row at
/// binding `results_at` for the kernels that add to it (with `stat_add`, which adds to a
/// work counter), the module's file and, for the block count, its loops.
pub(crate) fn source(file: &str, results_at: Option<u32>, software: bool) -> String {
    let body = match file {
        "scan.wgsl" => include_str!("shaders/scan.wgsl"),
        "gen.wgsl" => include_str!("shaders/gen.wgsl"),
        "plan.wgsl" => include_str!("shaders/plan.wgsl"),
        "tree.wgsl" => concat!(
            include_str!("shaders/tree.wgsl"),
            include_str!("shaders/top.wgsl"),
            include_str!("shaders/wide.wgsl"),
            include_str!("shaders/subtrees.wgsl")
        ),
        "tables.wgsl" => include_str!("shaders/tables.wgsl"),
        "route.wgsl" => include_str!("shaders/route.wgsl"),
        "count.wgsl" => include_str!("shaders/count.wgsl"),
        "ties.wgsl" => include_str!("shaders/ties.wgsl"),
        _ => panic!("no shader {file}"),
    };
    let mut s = prelude(software);
    s.push_str(include_str!("shaders/common.wgsl"));
    s.push_str(include_str!("shaders/types.wgsl"));
    if let Some(binding) = results_at {
        let results = include_str!("shaders/results.wgsl");
        s.push_str(&results.replace("RESULTS_BINDING", &binding.to_string()));
    }
    s.push_str(body);
    if file == "count.wgsl" {
        s.push_str(&count_loops());
    }
    s
}

/// One chunk's term of a visit: the table word of the query's entry in chunk `c` for this
/// invocation. Chunk c's 32 entries lie in row pair c / 2 (`PAIR_WORDS`), entry m at word
/// 32m, chunk c in the pair's half c % 2; `l0`/`l1` are the invocation's word in the even
/// and odd halves, which the bank swizzle (count.wgsl) exchanges for odd half-warps.
fn chunk_term(c: u32) -> String {
    let word = if c < 6 { "q.x" } else { "q.y" };
    let j = c % 6;
    // 32 × (the chunk's five bits), as one shift and one mask.
    let entry = match j {
        0 => format!("(({word} << 5u) & 992u)"),
        1 => format!("({word} & 992u)"),
        _ => format!("(({word} >> {}u) & 992u)", 5 * j - 5),
    };
    let lane = if c.is_multiple_of(2) { "l0" } else { "l1" };
    match c / 2 {
        0 => format!("t[{entry} + {lane}]"),
        pair => format!("t[{}u + {entry} + {lane}]", PAIR_WORDS * pair),
    }
}

/// The loop over one half-warp's staged routes `j0, j0 + 16, … < n` of a block of `chunks` chunks,
/// in weighing mode `mode`: returns the invocation's (hits, second sum) in the block.
fn visit_fn(mode: usize, chunks: u32) -> String {
    let (args, vars, tail, ret) = match MODES[mode] {
        "plain" => ("", "", "", "vec2<u32>(h, 0u)"),
        "exception" => (
            ", xs: u32",
            "        var x = 0u;\n",
            "            x = x + countOneBits(w & xs);\n",
            "vec2<u32>(h, x)",
        ),
        _ => (
            ", wp: u32",
            "        var a = 0u;\n",
            "            a = a + countOneBits(w) * extractBits(wp, (q.y >> 27u) & 24u, 8u);\n",
            "vec2<u32>(h, a)",
        ),
    };
    let mut s = format!(
        "\nfn visit_{mode}_{chunks}(j0: u32, n: u32, l0: u32, l1: u32{args}) -> vec2<u32> {{\n\
         \x20   var h = 0u;\n{vars}\
         \x20   for (var j = j0; j < n; j = j + 16u) {{\n\
         \x20       let q = staged[j];\n\
         \x20       var w = {};\n",
        chunk_term(0)
    );
    for c in 1..chunks {
        let _ = writeln!(s, "        w = w & {};", chunk_term(c));
    }
    let _ = write!(
        s,
        "        h = h + countOneBits(w);\n        visits = visits + VISIT_TALLY;\n{tail}    }}\n    return {ret};\n}}\n"
    );
    s
}

/// Every per-visit loop, and `visit`, which picks one per block (a uniform branch): the
/// invocation's (hits, weighted) in the block, both below 2^32 (count.wgsl says why).
fn count_loops() -> String {
    let mut s = String::from(
        "\n// Generated in src/gpu/shader.rs: one loop per weighing mode and chunk count.\n\
         fn visit(mode: u32, chunks: u32, j0: u32, n: u32, l0: u32, l1: u32, at: u32, \
         desc: vec4<u32>, wts: vec4<u32>) -> vec2<u32> {\n    var v = vec2<u32>(0u);\n    \
         switch (mode * 16u + chunks) {\n",
    );
    for (mode, name) in MODES.iter().enumerate() {
        for chunks in 1..=12u32 {
            let call = format!("visit_{mode}_{chunks}(j0, n, l0, l1");
            let body = match *name {
                "plain" => {
                    format!("let c = {call});\n            v = vec2<u32>(c.x, wts.x * c.x);")
                }
                "exception" => format!(
                    "let c = {call}, tables[at + SETS]);\n            \
                     v = vec2<u32>(c.x, wts.x * (c.x - c.y) + wts.y * c.y);"
                ),
                _ => format!(
                    "let c = {call}, desc.z);\n            v = vec2<u32>(c.x, wts.x * c.y);"
                ),
            };
            let _ = writeln!(
                s,
                "        case {}u: {{\n            {body}\n        }}",
                mode as u32 * 16 + chunks
            );
        }
    }
    s.push_str(
        "        default: {\n            v = visit_general(chunks, j0, n, l0, l1, at, desc, wts);\n        }\n    }\n    return v;\n}\n",
    );
    for mode in 0..MODES.len() {
        for chunks in 1..=12 {
            s.push_str(&visit_fn(mode, chunks));
        }
    }
    s.push_str(&mark_stopped_fn());
    s
}

/// `mark_stopped`: fills `first` to `last` marked stopped (`FILL_STOPPED`), a workgroup's
/// invocations taking one each in turn, without a loop (it runs where a software driver's
/// loop limit has stopped every loop). A block count workgroup meets at most one fill per
/// route.
fn mark_stopped_fn() -> String {
    const _: () = assert!(ROUTES_PER_GROUP.is_multiple_of(GROUP_SIZE as u64));
    let mut s = String::from(
        "\nfn mark_stopped(first: u32, last: u32, li: u32) {\n    var f = first + li;\n",
    );
    for _ in 0..ROUTES_PER_GROUP / u64::from(GROUP_SIZE) {
        s.push_str(
            "    if (f <= last) {\n        atomicOr(&results[row(f) + RESULT_STATUS], FILL_STOPPED);\n    }\n    f = f + GROUP_SIZE;\n",
        );
    }
    s.push_str("}\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// WGSL operations in `text`: each arithmetic, bitwise or comparison operator, array
    /// read and built-in call once (`a = a & b` is one, `t[i]` one, `countOneBits(w)` one).
    /// Declarations, `let`/`var` and braces are free. The yardstick's and the old kernel's
    /// figures in docs/gpu.md were counted by the same rule.
    pub(crate) fn operations(text: &str) -> usize {
        // Types and return arrows hold no operation.
        let text = text.replace("<u32>", "").replace("->", "");
        let mut ops = 0;
        let mut rest = text.as_str();
        while let Some(c) = rest.chars().next() {
            let two = rest.get(..2).unwrap_or("");
            if ["<<", ">>", "<=", ">=", "==", "!="].contains(&two) {
                ops += 1;
                rest = &rest[2..];
                continue;
            }
            if "&|^+-*<>[".contains(c) {
                ops += 1;
            }
            if rest.starts_with("countOneBits(") || rest.starts_with("extractBits(") {
                ops += 1;
            }
            rest = &rest[c.len_utf8()..];
        }
        ops
    }

    /// The body of the loop in one generated visit function (what runs per visit), with
    /// the loop's own test and step.
    fn per_visit(mode: usize, chunks: u32) -> String {
        let f = visit_fn(mode, chunks);
        let start = f.find("for (").expect("a loop");
        let end = f.rfind("    }\n    return").expect("the loop's end");
        // `var j = j0;` runs once: leave it out.
        f[start..end].replacen("var j = j0;", "", 1)
    }

    #[test]
    fn a_visit_costs_at_most_six_operations_a_chunk_and_five_more() {
        for chunks in 1..=12 {
            let c = chunks as usize;
            // Per chunk: shift, mask, add the lane, read, AND (the first chunk no AND; chunk
            // 1 of a word no shift) and the row pair's offset (from chunk 2: a constant, which
            // a GPU compiler folds into the read's address). Per visit: the loop's test and
            // step, the route's read, a popcount and an add.
            let plain = operations(&per_visit(0, chunks));
            eprintln!("{chunks} chunks: {plain} operations a visit");
            assert!(plain <= 6 * c + 5, "{chunks} chunks: {plain} operations");
            // The exception set: an AND, a popcount and an add.
            let exception = operations(&per_visit(1, chunks));
            assert_eq!(exception, plain + 3, "{chunks} chunks");
            // The query's weight: a popcount, a shift, a mask, extractBits, a multiply and
            // an add.
            let queries = operations(&per_visit(2, chunks));
            assert_eq!(queries, plain + 6, "{chunks} chunks");
        }
    }

    #[test]
    fn the_operation_count_reads_wgsl_as_meant() {
        assert_eq!(operations("w = w & t[(q.x >> 5u) & 992u + l1];"), 5);
        assert_eq!(
            operations("fn f(a: u32) -> vec2<u32> { return vec2<u32>(a, 0u); }"),
            0
        );
        assert_eq!(operations("for (; r < r1; r = r + 16u)"), 2);
    }

    #[test]
    fn every_chunk_reads_its_own_entry_in_the_swizzled_layout() {
        // Chunk c's term reads bits 5(c mod 6).. of x (c < 6) or y, times 32, in pair c / 2,
        // with l0 for even chunks and l1 for odd ones.
        for c in 0..12u32 {
            let term = chunk_term(c);
            let word = if c < 6 { "q.x" } else { "q.y" };
            assert!(term.contains(word), "{term}");
            assert!(
                term.contains(if c % 2 == 0 { "l0" } else { "l1" }),
                "{term}"
            );
            let pair = PAIR_WORDS * (c / 2);
            assert_eq!(term.contains(&format!("{pair}u +")), pair > 0, "{term}");
            for v in 0..32u32 {
                let key = u64::from(v) << (5 * (c % 6));
                let (x, y) = if c < 6 {
                    (key as u32, 0)
                } else {
                    (0, key as u32)
                };
                let entry = match c % 6 {
                    0 => (x | y) << 5 & 992,
                    1 => (x | y) & 992,
                    j => (x | y) >> (5 * j - 5) & 992,
                };
                assert_eq!(entry, 32 * v, "chunk {c} value {v}");
            }
        }
    }

    #[test]
    fn every_module_is_valid_wgsl_without_a_gpu() {
        use wgpu::naga;
        for ((file, results_at), software) in super::super::kernels::MODULES
            .into_iter()
            .flat_map(|m| [(m, false), (m, true)])
        {
            let text = source(file, results_at, software);
            let module = naga::front::wgsl::parse_str(&text)
                .unwrap_or_else(|e| panic!("{file}: {}", e.emit_to_string(&text)));
            let mut v = naga::valid::Validator::new(
                naga::valid::ValidationFlags::all(),
                naga::valid::Capabilities::empty(),
            );
            if let Err(e) = v.validate(&module) {
                panic!("{file}: {}", e.emit_to_string(&text));
            }
            // Workgroup memory within what the device is asked for.
            let bytes: u32 = module
                .global_variables
                .iter()
                .filter(|(_, g)| g.space == naga::AddressSpace::WorkGroup)
                .map(|(_, g)| module.types[g.ty].inner.size(module.to_ctx()))
                .sum();
            assert!(
                bytes <= WORKGROUP_BYTES,
                "{file}: {bytes} bytes of workgroup memory"
            );
            // The host sizes dispatches by the workgroup size it wrote (or one invocation).
            for entry in &module.entry_points {
                let size = entry.workgroup_size;
                assert!(
                    size == [GROUP_SIZE, 1, 1] || size == [1, 1, 1],
                    "{file}: {} has workgroups of {size:?}",
                    entry.name
                );
            }
        }
    }

    #[test]
    fn every_stat_has_its_own_slot_in_the_prelude() {
        let p = prelude(false);
        for (i, stat) in Stat::ALL.iter().enumerate() {
            assert!(p.contains(&format!("const {}: u32 = {i}u;", stat.constant())));
            assert_eq!(*stat as usize, i, "{stat:?}");
        }
        for (i, stat) in LevelStat::ALL.iter().enumerate() {
            assert!(p.contains(&format!("const {}: u32 = {i}u;", stat.constant())));
            assert_eq!(*stat as usize, i, "{stat:?}");
        }
        // Each level's slots follow the Stats', and the last one ends the counters.
        assert_eq!(LevelStat::Nodes.slot(0), Stat::ALL.len() as u32);
        let last = LevelStat::Tiles.slot(TOP_LEVELS - 1);
        assert_eq!(2 * u64::from(last + 1), STATS_WORDS);
    }
}
