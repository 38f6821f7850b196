//! Exit statuses of the `nqueens` binary, in one place.

use std::process::ExitCode;

/// Every status the binary exits with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// Success.
    Ok = 0,
    /// A run-time failure (I/O, no solution for `place`, a failed `verify`).
    Failure = 1,
    /// Bad usage: an invalid argument or malformed input.
    Usage = 2,
    /// A count disagrees with the published value, or a merge found a problem.
    Mismatch = 3,
    /// Interrupted by Ctrl-C, SIGTERM or SIGUSR1, after saving what was finished.
    Interrupted = 130,
}

/// A usage error found by the binary itself (exit status 2).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct UsageError(pub String);

impl From<Exit> for ExitCode {
    fn from(e: Exit) -> Self {
        ExitCode::from(e as u8)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_are_the_documented_numbers() {
        let table = [
            (Exit::Ok, 0),
            (Exit::Failure, 1),
            (Exit::Usage, 2),
            (Exit::Mismatch, 3),
            (Exit::Interrupted, 130),
        ];
        for (exit, code) in table {
            assert_eq!(exit as u8, code);
        }
    }
}
