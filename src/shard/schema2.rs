//! Checkpoints of schema 2 (`nqueens.checkpoint/2`), read so that a run started by an older
//! nqueens resumes after an upgrade instead of losing its finished tasks.
//!
//! Schema 2 is schema 3 without `blocks`. Its checksum covers its own fields in its own
//! order, so it is checked against this model, which keeps that layout, before the file is
//! upgraded (`Checkpoint::upgrade`).

use serde::{Deserialize, Serialize};

use super::done::DoneSet;
use super::identity::Identity;
use super::partial::Digest;
use super::sealed::{decimal, Sealed};

/// A schema 2 checkpoint, field for field and in the order it was written: the checksum is
/// over exactly this serialisation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct CheckpointV2 {
    pub(crate) schema: String,
    #[serde(flatten)]
    pub(crate) identity: Identity,
    pub(crate) done: DoneSet,
    pub(crate) tasks_done: u64,
    #[serde(with = "decimal")]
    pub(crate) total: u128,
    pub(crate) digest: Digest,
    pub(crate) elapsed_s: f64,
    #[serde(default, skip_serializing_if = "DoneSet::is_empty")]
    pub(crate) rechecked: DoneSet,
    pub(crate) checksum: String,
}

impl Sealed for CheckpointV2 {
    fn checksum_mut(&mut self) -> &mut String {
        &mut self.checksum
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::time::Duration;

    use sha2::Digest as _;

    use super::*;
    use crate::error::Error;
    use crate::known;
    use crate::plan::{thread_pool, NoProgress, Plan};
    use crate::recheck::Recheck;
    use crate::shard::checkpoint::Checkpoint;
    use crate::shard::recorder::{recheck_saved, run, Recorder};
    use crate::shard::{checkpoint, ShardSpec};
    use crate::CountOptions;

    fn plan(n: u32) -> Box<dyn Plan> {
        CountOptions::new()
            .engine("mirror")
            .threads(8)
            .plan(n)
            .unwrap()
    }

    /// Writes `cp` as nqueens wrote schema 2 files, spelled out field by field rather than
    /// through [`CheckpointV2`]: the schema 2 fields in their order, one line, and the
    /// SHA-256 of that line with an empty checksum.
    fn write_v2(path: &Path, cp: &Checkpoint) {
        let rechecked = if cp.rechecked.is_empty() {
            String::new()
        } else {
            format!(",\"rechecked\":{}", json(&cp.rechecked))
        };
        let body = |checksum: &str| {
            format!(
                "{{\"schema\":\"nqueens.checkpoint/2\",\"version\":{},\"n\":{},\"engine\":{},\
                 \"plan\":{},\"plan_hash\":{},\"plan_tasks\":{},\"shard\":{},\"done\":{},\
                 \"tasks_done\":{},\"total\":\"{}\",\"digest\":{},\"elapsed_s\":{}{rechecked},\
                 \"checksum\":\"{checksum}\"}}",
                json(&cp.identity.version),
                cp.identity.n,
                json(&cp.identity.engine),
                json(&cp.identity.plan),
                json(&cp.identity.plan_hash),
                cp.identity.plan_tasks,
                json(&cp.identity.shard),
                json(&cp.done),
                cp.tasks_done,
                cp.total,
                json(&cp.digest),
                json(&cp.elapsed_s),
            )
        };
        let hash = sha2::Sha256::digest(body("").as_bytes());
        let hex = crate::shard::sealed::hex(&hash);
        std::fs::write(path, body(&format!("sha256:{hex}")) + "\n").unwrap();
    }

    /// One field's JSON, for [`write_v2`].
    fn json<T: Serialize>(value: &T) -> String {
        serde_json::to_string(value).unwrap()
    }

    /// A checkpoint of `p` with its first `done` tasks recorded (task 0 off by `wrong`).
    fn partial(p: &dyn Plan, done: usize, wrong: u128) -> Checkpoint {
        let mut cp = Checkpoint::new(p, ShardSpec::whole()).unwrap();
        for t in 0..done {
            cp.record(t, p.solve(t) + if t == 0 { wrong } else { 0 })
                .unwrap();
        }
        cp.elapsed_s = 12.5;
        cp
    }

    #[test]
    fn a_schema_2_checkpoint_resumes_to_the_exact_total_and_saves_as_schema_3() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("v2.ckpt");
        let p = plan(10);
        let half = p.len() / 2;
        let before = partial(p.as_ref(), half, 0);
        write_v2(&path, &before);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(!text.contains("blocks"), "{text}");

        let cp = Checkpoint::resume_or_new(&path, p.as_ref(), ShardSpec::whole()).unwrap();
        assert_eq!(cp.schema(), checkpoint::CHECKPOINT_SCHEMA);
        assert_eq!((cp.tasks_done, cp.total), (half as u64, before.total));
        assert_eq!((cp.digest, cp.elapsed_s), (before.digest, 12.5));
        assert_eq!(cp.blocks.inherited.rounds, before.done);
        assert_eq!(cp.blocks.inherited.total, before.total);
        assert!(cp.blocks.totals.iter().all(|&t| t == 0));

        let rec = Recorder::new(Some(path.clone()), cp);
        let pool = thread_pool(2).unwrap();
        let every = Duration::from_secs(60);
        let total = run(p.as_ref(), &pool, &rec, every, &NoProgress).unwrap();
        assert_eq!(Some(total), known::total(10));

        // The next save wrote schema 3 with the inherited part, and it loads again.
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.contains("\"schema\":\"nqueens.checkpoint/3\""),
            "{text}"
        );
        assert!(text.contains("\"inherited\""), "{text}");
        let again = Checkpoint::load(&path).unwrap().unwrap();
        assert_eq!((again.total, &again.done), (total, &rec.snapshot().done));
        assert_eq!(again.remaining(), 0);
        assert_eq!(again.blocks.inherited.len(), half as u64);
        let in_blocks: u128 = again.blocks.totals.iter().sum();
        assert_eq!(in_blocks + again.blocks.inherited.total, again.total);
        assert_eq!(in_blocks, known::total(10).unwrap() - before.total);
    }

    #[test]
    fn a_recheck_searches_and_repairs_only_the_tasks_finished_after_the_upgrade() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("v2.ckpt");
        let p = plan(10);
        let half = p.len() / 2;
        // Task 0 was saved one too high under schema 2: nothing can say where.
        write_v2(&path, &partial(p.as_ref(), half, 1));
        let mut cp = Checkpoint::load(&path).unwrap().unwrap();
        // After the upgrade, the first new task is saved two too high; its block also holds
        // inherited rounds (blocks of this plan are several rounds long).
        assert!(cp.blocks.size > 1 && !half.is_multiple_of(cp.blocks.size));
        for t in half..p.len() {
            cp.record(t, p.solve(t) + if t == half { 2 } else { 0 })
                .unwrap();
        }
        let rec = Recorder::new(None, cp);
        let pool = thread_pool(2).unwrap();
        let all = Recheck::new(1.0).unwrap();
        let found = recheck_saved(p.as_ref(), &pool, &rec, all, None).unwrap();
        assert_eq!(found.tasks, p.len() - half, "{found:?}");
        assert_eq!(found.replaced.len(), 1, "{found:?}");
        let bad = &found.replaced[0];
        assert!(
            bad.rounds.contains(&half) && bad.rounds.start < half,
            "{bad:?}"
        );
        assert_eq!(bad.saved, bad.now + 2);
        let mut after = rec.snapshot();
        assert_eq!(
            Some(after.total - 1),
            known::total(10),
            "the new wrong count is replaced, the inherited one stays"
        );
        // Still consistent: it saves and loads.
        after.save(&path).unwrap();
        assert_eq!(Checkpoint::load(&path).unwrap().unwrap().total, after.total);
    }

    #[test]
    fn a_tampered_or_impossible_schema_2_checkpoint_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("v2.ckpt");
        let p = plan(8);
        let cp = partial(p.as_ref(), 3, 0);
        let load = || match Checkpoint::load(&path) {
            Err(Error::CheckpointCorrupt { message, .. }) => message,
            other => panic!("expected a refusal, got {other:?}"),
        };

        // An edited count under the original checksum.
        write_v2(&path, &cp);
        let text = std::fs::read_to_string(&path).unwrap();
        let total = format!("\"total\":\"{}\"", cp.total);
        std::fs::write(&path, text.replacen(&total, "\"total\":\"999\"", 1)).unwrap();
        assert!(load().contains("checksum"), "{}", load());

        // Sealed, but out of range: a done round past the shard, a wrong tasks_done.
        let mut past = cp.clone();
        past.done.0.insert(u32::try_from(p.len()).unwrap());
        past.tasks_done += 1;
        write_v2(&path, &past);
        assert!(load().contains("has only"), "{}", load());
        let mut miscounted = cp.clone();
        miscounted.tasks_done = 7;
        write_v2(&path, &miscounted);
        assert!(load().contains("tasks_done"), "{}", load());
        let mut engine = cp;
        engine.identity.engine = "abacus".into();
        write_v2(&path, &engine);
        assert!(load().contains("abacus"), "{}", load());
    }

    #[test]
    fn inherited_sums_that_do_not_add_up_or_tasks_not_done_are_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("v3.ckpt");
        let p = plan(8);
        write_v2(&path, &partial(p.as_ref(), 3, 0));
        let upgraded = Checkpoint::load(&path).unwrap().unwrap();

        let mut more = upgraded.clone();
        more.blocks.inherited.total += 1;
        more.save(&path).unwrap();
        let err = Checkpoint::load(&path).unwrap_err().to_string();
        assert!(err.contains("do not add up"), "{err}");

        let mut not_done = upgraded.clone();
        not_done.blocks.inherited.rounds.0.insert(5);
        not_done.save(&path).unwrap();
        let err = Checkpoint::load(&path).unwrap_err().to_string();
        assert!(err.contains("inherited that are not done"), "{err}");

        let mut no_rounds = upgraded;
        no_rounds.blocks.inherited.rounds.0.clear();
        no_rounds.save(&path).unwrap();
        let err = Checkpoint::load(&path).unwrap_err().to_string();
        assert!(err.contains("no inherited tasks"), "{err}");
    }

    #[test]
    fn forgetting_an_inherited_task_keeps_the_sums_consistent() {
        let p = plan(8);
        let before = partial(p.as_ref(), 3, 0);
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("v2.ckpt");
        write_v2(&path, &before);
        let mut cp = Checkpoint::load(&path).unwrap().unwrap();
        cp.forget(1, p.solve(1));
        assert_eq!(cp.blocks.inherited.len(), 2);
        assert_eq!(cp.blocks.inherited.total, cp.total);
        cp.save(&path).unwrap();
        assert_eq!(Checkpoint::load(&path).unwrap().unwrap().tasks_done, 2);
    }
}
