//! The feeder: one thread that owns the GPU's queue. Worker threads hand it joins through a
//! bounded channel and go on; it packs the joins waiting into a batch, records the whole
//! batch into one command buffer, and keeps up to [`Feeder::SLOTS`] batches in flight, so
//! that the GPU has the next batch while the host reads the last one's results (one wait
//! per batch, for the oldest). A join that found no room in its batch is redone in the
//! next; one too large for any batch is cut into joins whose counts add up to it.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, SyncSender, TryRecvError};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

use super::layout::{
    Job, FILL_EMPTY, FILL_ERRORS, FILL_OVER_BLOCKS, FILL_OVER_ROUTES, FILL_REFUSED, FILL_SWAPPED,
    FILL_TOO_LARGE, FILL_UNFINISHED, JOIN_PORTION, RESULT_BLOCKS, RESULT_HITS, RESULT_ROUTES,
    RESULT_SIZES, RESULT_STATUS, RESULT_TESTS, RESULT_WEIGHTED, RESULT_WORDS, ROLE_EAST, ROLE_WEST,
};
use super::request::Request;
use super::resident::Resident;
use super::slot::{top_levels, upload, wide_levels, Capacity, Packed, Slot, PASSES, STAT_WORDS};
use super::stats::{self, Recorded};
use super::Device;
use crate::work::Work;

/// What became of one join: its weighted count (`None`: refused, its stored side passes
/// one fill), and what it did.
pub(crate) type Outcome = Result<(Option<u64>, Work), String>;

/// A join handed to the feeder, and where its outcome goes.
struct Submission {
    request: Request,
    reply: Reply,
    /// Its place in the order of submissions (parts of a cut join share their whole's).
    seq: u64,
    /// Whether it goes in a batch of its own: it found no room in a shared one.
    alone: bool,
}

/// A submitted join's outcome to come.
#[derive(Debug)]
pub(crate) struct Ticket {
    rx: Receiver<Outcome>,
    seq: u64,
    flush: Arc<AtomicU64>,
}

impl Ticket {
    /// Waits for the outcome. A worker that waits has handed over all it will for now, so
    /// the feeder is told to launch its joins rather than wait for a fuller batch.
    pub(crate) fn wait(self) -> Outcome {
        if let Ok(outcome) = self.rx.try_recv() {
            return outcome;
        }
        self.flush.fetch_max(self.seq + 1, Ordering::Relaxed);
        self.rx
            .recv()
            .map_err(|_| "the GPU feeder stopped before answering".to_string())?
    }
}

/// Where an outcome goes: a worker, or the join a cut join is a part of.
#[derive(Clone)]
enum Reply {
    Worker(mpsc::Sender<Outcome>),
    Part(Arc<Mutex<Whole>>),
}

/// A join cut into parts: their counts and work so far, and how many are out.
struct Whole {
    /// The parts' sum so far; `None` once a part was refused (the whole then is, rather
    /// than claim a count without that part).
    count: Option<u64>,
    work: Work,
    left: usize,
    reply: Reply,
    failed: bool,
}

impl Reply {
    /// Sends `outcome`; a part's goes to its whole, which answers once every part has.
    fn send(&self, outcome: Outcome) {
        match self {
            Reply::Worker(tx) => {
                let _ = tx.send(outcome);
            }
            Reply::Part(whole) => {
                let done = whole
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .take(outcome);
                if let Some((reply, outcome)) = done {
                    reply.send(outcome);
                }
            }
        }
    }
}

impl Whole {
    /// Adds a part's outcome; once every part is in (or one failed), the whole's outcome
    /// and where it goes.
    fn take(&mut self, outcome: Outcome) -> Option<(Reply, Outcome)> {
        if self.failed {
            return None;
        }
        let failure = match outcome {
            Ok((count, work)) => {
                self.left -= 1;
                self.work.add(&work);
                match (self.count, count) {
                    (Some(sum), Some(count)) => match sum.checked_add(count) {
                        Some(sum) => {
                            self.count = Some(sum);
                            None
                        }
                        None => Some("a join's parts do not add up within 64 bits".to_string()),
                    },
                    // A part refused (its stored side passes a fill; only a refusable
                    // join's can be): so is the whole.
                    _ => {
                        self.count = None;
                        None
                    }
                }
            }
            Err(why) => Some(why),
        };
        if let Some(why) = failure {
            self.failed = true;
            return Some((self.reply.clone(), Err(why)));
        }
        (self.left == 0).then(|| (self.reply.clone(), Ok((self.count, self.work))))
    }
}

