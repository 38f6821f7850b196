//! The seam where a task's joins can leave this CPU: what a join hands over, and the trait
//! of whatever takes it.

use super::Shape;
use crate::engine::mitm::half::HalfSpec;
use crate::engine::mitm::limits::Limits;
use crate::work::Work;

/// A second place to join a task's halves: the GPU engine ([`crate::gpu`]). The engine's
/// task code (quarters, pieces, units) stays the same; only the joins move.
pub(crate) trait Joiner: Send + Sync + std::fmt::Debug {
    /// The weighted count of the pairs of `join`, as [`Keys::join`](super::Keys::join)
    /// counts it, or `None` where `join.refuse` and its stored side overflows one fill; what
    /// it did is added to `work`. An error means the count cannot be had (the device was
    /// lost, say).
    fn join(&self, join: Join<'_, '_>, work: &mut Work) -> Result<Option<u64>, String>;
    /// Hands `join` over without waiting for its count, where the joiner can (a device that
    /// runs many joins at once); the default joins at once.
    fn submit(&self, join: Join<'_, '_>) -> Result<Box<dyn Pending>, String> {
        let mut work = Work::default();
        let count = self.join(join, &mut work)?;
        Ok(Box::new(Ready(count, work)))
    }
    /// How many tasks a worker should hand over before it waits for their counts
    /// ([`crate::Plan::batch`]).
    fn batch(&self) -> usize {
        1
    }
    /// What the device did for every join so far, all together (`None`: nothing kept).
    fn totals(&self) -> Option<Work> {
        None
    }
    /// Gives up every join handed over and not yet answered, and every later one, as soon
    /// as it can: their waits return an error (the run is stopping, and the tasks they
    /// belong to are not counted). The default, a joiner that joins at once, has nothing
    /// to give up.
    fn stop(&self) {}
    /// Where the joins run, for a plan's description (`GPU NAME`).
    fn describe(&self) -> String;
}

/// A join handed over by [`Joiner::submit`] whose count may not be known yet.
pub(crate) trait Pending: Send + std::fmt::Debug {
    /// The join's count, as [`Joiner::join`] returns it, once it is known; adds what the
    /// join did to `work`.
    fn wait(self: Box<Self>, work: &mut Work) -> Result<Option<u64>, String>;
}

/// A join answered already.
#[derive(Debug)]
struct Ready(Option<u64>, Work);

impl Pending for Ready {
    fn wait(self: Box<Self>, work: &mut Work) -> Result<Option<u64>, String> {
        work.add(&self.1);
        Ok(self.0)
    }
}

/// One join handed to a [`Joiner`]: the query sides (east) and stored sides (west, each
/// west class weighted by `factors`), as
/// [`Keys::join_unless_overflowing`](super::Keys::join_unless_overflowing) takes them.
#[derive(Debug, Clone, Copy)]
#[cfg_attr(not(feature = "gpu"), allow(dead_code))]
pub(crate) struct Join<'a, 'b> {
    /// The east halves.
    pub queries: &'b [HalfSpec<'a>],
    /// The west halves.
    pub stored: &'b [HalfSpec<'a>],
    /// Each west class's factor (0: not built).
    pub factors: [u64; 4],
    /// The task's shape (holes, and even N's tie marks).
    pub shape: &'b Shape,
    /// How much of a task is held at once.
    pub limits: Limits,
    /// Whether to refuse a stored side that overflows one fill.
    pub refuse: bool,
}
