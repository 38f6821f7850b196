//! The plan of a run, rebuilt from its files for [`status`](super::status): to weigh its
//! tasks by the plan's cost model, and to write rerun lines that count that same plan. A run
//! counted with `--split-depth` is rebuilt with the split depth its files' plan names.

use super::{Run, StatusOptions, StatusReport};
use crate::plan::Plan;
use crate::shard::stable_plan;

/// The run's plan as rebuilt ([`rebuild_plan`]).
pub(super) struct Rebuilt {
    /// The plan, `None` where it could not be rebuilt or its hash differs from the files'.
    pub(super) plan: Option<Box<dyn Plan>>,
    /// The split depth that rebuilds it (given to `status`, or read from the files' plan),
    /// for the rerun lines; `None` where the default options rebuild it.
    pub(super) split_depth: Option<u32>,
    /// Why it could not be rebuilt (`None` where it was).
    pub(super) why: Option<String>,
}

/// The run's plan, rebuilt to weigh tasks by its cost model and to write rerun lines that
/// run it: with the options given to `status`, else with the split depth the files' plan
/// names (a run counted with `--split-depth`); a note where neither rebuilds it.
pub(super) fn rebuild_plan(
    run: &Run,
    options: &StatusOptions,
    report: &mut StatusReport,
) -> Rebuilt {
    let id = &run
        .shards
        .values()
        .next()
        .expect("a run has a file")
        .identity;
    let asked = options.count.asked_split_depth();
    let count = options.count.clone().engine(&id.engine);
    let mut tries = vec![(asked, count.clone())];
    if let (None, Some(depth)) = (asked, split_depth_of(&id.plan)) {
        tries.push((Some(depth), count.split_depth(Some(depth))));
    }
    let mut why = None;
    for (split_depth, count) in tries {
        let text = match stable_plan(id.n, &count) {
            Ok(plan) if plan.fingerprint() == id.plan_hash && plan.len() == id.plan_tasks => {
                let plan = Some(plan);
                return Rebuilt {
                    plan,
                    split_depth,
                    why: None,
                };
            }
            Ok(plan) => format!(
                "this version's plan for N = {} ({}) has hash {}, the files' {}: the options \
                 that made it (e.g. --split-depth) or the version differ",
                id.n,
                plan.describe(),
                plan.fingerprint(),
                id.plan_hash
            ),
            Err(e) => e.to_string(),
        };
        why.get_or_insert(text);
    }
    let why = why.expect("one plan was tried");
    report.share_of = "tasks".into();
    report.notes.push(format!(
        "shares are of tasks, not of estimated cost: the plan could not be rebuilt ({why})"
    ));
    Rebuilt {
        plan: None,
        split_depth: asked,
        why: Some(why),
    }
}

/// The split depth a plan label names (`…, split depth 5`), if any.
fn split_depth_of(plan: &str) -> Option<u32> {
    let (_, rest) = plan.rsplit_once("split depth ")?;
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}
