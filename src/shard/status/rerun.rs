//! The `sbatch` lines that rerun exactly the unfinished shards of a run that no process is
//! running, each array within the cluster's `MaxArraySize` (see [`crate::shard::slurm`]).
//!
//! A line is pasted into a shell, and Slurm runs its `--wrap` command through `sh -c`: every
//! path and word in it is quoted for both ([`crate::shard::shell`]), so no file or folder name
//! can make it run anything. Files are named as the run names them, learnt from its files
//! (folders, prefixes, zero padding), so each stopped shard resumes from its own checkpoint
//! and writes its result beside the others; a stopped shard whose checkpoint is named
//! otherwise gets a line of its own that names it. Where no safe line can be written (a
//! path that is not UTF-8), none is, and a note says why.

use std::collections::BTreeMap;
use std::path::Path;

use super::scan::What;
use super::submission::submission;
use super::{Rebuilt, Run, StatusOptions, StatusReport, MAX_RERUN_LINES};
use crate::shard::sealed;
use crate::shard::shell::{quote, NEWLINE_PRELUDE};
use crate::shard::slurm::{array_chunks, ArrayChunk};

/// One file of the run, by its absolute path.
struct Named {
    index: usize,
    path: String,
    is_result: bool,
}

/// Fills in `unfinished` and `rerun` (after `running`: a running shard is unfinished but
/// not rerun, since its lock would refuse the second run).
pub(super) fn suggest(
    dir: &Path,
    run: &Run,
    rebuilt: &Rebuilt,
    options: &StatusOptions,
    r: &mut StatusReport,
) {
    let done = run.shards.keys().copied().filter(|&i| run.is_done(i));
    r.unfinished = gaps(done.clone(), run.k)
        .iter()
        .map(|&(a, b)| match a == b {
            true => a.to_string(),
            false => format!("{a}-{b}"),
        })
        .collect();
    note_running(r);
    let files = match named(run) {
        Ok(files) => files,
        Err(file) => {
            r.notes.push(format!(
                "no rerun lines: the path of '{file}' is not UTF-8 text, which a printed \
                 command line cannot name safely; rename it (or its folder) and run status \
                 again"
            ));
            return;
        }
    };
    let script = submission(dir, r);
    if let (Some(why), None) = (&rebuilt.why, &script) {
        r.notes.push(format!(
            "no rerun lines: they would count another plan than the files' ({why}), whose \
             results merge refuses; give status the options the run was counted with, or \
             run it with the nqueens version that made the files"
        ));
        return;
    }
    let wrap = Wrap::new(run, &files, rebuilt.split_depth, r);
    let odd = odd_checkpoints(run, &files, r, |i| match &script {
        Some(sub) => sub.checkpoint(i),
        None => wrap.ckpt.name(i),
    });
    let mut busy: Vec<usize> = done
        .chain(r.running.iter().copied())
        .chain(odd.iter().map(|o| o.0))
        .collect();
    busy.sort_unstable();
    let chunks = array_chunks(
        &gaps(busy.into_iter(), run.k),
        options.max_array_size,
        MAX_RERUN_LINES,
    );
    r.rerun = match &script {
        Some(sub) => chunks.iter().map(|c| sub.line(c, run.k)).collect(),
        None => chunks.iter().map(|c| wrap.line(c, None)).collect(),
    };
    // A line of its own runs `nqueens count` as this version does: only for a plan it has.
    let room = match rebuilt.why {
        Some(_) => 0,
        None => MAX_RERUN_LINES.saturating_sub(r.rerun.len()),
    };
    for (index, path) in odd.iter().take(room) {
        let chunk = ArrayChunk {
            offset: *index,
            list: "0".into(),
            tasks: 1,
        };
        r.rerun.push(wrap.line(&chunk, Some(path)));
    }
    explain(
        &chunks,
        odd.len().min(room),
        script.is_some(),
        !odd.is_empty(),
        r,
    );
}

/// A note on the shards left out because a live process runs them.
fn note_running(r: &mut StatusReport) {
    if !r.running.is_empty() {
        r.notes.push(format!(
            "the rerun lines leave out {} that a live process is running (it holds the \
             checkpoint's lock); run status again if any stops",
            crate::report::plural(r.running.len(), "shard")
        ));
    }
}

