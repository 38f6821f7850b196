//! The meet-in-the-middle engine: the quadrant join.
//!
//! The board is cut into four h×h quarters (plus the middle row and column for odd N).
//! Quarter placements are generated per row mask (`quarter`), combined into east and west
//! half boards (`half`), summarised by diagonal keys (`key`), and joined by counting, in
//! bulk, the east/west pairs with disjoint keys (`matcher`, dispatched per CPU in `simd`).
//! No solution is ever formed.
//!
//! Every row split E (with the middle column's queen row for odd N) is a self-contained task
//! (`task`) with its own sieve: no barriers and no serial phase, so threads scale, and the
//! same task list feeds progress, checkpoints and shards. Small boards go to the mirror engine.

pub(crate) mod bucket;
pub(crate) mod half;
mod index;
pub(crate) mod join;
pub(crate) mod kernels;
pub(crate) mod key;
pub(crate) mod limits;
pub(crate) mod matcher;
pub(crate) mod piece;
pub(crate) mod prepared;
pub(crate) mod quarter;
pub(crate) mod simd;
pub(crate) mod task;
pub(crate) mod transpose;
pub(crate) mod trie;
pub(crate) mod weights;
#[cfg(target_arch = "x86_64")]
mod x86;

use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

#[cfg(test)]
use super::mirror::MirrorPlan;
use super::{Engine, PlanOptions};
use crate::error::{check_n, Error};
use crate::plan::{fingerprint_words, Plan};
use crate::subsample::{Draws, Subsample};
use crate::work::{Clock, Work};
use index::TaskIndex;
pub(crate) use join::Joiner;
use key::Geometry;
use quarter::placements_by_size;
use simd::Level;
use task::{Context, Scratch, Task};
use weights::free_rows;
#[cfg(test)]
use weights::{ew_weight, ns_weight};

/// The smallest board this engine splits into quarters; smaller ones are counted by the
/// symmetry engine, which also has their unique counts (so `--unique` works at every N).
pub(crate) const MITM_MIN_N: u32 = 4;

/// Largest quarter size the engine takes on. A 15×15 quarter (N = 30, 31) has row masks
/// with over 85 million placements (10 of 15 rows, spread out), about 1.5 GB while one list
/// is built and 0.7 GB kept, per worker thread and per quarter; 16×16 (N = 32) several times
/// that. 14×14 (N = 28, 29) peaks at about 11 million placements per list.
const MAX_H: u32 = 14;

/// The largest board the engine counts.
pub const MAX_N: u32 = 2 * MAX_H + 1;

/// The fingerprint word of even N's plans whose tasks weigh pairs by the transposes
/// ([`transpose`]).
const TRANSPOSES: u64 = u64::from_le_bytes(*b"transpos");

/// Tasks sampled into the plan fingerprint.
const FINGERPRINT_SAMPLE: u64 = 4096;

/// Largest quarter size whose placement counts are enumerated for the cost model.
const MAX_COST_H: u32 = 10;

/// The meet-in-the-middle engine (`--engine mitm`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Mitm;

impl Engine for Mitm {
    fn name(&self) -> &'static str {
        "mitm"
    }

    fn summary(&self) -> &'static str {
        "meet in the middle: quarter placements joined by bit-sliced key matching"
    }

    fn version(&self) -> u32 {
        // 2: tasks laid out by cost class (ids changed, so old checkpoints must not match).
        2
    }

    fn plan(&self, n: u32, options: &PlanOptions) -> Result<Box<dyn Plan>, Error> {
        check_n(n)?;
        if n < MITM_MIN_N {
            let whole = PlanOptions {
                split_depth: None,
                ..*options
            };
            return super::symmetry::Symmetry.plan(n, &whole);
        }
        check_quarters(n)?;
        // The plan has no parameters of its own (no split depth): `options` only matters for
        // the small boards above.
        Ok(Box::new(MitmPlan::new(n, Level::detect())))
    }
}

/// Refuses a board whose quarters are larger than the engine takes ([`MAX_H`]).
pub(crate) fn check_quarters(n: u32) -> Result<(), Error> {
    let h = n / 2;
    if h > MAX_H {
        return Err(Error::Unsupported {
            engine: Mitm.name(),
            what: format!(
                "N = {n}: its {h}×{h} quarters have row masks with tens of millions of \
                 placements or more, gigabytes per worker thread (the largest N it takes \
                 is {MAX_N})"
            ),
        });
    }
    Ok(())
}

