//! How far a cluster run is: [`status`] reads the shard result files and checkpoints under
//! a run directory and reports shards done, in progress and not started, the share of the
//! plan's estimated cost done, a partial total, throughput and ETA, which shards in progress
//! are running and which stopped, damaged or foreign files, and the Slurm arrays that rerun
//! exactly the unfinished shards that are not running.
//!
//! It only reads: a running job keeps its checkpoint's lock (a live process is told from a
//! dead one by a shared lock tried and let go at once, [`holder`]), nothing is written, and a
//! file being written is never seen half-way, since every write renames a complete hidden
//! temporary file into place. Memory follows the number of files, not K or the plan.

mod mergeable;
mod rebuild;
mod rerun;
mod scan;
mod submission;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};

use super::checkpoint::{holder, Holder};
use super::merge::{Problem, ProblemKind};
use super::{ShardSpec, TOOL_VERSION};
use crate::error::Error;
use crate::plan::{Plan, TaskSeq};
use crate::CountOptions;
use rebuild::{rebuild_plan, Rebuilt};
use scan::{Seen, What};

pub use submission::SUBMIT_ARGS;

/// The schema tag of a status report.
pub const STATUS_SCHEMA: &str = "nqueens.status/1";

/// The default time after which a checkpoint that has not moved is reported as stale when
/// its lock cannot tell whether a process is on it.
pub const DEFAULT_STALE_AFTER: Duration = Duration::from_secs(2 * 3600);

/// At most this many `sbatch` lines are given; the rest are counted.
const MAX_RERUN_LINES: usize = 100;

/// What [`status`] needs besides the run directory.
#[derive(Debug, Clone)]
pub struct StatusOptions {
    /// Options the run's plan was made with beyond N and engine (e.g. a split depth), so the
    /// plan and its cost model can be rebuilt.
    pub count: CountOptions,
    /// A checkpoint not written for longer than this is reported as stale where its lock
    /// cannot be probed (a held lock is a running shard, a free one a stopped shard, whatever
    /// the age).
    pub stale_after: Duration,
    /// The cluster's `MaxArraySize`: every suggested array index stays below it.
    pub max_array_size: usize,
    /// The time now (a parameter so tests can move it).
    pub now: SystemTime,
}

/// A shard in progress that no process is running: its checkpoint's lock is free
/// (`stopped`), or could not be probed and the checkpoint has not been written for longer
/// than the threshold (`unknown`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StaleShard {
    /// Shard index.
    pub shard: usize,
    /// Its checkpoint.
    pub file: String,
    /// Seconds since the checkpoint was last written.
    pub idle_s: f64,
    /// What its lock said: `stopped` or `unknown`.
    pub process: Holder,
}

/// The finished shards of one CPU model (or one GPU, with the CPU of its host).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CpuShards {
    /// CPU model, as the result files name it (`unknown` for files of older versions).
    pub cpu: String,
    /// The GPU that joined these shards' tasks (`None`: counted on the CPU), as their plan
    /// label names it.
    #[serde(default)]
    pub gpu: Option<String>,
    /// Finished shards.
    pub shards: usize,
    /// Mean seconds per shard (shards have about equal expected cost, so this compares
    /// node types).
    pub mean_shard_s: f64,
}

