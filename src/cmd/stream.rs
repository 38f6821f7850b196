//! Output that is found over time (`solutions`): a producer thread appends records to a
//! shared buffer, and the main thread writes them to stdout: each line at once on a terminal,
//! else in large writes, but never more than [`MAX_DELAY`] after it was found. A reader that
//! has gone (`| head -1`) ends the run at once, even while the producer searches for the next
//! record and writes nothing.

use std::io::{IsTerminal, Write};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// The longest a record waits in the buffer through a pipe or into a file.
const MAX_DELAY: Duration = Duration::from_millis(100);

/// Buffered bytes from which the writer is woken before [`MAX_DELAY`] is up.
const CHUNK: usize = 1 << 16;

/// Buffered bytes at which the producer waits for the writer (a slow reader must not make the
/// buffer grow without bound).
const MAX_BUFFERED: usize = 1 << 20;

/// The producer's end: [`Sink::push`] appends a record.
pub(crate) struct Sink {
    shared: Arc<Shared>,
    /// Wake the writer for every record (a terminal shows each line when it is found).
    each: bool,
}

struct Shared {
    state: Mutex<State>,
    /// Signalled when there is something to write, or the producer is done.
    ready: Condvar,
    /// Signalled when the writer emptied the buffer, or the output is gone.
    room: Condvar,
}

#[derive(Default)]
struct State {
    buf: Vec<u8>,
    done: bool,
    gone: bool,
}

/// The output is gone: the producer should stop.
#[derive(Debug)]
pub(crate) struct Gone;

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A producer that panicked mid-record leaves whole records before it: keep going.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Sink {
    /// Appends one record, written by `write`; waits while the buffer is full.
    ///
    /// # Errors
    /// [`Gone`] once the output cannot be written.
    pub(crate) fn push(&self, write: impl FnOnce(&mut Vec<u8>)) -> Result<(), Gone> {
        let mut state = self.shared.lock();
        while state.buf.len() >= MAX_BUFFERED && !state.gone {
            state = self
                .shared
                .room
                .wait(state)
                .unwrap_or_else(|e| e.into_inner());
        }
        if state.gone {
            return Err(Gone);
        }
        let before = state.buf.len();
        write(&mut state.buf);
        // Once per chunk: the writer, once woken, takes all there is.
        if self.each || (before < CHUNK && state.buf.len() >= CHUNK) {
            self.shared.ready.notify_one();
        }
        Ok(())
    }
}

impl Drop for Sink {
    fn drop(&mut self) {
        self.shared.lock().done = true;
        self.shared.ready.notify_one();
    }
}

/// Runs `produce` on a thread of its own and writes what it pushes to stdout (see the module
/// docs) until it returns.
///
/// # Errors
/// The first error writing stdout (a reader that has gone is `BrokenPipe`), at once: the
/// producer is told to stop, and the caller may end the process without waiting for it.
pub(crate) fn to_stdout(produce: impl FnOnce(&Sink) + Send + 'static) -> std::io::Result<()> {
    let each = std::io::stdout().is_terminal();
    let shared = Arc::new(Shared {
        state: Mutex::new(State::default()),
        ready: Condvar::new(),
        room: Condvar::new(),
    });
    let sink = Sink {
        shared: Arc::clone(&shared),
        each,
    };
    std::thread::spawn(move || produce(&sink));
    let result = write_all(&shared, each);
    if result.is_err() {
        shared.lock().gone = true;
        shared.room.notify_all();
    }
    result
}

/// The writer's loop: takes what is buffered when it is due and writes it.
fn write_all(shared: &Shared, each: bool) -> std::io::Result<()> {
    let mut out = std::io::stdout();
    let mut batch = Vec::new();
    loop {
        let done = take_due(shared, each, &mut batch);
        shared.room.notify_all();
        if !batch.is_empty() {
            out.write_all(&batch)?;
            out.flush()?;
            batch.clear();
        } else if !done && reader_gone() {
            return Err(std::io::ErrorKind::BrokenPipe.into());
        }
        if done {
            return Ok(());
        }
    }
}

/// Waits until the buffer is due (a record on a terminal, a chunk, [`MAX_DELAY`] passed, or
/// the producer done), swaps it into `batch`, and says whether the producer is done (then
/// `batch` holds the last of it).
fn take_due(shared: &Shared, each: bool, batch: &mut Vec<u8>) -> bool {
    let deadline = Instant::now() + MAX_DELAY;
    let mut state = shared.lock();
    loop {
        let due = state.done || state.buf.len() >= CHUNK || (each && !state.buf.is_empty());
        let left = deadline.saturating_duration_since(Instant::now());
        if due || left.is_zero() {
            break;
        }
        state = shared
            .ready
            .wait_timeout(state, left)
            .map_or_else(|e| e.into_inner().0, |(s, _)| s);
    }
    std::mem::swap(&mut state.buf, batch);
    state.done
}

/// Whether stdout is a pipe whose reader has closed it (then the next write would fail).
#[cfg(unix)]
fn reader_gone() -> bool {
    let mut fd = libc::pollfd {
        fd: libc::STDOUT_FILENO,
        events: 0,
        revents: 0,
    };
    // SAFETY: poll(2) on one valid pollfd with no timeout only fills in `revents`.
    let ready = unsafe { libc::poll(&mut fd, 1, 0) };
    ready > 0 && fd.revents & (libc::POLLERR | libc::POLLHUP) != 0
}

/// Elsewhere a gone reader shows at the next write.
#[cfg(not(unix))]
fn reader_gone() -> bool {
    false
}
