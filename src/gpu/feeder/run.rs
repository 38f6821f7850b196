//! The feeder thread's loop: it gathers the joins the workers hand over, launches them in
//! batches (packed into a free slot and recorded into one command buffer), lands each batch
//! (one wait, for the oldest), and settles its joins: answered, redone in the next batch,
//! or cut into parts.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, TryRecvError};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use super::cut::larger_role;
use super::levels::Levels;
use super::room::{Room, Sizes};
use super::shares::{joined_work, pass_seconds, Shares};
use super::submission::{Submission, STOPPED};
use crate::gpu::device::Device;
use crate::gpu::layout::{Job, Side, CARRIED, JOIN_PORTION, RESULT_WORDS};
use crate::gpu::model::host_steps;
use crate::gpu::request::Request;
use crate::gpu::resident::Resident;
use crate::gpu::slot::{top_levels, upload, Capacity, Packed, Slot, STAT_WORDS, WIDE_STEPS};
use crate::gpu::stats::{self, Recorded};
use crate::work::Work;

/// Batches in flight at once: one running, one queued behind it, one being read.
pub(crate) const SLOTS: usize = 3;

/// Batches in flight that a batch not yet full waits behind ([`Loop::ready`]): one running
/// and one queued. The span model forms a count's batches by the same rule.
pub(crate) const FEED_DEPTH: usize = 2;

/// One batch on the GPU: its slot, its joins, what it uploaded, and how it ends.
struct InFlight {
    slot: usize,
    entries: Vec<Submission>,
    submission: wgpu::SubmissionIndex,
    /// The readback buffer's mapping, once the batch is done.
    mapped: Receiver<Result<(), wgpu::BufferAsyncError>>,
    bytes_up: u64,
    /// Of those, resident quarter words.
    resident_bytes: u64,
    /// Sets of carried words uploaded.
    word_sets: u64,
    steps: u64,
    /// Of those, the tree levels' split across workgroups.
    wide_steps: u64,
    /// What the span model needs to know of it beside its counters.
    recorded: Recorded,
}

/// What the feeder thread holds.
pub(super) struct Loop {
    pub(super) dev: Arc<Device>,
    resident: Arc<Resident>,
    pub(super) cap: Capacity,
    slots: Vec<Slot>,
    free: Vec<usize>,
    belt: wgpu::util::StagingBelt,
    rx: Receiver<Submission>,
    /// Joins waiting for a batch: redone ones first.
    pub(super) queue: VecDeque<Submission>,
    flight: VecDeque<InFlight>,
    /// Whether the workers' end of the channel is gone.
    closed: bool,
    /// What every batch so far did (the feeder's totals).
    totals: Arc<Mutex<Work>>,
    /// The error that stopped the GPU, if one did: every later join gets it.
    failed: Option<String>,
    pub(super) sizes: Sizes,
    levels: Levels,
    /// One past the last submission a worker waits for
    /// ([`Ticket::wait`](super::submission::Ticket::wait)).
    flush: Arc<AtomicU64>,
    /// The last batch as packed, kept for its room.
    packed: Packed,
    /// Whether the feeder gave up every join.
    stopped: Arc<AtomicBool>,
}

/// How often the feeder looks for a waiting worker while it gathers joins. (It waits for
/// nothing else: a worker hands over a step of tasks' joins and then waits for them, and a
/// join nobody waits for yet can wait; so batches depend on the workers' steps, not on
/// timing.)
const POLL: Duration = Duration::from_micros(200);

impl Loop {
    /// The loop of `dev`'s feeder, with batch slots of capacity `cap` reading resident
    /// words from `resident`, taking joins from `rx`, adding what each batch did to
    /// `totals`, launching early the joins before `flush`, and giving up every join once
    /// `stopped` is set.
    pub(super) fn new(
        dev: Arc<Device>,
        (cap, resident): (Capacity, Arc<Resident>),
        rx: Receiver<Submission>,
        totals: Arc<Mutex<Work>>,
        (flush, stopped): (Arc<AtomicU64>, Arc<AtomicBool>),
    ) -> Self {
        let slots = (0..SLOTS)
            .map(|_| Slot::new(&dev, cap, resident.buffer()))
            .collect();
        let belt = wgpu::util::StagingBelt::new(dev.device.clone(), 1 << 22);
        Loop {
            dev,
            resident,
            cap,
            slots,
            free: (0..SLOTS).rev().collect(),
            belt,
            rx,
            queue: VecDeque::new(),
            flight: VecDeque::new(),
            closed: false,
            totals,
            failed: None,
            sizes: Sizes::default(),
            levels: Levels::default(),
            flush,
            packed: Packed::default(),
            stopped,
        }
    }

