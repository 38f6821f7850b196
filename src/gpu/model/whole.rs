//! Joins a sample cut that the modelled GPU would run whole. A software driver's bindings
//! (lavapipe's 128 MiB) hold about 5,400 blocks a batch where an H100's hold some 170,000,
//! so a sample taken there cuts joins that GPU would not, and each part makes its join's
//! half join again to keep its own keys: work the GPU's run does not do.

use super::batches::StratumWork;
use crate::gpu::join::fill_cap;
use crate::gpu::layout::WIDE_TILE;
use crate::gpu::slot::Capacity;

/// `s` as a GPU with batches of capacity `cap` runs it. Where every join the sample cut
/// after a try fits one such batch alone (its stored keys a fill, its queries, blocks and
/// routes the arenas), the parts' half join is taken out (their pairs tested, and the
/// pairs written and jobs in the same proportion), and the cut joins' stored keys are moved
/// once more, at a top level split across workgroups: the root's, which their parts' trees
/// began below. The tries' trees, built before their joins were cut, are taken out too
/// (where the sample counted them). The rest of the parts' work stays (their trees and
/// routing, about the whole join's), so the figure errs on the side of too much. Anything
/// else, or a sample from before these counters, is `s` itself.
pub(crate) fn held_whole(s: &StratumWork, cap: &Capacity) -> StratumWork {
    let rooms = [
        ("gpu_cut_stored_peak", fill_cap(cap, false)),
        ("gpu_cut_queries_peak", cap.queries),
        ("gpu_cut_blocks_peak", cap.blocks),
        ("gpu_cut_routes_peak", cap.routes),
    ];
    let fits = rooms
        .iter()
        .all(|&(name, room)| s.get(name) <= f64::from(room));
    let tested = s.get("half_pairs_tested");
    let parts = s.get("gpu_part_pairs");
    if !fits || parts <= 0.0 || tested <= 0.0 {
        return s.clone();
    }
    let mut out = s.clone();
    let keep = (1.0 - parts / tested).clamp(0.0, 1.0);
    for name in ["half_pairs_tested", "gpu_pairs_written", "gpu_jobs"] {
        if let Some(v) = out.counters.get_mut(name) {
            *v *= keep;
        }
    }
    untried(
        &mut out,
        "gpu_tried_top_accesses",
        &["gpu_top_accesses", "gpu_top_writes"],
    );
    untried(&mut out, "gpu_tried_wide_tiles", &["gpu_wide_tiles"]);
    untried(
        &mut out,
        "gpu_tried_rest_accesses",
        &["gpu_rest_accesses", "gpu_rest_writes"],
    );
    let root_tiles = s.get("gpu_cut_keys") / f64::from(WIDE_TILE);
    *out.counters.entry("gpu_wide_tiles").or_default() += root_tiles;
    for name in ["gpu_wide_levels_peak", "gpu_top_levels_peak"] {
        let levels = out.counters.entry(name).or_default();
        *levels = levels.max(1.0);
    }
    let blocks = s.get("gpu_cut_blocks_peak");
    let peak = out.counters.entry("gpu_fill_blocks_peak").or_default();
    *peak = peak.max(blocks);
    out
}

/// Takes the tries' work `tried` out of the counters `of` that hold it, in proportion to them.
fn untried(s: &mut StratumWork, tried: &str, of: &[&'static str]) {
    let t = s.get(tried);
    let total: f64 = of.iter().map(|name| s.get(name)).sum();
    if t <= 0.0 || total <= 0.0 {
        return;
    }
    let keep = (1.0 - t / total).clamp(0.0, 1.0);
    for name in of {
        if let Some(v) = s.counters.get_mut(name) {
            *v *= keep;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A sample of 10 tasks whose cut joins' parts tested 600 of 1,000 pairs, the cut joins
    /// needing `blocks` blocks.
    fn sample(blocks: f64) -> StratumWork {
        let counters = [
            ("half_pairs_tested", 1000.0),
            ("gpu_part_pairs", 600.0),
            ("gpu_pairs_written", 500.0),
            ("gpu_jobs", 50.0),
            ("gpu_cut_keys", 8.0 * f64::from(WIDE_TILE)),
            ("gpu_wide_tiles", 20.0),
            ("gpu_top_accesses", 300.0),
            ("gpu_top_writes", 100.0),
            ("gpu_tried_top_accesses", 100.0),
            ("gpu_tried_wide_tiles", 5.0),
            ("gpu_rest_accesses", 900.0),
            ("gpu_rest_writes", 100.0),
            ("gpu_tried_rest_accesses", 500.0),
            ("gpu_cut_stored_peak", 1000.0),
            ("gpu_cut_queries_peak", 1000.0),
            ("gpu_cut_blocks_peak", blocks),
            ("gpu_cut_routes_peak", 1000.0),
            ("visited_pairs", 7.0),
        ];
        StratumWork {
            tasks: 10.0,
            counters: counters.into_iter().collect(),
        }
    }

    #[test]
    fn a_cut_join_a_gpu_holds_whole_makes_its_half_join_and_tree_once_and_its_root_level_more() {
        let cap = Capacity::of(3 << 30, u64::from(u32::MAX));
        let s = sample(f64::from(cap.blocks));
        let whole = held_whole(&s, &cap);
        let at = |name: &str| whole.counters[name];
        assert!((at("half_pairs_tested") - 400.0).abs() < 1e-9);
        assert!((at("gpu_pairs_written") - 200.0).abs() < 1e-9);
        assert!((at("gpu_jobs") - 20.0).abs() < 1e-9);
        // The tries' trees out (a quarter of the top levels' work, a quarter of the tiles,
        // half the subtrees'), then the roots' keys moved once: eight tiles more, on a
        // level split across workgroups.
        assert!((at("gpu_top_accesses") - 225.0).abs() < 1e-9);
        assert!((at("gpu_top_writes") - 75.0).abs() < 1e-9);
        assert!((at("gpu_wide_tiles") - 23.0).abs() < 1e-9);
        assert!((at("gpu_rest_accesses") - 450.0).abs() < 1e-9);
        assert!((at("gpu_rest_writes") - 50.0).abs() < 1e-9);
        assert_eq!(at("gpu_wide_levels_peak"), 1.0);
        assert_eq!(at("gpu_fill_blocks_peak"), f64::from(cap.blocks));
        // Nothing else moves.
        assert_eq!(at("visited_pairs"), 7.0);
        assert_eq!(whole.tasks, s.tasks);
    }

    #[test]
    fn a_cut_join_past_the_gpus_room_stays_cut() {
        let cap = Capacity::of(3 << 30, u64::from(u32::MAX));
        let s = sample(f64::from(cap.blocks) + 1.0);
        assert_eq!(held_whole(&s, &cap), s);
        // A sample from before the parts' pairs were counted stays as it is.
        let mut old = sample(1.0);
        old.counters.remove("gpu_part_pairs");
        assert_eq!(held_whole(&old, &cap), old);
    }
}