/// The meet-in-the-middle plan for one board size.
///
/// Tasks are not stored: they are grouped into cost classes (the middle column's queen row `y`
/// and the number of east rows in the north quarter fix a task's estimated cost), the classes
/// are laid out by descending cost, and the plan finds a task from its id in a few
/// steps (65 M tasks at N = 27, set up in well under a second).
#[derive(Debug)]
pub struct MitmPlan {
    ctx: Context,
    /// The plan's second code path, built on first use by [`Plan::solve_portable`]: at
    /// [`Level::PORTABLE`], or joined on this CPU where the plan joins elsewhere.
    portable: OnceLock<Context>,
    index: TaskIndex,
    /// Where the tasks' halves are joined, if not on this CPU (the GPU engine); the portable
    /// path always joins them here.
    joiner: Option<Arc<dyn Joiner>>,
    /// The first failure of the joiner: every count from then on is worthless.
    fault: OnceLock<String>,
    /// Whether the run is stopping ([`Plan::stop`]): the joiner gave up its joins, and
    /// every count from then on is worthless.
    stopped: AtomicBool,
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

impl MitmPlan {
    /// The plan for an `n`×`n` board (`n ≥ 4`), matching at CPU level `level`.
    pub(crate) fn new(n: u32, level: Level) -> Self {
        Self::with_context(Context::new(n, level))
    }

    #[cfg(test)]
    /// Like [`MitmPlan::new`], with sieves cut on `cuts` key bits (a tuning knob).
    pub(crate) fn with_cuts(n: u32, level: Level, cuts: u32) -> Self {
        Self::with_context(Context::with_cuts(n, level, cuts))
    }

    /// The plan around a prepared context.
    fn with_context(ctx: Context) -> Self {
        let index = TaskIndex::new(&ctx.geo, ctx.units, ctx.merged);
        MitmPlan {
            ctx,
            portable: OnceLock::new(),
            index,
            joiner: None,
            fault: OnceLock::new(),
            stopped: AtomicBool::new(false),
        }
    }

    /// The plan for an `n`×`n` board (`n ≥ 4`, quarters no larger than the engine takes)
    /// whose halves are joined by `joiner`: the same tasks, counts and fingerprint as the
    /// CPU's plan.
    #[cfg_attr(not(feature = "gpu"), allow(dead_code))]
    ///
    /// Prepared quarters of boards whose quarters are at most `shared_h`×`shared_h` are kept
    /// for the whole run, so that the joiner may keep their words too.
    pub(crate) fn with_joiner(n: u32, joiner: Arc<dyn Joiner>, shared_h: u32) -> Self {
        let ctx = Context::with_shared_quarters(n, Level::detect(), shared_h);
        let mut plan = Self::with_context(ctx);
        plan.joiner = Some(joiner);
        plan
    }

    /// Runs `solve` on this thread's scratch with the plan's joiner, and keeps the joiner's
    /// failure, if any (a join given up because the run is stopping is no failure).
    fn with_scratch<R>(&self, solve: impl FnOnce(&mut Scratch) -> R) -> R {
        SCRATCH.with(|s| {
            let s = &mut s.borrow_mut();
            s.keys.joiner.clone_from(&self.joiner);
            s.keys.fault = None;
            let result = solve(s);
            s.keys.joiner = None;
            if let Some(why) = s.keys.fault.take() {
                if !self.stopped.load(Ordering::Acquire) {
                    let _ = self.fault.set(why);
                }
            }
            result
        })
    }

    /// Task `id` of the plan (`id < len()`).
    pub(crate) fn task(&self, id: usize) -> Task {
        // The index would fail deep inside with a bare bounds message.
        assert!(
            (id as u64) < self.index.len,
            "task {id} of a plan of {} tasks",
            self.index.len
        );
        self.index.task(id as u64)
    }

    #[cfg(test)]
    /// The count of `task`, which need not be one of the plan's.
    pub(crate) fn solve_task(&self, task: Task) -> u128 {
        SCRATCH.with(|s| self.ctx.solve(task, &mut s.borrow_mut()))
    }

    #[cfg(test)]
    /// Every task of the plan, in id order (lazily).
    pub(crate) fn tasks(&self) -> impl Iterator<Item = Task> + '_ {
        (0..self.index.len).map(|i| self.index.task(i))
    }
}

/// The subsets of `set` with `k` elements, in colex order.
fn subsets(set: u32, k: u32) -> impl Iterator<Item = u32> {
    let size = set.count_ones();
    let first = if k == 0 { 0 } else { (1u64 << k) - 1 };
    let end = 1u64 << size;
    let mut x = first;
    std::iter::from_fn(move || {
        if x >= end || k > size {
            return None;
        }
        let out = deposit(x as u32, set);
        if x == 0 {
            x = end;
        } else {
            let low = x & x.wrapping_neg();
            let ripple = x + low;
            x = ripple | (((x ^ ripple) >> 2) / low);
        }
        Some(out)
    })
}

