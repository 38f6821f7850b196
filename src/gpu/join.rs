//! One join on the GPU: the halves of both sides made by the half join, the larger side
//! stored in a sieve (a tree chosen from a sample, leaves cut into bit-sliced blocks), and
//! every query routed to the blocks it may meet and counted there.
//!
//! The host plans and reads back a few numbers between stages: each job's first key (for
//! portions and sizes), samples (for the tree), and each stage's totals.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use super::device::Device;
use super::jobs::{self, Arena, Job, SideJobs, CLASS_SHIFT, TILE};
use super::kernels::Kernel;
use super::memory::{read_back, words, Grow, Params, Staging};
use crate::engine::mitm::join::{Join, Joiner};
use crate::work::Work;

/// Stored keys sampled to choose a fill's tree.
pub(super) const KEY_SAMPLE: u32 = 1 << 15;
/// Queries sampled to choose a fill's tree (as the CPU trie's).
pub(super) const QUERY_SAMPLE: u32 = 8192;
/// Words of one block's tables: 12 chunks of 32 entries of 16 words, the exception set and
/// the four class sets (tables.wgsl; put into the shaders' text from here).
pub(crate) const TABLE_WORDS: u64 = 12 * 512 + 16 + 4 * 16;

/// Joins on one GPU, for any number of worker threads: each join borrows a slot of
/// buffers.
pub(crate) struct GpuJoiner {
    device: Arc<Device>,
    slots: Mutex<Vec<Slot>>,
    /// Test hook: joins left before every join fails, as on a lost device.
    fail_after: Option<AtomicU64>,
}

impl std::fmt::Debug for GpuJoiner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "GpuJoiner({})", self.device.adapter)
    }
}

impl GpuJoiner {
    pub(crate) fn new(device: Arc<Device>, fail_after: Option<u64>) -> Self {
        GpuJoiner {
            device,
            slots: Mutex::new(Vec::new()),
            fail_after: fail_after.map(AtomicU64::new),
        }
    }

    /// Whether the test hook says this join fails.
    fn injected_failure(&self) -> bool {
        self.fail_after.as_ref().is_some_and(|left| {
            left.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1))
                .is_err()
        })
    }
}

impl Joiner for GpuJoiner {
    fn join(&self, join: Join<'_, '_>, work: &mut Work) -> Result<Option<u64>, String> {
        if let Some(lost) = self.device.lost() {
            return Err(lost);
        }
        if self.injected_failure() {
            return Err("the device was lost (injected by a test)".into());
        }
        let slot = self
            .slots
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop();
        let mut slot = slot.unwrap_or_else(Slot::new);
        let dev = &self.device.device;
        let oom = dev.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let invalid = dev.push_error_scope(wgpu::ErrorFilter::Validation);
        let clock = Instant::now();
        let result = slot.join(&self.device, &join, work);
        work.match_seconds += clock.elapsed().as_secs_f64();
        work.count_kernel_seconds += slot.staging.take_timed();
        let invalid = pollster::block_on(invalid.pop());
        let oom = pollster::block_on(oom.pop());
        self.slots
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(slot);
        if let Some(e) = oom.or(invalid) {
            return Err(e.to_string());
        }
        if let Some(lost) = self.device.lost() {
            return Err(lost);
        }
        result
    }

    fn describe(&self) -> String {
        format!("GPU {}", self.device.adapter.name)
    }
}

/// A worker's GPU buffers, grown to what its joins need.
pub(super) struct Slot {
    pub(super) words: Grow,
    pub(super) jobs: Grow,
    /// Each item's count, scanned into its first key.
    pub(super) items: Grow,
    pub(super) stored: Grow,
    pub(super) queries: Grow,
    pub(super) ties: Grow,
    pub(super) leaf_of: Grow,
    pub(super) sorted: Grow,
    pub(super) blocks: Grow,
    pub(super) tables: Grow,
    pub(super) info: Grow,
    pub(super) tree: Grow,
    pub(super) fills: Grow,
    /// The sieve's and the routes' counters and offsets.
    pub(super) scan: Grow,
    pub(super) routes: Grow,
    pub(super) sums: Grow,
    pub(super) out: Grow,
    /// The kernels' work counters (shader.rs's `Stat`), since the fill began.
    pub(super) stats: Grow,
    pub(super) params: Params,
    pub(super) staging: Staging,
    /// The arena whose words are on the GPU now.
    pub(super) resident: Option<Arena>,
}

