//! The CPU engine's joins on the GPU: each join becomes an owned [`Request`] and goes to
//! the [`Feeder`], which runs it in a batch with the other threads' joins.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use super::device::Device;
use super::feeder::{Feeder, Ticket, STOPPED};
use super::layout::BLOCK_KEYS;
use super::memory;
use super::request::Request;
use super::resident::Resident;
use super::slot::{binding, Capacity, Sizes};
use crate::engine::mitm::join::{Join, Joiner, Keys, Pending};
use crate::engine::mitm::simd::Level;
use crate::error::Error;
use crate::work::Work;

/// Bytes of GPU memory one batch slot takes on a GPU of its own whose memory its driver does
/// not state (else [`memory::sizes_for`]), on an integrated one, and on a software driver (which runs on the CPU, in the machine's memory, and is only ever
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
    /// Whether every join is given up ([`Joiner::stop`]); a join on the host looks too.
    stopped: Arc<AtomicBool>,
}

impl std::fmt::Debug for GpuJoiner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "GpuJoiner({})", self.device.adapter)
    }
}

/// The bytes of a batch slot and of the resident words `dev` gets by default: a GPU of its
/// own by its memory ([`memory::sizes_for`]) where its driver says how much it has, else
/// by the kind of adapter ([`SLOT_BYTES`], [`RESIDENT_BYTES`]).
fn default_sizes(dev: &Device) -> (u64, u64) {
    let kind = if dev.adapter.software {
        2
    } else if dev.integrated {
        1
    } else if let Some(bytes) = dev.adapter.memory {
        return memory::sizes_for(bytes);
    } else {
        0
    };
    (SLOT_BYTES[kind], RESIDENT_BYTES[kind])
}

/// The bytes of one batch slot `NQUEENS_GPU_SLOT_MIB` asks for, if set (an empty value is
/// unset, as an empty `NQUEENS_ISA` is).
///
/// # Errors
/// A value that is not a whole number of MiB from 16 to 65,536.
pub(crate) fn slot_bytes() -> Result<Option<u64>, Error> {
    slot_bytes_of(std::env::var_os(crate::env::GPU_SLOT_VAR).as_deref())
}

/// [`slot_bytes`] of the variable's value `raw` (`None`: unset).
fn slot_bytes_of(raw: Option<&std::ffi::OsStr>) -> Result<Option<u64>, Error> {
    let Some(raw) = raw else {
        return Ok(None);
    };
    let text = raw.to_string_lossy();
    if text.trim().is_empty() {
        return Ok(None);
    }
    match text.trim().parse::<u64>() {
        Ok(mib @ 16..=65_536) => Ok(Some(mib << 20)),
        _ => Err(Error::NoGpu(format!(
            "{}={text:?}: give a batch slot's GPU memory as a whole number of MiB from 16 \
             to 65536",
            crate::env::GPU_SLOT_VAR
        ))),
    }
}

/// The capacity of the batch slots of `bytes` bytes `NQUEENS_GPU_SLOT_MIB` asks for on `dev`,
/// or why `dev` takes none so large: past the budget at which every buffer is as large as
/// one binding holds, more bytes would go unused.
fn asked_capacity(dev: &Device, bytes: u64) -> Result<Capacity, Error> {
    let bind = binding(dev);
    let most = Capacity::most_budget(bind) >> 20;
    let cap = Capacity::within(bind, bytes);
    if bytes >> 20 <= most && Sizes::of(&cap).largest() <= bind {
        return Ok(cap);
    }
    Err(Error::NoGpu(format!(
        "{}={}: {} takes batch slots of at most {most} MiB (past that every buffer is as \
         large as one binding holds, {} MiB); give at most {most}",
        crate::env::GPU_SLOT_VAR,
        bytes >> 20,
        dev.adapter.name,
        bind >> 20
    )))
}

/// Why `dev` could not make its batch slots (`error`, wgpu's, on one line): for slots of
/// `asked` bytes from `NQUEENS_GPU_SLOT_MIB`, that value is too large for it.
fn slots_failed(dev: &Device, asked: Option<u64>, error: &wgpu::Error) -> Error {
    let why = error
        .to_string()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    match asked {
        Some(bytes) => Error::NoGpu(format!(
            "{}={}: {} could not make its batch slots of that size ({why}); give a smaller \
             value",
            crate::env::GPU_SLOT_VAR,
            bytes >> 20,
            dev.adapter.name
        )),
        None => Error::Gpu(format!(
            "{} could not make its batch slots ({why})",
            dev.adapter.name
        )),
    }
}

