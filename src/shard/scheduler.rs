//! The shard of a job-array task, from the variables its scheduler sets (`--shard auto`).
//!
//! Every batch system numbers the tasks of an array its own way:
//!
//! | scheduler | index | how many | numbering |
//! |---|---|---|---|
//! | Slurm | `SLURM_ARRAY_TASK_ID` | `SLURM_ARRAY_TASK_MIN`, `_MAX`, `_COUNT` | from `_MIN` |
//! | Grid Engine | `SGE_TASK_ID` | `SGE_TASK_FIRST`, `_LAST`, `_STEPSIZE` | from `_FIRST`, by `_STEPSIZE` (1-based) |
//! | LSF | `LSB_JOBINDEX` | `LSB_JOBINDEX_END` (and `_STEP`) | from 1 |
//! | PBS Pro, OpenPBS | `PBS_ARRAY_INDEX` | not said | from 0 |
//! | Torque | `PBS_ARRAYID` | not said | from 0 |
//! | Kubernetes Indexed Job | `JOB_COMPLETION_INDEX` | not said | from 0 |
//!
//! The first three say how many tasks the array has, so `auto` needs nothing more; the others
//! need K from the user (`auto/K`), and their arrays are submitted from 0 (`qsub -J 0-15`,
//! `qsub -t 0-15`; Kubernetes counts from 0 itself). With `auto/K` on a scheduler that says
//! K, the two must agree. A non-array job of Grid Engine sets its variables to `undefined`
//! and one of LSF sets `LSB_JOBINDEX=0`: both count as unset. Variables of two schedulers at
//! once, or of none, are an error that names them.

use super::ShardSpec;
use crate::error::Error;

/// Reads a variable of the environment (a parameter, so tests need not touch the process's).
type Vars<'a> = &'a dyn Fn(&str) -> Option<String>;

/// A task's 0-based index, and the array's size K where the scheduler says it.
type IndexAndCount = Result<(usize, Option<usize>), Error>;

/// One batch system's array variables.
#[derive(Debug, Clone, Copy)]
pub struct Scheduler {
    /// Its name, for messages.
    pub name: &'static str,
    /// The variable holding the task's index (set in every array task).
    pub index_var: &'static str,
    /// Every variable of its arrays that `--shard auto` reads.
    pub vars: &'static [&'static str],
    /// Whether its variables say how many tasks the array has (then `auto` alone works).
    pub says_count: bool,
    /// The task's 0-based index, and K where the scheduler says it.
    read: fn(Vars) -> IndexAndCount,
}

/// The schedulers whose arrays `--shard auto` reads, in the order they are tried.
pub const SCHEDULERS: [Scheduler; 6] = [
    Scheduler {
        name: "Slurm",
        index_var: "SLURM_ARRAY_TASK_ID",
        vars: &[
            "SLURM_ARRAY_TASK_ID",
            "SLURM_ARRAY_TASK_MIN",
            "SLURM_ARRAY_TASK_MAX",
            "SLURM_ARRAY_TASK_COUNT",
        ],
        says_count: true,
        read: slurm,
    },
    Scheduler {
        name: "Grid Engine",
        index_var: "SGE_TASK_ID",
        vars: &[
            "SGE_TASK_ID",
            "SGE_TASK_FIRST",
            "SGE_TASK_LAST",
            "SGE_TASK_STEPSIZE",
        ],
        says_count: true,
        read: grid_engine,
    },
    Scheduler {
        name: "LSF",
        index_var: "LSB_JOBINDEX",
        vars: &["LSB_JOBINDEX", "LSB_JOBINDEX_END", "LSB_JOBINDEX_STEP"],
        says_count: true,
        read: lsf,
    },
    Scheduler {
        name: "PBS Pro/OpenPBS",
        index_var: "PBS_ARRAY_INDEX",
        vars: &["PBS_ARRAY_INDEX"],
        says_count: false,
        read: pbs,
    },
    Scheduler {
        name: "Torque",
        index_var: "PBS_ARRAYID",
        vars: &["PBS_ARRAYID"],
        says_count: false,
        read: torque,
    },
    Scheduler {
        name: "Kubernetes",
        index_var: "JOB_COMPLETION_INDEX",
        vars: &["JOB_COMPLETION_INDEX"],
        says_count: false,
        read: kubernetes,
    },
];