/// The jobs of one join, in one list: stored (west) jobs, query (east) jobs, then the tied
/// ones of each, and a last empty job whose first item ends the list.
pub(super) struct Plan {
    pub(super) arena: Arena,
    pub(super) list: Vec<Job>,
    pub(super) west: std::ops::Range<usize>,
    pub(super) east: std::ops::Range<usize>,
    pub(super) tied: std::ops::Range<usize>,
    /// Where the tied east jobs start in `list`.
    pub(super) tied_east: usize,
}

impl Plan {
    pub(super) fn new(join: &Join<'_, '_>, max_pairs: u64) -> Result<Self, String> {
        let arena = jobs::arena(join.queries.iter().chain(join.stored));
        let marks = join
            .shape
            .ties
            .map_or(0, |(m, _)| m.iter().fold(0, |a, b| a | b));
        let SideJobs {
            all: west,
            tied: tied_west,
        } = jobs::side_jobs(join.stored, &arena, marks, max_pairs);
        let SideJobs {
            all: east,
            tied: tied_east,
        } = jobs::side_jobs(join.queries, &arena, marks, max_pairs);
        let mut list = Vec::new();
        let mut item = 0u64;
        let mut push = |side: Vec<Job>, list: &mut Vec<Job>| {
            let start = list.len();
            for mut job in side {
                job.first_item = item as u32;
                item += job.items();
                list.push(job);
            }
            start..list.len()
        };
        let west = push(west, &mut list);
        let east = push(east, &mut list);
        let tied_start = list.len();
        let tw = push(tied_west, &mut list);
        let _ = push(tied_east, &mut list);
        let tied = tied_start..list.len();
        let tied_east = tw.end;
        if item >= u64::from(u32::MAX) {
            return Err(format!(
                "a join of {item} work items is too large for one pass"
            ));
        }
        list.push(Job {
            north: 0,
            north_len: 0,
            south: 0,
            south_len: 0,
            forbid: 0,
            extra: 0,
            exact: (0, 0),
            first_item: item as u32,
        });
        Ok(Plan {
            arena,
            list,
            west,
            east,
            tied,
            tied_east,
        })
    }

    fn items(&self) -> u32 {
        self.list.last().expect("the end job").first_item
    }

    fn jobs(&self) -> u32 {
        self.list.len() as u32 - 1
    }

    /// The word pairs the jobs of `range` test.
    fn pairs(&self, range: std::ops::Range<usize>) -> u64 {
        self.list[range].iter().map(Job::pairs).sum()
    }
}

/// Cuts the jobs `range` into runs of at most `cap` keys (by each job's first key,
/// `offsets`); a job never holds more.
fn portions(
    range: std::ops::Range<usize>,
    offsets: &[u32],
    cap: u64,
) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let mut start = range.start;
    for j in range.clone() {
        if u64::from(offsets[j + 1] - offsets[start]) > cap && j > start {
            out.push(start..j);
            start = j;
        }
    }
    if start < range.end {
        out.push(start..range.end);
    }
    out
}

/// One stage: dispatches and copies recorded in order, submitted together.
pub(super) struct Stage<'d> {
    dev: &'d Device,
    steps: Vec<Step<'d>>,
}

enum Step<'d> {
    /// A dispatch: kernel, params offset, buffers, workgroups, and whether it is timed.
    Run(&'d Kernel, u32, Vec<wgpu::Buffer>, u32, bool),
    Clear(wgpu::Buffer, u64, u64),
    Copy(wgpu::Buffer, u64, u64),
}

impl<'d> Stage<'d> {
    pub(super) fn new(dev: &'d Device) -> Self {
        Stage {
            dev,
            steps: Vec::new(),
        }
    }

    pub(super) fn run(
        &mut self,
        params: &mut Params,
        kernel: &'d Kernel,
        p: &[u32],
        buffers: &[&wgpu::Buffer],
        groups: u64,
    ) {
        self.dispatch(params, kernel, p, buffers, groups, false);
    }

    /// As [`Stage::run`], in a compute pass of its own timed by the GPU where it can be
    /// (the seconds go to the slot's [`Staging::take_timed`]); at most one per stage.
    pub(super) fn run_timed(
        &mut self,
        params: &mut Params,
        kernel: &'d Kernel,
        p: &[u32],
        buffers: &[&wgpu::Buffer],
        groups: u64,
    ) {
        self.dispatch(params, kernel, p, buffers, groups, true);
    }

