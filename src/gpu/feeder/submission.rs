//! What passes between the workers and the feeder thread: a submission, the ticket its
//! worker waits on, and the whole a cut join's parts answer to.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use crate::gpu::request::Request;
use crate::work::Work;

/// What became of one join: its weighted count (`None`: refused, its stored side passes
/// one fill), and what it did.
pub(crate) type Outcome = Result<(Option<u64>, Work), String>;

/// A join handed to the feeder, and where its outcome goes.
pub(super) struct Submission {
    pub(super) request: Request,
    pub(super) reply: Reply,
    /// Its place in the order of submissions (parts of a cut join share their whole's).
    pub(super) seq: u64,
    /// Whether it runs alone in a batch: a software driver stopped a block count workgroup
    /// that met its routes beside other joins'.
    pub(super) alone: bool,
    /// Whether it is a part of a join whose half join ran already (cut after a try): its
    /// pairs are tested again ([`Work::gpu_part_pairs`]).
    pub(super) again: bool,
}

/// What a join given up because the run is stopping answers.
pub(crate) const STOPPED: &str = "the run is stopping: the GPU's joins were given up";

/// How often a worker waiting for a join looks whether the run is stopping: the feeder may
/// be inside a batch (on a software driver, a submission runs it) when the stop comes.
const STOP_POLL: Duration = Duration::from_millis(20);

/// A submitted join's outcome to come.
#[derive(Debug)]
pub(crate) struct Ticket {
    rx: Receiver<Outcome>,
    seq: u64,
    flush: Arc<AtomicU64>,
    stopped: Arc<AtomicBool>,
}

impl Ticket {
    /// The ticket of submission number `seq`, whose outcome comes through `rx`; `flush` is
    /// one past the last submission a worker waits for, and `stopped` says that the feeder
    /// gave up every join.
    pub(super) fn new(
        rx: Receiver<Outcome>,
        seq: u64,
        flush: Arc<AtomicU64>,
        stopped: Arc<AtomicBool>,
    ) -> Self {
        Ticket {
            rx,
            seq,
            flush,
            stopped,
        }
    }

    /// Waits for the outcome, or for the feeder to stop ([`STOPPED`]). A worker that waits
    /// has handed over all it will for now, so the feeder is told to launch its joins rather
    /// than wait for a fuller batch.
    pub(crate) fn wait(self) -> Outcome {
        if let Ok(outcome) = self.rx.try_recv() {
            return outcome;
        }
        self.flush.fetch_max(self.seq + 1, Ordering::Relaxed);
        loop {
            match self.rx.recv_timeout(STOP_POLL) {
                Ok(outcome) => return outcome,
                Err(RecvTimeoutError::Timeout) if self.stopped.load(Ordering::Acquire) => {
                    return Err(STOPPED.to_string())
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => {
                    return Err("the GPU feeder stopped before answering".to_string())
                }
            }
        }
    }
}

/// Where an outcome goes: a worker, or the join a cut join is a part of.
#[derive(Clone)]
pub(super) enum Reply {
    Worker(mpsc::Sender<Outcome>),
    Part(Arc<Mutex<Whole>>),
}

/// A join cut into parts: their counts and work so far, and how many are out.
pub(super) struct Whole {
    /// The parts' sum so far; `None` once a part was refused (the whole then is, rather
    /// than claim a count without that part).
    count: Option<u64>,
    work: Work,
    left: usize,
    reply: Reply,
    failed: bool,
    /// Whether its join ran before it was cut: its parts then add up to what a batch
    /// holding it whole would need of blocks and routes.
    tried: bool,
}

impl Reply {
    /// Whether nobody waits for this outcome any more: it is a part of a whole (or of a
    /// part of one) that failed already, so running it would be work thrown away.
    pub(super) fn is_abandoned(&self) -> bool {
        match self {
            Reply::Worker(_) => false,
            Reply::Part(whole) => {
                let (failed, up) = {
                    let whole = whole.lock().unwrap_or_else(PoisonError::into_inner);
                    (whole.failed, whole.reply.clone())
                };
                failed || up.is_abandoned()
            }
        }
    }

    /// Sends `outcome`; a part's goes to its whole, which answers once every part has.
    pub(super) fn send(&self, outcome: Outcome) {
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
    /// The whole of `parts` parts that answers `reply`, having done `work` so far.
    pub(super) fn new(parts: usize, work: Work, reply: Reply) -> Self {
        Whole {
            count: Some(0),
            work,
            left: parts,
            reply,
            failed: false,
            tried: false,
        }
    }

    /// This whole, marked as a join that ran before it was cut where `tried`.
    pub(super) fn tried(self, tried: bool) -> Self {
        Whole { tried, ..self }
    }

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
        if self.left > 0 {
            return None;
        }
        if self.tried {
            let w = &mut self.work;
            w.gpu_cut_blocks_peak = w.gpu_cut_blocks_peak.max(w.blocks_built);
            w.gpu_cut_routes_peak = w.gpu_cut_routes_peak.max(w.visited_pairs);
        }
        Some((self.reply.clone(), Ok((self.count, self.work))))
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
            let mut w = Whole::new(outcomes.len(), Work::default(), Reply::Worker(tx));
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

    /// Once a whole failed, its parts (and their own parts) are abandoned: nobody waits for
    /// them, so the feeder runs none of them.
    #[test]
    fn the_parts_of_a_failed_whole_are_abandoned() {
        let (tx, _rx) = mpsc::channel();
        let whole = Arc::new(Mutex::new(Whole::new(
            2,
            Work::default(),
            Reply::Worker(tx),
        )));
        let part = Reply::Part(Arc::clone(&whole));
        let inner = Arc::new(Mutex::new(Whole::new(2, Work::default(), part.clone())));
        let part_of_part = Reply::Part(inner);
        assert!(!part.is_abandoned() && !part_of_part.is_abandoned());
        part.send(Err("a part failed".into()));
        assert!(part.is_abandoned() && part_of_part.is_abandoned());
    }
}