/// Every variable `--shard auto` reads, of every scheduler (tests remove them all, so a test
/// run inside an array job behaves like one outside it).
pub fn array_vars() -> impl Iterator<Item = &'static str> {
    SCHEDULERS.iter().flat_map(|s| s.vars.iter().copied())
}

/// The value of `name`, or `None` where it is unset or set to what a scheduler sets outside
/// arrays (`undefined` in Grid Engine, `0` for `LSB_JOBINDEX`).
fn read(var: Vars, name: &str) -> Option<String> {
    let value = var(name)?;
    let text = value.trim();
    let outside = text.is_empty()
        || text.eq_ignore_ascii_case("undefined")
        || (name == "LSB_JOBINDEX" && text == "0");
    (!outside).then(|| text.to_string())
}

/// The whole number in `name` (an error if it is set to anything else).
fn number(var: Vars, name: &str) -> Result<Option<usize>, Error> {
    read(var, name)
        .map(|text| {
            text.parse()
                .map_err(|_| Error::Shard(format!("{name} = '{text}' is not a whole number")))
        })
        .transpose()
}

/// [`number`] for a variable that must be set.
fn required(var: Vars, name: &str, who: &str) -> Result<usize, Error> {
    number(var, name)?.ok_or_else(|| {
        Error::Shard(format!(
            "{name} is not set, though {who}'s array index is: is this a {who} array task?"
        ))
    })
}

/// The shard of the array task whose variables `var` reads (see the [module docs](self)):
/// `count` is K where the user gave it (`auto/K`), else `None` (`auto`).
///
/// # Errors
/// [`Error::Shard`] outside an array task, inside the arrays of two schedulers at once, for a
/// scheduler that does not say K when `count` is `None`, for a K that disagrees with the
/// scheduler's, an index out of range, or an array that is not contiguous.
pub fn shard_of(
    var: impl Fn(&str) -> Option<String>,
    count: Option<usize>,
) -> Result<ShardSpec, Error> {
    let var: Vars = &var;
    let set: Vec<&Scheduler> = SCHEDULERS
        .iter()
        .filter(|s| read(var, s.index_var).is_some())
        .collect();
    let scheduler = match set.as_slice() {
        [one] => *one,
        [] => return Err(none_set(count)),
        many => return Err(several_set(many)),
    };
    let (index, scheduler_count) = (scheduler.read)(var)?;
    let k = match (scheduler_count, count) {
        (Some(theirs), Some(ours)) if theirs != ours => {
            return Err(Error::Shard(format!(
                "--shard auto/{ours} in a {} array of {theirs} tasks: give --shard auto (K = \
                 {theirs}), or submit an array of {ours} tasks",
                scheduler.name
            )))
        }
        (Some(k), _) | (None, Some(k)) => k,
        (None, None) => {
            return Err(Error::Shard(format!(
                "{} is set ({}), whose arrays do not say how many tasks they have: give \
                 --shard auto/K, K being the number of shards",
                scheduler.index_var, scheduler.name
            )))
        }
    };
    if index >= k && !scheduler.says_count {
        return Err(Error::Shard(format!(
            "{} = {index} is out of range for K = {k}: {} numbers its tasks from 0 here, so \
             submit indices 0 to {}",
            scheduler.index_var,
            scheduler.name,
            k.saturating_sub(1)
        )));
    }
    ShardSpec::new(index, k)
}

/// The error outside any array task: the variables looked for.
fn none_set(count: Option<usize>) -> Error {
    let names: Vec<String> = SCHEDULERS
        .iter()
        .filter(|s| s.says_count || count.is_some())
        .map(|s| format!("{} ({})", s.index_var, s.name))
        .collect();
    let also = match count {
        Some(_) => "",
        None => {
            "; with --shard auto/K also PBS_ARRAY_INDEX (PBS Pro/OpenPBS), PBS_ARRAYID \
             (Torque) or JOB_COMPLETION_INDEX (Kubernetes)"
        }
    };
    Error::Shard(format!(
        "not a job array task: none of {} is set{also} (submit the count as an array, e.g. \
         'sbatch --array=0-K', or give the shard as I/K)",
        names.join(", ")
    ))
}

