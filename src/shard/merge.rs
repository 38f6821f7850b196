//! Merging shard result files into a total that is provably complete.
//!
//! [`merge()`] accepts the files only if they all come from the same N, engine and plan
//! (hash; the tool versions may differ, since the hash names the work), every shard `0..K` is present, duplicates of a shard agree, every checksum
//! holds, and each shard covers exactly the tasks the shard layout gives it (so together they
//! cover every task of the plan exactly once). Anything else is a [`Problem`] naming the
//! files involved, and no total is given. Memory is proportional to the number of files, not
//! to K or the plan: missing shards are listed as ranges, so a long list of
//! missing shards stays one line.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::{PartialResult, TOOL_VERSION};
use crate::error::Error;
use crate::known;

/// The schema tag of a merge report.
pub const MERGE_SCHEMA: &str = "nqueens.merge/1";

/// What kind of problem a merge found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProblemKind {
    /// A file could not be read.
    Unreadable,
    /// A file is truncated, malformed or fails its checksum.
    Corrupted,
    /// A file belongs to another run (version, N, engine, plan or K).
    Foreign,
    /// A shard index has no file.
    Missing,
    /// Two files for the same shard disagree.
    Conflict,
    /// The shards do not cover the plan's tasks exactly once.
    Coverage,
    /// The merged total disagrees with the published value.
    WrongTotal,
    /// No files were given.
    Empty,
}

/// One problem found by [`merge()`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Problem {
    /// Its kind.
    pub kind: ProblemKind,
    /// A sentence naming the files and shards involved.
    pub message: String,
}

/// The outcome of a merge.
///
/// JSON fields: `schema` ([`MERGE_SCHEMA`]), `version` (of this tool), `n`, `engine`, `plan`,
/// `plan_hash`, `shards` (K), `versions` (the nqueens versions that wrote the shards used,
/// sorted), `files` (the ones read), `total` (decimal string; `null` when
/// there is any problem), `verified` (against OEIS A000170, `null` when unpublished),
/// `elapsed_s` (summed over the shards used), `duplicates` (agreeing duplicates, for
/// information) and `problems` (`[{kind, message}]`; empty means the merge is good).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MergeReport {
    /// Schema tag, [`MERGE_SCHEMA`].
    pub schema: String,
    /// Version of nqueens that merged.
    pub version: String,
    /// Board size of the run.
    pub n: Option<u32>,
    /// Engine of the run.
    pub engine: Option<String>,
    /// Plan parameters of the run.
    pub plan: Option<String>,
    /// Plan hash of the run.
    pub plan_hash: Option<String>,
    /// Number of shards K.
    pub shards: Option<usize>,
    /// The nqueens versions that wrote the shards of the run, sorted (several after an
    /// upgrade in the middle of a run).
    #[serde(default)]
    pub versions: Vec<String>,
    /// The files read.
    pub files: Vec<String>,
    /// The merged total, as a decimal string, only when there is no problem.
    pub total: Option<String>,
    /// Agreement of `total` with OEIS A000170.
    pub verified: Option<bool>,
    /// CPU wall-clock seconds summed over the shards used.
    pub elapsed_s: f64,
    /// Tasks re-solved on the portable code path with the same count (`--recheck`), summed
    /// over the shards used.
    #[serde(default)]
    pub rechecked: usize,
    /// Agreeing duplicate files, one sentence each.
    pub duplicates: Vec<String>,
    /// Everything that is wrong; empty for a good merge.
    pub problems: Vec<Problem>,
}

impl MergeReport {
    /// Whether the merge found no problem (so `total` is complete and trustworthy).
    pub fn is_ok(&self) -> bool {
        self.problems.is_empty()
    }

    fn problem(&mut self, kind: ProblemKind, message: String) {
        self.problems.push(Problem { kind, message });
    }
}

/// The files to merge from a list of paths: files as given, folders expanded to the `*.json`
/// files directly inside them (sorted, hidden files skipped).
///
/// # Errors
/// [`Error::Io`] if a folder cannot be listed.
pub fn expand_paths(paths: &[PathBuf]) -> Result<Vec<PathBuf>, Error> {
    let mut out = Vec::new();
    for path in paths {
        if !path.is_dir() {
            out.push(path.clone());
            continue;
        }
        let io = |error| Error::Io {
            path: path.clone(),
            error,
        };
        let mut found = Vec::new();
        for entry in std::fs::read_dir(path).map_err(io)? {
            let p = entry.map_err(io)?.path();
            let name = p.file_name().map(|n| n.to_string_lossy().into_owned());
            let visible = name.is_some_and(|n| !n.starts_with('.') && n.ends_with(".json"));
            // Anything but a folder: a broken link is listed, so merge reports it as
            // unreadable instead of silently skipping it: a
            // skipped shard would only show up later as a missing one.
            if visible && !p.is_dir() {
                found.push(p);
            }
        }
        found.sort();
        out.extend(found);
    }
    Ok(out)
}