/// How far a run is.
///
/// JSON fields: `schema` ([`STATUS_SCHEMA`]), `version`, `run_dir`, `files` (read),
/// `n`, `engine`, `plan`, `plan_hash`, `plan_tasks`, `shards` (K), `versions` (nqueens
/// versions that wrote the files), `done`, `in_progress`, `not_started` (shards),
/// `share_of` (`"estimated cost"`, or `"tasks"` when the plan could not be rebuilt),
/// `done_share` (0 to 1), `tasks_done`, `partial_total` (decimal string: the counts so
/// far, not the answer), `complete` (every shard done, and `merge` accepts them),
/// `results_dir`, `shard_seconds`, `span_s` (first start to now), `share_per_hour`, `eta_s`,
/// `stale_after_s`, `running` (shards whose checkpoint lock a live process holds), `stale`
/// (`[{shard, file, idle_s, process}]`, `process` being `"stopped"` or `"unknown"`), `cpus`
/// (`[{cpu, gpu, shards, mean_shard_s}]`, `gpu` null for shards counted on the CPU),
/// `unfinished` (ranges `"A-B"`), `max_array_size`,
/// `rerun` (`sbatch` lines), `notes`, `problems` (`[{kind, message}]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StatusReport {
    /// Schema tag, [`STATUS_SCHEMA`].
    pub schema: String,
    /// Version of nqueens that made the report.
    pub version: String,
    /// The run directory read.
    pub run_dir: String,
    /// Result and checkpoint files found.
    pub files: usize,
    /// Board size of the run.
    pub n: Option<u32>,
    /// Engine of the run.
    pub engine: Option<String>,
    /// Plan parameters of the run.
    pub plan: Option<String>,
    /// Plan hash of the run.
    pub plan_hash: Option<String>,
    /// Tasks in the plan.
    pub plan_tasks: Option<usize>,
    /// Number of shards K.
    pub shards: Option<usize>,
    /// nqueens versions that wrote the run's files, sorted.
    pub versions: Vec<String>,
    /// Shards with a result file.
    pub done: usize,
    /// Shards with a checkpoint but no result.
    pub in_progress: usize,
    /// Shards with neither.
    pub not_started: usize,
    /// What `done_share` is a share of: `estimated cost` (the plan's cost model) or `tasks`.
    pub share_of: String,
    /// The share of the plan done, 0 to 1.
    pub done_share: f64,
    /// Tasks done, in results and checkpoints.
    pub tasks_done: u64,
    /// The counts so far (results and checkpoints), a decimal string: partial until
    /// `complete`.
    pub partial_total: String,
    /// Whether every shard has a result and `nqueens merge` accepts them (then it gives the
    /// total; where it would refuse, a note says why).
    pub complete: bool,
    /// The folder of the first result file (what `nqueens merge` reads), absolute.
    pub results_dir: Option<String>,
    /// Once `complete`: the `nqueens merge` command that checks the results and gives the
    /// total, its folder absolute and quoted for a POSIX shell (`None` before, or where the
    /// folder's path is not UTF-8 text).
    #[serde(default)]
    pub merge: Option<String>,
    /// Seconds spent over all shards and sessions.
    pub shard_seconds: f64,
    /// Seconds from the earliest start any file records to now.
    pub span_s: Option<f64>,
    /// Share of the plan done per hour over that span.
    pub share_per_hour: Option<f64>,
    /// Seconds left at that pace.
    pub eta_s: Option<f64>,
    /// The stale threshold, seconds (for checkpoints whose lock cannot be probed).
    pub stale_after_s: f64,
    /// Shards in progress that a live process is running (it holds the checkpoint's lock):
    /// never stale, however long since their last save, and left out of `rerun`.
    pub running: Vec<usize>,
    /// Shards in progress that no process is running: stopped (at once) or, where the lock
    /// cannot tell, not written for longer than the threshold.
    pub stale: Vec<StaleShard>,
    /// Finished shards by CPU model.
    pub cpus: Vec<CpuShards>,
    /// Unfinished shard indices, as ranges `A-B` (or `A`).
    pub unfinished: Vec<String>,
    /// The `MaxArraySize` the `rerun` lines respect.
    pub max_array_size: usize,
    /// `sbatch` lines that rerun exactly the unfinished shards.
    pub rerun: Vec<String>,
    /// Remarks for people (e.g. why a share is of tasks).
    pub notes: Vec<String>,
    /// Files that could not be read, are damaged or belong to another run.
    pub problems: Vec<Problem>,
}

impl StatusReport {
    /// Whether every file was read and belongs to the run.
    pub fn is_clean(&self) -> bool {
        self.problems.is_empty()
    }
}

