//! A probe of what the cost model ([`super::model`]) assumes of a GPU and its driver: what
//! one dependent dispatch costs, what one submission waited for costs (a round trip), and
//! whether a thread that waits for the GPU holds up another that submits and waits. It runs
//! its own one-line kernel (`shaders/probe.wgsl`), compiled here apart from the engine's, so
//! that it measures the conversation with the GPU and nothing of the engine's work.

use std::num::NonZeroU32;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, Sender};
use std::time::{Duration, Instant};

use super::device::{Device, Gpu};
use super::model::STEP_SECONDS;
use crate::error::Error;

/// Timed runs of the dependent chain, after one that warms the driver up: the median counts.
const CHAIN_RUNS: usize = 3;

/// GPU seconds the waiting thread's chain lasts at least: long beside a round trip, so that
/// a round trip its wait holds up shows plainly, and short enough for 20 of them.
const OTHER_CHAIN_SECONDS: f64 = 0.01;

/// The most dispatches the waiting thread's chain takes, however cheap they are.
const OTHER_CHAIN_MAX: u32 = 100_000;

/// Samples of the two-thread test, at most: each costs one chain of the waiting thread.
const SAMPLES: u32 = 20;

/// How long the submitting thread gives the waiting one to get into its wait.
const SETTLE: Duration = Duration::from_micros(200);

/// What [`probe_dispatches`] measured. Times are in microseconds, each the median of its
/// samples; the figures of a software driver are its CPU's, not a GPU's.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct DispatchProbe {
    /// Dispatches of the dependent chain, and round trips timed.
    pub dispatches: u32,
    /// One dispatch of a chain in one submission, each reading and writing what the one
    /// before wrote: the chain's wall time from submit until its wait returns, over its
    /// dispatches.
    pub dependent_dispatch_us: f64,
    /// The same by the GPU's timestamps around the chain's pass; `None` where the GPU takes
    /// no timestamps.
    pub dependent_dispatch_us_gpu: Option<f64>,
    /// What the cost model assumes one dependent step costs.
    pub model_step_us: f64,
    /// One submission of one dispatch, from submit until its wait returns.
    pub round_trip_us: f64,
    /// The submit call of those round trips alone.
    pub submit_us: f64,
    /// Dispatches of the chain another thread waits for in the two-thread test.
    pub other_chain_dispatches: u32,
    /// How long that thread waited for its chain.
    pub other_wait_us: f64,
    /// Samples of the two-thread test in which the other thread was waiting when this one
    /// began its round trip.
    pub samples_while_other_waits: u32,
    /// A round trip of this thread begun while the other waits: a submit, then a wait for a
    /// dispatch that went ahead of the other's chain (one queue runs submissions in order),
    /// so that nothing on the GPU holds it up. `None` without a sample.
    pub round_trip_us_while_other_waits: Option<f64>,
    /// The submit call of those round trips alone. `None` without a sample.
    pub submit_us_while_other_waits: Option<f64>,
    /// Samples whose round trip lasted more than half the other thread's wait: held up by
    /// that wait, as a free one takes microseconds.
    pub held_up: u32,
}

/// Measures on `gpu` a chain of `dispatches` dependent dispatches in one submission, as
/// many round trips of one dispatch each, then one thread's submissions and waits while
/// another waits for a long chain (up to 20 samples of about 10 ms of GPU time each).
///
/// # Errors
/// [`Error::Gpu`] where the GPU fails, or where a chain's dispatches did not all run.
pub fn probe_dispatches(gpu: &Gpu, dispatches: NonZeroU32) -> Result<DispatchProbe, Error> {
    let n = dispatches.get();
    let probe = Probe::new(&gpu.device);
    let (dependent, stamped) = probe.chains(n)?;
    let (round_trip, submit) = probe.round_trips(n)?;
    let other = other_chain(dependent, n);
    let beside = probe.beside_a_waiter(other, SAMPLES.min(n))?;
    Ok(DispatchProbe {
        dispatches: n,
        dependent_dispatch_us: dependent,
        dependent_dispatch_us_gpu: stamped,
        model_step_us: STEP_SECONDS * 1e6,
        round_trip_us: round_trip,
        submit_us: submit,
        other_chain_dispatches: other,
        other_wait_us: beside.other_wait_us,
        samples_while_other_waits: beside.samples,
        round_trip_us_while_other_waits: beside.round_trip_us,
        submit_us_while_other_waits: beside.submit_us,
        held_up: beside.held_up,
    })
}

