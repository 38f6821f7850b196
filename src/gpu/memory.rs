//! GPU buffers that grow to what a join needs, the parameter blocks of a stage's
//! dispatches, and reading results back.

use super::kernels::PARAMS_BYTES;
use super::Device;

/// A storage buffer that is replaced by a larger one when a join needs more (its old
/// contents are not kept).
pub(crate) struct Grow {
    label: &'static str,
    buffer: Option<wgpu::Buffer>,
    usage: wgpu::BufferUsages,
}

impl Grow {
    /// An empty storage buffer that can also be copied from and to.
    pub(crate) fn storage(label: &'static str) -> Self {
        Grow {
            label,
            buffer: None,
            usage: wgpu::BufferUsages::STORAGE
                | wgpu::BufferUsages::COPY_SRC
                | wgpu::BufferUsages::COPY_DST,
        }
    }

    /// The buffer, at least `bytes` long (a quarter more than asked when it grows, and
    /// never empty, since a binding may not be), or why the device cannot bind that much.
    pub(crate) fn at_least(&mut self, dev: &Device, bytes: u64) -> Result<wgpu::Buffer, String> {
        let limit = dev
            .limits
            .max_storage_buffer_binding_size
            .min(dev.limits.max_buffer_size)
            & !255;
        let need = bytes.max(16).next_multiple_of(16);
        if need > limit {
            return Err(format!(
                "{} bytes of {} are more than this GPU binds at once ({limit})",
                bytes, self.label
            ));
        }
        if self.buffer.as_ref().is_none_or(|b| b.size() < need) {
            let size = (need + need / 4).next_multiple_of(256).min(limit);
            self.buffer = Some(dev.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(self.label),
                size,
                usage: self.usage,
                mapped_at_creation: false,
            }));
        }
        Ok(self.get().clone())
    }

    /// The buffer as it is (created by [`Grow::at_least`] before).
    pub(crate) fn get(&self) -> &wgpu::Buffer {
        self.buffer.as_ref().expect("a buffer is sized before use")
    }
}

/// The parameter blocks of one stage's dispatches, written to one uniform buffer at
/// offsets of [`PARAMS_BYTES`] before the stage is submitted.
pub(crate) struct Params {
    bytes: Vec<u8>,
    buffer: Option<wgpu::Buffer>,
}

impl Params {
    pub(crate) fn new() -> Self {
        Params {
            bytes: Vec::new(),
            buffer: None,
        }
    }

    /// Starts a stage's parameters afresh.
    pub(crate) fn clear(&mut self) {
        self.bytes.clear();
    }

    /// Adds one dispatch's parameters (u32 words, as the shader's struct lays them out);
    /// returns their offset.
    pub(crate) fn push(&mut self, words: &[u32]) -> u32 {
        let at = self.bytes.len();
        assert!(
            words.len() * 4 <= PARAMS_BYTES as usize,
            "parameters fit a block"
        );
        self.bytes
            .extend(words.iter().flat_map(|w| w.to_le_bytes()));
        self.bytes.resize(at + PARAMS_BYTES as usize, 0);
        at as u32
    }

    /// Uploads the stage's parameters; returns the buffer to bind.
    pub(crate) fn upload(&mut self, device: &wgpu::Device, queue: &wgpu::Queue) -> &wgpu::Buffer {
        let need = (self.bytes.len() as u64).max(PARAMS_BYTES);
        if self.buffer.as_ref().is_none_or(|b| b.size() < need) {
            self.buffer = Some(device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("params"),
                size: need.next_power_of_two(),
                usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            }));
        }
        let buffer = self.buffer.as_ref().expect("just made");
        if !self.bytes.is_empty() {
            queue.write_buffer(buffer, 0, &self.bytes);
        }
        buffer
    }
}

