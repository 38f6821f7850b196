//! The quarter words a GPU request carries, in buffers kept for reuse: the requests that
//! carry them (`request/`) and the resident buffer that may keep them on the GPU for a
//! join's later batches (`resident.rs`) both hold them.

use std::sync::{Mutex, PoisonError};

/// The quarter words a request carries, in a buffer that goes back to the spare ones once
/// the last request (or part of a cut one) holding it is dropped, for a later request to
/// fill: a new buffer each time came in fresh pages from the system (glibc maps large
/// blocks and trims its heap), and their page faults took a third of the host's time.
#[derive(Debug, Default)]
pub(crate) struct Words(Vec<u64>);

impl Words {
    /// The carried words `words`.
    pub(crate) fn new(words: Vec<u64>) -> Self {
        Words(words)
    }
}

impl std::ops::Deref for Words {
    type Target = [u64];
    fn deref(&self) -> &[u64] {
        &self.0
    }
}

impl Drop for Words {
    fn drop(&mut self) {
        let words = std::mem::take(&mut self.0);
        // A large buffer handed to a small request would hold its room while in flight; its
        // fresh pages cost little beside copying its words.
        if words.capacity() == 0 || words.capacity() > SPARE_LARGEST {
            return;
        }
        let mut spare = SPARE.lock().unwrap_or_else(PoisonError::into_inner);
        if spare.words + words.capacity() <= SPARE_WORDS {
            spare.words += words.capacity();
            spare.buffers.push(words);
        }
    }
}

/// Buffers of carried words no request holds any more.
struct Spare {
    buffers: Vec<Vec<u64>>,
    /// Their capacities, summed.
    words: usize,
}

static SPARE: Mutex<Spare> = Mutex::new(Spare {
    buffers: Vec::new(),
    words: 0,
});

/// The most words the spare buffers keep (256 MiB; past it, buffers are freed): the words
/// of a few thousand requests in flight at N = 21.
const SPARE_WORDS: usize = 32 << 20;

/// The largest buffer the spare ones keep (1 MiB; tasks of N = 21 carried 61 KB each on average).
const SPARE_LARGEST: usize = 1 << 17;

/// An empty buffer for a request's carried words: a spare one if there is one.
pub(crate) fn spare_buffer() -> Vec<u64> {
    let mut spare = SPARE.lock().unwrap_or_else(PoisonError::into_inner);
    let Some(mut words) = spare.buffers.pop() else {
        return Vec::new();
    };
    spare.words -= words.capacity();
    words.clear();
    words
}