/// The status of the run under `dir` (see the [module docs](self)).
///
/// # Errors
/// [`Error::Io`] if `dir` cannot be listed; [`Error::NoRun`] if it holds no result or
/// checkpoint file that can be read.
pub fn status(dir: &Path, options: &StatusOptions) -> Result<StatusReport, Error> {
    let files = scan::list(dir)?;
    let mut scanned = scan::scan(&files);
    let mut report = empty_report(dir, files.len(), options);
    report.problems.append(&mut scanned.problems);
    let Some(key) = majority(&scanned.seen) else {
        return Err(Error::NoRun {
            dir: dir.to_path_buf(),
            files: files.len(),
            problems: report.problems.len(),
        });
    };
    let own = drop_foreign(scanned.seen, &key, &mut report);
    describe_run(&own[0], &own, &mut report);
    let run = Run::of(own, key.4);
    name_duplicates(&run, &mut report);
    let rebuilt = rebuild_plan(&run, options, &mut report);
    progress(&run, rebuilt.plan.as_deref(), options, &mut report);
    if report.complete {
        mergeable::check(&run.results_folders(), &mut report);
    }
    if !report.complete {
        report.merge = None;
    }
    rerun::suggest(dir, &run, &rebuilt, options, &mut report);
    Ok(report)
}

/// A report with nothing known yet.
fn empty_report(dir: &Path, files: usize, options: &StatusOptions) -> StatusReport {
    StatusReport {
        schema: STATUS_SCHEMA.into(),
        version: TOOL_VERSION.into(),
        run_dir: dir.display().to_string(),
        files,
        n: None,
        engine: None,
        plan: None,
        plan_hash: None,
        plan_tasks: None,
        shards: None,
        versions: Vec::new(),
        done: 0,
        in_progress: 0,
        not_started: 0,
        share_of: "estimated cost".into(),
        done_share: 0.0,
        tasks_done: 0,
        partial_total: "0".into(),
        complete: false,
        results_dir: None,
        merge: None,
        shard_seconds: 0.0,
        span_s: None,
        share_per_hour: None,
        eta_s: None,
        stale_after_s: options.stale_after.as_secs_f64(),
        running: Vec::new(),
        stale: Vec::new(),
        cpus: Vec::new(),
        unfinished: Vec::new(),
        max_array_size: options.max_array_size,
        rerun: Vec::new(),
        notes: Vec::new(),
        problems: Vec::new(),
    }
}

/// What the files of one run share: N, engine, plan hash, plan tasks, K.
type RunKey = (u32, String, String, usize, usize);

fn key(s: &Seen) -> RunKey {
    let id = &s.identity;
    let parts = (id.n, id.engine.clone(), id.plan_hash.clone());
    (parts.0, parts.1, parts.2, id.plan_tasks, id.shard.count)
}

/// The run most files belong to (ties: the first file's).
fn majority(seen: &[Seen]) -> Option<RunKey> {
    let mut votes: BTreeMap<RunKey, (usize, usize)> = BTreeMap::new();
    for (i, s) in seen.iter().enumerate() {
        votes.entry(key(s)).or_insert((0, i)).0 += 1;
    }
    let best = votes.values().map(|v| v.0).max()?;
    let first = votes.values().filter(|v| v.0 == best).map(|v| v.1).min()?;
    Some(key(&seen[first]))
}