impl GpuJoiner {
    /// A joiner on `device` whose batch slots take `slot_bytes` each (default: by the GPU's
    /// memory, else by the kind of adapter).
    ///
    /// # Errors
    /// [`Error::NoGpu`] where the slots asked for are more than `device` takes or can make;
    /// [`Error::Gpu`] where it cannot make the default ones, even of 256 MiB (out of memory).
    pub(crate) fn new(
        device: Arc<Device>,
        slot_bytes: Option<u64>,
        fail_after: Option<u64>,
    ) -> Result<Self, Error> {
        // Slots asked for are a GPU's: its fills and resident words too, whatever the driver,
        // so that a sample on a software one stores and carries its sides as that GPU would.
        let cpu_fill = device.adapter.software && slot_bytes.is_none();
        let Some(asked) = slot_bytes else {
            return Self::by_memory(device, fail_after, cpu_fill);
        };
        let cap = asked_capacity(&device, asked)?;
        Self::made(&device, cap, RESIDENT_BYTES[0], fail_after, cpu_fill)
            .map_err(|(e, _)| slots_failed(&device, slot_bytes, &e))
    }

    /// A joiner with the default slots of `device` ([`default_sizes`]), halved while the
    /// GPU runs out of memory making them (other work on it may hold some), down to 256 MiB.
    fn by_memory(
        device: Arc<Device>,
        fail_after: Option<u64>,
        cpu_fill: bool,
    ) -> Result<Self, Error> {
        memory::halving(default_sizes(&device), |slot, resident| {
            let cap = Capacity::of_budget(&device, slot);
            Self::made(&device, cap, resident, fail_after, cpu_fill)
        })
        .map_err(|e| slots_failed(&device, None, &e))
    }

    /// A joiner on `device` with slots of capacity `cap` and `resident` bytes of resident
    /// words, or wgpu's error making them and whether it was for want of memory.
    fn made(
        device: &Arc<Device>,
        cap: Capacity,
        resident: u64,
        fail_after: Option<u64>,
        cpu_fill: bool,
    ) -> Result<Self, (wgpu::Error, bool)> {
        let memory = device
            .device
            .push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let valid = device
            .device
            .push_error_scope(wgpu::ErrorFilter::Validation);
        let joiner = Self::with_fills(Arc::clone(device), cap, resident / 8, fail_after, cpu_fill);
        if let Some(e) = pollster::block_on(valid.pop()) {
            return Err((e, false));
        }
        match pollster::block_on(memory.pop()) {
            None => Ok(joiner),
            Some(e) => Err((e, true)),
        }
    }

    /// A joiner whose batch slots have capacity `cap` and whose resident words hold
    /// `resident` words (tests make them small, to run the overflow paths).
    #[cfg(test)]
    pub(crate) fn with_capacity(
        device: Arc<Device>,
        cap: Capacity,
        resident: u64,
        fail_after: Option<u64>,
    ) -> Self {
        let cpu_fill = device.adapter.software;
        Self::with_fills(device, cap, resident, fail_after, cpu_fill)
    }

    /// [`GpuJoiner::with_capacity`], its fills kept to the CPU's where `cpu_fill`.
    fn with_fills(
        device: Arc<Device>,
        cap: Capacity,
        resident: u64,
        fail_after: Option<u64>,
        cpu_fill: bool,
    ) -> Self {
        let resident = Arc::new(Resident::new(&device, resident));
        let feeder = Feeder::start(Arc::clone(&device), cap, Arc::clone(&resident));
        // A fill the size of the cap must fit an empty batch's keys and tree slots. Its
        // blocks or routes need not: a join whose blocks pass the batch's room is cut into
        // runs of jobs. A side past the cap is stored a portion at a time. The GPU's own
        // cap, not the CPU's fill (2^20 keys): a larger fill prunes more (the task at 0.3 of
        // N = 26's plan stored in one fill of 5.3·10^6 keys visited 0.52 times the CPU's
        // blocks).
        let fill_cap = fill_cap(&cap, cpu_fill);
        GpuJoiner {
            device,
            feeder,
            resident,
            fill_cap,
            most_words: cap.words as usize,
            host_joins: AtomicU64::new(0),
            fail_after: fail_after.map(AtomicU64::new),
            stopped: Arc::default(),
        }
    }