/// The feeder's end of the channel and its thread.
pub(crate) struct Feeder {
    tx: Mutex<Option<SyncSender<Submission>>>,
    thread: Mutex<Option<JoinHandle<()>>>,
    /// What every batch so far did, all joins together.
    totals: Arc<Mutex<Work>>,
    /// Submissions so far, and one past the last a worker waits for.
    next: AtomicU64,
    flush: Arc<AtomicU64>,
}

impl Feeder {
    /// Batches in flight at once: one running, one queued behind it, one being read.
    pub(crate) const SLOTS: usize = 3;

    /// Starts the feeder of `dev`, with batch slots of capacity `cap` reading resident words
    /// from `resident` (and uploading those placed there since the last batch).
    pub(crate) fn start(dev: Arc<Device>, cap: Capacity, resident: Arc<Resident>) -> Self {
        let (tx, rx) = mpsc::sync_channel(4 * cap.joins as usize);
        let totals = Arc::new(Mutex::new(Work::default()));
        let flush = Arc::new(AtomicU64::new(0));
        let mut state = Loop::new(dev, cap, resident, rx);
        state.totals = Arc::clone(&totals);
        state.flush = Arc::clone(&flush);
        let thread = std::thread::Builder::new()
            .name("nqueens-gpu".into())
            .spawn(move || state.run())
            .expect("the GPU feeder thread starts");
        Feeder {
            tx: Mutex::new(Some(tx)),
            thread: Mutex::new(Some(thread)),
            totals,
            next: AtomicU64::new(0),
            flush,
        }
    }

    /// What every batch so far did, all joins together.
    pub(crate) fn totals(&self) -> Work {
        *self.totals.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Hands `request` over; its outcome comes through the returned ticket.
    pub(crate) fn submit(&self, request: Request) -> Result<Ticket, String> {
        let (tx, rx) = mpsc::channel();
        let seq = self.next.fetch_add(1, Ordering::Relaxed);
        let sender = self
            .tx
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
            .ok_or("the GPU feeder has stopped")?;
        sender
            .send(Submission {
                request,
                reply: Reply::Worker(tx),
                seq,
                alone: false,
            })
            .map_err(|_| "the GPU feeder has stopped".to_string())?;
        Ok(Ticket {
            rx,
            seq,
            flush: Arc::clone(&self.flush),
        })
    }
}

impl Drop for Feeder {
    fn drop(&mut self) {
        self.tx
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(thread) = self
            .thread
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
        {
            let _ = thread.join();
        }
    }
}

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
    steps: u64,
    /// Of those, the tree levels' split across workgroups.
    wide_steps: u64,
    /// What the span model needs to know of it beside its counters.
    recorded: Recorded,
}

/// What the feeder thread holds.
struct Loop {
    dev: Arc<Device>,
    resident: Arc<Resident>,
    cap: Capacity,
    slots: Vec<Slot>,
    free: Vec<usize>,
    belt: wgpu::util::StagingBelt,
    rx: Receiver<Submission>,
    /// Joins waiting for a batch: redone ones first.
    queue: VecDeque<Submission>,
    flight: VecDeque<InFlight>,
    /// Whether the workers' end of the channel is gone.
    closed: bool,
    /// What every batch so far did ([`Feeder::totals`]).
    totals: Arc<Mutex<Work>>,
    /// The error that stopped the GPU, if one did: every later join gets it.
    failed: Option<String>,
    sizes: Sizes,
    /// One past the last submission a worker waits for ([`Ticket::wait`]).
    flush: Arc<AtomicU64>,
    /// The last batch as packed, kept for its room.
    packed: Packed,
}

/// How often the feeder looks for a waiting worker while it gathers joins. (It waits for
/// nothing else: a worker hands over a step of tasks' joins and then waits for them, and a
/// join nobody waits for yet can wait; so batches depend on the workers' steps, not on
/// timing.)
const POLL: Duration = Duration::from_micros(200);

impl Loop {
    fn new(
        dev: Arc<Device>,
        cap: Capacity,
        resident: Arc<Resident>,
        rx: Receiver<Submission>,
    ) -> Self {
        let slots = (0..Feeder::SLOTS)
            .map(|_| Slot::new(&dev, cap, resident.buffer()))
            .collect();
        let belt = wgpu::util::StagingBelt::new(dev.device.clone(), 1 << 22);
        Loop {
            dev,
            resident,
            cap,
            slots,
            free: (0..Feeder::SLOTS).rev().collect(),
            belt,
            rx,
            queue: VecDeque::new(),
            flight: VecDeque::new(),
            closed: false,
            totals: Arc::default(),
            failed: None,
            sizes: Sizes::default(),
            flush: Arc::default(),
            packed: Packed::default(),
        }
    }

