//! `nqueens load` (hidden): keeps one core busy in one way for a while, so a node check
//! (`scripts/node-check.sh`) can time a count beside many of them with nothing but the
//! shipped binary. The loops are the library's ([`nqueens::bench::load`]).

use std::io::Write;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::Context;
use clap::ValueEnum;

use crate::exit::Exit;

/// Arguments of `nqueens load`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// count: `count N -j1` over and over; vector: the matcher's inner loop on
    /// cache-resident tables (shares a core); memory: a stream through a large buffer (shares
    /// memory bandwidth and the last-level cache)
    #[arg(value_enum)]
    pub kind: Kind,

    /// The board the count load counts
    #[arg(long, value_name = "N", default_value_t = 18, value_parser = crate::parse::parse_n)]
    pub n: u32,

    /// Stop after SECS seconds
    #[arg(long, value_name = "SECS", default_value = "60", value_parser = parse_run_time)]
    pub seconds: Duration,

    /// Size of the memory load's buffer, in MiB (1 to 65536)
    #[arg(long, value_name = "MIB", default_value_t = 64,
          value_parser = clap::value_parser!(u32).range(1..=65_536))]
    pub mib: u32,
}

/// What a load keeps busy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Kind {
    /// Everything a count uses: the same count, on one thread, again and again
    Count,
    /// A core's vector units (and nothing beyond the core)
    Vector,
    /// Memory bandwidth and the last-level cache
    Memory,
}

/// The longest run accepted: a day.
const MAX_SECONDS: f64 = 86_400.0;

fn parse_run_time(s: &str) -> Result<Duration, String> {
    crate::parse::parse_seconds(s, MAX_SECONDS)
}

/// Runs the load, then prints what it did on one line.
pub(crate) fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let start = Instant::now();
    let until = start + args.seconds;
    let line = match args.kind {
        Kind::Count => {
            let options = nqueens::CountOptions::new().threads(1);
            let mut counts = 0u64;
            while Instant::now() < until {
                let count = nqueens::count(args.n, &options)?;
                anyhow::ensure!(
                    count.is_consistent(),
                    "WRONG COUNT: N = {} gave {} solutions, not the published value",
                    args.n,
                    count.total
                );
                counts += 1;
            }
            format!("count: {counts} counts of N = {} on one thread", args.n)
        }
        Kind::Vector => {
            let counts = nqueens::bench::load::vector(until);
            let rate = counts as f64 / start.elapsed().as_secs_f64();
            format!("vector: {rate:.4e} block counts/s")
        }
        Kind::Memory => {
            let words = args.mib as usize * (1 << 20) / 8;
            let mut buffer = Vec::new();
            buffer.try_reserve_exact(words).map_err(|e| {
                anyhow::anyhow!("cannot take {} MiB for the memory load: {e}", args.mib)
            })?;
            buffer.resize(words, 0u64);
            let bytes = nqueens::bench::load::memory(&mut buffer, until);
            // Each byte is read and written once per pass.
            let rate = 2.0 * bytes as f64 / start.elapsed().as_secs_f64() / 1e9;
            format!(
                "memory: {rate:.2} GB/s read and written ({} MiB buffer)",
                args.mib
            )
        }
    };
    writeln!(std::io::stdout().lock(), "{line}").context("printing what the load did")?;
    Ok(Exit::Ok.into())
}
