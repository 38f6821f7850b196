//! `nqueens count N --mask FILE`: count on a board with blocked cells.

use std::path::Path;
use std::process::ExitCode;

use nqueens::plan::SEARCH_WORKER_BYTES;
use nqueens::puzzles::mask::{count_masked, Mask};
use nqueens::Count;

use super::publish::publish;
use crate::cmd::{input, plural, workers};
use crate::options::Global;
use crate::progress::Bar;

/// Runs `nqueens count N --mask FILE`.
pub(super) fn run(n: u32, path: &Path, global: &Global) -> anyhow::Result<ExitCode> {
    let text = input::read_to_string(path, input::MAX_BOARD_BYTES, "a mask")?;
    let mask = Mask::parse(&text, n, &input::source_name(path))?;
    let what = format!("N = {n} with a mask");
    let threads = workers::fit(global.threads(), SEARCH_WORKER_BYTES, &what, global.quiet)?;
    let bar = Bar::new(global.quiet);
    let result = count_masked(&mask, threads, &bar);
    bar.finish();
    let count = result?;
    publish(&count, &commentary(&count, &mask), global)
}

/// One line for people: the board, the method, the time.
fn commentary(c: &Count, mask: &Mask) -> String {
    let blocked: u32 = mask.row_masks().iter().map(|r| c.n - r.count_ones()).sum();
    // Only a full mask has a published total to match.
    let check = match c.verified {
        Some(true) => "; matches OEIS A000170",
        Some(false) => "; DOES NOT MATCH OEIS A000170",
        None => "",
    };
    format!(
        "N = {} with {}: {}; {} ({}), {}, {:.3} s{check}",
        c.n,
        plural(blocked, "blocked cell"),
        plural(c.total, "placement"),
        c.plan,
        plural(c.tasks, "task"),
        plural(c.threads, "thread"),
        c.elapsed.as_secs_f64()
    )
}
