//! Quarter words kept on the GPU for a whole run: a plan's shared prepared quarters are
//! uploaded the first time a join reads them, once, and every later job names their offset
//! (a job's other quarters are carried by its batch). The feeder uploads them in the first
//! batch it records after a worker placed them: a write queued from a worker's thread
//! (`Queue::write_buffer`) was seen to be lost under load on lavapipe, so that a batch read
//! zeros.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use super::device::Device;
use crate::engine::mitm::prepared::Prepared;

/// The resident quarter words: a buffer filled from the front, and where each quarter's
/// class lies in it.
pub(crate) struct Resident {
    buffer: wgpu::Buffer,
    /// Words in the buffer.
    capacity: u64,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// (stamp, class) of each resident quarter's words, and their first word.
    at: HashMap<(u64, usize), u32>,
    /// Words in use.
    used: u64,
    /// Words placed but not yet uploaded, by their first word.
    pending: Vec<(u64, Vec<u64>)>,
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
        }
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
        if state.used + len > self.capacity {
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
    pub(crate) fn take_pending(&self) -> Vec<(u64, Vec<u64>)> {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        std::mem::take(&mut state.pending)
    }
}