    fn run(mut self) {
        loop {
            self.gather();
            if let Some(why) = self.dev.lost().or_else(|| self.failed.clone()) {
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

    /// Whether the queue's front should go now: a worker waits for it, the queue fills a
    /// batch, or no more joins will come.
    fn ready(&self) -> bool {
        // Any join, not the front's: two workers' joins may reach the channel in the other
        // order than they were numbered.
        let flush = self.flush.load(Ordering::Relaxed);
        self.closed || self.queue.iter().any(|s| s.seq < flush) || self.fills_a_batch()
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
        // The quarters its joins were the first to read, ahead of its passes.
        let mut resident_bytes = 0;
        let mut resident_uploads = 0;
        for (at, words) in self.resident.take_pending() {
            let (target, bytes) = (self.resident.buffer(), bytemuck::cast_slice(&words));
            resident_bytes += upload(&mut encoder, &mut self.belt, target, 8 * at, bytes);
            resident_uploads += 1;
        }
        let bytes_up =
            resident_bytes + self.slots[slot].record(dev, &mut encoder, &mut self.belt, &packed);
        let wide = wide_levels(packed.largest, self.cap.wide_keys);
        let wide_steps = WIDE_STEPS * u64::from(wide);
        let steps = batch_steps(top_levels(packed.largest)) + wide_steps;
        let recorded = Recorded {
            joins: packed.joins.len() as u32,
            jobs: packed.jobs.len() as u32 - 1,
            items: packed.items,
            bytes_up,
            // Uploads into the resident words wait for each other.
            extra_uploads: resident_uploads.max(1) - 1,
            top_levels: top_levels(packed.largest),
            wide_levels: wide,
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
            steps,
            wide_steps,
            recorded,
        });
    }

    /// The joins at the front of the queue that the estimated sizes say fit one batch (the
    /// first always goes: alone, it fits or is cut).
    fn pack(&mut self) -> (Packed, Vec<Submission>) {
        let mut packed = std::mem::take(&mut self.packed);
        packed.clear();
        let mut entries = Vec::new();
        let mut room = Room::new(&self.cap);
        while let Some(s) = self.queue.front() {
            let need = self.sizes.need(&s.request);
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
                    self.cut(s, role, most, Work::default());
                    continue;
                }
                room.force(&need);
            } else if !room.take(&need) {
                break;
            }
            let s = self.queue.pop_front().expect("a front");
            let fill = need[5].min(u64::from(s.request.desc.cap));
            packed.largest = packed.largest.max(fill);
            add(&mut packed, &s.request);
            let alone = s.alone;
            entries.push(s);
            if alone {
                break;
            }
        }
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
        let stats = &words[rows * RESULT_WORDS as usize..][..STAT_WORDS as usize];
        let rows: Vec<&[u32]> = words[..rows * RESULT_WORDS as usize]
            .chunks_exact(RESULT_WORDS as usize)
            .collect();
        let (kernels, _) = stats::read(stats, &rows, &batch.recorded);
        let batch_work = Work {
            gpu_submits: 1,
            gpu_waits: 1,
            gpu_steps: batch.steps,
            gpu_wide_steps: batch.wide_steps,
            gpu_bytes_up: batch.bytes_up,
            gpu_resident_bytes: batch.resident_bytes,
            gpu_bytes_down: 4 * stamps_at as u64 + if passes.is_some() { 8 * 12 } else { 0 },
            ..kernels
        };
        let shares = Shares::of(&rows, &batch.entries);
        let parts = shares.split(&batch_work);
        let alone = batch.entries.len() == 1;
        for (i, (s, row)) in batch.entries.into_iter().zip(&rows).enumerate() {
            let mut work = joined_work(&s.request, row);
            work.add(&parts[i]);
            if let Some(passes) = &passes {
                shares.add_seconds(i, passes, &mut work);
            }
            self.sizes.learn(&s.request, row);
            self.totals
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .add(&work);
            self.settle(s, row, work, alone);
        }
        self.free.push(batch.slot);
    }

