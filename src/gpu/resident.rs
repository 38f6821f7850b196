//! Quarter words kept on the GPU for a whole run: a plan's shared prepared quarters are
//! uploaded the first time a join reads them, once, and every later job names their offset
//! (a job's other quarters are carried by its batch). The feeder uploads them in the first
//! batch it records after a worker placed them: a write queued from a worker's thread
//! (`Queue::write_buffer`) was seen to be lost under load on lavapipe, so that a batch read
//! zeros.
//!
//! The same buffer keeps, from its top down, the carried words of joins that run in several
//! batches (the parts of a cut join, the portions of a side: each reads every word of the
//! whole) while some request holds them, so that each later batch does not carry them
//! again ([`Resident::keep`]).

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use super::device::Device;
use super::words::Words;
use crate::engine::mitm::prepared::Prepared;

/// The fewest carried words worth keeping for the parts of a join that follow it (128 KiB):
/// an upload into the resident words is a dependent step of its own.
pub(crate) const KEEP_PARTS_WORDS: usize = 1 << 14;

/// The fewest carried words kept from a join's first batch on, cut or not (8 MiB, some
/// 0.4 ms of uploads; a task of N = 27 carries 14.8 MB, and is cut): a join that carries
/// as many is most likely cut, and its first batch then uploads them once for all its
/// parts.
pub(crate) const KEEP_WORDS: usize = 1 << 20;

/// The resident quarter words: a buffer filled from the front, and where each quarter's
/// class lies in it.
pub(crate) struct Resident {
    buffer: wgpu::Buffer,
    /// Words in the buffer.
    capacity: u64,
    state: Mutex<State>,
    /// [`KEEP_PARTS_WORDS`] and [`KEEP_WORDS`] (tests make them small).
    keep_from: [AtomicUsize; 2],
}

#[derive(Default)]
struct State {
    /// (stamp, class) of each resident quarter's words, and their first word.
    at: HashMap<(u64, usize), u32>,
    /// Words in use.
    used: u64,
    /// Words placed but not yet uploaded, by their first word.
    pending: Vec<(u64, Vec<u64>)>,
    /// Carried words kept, by their first word, and those placed but not yet uploaded.
    kept: Vec<(u64, Arc<Words>)>,
    kept_pending: Vec<(u64, Arc<Words>)>,
}

impl State {
    /// The first word of the kept sets: the shared quarters stay below it.
    fn floor(&self, capacity: u64) -> u64 {
        self.kept.iter().map(|k| k.0).min().unwrap_or(capacity)
    }

    /// The highest first word of `len` words free above the shared quarters: kept sets are
    /// placed from the top down, the shared quarters from the bottom up.
    fn room_for(&mut self, len: u64, capacity: u64) -> Option<u64> {
        self.kept.sort_unstable_by_key(|k| std::cmp::Reverse(k.0));
        let taken: Vec<(u64, u64)> = self
            .kept
            .iter()
            .map(|(at, w)| (*at, w.len() as u64))
            .collect();
        highest_gap(&taken, self.used, capacity, len)
    }
}

/// The highest first word of `len` free words in `[floor, capacity)` beside the `taken`
/// runs (first word, length), which are disjoint and sorted from the top down.
fn highest_gap(taken: &[(u64, u64)], floor: u64, capacity: u64, len: u64) -> Option<u64> {
    let mut end = capacity;
    for &(at, n) in taken {
        if end >= at + n + len {
            return Some(end - len);
        }
        end = at;
    }
    (end >= floor + len).then(|| end - len)
}

/// Uploads the feeder records ahead of a batch's passes, each a run of words with its first
/// word in the resident buffer.
#[derive(Debug, Default)]
pub(crate) struct Pending {
    /// Shared quarters' words (resident for the whole run).
    pub(crate) shared: Vec<(u64, Vec<u64>)>,
    /// Carried words kept while their joins run (uploaded from the requests' own buffers).
    pub(crate) kept: Vec<(u64, Arc<Words>)>,
}

impl Resident {
    /// Room for `words` quarter words on `dev` (at least one, as a binding may not be
    /// empty).
    pub(crate) fn new(dev: &Arc<Device>, words: u64) -> Self {
        // Within one binding (whose limit need not be a multiple of 16 bytes).
        let bind = dev
            .limits
            .max_storage_buffer_binding_size
            .min(dev.limits.max_buffer_size);
        let capacity = words.min(bind / 16 * 2).max(2);
        let buffer = dev.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("resident words"),
            size: 8 * capacity,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        Resident {
            buffer,
            capacity,
            state: Mutex::new(State::default()),
            keep_from: [
                AtomicUsize::new(KEEP_PARTS_WORDS),
                AtomicUsize::new(KEEP_WORDS),
            ],
        }
    }

