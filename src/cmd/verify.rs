//! `nqueens verify [FILE|-]`: check claimed solutions in O(n) time and memory.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use nqueens::puzzles::verify::{check, read_perms};
use nqueens::report::{render_verdict, Verdict};

use crate::cmd::input;
use crate::cmd::messages::message;
use crate::exit::Exit;
use crate::options::Global;

/// Arguments of `nqueens verify`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Permutations to check, one per line: the 1-based row of the queen in each column
    /// (- for stdin)
    #[arg(value_name = "FILE", default_value = "-")]
    pub file: PathBuf,

    /// The board size every line must have
    #[arg(long = "size", value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub size: Option<u64>,
}

/// Runs `nqueens verify`: one verdict per permutation; exit 1 if any is not a solution.
pub(crate) fn run(args: &Args, global: &Global) -> anyhow::Result<ExitCode> {
    let source = input::source_name(&args.file);
    let reader = input::open(&args.file)?;
    let mut out = std::io::stdout().lock();
    let (mut checked, mut invalid) = (0u64, 0u64);
    let mut io_result = Ok(());
    let read = read_perms(reader, &source, |line, rows| {
        let verdict = check(rows, args.size);
        checked += 1;
        invalid += u64::from(!verdict.is_valid());
        io_result = render_verdict(&Verdict::new(line, &verdict), global.format(), &mut out);
        // Stop reading as soon as stdout fails (e.g. `| head -1` closed it): the input may be
        // endless (`yes … | nqueens verify | head -1`). The sentinel is replaced by the I/O error below.
        match io_result {
            Ok(()) => Ok(()),
            Err(_) => Err(nqueens::Error::Interrupted),
        }
    });
    io_result.context("writing to stdout")?;
    read?;
    if checked == 0 {
        anyhow::bail!("{source}: no permutation to check");
    }
    if !global.quiet && checked > 1 {
        message!("{checked} checked, {invalid} invalid");
    }
    Ok(if invalid == 0 {
        Exit::Ok
    } else {
        Exit::Failure
    }
    .into())
}