/// Places the low bits of `x` into the set bit positions of `mask`, lowest first (pdep).
fn deposit(mut x: u32, mut mask: u32) -> u32 {
    let mut out = 0;
    while mask != 0 && x != 0 {
        let low = mask & mask.wrapping_neg();
        if x & 1 == 1 {
            out |= low;
        }
        x >>= 1;
        mask ^= low;
    }
    out
}

/// Relative task costs from the number of quarter placements of each size.
struct CostModel {
    /// Average placements per (row mask, column mask) pair with k queens.
    per_pair: Vec<f64>,
}

impl CostModel {
    fn new(geo: &Geometry) -> Self {
        let h = geo.h;
        let per_pair = if h <= MAX_COST_H {
            let sizes = placements_by_size(h);
            (0..=h)
                .map(|k| sizes[k as usize] as f64 / binomial(h, k).powi(2))
                .collect()
        } else {
            // Rough shape for huge boards: only the task order depends on it.
            (0..=h).map(|k| 0.7f64.powi((k * k) as i32 / 4)).collect()
        };
        CostModel { per_pair }
    }

    /// Estimated number of halves with `kn` north and `ks` south queens on `cols` columns.
    fn halves(&self, kn: u32, ks: u32, cols: u32) -> f64 {
        binomial(cols, kn) * self.per_pair[kn as usize] * self.per_pair[ks as usize]
    }

    fn cost(&self, geo: &Geometry, t: Task) -> u64 {
        let low = (1u32 << geo.h) - 1;
        let parts = |m: u32| ((m & low).count_ones(), ((m >> geo.c) & low).count_ones());
        let west = free_rows(geo, t.y) & !t.east;
        let ((en, es), (wn, ws)) = (parts(t.east), parts(west));
        let east = self.halves(en, es, geo.h);
        let (west, xs) = if t.y == 0 {
            (self.halves(wn, ws, geo.h), 1.0)
        } else {
            let xs = f64::from(t.y - geo.h - 1);
            (self.halves(wn, ws, geo.h - 1), xs)
        };
        (east * west * xs / 64.0 + 20.0 * (east + west * xs) + 1.0) as u64
    }
}

/// C(n, k) as a float.
fn binomial(n: u32, k: u32) -> f64 {
    (0..k).fold(1.0, |acc, i| acc * f64::from(n - i) / f64::from(i + 1))
}

impl Plan for MitmPlan {
    fn n(&self) -> u32 {
        self.ctx.geo.n
    }

