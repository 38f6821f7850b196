//! Helpers shared by the CLI tests.

use assert_cmd::Command;

/// The `nqueens` binary built by cargo for these tests.
pub fn nqueens() -> Command {
    Command::cargo_bin("nqueens").expect("the nqueens binary is built for integration tests")
}