/// What must agree between the files of one run: N, engine, plan hash, plan tasks and K.
/// Not the tool version: the plan hash names the work, so shards of one plan computed
/// before and after an upgrade add up.
type RunKey = (u32, String, String, usize, usize);

fn run_key(r: &PartialResult) -> RunKey {
    let id = &r.identity;
    (
        id.n,
        id.engine.clone(),
        id.plan_hash.clone(),
        id.plan_tasks,
        id.shard.count,
    )
}

/// Checks and adds up the shard result files `files`. Never fails: every problem, including
/// unreadable files, is listed in the report.
pub fn merge(files: &[PathBuf]) -> MergeReport {
    let mut report = MergeReport {
        schema: MERGE_SCHEMA.to_string(),
        version: TOOL_VERSION.to_string(),
        n: None,
        engine: None,
        plan: None,
        plan_hash: None,
        shards: None,
        versions: Vec::new(),
        files: files.iter().map(|f| f.display().to_string()).collect(),
        total: None,
        verified: None,
        elapsed_s: 0.0,
        rechecked: 0,
        duplicates: Vec::new(),
        problems: Vec::new(),
    };
    if files.is_empty() {
        report.problem(ProblemKind::Empty, "no shard result files to merge".into());
        return report;
    }
    let loaded = load_all(files, &mut report);
    let Some(reference) = majority(&loaded) else {
        return report;
    };
    let own = drop_foreign(loaded, &reference, &mut report);
    let first = &own[0].1.identity;
    report.n = Some(first.n);
    report.engine = Some(first.engine.clone());
    let plans = own.iter().map(|(_, r)| r.identity.plan.as_str());
    report.plan = Some(super::identity::describe_plans(plans));
    report.plan_hash = Some(first.plan_hash.clone());
    report.shards = Some(first.shard.count);
    let versions: std::collections::BTreeSet<&str> = own
        .iter()
        .map(|(_, r)| r.identity.version.as_str())
        .collect();
    report.versions = versions.into_iter().map(String::from).collect();
    let chosen = pick_shards(&own, first.shard.count, &mut report);
    if report.is_ok() {
        add_up(&chosen, &mut report);
    }
    report
}

/// Reads every file; unreadable and corrupted ones become problems.
fn load_all(files: &[PathBuf], report: &mut MergeReport) -> Vec<(String, PartialResult)> {
    let mut loaded = Vec::new();
    for file in files {
        let name = file.display().to_string();
        // A FIFO or device is named without being opened: opening a FIFO waits for a
        // writer that may never come.
        let unreadable = match std::fs::metadata(file) {
            Err(e) => Some(format!("cannot read it: {e}")),
            Ok(meta) => super::sealed::not_regular(&meta),
        };
        if let Some(why) = unreadable {
            report.problem(ProblemKind::Unreadable, format!("{name}: {why}"));
            continue;
        }
        match PartialResult::load(file) {
            Ok(r) => loaded.push((name, r)),
            Err(Error::ResultCorrupt { message, .. }) => {
                report.problem(ProblemKind::Corrupted, format!("{name}: {message}"))
            }
            Err(other) => report.problem(ProblemKind::Corrupted, format!("{name}: {other}")),
        }
    }
    loaded
}

/// The identity most files share (ties: the first file's).
fn majority(loaded: &[(String, PartialResult)]) -> Option<RunKey> {
    let mut votes: Vec<(RunKey, usize)> = Vec::new();
    for (_, r) in loaded {
        let id = run_key(r);
        match votes.iter_mut().find(|(v, _)| *v == id) {
            Some((_, n)) => *n += 1,
            None => votes.push((id, 1)),
        }
    }
    let best = votes.iter().map(|(_, n)| *n).max()?;
    votes.into_iter().find(|(_, n)| *n == best).map(|(v, _)| v)
}