    /// Answers a join from its results row, or queues it again, whole or cut.
    fn settle(&mut self, s: Submission, row: &[u32], work: Work, alone: bool) {
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
            // Its stored side passes a fill: stored a portion at a time, as the CPU does.
            let role = stored_role(row);
            let keys = row[(RESULT_SIZES + role) as usize];
            let parts = s.request.portions(role == ROLE_EAST, keys);
            self.queue_parts(s, parts, work);
        } else if !alone && status & FILL_UNFINISHED == 0 && !past_room(row, &self.cap) {
            // No room left in its batch: first in the next one, alone, where it fits or is
            // cut. (A tree not finished is the join's own, not its batch's: it is cut
            // wherever it ran; so is one whose blocks or routes alone pass a batch's.)
            self.queue.push_front(Submission { alone: true, ..s });
        } else if s.request.desc.flags & JOIN_PORTION != 0 && status != FILL_OVER_ROUTES {
            // A portion is a range of its stored keys: cut only into smaller ranges (its
            // queries, below, are cut by jobs as any join's: that leaves its stored keys).
            let parts = s.request.halves();
            self.queue_parts(s, parts, work);
        } else {
            // No room even alone: cut the side that fills the arena it passed, into as many
            // parts as its measured sizes say.
            let software = self.dev.adapter.software;
            let plan = cut_plan(&s.request, row, status, &self.cap, software);
            let most = (s.request.pairs(plan.role) / plan.parts).max(1);
            self.cut(s, plan.role, most, work);
        }
    }

    /// Queues the parts of `s` cut on role `role` into runs of at most `most` pairs, first in
    /// line; their counts add up to its count. A join that cannot be cut fails.
    fn cut(&mut self, s: Submission, role: u32, most: u64, work: Work) {
        let parts = s.request.cut(role, most);
        self.queue_parts(s, parts, work);
    }

    /// Queues `parts`, requests whose counts add up to that of `s`, first in line. Fewer
    /// than two: `s` cannot be cut, and fails.
    fn queue_parts(&mut self, s: Submission, parts: Vec<Request>, work: Work) {
        if parts.len() < 2 {
            let why = "a join too large for the GPU's batch buffers, and it cannot be cut";
            s.reply.send(Err(why.to_string()));
            return;
        }
        let whole = Arc::new(Mutex::new(Whole {
            count: Some(0),
            work: Work {
                regenerations: parts.len() as u64 - 1,
                ..work
            },
            left: parts.len(),
            reply: s.reply,
            failed: false,
        }));
        for request in parts.into_iter().rev() {
            self.queue.push_front(Submission {
                request,
                reply: Reply::Part(Arc::clone(&whole)),
                seq: s.seq,
                alone: false,
            });
        }
    }
}

/// Dispatches, clears and copies a batch records, whatever its joins (slot.rs): 6 uploads,
/// 6 clears, about 19 dispatches (scans of more than one `SCAN_SEGMENT` add two or four),
/// the results' copies and the timestamps' resolve; the tree's top levels come on top
/// ([`batch_steps`]).
pub(crate) const STEPS_PER_BATCH: u64 = 36;

/// The steps of a batch whose trees are built `top_levels` levels from the roots level
/// by level (slot.rs): one dispatch each.
pub(crate) fn batch_steps(top_levels: u32) -> u64 {
    STEPS_PER_BATCH + u64::from(top_levels)
}

/// The steps each top level adds where it splits its largest nodes across workgroups
/// (slot.rs): their tiles counted, scanned, moved and copied back.
pub(crate) const WIDE_STEPS: u64 = 4;

/// Whether a join's own blocks or routes, as its results row counts them, pass a batch's
/// room: it would not fit alone either.
fn past_room(row: &[u32], cap: &Capacity) -> bool {
    let status = row[RESULT_STATUS as usize];
    let over = |flag: u32, at: u32, room: u32| status & flag != 0 && row[at as usize] > room;
    over(FILL_OVER_BLOCKS, RESULT_BLOCKS, cap.blocks)
        || over(FILL_OVER_ROUTES, RESULT_ROUTES, cap.routes)
}

/// The role a join's results row says it stored.
fn stored_role(row: &[u32]) -> u32 {
    if row[RESULT_STATUS as usize] & FILL_SWAPPED != 0 {
        ROLE_EAST
    } else {
        ROLE_WEST
    }
}

/// Of a batch's room, the share a part of a cut join aims at: parts come out uneven.
const CUT_SHARE: f64 = 0.5;

/// How to cut a join: the role to cut, and into how many parts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct CutPlan {
    role: u32,
    parts: u64,
}