/// Notes on what the lines leave to the user, and what they leave out.
fn explain(
    chunks: &[ArrayChunk],
    odd_lines: usize,
    by_script: bool,
    some_odd: bool,
    r: &mut StatusReport,
) {
    if !by_script || some_odd {
        r.notes.push(format!(
            "{} --wrap: add the --cpus-per-task, --time and -j of the first submission",
            match by_script {
                true => "the lines for checkpoints named otherwise than the script names them use",
                false =>
                    "no submit.args in the run directory (it was not submitted by \
                          scripts/slurm/submit.sh): the rerun lines use",
            }
        ));
    }
    let listed: usize = chunks.iter().map(|c| c.tasks).sum::<usize>() + odd_lines;
    let unfinished = (r.in_progress + r.not_started).saturating_sub(r.running.len());
    if listed < unfinished {
        r.notes.push(format!(
            "the rerun lines cover {listed} of the {unfinished} unfinished shards (at most \
             {MAX_RERUN_LINES} lines are listed); run status again once they are done"
        ));
    }
}

/// Every file of the run by its absolute path (the lines work from any folder); `Err` with
/// the first file whose path is not UTF-8.
fn named(run: &Run) -> Result<Vec<Named>, String> {
    run.files()
        .map(|s| {
            let absolute = std::path::absolute(&s.path).unwrap_or_else(|_| s.path.clone());
            let path = absolute.to_str().ok_or_else(|| s.file.clone())?;
            Ok(Named {
                index: s.identity.shard.index,
                path: path.to_string(),
                is_result: matches!(s.what, What::Result { .. }),
            })
        })
        .collect()
}

/// The stopped shards (no result, no live process) whose checkpoint is not the one a line
/// for their array would name (`expected`), with that checkpoint; a note names them.
fn odd_checkpoints(
    run: &Run,
    files: &[Named],
    r: &mut StatusReport,
    expected: impl Fn(usize) -> String,
) -> Vec<(usize, String)> {
    let mut odd = Vec::new();
    // `files` starts with the kept file of each shard, in shard order.
    for ((&index, s), own) in run.shards.iter().zip(files) {
        let stopped = matches!(s.what, What::Checkpoint { .. });
        if !stopped || r.running.binary_search(&index).is_ok() {
            continue;
        }
        let want = expected(index);
        if want != own.path && !sealed::is_same_file(Path::new(&want), Path::new(&own.path)) {
            odd.push((index, own.path.clone()));
        }
    }
    if !odd.is_empty() {
        let list: Vec<String> = odd.iter().take(10).map(|o| o.0.to_string()).collect();
        let (has, each) = match odd.len() {
            1 => ("has", "it"),
            _ => ("have", "each"),
        };
        r.notes.push(format!(
            "{} ({}{}) {has} a checkpoint named otherwise than the others: the last lines \
             rerun {each} from its own",
            crate::report::plural(odd.len(), "stopped shard"),
            list.join(", "),
            if odd.len() > 10 { ", …" } else { "" }
        ));
    }
    odd
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

/// How a run names the files of shard `I`: `{head}{I, zero-padded to width}{tail}`.
#[derive(Debug, Clone, PartialEq)]
struct Naming {
    head: String,
    width: usize,
    tail: String,
}

impl Naming {
    /// The file of shard `index`.
    fn name(&self, index: usize) -> String {
        format!("{}{index:0w$}{}", self.head, self.tail, w = self.width)
    }

    /// The shell word for the file of shard `$s` (its padded form in `$p<width>`).
    fn word(&self) -> String {
        let head = quote(&self.head, true).expect("a path holds no NUL");
        let tail = quote(&self.tail, true).expect("a path holds no NUL");
        format!("{head}\"${}\"{tail}", self.var())
    }

    /// The shell variable holding the shard number as this naming writes it.
    fn var(&self) -> String {
        match self.width > 1 {
            true => format!("p{}", self.width),
            false => "s".into(),
        }
    }

    /// The naming most of `files` share (`None` if none ends its name, before the extension,
    /// with its shard number). Its width is the padding some files show (`007`), else none.
    fn infer<'a>(files: impl Iterator<Item = &'a Named>) -> Option<Naming> {
        let mut groups: BTreeMap<(String, String), (usize, BTreeMap<usize, usize>)> =
            BTreeMap::new();
        for f in files {
            let Some((head, tail, padded)) = split_number(&f.path, f.index) else {
                continue;
            };
            let group = groups.entry((head, tail)).or_default();
            group.0 += 1;
            if let Some(width) = padded {
                *group.1.entry(width).or_default() += 1;
            }
        }
        let most = groups.values().map(|g| g.0).max()?;
        let ((head, tail), (_, widths)) = groups.into_iter().find(|g| g.1 .0 == most)?;
        let width = widths.into_iter().max_by_key(|w| w.1).map_or(1, |w| w.0);
        Some(Naming { head, width, tail })
    }

    /// This naming in folder `to` and with extension `ext` in place of folder `from` (where
    /// that folder has a sibling `to`, as `submit.sh` makes `checkpoints/` and `shards/`)
    /// and of its extension.
    fn moved(&self, from: &str, to: &str, ext: &str) -> Naming {
        let mut head = self.head.clone();
        if let Some((folder, prefix)) = self.head.rsplit_once(std::path::is_separator) {
            let sibling = Path::new(folder).with_file_name(to);
            let is_from = Path::new(folder).file_name().is_some_and(|n| n == from);
            if let (true, true, Some(sibling)) = (is_from, sibling.is_dir(), sibling.to_str()) {
                head = format!("{sibling}{}{prefix}", std::path::MAIN_SEPARATOR);
            }
        }
        let tail = match self.tail.rfind('.') {
            Some(dot) => format!("{}{ext}", &self.tail[..dot]),
            None => format!("{}{ext}", self.tail),
        };
        Naming {
            head,
            tail,
            width: self.width,
        }
    }
}