    /// Keeps sets of `parts` words and more shared by several requests, and of `any` and
    /// more whatever holds them (tests: small ones, to run the paths).
    #[cfg(test)]
    pub(crate) fn keep_from(&self, parts: usize, any: usize) {
        self.keep_from[0].store(parts, Ordering::Relaxed);
        self.keep_from[1].store(any, Ordering::Relaxed);
    }

    /// Where `words` (a request's carried words) start in the resident buffer, and whether
    /// they were placed there just now (their upload goes ahead of the next batch the
    /// feeder records): kept from the first batch that packs them while several requests
    /// hold them (the parts of a cut join, or the portions of a side) or while they are
    /// many ([`KEEP_WORDS`]), until no request does. `None`: too few to be worth an upload of
    /// their own, or no room; the batch carries them.
    pub(crate) fn keep(&self, words: &Arc<Words>) -> Option<(u32, bool)> {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((at, _)) = state.kept.iter().find(|(_, w)| Arc::ptr_eq(w, words)) {
            return Some((*at as u32, false));
        }
        let len = words.len();
        let shared = Arc::strong_count(words) > 1;
        let from = &self.keep_from[usize::from(!shared)];
        if len == 0 || len < from.load(Ordering::Relaxed) {
            return None;
        }
        // Sets no request holds: every batch that read them was recorded before this one,
        // and wgpu orders the upload that overwrites them after those reads.
        state.kept.retain(|(_, w)| Arc::strong_count(w) > 1);
        let at = state.room_for(len as u64, self.capacity)?;
        state.kept_pending.push((at, Arc::clone(words)));
        state.kept.push((at, Arc::clone(words)));
        Some((at as u32, true))
    }

    /// The buffer the half join reads resident words from.
    pub(crate) fn buffer(&self) -> &wgpu::Buffer {
        &self.buffer
    }

    /// Where class `class` of `p` lies on the GPU: resident already, or made so now if `p`
    /// is a plan's shared quarter (whose words never change) and there is room; `None`
    /// otherwise (the join carries its words). Words made resident wait for the feeder
    /// ([`Resident::take_pending`]), which records them ahead of every batch it packs later.
    pub(crate) fn offset(&self, p: &Prepared, class: usize) -> Option<u32> {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(&at) = state.at.get(&(p.stamp(), class)) {
            return Some(at);
        }
        if !p.is_shared() {
            return None;
        }
        let len = (p.words(0).len() + p.words(1).len()) as u64;
        if state.used + len > state.floor(self.capacity) {
            return None;
        }
        for class in 0..2 {
            let words = p.words(class);
            let at = state.used;
            // Words are placed one after another, so those placed since the last batch
            // are one upload: uploads into one buffer wait for each other, a dependent
            // step each.
            match state.pending.last_mut() {
                _ if words.is_empty() => {}
                Some((start, run)) if *start + run.len() as u64 == at => {
                    run.extend_from_slice(words)
                }
                _ => state.pending.push((at, words.to_vec())),
            }
            state.at.insert((p.stamp(), class), at as u32);
            state.used += words.len() as u64;
        }
        state.at.get(&(p.stamp(), class)).copied()
    }

    /// The words placed since the last call, each run with its first word: the feeder records
    /// their upload into the next batch's command encoder, ahead of its passes.
    pub(crate) fn take_pending(&self) -> Pending {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        // Sets no request holds go back to the host's spare buffers at once, not at the next
        // set kept.
        state.kept.retain(|(_, w)| Arc::strong_count(w) > 1);
        Pending {
            shared: std::mem::take(&mut state.pending),
            kept: std::mem::take(&mut state.kept_pending),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::highest_gap;

    #[test]
    fn kept_sets_take_the_highest_room_that_fits_above_the_shared_words() {
        // An empty buffer of 100 words, the shared quarters below 10.
        assert_eq!(highest_gap(&[], 10, 100, 30), Some(70));
        assert_eq!(highest_gap(&[], 10, 100, 90), Some(10));
        assert_eq!(highest_gap(&[], 10, 100, 91), None);
        // Below the sets kept, down to the shared words.
        assert_eq!(highest_gap(&[(70, 30)], 10, 100, 30), Some(40));
        assert_eq!(highest_gap(&[(70, 30), (40, 30)], 10, 100, 30), Some(10));
        assert_eq!(highest_gap(&[(70, 30), (40, 30)], 10, 100, 31), None);
        // A set gone leaves a hole, the highest taken first; one too small is passed by.
        assert_eq!(highest_gap(&[(80, 20), (30, 20)], 10, 100, 20), Some(60));
        assert_eq!(highest_gap(&[(80, 20), (30, 20)], 10, 100, 31), None);
        assert_eq!(highest_gap(&[(90, 10), (30, 20)], 0, 100, 25), Some(65));
        // The shared words grew up to the kept ones: no room below.
        assert_eq!(highest_gap(&[(80, 20)], 50, 100, 40), None);
        assert_eq!(highest_gap(&[(80, 20)], 50, 100, 30), Some(50));
    }
}
