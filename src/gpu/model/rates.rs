//! The span model's constants, in one place, each with where it comes from. None was timed
//! on a GPU by this build: they are what an H100 / H200 is expected to do, from the
//! microbenchmark in `docs/gpu.md`, the H200's one measurement of an older build (its
//! calibration is in `docs/gpu.md`), and the hardware's published figures. The step latency
//! is not here: nobody has measured it, so the model takes it as a parameter and reports
//! [`LATENCIES`].

/// The dependent step latencies the span is reported at: a few microseconds, as a discrete
/// GPU's dispatch is often quoted, and 30, what the H200's measurement of an older build
/// needs if a step is all its unexplained cost.
pub(crate) const LATENCIES: [f64; 2] = [5e-6, 30e-6];

/// Workgroups of 256 invocations resident on the whole GPU at once: an H100 SXM's 132 SMs
/// times 8 (2,048 threads an SM; every kernel's workgroup memory leaves room for 8).
pub(crate) const SLOTS: f64 = 1056.0;

/// Invocations of a workgroup (`layout::GROUP_SIZE`), as a float.
pub(crate) const GROUP: f64 = 256.0;

/// Seconds of one load a thread waits on before its next (a tree node or a block's
/// description from L2): 100 ns, in a range of 50 to 200.
pub(crate) const DEPENDENT_LOAD: f64 = 100e-9;

/// Seconds of one round of a workgroup's barrier chain (a barrier and the few operations
/// between two): about 60 ns on an SM (a few hundred cycles).
pub(crate) const BARRIER: f64 = 60e-9;

/// The tree build, calibrated on the H200's one measurement (a sieve of 48 ms for one task
/// of N = 26 built by one workgroup per fill): 2 µs a node iteration of one workgroup (its
/// choice, partition and barriers), and 71 ns a sequential access of one invocation to a
/// key or a sampled query. The pair fitted with 1 µs and 4 µs gave 84 and 45 ns. That fit
/// went through counters converted from a later build; that build's own counters, replayed
/// against the H200's wall times, fit only with a tree three to four times slower
/// (`docs/gpu.md`), so these may be optimistic by that much.
pub(crate) const NODE: f64 = 2e-6;
pub(crate) const ACCESS: f64 = 71e-9;

/// Keys and sampled queries the whole GPU reads or writes a second in the tree's top
/// levels, whose nodes pass L2: 8-byte keys at about half of HBM3's 3.35 TB/s (predicted).
pub(crate) const ACCESSES_PER_SECOND: f64 = 2e11;

/// The same in subtrees and two-block leaves, whose keys (at most `SUBTREE_KEYS` a
/// workgroup, some 200 workgroups at once: tens of MB) stay in the 50 MB L2: 8-byte
/// accesses at about 4 TB/s, below the 5.5 TB/s L2 bandwidth published for an H100
/// (predicted).
pub(crate) const L2_ACCESSES_PER_SECOND: f64 = 5e11;

/// (query, block) visits a second of the block count on the whole GPU, to blocks of
/// [`VISIT_RATE_CHUNKS`] chunks: the microbenchmark's rate on an H100 (22.8 G visits/s)
/// rounded down.
pub(crate) const VISITS_PER_SECOND: f64 = 20e9;

/// The chunks a block's tables had where the visit rates were measured.
pub(crate) const VISIT_RATE_CHUNKS: f64 = 10.0;

/// What each chunk adds to a visit, as a share of a visit's time at [`VISIT_RATE_CHUNKS`]:
/// the microbenchmark's H100 rates at 10 and 11 chunks (22.8 and 21.6 G visits/s) differ
/// by 5.6%; the rest of a visit (its route, the popcount, the loop) does not follow the
/// chunks. So a visit of 8 chunks costs 0.89 of one of 10. Only those two chunk counts
/// were timed.
pub(crate) const VISIT_CHUNK_SHARE: f64 = 22.8 / 21.6 - 1.0;

/// Visits a second of one block count workgroup alone: a third of an SM's share of the
/// microbenchmark's rate (one workgroup does not hide its own loads).
pub(crate) const VISITS_PER_GROUP_SECOND: f64 = 22.8e9 / 132.0 / 3.0;

/// Seconds a block count workgroup takes to load one block's tables (up to 24 KB from L2
/// or HBM, four words an invocation a round) and start on it.
pub(crate) const TABLE_LOAD: f64 = 0.5e-6;

/// Seconds of one table build workgroup (one block: 512 keys, up to 12 chunks of 32
/// entries): predicted from its loop counts.
pub(crate) const TABLE_GROUP: f64 = 8e-6;

/// Routing tests a second on the whole GPU, each a few integer operations on data in L2.
pub(crate) const ROUTING_TESTS_PER_SECOND: f64 = 1e12;

/// Word pairs the half join tests a second on the whole GPU (an AND, a compare and a count
/// each; a fifth of an H100's integer rate), and what one invocation's run of 32 costs.
pub(crate) const PAIRS_PER_SECOND: f64 = 2e12;
pub(crate) const PAIR_RUN: f64 = 32.0 * 5e-9;

/// Seconds of one chunk of 256 joins in a one-workgroup bookkeeping kernel (`join_sizes`,
/// `alloc_blocks`, `plan_routes`): six running scans of nine barrier rounds and a few
/// dependent loads.
pub(crate) const PLAN_CHUNK: f64 = 6.0 * 10.0 * BARRIER + 8.0 * DEPENDENT_LOAD;

/// Seconds of one workgroup of a scan step (1,024 values: four loads an invocation and a
/// 256-wide scan).
pub(crate) const SCAN_GROUP: f64 = 4.0 * DEPENDENT_LOAD + 10.0 * BARRIER;

/// Seconds of one tied-halves workgroup (256 west halves, up to 4,096 east ones each), and
/// the pairs the whole GPU tests a second.
pub(crate) const TIE_GROUP: f64 = 4096.0 * 2e-9;
pub(crate) const TIE_PAIRS_PER_SECOND: f64 = 1e12;

/// Bytes a second of uploads (PCIe 5 ×16 at about 60% of its peak).
pub(crate) const BYTES_UP_PER_SECOND: f64 = 20e9;