/// Waits for `submission` (which copied into `staging`) to finish, then maps the first
/// `bytes` of `staging` and returns a copy of them. Only that submission is waited for:
/// other threads' work on the same device goes on.
pub(crate) fn read_back(
    device: &wgpu::Device,
    submission: wgpu::SubmissionIndex,
    staging: &wgpu::Buffer,
    bytes: u64,
) -> Result<Vec<u8>, String> {
    if bytes == 0 {
        return Ok(Vec::new());
    }
    let slice = staging.slice(..bytes);
    let (tx, rx) = std::sync::mpsc::channel();
    slice.map_async(wgpu::MapMode::Read, move |r| {
        let _ = tx.send(r);
    });
    let wait = wgpu::PollType::Wait {
        submission_index: Some(submission),
        timeout: None,
    };
    device
        .poll(wait)
        .map_err(|e| format!("waiting for the GPU: {e}"))?;
    let mapped = match rx.try_recv() {
        Ok(mapped) => mapped,
        // Mapped after that submission: the next full poll delivers it.
        Err(_) => {
            device
                .poll(wgpu::PollType::wait_indefinitely())
                .map_err(|e| format!("waiting for the GPU: {e}"))?;
            rx.recv()
                .map_err(|_| "the GPU never answered a read".to_string())?
        }
    };
    mapped.map_err(|e| format!("reading GPU memory: {e}"))?;
    let out = {
        let view = slice
            .get_mapped_range()
            .map_err(|e| format!("reading GPU memory: {e}"))?;
        view.to_vec()
    };
    staging.unmap();
    Ok(out)
}

/// A staging buffer for reads, at least `bytes` long.
pub(crate) struct Staging {
    buffer: Option<wgpu::Buffer>,
    /// Timestamps around a timed dispatch (made on first use, where the device has them).
    timer: Option<Timer>,
    /// GPU seconds of the timed dispatches since the last [`Staging::take_timed`].
    timed: f64,
}

/// Two timestamps, begin and end of one compute pass, and where they are resolved.
pub(crate) struct Timer {
    pub(crate) queries: wgpu::QuerySet,
    pub(crate) resolve: wgpu::Buffer,
    /// Nanoseconds per timestamp tick.
    period_ns: f64,
}

impl Staging {
    pub(crate) fn new() -> Self {
        Staging {
            buffer: None,
            timer: None,
            timed: 0.0,
        }
    }

    /// The timer of this slot, or `None` where the device takes no timestamps.
    pub(crate) fn timer(&mut self, device: &wgpu::Device, queue: &wgpu::Queue) -> Option<&Timer> {
        if !device.features().contains(wgpu::Features::TIMESTAMP_QUERY) {
            return None;
        }
        Some(self.timer.get_or_insert_with(|| Timer {
            queries: device.create_query_set(&wgpu::QuerySetDescriptor {
                label: Some("timestamps"),
                ty: wgpu::QueryType::Timestamp,
                count: 2,
            }),
            resolve: device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("timestamps"),
                size: 16,
                usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: false,
            }),
            period_ns: f64::from(queue.get_timestamp_period()),
        }))
    }

    /// Adds the pass timed between the two timestamps `words` (two little-endian u64).
    pub(crate) fn add_timed(&mut self, words: &[u32]) {
        let (Some(timer), [b0, b1, e0, e1]) = (&self.timer, words) else {
            return;
        };
        let begin = u64::from(*b0) | u64::from(*b1) << 32;
        let end = u64::from(*e0) | u64::from(*e1) << 32;
        // A driver may reset or wrap its counter between the two: such a pass adds nothing.
        self.timed += end.saturating_sub(begin) as f64 * timer.period_ns * 1e-9;
    }

    /// The GPU seconds timed since the last call.
    pub(crate) fn take_timed(&mut self) -> f64 {
        std::mem::take(&mut self.timed)
    }

    pub(crate) fn at_least(&mut self, device: &wgpu::Device, bytes: u64) -> &wgpu::Buffer {
        let need = bytes.max(16).next_multiple_of(16);
        if self.buffer.as_ref().is_none_or(|b| b.size() < need) {
            self.buffer = Some(device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("staging"),
                size: need.next_power_of_two(),
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            }));
        }
        self.buffer.as_ref().expect("just made")
    }
}

/// u32 words of little-endian bytes.
pub(crate) fn words(bytes: &[u8]) -> Vec<u32> {
    bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().expect("four bytes")))
        .collect()
}