    /// Feeds the GPU until the workers' end of the channel is gone and every join is
    /// answered. Stopped, it answers every join with [`STOPPED`] and ends without waiting
    /// for the batches in flight (their buffers live until the GPU is done with them).
    pub(super) fn run(mut self) {
        loop {
            self.gather();
            let stopped = self
                .stopped
                .load(Ordering::Acquire)
                .then(|| STOPPED.to_string());
            let failed = self.dev.lost().or_else(|| self.failed.clone());
            if let Some(why) = stopped.or(failed) {
                self.fail_all(&why);
                if self.closed && self.flight.is_empty() {
                    return;
                }
                continue;
            }
            if !self.queue.is_empty() && !self.free.is_empty() && self.ready() {
                self.launch();
            } else if !self.flight.is_empty() {
                self.land();
            } else if !self.queue.is_empty() {
                self.gather_more();
            } else if self.closed {
                return;
            } else {
                match self.rx.recv() {
                    Ok(s) => self.queue.push_back(s),
                    Err(_) => self.closed = true,
                }
            }
        }
    }

    /// Takes every join waiting in the channel, without blocking.
    fn gather(&mut self) {
        loop {
            match self.rx.try_recv() {
                Ok(s) => self.queue.push_back(s),
                Err(TryRecvError::Empty) => return,
                Err(TryRecvError::Disconnected) => {
                    self.closed = true;
                    return;
                }
            }
        }
    }

    /// Whether the queue's front should go now: the queue fills a batch, no more joins will
    /// come, or a worker waits for one of them and fewer than [`FEED_DEPTH`] batches are in
    /// flight. Past that depth the GPU has a batch running and the next queued, so a batch
    /// not yet full waits for the oldest to land, gathering what the other workers hand
    /// over meanwhile: where the GPU is the bottleneck a batch holds several workers' steps,
    /// and every batch costs the same dependent steps whatever it holds.
    fn ready(&self) -> bool {
        if self.closed || self.fills_a_batch() {
            return true;
        }
        // Any join, not the front's: two workers' joins may reach the channel in the other
        // order than they were numbered.
        let flush = self.flush.load(Ordering::Relaxed);
        self.flight.len() < FEED_DEPTH && self.queue.iter().any(|s| s.seq < flush)
    }

    /// Whether the joins waiting would fill a batch, as estimated.
    fn fills_a_batch(&self) -> bool {
        let mut room = Room::new(&self.cap);
        !self
            .queue
            .iter()
            .all(|s| room.take(&self.sizes.need(&s.request)))
    }

    /// Nothing in flight and the queue short of a batch: takes what comes (or looks again
    /// whether a worker waits).
    fn gather_more(&mut self) {
        match self.rx.recv_timeout(POLL) {
            Ok(s) => self.queue.push_back(s),
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => self.closed = true,
        }
    }

    /// Answers every waiting and flying join with `why`.
    fn fail_all(&mut self, why: &str) {
        for s in self.queue.drain(..) {
            s.reply.send(Err(why.to_string()));
        }
        for batch in self.flight.drain(..) {
            for s in batch.entries {
                s.reply.send(Err(why.to_string()));
            }
            self.free.push(batch.slot);
        }
        if !self.closed {
            match self.rx.recv() {
                Ok(s) => self.queue.push_back(s),
                Err(_) => self.closed = true,
            }
        }
    }