    fn dispatch(
        &mut self,
        params: &mut Params,
        kernel: &'d Kernel,
        p: &[u32],
        buffers: &[&wgpu::Buffer],
        groups: u64,
        timed: bool,
    ) {
        let at = params.push(p);
        let groups = u32::try_from(groups).expect("dispatches stay below 2^32 workgroups");
        let buffers = buffers.iter().map(|&b| b.clone()).collect();
        self.steps
            .push(Step::Run(kernel, at, buffers, groups, timed));
    }

    /// Zeroes `words` u32 words of `buffer` from word `at`.
    pub(super) fn clear(&mut self, buffer: &wgpu::Buffer, at: u64, words: u64) {
        if words > 0 {
            self.steps
                .push(Step::Clear(buffer.clone(), 4 * at, 4 * words));
        }
    }

    /// Reads `words` u32 words of `buffer` from word `at` back (in the order asked).
    pub(super) fn read(&mut self, buffer: &wgpu::Buffer, at: u64, words: u64) {
        self.steps
            .push(Step::Copy(buffer.clone(), 4 * at, 4 * words));
    }

    /// Submits the stage and returns what it read, one vector per read.
    pub(super) fn submit(
        self,
        params: &mut Params,
        staging: &mut Staging,
    ) -> Result<Vec<Vec<u32>>, String> {
        let dev = self.dev;
        let read: u64 = self
            .steps
            .iter()
            .map(|s| match s {
                Step::Copy(_, _, n) => *n,
                _ => 0,
            })
            .sum();
        let timed = self.steps.iter().any(|s| matches!(s, Step::Run(.., true)));
        let timer = timed
            .then(|| staging.timer(&dev.device, &dev.queue))
            .flatten()
            .map(|t| (t.queries.clone(), t.resolve.clone()));
        let stamps = if timer.is_some() { 16 } else { 0 };
        let staging_buffer = staging.at_least(&dev.device, read + stamps).clone();
        let params = params.upload(&dev.device, &dev.queue).clone();
        let mut encoder = dev.device.create_command_encoder(&Default::default());
        let mut sizes = Vec::new();
        let mut at = 0;
        let mut steps = self.steps.into_iter().peekable();
        while let Some(step) = steps.next() {
            match step {
                Step::Run(kernel, offset, buffers, groups, timed) => {
                    let timestamp_writes = timer.as_ref().filter(|_| timed).map(|(queries, _)| {
                        wgpu::ComputePassTimestampWrites {
                            query_set: queries,
                            beginning_of_pass_write_index: Some(0),
                            end_of_pass_write_index: Some(1),
                        }
                    });
                    let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                        label: None,
                        timestamp_writes,
                    });
                    let refs: Vec<&wgpu::Buffer> = buffers.iter().collect();
                    kernel.dispatch(&dev.device, &mut pass, (&params, offset), &refs, groups);
                    // Untimed dispatches share a pass; a timed one has a pass of its own.
                    while let Some(Step::Run(.., false)) = steps.peek().filter(|_| !timed) {
                        let Some(Step::Run(kernel, offset, buffers, groups, _)) = steps.next()
                        else {
                            unreachable!("peeked a dispatch");
                        };
                        let refs: Vec<&wgpu::Buffer> = buffers.iter().collect();
                        kernel.dispatch(&dev.device, &mut pass, (&params, offset), &refs, groups);
                    }
                }
                Step::Clear(buffer, offset, bytes) => {
                    encoder.clear_buffer(&buffer, offset, Some(bytes))
                }
                Step::Copy(buffer, offset, bytes) => {
                    encoder.copy_buffer_to_buffer(&buffer, offset, &staging_buffer, at, bytes);
                    sizes.push(bytes);
                    at += bytes;
                }
            }
        }
        if let Some((queries, resolve)) = &timer {
            encoder.resolve_query_set(queries, 0..2, resolve, 0);
            encoder.copy_buffer_to_buffer(resolve, 0, &staging_buffer, at, 16);
        }
        let submission = dev.queue.submit([encoder.finish()]);
        let bytes = read_back(&dev.device, submission, &staging_buffer, at + stamps)?;
        let mut out = Vec::new();
        let mut from = 0;
        for n in sizes {
            out.push(words(&bytes[from as usize..(from + n) as usize]));
            from += n;
        }
        if timer.is_some() {
            staging.add_timed(&words(&bytes[from as usize..]));
        }
        Ok(out)
    }
}

/// Extra u32 words an in-place scan of `len` values needs after them (its segment sums).
pub(super) fn scan_scratch(len: u64) -> u64 {
    if len <= 1024 {
        0
    } else {
        let segments = len.div_ceil(1024);
        segments + scan_scratch(segments)
    }
}