/// Keeps the run's files; every other one is a problem saying how it differs.
fn drop_foreign(seen: Vec<Seen>, run: &RunKey, report: &mut StatusReport) -> Vec<Seen> {
    let (own, foreign): (Vec<Seen>, Vec<Seen>) = seen.into_iter().partition(|s| key(s) == *run);
    for s in foreign {
        let (n, engine, hash, tasks, k) = key(&s);
        let mut how = Vec::new();
        let mut differ = |what: &str, theirs: String, ours: String| {
            if theirs != ours {
                how.push(format!("{what} {theirs}, the run's {ours}"));
            }
        };
        differ("N =", n.to_string(), run.0.to_string());
        differ("engine", engine, run.1.clone());
        differ("K =", k.to_string(), run.4.to_string());
        differ("plan tasks", tasks.to_string(), run.3.to_string());
        differ("plan hash", hash, run.2.clone());
        let message = format!(
            "{}: a file of another run: {} (written by nqueens {})",
            s.file,
            how.join("; "),
            s.identity.version
        );
        report.problems.push(Problem {
            kind: ProblemKind::Foreign,
            message,
        });
    }
    own
}

/// Copies the run's identity into the report.
fn describe_run(first: &Seen, own: &[Seen], report: &mut StatusReport) {
    let id = &first.identity;
    report.n = Some(id.n);
    report.engine = Some(id.engine.clone());
    let plans = own.iter().map(|s| s.identity.plan.as_str());
    report.plan = Some(super::identity::describe_plans(plans));
    report.plan_hash = Some(id.plan_hash.clone());
    report.plan_tasks = Some(id.plan_tasks);
    report.shards = Some(id.shard.count);
    let versions: BTreeSet<&str> = own.iter().map(|s| s.identity.version.as_str()).collect();
    report.versions = versions.into_iter().map(String::from).collect();
}

/// The run's files by shard: the result where there is one, else the checkpoint that has
/// the most rounds done; and the other files of those shards.
pub(crate) struct Run {
    /// Number of shards K.
    pub(crate) k: usize,
    /// Tasks in the plan.
    pub(crate) plan_tasks: usize,
    /// One file per shard that has any, by shard index.
    pub(crate) shards: BTreeMap<usize, Seen>,
    /// The shards' other files: a second checkpoint or result of a shard.
    pub(crate) others: Vec<Seen>,
    /// Every file's last write and the start it implies (write time less its elapsed time).
    times: Vec<(SystemTime, SystemTime)>,
}

impl Run {
    fn of(own: Vec<Seen>, k: usize) -> Run {
        let plan_tasks = own[0].identity.plan_tasks;
        let times = own.iter().filter_map(times).collect();
        let mut shards: BTreeMap<usize, Seen> = BTreeMap::new();
        let mut others = Vec::new();
        for s in own {
            let index = s.identity.shard.index;
            let better = shards.get(&index).is_none_or(|old| rank(&s) > rank(old));
            let other = match better {
                true => shards.insert(index, s),
                false => Some(s),
            };
            others.extend(other);
        }
        Run {
            k,
            plan_tasks,
            shards,
            others,
            times,
        }
    }

    /// Every file of the run: one per shard, then the others.
    pub(crate) fn files(&self) -> impl Iterator<Item = &Seen> {
        self.shards.values().chain(&self.others)
    }

    /// The checkpoints of shard `index`, the one kept first.
    fn checkpoints(&self, index: usize) -> impl Iterator<Item = &Seen> {
        let kept = self.shards.get(&index).into_iter();
        let others = self
            .others
            .iter()
            .filter(move |s| s.identity.shard.index == index);
        kept.chain(others)
            .filter(|s| matches!(s.what, What::Checkpoint { .. }))
    }

    /// The folders holding the shards' results (absolute, sorted, each once): what
    /// `nqueens merge` is given. One run's results may be kept in several.
    fn results_folders(&self) -> Vec<PathBuf> {
        let folders: BTreeSet<PathBuf> = self
            .shards
            .values()
            .filter(|s| matches!(s.what, What::Result { .. }))
            .filter_map(|s| s.path.parent())
            .map(|p| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf()))
            .collect();
        folders.into_iter().collect()
    }

    /// Whether shard `index` has a result.
    pub(crate) fn is_done(&self, index: usize) -> bool {
        self.shards
            .get(&index)
            .is_some_and(|s| matches!(s.what, What::Result { .. }))
    }
}