    /// Packs the joins at the front of the queue into a free slot and submits the batch.
    fn launch(&mut self) {
        let (packed, entries) = self.pack();
        if entries.is_empty() {
            self.packed = packed;
            return;
        }
        let slot = self.free.pop().expect("a free slot");
        let dev = &self.dev;
        let mut encoder = dev.device.create_command_encoder(&Default::default());
        // The quarters its joins were the first to read, and the carried words kept for joins
        // that run in several batches, ahead of its passes.
        let pending = self.resident.take_pending();
        let target = self.resident.buffer();
        let mut up = |at: u64, words: &[u64]| {
            upload(
                &mut encoder,
                &mut self.belt,
                target,
                8 * at,
                bytemuck::cast_slice(words),
            )
        };
        let resident_bytes: u64 = pending.shared.iter().map(|(at, w)| up(*at, w)).sum();
        let kept_bytes: u64 = pending.kept.iter().map(|(at, w)| up(*at, w)).sum();
        let resident_uploads = (pending.shared.len() + pending.kept.len()) as u32;
        let recording = self.slots[slot].record(dev, &mut encoder, &mut self.belt, &packed);
        let bytes_up = resident_bytes + kept_bytes + recording.bytes_up;
        let word_sets = packed.word_sets;
        let wide = packed.wide;
        let wide_steps = WIDE_STEPS * u64::from(wide);
        // Uploads into the resident words wait for each other.
        let extra_uploads = resident_uploads.max(1) - 1;
        let steps = recording.steps + u64::from(extra_uploads);
        let recorded = Recorded {
            joins: packed.joins.len() as u32,
            jobs: packed.jobs.len() as u32 - 1,
            items: packed.items,
            bytes_up,
            extra_uploads,
            steps,
            top_levels: packed.top,
            wide_levels: wide,
            learned: self.levels.learned(),
            wide_keys: self.cap.wide_keys,
            block_scan: self.cap.blocks + 1,
            validation: dev.indirect_validation,
            timed: self.slots[slot].timed(),
        };
        self.packed = packed;
        self.belt.finish();
        let submission = dev.queue.submit([encoder.finish()]);
        self.belt.recall();
        let readback = &self.slots[slot].buffers.readback;
        let (tx, mapped) = mpsc::channel();
        readback.slice(..).map_async(wgpu::MapMode::Read, move |r| {
            let _ = tx.send(r);
        });
        self.flight.push_back(InFlight {
            slot,
            entries,
            submission,
            mapped,
            bytes_up,
            resident_bytes,
            word_sets,
            steps,
            wide_steps,
            recorded,
        });
    }

    /// The joins at the front of the queue that the estimated sizes say fit one batch (the
    /// first always goes: arenas are handed out in join order, so as the first of its batch
    /// it fits wherever it would fit alone, or is cut).
    fn pack(&mut self) -> (Packed, Vec<Submission>) {
        let mut packed = std::mem::take(&mut self.packed);
        packed.clear();
        let mut entries = Vec::new();
        let mut room = Room::new(&self.cap);
        while let Some(s) = self.queue.front() {
            if s.reply.is_abandoned() {
                // A part of a whole that failed already.
                self.queue.pop_front();
                continue;
            }
            if s.alone && !entries.is_empty() {
                break;
            }
            let mut need = self.sizes.need(&s.request);
            // Placed now, its words are uploaded with this batch, whichever batch it joins.
            let kept = self.resident.keep(&s.request.words);
            if let Some((_, true)) = kept {
                packed.word_sets += 1;
            }
            if kept.is_some() || packed.shared_words(&s.request.words).is_some() {
                need[4] = 0;
            }
            if entries.is_empty() {
                if need[4] > u64::from(self.cap.words) {
                    // Cutting a join keeps every word it carries: it can never fit.
                    let s = self.queue.pop_front().expect("a front");
                    let why = format!(
                        "a join reads {} quarter words that are not on the GPU, more than a \
                         batch holds ({})",
                        need[4], self.cap.words
                    );
                    s.reply.send(Err(why));
                    continue;
                }
                // A portion's jobs are its whole's, which fit: only estimates may not.
                let portion = s.request.desc.flags & JOIN_PORTION != 0;
                if !room.holds(&need) && !portion {
                    // Its jobs or items alone pass the upload buffers: cut it first.
                    let s = self.queue.pop_front().expect("a front");
                    let role = larger_role(&s.request);
                    let most = (s.request.pairs(role) / 2).max(1);
                    self.cut(s, role, most, Work::default(), None);
                    continue;
                }
                room.force(&need);
            } else if !room.take(&need) {
                break;
            }
            let s = self.queue.pop_front().expect("a front");
            let fill = need[5].min(u64::from(s.request.desc.cap));
            packed.largest = packed.largest.max(fill);
            add(&mut packed, &s.request, kept.map(|k| k.0));
            let alone = s.alone;
            entries.push(s);
            if alone {
                break;
            }
        }
        packed.top = self.levels.top(top_levels(packed.largest));
        packed.wide = self
            .levels
            .wide(packed.largest, self.cap.wide_keys, packed.top);
        let end = packed.items;
        packed.jobs.push(Job {
            first_item: end,
            ..Job::default()
        });
        (packed, entries)
    }