/// Records an exclusive scan of `buffer`'s words `off..off + len` in place, with scratch
/// from word `scratch`.
pub(super) fn scan<'d>(
    stage: &mut Stage<'d>,
    params: &mut Params,
    buffer: &wgpu::Buffer,
    (off, len): (u64, u64),
    scratch: u64,
) {
    let k = &stage.dev.kernels;
    let p = |sums: u64| [off as u32, len as u32, sums as u32, 0];
    if len <= 1024 {
        stage.run(params, &k.scan_single, &p(0), &[buffer], 1);
        return;
    }
    let segments = len.div_ceil(1024);
    stage.run(params, &k.scan_reduce, &p(scratch), &[buffer], segments);
    scan(
        stage,
        params,
        buffer,
        (scratch, segments),
        scratch + segments,
    );
    stage.run(params, &k.scan_down, &p(scratch), &[buffer], segments);
}

/// 64-bit sums (weighted, hits) of `vec4<u32>` partials.
pub(super) fn add_sums(words: &[u32]) -> (u128, u128) {
    let mut total = (0u128, 0u128);
    for s in words.chunks_exact(4) {
        total.0 += u128::from(s[0]) | u128::from(s[1]) << 32;
        total.1 += u128::from(s[2]) | u128::from(s[3]) << 32;
    }
    total
}

/// What a join's stages add up to.
#[derive(Default)]
pub(super) struct Tally {
    pub(super) count: u128,
}

impl Slot {
    pub(super) fn new() -> Self {
        Slot {
            words: Grow::storage("words"),
            jobs: Grow::storage("jobs"),
            items: Grow::storage("items"),
            stored: Grow::storage("stored"),
            queries: Grow::storage("queries"),
            ties: Grow::storage("ties"),
            leaf_of: Grow::storage("leaf_of"),
            sorted: Grow::storage("sorted"),
            blocks: Grow::storage("blocks"),
            tables: Grow::storage("tables"),
            info: Grow::storage("info"),
            tree: Grow::storage("tree"),
            fills: Grow::storage("fills"),
            scan: Grow::storage("scan"),
            routes: Grow::storage("routes"),
            sums: Grow::storage("sums"),
            out: Grow::storage("out"),
            stats: Grow::storage("stats"),
            params: Params::new(),
            staging: Staging::new(),
            resident: None,
        }
    }

    /// The most blocks whose tables one binding holds on this device.
    pub(super) fn max_blocks(dev: &Device) -> u64 {
        let binding = dev.limits.max_storage_buffer_binding_size;
        binding.min(dev.limits.max_buffer_size) / (TABLE_WORDS * 4)
    }

    /// Stored keys one fill may hold on this device: the join's limit, and half of what
    /// the largest binding holds of their tables (the other half for partly filled
    /// leaves; a fill whose tree has more leaves is given larger ones).
    fn fill_cap(dev: &Device, limit: usize) -> u64 {
        (limit as u64).min(Self::max_blocks(dev) / 2 * 512).max(512)
    }

    fn join(
        &mut self,
        dev: &Device,
        join: &Join<'_, '_>,
        work: &mut Work,
    ) -> Result<Option<u64>, String> {
        let cap = Self::fill_cap(dev, join.limits.stored);
        let plan = Plan::new(join, cap)?;
        self.upload(dev, &plan, join)?;
        let offsets = self.count_items(dev, &plan)?;
        work.half_pairs_tested += plan.pairs(0..plan.tied.end);
        let size = |r: &std::ops::Range<usize>| u64::from(offsets[r.end] - offsets[r.start]);
        let (west, east) = (size(&plan.west), size(&plan.east));
        if west == 0 || east == 0 {
            return Ok(Some(0));
        }
        let swap = join.limits.swap && west <= cap && east > west;
        if !swap && west > cap && join.refuse {
            return Ok(None);
        }
        let mut tally = Tally::default();
        self.ties(dev, (join, &plan, &offsets), work, &mut tally)?;
        let (stored, queries) = if swap {
            (plan.east.clone(), plan.west.clone())
        } else {
            (plan.west.clone(), plan.east.clone())
        };
        let weights = |f: [u64; 4]| f.map(|x| x as u32);
        let (stored_w, query_w) = if swap {
            ([1, 1, 1, 1], weights(join.factors))
        } else {
            (weights(join.factors), [1, 1, 1, 1])
        };
        let live = !join.shape.holes & ((1u64 << CLASS_SHIFT) - 1);
        let fill = Fill {
            live,
            stored_w,
            query_w,
        };
        let qcap = (join.limits.queries as u64).max(1);
        let query_portions = portions(queries, &offsets, qcap);
        for (i, part) in portions(stored, &offsets, cap).into_iter().enumerate() {
            if i > 0 {
                work.regenerations += 1;
            }
            let sides = (part, &query_portions[..]);
            self.fill_and_count(dev, (&plan, &offsets), sides, fill, (work, &mut tally))?;
        }
        u64::try_from(tally.count)
            .map(Some)
            .map_err(|_| "a join's count does not fit 64 bits".to_string())
    }