/// Dispatches of the waiting thread's chain, at `per_dispatch_us` each: enough for
/// [`OTHER_CHAIN_SECONDS`], and at least the probe's own chain.
fn other_chain(per_dispatch_us: f64, dispatches: u32) -> u32 {
    let enough = (OTHER_CHAIN_SECONDS * 1e6 / per_dispatch_us).ceil();
    // A float cast saturates (an instant dispatch: infinity), and the clamp bounds it.
    (enough as u32).clamp(dispatches.min(OTHER_CHAIN_MAX), OTHER_CHAIN_MAX)
}

/// The probe's kernel, and its timestamps where the GPU takes them.
struct Probe<'a> {
    dev: &'a Device,
    pipeline: wgpu::ComputePipeline,
    timer: Option<Timer>,
}

/// Two timestamps around a pass, and where they are resolved.
struct Timer {
    queries: wgpu::QuerySet,
    resolve: wgpu::Buffer,
}

/// A word that the probe's dispatches count up, and its bind group.
struct Counter {
    buffer: wgpu::Buffer,
    group: wgpu::BindGroup,
}

/// What the submitting thread measured beside a waiting one.
struct Beside {
    other_wait_us: f64,
    samples: u32,
    round_trip_us: Option<f64>,
    submit_us: Option<f64>,
    held_up: u32,
}

/// The ends of the channels between the submitting thread and the waiting one.
struct Submitter {
    go: Sender<()>,
    started: Receiver<()>,
    finished: Receiver<Result<f64, Error>>,
}

/// The waiting thread's ends.
struct Waiter {
    go: Receiver<()>,
    started: Sender<()>,
    finished: Sender<Result<f64, Error>>,
}

