//! What a hurried or hostile user trips on: output that waits, a slow judge loop, files
//! replaced without a word, threads past memory, empty checkpoints, boards past the fast
//! engine, the batch system's warning signal, output shapes and small wording. One module per
//! kind; the helpers they share are here.

#[path = "../common/mod.rs"]
mod common;
mod files;

use std::path::Path;

use common::run;

pub(crate) fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}
