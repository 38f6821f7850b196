//! The `nqueens` command-line tool: a thin layer over the `nqueens` library.

mod cli;
mod cmd;
mod eta;
mod exit;
mod options;
mod parse;
mod plot;
mod progress;

use std::process::ExitCode;

use clap::error::ErrorKind;

use crate::cmd::messages::message;
use crate::exit::Exit;

fn main() -> ExitCode {
    map_large_buffers();
    let cli = match cli::try_parse() {
        Ok(cli) => cli,
        Err(err) => return usage_error(&err),
    };
    if let Err(code) = check_isa_cap(cli.command.is_quiet()) {
        return code;
    }
    let run = |global| cli.command.run(&global);
    match cli
        .command
        .global()
        .map_err(anyhow::Error::from)
        .and_then(run)
    {
        Ok(code) => code,
        Err(err) => runtime_error(&err),
    }
}

/// Has glibc map each allocation of 4 MiB or more on its own, so that freeing or shrinking
/// it gives its memory back. By default glibc raises that threshold after each such free (up
/// to 32 MiB) and serves later buffers from its heap, which it seldom returns: a thread that
/// solves many large tasks then keeps the freed and shrunk buffers of each (16 of N = 28's
/// largest tasks in one process peaked at 348 MB, and at 294 MB with this; time level).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn map_large_buffers() {
    // SAFETY: mallopt only sets one of the allocator's parameters, before any thread starts.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 4 << 20);
    }
}

/// Elsewhere the allocator keeps its own policy.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn map_large_buffers() {}

/// Refuses an unknown `NQUEENS_ISA` (exit 2) and notes a level this CPU lacks.
fn check_isa_cap(quiet: bool) -> Result<(), ExitCode> {
    use cmd::messages::note;
    match nqueens::engine::check_isa_cap() {
        Err(err) => {
            message!("{err}");
            Err(Exit::Usage.into())
        }
        Ok(Some(wanted)) if !quiet => {
            note!(
                "{}={wanted}: this CPU lacks that level; the matcher runs at {}",
                nqueens::engine::ISA_VAR,
                nqueens::engine::matcher_level()
            );
            Ok(())
        }
        Ok(_) => Ok(()),
    }
}

/// Prints a clap error: help and version in full, anything else as the one line
/// [`cli::OneLine`] made of it.
fn usage_error(err: &clap::error::Error<cli::OneLine>) -> ExitCode {
    match err.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            let _ = err.print();
            Exit::Ok.into()
        }
        ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = err.print();
            Exit::Usage.into()
        }
        _ => {
            message!("{} (see 'nqueens --help')", err.to_string().trim_end());
            Exit::Usage.into()
        }
    }
}

/// Prints an error chain once and picks the exit status from its cause.
fn runtime_error(err: &anyhow::Error) -> ExitCode {
    if is_broken_pipe(err) {
        return Exit::Ok.into();
    }
    let lib = err.chain().find_map(|e| e.downcast_ref::<nqueens::Error>());
    if let Some(nqueens::Error::Interrupted) = lib {
        return interrupted(err);
    }
    message!("{}", cmd::messages::error_text(err));
    if err.chain().any(|e| e.is::<exit::UsageError>()) {
        return Exit::Usage.into();
    }
    match lib {
        Some(nqueens::Error::RecheckMismatch { .. }) => Exit::Mismatch.into(),
        Some(e) if e.is_usage() => Exit::Usage.into(),
        _ => Exit::Failure.into(),
    }
}

/// Ends a run stopped by Ctrl-C or SIGTERM: its own words on what was kept, on a fresh line
/// (after the `^C` the terminal echoed), and nothing for a bare interruption (`--quiet`, all
/// saved: the user knows what they pressed).
fn interrupted(err: &anyhow::Error) -> ExitCode {
    // A chain of one is the bare library error; the count's own words come as context.
    if err.chain().nth(1).is_some() {
        message!(new_line; "{err}");
    }
    Exit::Interrupted.into()
}

/// Whether the error is a closed stdout (e.g. piped into `head`): not a failure.
fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|e| {
        e.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
