//! Partial sums of a checkpoint per block of rounds, so a wrong count saved by an earlier
//! session can be found and replaced without starting over.
//!
//! A checkpoint keeps one total and one digest for all its finished tasks, and a done set
//! that says which. A count that was wrong when it was saved (a faulty core) would come back
//! on every resume, and nothing could say where. [`Blocks`] also keeps the total and digest
//! of every block of [`Blocks::size`] consecutive rounds, at most [`MAX_BLOCKS`] of them
//! (a few kB), so `count --recheck F` on a resume re-solves a share `F` of the saved blocks
//! on both code paths
//! ([`ResumableCount::recheck_saved`](super::ResumableCount::recheck_saved)), names a block
//! that disagrees and replaces its counts.
//!
//! A checkpoint of schema 2 (written before blocks existed) is upgraded on load: its finished
//! tasks become [`Inherited`], one total and digest that no block holds, because a count
//! cannot be put in a block without solving its task again. Tasks finished after the upgrade
//! go into blocks as usual; the recheck of saved blocks skips the inherited ones.

use std::ops::Range;

use serde::{Deserialize, Serialize};

use super::done::DoneSet;
use super::partial::Digest;
use super::sealed::{decimal, decimal_list};

/// The most blocks a checkpoint holds (each takes about 60 bytes of the file).
pub const MAX_BLOCKS: usize = 128;

/// The total and digest of the finished tasks of each block of rounds.
///
/// In JSON: `{"size": rounds per block, "totals": [decimal strings], "digests": [32 hex
/// digits each], "inherited": {…}}`, one entry per block; `inherited` (see [`Inherited`]) is
/// omitted when empty, so a file without it reads and checks as before.
///
/// The block totals and the inherited total add up to the checkpoint's total, and likewise
/// the digests.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Blocks {
    /// Rounds per block (at least 1).
    pub size: usize,
    /// Per block: the sum of its finished tasks' counts.
    #[serde(with = "decimal_list")]
    pub totals: Vec<u128>,
    /// Per block: the digest of its finished tasks' `(task, count)` pairs.
    pub digests: Vec<Digest>,
    /// The tasks finished under schema 2, which no block holds.
    #[serde(default, skip_serializing_if = "Inherited::is_empty")]
    pub inherited: Inherited,
}

/// The finished tasks a schema 2 checkpoint brought in: their rounds, total and digest.
///
/// Schema 2 kept one total for all finished tasks, so their counts cannot be split by block
/// without solving the tasks again; they stay one lump that a recheck cannot search. In JSON:
/// `{"rounds": base64 bitmap like a checkpoint's done set, "total": decimal string,
/// "digest": 32 hex digits}`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Inherited {
    /// Their rounds (all of them done).
    pub rounds: DoneSet,
    /// The sum of their counts.
    #[serde(with = "decimal")]
    pub total: u128,
    /// The digest of their `(task, count)` pairs.
    pub digest: Digest,
}

impl Inherited {
    /// Whether there is nothing inherited (no rounds, total or digest).
    pub fn is_empty(&self) -> bool {
        self.rounds.is_empty() && self.total == 0 && self.digest == Digest::default()
    }

    /// The number of inherited tasks.
    pub fn len(&self) -> u64 {
        self.rounds.len()
    }
}

impl Blocks {
    /// Empty blocks for a shard of `rounds` rounds: as small as possible, at most
    /// [`MAX_BLOCKS`] of them.
    pub fn new(rounds: usize) -> Self {
        let size = rounds.div_ceil(MAX_BLOCKS).max(1);
        let count = rounds.div_ceil(size);
        Blocks {
            size,
            totals: vec![0; count],
            digests: vec![Digest::default(); count],
            inherited: Inherited::default(),
        }
    }