/// `path` cut around the shard number `index` that ends its name before the extension:
/// the text before it, the text after it, and its width if it is zero-padded (`007`).
fn split_number(path: &str, index: usize) -> Option<(String, String, Option<usize>)> {
    let dot = path.rfind('.')?;
    let stem = &path[..dot];
    let head = stem.trim_end_matches(|c: char| c.is_ascii_digit());
    let digits = &stem[head.len()..];
    let value = match digits.trim_start_matches('0') {
        "" if !digits.is_empty() => "0",
        v => v,
    };
    if value != index.to_string() {
        return None;
    }
    let padded = (digits.len() > value.len()).then_some(digits.len());
    Some((head.to_string(), path[dot..].to_string(), padded))
}

/// A rerun through `--wrap`: `nqueens count` of shard `$s` with the run's options, writing
/// where the run's files are.
struct Wrap {
    n: u32,
    engine: String,
    k: usize,
    split_depth: Option<u32>,
    ckpt: Naming,
    out: Naming,
}

impl Wrap {
    /// The command of `run`, whose files are `files`, with a note where a naming is guessed.
    fn new(run: &Run, files: &[Named], split_depth: Option<u32>, r: &mut StatusReport) -> Wrap {
        let first = &run
            .shards
            .values()
            .next()
            .expect("a run has a file")
            .identity;
        let ckpt = Naming::infer(files.iter().filter(|f| !f.is_result));
        let out = Naming::infer(files.iter().filter(|f| f.is_result));
        let (ckpt, out) = match (ckpt, out) {
            (Some(c), Some(o)) => (c, o),
            (Some(c), None) => {
                let o = c.moved("checkpoints", "shards", ".json");
                r.notes.push(format!(
                    "the rerun lines write results as '{}' (no result file names its shard \
                     number yet)",
                    o.name(0)
                ));
                (c, o)
            }
            (None, out) => {
                let o = out.unwrap_or_else(|| Naming {
                    head: format!(
                        "{}/shard-",
                        files[0].path.rsplit_once('/').map_or("", |p| p.0)
                    ),
                    width: 1,
                    tail: ".json".into(),
                });
                let c = o.moved("shards", "checkpoints", ".ckpt");
                r.notes.push(format!(
                    "no checkpoint names its shard: the rerun lines checkpoint to '{}' and \
                     write results as '{}'",
                    c.name(0),
                    o.name(0)
                ));
                (c, o)
            }
        };
        Wrap {
            n: first.n,
            engine: first.engine.clone(),
            k: run.k,
            split_depth,
            ckpt,
            out,
        }
    }

