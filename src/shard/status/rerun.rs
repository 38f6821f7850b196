//! The `sbatch` lines that rerun exactly the unfinished shards of a run that no process is
//! running, each array within the cluster's `MaxArraySize` (see [`crate::shard::slurm`]).

use std::path::Path;

use super::scan::What;
use super::{Run, StatusReport, MAX_RERUN_LINES};
use crate::shard::slurm::{array_chunks, shell_quote, ArrayChunk};

/// The file `scripts/slurm/submit.sh` leaves in a run directory: how it submitted the run,
/// one `KEY<TAB>VALUE` line each (`script`, `n`, `outdir`, `env` lines of `NAME=VALUE` for
/// the jobs, then `sbatch` and `count` lines in order), so a rerun submits the same way.
pub const SUBMIT_ARGS: &str = "submit.args";

/// The largest `submit.args` read.
const MAX_SUBMIT_ARGS_BYTES: u64 = 1 << 16;

/// How `submit.sh` submitted the run.
#[derive(Debug, Default)]
struct Submission {
    script: String,
    n: String,
    outdir: String,
    env: Vec<String>,
    sbatch: Vec<String>,
    count: Vec<String>,
}

/// Fills in `unfinished` and `rerun` (after `running`: a running shard is unfinished but
/// not rerun, since its lock would refuse the second run).
pub(super) fn suggest(dir: &Path, run: &Run, max_array_size: usize, r: &mut StatusReport) {
    let done = run.shards.keys().copied().filter(|&i| run.is_done(i));
    r.unfinished = gaps(done.clone(), run.k)
        .iter()
        .map(|&(a, b)| match a == b {
            true => a.to_string(),
            false => format!("{a}-{b}"),
        })
        .collect();
    let mut busy: Vec<usize> = done.chain(r.running.iter().copied()).collect();
    busy.sort_unstable();
    let chunks = array_chunks(
        &gaps(busy.into_iter(), run.k),
        max_array_size,
        MAX_RERUN_LINES,
    );
    let listed: usize = chunks.iter().map(|c| c.tasks).sum();
    let unfinished = (r.in_progress + r.not_started).saturating_sub(r.running.len());
    if !r.running.is_empty() {
        r.notes.push(format!(
            "the rerun lines leave out {} that a live process is running (it holds the \
             checkpoint's lock); run status again if any stops",
            crate::report::plural(r.running.len(), "shard")
        ));
    }
    let line = match read_submission(dir) {
        Some(sub) => {
            Box::new(move |c: &ArrayChunk| with_script(c, run.k, &sub)) as Box<dyn Fn(&_) -> _>
        }
        None => {
            r.notes.push(
                "no submit.args in the run directory (it was not submitted by \
                 scripts/slurm/submit.sh): the rerun lines use --wrap; add the \
                 --cpus-per-task, --time and -j of the first submission"
                    .into(),
            );
            let wrap = wrap_template(dir, run);
            Box::new(move |c: &ArrayChunk| with_wrap(c, &wrap))
        }
    };
    r.rerun = chunks.iter().map(line).collect();
    if listed < unfinished {
        r.notes.push(format!(
            "the rerun lines cover {listed} of the {unfinished} unfinished shards (at most \
             {MAX_RERUN_LINES} arrays are listed); run status again once they are done"
        ));
    }
}

/// The ranges of `0..k` not in `present` (ascending).
fn gaps(present: impl Iterator<Item = usize>, k: usize) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut next = 0usize;
    for index in present.chain(std::iter::once(k)) {
        if index > next {
            out.push((next, index - 1));
        }
        next = index.saturating_add(1);
    }
    out
}