impl<'a> Probe<'a> {
    fn new(dev: &'a Device) -> Self {
        let module = dev
            .device
            .create_shader_module(wgpu::ShaderModuleDescriptor {
                label: Some("probe.wgsl"),
                source: wgpu::ShaderSource::Wgsl(include_str!("shaders/probe.wgsl").into()),
            });
        let pipeline = dev
            .device
            .create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some("probe"),
                layout: None,
                module: &module,
                entry_point: Some("step"),
                compilation_options: Default::default(),
                cache: None,
            });
        let timed = dev
            .device
            .features()
            .contains(wgpu::Features::TIMESTAMP_QUERY);
        let timer = timed.then(|| Timer {
            queries: dev.device.create_query_set(&wgpu::QuerySetDescriptor {
                label: Some("probe timestamps"),
                ty: wgpu::QueryType::Timestamp,
                count: 2,
            }),
            resolve: buffer(dev, 16, wgpu::BufferUsages::QUERY_RESOLVE),
        });
        Probe {
            dev,
            pipeline,
            timer,
        }
    }

    /// A counter at zero.
    fn counter(&self) -> Counter {
        let buffer = buffer(self.dev, 4, wgpu::BufferUsages::STORAGE);
        let group = self
            .dev
            .device
            .create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some("probe counter"),
                layout: &self.pipeline.get_bind_group_layout(0),
                entries: &[wgpu::BindGroupEntry {
                    binding: 0,
                    resource: buffer.as_entire_binding(),
                }],
            });
        Counter { buffer, group }
    }

    /// A command buffer of one pass of `dispatches` dispatches adding to `counter`, between
    /// two timestamps resolved at its end where `timed` and the GPU takes them.
    fn record(&self, counter: &Counter, dispatches: u32, timed: bool) -> wgpu::CommandBuffer {
        let timer = self.timer.as_ref().filter(|_| timed);
        let mut encoder = self.dev.device.create_command_encoder(&Default::default());
        {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("probe"),
                timestamp_writes: timer.map(|t| wgpu::ComputePassTimestampWrites {
                    query_set: &t.queries,
                    beginning_of_pass_write_index: Some(0),
                    end_of_pass_write_index: Some(1),
                }),
            });
            pass.set_pipeline(&self.pipeline);
            pass.set_bind_group(0, &counter.group, &[]);
            for _ in 0..dispatches {
                pass.dispatch_workgroups(1, 1, 1);
            }
        }
        if let Some(t) = timer {
            encoder.resolve_query_set(&t.queries, 0..2, &t.resolve, 0);
        }
        encoder.finish()
    }

    /// Blocks until submission `index` has run.
    fn wait(&self, index: wgpu::SubmissionIndex) -> Result<(), Error> {
        let wait = wgpu::PollType::Wait {
            submission_index: Some(index),
            timeout: None,
        };
        self.dev
            .device
            .poll(wait)
            .map(|_| ())
            .map_err(|e| Error::Gpu(format!("waiting for the GPU: {e}")))
    }

    /// The words of `source` (a buffer the GPU is done with).
    fn read(&self, source: &wgpu::Buffer) -> Result<Vec<u32>, Error> {
        let size = source.size();
        let readback = buffer(self.dev, size, wgpu::BufferUsages::MAP_READ);
        let mut encoder = self.dev.device.create_command_encoder(&Default::default());
        encoder.copy_buffer_to_buffer(source, 0, &readback, 0, size);
        self.dev.queue.submit([encoder.finish()]);
        let (tx, mapped) = std::sync::mpsc::channel();
        readback.slice(..).map_async(wgpu::MapMode::Read, move |r| {
            let _ = tx.send(r);
        });
        let failed = |e: String| Error::Gpu(format!("reading GPU memory: {e}"));
        self.dev
            .device
            .poll(wgpu::PollType::wait_indefinitely())
            .map_err(|e| failed(e.to_string()))?;
        mapped
            .recv()
            .map_err(|e| failed(e.to_string()))?
            .map_err(|e| failed(e.to_string()))?;
        let words = readback
            .slice(..)
            .get_mapped_range()
            .map(|view| bytemuck::cast_slice::<u8, u32>(&view).to_vec())
            .map_err(|e| failed(e.to_string()));
        readback.unmap();
        words
    }

    /// Fails unless the device is well and `counter` counted `expected` dispatches: a
    /// driver that dropped some would time less than it was asked to.
    fn check(&self, counter: &Counter, expected: u64) -> Result<(), Error> {
        if let Some(why) = self.dev.lost() {
            return Err(Error::Gpu(why));
        }
        let ran = u64::from(self.read(&counter.buffer)?[0]);
        match ran == expected % (1 << 32) {
            true => Ok(()),
            false => Err(Error::Gpu(format!(
                "the probe's dispatches did not all run: {ran} of {expected}"
            ))),
        }
    }

    /// The chain of `n` dependent dispatches, [`CHAIN_RUNS`] times after a warm-up:
    /// microseconds per dispatch by wall clock and by timestamps.
    fn chains(&self, n: u32) -> Result<(f64, Option<f64>), Error> {
        let counter = self.counter();
        let (mut walls, mut stamped) = (Vec::new(), Vec::new());
        for run in 0..=CHAIN_RUNS {
            let commands = self.record(&counter, n, true);
            let start = Instant::now();
            let index = self.dev.queue.submit([commands]);
            self.wait(index)?;
            let wall = micros(start.elapsed());
            let ticks = match &self.timer {
                Some(t) => pass_ticks(&self.read(&t.resolve)?),
                None => None,
            };
            if run > 0 {
                walls.push(wall / f64::from(n));
                let period_us = f64::from(self.dev.queue.get_timestamp_period()) / 1e3;
                stamped.extend(ticks.map(|t| t as f64 * period_us / f64::from(n)));
            }
        }
        self.check(&counter, (CHAIN_RUNS as u64 + 1) * u64::from(n))?;
        Ok((
            median(walls),
            (!stamped.is_empty()).then(|| median(stamped)),
        ))
    }

    /// `n` submissions of one dispatch, each waited for: the round trip and the submit
    /// call, in microseconds.
    fn round_trips(&self, n: u32) -> Result<(f64, f64), Error> {
        let counter = self.counter();
        let (mut trips, mut submits) = (Vec::new(), Vec::new());
        for _ in 0..n {
            let commands = self.record(&counter, 1, false);
            let start = Instant::now();
            let index = self.dev.queue.submit([commands]);
            submits.push(micros(start.elapsed()));
            self.wait(index)?;
            trips.push(micros(start.elapsed()));
        }
        self.check(&counter, u64::from(n))?;
        Ok((median(trips), median(submits)))
    }

    /// `samples` rounds of: this thread submits one dispatch, another thread submits a
    /// chain of `chain` dispatches and waits for it, and while it waits this thread makes a
    /// round trip: it submits another dispatch and waits for its first. (Waiting for the
    /// second would wait for the other's chain too: one queue runs submissions in order.)
    fn beside_a_waiter(&self, chain: u32, samples: u32) -> Result<Beside, Error> {
        let (mine, theirs) = (self.counter(), self.counter());
        let waiting = AtomicBool::new(false);
        let (go, go_rx) = std::sync::mpsc::channel();
        let (started_tx, started) = std::sync::mpsc::channel();
        let (finished_tx, finished) = std::sync::mpsc::channel();
        let waiter = Waiter {
            go: go_rx,
            started: started_tx,
            finished: finished_tx,
        };
        let submitter = Submitter {
            go,
            started,
            finished,
        };
        let beside = std::thread::scope(|s| {
            s.spawn(|| self.waiter(&theirs, chain, waiter, &waiting));
            // Dropping the submitter's ends at the end of its rounds stops the waiter.
            self.submitter(&mine, samples, submitter, &waiting)
        })?;
        self.check(&mine, 2 * u64::from(samples))?;
        self.check(&theirs, u64::from(chain) * u64::from(samples))?;
        Ok(beside)
    }

    /// The waiting thread: at each go, submits its chain and waits for it, saying when it
    /// starts to wait and how long it waited.
    fn waiter(&self, counter: &Counter, chain: u32, ends: Waiter, waiting: &AtomicBool) {
        loop {
            // Recorded beforehand, so that the chain is submitted at once.
            let commands = self.record(counter, chain, false);
            if ends.go.recv().is_err() {
                return;
            }
            let index = self.dev.queue.submit([commands]);
            waiting.store(true, Ordering::SeqCst);
            let _ = ends.started.send(());
            let start = Instant::now();
            let waited = self.wait(index).map(|()| micros(start.elapsed()));
            waiting.store(false, Ordering::SeqCst);
            if ends.finished.send(waited).is_err() {
                return;
            }
        }
    }

    /// The submitting thread's rounds beside the waiting one. Whether the other thread's
    /// wait held a round trip up is judged by its length: its dispatch had run before the
    /// round trip began, so one held up lasts about as long as the other's wait, and a free
    /// one microseconds.
    fn submitter(
        &self,
        counter: &Counter,
        samples: u32,
        ends: Submitter,
        waiting: &AtomicBool,
    ) -> Result<Beside, Error> {
        let stopped = || Error::Gpu("the probe's waiting thread stopped".into());
        let (mut trips, mut submits, mut waits) = (Vec::new(), Vec::new(), Vec::new());
        let mut held_up = 0;
        for _ in 0..samples {
            let (first, second) = (
                self.record(counter, 1, false),
                self.record(counter, 1, false),
            );
            let ahead = self.dev.queue.submit([first]);
            ends.go.send(()).map_err(|_| stopped())?;
            ends.started.recv().map_err(|_| stopped())?;
            std::thread::sleep(SETTLE);
            let during = waiting.load(Ordering::SeqCst);
            let start = Instant::now();
            let behind = self.dev.queue.submit([second]);
            let submit = micros(start.elapsed());
            self.wait(ahead)?;
            let trip = micros(start.elapsed());
            let other = ends.finished.recv().map_err(|_| stopped())??;
            self.wait(behind)?;
            waits.push(other);
            if during {
                trips.push(trip);
                submits.push(submit);
                held_up += u32::from(trip > other / 2.0);
            }
        }
        Ok(Beside {
            other_wait_us: median(waits),
            samples: trips.len() as u32,
            round_trip_us: (!trips.is_empty()).then(|| median(trips)),
            submit_us: (!submits.is_empty()).then(|| median(submits)),
            held_up,
        })
    }
}