    /// Uploads the jobs, and the quarter words unless they are there already.
    pub(super) fn upload(
        &mut self,
        dev: &Device,
        plan: &Plan,
        join: &Join<'_, '_>,
    ) -> Result<(), String> {
        if self.resident.as_ref() != Some(&plan.arena) {
            let words = jobs::arena_words(&plan.arena, join.queries.iter().chain(join.stored));
            let buffer = self.words.at_least(dev, 4 * words.len() as u64)?;
            write_u32(&dev.queue, &buffer, &words);
            self.resident = Some(plan.arena.clone());
        }
        let mut encoded = Vec::with_capacity(16 * plan.list.len());
        plan.list.iter().for_each(|j| j.encode(&mut encoded));
        let buffer = self.jobs.at_least(dev, 4 * encoded.len() as u64)?;
        write_u32(&dev.queue, &buffer, &encoded);
        Ok(())
    }

    /// Counts every item's keys and scans them; returns each job's first key (and the
    /// total after the last).
    pub(super) fn count_items(&mut self, dev: &Device, plan: &Plan) -> Result<Vec<u32>, String> {
        let items = u64::from(plan.items());
        let k = &dev.kernels;
        let scan_buf = self
            .items
            .at_least(dev, 4 * (items + 1 + scan_scratch(items + 1)))?;
        let jobs = self.jobs.get().clone();
        let words = self.words.get().clone();
        let keys = self.stored.at_least(dev, 16)?;
        let out = self.out.at_least(dev, 8 * (u64::from(plan.jobs()) + 1))?;
        self.params.clear();
        let mut stage = Stage::new(dev);
        stage.clear(&scan_buf, items, 1);
        let p = [items as u32, plan.jobs(), TILE, 0, 0, 0, 0, 0];
        stage.run(
            &mut self.params,
            &k.gen_count,
            &p,
            &[&words, &jobs, &scan_buf, &keys],
            items.div_ceil(256),
        );
        scan(
            &mut stage,
            &mut self.params,
            &scan_buf,
            (0, items + 1),
            items + 1,
        );
        let n = u64::from(plan.jobs()) + 1;
        stage.run(
            &mut self.params,
            &k.job_offsets,
            &[n as u32, 0, 0, 0],
            &[&jobs, &scan_buf, &keys, &out],
            n.div_ceil(256),
        );
        stage.read(&out, 0, 2 * n);
        let read = stage.submit(&mut self.params, &mut self.staging)?;
        Ok(read[0].iter().step_by(2).copied().collect())
    }

    /// Writes the keys of the jobs `range` into `target` (at its start); returns how many.
    pub(super) fn write_keys(
        &mut self,
        dev: &Device,
        (plan, offsets): (&Plan, &[u32]),
        range: std::ops::Range<usize>,
        target: &wgpu::Buffer,
    ) -> Result<u32, String> {
        let keys = offsets[range.end] - offsets[range.start];
        let first = plan.list[range.start].first_item;
        let items = plan.list[range.end].first_item - first;
        let k = &dev.kernels;
        self.params.clear();
        let mut stage = Stage::new(dev);
        let p = [
            items,
            plan.jobs(),
            TILE,
            offsets[range.start],
            first,
            0,
            0,
            0,
        ];
        let buffers = [self.words.get(), self.jobs.get(), self.items.get(), target];
        stage.run(
            &mut self.params,
            &k.gen_write,
            &p,
            &buffers,
            u64::from(items).div_ceil(256),
        );
        stage.submit(&mut self.params, &mut self.staging)?;
        Ok(keys)
    }
}

/// What a fill's kernels read of it (sieve.wgsl's `Fill`, less its ranges and tree).
#[derive(Debug, Clone, Copy)]
pub(super) struct Fill {
    pub(super) live: u64,
    pub(super) stored_w: [u32; 4],
    pub(super) query_w: [u32; 4],
}

pub(super) fn write_u32(queue: &wgpu::Queue, buffer: &wgpu::Buffer, words: &[u32]) {
    if words.is_empty() {
        return;
    }
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    queue.write_buffer(buffer, 0, &bytes);
}