/// How to cut a join that found no room alone in a batch of capacity `cap` on a device
/// (`software`: a CPU driver), from its results row (the sizes the GPU measured before it
/// ran out of room).
fn cut_plan(
    request: &Request,
    row: &[u32],
    status: u32,
    cap: &Capacity,
    software: bool,
) -> CutPlan {
    let plan = |role, parts| CutPlan { role, parts };
    let stored_role = stored_role(row);
    let query_role = if stored_role == ROLE_WEST {
        ROLE_EAST
    } else {
        ROLE_WEST
    };
    let size = |role: u32| row[(RESULT_SIZES + role) as usize];
    let (stored, queries) = (size(stored_role), size(query_role));
    let over = |used: f64, room: u32| (used / (CUT_SHARE * f64::from(room))).ceil().max(2.0);
    if status & FILL_UNFINISHED != 0 {
        // Fewer stored keys make a smaller tree: on a GPU (a list of nodes to build ran out
        // of room) halved until one is finished; on a software driver, whose loop limit
        // stopped a subtree, cut at once to fills that one workgroup builds within it.
        let parts = if software {
            u64::from(stored).div_ceil(SOFTWARE_TREE_KEYS).max(2)
        } else {
            2
        };
        return plan(stored_role, parts);
    }
    if status & FILL_OVER_ROUTES != 0 {
        let routes = f64::from(row[RESULT_ROUTES as usize]);
        return plan(query_role, over(routes, cap.routes) as u64);
    }
    if status & FILL_OVER_BLOCKS != 0 {
        let blocks = f64::from(row[RESULT_BLOCKS as usize]);
        return plan(stored_role, over(blocks, cap.blocks) as u64);
    }
    // No room for its keys (or what they take: samples, tree slots, tied halves).
    let by_queries = over(f64::from(queries), cap.queries);
    let by_stored = over(f64::from(stored), cap.stored.min(cap.leaves / 5 * 512));
    if stored == 0 && queries == 0 {
        return plan(larger_role(request), 2);
    }
    if by_queries > by_stored {
        plan(query_role, by_queries as u64)
    } else {
        plan(stored_role, by_stored as u64)
    }
}

/// Stored keys whose tree one workgroup builds within lavapipe's loop limit (65,535
/// iterations an invocation, every loop together), for a fill whose subtree ran past it
/// (its top levels, built level by level, were fewer than it needed): a tree of 149,477
/// keys at N = 22 built by one workgroup ran past it, its thirds (about 50,000 keys each)
/// stayed within.
const SOFTWARE_TREE_KEYS: u64 = 1 << 15;

/// The side of `request` with more pairs.
fn larger_role(request: &Request) -> u32 {
    if request.pairs(ROLE_WEST) >= request.pairs(ROLE_EAST) {
        ROLE_WEST
    } else {
        ROLE_EAST
    }
}

/// The 64-bit value at word `at` of a results row.
fn wide(row: &[u32], at: u32) -> u64 {
    u64::from(row[at as usize]) | u64::from(row[at as usize + 1]) << 32
}

/// What one join did, from its request and results row.
fn joined_work(request: &Request, row: &[u32]) -> Work {
    let sizes: Vec<u64> = row[RESULT_SIZES as usize..][..4]
        .iter()
        .map(|&x| u64::from(x))
        .collect();
    let status = row[RESULT_STATUS as usize];
    let counted = status & FILL_ERRORS == 0;
    let swapped = status & FILL_SWAPPED != 0;
    let (stored, queries) = if swapped {
        (sizes[1], sizes[0])
    } else {
        (sizes[0], sizes[1])
    };
    let mut work = Work {
        half_pairs_tested: request.all_pairs(),
        keys_built: sizes.iter().sum(),
        ..Work::default()
    };
    if counted {
        work.stored_keys = stored;
        work.queries = queries;
        work.pair_product = stored * queries;
        work.blocks_built = u64::from(row[RESULT_BLOCKS as usize]);
        work.visited_pairs = u64::from(row[RESULT_ROUTES as usize]);
        work.routing_tests = wide(row, RESULT_TESTS);
        work.hits = wide(row, RESULT_HITS);
        work.direct_pairs = sizes[2] * sizes[3];
    }
    work
}

/// One of [`Work`]'s counters.
type Counter = fn(&mut Work) -> &mut u64;

/// Each join's share of a batch's work in each pass, to split the passes' GPU seconds and
/// the batch's counters.
struct Shares {
    /// Per pass, each join's weight and their total.
    weights: Vec<(Vec<f64>, f64)>,
    /// Each join's bytes of jobs, sides, description and carried words.
    uploads: Vec<f64>,
}

impl Shares {
    fn of(rows: &[&[u32]], entries: &[Submission]) -> Self {
        let per_join = |f: &dyn Fn(&[u32], &Request) -> f64| -> (Vec<f64>, f64) {
            let w: Vec<f64> = rows
                .iter()
                .zip(entries)
                .map(|(r, s)| f(r, &s.request))
                .collect();
            let total = w.iter().sum();
            (w, total)
        };
        let size = |r: &[u32], i: usize| f64::from(r[RESULT_SIZES as usize + i]);
        let weights = vec![
            per_join(&|_, q| q.items() as f64),
            per_join(&|r, _| size(r, 0) + size(r, 1)),
            per_join(&|r, _| f64::from(r[RESULT_BLOCKS as usize])),
            per_join(&|r, _| wide(r, RESULT_TESTS) as f64),
            per_join(&|r, _| f64::from(r[RESULT_ROUTES as usize])),
            per_join(&|r, _| size(r, 2) * size(r, 3)),
        ];
        let uploads = entries
            .iter()
            .map(|s| s.request.upload_bytes() as f64)
            .collect();
        Shares { weights, uploads }
    }

