//! Every line the binary writes to stderr for people goes through these macros, so each one
//! starts with `nqueens: ` (ripgrep's `messages.rs`). Stdout carries results only.

/// Prints `nqueens: MESSAGE` on stderr. With `new_line;` first, starts on a fresh line (after a
/// `^C` the terminal echoed).
macro_rules! message {
    (new_line; $($arg:tt)*) => {
        eprintln!("\nnqueens: {}", format_args!($($arg)*))
    };
    ($($arg:tt)*) => {
        eprintln!("nqueens: {}", format_args!($($arg)*))
    };
}

/// Prints `nqueens: note: MESSAGE` on stderr: something worth knowing that is not a problem.
macro_rules! note {
    ($($arg:tt)*) => {
        $crate::cmd::messages::message!("note: {}", format_args!($($arg)*))
    };
}

/// Prints `nqueens: warning: MESSAGE` on stderr: a problem that does not stop the command.
macro_rules! warning {
    ($($arg:tt)*) => {
        $crate::cmd::messages::message!("warning: {}", format_args!($($arg)*))
    };
}

pub(crate) use {message, note, warning};