/// When a file was written and when the work in it started.
fn times(s: &Seen) -> Option<(SystemTime, SystemTime)> {
    let written = s.modified?;
    let start = written.checked_sub(Duration::from_secs_f64(s.elapsed_s))?;
    Some((written, start))
}

/// Results first, then checkpoints by rounds done.
fn rank(s: &Seen) -> (bool, u64) {
    match &s.what {
        What::Result { .. } => (true, 0),
        What::Checkpoint { done } => (false, done.len()),
    }
}

/// At most this many shards with more than one file are named one by one.
const MAX_DUPLICATES_NAMED: usize = 10;

/// A note for each shard with two results or two checkpoints: which one counts, and that
/// the others should be moved aside.
fn name_duplicates(run: &Run, report: &mut StatusReport) {
    let mut groups: BTreeMap<(usize, bool), Vec<&Seen>> = BTreeMap::new();
    for s in run.files() {
        let is_result = matches!(s.what, What::Result { .. });
        groups
            .entry((s.identity.shard.index, is_result))
            .or_default()
            .push(s);
    }
    groups.retain(|_, files| files.len() > 1);
    for (&(index, is_result), files) in groups.iter().take(MAX_DUPLICATES_NAMED) {
        let (kind, what) = match is_result {
            true => (
                "results",
                "'nqueens merge' checks that they agree and adds one".to_string(),
            ),
            false if run.is_done(index) => ("checkpoints", "the shard has its result".into()),
            false => {
                let kept = &run.shards[&index].file;
                let what = format!("a rerun resumes '{kept}', which has the most tasks done");
                ("checkpoints", what)
            }
        };
        let names: Vec<String> = files.iter().map(|s| format!("'{}'", s.file)).collect();
        report.notes.push(format!(
            "shard {index} has {} {kind}, {}: {what}; move the spare ones aside once no \
             process writes them",
            files.len(),
            names.join(", ")
        ));
    }
    if groups.len() > MAX_DUPLICATES_NAMED {
        report.notes.push(format!(
            "and {} more shards have two results or two checkpoints",
            groups.len() - MAX_DUPLICATES_NAMED
        ));
    }
}

/// Fills in the shard counts, shares, totals, throughput, ETA, stale shards and CPUs.
fn progress(run: &Run, plan: Option<&dyn Plan>, options: &StatusOptions, r: &mut StatusReport) {
    let weigh = |task: usize| plan.map_or(1, |p| u128::from(p.cost(task)));
    let whole: u128 = match plan {
        Some(p) => p.cost_runs().map(|(n, c)| n as u128 * u128::from(c)).sum(),
        None => run.plan_tasks as u128,
    };
    let mut done_cost = 0u128;
    let mut total = 0u128;
    for (&index, s) in &run.shards {
        let spec = ShardSpec {
            index,
            count: run.k,
        };
        // Without the plan a task weighs 1, so no task is visited: a file may claim any plan
        // size up to the range checks' 2^40, and the work stays what the files hold.
        let (tasks, cost) = match &s.what {
            What::Result { .. } => {
                r.done += 1;
                let tasks = spec.len(run.plan_tasks);
                let cost = match plan {
                    // By the plan's cost runs: no task is visited either.
                    Some(p) => spec.seq(p).workload(p).1,
                    None => tasks as u128,
                };
                (tasks as u64, cost)
            }
            What::Checkpoint { done } => {
                r.in_progress += 1;
                liveness(index, run, options, r);
                let cost = match plan {
                    Some(_) => done
                        .0
                        .iter()
                        .filter_map(|round| spec.task(round as usize, run.plan_tasks))
                        .map(weigh)
                        .sum(),
                    None => u128::from(done.len()),
                };
                (done.len(), cost)
            }
        };
        r.tasks_done += tasks;
        done_cost += cost;
        total = total.saturating_add(s.total);
        r.shard_seconds += s.elapsed_s;
    }
    r.not_started = run.k - run.shards.len();
    r.complete = r.done == run.k;
    let folders = run.results_folders();
    r.results_dir = folders.first().map(|p| p.display().to_string());
    r.merge = match r.complete {
        true => merge_line(&folders),
        false => None,
    };
    r.partial_total = total.to_string();
    r.done_share = if whole == 0 {
        1.0
    } else {
        done_cost as f64 / whole as f64
    };
    pace(run, options.now, r);
    r.cpus = cpus(run);
}

