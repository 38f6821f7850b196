//! The CPU engine's joins on the GPU: each join becomes an owned [`Request`] and goes to
//! the [`Feeder`], which runs it in a batch with the other threads' joins.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use super::device::Device;
use super::feeder::{Feeder, Ticket};
use super::layout::BLOCK_KEYS;
use super::request::Request;
use super::resident::Resident;
use super::slot::Capacity;
use crate::engine::mitm::join::{Join, Joiner, Keys, Pending};
use crate::engine::mitm::simd::Level;
use crate::work::Work;

/// Bytes of GPU memory one batch slot takes on a GPU of its own, on an integrated one, and
/// on a software driver (which runs on the CPU, in the machine's memory, and is only ever
/// used where there is no GPU: small enough for a CI machine).
pub(crate) const SLOT_BYTES: [u64; 3] = [3 << 30, 1 << 30, 256 << 20];

/// Bytes of the resident quarter words, by the same kinds of adapter.
pub(crate) const RESIDENT_BYTES: [u64; 3] = [2 << 30, 512 << 20, 32 << 20];

/// The largest class weight the block count takes (count.wgsl: 32-bit sums per invocation).
pub(crate) const MAX_WEIGHT: u32 = 255;

/// Whether the block count can weigh a join's classes by `factors`: it sums each
/// invocation's weighted hits in 32 bits (count.wgsl), which holds for weights up to
/// [`MAX_WEIGHT`].
pub(crate) fn weights_fit(factors: [u64; 4]) -> Result<(), String> {
    match factors.iter().find(|&&f| f > u64::from(MAX_WEIGHT)) {
        Some(f) => Err(format!(
            "a class weight of {f} is more than the GPU count takes ({MAX_WEIGHT})"
        )),
        None => Ok(()),
    }
}

/// Joins on one GPU, for any number of worker threads.
pub(crate) struct GpuJoiner {
    device: Arc<Device>,
    feeder: Feeder,
    resident: Arc<Resident>,
    /// The most stored keys one fill may hold in a batch slot.
    fill_cap: u32,
    /// The most quarter words a join may carry: a batch's room for them.
    most_words: usize,
    /// Joins made on the CPU, for carrying more than `most_words`.
    host_joins: AtomicU64,
    /// Test hook: joins left before every join fails, as on a lost device.
    fail_after: Option<AtomicU64>,
}

impl std::fmt::Debug for GpuJoiner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "GpuJoiner({})", self.device.adapter)
    }
}

/// Which of [`SLOT_BYTES`] an adapter gets.
fn kind(dev: &Device) -> usize {
    if dev.adapter.software {
        2
    } else if dev.integrated {
        1
    } else {
        0
    }
}

/// The bytes of one batch slot `NQUEENS_GPU_SLOT_MIB` asks for, if set.
///
/// # Errors
/// A value that is not a whole number of MiB from 16 to 65,536.
pub(crate) fn slot_bytes() -> Result<Option<u64>, crate::Error> {
    let var = crate::env::GPU_SLOT_VAR;
    let Some(raw) = std::env::var_os(var) else {
        return Ok(None);
    };
    let text = raw.to_string_lossy();
    match text.trim().parse::<u64>() {
        Ok(mib @ 16..=65_536) => Ok(Some(mib << 20)),
        _ => Err(crate::Error::NoGpu(format!(
            "{var}={text:?}: give a batch slot's GPU memory as a whole number of MiB from 16 \
             to 65536"
        ))),
    }
}

impl GpuJoiner {
    /// A joiner on `device` whose batch slots take `slot_bytes` each (default: by the kind
    /// of adapter).
    pub(crate) fn new(
        device: Arc<Device>,
        slot_bytes: Option<u64>,
        fail_after: Option<u64>,
    ) -> Self {
        let kind = kind(&device);
        let cap = Capacity::of_budget(&device, slot_bytes.unwrap_or(SLOT_BYTES[kind]));
        Self::with_capacity(device, cap, RESIDENT_BYTES[kind] / 8, fail_after)
    }

    /// A joiner whose batch slots have capacity `cap` and whose resident words hold
    /// `resident` words (tests make them small, to run the overflow paths).
    pub(crate) fn with_capacity(
        device: Arc<Device>,
        cap: Capacity,
        resident: u64,
        fail_after: Option<u64>,
    ) -> Self {
        let resident = Arc::new(Resident::new(&device, resident));
        let feeder = Feeder::start(Arc::clone(&device), cap, Arc::clone(&resident));
        // A fill the size of the cap must fit an empty batch's keys and tree slots. Its
        // blocks or routes need not: a join whose blocks pass the batch's room is cut into
        // runs of jobs. A side past the cap is stored a portion at a time. The GPU's own
        // cap, not the CPU's fill (2^20 keys): a larger fill prunes more (the task at 0.3 of
        // N = 26's plan stored in one fill of 5.3·10^6 keys visited 0.52 times the CPU's
        // blocks).
        let mut fill_cap = cap.stored.min(cap.leaves / 5 * BLOCK_KEYS);
        if device.adapter.software {
            fill_cap = fill_cap.min(SOFTWARE_FILL_KEYS);
        }
        let fill_cap = fill_cap.max(512);
        GpuJoiner {
            device,
            feeder,
            resident,
            fill_cap,
            most_words: cap.words as usize,
            host_joins: AtomicU64::new(0),
            fail_after: fail_after.map(AtomicU64::new),
        }
    }