    /// The batch's counters `batch` split among its joins, each counter's parts adding up to
    /// it: a pass's by the joins' weights in that pass, uploads by each join's own, the rest
    /// evenly. An estimate scales each sampled task's counters to the plan by the task's
    /// stratum, so a batch's counters all put on its first join made one sample's estimate
    /// turn on which of its tasks happened to share a batch (the tree build's term of
    /// `count 21`'s model by a quarter).
    fn split(&self, batch: &Work) -> Vec<Work> {
        let n = self.uploads.len();
        let even = vec![1.0; n];
        let mut parts = vec![Work::default(); n];
        let counters: [(Counter, &[f64]); 25] = [
            (|w| &mut w.tree_tests, &self.weights[1].0),
            (|w| &mut w.gpu_top_nodes, &self.weights[1].0),
            (|w| &mut w.gpu_top_accesses, &self.weights[1].0),
            (|w| &mut w.gpu_wide_tiles, &self.weights[1].0),
            (|w| &mut w.gpu_subtrees, &self.weights[1].0),
            (|w| &mut w.gpu_rest_iterations, &self.weights[1].0),
            (|w| &mut w.gpu_rest_accesses, &self.weights[1].0),
            (|w| &mut w.gpu_pair_leaves, &self.weights[1].0),
            (|w| &mut w.gpu_pair_rounds, &self.weights[1].0),
            (|w| &mut w.gpu_pair_accesses, &self.weights[1].0),
            (|w| &mut w.gpu_route_walkers, &self.weights[3].0),
            (|w| &mut w.gpu_count_groups, &self.weights[4].0),
            (|w| &mut w.gpu_count_loads, &self.weights[4].0),
            (|w| &mut w.gpu_batches, &even),
            (|w| &mut w.gpu_dependent_steps, &even),
            (|w| &mut w.table_key_tests, &self.weights[2].0),
            (|w| &mut w.table_chunks, &self.weights[2].0),
            (|w| &mut w.route_atomics, &self.weights[3].0),
            (|w| &mut w.gpu_bytes_up, &self.uploads),
            (|w| &mut w.gpu_resident_bytes, &self.uploads),
            (|w| &mut w.gpu_submits, &even),
            (|w| &mut w.gpu_waits, &even),
            (|w| &mut w.gpu_steps, &even),
            (|w| &mut w.gpu_wide_steps, &even),
            (|w| &mut w.gpu_bytes_down, &even),
        ];
        let mut whole = *batch;
        for (field, weights) in counters {
            let total = std::mem::take(field(&mut whole));
            for (part, x) in parts.iter_mut().zip(apportion(total, weights)) {
                *field(part) = x;
            }
        }
        // Anything not split stays with the first join.
        if let Some(first) = parts.first_mut() {
            first.add(&whole);
        }
        parts
    }

    /// Adds join `i`'s share of each pass's seconds to `work`.
    fn add_seconds(&self, i: usize, passes: &[f64; 6], work: &mut Work) {
        let mut mine = [0.0; 6];
        for (p, (w, total)) in self.weights.iter().enumerate() {
            let share = if *total > 0.0 {
                w[i] / total
            } else {
                1.0 / w.len() as f64
            };
            mine[p] = passes[p] * share;
        }
        work.gpu_half_join_seconds += mine[0];
        work.gpu_sieve_seconds += mine[1];
        work.gpu_tables_seconds += mine[2];
        work.gpu_routing_seconds += mine[3];
        work.count_kernel_seconds += mine[4];
        work.gpu_ties_seconds += mine[5];
    }
}

/// `total` in whole parts in proportion to `weights` (evenly where they sum to 0), adding
/// up to it: part k ends where the running share of the weights up to k, rounded down,
/// does (monotone, so no part is negative), and the last at the total.
fn apportion(total: u64, weights: &[f64]) -> Vec<u64> {
    let sum: f64 = weights.iter().sum();
    let even = sum.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater);
    let of = if even { weights.len() as f64 } else { sum };
    let mut run = 0.0;
    let mut start = 0;
    let mut parts = Vec::with_capacity(weights.len());
    for (k, &w) in weights.iter().enumerate() {
        run += if even { 1.0 } else { w };
        let end = if k + 1 == weights.len() {
            total
        } else {
            ((total as f64 * run / of).floor() as u64).clamp(start, total)
        };
        parts.push(end - start);
        start = end;
    }
    parts
}