/// Files shard `index` (a checkpoint, no result) as running or stale: by its locks where
/// they tell, else by the checkpoint's age. A shard is running if a live process holds the
/// lock of *any* of its checkpoints (a second run may have been started under another name).
fn liveness(index: usize, run: &Run, options: &StatusOptions, r: &mut StatusReport) {
    let s = run
        .checkpoints(index)
        .next()
        .expect("a shard in progress has a checkpoint");
    let idle = s
        .modified
        .and_then(|m| options.now.duration_since(m).ok())
        .unwrap_or_default();
    let holders: Vec<Holder> = run.checkpoints(index).map(|c| holder(&c.path)).collect();
    let process = match holders.contains(&Holder::Running) {
        true => Holder::Running,
        false => holders[0],
    };
    if process == Holder::Running {
        r.running.push(index);
    } else if process == Holder::Stopped || idle > options.stale_after {
        r.stale.push(StaleShard {
            shard: index,
            file: s.file.clone(),
            idle_s: idle.as_secs_f64(),
            process,
        });
    }
}

/// The pace from the earliest start any file records to now, and the time left at it.
fn pace(run: &Run, now: SystemTime, r: &mut StatusReport) {
    let Some(start) = run.times.iter().map(|t| t.1).min() else {
        return;
    };
    let last = run.times.iter().map(|t| t.0).max().unwrap_or(now);
    let span = now.max(last).duration_since(start).unwrap_or_default();
    let hours = span.as_secs_f64() / 3600.0;
    r.span_s = Some(span.as_secs_f64());
    if hours > 0.0 && r.done_share > 0.0 {
        let per_hour = r.done_share / hours;
        r.share_per_hour = Some(per_hour);
        r.eta_s = Some((1.0 - r.done_share).max(0.0) / per_hour * 3600.0);
    }
}

/// Finished shards by CPU model, and by GPU for shards joined on one, the most shards first.
fn cpus(run: &Run) -> Vec<CpuShards> {
    let mut by_cpu: BTreeMap<(Option<&str>, &str), (usize, f64)> = BTreeMap::new();
    for s in run.shards.values() {
        if let What::Result { cpu } = &s.what {
            let name = if cpu.is_empty() { "unknown" } else { cpu };
            let gpu = super::identity::gpu_of(&s.identity.plan);
            let entry = by_cpu.entry((gpu, name)).or_default();
            *entry = (entry.0 + 1, entry.1 + s.elapsed_s);
        }
    }
    let mut out: Vec<CpuShards> = by_cpu
        .into_iter()
        .map(|((gpu, cpu), (shards, seconds))| CpuShards {
            cpu: cpu.to_string(),
            gpu: gpu.map(String::from),
            shards,
            mean_shard_s: seconds / shards as f64,
        })
        .collect();
    out.sort_by_key(|c| std::cmp::Reverse(c.shards));
    out
}

/// The `nqueens merge` command for the folders `dirs`, safe to paste whatever they hold;
/// `None` where a path is not UTF-8 text (no printed line can name it).
fn merge_line(dirs: &[PathBuf]) -> Option<String> {
    use super::shell::{quote, NEWLINE_PRELUDE};
    let mut line = "nqueens merge".to_string();
    for dir in dirs {
        let word = quote(dir.to_str()?, true).expect("a path holds no NUL");
        line.push(' ');
        line.push_str(&word);
    }
    if line.contains("\"$nl\"") {
        line.insert_str(0, NEWLINE_PRELUDE);
    }
    Some(line)
}
