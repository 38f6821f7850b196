//! `nqueens verify [FILE|-]`: check claimed solutions in O(n) time and memory.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use nqueens::puzzles::verify::{check_answers, Answer};
use nqueens::report::{render_verdict, Verdict};

use crate::cmd::input;
use crate::cmd::messages::message;
use crate::exit::Exit;
use crate::options::Global;

/// Arguments of `nqueens verify`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Permutations to check, one per line: the 1-based row of the queen in each column, or
    /// `no solution` (- for stdin)
    #[arg(value_name = "FILE", default_value = "-")]
    pub file: PathBuf,

    /// The board size every line must have
    #[arg(long = "size", value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub size: Option<u64>,
}

/// Lines read, and those not confirmed.
#[derive(Debug, Default)]
struct Tally {
    checked: u64,
    invalid: u64,
    unchecked: u64,
}

/// Runs `nqueens verify`: one verdict per line; exit 1 if any is not a right answer or
/// could not be checked.
pub(crate) fn run(args: &Args, global: &Global) -> anyhow::Result<ExitCode> {
    let source = input::source_name(&args.file);
    let reader = input::open(&args.file)?;
    let mut out = std::io::stdout().lock();
    let mut tally = Tally::default();
    let mut io_result = Ok(());
    let read = check_answers(reader, &source, args.size, |line, answer| {
        let verdict = match answer {
            Answer::Checked(check) => Verdict::new(line, check),
            Answer::NoSolution => Verdict::no_solution(line, args.size),
            _ => unreachable!("every answer is handled"),
        };
        tally.checked += u64::from(verdict.checked);
        tally.invalid += u64::from(verdict.checked && !verdict.valid);
        tally.unchecked += u64::from(!verdict.checked);
        io_result = render_verdict(&verdict, global.format(), &mut out);
        // Stop reading as soon as stdout fails (e.g. `| head -1` closed it): the input may be
        // endless (`yes … | nqueens verify | head -1`). The sentinel is replaced by the I/O error below.
        match io_result {
            Ok(()) => Ok(()),
            Err(_) => Err(nqueens::Error::Interrupted),
        }
    });
    io_result.context("writing to stdout")?;
    read?;
    if tally.checked + tally.unchecked == 0 {
        anyhow::bail!("{source}: no permutation to check");
    }
    if !global.quiet && tally.checked + tally.unchecked > 1 {
        let unchecked = match tally.unchecked {
            0 => String::new(),
            k => format!(", {k} 'no solution' not checked"),
        };
        message!(
            "{} checked, {} invalid{unchecked}",
            tally.checked,
            tally.invalid
        );
    }
    Ok(if tally.invalid + tally.unchecked == 0 {
        Exit::Ok
    } else {
        Exit::Failure
    }
    .into())
}
