//! Stopping a command that reports what it finished: Ctrl-C, SIGTERM, SIGHUP and SIGUSR1 set
//! a flag the work reads between tasks, so it ends with its partial results and status 130
//! rather than being killed with nothing. A second signal ends the process at once.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use anyhow::Context;

use crate::exit::Exit;

/// Installs the handlers and returns the flag they set.
///
/// # Errors
/// When a handler cannot be installed (one already is, or the system refuses).
pub(crate) fn stop_flag() -> anyhow::Result<Arc<AtomicBool>> {
    let stop = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&stop);
    ctrlc::set_handler(move || {
        if flag.swap(true, Ordering::Relaxed) {
            // Asked twice: the user does not want to wait for the task in flight.
            std::process::exit(Exit::Interrupted as i32);
        }
    })
    .context("installing the Ctrl-C/SIGTERM handler")?;
    usr1_as_term().context("installing the SIGUSR1 handler")?;
    Ok(stop)
}

/// Makes SIGUSR1 stop the work as SIGTERM does. Batch systems send it as a warning before a
/// time limit (Slurm's `--signal=B:USR1@120`); by default it would kill the process and lose
/// what it finished.
#[cfg(unix)]
pub(crate) fn usr1_as_term() -> std::io::Result<()> {
    extern "C" fn to_term(_: libc::c_int) {
        // SAFETY: getpid(2) and kill(2) are async-signal-safe and touch no memory.
        unsafe {
            libc::kill(libc::getpid(), libc::SIGTERM);
        }
    }
    // SAFETY: the action is fully initialised (zeroed, then its handler and empty mask set)
    // before sigaction(2) reads it; the handler only makes async-signal-safe calls.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = to_term as extern "C" fn(libc::c_int) as libc::sighandler_t;
        action.sa_flags = libc::SA_RESTART;
        libc::sigemptyset(&mut action.sa_mask);
        if libc::sigaction(libc::SIGUSR1, &action, std::ptr::null_mut()) != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Elsewhere there is no SIGUSR1.
#[cfg(not(unix))]
pub(crate) fn usr1_as_term() -> std::io::Result<()> {
    Ok(())
}