/// A rerun through the script `submit.sh` used, with its options.
fn with_script(c: &ArrayChunk, k: usize, sub: &Submission) -> String {
    let mut export = format!("--export=ALL,SHARD_OFFSET={},SHARD_COUNT={k}", c.offset);
    for var in &sub.env {
        export.push(',');
        export.push_str(var);
    }
    let mut words = vec![
        "sbatch".to_string(),
        format!("--array={}", c.list),
        shell_quote(&export),
    ];
    words.extend(sub.sbatch.iter().map(|w| shell_quote(w)));
    for w in [&sub.script, &sub.n, &sub.outdir] {
        words.push(shell_quote(w));
    }
    words.extend(sub.count.iter().map(|w| shell_quote(w)));
    words.join(" ")
}

/// A rerun through `--wrap`, with `wrap` the command (shard index `$s`).
fn with_wrap(c: &ArrayChunk, wrap: &str) -> String {
    format!(
        "sbatch --array={} --export=ALL,SHARD_OFFSET={} --wrap='s=$((SHARD_OFFSET + \
         SLURM_ARRAY_TASK_ID)); exec {wrap}'",
        c.list, c.offset
    )
}

/// The `nqueens count` command of shard `$s`, writing where the run's files are.
fn wrap_template(dir: &Path, run: &Run) -> String {
    let first = run.shards.values().next().expect("a run has a file");
    let id = &first.identity;
    let find = |result: bool| {
        run.shards.iter().find_map(|(&i, s)| {
            let is_result = matches!(s.what, What::Result { .. });
            (is_result == result)
                .then(|| template(&s.file, i))
                .flatten()
        })
    };
    let fallback = |ext: &str| format!("{}/shard-$s.{ext}", dir.display());
    let out = find(true).unwrap_or_else(|| fallback("json"));
    let ckpt = find(false).unwrap_or_else(|| fallback("ckpt"));
    format!(
        "nqueens count {} --engine {} -q --shard $s/{} --checkpoint \"{ckpt}\" --out \"{out}\"",
        id.n, id.engine, run.k
    )
}

/// `file` with its shard number (the digits that end its name before the extension) as
/// `$s`; `None` if it has none, or holds a character the wrapped command cannot quote.
fn template(file: &str, index: usize) -> Option<String> {
    if file.contains(['\'', '"', '$', '`', '\\', '\n']) {
        return None;
    }
    let digits = index.to_string();
    let dot = file.rfind('.')?;
    let stem = &file[..dot];
    let head = stem.strip_suffix(&digits)?;
    let clean_cut = !head.ends_with(|c: char| c.is_ascii_digit());
    clean_cut.then(|| format!("{head}$s{}", &file[dot..]))
}

/// `RUN_DIR/submit.args`, if it is there and whole.
fn read_submission(dir: &Path) -> Option<Submission> {
    let file = std::fs::File::open(dir.join(SUBMIT_ARGS)).ok()?;
    let bytes = crate::shard::read_at_most(file, MAX_SUBMIT_ARGS_BYTES).ok()??;
    let text = String::from_utf8(bytes).ok()?;
    let mut sub = Submission::default();
    for line in text.lines() {
        let (key, value) = line.split_once('\t')?;
        let value = value.to_string();
        match key {
            "script" => sub.script = value,
            "n" => sub.n = value,
            "outdir" => sub.outdir = value,
            "env" => sub.env.push(value),
            "sbatch" => sub.sbatch.push(value),
            "count" => sub.count.push(value),
            _ => return None,
        }
    }
    let whole = ![&sub.script, &sub.n, &sub.outdir]
        .iter()
        .any(|v| v.is_empty());
    whole.then_some(sub)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shard_number_at_the_end_of_a_name_becomes_the_variable() {
        assert_eq!(
            template("run/ckpt/shard-17.ckpt", 17).as_deref(),
            Some("run/ckpt/shard-$s.ckpt")
        );
        assert_eq!(template("run/shard-117.json", 17), None);
        assert_eq!(template("run/it's-17.json", 17), None);
    }

    #[test]
    fn gaps_are_the_shards_not_present() {
        assert_eq!(gaps([1, 2, 5].into_iter(), 8), vec![(0, 0), (3, 4), (6, 7)]);
        assert_eq!(gaps([0, 1].into_iter(), 2), vec![]);
    }
}