    /// The `sbatch` line of `chunk`, resuming from `checkpoint` where given (a shard whose
    /// checkpoint the naming does not name).
    fn line(&self, chunk: &ArrayChunk, checkpoint: Option<&str>) -> String {
        // An engine name is one this tool has (the files are checked), so it quotes.
        let engine = quote(&self.engine, true).expect("an engine name holds no NUL");
        let ckpt = match checkpoint {
            Some(path) => quote(path, true).expect("a path holds no NUL"),
            None => self.ckpt.word(),
        };
        let mut pads = Vec::new();
        for naming in [Some(&self.out), checkpoint.is_none().then_some(&self.ckpt)] {
            let Some(naming) = naming.filter(|n| n.width > 1) else {
                continue;
            };
            let set = format!("{}=$(printf %0{}d \"$s\"); ", naming.var(), naming.width);
            if !pads.contains(&set) {
                pads.push(set);
            }
        }
        let split = self
            .split_depth
            .map_or(String::new(), |d| format!(" --split-depth {d}"));
        let out = self.out.word();
        let mut inner = format!(
            "s=$((SHARD_OFFSET + SLURM_ARRAY_TASK_ID)); {}exec nqueens count {} --engine \
             {engine} -q --shard \"$s\"/{}{split} --checkpoint={ckpt} --out={out}",
            pads.concat(),
            self.n,
            self.k
        );
        if inner.contains("\"$nl\"") {
            inner.insert_str(0, NEWLINE_PRELUDE);
        }
        let wrap = quote(&inner, false).expect("the command holds no control character");
        format!(
            "sbatch --array={} --export=ALL,SHARD_OFFSET={} --wrap={wrap}",
            chunk.list, chunk.offset
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shard_number_at_the_end_of_a_name_is_cut_out_with_its_padding() {
        let cut = |p: &str, i| split_number(p, i);
        let own = |h: &str, t: &str, w| Some((h.to_string(), t.to_string(), w));
        assert_eq!(
            cut("run/ckpt/shard-17.ckpt", 17),
            own("run/ckpt/shard-", ".ckpt", None)
        );
        assert_eq!(
            cut("run/shard-017.json", 17),
            own("run/shard-", ".json", Some(3))
        );
        assert_eq!(
            cut("run/shard-000.json", 0),
            own("run/shard-", ".json", Some(3))
        );
        assert_eq!(cut("run/0.json", 0), own("run/", ".json", None));
        assert_eq!(cut("run/shard-117.json", 17), None);
        assert_eq!(cut("run/shard-7b.json", 7), None);
        assert_eq!(
            cut("run/it's $x-17.json", 17),
            own("run/it's $x-", ".json", None)
        );
    }

    #[test]
    fn the_naming_most_files_share_wins_and_keeps_its_padding() {
        let files: Vec<Named> = [
            (0, "/r/c/s-000.ckpt"),
            (12, "/r/c/s-012.ckpt"),
            (3, "/r/x3.ckpt"),
        ]
        .into_iter()
        .map(|(index, path)| Named {
            index,
            path: path.into(),
            is_result: false,
        })
        .collect();
        let naming = Naming::infer(files.iter()).unwrap();
        assert_eq!(naming.name(7), "/r/c/s-007.ckpt");
        assert_eq!(naming.name(1234), "/r/c/s-1234.ckpt");
        assert_eq!(naming.word(), "/r/c/s-\"$p3\".ckpt");
    }

    #[test]
    fn gaps_are_the_shards_not_present() {
        assert_eq!(gaps([1, 2, 5].into_iter(), 8), vec![(0, 0), (3, 4), (6, 7)]);
        assert_eq!(gaps([0, 1].into_iter(), 2), vec![]);
    }
}