    /// `join` on this CPU, counted as such: for a join that carries more quarter words than
    /// a batch holds, which no batch could take (cutting a join keeps every word it reads).
    /// A GPU's batch holds 2.4·10^7 words; lavapipe's, 2.0·10^6, fewer than some tasks of
    /// N = 27 carry.
    fn join_on_host(&self, join: Join<'_, '_>, work: &mut Work) -> Option<u64> {
        self.host_joins.fetch_add(1, Ordering::Relaxed);
        let mut keys = Keys::default();
        let count = keys.join_here(join, Level::detect());
        keys.work.host_joins += 1;
        work.add(&keys.work);
        count
    }

    /// Whether `request` carries more quarter words than a batch holds.
    fn too_many_words(&self, request: &Request) -> bool {
        request.words.len() > self.most_words
    }

    /// Whether the test hook says this join fails.
    fn injected_failure(&self) -> bool {
        self.fail_after.as_ref().is_some_and(|left| {
            left.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1))
                .is_err()
        })
    }

    /// The request of `join`, unless the device is lost.
    fn request(&self, join: &Join<'_, '_>) -> Result<Request, String> {
        if let Some(lost) = self.device.lost() {
            return Err(lost);
        }
        if self.injected_failure() {
            return Err("the device was lost (injected by a test)".into());
        }
        weights_fit(join.factors)?;
        Ok(Request::new(join, self.fill_cap, &self.resident))
    }

    /// Hands `request` to the feeder.
    pub(crate) fn submit_request(&self, request: Request) -> Result<Ticket, String> {
        self.feeder.submit(request)
    }
}

/// Waits for a submitted join's outcome and adds what it did to `work`.
pub(crate) fn wait(ticket: Ticket, work: &mut Work) -> Result<Option<u64>, String> {
    let (count, did) = ticket.wait()?;
    work.add(&did);
    Ok(count)
}

/// The most keys of a fill on a software driver: the CPU's fill, so that its counters show
/// the CPU's portions. (Past it, lavapipe once counted a piece of N = 28 short: its side of
/// 1.6·10^7 keys passed lavapipe's blocks a batch and was split on its roots' bits, a split
/// now off; docs/gpu.md.)
const SOFTWARE_FILL_KEYS: u32 = 1 << 20;

/// Tasks a worker hands over before it waits for their counts: with every worker doing so,
/// a batch gathers hundreds of joins. A batch costs some 50 dependent steps whatever it
/// holds, so a count's batches are at most its tasks / 128; more would hold more of the
/// host's memory in requests (a few tens of KB each at N = 21) and coarsen progress.
pub(crate) const TASKS_IN_FLIGHT: usize = 128;

/// Quarter words a deferred join may carry: one that carries more is waited for at once,
/// so that a worker's joins in flight never hold more than a few of them.
const DEFER_WORDS: usize = 1 << 20;

/// A join in the feeder's hands, or answered already.
#[derive(Debug)]
enum InFeeder {
    Waiting(Ticket),
    Done(Option<u64>, Box<Work>),
}

impl Pending for InFeeder {
    fn wait(self: Box<Self>, work: &mut Work) -> Result<Option<u64>, String> {
        match *self {
            InFeeder::Waiting(ticket) => wait(ticket, work),
            InFeeder::Done(count, did) => {
                work.add(&did);
                Ok(count)
            }
        }
    }
}

impl Joiner for GpuJoiner {
    fn submit(&self, join: Join<'_, '_>) -> Result<Box<dyn Pending>, String> {
        let request = self.request(&join)?;
        if self.too_many_words(&request) {
            let mut work = Work::default();
            let count = self.join_on_host(join, &mut work);
            return Ok(Box::new(InFeeder::Done(count, Box::new(work))));
        }
        let large = request.words.len() > DEFER_WORDS;
        let rx = self.submit_request(request)?;
        if !large {
            return Ok(Box::new(InFeeder::Waiting(rx)));
        }
        let mut work = Work::default();
        let count = wait(rx, &mut work)?;
        Ok(Box::new(InFeeder::Done(count, Box::new(work))))
    }

    fn batch(&self) -> usize {
        TASKS_IN_FLIGHT
    }

    fn totals(&self) -> Option<Work> {
        let mut totals = self.feeder.totals();
        totals.host_joins = self.host_joins.load(Ordering::Relaxed);
        Some(totals)
    }

    fn join(&self, join: Join<'_, '_>, work: &mut Work) -> Result<Option<u64>, String> {
        let clock = std::time::Instant::now();
        let request = self.request(&join)?;
        if self.too_many_words(&request) {
            let count = self.join_on_host(join, work);
            work.match_seconds += clock.elapsed().as_secs_f64();
            return Ok(count);
        }
        let rx = self.submit_request(request)?;
        let count = wait(rx, work);
        work.match_seconds += clock.elapsed().as_secs_f64();
        let count = count?;
        if let Some(lost) = self.device.lost() {
            return Err(lost);
        }
        Ok(count)
    }

    fn describe(&self) -> String {
        format!("GPU {}", self.device.adapter.name)
    }
}