    fn engine(&self) -> &'static str {
        Mitm.name()
    }

    fn len(&self) -> usize {
        self.index.len as usize
    }

    fn cost(&self, task: usize) -> u64 {
        self.index.cost(task as u64)
    }

    fn cost_runs(&self) -> Box<dyn Iterator<Item = (usize, u64)> + '_> {
        Box::new(self.index.runs())
    }

    fn solve(&self, task: usize) -> u128 {
        let task = self.task(task);
        self.with_scratch(|s| self.ctx.solve(task, s))
    }

    fn batch(&self) -> usize {
        self.joiner.as_ref().map_or(1, |j| j.batch())
    }

    /// With a joiner that defers its joins (the GPU's): every task's joins are handed over
    /// before any is waited for, so that they run together; each task's count is then its
    /// weight times its joins' counts.
    fn solve_batch(&self, tasks: &[usize]) -> Vec<u128> {
        if self.batch() <= 1 {
            return tasks.iter().map(|&t| self.solve(t)).collect();
        }
        self.with_scratch(|s| {
            let mut handed = Vec::with_capacity(tasks.len());
            for &id in tasks {
                let task = self.task(id);
                s.keys.deferred = Some(Vec::new());
                let now = self.ctx.solve(task, s);
                let deferred = s.keys.deferred.take().unwrap_or_default();
                handed.push((self.ctx.weight(task), now, deferred));
            }
            let mut work = Work::default();
            let counts = handed
                .into_iter()
                .map(|(weight, now, deferred)| {
                    let mut sum = 0u64;
                    for pending in deferred {
                        // A deferred join is never one that may be refused.
                        let count = pending.wait(&mut work).map(|c| c.unwrap_or(0));
                        match count.and_then(|c| {
                            sum.checked_add(c)
                                .ok_or_else(|| "a task's joins pass 64 bits".to_string())
                        }) {
                            Ok(total) => sum = total,
                            Err(why) => s.keys.fault = Some(why),
                        }
                    }
                    now + u128::from(sum) * weight
                })
                .collect();
            s.keys.work.add(&work);
            counts
        })
    }

    fn solve_counted(&self, task: usize) -> Option<(u128, Work)> {
        let task = self.task(task);
        self.with_scratch(|s| {
            s.start_counting(true);
            let count = self.ctx.solve(task, s);
            Some((count, s.take_work()))
        })
    }

    /// Split tasks (N ≥ 24 or so) solve the work their pieces share and the drawn pieces;
    /// the rest are solved whole.
    fn solve_sampled(&self, task: usize, draws: Draws) -> Option<Subsample> {
        let seed = draws.seed ^ (task as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        let task = self.task(task);
        self.with_scratch(|s| {
            s.start_counting(draws.counted);
            s.sampling.draws = Some(Draws { seed, ..draws });
            s.sampling.pieces = 0;
            let clock = Clock::start_for(self.joiner.is_some());
            let count = self.ctx.solve(task, s);
            let seconds = clock.seconds();
            s.sampling.draws = None;
            let parts = std::mem::take(&mut s.sampling.parts);
            let drawn: f64 = parts.iter().map(|p| p.seconds).sum();
            let mut sample = Subsample::whole(count, seconds - drawn, s.take_work());
            if !parts.is_empty() {
                sample.parts.extend(parts);
                sample.pieces = s.sampling.pieces;
            }
            Some(sample)
        })
    }

    fn worker_bytes(&self) -> u64 {
        limits::worker_bytes(self.ctx.geo.n)
    }

    /// Up to 10×10 quarters the quarter lists are cached; above, every task builds its own.
    fn warms_caches(&self) -> bool {
        self.ctx.cache.is_cached() || self.ctx.prepared.is_cached()
    }

    /// The portable matcher; for a plan joined elsewhere (on a GPU), the CPU engine's own
    /// fast path, which shares no code with the GPU's joins and costs a recheck a fraction
    /// of the portable matcher's time.
    fn solve_portable(&self, task: usize) -> u128 {
        let level = if self.joiner.is_some() {
            self.ctx.level
        } else {
            Level::PORTABLE
        };
        let ctx = self
            .portable
            .get_or_init(|| Context::new(self.ctx.geo.n, level));
        let task = self.task(task);
        SCRATCH.with(|s| {
            let s = &mut s.borrow_mut();
            s.keys.joiner = None;
            ctx.solve(task, s)
        })
    }

    fn fault(&self) -> Option<Error> {
        match self.fault.get() {
            Some(why) => Some(Error::Gpu(why.clone())),
            None => self
                .stopped
                .load(Ordering::Acquire)
                .then_some(Error::Interrupted),
        }
    }

    /// With a joiner: it gives up the joins it holds, so that every worker waiting for one
    /// returns at once, its tasks not counted ([`Plan::fault`] says the run was
    /// interrupted). A plan joined on this CPU finishes its tasks in hand.
    fn stop(&self) {
        if let Some(joiner) = &self.joiner {
            // First, so that the joins given up are not taken for a failure.
            self.stopped.store(true, Ordering::Release);
            joiner.stop();
        }
    }

    fn device(&self) -> Option<String> {
        self.joiner.as_ref().map(|j| j.describe())
    }

    fn device_work(&self) -> Option<Work> {
        self.joiner.as_ref().and_then(|j| j.totals())
    }

    /// Parametric, so that huge plans hash quickly: engine, version, N, h (and the
    /// transposes' word where they weigh even tasks), every cost class with its size and cost,
    /// then a deterministic sample of 4096 tasks spread over the plan.
    fn fingerprint(&self) -> String {
        let head = [
            u64::from_le_bytes(*b"mitm\0\0\0\0"),
            u64::from(Mitm.version()),
            u64::from(self.ctx.geo.n),
            u64::from(self.ctx.geo.h),
            self.index.len,
        ];
        // Where the transposes weigh the pairs, tasks count other totals than before: their
        // shards and checkpoints must not meet older ones. Other plans are unchanged.
        let weighed = self.ctx.transposes;
        let head = head.into_iter().chain(weighed.then_some(TRANSPOSES));
        let len = self.index.len;
        let sample = (0..FINGERPRINT_SAMPLE.min(len)).map(move |i| {
            let t = self.index.task(i * len / FINGERPRINT_SAMPLE.min(len));
            u64::from(t.east) | u64::from(t.y) << 32 | u64::from(t.unit.index) << 40
        });
        fingerprint_words(head.chain(self.index.words()).chain(sample))
    }

    fn describe(&self) -> String {
        let joins = match &self.joiner {
            Some(joiner) => joiner.describe(),
            None => format!("matcher {}", self.ctx.level.name()),
        };
        format!(
            "meet in the middle, quarters {h}×{h}, {joins}",
            h = self.ctx.geo.h
        )
    }

    fn has_unique(&self) -> bool {
        true
    }

    /// The total comes from the join; the few solutions fixed by a rotation come from the
    /// symmetry engine's small search (Burnside's lemma).
    fn unique(&self, total: u128) -> Option<u128> {
        super::symmetry::unique::unique(self.ctx.geo.n, total)
    }
}

#[cfg(test)]
mod tests;