    /// Waits for the oldest batch, reads its results and answers (or redoes) its joins.
    fn land(&mut self) {
        let batch = self.flight.pop_front().expect("a batch in flight");
        let dev = &self.dev;
        let wait = wgpu::PollType::Wait {
            submission_index: Some(batch.submission.clone()),
            timeout: None,
        };
        let mapped = dev
            .device
            .poll(wait)
            .map_err(|e| format!("waiting for the GPU: {e}"))
            .and_then(|_| match batch.mapped.try_recv() {
                Ok(r) => Ok(r),
                // Mapped after that submission: the next full poll delivers it.
                Err(_) => dev
                    .device
                    .poll(wgpu::PollType::wait_indefinitely())
                    .map_err(|e| format!("waiting for the GPU: {e}"))
                    .and_then(|_| {
                        batch
                            .mapped
                            .recv()
                            .map_err(|_| "the GPU never answered a read".to_string())
                    }),
            })
            .and_then(|r| r.map_err(|e| format!("reading GPU memory: {e}")));
        if let Err(why) = mapped {
            for s in batch.entries {
                s.reply.send(Err(why.clone()));
            }
            self.failed = Some(why);
            self.free.push(batch.slot);
            return;
        }
        let slot = &self.slots[batch.slot];
        let read = slot
            .buffers
            .readback
            .slice(..)
            .get_mapped_range()
            .map(|view| bytemuck::cast_slice::<u8, u32>(&view).to_vec())
            .map_err(|e| format!("reading GPU memory: {e}"));
        slot.buffers.readback.unmap();
        let words = match read {
            Ok(words) => words,
            Err(why) => {
                for s in batch.entries {
                    s.reply.send(Err(why.clone()));
                }
                self.failed = Some(why);
                self.free.push(batch.slot);
                return;
            }
        };
        let rows = batch.entries.len();
        let stamps_at = rows * RESULT_WORDS as usize + STAT_WORDS as usize;
        let passes = slot
            .timed()
            .then(|| pass_seconds(&words[stamps_at..], dev.queue.get_timestamp_period()));
        // The counters, then the rows (results.wgsl).
        let (stats, rows) = words[..stamps_at].split_at(STAT_WORDS as usize);
        let rows: Vec<&[u32]> = rows.chunks_exact(RESULT_WORDS as usize).collect();
        let (kernels, shape) = stats::read(stats, &rows, &batch.recorded);
        let peaks = stats::level_keys_peaks(stats);
        self.levels.learn(batch.recorded.top_levels, &peaks);
        // The span model lists a batch's steps as the slot records them; every GPU test
        // (a debug build) holds each batch to that. wgpu's checks of indirect dispatches
        // are the model's to add: the host does not record them.
        debug_assert_eq!(
            host_steps(&shape),
            batch.steps,
            "the span model's steps against the recorded ones: {shape:?}"
        );
        let batch_work = Work {
            gpu_submits: 1,
            gpu_waits: 1,
            gpu_steps: batch.steps,
            gpu_wide_steps: batch.wide_steps,
            gpu_bytes_up: batch.bytes_up,
            gpu_resident_bytes: batch.resident_bytes,
            gpu_word_sets: batch.word_sets,
            gpu_jobs: u64::from(batch.recorded.jobs),
            gpu_bytes_down: 4 * stamps_at as u64 + if passes.is_some() { 8 * 12 } else { 0 },
            ..kernels
        };
        let shares = Shares::of(&rows, &batch.entries);
        let parts = shares.split(&batch_work);
        for (i, (s, row)) in batch.entries.into_iter().zip(&rows).enumerate() {
            let mut work = joined_work(&s.request, row);
            if s.again {
                work.gpu_part_pairs = work.half_pairs_tested;
            }
            work.add(&parts[i]);
            if let Some(passes) = &passes {
                shares.add_seconds(i, passes, &mut work);
            }
            self.sizes.learn(&s.request, row);
            self.totals
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .add(&work);
            self.settle(s, row, work, (i == 0, rows.len() == 1));
        }
        self.free.push(batch.slot);
    }
}

/// Adds `request`'s jobs, sides, description and carried words to `packed`: its words
/// read from the resident buffer where they are `kept` (from that word), else carried.
fn add(packed: &mut Packed, request: &Request, kept: Option<u32>) {
    let join = packed.joins.len() as u32;
    let job0 = packed.jobs.len() as u32;
    let side0 = packed.sides.len() as u32;
    let (word0, mark) = match kept {
        Some(at) => (at, 0),
        None => (packed.carry(&request.words), CARRIED),
    };
    let item0 = packed.items;
    packed
        .sides
        .extend(request.sides.iter().map(|s| Side { join, ..*s }));
    let place = |at: u32| {
        if at & CARRIED != 0 {
            mark | ((at & !CARRIED) + word0)
        } else {
            at
        }
    };
    for job in &request.jobs {
        packed.jobs.push(Job {
            north: place(job.north),
            south: place(job.south),
            first_item: job.first_item + item0,
            ..job.on_side(job.side() + side0)
        });
    }
    packed.items += request.items() as u32;
    let mut desc = request.desc;
    let r = request.roles;
    desc.jobs = [r[0] + job0, r[1] + job0, r[2] + job0, r[3] + job0];
    desc.jobs_end = r[4] + job0;
    packed.joins.push(desc);
}
