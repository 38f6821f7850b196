//! How `scripts/slurm/submit.sh` submitted a run, as it records in the run directory
//! ([`SUBMIT_ARGS`]), so that [`rerun`](super::rerun) lines submit the same way.

use std::path::Path;

use super::StatusReport;
use crate::shard::sealed;
use crate::shard::shell::quote;
use crate::shard::slurm::ArrayChunk;

/// The file `scripts/slurm/submit.sh` leaves in a run directory: how it submitted the run,
/// one `KEY<TAB>VALUE` line each (`script`, `n`, `outdir`, `env` lines of `NAME=VALUE` for
/// the jobs, then `sbatch` and `count` lines in order), so a rerun submits the same way.
pub const SUBMIT_ARGS: &str = "submit.args";

/// The largest `submit.args` read.
const MAX_SUBMIT_ARGS_BYTES: u64 = 1 << 16;

/// How `submit.sh` submitted the run.
#[derive(Debug, Default)]
pub(super) struct Submission {
    script: String,
    n: String,
    outdir: String,
    env: Vec<String>,
    sbatch: Vec<String>,
    count: Vec<String>,
}

impl Submission {
    /// Whether every word can be written in a line to paste.
    fn is_quotable(&self) -> bool {
        let words = [&self.script, &self.n, &self.outdir].into_iter();
        let lists = self.env.iter().chain(&self.sbatch).chain(&self.count);
        words.chain(lists).all(|w| quote(w, false).is_some())
    }

    /// The submission of the run moved to the folder `outdir`: the folder, and every
    /// `sbatch` option naming a path in the old one (`--output=OLD/count-%A_%a.out`).
    fn move_to(&mut self, outdir: String) {
        let old = std::mem::replace(&mut self.outdir, outdir);
        let moved = |path: &str| -> Option<String> {
            let rest = path.strip_prefix(old.as_str())?;
            (rest.is_empty() || rest.starts_with('/')).then(|| format!("{}{rest}", self.outdir))
        };
        for word in &mut self.sbatch {
            let new = match word.split_once('=') {
                Some((flag, value)) => moved(value).map(|v| format!("{flag}={v}")),
                None => moved(word),
            };
            if let Some(new) = new {
                *word = new;
            }
        }
    }

    /// The checkpoint `count-array.sbatch` gives shard `index`.
    pub(super) fn checkpoint(&self, index: usize) -> String {
        format!("{}/checkpoints/shard-{index}.ckpt", self.outdir)
    }

    /// A rerun of `chunk` through the script `submit.sh` used, with its options.
    pub(super) fn line(&self, c: &ArrayChunk, k: usize) -> String {
        let q = |w: &str| quote(w, false).expect("checked by is_quotable");
        let mut export = format!("--export=ALL,SHARD_OFFSET={},SHARD_COUNT={k}", c.offset);
        for var in &self.env {
            export.push(',');
            export.push_str(var);
        }
        let mut words = vec![
            "sbatch".to_string(),
            format!("--array={}", c.list),
            q(&export),
        ];
        words.extend(self.sbatch.iter().map(|w| q(w)));
        for w in [&self.script, &self.n, &self.outdir] {
            words.push(q(w));
        }
        words.extend(self.count.iter().map(|w| q(w)));
        words.join(" ")
    }
}

/// How `submit.sh` submitted the run, if it did and every word can be pasted (else a note),
/// moved to the folder read where the run was moved or copied since (with a note).
pub(super) fn submission(dir: &Path, r: &mut StatusReport) -> Option<Submission> {
    let mut sub = read_submission(dir)?;
    let canonical = |p: &Path| std::fs::canonicalize(p).ok();
    let recorded = canonical(Path::new(&sub.outdir));
    if recorded.is_none() || recorded != canonical(dir) {
        let here = std::path::absolute(dir).ok()?.to_str()?.to_string();
        r.notes.push(format!(
            "{SUBMIT_ARGS} records the run folder '{}', but the run read is in '{here}' (moved \
             or copied since): the rerun lines write to the folder read",
            sub.outdir
        ));
        sub.move_to(here);
    }
    if sub.is_quotable() {
        return Some(sub);
    }
    r.notes.push(format!(
        "{SUBMIT_ARGS} holds a NUL or a newline, which a line to paste cannot hold: the rerun \
         lines use --wrap"
    ));
    None
}

/// `RUN_DIR/submit.args`, if it is there and whole (a FIFO or device there is not read).
fn read_submission(dir: &Path) -> Option<Submission> {
    let file = sealed::open_regular(&dir.join(SUBMIT_ARGS)).ok()?;
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