/// A buffer of `size` bytes for `usage`, copied from and to.
fn buffer(dev: &Device, size: u64, usage: wgpu::BufferUsages) -> wgpu::Buffer {
    let copies = match usage.contains(wgpu::BufferUsages::MAP_READ) {
        true => wgpu::BufferUsages::COPY_DST,
        false => wgpu::BufferUsages::COPY_SRC,
    };
    dev.device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("probe"),
        size,
        usage: usage | copies,
        mapped_at_creation: false,
    })
}

/// The ticks between a pass's two resolved timestamps (two words each, low first); `None`
/// where the end is not after the start (a driver that does not keep them).
fn pass_ticks(words: &[u32]) -> Option<u64> {
    let stamp = |i: usize| u64::from(words[2 * i]) | u64::from(words[2 * i + 1]) << 32;
    stamp(1).checked_sub(stamp(0)).filter(|&t| t > 0)
}

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

/// The median of `samples` (at least one); of an even count, the upper middle one.
fn median(mut samples: Vec<f64>) -> f64 {
    samples.sort_by(f64::total_cmp);
    samples[samples.len() / 2]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_waiting_chain_lasts_long_enough_but_stays_bounded() {
        assert_eq!(other_chain(10.0, 50), 1000);
        assert_eq!(other_chain(10.0, 5000), 5000);
        assert_eq!(other_chain(0.0, 50), OTHER_CHAIN_MAX);
        assert_eq!(other_chain(1e-3, 50), OTHER_CHAIN_MAX);
        assert_eq!(other_chain(1e9, 50), 50);
    }

    #[test]
    fn pass_ticks_read_two_words_a_stamp_and_refuse_a_clock_that_went_back() {
        assert_eq!(pass_ticks(&[5, 1, 9, 1]), Some(4));
        assert_eq!(pass_ticks(&[u32::MAX, 0, 1, 1]), Some(2));
        assert_eq!(pass_ticks(&[9, 0, 5, 0]), None);
        assert_eq!(pass_ticks(&[0, 0, 0, 0]), None);
    }

    #[test]
    fn the_median_is_the_middle_sample() {
        assert_eq!(median(vec![3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(vec![4.0, 1.0]), 4.0);
        assert_eq!(median(vec![7.0]), 7.0);
    }
}