    /// Blocks for a shard of `rounds` rounds whose finished tasks, `done`, with their
    /// `total` and `digest`, come from a schema 2 checkpoint: all of them inherited, every
    /// block empty.
    pub(crate) fn upgraded(rounds: usize, done: DoneSet, total: u128, digest: Digest) -> Self {
        Blocks {
            inherited: Inherited {
                rounds: done,
                total,
                digest,
            },
            ..Blocks::new(rounds)
        }
    }

    /// The number of blocks.
    pub fn len(&self) -> usize {
        self.totals.len()
    }

    /// Whether there are no blocks (a shard without tasks).
    pub fn is_empty(&self) -> bool {
        self.totals.is_empty()
    }

    /// The rounds of block `block` in a shard of `rounds` rounds.
    pub fn rounds(&self, block: usize, rounds: usize) -> Range<usize> {
        let start = block.saturating_mul(self.size).min(rounds);
        start..start.saturating_add(self.size).min(rounds)
    }

    /// Adds task `task` of round `round` with count `count`.
    pub(crate) fn add(&mut self, round: usize, task: usize, count: u128) {
        if let Some(b) = self.index(round) {
            self.totals[b] = self.totals[b].wrapping_add(count);
            self.digests[b].add(task, count);
        }
    }

    /// Takes back [`Blocks::add`], or the inheritance of round `round`.
    pub(crate) fn remove(&mut self, round: usize, task: usize, count: u128) {
        let inherited = &mut self.inherited;
        if u32::try_from(round).is_ok_and(|r| inherited.rounds.0.remove(r)) {
            inherited.total = inherited.total.wrapping_sub(count);
            inherited.digest.0 = inherited.digest.0.wrapping_sub(Digest::of(task, count).0);
        } else if let Some(b) = self.index(round) {
            self.totals[b] = self.totals[b].wrapping_sub(count);
            self.digests[b].0 = self.digests[b].0.wrapping_sub(Digest::of(task, count).0);
        }
    }

    fn index(&self, round: usize) -> Option<usize> {
        let b = round / self.size.max(1);
        (b < self.totals.len()).then_some(b)
    }

    /// Checks the blocks against a shard of `rounds` rounds and the checkpoint's total and
    /// digest; the error says what is wrong, for people.
    pub(crate) fn check(&self, rounds: usize, total: u128, digest: Digest) -> Result<(), String> {
        if self.size == 0 {
            return Err("its block size is 0".into());
        }
        let expected = rounds.div_ceil(self.size);
        if self.totals.len() != expected || self.digests.len() != expected {
            return Err(format!(
                "it has {} block totals and {} digests, but blocks of {} rounds make {expected}",
                self.totals.len(),
                self.digests.len(),
                self.size
            ));
        }
        let inherited = &self.inherited;
        if inherited.rounds.is_empty() && !inherited.is_empty() {
            return Err("it has an inherited total or digest but no inherited tasks".into());
        }
        let sum = self
            .totals
            .iter()
            .try_fold(inherited.total, |sum, &t| sum.checked_add(t));
        let mut digests = inherited.digest;
        for d in &self.digests {
            digests += *d;
        }
        if sum != Some(total) || digests != digest {
            return Err(
                "its block totals and inherited total, or their digests, do not add up to its \
                 total and digest"
                    .into(),
            );
        }
        Ok(())
    }
}

/// A saved block whose counts both code paths now disagree with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadBlock {
    /// The block.
    pub block: usize,
    /// Its rounds in the shard.
    pub rounds: Range<usize>,
    /// The sum of its finished tasks' counts as saved.
    pub saved: u128,
    /// The same sum solved again (both code paths agree on every task).
    pub now: u128,
}

/// What [`ResumableCount::recheck_saved`](super::ResumableCount::recheck_saved) did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SavedCheck {
    /// Saved blocks re-solved.
    pub blocks: usize,
    /// Saved tasks re-solved.
    pub tasks: usize,
    /// The blocks whose saved counts were wrong; their counts are replaced.
    pub replaced: Vec<BadBlock>,
}
