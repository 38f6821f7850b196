//! Quarter words kept on the GPU for a whole run: a plan's shared prepared quarters are
//! uploaded the first time a join reads them, once, and every later job names their offset
//! (a job's other quarters are carried by its batch).

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use super::Device;
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
}

impl Resident {
    /// Room for `words` quarter words on `dev` (at least one, as a binding may not be
    /// empty).
    pub(crate) fn new(dev: &Device, words: u64) -> Self {
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

    /// Where class `class` of `p` lies, if it is resident.
    pub(crate) fn offset(&self, p: &Prepared, class: usize) -> Option<u32> {
        let state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.at.get(&(p.stamp(), class)).copied()
    }

    /// Makes both classes of `p` resident if there is room (its words are written to the
    /// GPU before the next submission that reads them, on the same queue); returns whether
    /// they are. Only quarters that live as long as the plan may be made resident: their
    /// stamps never change.
    pub(crate) fn admit(&self, dev: &Device, p: &Prepared) -> bool {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if state.at.contains_key(&(p.stamp(), 0)) {
            return true;
        }
        let len = (p.words(0).len() + p.words(1).len()) as u64;
        if state.used + len > self.capacity {
            return false;
        }
        for class in 0..2 {
            let words = p.words(class);
            let at = state.used;
            if !words.is_empty() {
                dev.queue
                    .write_buffer(&self.buffer, 8 * at, bytemuck::cast_slice(words));
            }
            state.at.insert((p.stamp(), class), at as u32);
            state.used += words.len() as u64;
        }
        true
    }
}
