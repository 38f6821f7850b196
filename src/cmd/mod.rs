//! One module per subcommand; each owns its `Args` and a `run` function.

pub(crate) mod bench;
pub(crate) mod completions;
pub(crate) mod count;
pub(crate) mod estimate;
pub(crate) mod gpu;
pub(crate) mod input;
pub(crate) mod judge;
pub(crate) mod load;
pub(crate) mod merge;
pub(crate) mod messages;
pub(crate) mod place;
pub(crate) mod replace;
pub(crate) mod signals;
pub(crate) mod solutions;
pub(crate) mod status;
pub(crate) mod stream;
pub(crate) mod two_colour;
pub(crate) mod verify;
pub(crate) mod workers;

pub(crate) use nqueens::report::plural;