/// Keeps the files of the reference run; names how each other file differs.
fn drop_foreign(
    loaded: Vec<(String, PartialResult)>,
    reference: &RunKey,
    report: &mut MergeReport,
) -> Vec<(String, PartialResult)> {
    let (own, foreign): (Vec<_>, Vec<_>) = loaded
        .into_iter()
        .partition(|(_, r)| run_key(r) == *reference);
    let (n, engine, hash, tasks, k) = reference;
    for (name, r) in foreign {
        let mut how = Vec::new();
        let mut differ = |what: &str, theirs: String, ours: String| {
            if theirs != ours {
                how.push(format!("{what} {theirs}, the others {what} {ours}"));
            }
        };
        let id = &r.identity;
        differ("N =", id.n.to_string(), n.to_string());
        differ("engine", id.engine.clone(), engine.clone());
        differ("K =", id.shard.count.to_string(), k.to_string());
        differ("plan tasks", id.plan_tasks.to_string(), tasks.to_string());
        differ("plan hash", id.plan_hash.clone(), hash.clone());
        let message = format!(
            "{name}: shard of another run: {} (written by nqueens {})",
            how.join("; "),
            id.version
        );
        report.problem(ProblemKind::Foreign, message);
    }
    own
}

/// At most this many ranges of missing shards are listed one by one.
const MAX_MISSING_LISTED: usize = 20;

/// One file per shard index; reports missing shards (as ranges) and compares duplicates.
fn pick_shards<'a>(
    own: &'a [(String, PartialResult)],
    k: usize,
    report: &mut MergeReport,
) -> Vec<&'a (String, PartialResult)> {
    let mut by_index: BTreeMap<usize, Vec<&(String, PartialResult)>> = BTreeMap::new();
    for entry in own {
        by_index
            .entry(entry.1.identity.shard.index)
            .or_default()
            .push(entry);
    }
    report_missing(by_index.keys().copied(), k, report);
    let mut chosen = Vec::new();
    for (index, group) in by_index {
        let (first_name, first) = group[0];
        for (name, other) in &group[1..] {
            let same = (other.tasks, other.total, other.digest)
                == (first.tasks, first.total, first.digest);
            if same {
                let note = format!("shard {index}/{k}: {name} duplicates {first_name} (equal)");
                report.duplicates.push(note);
            } else {
                let message = format!(
                    "shard {index}/{k}: {first_name} and {name} disagree (totals {} and {}, \
                     digests {:032x} and {:032x})",
                    first.total, other.total, first.digest.0, other.digest.0
                );
                report.problem(ProblemKind::Conflict, message);
            }
        }
        chosen.push(group[0]);
    }
    chosen
}

/// Reports the shard indices in `0..k` that are not in `present` (ascending), as ranges.
fn report_missing(present: impl Iterator<Item = usize>, k: usize, report: &mut MergeReport) {
    let mut gaps = Vec::new();
    let mut next = 0usize;
    for index in present.chain(std::iter::once(k)) {
        if index > next {
            gaps.push((next, index - 1));
        }
        next = index.saturating_add(1);
    }
    for &(from, to) in gaps.iter().take(MAX_MISSING_LISTED) {
        let message = if from == to {
            format!("shard {from}/{k} is missing")
        } else {
            format!(
                "shards {from}..{to} of K = {k} are missing ({} shards)",
                to - from + 1
            )
        };
        report.problem(ProblemKind::Missing, message);
    }
    if gaps.len() > MAX_MISSING_LISTED {
        let rest: usize = gaps[MAX_MISSING_LISTED..]
            .iter()
            .map(|(a, b)| b - a + 1)
            .sum();
        let message = format!(
            "and {} more ranges of missing shards ({rest} shards)",
            gaps.len() - MAX_MISSING_LISTED
        );
        report.problem(ProblemKind::Missing, message);
    }
}

/// Adds up the shards (checked: a forged total that overflows is a problem, not a wrapped
/// sum) and checks the total against the published value.
fn add_up(chosen: &[&(String, PartialResult)], report: &mut MergeReport) {
    let Some(total) = chosen
        .iter()
        .try_fold(0u128, |sum, (_, r)| sum.checked_add(r.total))
    else {
        let message = "the shards' totals add up to more than 2^128 − 1 (forged or corrupted \
                       files)"
            .to_string();
        report.problem(ProblemKind::Corrupted, message);
        return;
    };
    let mut sum = chosen[0].1.clone();
    for (_, r) in &chosen[1..] {
        sum += r;
    }
    report.total = Some(total.to_string());
    report.elapsed_s = sum.elapsed_s;
    report.rechecked = sum.rechecked;
    report.verified = known::check(known::total(sum.identity.n), total);
    if report.verified == Some(false) {
        let expected = known::total(sum.identity.n).unwrap_or_default();
        let message = format!(
            "the merged total {total} for N = {} disagrees with OEIS A000170 ({expected})",
            sum.identity.n
        );
        report.problem(ProblemKind::WrongTotal, message);
        // A refused merge carries no total (the wrong one is quoted in the problem): a
        // script that reads `total` must never take it for a result.
        report.total = None;
    }
}