    /// `join` on this CPU, counted as such: for a join that carries more quarter words than
    /// a batch holds, which no batch could take (cutting a join keeps every word it reads).
    /// An H100's batch holds 1.0·10^8 words (a 3 GiB slot 2.4·10^7); lavapipe's, 2.0·10^6,
    /// fewer than some tasks of N = 27 carry. Given up, between two of its portions, once
    /// the joiner is stopped.
    fn join_on_host(&self, join: Join<'_, '_>, work: &mut Work) -> Result<Option<u64>, String> {
        self.host_joins.fetch_add(1, Ordering::Relaxed);
        let mut keys = Keys::default();
        keys.stop = Some(Arc::clone(&self.stopped));
        let count = keys.join_here(join, Level::detect());
        keys.work.host_joins += 1;
        work.add(&keys.work);
        if self.stopped.load(Ordering::Acquire) {
            return Err(STOPPED.to_string());
        }
        Ok(count)
    }

    /// Keeps carried sets of `parts` words and more shared by several requests, and of `any`
    /// and more whatever holds them ([`Resident::keep`]; tests: small ones).
    #[cfg(test)]
    pub(crate) fn keep_words_from(&self, parts: usize, any: usize) {
        self.resident.keep_from(parts, any);
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

    /// The request of `join`, unless the device is lost or the joiner stopped.
    fn request(&self, join: &Join<'_, '_>) -> Result<Request, String> {
        if self.stopped.load(Ordering::Acquire) {
            return Err(STOPPED.to_string());
        }
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

/// The most stored keys of one fill in a batch of capacity `cap`: what an empty batch's keys
/// and tree slots hold, or (`cpu_fill`) the CPU's fill.
pub(crate) fn fill_cap(cap: &Capacity, cpu_fill: bool) -> u32 {
    let mut keys = cap.stored.min(cap.leaves / 5 * BLOCK_KEYS);
    if cpu_fill {
        keys = keys.min(SOFTWARE_FILL_KEYS);
    }
    keys.max(512)
}

/// The most keys of a fill on a software driver whose slots are its own default: the CPU's
/// fill, so that its counters show the CPU's portions. (Past it, lavapipe once counted a
/// piece of N = 28 short: its side of 1.6·10^7 keys passed lavapipe's blocks a batch and
/// was split on its roots' bits, a split now off; docs/gpu.md.)
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
            let count = self.join_on_host(join, &mut work)?;
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
            return count;
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

    fn stop(&self) {
        self.stopped.store(true, Ordering::Release);
        self.feeder.stop();
    }

    fn describe(&self) -> String {
        format!("GPU {}", self.device.adapter.name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsStr;

    /// An empty or blank `NQUEENS_GPU_SLOT_MIB` is unset, as an empty `NQUEENS_ISA` is; a
    /// value outside 16..=65,536 MiB or not a number is refused.
    #[test]
    fn an_empty_slot_size_is_unset() {
        let of = |raw: &str| slot_bytes_of(Some(OsStr::new(raw)));
        assert_eq!(slot_bytes_of(None).unwrap(), None);
        assert_eq!(of("").unwrap(), None);
        assert_eq!(of("  ").unwrap(), None);
        assert_eq!(of(" 16 ").unwrap(), Some(16 << 20));
        assert_eq!(of("65536").unwrap(), Some(65_536 << 20));
        for bad in ["15", "65537", "1.5", "abc", "-16"] {
            assert!(matches!(of(bad), Err(Error::NoGpu(_))), "{bad}");
        }
    }

    /// A GPU's 3 GiB slot in a software driver's 128 MiB bindings still stores sides of
    /// millions of keys in one fill, as that GPU would, where asked; by default the CPU's.
    #[test]
    fn an_asked_slot_stores_a_gpus_fills_on_a_software_driver() {
        let cap = Capacity::of(3 << 30, 128 << 20);
        assert_eq!(fill_cap(&cap, true), SOFTWARE_FILL_KEYS);
        let gpu = fill_cap(&cap, false);
        assert!(gpu >= 8 * SOFTWARE_FILL_KEYS, "{gpu} keys");
        assert!(gpu <= fill_cap(&Capacity::of(3 << 30, u64::from(u32::MAX)), false));
    }
}
