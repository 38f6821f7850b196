//! `nqueens count --stdin`: the judge format, one N per line in, one count per line out.
//!
//! A judge asks the same small boards many times: each N is counted once and its answer
//! kept, on a thread pool started once, so a million lines take about a second. JSON answers
//! are JSON Lines (one object per line); markdown answers are the rows of one table.

use std::collections::BTreeMap;
use std::io::Write;
use std::process::ExitCode;

use anyhow::Context as _;
use nqueens::plan::thread_pool;
use nqueens::report::{markdown, render_count, CountReport, Format};
use nqueens::{CountOptions, NoProgress, Stopwatch, MAX_N};
use rayon::ThreadPool;

use super::publish::oeis_status;
use crate::cmd::judge::{Answers, Question, Questions};
use crate::cmd::workers;
use crate::exit::Exit;
use crate::options::Global;
use crate::parse::parse_n;

/// Runs `nqueens count --stdin` with `options` (`engine` as given on the command line).
pub(super) fn run(
    options: &CountOptions,
    engine: &str,
    global: &Global,
) -> anyhow::Result<ExitCode> {
    workers::note_many(options.checked_threads()?, global.quiet);
    let mut counter = Counter {
        options,
        engine,
        quiet: global.quiet,
        pools: BTreeMap::new(),
        known: std::array::from_fn(|_| None),
    };
    let format = global.format();
    let mut questions = Questions::stdin();
    let mut answers = Answers::new(std::io::stdout().lock());
    let mut status = Exit::Ok;
    let mut header = format == Format::Markdown;
    loop {
        answers.before(&questions)?;
        let Some(question) = questions.next_line(parse_n) else {
            break;
        };
        let line = questions.line();
        let answer = match question? {
            Question::Size(n) => Some(
                counter
                    .answer(n)
                    .with_context(|| format!("<stdin>: line {line}: N = {n}"))?,
            ),
            Question::Blank => None,
        };
        let out = answers.out();
        if std::mem::take(&mut header) {
            markdown::count_header(out)?;
        }
        match answer {
            Some((report, exit)) => {
                write_answer(report, format, out)?;
                if *exit != Exit::Ok {
                    status = Exit::Mismatch;
                }
            }
            None => write_blank(format, out)?,
        }
        answers.answered()?;
    }
    answers.flush()?;
    Ok(status.into())
}

/// One answer: a line of text or JSON, or a row of the table.
fn write_answer(report: &CountReport, format: Format, out: &mut impl Write) -> std::io::Result<()> {
    match format {
        Format::Markdown => markdown::count_row(report, out),
        _ => render_count(report, format, out),
    }
}

/// The answer to a blank line, so answers stay aligned with questions: a blank line, a JSON
/// object whose `n` and `total` are null, or a row of dashes.
fn write_blank(format: Format, out: &mut impl Write) -> std::io::Result<()> {
    match format {
        Format::Text => writeln!(out),
        Format::Json => writeln!(
            out,
            "{{\"schema\":\"{}\",\"n\":null,\"total\":null}}",
            nqueens::report::COUNT_SCHEMA
        ),
        Format::Markdown => markdown::count_blank_row(out),
    }
}

/// Counts each N once, on pools kept by thread count.
struct Counter<'a> {
    options: &'a CountOptions,
    engine: &'a str,
    quiet: bool,
    pools: BTreeMap<usize, ThreadPool>,
    /// The answer for each N, once counted, with its exit status against OEIS.
    known: [Option<(CountReport, Exit)>; MAX_N as usize + 1],
}

impl Counter<'_> {
    /// The answer for `n`, counted on first use.
    fn answer(&mut self, n: u32) -> anyhow::Result<&(CountReport, Exit)> {
        let slot = n as usize;
        if self.known[slot].is_none() {
            let answer = self.count(n)?;
            self.known[slot] = Some(answer);
        }
        Ok(self.known[slot].as_ref().expect("just filled"))
    }

    /// Counts `n` on as many threads as fit in memory.
    fn count(&mut self, n: u32) -> anyhow::Result<(CountReport, Exit)> {
        let start = Stopwatch::start();
        super::tell_cost(n, self.engine, self.quiet);
        let plan = self.options.plan(n)?;
        super::tell_fallback(self.engine, plan.as_ref(), self.quiet);
        let what = format!("N = {n} on the {} engine", plan.engine());
        let asked = self.options.checked_threads()?;
        let threads = workers::fit_memory(asked, plan.worker_bytes(), &what, self.quiet)?;
        let pool = match self.pools.entry(threads) {
            std::collections::btree_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::btree_map::Entry::Vacant(e) => e.insert(thread_pool(threads)?),
        };
        let options = self.options.clone().threads(threads);
        let count = nqueens::count_plan_in(pool, plan.as_ref(), &options, &NoProgress, start)?;
        Ok((CountReport::from(&count), oeis_status(&count)))
    }
}