/// Each pass's seconds from its two resolved timestamps (`period` nanoseconds a tick); a
/// pass whose counter went backwards (a reset) counts nothing.
fn pass_seconds(stamps: &[u32], period: f32) -> [f64; 6] {
    let mut out = [0.0; 6];
    for (p, o) in out.iter_mut().enumerate().take(PASSES.len()) {
        let t = |k: usize| u64::from(stamps[2 * k]) | u64::from(stamps[2 * k + 1]) << 32;
        let (begin, end) = (t(2 * p), t(2 * p + 1));
        *o = end.saturating_sub(begin) as f64 * f64::from(period) * 1e-9;
    }
    out
}

/// Adds `request`'s jobs, sides, description and carried words to `packed`.
fn add(packed: &mut Packed, request: &Request) {
    let join = packed.joins.len() as u32;
    let job0 = packed.jobs.len() as u32;
    let side0 = packed.sides.len() as u32;
    let word0 = packed.words.len() as u32;
    let item0 = packed.items;
    packed.sides.extend(
        request
            .sides
            .iter()
            .map(|s| super::layout::Side { join, ..*s }),
    );
    let carried = super::layout::CARRIED;
    let place = |at: u32| {
        if at & carried != 0 {
            carried | ((at & !carried) + word0)
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
    packed.words.extend_from_slice(&request.words);
    let mut desc = request.desc;
    let r = request.roles;
    desc.jobs = [r[0] + job0, r[1] + job0, r[2] + job0, r[3] + job0];
    desc.jobs_end = r[4] + job0;
    packed.joins.push(desc);
}

/// A batch's room, in the units of [`Capacity`], as joins take it.
struct Room {
    left: [u64; 9],
}

/// What one join is expected to take of each of [`Room`]'s arenas: joins, jobs, sides,
/// items, carried words, stored keys, query keys, blocks, routes.
type Need = [u64; 9];

impl Room {
    fn new(c: &Capacity) -> Self {
        let n = |x: u32| u64::from(x);
        Room {
            left: [
                n(c.joins),
                n(c.jobs),
                n(c.sides),
                n(c.items),
                n(c.words),
                n(c.stored),
                n(c.queries),
                n(c.blocks),
                n(c.routes),
            ],
        }
    }

    /// Whether the exact parts of `need` (joins, jobs, sides, items, words: what the host
    /// uploads) fit an empty batch.
    fn holds(&self, need: &Need) -> bool {
        need[..5].iter().zip(&self.left).all(|(n, l)| n <= l)
    }

    /// Takes `need`, as far as there is room.
    fn force(&mut self, need: &Need) {
        self.left
            .iter_mut()
            .zip(need)
            .for_each(|(l, n)| *l = l.saturating_sub(*n));
    }

    /// Takes `need` if it fits (as estimated); says whether it did.
    fn take(&mut self, need: &Need) -> bool {
        if need.iter().zip(&self.left).any(|(n, l)| n > l) {
            return false;
        }
        self.left.iter_mut().zip(need).for_each(|(l, n)| *l -= n);
        true
    }
}

/// What the batches so far say of keys, blocks and routes against what the host knows of
/// a join before it runs (its pairs), kept as ratios, with a margin.
struct Sizes {
    /// Keys per pair tested, blocks per stored key, routes per (query × block).
    keys_per_pair: f64,
    blocks_per_key: f64,
    routes_per_pair: f64,
    /// Whether a batch has said anything yet.
    learned: bool,
}

impl Default for Sizes {
    /// Before any batch: a key per pair (the bound), and for the routes a generous share of
    /// (query, block) pairs, not the bound (one route for each would keep the first batch to
    /// one join; the sieve routes well under 1% of them, and a join that overflows is redone
    /// alone, never miscounted).
    fn default() -> Self {
        Sizes {
            keys_per_pair: 1.0,
            blocks_per_key: 3.0 / 512.0,
            routes_per_pair: 0.02,
            learned: false,
        }
    }
}

/// The margin on every estimate: a join a little larger than the batches so far still
/// fits, and one that does not is redone in the next batch.
const MARGIN: f64 = 1.5;

impl Sizes {
    fn need(&self, r: &Request) -> Need {
        let keys = |role| r.pairs(role) as f64 * self.keys_per_pair;
        let (west, east) = (keys(ROLE_WEST), keys(ROLE_EAST));
        let (mut stored, queries) = (west.max(east), west.min(east));
        if r.desc.flags & JOIN_PORTION != 0 {
            stored = stored.min(f64::from(r.desc.cap));
        }
        let blocks = stored * self.blocks_per_key;
        let routes = queries * blocks * self.routes_per_pair;
        // The margin covers learned ratios; the key bound needs none.
        let margin = if self.learned { MARGIN } else { 1.0 };
        let c = |x: f64| (x * margin).ceil() as u64;
        [
            1,
            r.jobs.len() as u64 + 1,
            r.sides.len() as u64,
            r.items(),
            r.words.len() as u64,
            c(stored),
            c(queries),
            c(blocks),
            c(routes),
        ]
    }

    /// Moves the ratios towards what `request`'s row shows (never below a tenth of the
    /// bound, so that one odd join cannot make the next batch overflow wholesale).
    fn learn(&mut self, request: &Request, row: &[u32]) {
        let status = row[RESULT_STATUS as usize];
        // A portion builds all its keys and stores some: its ratio is not a join's.
        if status & FILL_ERRORS != 0 || request.desc.flags & JOIN_PORTION != 0 {
            return;
        }
        let sizes = &row[RESULT_SIZES as usize..][..2];
        let pairs = (request.pairs(ROLE_WEST) + request.pairs(ROLE_EAST)) as f64;
        let keys = f64::from(sizes[0]) + f64::from(sizes[1]);
        let stored = f64::from(sizes[0].max(sizes[1]));
        let queries = f64::from(sizes[0].min(sizes[1]));
        let blocks = f64::from(row[RESULT_BLOCKS as usize]);
        let routes = f64::from(row[RESULT_ROUTES as usize]);
        let first = !self.learned;
        self.learned = true;
        let ease = |old: f64, new: f64| {
            if first {
                new
            } else {
                0.9 * old + 0.1 * new.max(old * 0.5)
            }
        };
        if pairs > 0.0 {
            self.keys_per_pair = ease(self.keys_per_pair, keys / pairs).clamp(0.01, 1.0);
        }
        if stored > 0.0 {
            self.blocks_per_key = ease(self.blocks_per_key, blocks / stored);
        }
        if queries * blocks > 0.0 {
            self.routes_per_pair = ease(self.routes_per_pair, routes / (queries * blocks)).min(1.0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A cut join's parts add up; one part refused makes the whole refused, never a count
    /// without that part.
    #[test]
    fn a_whole_answers_its_parts_sum_or_refusal() {
        let whole = |outcomes: &[Option<u64>]| {
            let (tx, rx) = mpsc::channel();
            let mut w = Whole {
                count: Some(0),
                work: Work::default(),
                left: outcomes.len(),
                reply: Reply::Worker(tx),
                failed: false,
            };
            let mut answer = None;
            for &count in outcomes {
                if let Some((reply, outcome)) = w.take(Ok((count, Work::default()))) {
                    reply.send(outcome);
                    answer = Some(rx.recv().expect("an answer").expect("no failure").0);
                }
            }
            answer.expect("answered once every part is in")
        };
        assert_eq!(whole(&[Some(3), Some(4)]), Some(7));
        assert_eq!(whole(&[Some(3), None, Some(4)]), None);
        assert_eq!(whole(&[None, Some(4)]), None);
    }

    /// A batch's counter split among its joins adds up to it exactly, in proportion,
    /// whatever the weights (all 0: evenly; one join: all of it).
    #[test]
    fn a_counter_apportioned_adds_up_to_it_in_proportion() {
        assert_eq!(apportion(10, &[1.0, 1.0, 3.0]), vec![2, 2, 6]);
        assert_eq!(apportion(1, &[0.0, 0.0, 0.0]), vec![0, 0, 1]);
        assert_eq!(apportion(7, &[0.0; 7]), vec![1; 7]);
        assert_eq!(apportion(5, &[2.5]), vec![5]);
        assert_eq!(apportion(0, &[1.0, 2.0]), vec![0, 0]);
        let mut rng = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..1000 {
            rng = rng
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let n = 1 + (rng >> 60) as usize;
            let total = rng >> (rng & 63);
            let weights: Vec<f64> = (0..n).map(|k| ((rng >> (k * 4)) & 15) as f64).collect();
            let parts = apportion(total, &weights);
            assert_eq!(parts.iter().sum::<u64>(), total, "{total} by {weights:?}");
            let sum: f64 = weights.iter().sum();
            for (p, w) in parts.iter().zip(&weights) {
                let want = if sum > 0.0 {
                    total as f64 * w / sum
                } else {
                    total as f64 / n as f64
                };
                // Within one of its share; past 2^53, within a double's rounding of it.
                let slack = 1.0 + total as f64 * 1e-15;
                assert!(
                    (*p as f64 - want).abs() <= slack,
                    "{parts:?} by {weights:?}"
                );
            }
        }
    }
}