/// The error inside the arrays of several schedulers at once.
fn several_set(set: &[&Scheduler]) -> Error {
    let names: Vec<String> = set
        .iter()
        .map(|s| format!("{} ({})", s.index_var, s.name))
        .collect();
    Error::Shard(format!(
        "the array variables of {} schedulers are set at once: {}; which one runs this task is \
         not clear, so unset the others' or give the shard as I/K",
        set.len(),
        names.join(", ")
    ))
}

/// PBS Pro and OpenPBS (`qsub -J 0-(K-1)`): the index as it is.
fn pbs(var: Vars) -> IndexAndCount {
    Ok((required(var, "PBS_ARRAY_INDEX", "PBS Pro/OpenPBS")?, None))
}

/// Torque (`qsub -t 0-(K-1)`): the index as it is.
fn torque(var: Vars) -> IndexAndCount {
    Ok((required(var, "PBS_ARRAYID", "Torque")?, None))
}

/// A Kubernetes Indexed Job (`completions: K`, indices from 0): the index as it is.
fn kubernetes(var: Vars) -> IndexAndCount {
    Ok((required(var, "JOB_COMPLETION_INDEX", "Kubernetes")?, None))
}

/// Slurm: the index from `SLURM_ARRAY_TASK_MIN`, K from `_COUNT`, checked against `_MAX`.
pub(super) fn slurm(var: Vars) -> IndexAndCount {
    let who = "Slurm";
    let id = required(var, "SLURM_ARRAY_TASK_ID", who)?;
    let min = required(var, "SLURM_ARRAY_TASK_MIN", who)?;
    let count = required(var, "SLURM_ARRAY_TASK_COUNT", who)?;
    if let Some(max) = number(var, "SLURM_ARRAY_TASK_MAX")? {
        if max.checked_add(1) != min.checked_add(count) {
            return Err(Error::Shard(format!(
                "the Slurm array indices must be contiguous (e.g. 'sbatch --array=0-{}'), \
                 got {count} tasks between {min} and {max}",
                count.saturating_sub(1)
            )));
        }
    }
    let index = id.checked_sub(min).ok_or_else(|| {
        Error::Shard(format!(
            "SLURM_ARRAY_TASK_ID {id} is below SLURM_ARRAY_TASK_MIN {min}"
        ))
    })?;
    Ok((index, Some(count)))
}

/// Grid Engine (1-based, `qsub -t FIRST-LAST:STEP`): task `(ID − FIRST) / STEP` of
/// `(LAST − FIRST) / STEP + 1`.
fn grid_engine(var: Vars) -> IndexAndCount {
    let who = "Grid Engine";
    let id = required(var, "SGE_TASK_ID", who)?;
    let first = required(var, "SGE_TASK_FIRST", who)?;
    let last = required(var, "SGE_TASK_LAST", who)?;
    let step = number(var, "SGE_TASK_STEPSIZE")?.unwrap_or(1);
    let bad = |why: String| Error::Shard(format!("the Grid Engine array {why}"));
    if step == 0 {
        return Err(bad("has SGE_TASK_STEPSIZE = 0".into()));
    }
    if last < first || id < first || id > last || (id - first) % step != 0 {
        return Err(bad(format!(
            "does not hold its task: SGE_TASK_ID {id} in {first}-{last}:{step}"
        )));
    }
    Ok(((id - first) / step, Some((last - first) / step + 1)))
}

