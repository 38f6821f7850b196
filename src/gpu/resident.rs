//! Quarter words kept on the GPU for a whole run: a plan's shared prepared quarters are
//! uploaded the first time a join reads them, once, and every later job names their offset
//! (a job's other quarters are carried by its batch).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use super::Device;
use crate::engine::mitm::prepared::Prepared;

/// The resident quarter words: a buffer filled from the front, and where each quarter's
/// class lies in it.
pub(crate) struct Resident {
    dev: Arc<Device>,
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
            dev: Arc::clone(dev),
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
    /// otherwise (the join carries its words). Words made resident are written before the
    /// next submission, on the same queue as the batch that reads them.
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
            if !words.is_empty() {
                let bytes = bytemuck::cast_slice(words);
                self.dev.queue.write_buffer(&self.buffer, 8 * at, bytes);
            }
            state.at.insert((p.stamp(), class), at as u32);
            state.used += words.len() as u64;
        }
        state.at.get(&(p.stamp(), class)).copied()
    }
}
