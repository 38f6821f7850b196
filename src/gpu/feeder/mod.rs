//! The feeder: one thread that owns the GPU's queue. Worker threads hand it joins through a
//! bounded channel and go on; it packs the joins waiting into a batch, records the whole
//! batch into one command buffer, and keeps up to three batches in flight, so that the GPU
//! has the next batch while the host reads the last one's results (one wait per batch, for
//! the oldest). A join that found no room in its batch is redone in the next; one too large
//! for any batch is cut into joins whose counts add up to it. A feeder stopped (a run that
//! is stopping, or its plan dropped) launches nothing more: every join not yet answered is
//! given up, and the workers waiting for them hear so at once.
//!
//! - [`submission`]: what a worker hands over, the ticket it waits on, and the whole a cut
//!   join's parts answer to;
//! - [`run`]: the thread's loop (launch, land, settle);
//! - [`cut`]: how a join too large for a batch is cut;
//! - [`room`]: a batch's room and what a join is expected to take of it;
//! - [`shares`]: what each join did, and its share of its batch's counters;
//! - [`levels`]: how many top levels of a batch's trees are built one by one, and which
//!   split their nodes across workgroups.

mod cut;
mod levels;
mod room;
mod run;
mod settle;
mod shares;
mod submission;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, SyncSender};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;

use super::device::Device;
use super::request::Request;
use super::resident::Resident;
use super::slot::Capacity;
use crate::work::Work;
use run::Loop;
use submission::{Reply, Submission};

pub(crate) use cut::CUT_SHARE;
pub(crate) use room::MARGIN;
pub(crate) use run::{FEED_DEPTH, SLOTS};
pub(crate) use submission::{Ticket, STOPPED};

/// The feeder's end of the channel and its thread.
pub(crate) struct Feeder {
    tx: Mutex<Option<SyncSender<Submission>>>,
    thread: Mutex<Option<JoinHandle<()>>>,
    /// What every batch so far did, all joins together.
    totals: Arc<Mutex<Work>>,
    /// Submissions so far, and one past the last a worker waits for.
    next: AtomicU64,
    flush: Arc<AtomicU64>,
    /// Whether the feeder gave up every join ([`Feeder::stop`]).
    stopped: Arc<AtomicBool>,
}

impl Feeder {
    /// Starts the feeder of `dev`, with batch slots of capacity `cap` reading resident words
    /// from `resident` (and uploading those placed there since the last batch).
    pub(crate) fn start(dev: Arc<Device>, cap: Capacity, resident: Arc<Resident>) -> Self {
        let (tx, rx) = mpsc::sync_channel(4 * cap.joins as usize);
        let totals = Arc::new(Mutex::new(Work::default()));
        let flush = Arc::new(AtomicU64::new(0));
        let stopped = Arc::new(AtomicBool::new(false));
        let state = Loop::new(
            dev,
            (cap, resident),
            rx,
            Arc::clone(&totals),
            (Arc::clone(&flush), Arc::clone(&stopped)),
        );
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
            stopped,
        }
    }

    /// Gives up every join not yet answered, and every later one: the feeder launches no
    /// more batches, and each wait for a join returns [`STOPPED`] at once.
    pub(crate) fn stop(&self) {
        self.stopped.store(true, Ordering::Release);
        // The channel closes, so a feeder waiting for joins wakes up.
        self.tx
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
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
                again: false,
            })
            .map_err(|_| "the GPU feeder has stopped".to_string())?;
        let (flush, stopped) = (Arc::clone(&self.flush), Arc::clone(&self.stopped));
        Ok(Ticket::new(rx, seq, flush, stopped))
    }
}

impl Drop for Feeder {
    /// Stops the feeder and waits for its thread, which ends without running the joins
    /// still queued (nobody waits for them: the workers' tickets go with the plan).
    fn drop(&mut self) {
        self.stop();
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