/// LSF (1-based, `bsub -J "name[1-K]"`): task `LSB_JOBINDEX − 1` of `LSB_JOBINDEX_END`. LSF
/// does not say where an array starts, so it must start at 1 with step 1.
fn lsf(var: Vars) -> IndexAndCount {
    let who = "LSF";
    let id = required(var, "LSB_JOBINDEX", who)?;
    let end = required(var, "LSB_JOBINDEX_END", who)?;
    let step = number(var, "LSB_JOBINDEX_STEP")?.unwrap_or(1);
    if step != 1 || id > end {
        return Err(Error::Shard(format!(
            "the LSF array must run indices 1 to K with step 1 ('bsub -J \"name[1-{end}]\"'), \
             got LSB_JOBINDEX {id} of {end}, step {step}"
        )));
    }
    Ok((id - 1, Some(end)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader of the variables `vars` (name, value).
    fn env(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |name| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
    }

    fn shard(i: usize, k: usize) -> ShardSpec {
        ShardSpec::new(i, k).unwrap()
    }

    #[test]
    fn grid_engine_arrays_are_one_based_with_a_step() {
        let task = |id: &str| {
            let vars = [
                ("SGE_TASK_ID", id),
                ("SGE_TASK_FIRST", "1"),
                ("SGE_TASK_LAST", "7"),
                ("SGE_TASK_STEPSIZE", "2"),
            ];
            shard_of(env(&vars), None)
        };
        assert_eq!(task("1").unwrap(), shard(0, 4));
        assert_eq!(task("7").unwrap(), shard(3, 4));
        assert!(task("4").is_err(), "not on the step");
        assert!(task("9").is_err(), "past the last");
        let plain = [
            ("SGE_TASK_ID", "3"),
            ("SGE_TASK_FIRST", "1"),
            ("SGE_TASK_LAST", "5"),
            ("SGE_TASK_STEPSIZE", "1"),
        ];
        assert_eq!(shard_of(env(&plain), None).unwrap(), shard(2, 5));
        assert_eq!(shard_of(env(&plain), Some(5)).unwrap(), shard(2, 5));
        let err = shard_of(env(&plain), Some(6)).unwrap_err().to_string();
        assert!(err.contains("array of 5 tasks"), "{err}");
    }

    #[test]
    fn a_non_array_job_of_grid_engine_or_lsf_is_no_array() {
        let sge = [
            ("SGE_TASK_ID", "undefined"),
            ("SGE_TASK_FIRST", "undefined"),
        ];
        let err = shard_of(env(&sge), None).unwrap_err().to_string();
        assert!(
            err.starts_with("invalid shard: not a job array task"),
            "{err}"
        );
        let lsf = [("LSB_JOBINDEX", "0")];
        assert!(shard_of(env(&lsf), None)
            .unwrap_err()
            .to_string()
            .contains("not a job array task"));
    }

    #[test]
    fn lsf_arrays_run_from_one() {
        let task = |id: &str, step: &str| {
            let vars = [
                ("LSB_JOBINDEX", id),
                ("LSB_JOBINDEX_END", "4"),
                ("LSB_JOBINDEX_STEP", step),
            ];
            shard_of(env(&vars), None)
        };
        assert_eq!(task("1", "1").unwrap(), shard(0, 4));
        assert_eq!(task("4", "1").unwrap(), shard(3, 4));
        assert!(task("5", "1").is_err());
        assert!(task("3", "2").unwrap_err().to_string().contains("step 1"));
    }

    #[test]
    fn schedulers_that_do_not_say_k_need_it_and_count_from_zero() {
        for name in ["PBS_ARRAY_INDEX", "PBS_ARRAYID", "JOB_COMPLETION_INDEX"] {
            let vars = [(name, "3")];
            assert_eq!(
                shard_of(env(&vars), Some(4)).unwrap(),
                shard(3, 4),
                "{name}"
            );
            let err = shard_of(env(&vars), None).unwrap_err().to_string();
            assert!(err.contains(name) && err.contains("auto/K"), "{err}");
            let err = shard_of(env(&vars), Some(3)).unwrap_err().to_string();
            assert!(
                err.contains("out of range") && err.contains("0 to 2"),
                "{err}"
            );
        }
    }

    #[test]
    fn two_schedulers_at_once_or_none_are_named() {
        let both = [
            ("SLURM_ARRAY_TASK_ID", "0"),
            ("SLURM_ARRAY_TASK_MIN", "0"),
            ("SLURM_ARRAY_TASK_COUNT", "2"),
            ("JOB_COMPLETION_INDEX", "1"),
        ];
        let err = shard_of(env(&both), Some(2)).unwrap_err().to_string();
        assert!(
            err.contains("SLURM_ARRAY_TASK_ID (Slurm)")
                && err.contains("JOB_COMPLETION_INDEX (Kubernetes)"),
            "{err}"
        );
        let none = shard_of(env(&[]), None).unwrap_err().to_string();
        for var in [
            "SLURM_ARRAY_TASK_ID",
            "SGE_TASK_ID",
            "LSB_JOBINDEX",
            "PBS_ARRAYID",
        ] {
            assert!(none.contains(var), "{none}");
        }
    }

    #[test]
    fn a_number_that_is_not_one_is_named() {
        let vars = [("JOB_COMPLETION_INDEX", "x1")];
        let err = shard_of(env(&vars), Some(2)).unwrap_err().to_string();
        assert!(err.contains("JOB_COMPLETION_INDEX = 'x1'"), "{err}");
    }
}
