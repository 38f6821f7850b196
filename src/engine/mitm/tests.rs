//! Tests of the meet-in-the-middle engine against the mirror engine and the known values.

use super::*;
use crate::known;
use crate::plan::{execute, thread_pool, NoProgress};
use kernels::BLOCK;

mod units;

fn total(plan: &dyn Plan) -> u128 {
    let ids: Vec<usize> = (0..plan.len()).collect();
    let pool = thread_pool(2).unwrap();
    execute(plan, &ids, &pool, &NoProgress).unwrap()
}

fn mitm(n: u32) -> u128 {
    total(Mitm.plan(n, &PlanOptions::default()).unwrap().as_ref())
}

#[test]
fn mitm_equals_the_mirror_engine_up_to_15() {
    for n in 1..=15 {
        let mirror = total(&MirrorPlan::new(n, 3.min(n)));
        assert_eq!(mitm(n), mirror, "n = {n}");
    }
}

#[test]
fn mitm_unique_counts_match_a002562_up_to_16() {
    for n in 4..=16 {
        let plan = Mitm.plan(n, &PlanOptions::default()).unwrap();
        assert!(plan.has_unique());
        assert_eq!(
            plan.unique(total(plan.as_ref())),
            known::unique(n),
            "n = {n}"
        );
    }
}

/// `cargo test --release -- --ignored mitm_unique_counts_match_a002562_17_to_20`
#[test]
#[ignore]
fn mitm_unique_counts_match_a002562_17_to_20() {
    for n in 17..=20 {
        let plan = Mitm.plan(n, &PlanOptions::default()).unwrap();
        assert_eq!(
            plan.unique(total(plan.as_ref())),
            known::unique(n),
            "n = {n}"
        );
    }
}

#[test]
fn mitm_matches_the_known_value_at_16() {
    assert_eq!(Some(mitm(16)), known::total(16));
}

/// The first boards past 16, where the kernel's rows and the quarter keys are widest among
/// the counts a test can afford: about a second each on two threads.
#[test]
fn mitm_matches_the_known_values_at_17_and_18() {
    for n in 17..=18 {
        assert_eq!(Some(mitm(n)), known::total(n), "n = {n}");
    }
}

/// N = 19..21 take about 12, 120 and 700 CPU seconds (Zen 4, avx512); run before a release
/// with `cargo test --release -- --ignored mitm_matches_the_known_values_19_to_21`.
#[test]
#[ignore]
fn mitm_matches_the_known_values_19_to_21() {
    for n in 19..=21 {
        assert_eq!(Some(mitm(n)), known::total(n), "n = {n}");
    }
}

#[test]
fn every_matcher_level_gives_the_same_total() {
    for level in simd::available_levels() {
        for n in [10, 11] {
            let plan = MitmPlan::new(n, level);
            assert_eq!(Some(total(&plan)), known::total(n), "{level:?} n = {n}");
        }
    }
}

/// Every level this CPU has at the first board past 16 (the default suite counts it at the
/// best level only).
#[test]
#[ignore = "seconds per level; run with --ignored"]
fn every_matcher_level_matches_the_known_value_at_17() {
    for level in simd::available_levels() {
        let plan = MitmPlan::new(17, level);
        assert_eq!(Some(total(&plan)), known::total(17), "{level:?}");
    }
}

#[test]
fn symmetry_weights_reproduce_the_plain_count() {
    for n in [4, 6, 8, 10, 12] {
        let plan = MitmPlan::new(n, Level::detect());
        let geo = Geometry::new(n);
        let mut s = Scratch::default();
        let all = free_rows(&geo, 0);
        let plain: Vec<(u32, u64)> = subsets(all, geo.h)
            .map(|e| (e, plan.ctx.solve_plain(e, &mut s)))
            .collect();
        let sum: u64 = plain.iter().map(|p| p.1).sum();
        assert_eq!(Some(u128::from(sum)), known::total(n), "plain n = {n}");
        let lookup = |e: u32| plain.iter().find(|p| p.0 == e).unwrap().1;
        for &(e, count) in &plain {
            assert_eq!(count, lookup(weights::reverse(e, n)), "V symmetry, n = {n}");
            assert_eq!(count, lookup(all & !e), "H symmetry, n = {n}");
            let orbit = [
                e,
                weights::reverse(e, n),
                all & !e,
                all & !weights::reverse(e, n),
            ];
            let mut distinct = orbit.to_vec();
            distinct.sort();
            distinct.dedup();
            let weights: u64 = distinct
                .iter()
                .map(|&x| ns_weight(x, n) * ew_weight(x, n, all))
                .sum();
            assert_eq!(weights, distinct.len() as u64, "orbit weights, n = {n}");
        }
        assert_eq!(Some(total(&plan)), known::total(n), "weighted n = {n}");
    }
}

#[test]
fn odd_plans_cover_centre_and_cross_tasks() {
    let plan = MitmPlan::new(9, Level::PORTABLE);
    let cross = plan.tasks().filter(|t| t.y > 0).count();
    // y in 6..=8, E = 4-subsets of the 7 free rows.
    assert_eq!(cross, 3 * 35);
    assert!(plan.tasks().all(|t| t.east.count_ones() == 4));
}

#[test]
#[should_panic(expected = "task 128 of a plan of 128 tasks")]
fn a_task_past_the_plan_is_refused_by_name() {
    let plan = MitmPlan::new(9, Level::PORTABLE);
    assert_eq!(plan.len(), 128);
    plan.solve(128);
}

#[test]
fn subsets_are_all_k_subsets_in_order() {
    let s: Vec<u32> = subsets(0b1011, 2).collect();
    assert_eq!(s, vec![0b0011, 0b1001, 0b1010]);
    assert_eq!(subsets(0b111, 0).collect::<Vec<_>>(), vec![0]);
    assert_eq!(subsets(0b11, 3).count(), 0);
}

#[test]
fn fingerprint_depends_on_n() {
    let a = MitmPlan::new(10, Level::PORTABLE).fingerprint();
    assert_eq!(a, MitmPlan::new(10, Level::PORTABLE).fingerprint());
    assert_ne!(a, MitmPlan::new(11, Level::PORTABLE).fingerprint());
}

#[test]
fn bucket_cuts_do_not_change_totals() {
    for n in [11, 12, 13] {
        for cuts in 1..=4 {
            let plan = MitmPlan::with_cuts(n, Level::detect(), cuts);
            assert_eq!(Some(total(&plan)), known::total(n), "n = {n}, {cuts} cuts");
        }
    }
}

#[test]
fn ranking_and_small_portions_do_not_change_totals() {
    // Tiny portions split every task into many sieve fills and query passes, and ranking
    // starts at the first key, so every path of the portioned, ranked join runs.
    for level in simd::available_levels() {
        for (n, cuts) in [(9, 3), (10, 16), (11, 5), (12, 16), (13, 8), (14, 16)] {
            for trie in [false, true] {
                let mut ctx = Context::with_cuts(n, level, cuts);
                ctx.limits = task::Limits {
                    stored: 700,
                    queries: 90,
                    min_ranked: 0,
                    trie_min: if trie { 0 } else { usize::MAX },
                    ..task::Limits::default()
                };
                let plan = MitmPlan::with_context(ctx);
                let want = known::total(n);
                let what = format!("{level:?} n = {n}, {cuts} cuts, trie {trie}");
                assert_eq!(Some(total(&plan)), want, "{what}");
            }
        }
    }
}

/// Smoke test for the uncached code paths of N = 21..23 (hours to count in full): builds the
/// plan and solves its cheapest and three median tasks, which must not panic (overflow checks are on in tests).
#[test]
#[ignore]
fn large_boards_build_plans_and_solve_sample_tasks() {
    for n in 21..=23 {
        let plan = MitmPlan::new(n, Level::detect());
        let ids: Vec<usize> = (0..plan.len()).collect();
        let order = crate::plan::largest_first(&plan, &ids);
        let cheap: u128 = order.iter().rev().take(50).map(|&t| plan.solve(t)).sum();
        let mid: u128 = order[order.len() / 2..][..3]
            .iter()
            .map(|&t| plan.solve(t))
            .sum();
        println!(
            "n {n}: {} tasks; 50 cheapest: {cheap}, 3 median: {mid}",
            plan.len()
        );
        assert!(plan.len() > 100_000);
    }
}

/// Sums the counted solves of every task of `plan`, checking each count against `solve`.
fn counted_total(plan: &MitmPlan) -> (u128, Vec<Work>) {
    let mut sum = 0;
    let mut works = Vec::new();
    for id in 0..plan.len() {
        let (count, work) = plan.solve_counted(id).expect("mitm keeps counters");
        assert_eq!(count, plan.solve(id), "task {id}");
        sum += count;
        works.push(work);
    }
    (sum, works)
}

#[test]
fn work_counters_add_up_on_small_boards() {
    for n in [10, 11, 12, 13] {
        let plan = MitmPlan::new(n, Level::detect());
        let (sum, works) = counted_total(&plan);
        assert_eq!(Some(sum), known::total(n), "n = {n}");
        for w in &works {
            // Small boards: one portion per side, so one sieve meets one set of queries.
            assert_eq!(w.regenerations, 0);
            assert_eq!(w.pair_product, w.stored_keys * w.queries, "{w:?}");
            // The east keys are stored and every west class queries them once (a task
            // without west halves builds east ones and stops).
            if w.pair_product > 0 {
                assert_eq!(w.keys_built, w.stored_keys + w.queries, "{w:?}");
            }
            assert!(w.half_pairs_tested >= w.keys_built, "{w:?}");
            assert!(w.quarter_placements > 0);
            // No cut bits below N = 20: every query meets every stored key, in a block
            // (padded to 512) or one by one.
            let covered = w.visited_pairs * BLOCK as u64 + w.direct_pairs;
            assert!(covered >= w.pair_product, "{w:?}");
            assert!(
                covered <= w.pair_product + w.queries * (BLOCK as u64 - 1),
                "{w:?}"
            );
            assert_eq!(w.visited_pairs, w.blocks_built * w.queries, "{w:?}");
            assert_eq!(w.routing_tests, 0);
        }
    }
}

/// The summed work of every task of N = `n` in portions of at most `stored` and `queries`
/// keys, ranked on `cuts` bits.
fn portioned_work(n: u32, cuts: u32, (stored, queries): (usize, usize)) -> Work {
    let mut ctx = Context::with_cuts(n, Level::detect(), cuts);
    ctx.limits = task::Limits {
        stored,
        queries,
        min_ranked: 0,
        trie_min: usize::MAX,
        ..task::Limits::default()
    };
    let plan = MitmPlan::with_context(ctx);
    let (sum, works) = counted_total(&plan);
    assert_eq!(Some(sum), known::total(n));
    let mut all = Work::default();
    works.iter().for_each(|w| all.add(w));
    all
}

/// A plan of N = `n` in portions of `stored` and `queries` keys, with the trie or the
/// ranked sieve from the first key, storing the east side where it is larger or never.
fn swap_plan(
    n: u32,
    level: Level,
    (stored, queries): (usize, usize),
    trie: bool,
    swap: bool,
) -> MitmPlan {
    let mut ctx = Context::new(n, level);
    ctx.limits = task::Limits {
        stored,
        queries,
        min_ranked: 0,
        trie_min: if trie { 0 } else { usize::MAX },
        swap,
        ..task::Limits::default()
    };
    MitmPlan::with_context(ctx)
}

#[test]
fn storing_the_larger_east_side_keeps_every_task_count() {
    // Odd and even N (cross, centre and weighted west classes), one fill or several of the
    // east side, in the trie and in the ranked sieve: task by task against the plan that
    // always stores the west side. With query portions of a few keys, east sides pass one
    // portion and are measured at a fill's size, and those not larger than the west side
    // are cut back to query portions (keys built again, the west side stored).
    let mut cut_back = 0;
    for level in simd::available_levels() {
        for (n, sizes) in [
            (10, (400, 60)),
            (11, (3000, 200)),
            (12, (500, 100)),
            (13, (20000, 2000)),
            (12, (500, 4)),
            (13, (3000, 8)),
        ] {
            for trie in [false, true] {
                let (swapping, plain) = (
                    swap_plan(n, level, sizes, trie, true),
                    swap_plan(n, level, sizes, trie, false),
                );
                let (mut swapped, mut kept) = (0, 0);
                for id in 0..plain.len() {
                    let (count, work) = swapping.solve_counted(id).expect("mitm counts");
                    let (want, before) = plain.solve_counted(id).expect("mitm counts");
                    assert_eq!(count, want, "{level:?} n = {n} trie {trie} task {id}");
                    if work.stored_keys != before.stored_keys {
                        swapped += 1;
                    } else {
                        kept += 1;
                        cut_back += usize::from(work.keys_built > before.keys_built);
                    }
                }
                assert!(
                    swapped > 0 && kept > 0,
                    "n = {n}: {swapped} swapped, {kept} kept"
                );
            }
        }
    }
    assert!(cut_back > 0, "no east side was measured and cut back");
}

#[test]
fn a_small_west_side_meets_an_east_side_of_trie_size_in_the_trie() {
    // Every west side counts as small, so only the east side's size decides: from `trie_min`
    // east keys the trie holds them, below it the bucket sieve; task by task against the
    // plan that puts every east side in the bucket sieve.
    let plan = |n, level, trie_min| {
        let mut ctx = Context::new(n, level);
        ctx.limits = task::Limits {
            min_ranked: usize::MAX,
            trie_min,
            ..task::Limits::default()
        };
        MitmPlan::with_context(ctx)
    };
    for level in simd::available_levels() {
        for n in [10, 11, 12, 13] {
            let bucketed = plan(n, level, usize::MAX);
            let east: Vec<(u128, u64)> = (0..bucketed.len())
                .map(|id| bucketed.solve_counted(id).expect("mitm counts"))
                .map(|(count, work)| (count, work.stored_keys))
                .collect();
            // The middle of the east sides' sizes, so that both sieves get tasks.
            let mut sizes: Vec<u64> = east.iter().map(|e| e.1).filter(|&s| s > 0).collect();
            sizes.sort_unstable();
            let tried = plan(n, level, sizes[sizes.len() / 2] as usize);
            let (mut in_trie, mut in_buckets) = (0, 0);
            for (id, &(want, _)) in east.iter().enumerate() {
                let (count, work) = tried.solve_counted(id).expect("mitm counts");
                assert_eq!(count, want, "{level:?} n = {n} task {id}");
                if work.routing_tests > 0 {
                    in_trie += 1;
                } else if work.stored_keys > 0 {
                    in_buckets += 1;
                }
            }
            assert!(
                in_trie > 0 && in_buckets > 0,
                "{level:?} n = {n}: {in_trie} in the trie, {in_buckets} in buckets"
            );
        }
    }
}

#[test]
fn work_counters_see_portions_and_ranked_sieves() {
    let tiny = portioned_work(12, 16, (700, 10));
    assert!(tiny.regenerations > 0, "{tiny:?}");
    // The query side is rebuilt per stored portion and queried each time.
    assert!(tiny.keys_built > tiny.queries, "{tiny:?}");
    // The same pairs are decided with and without ranking; ranking never adds a visit.
    let (ranked, plain) = (
        portioned_work(14, 16, (2000, 300)),
        portioned_work(14, 0, (2000, 300)),
    );
    assert_eq!(ranked.pair_product, plain.pair_product);
    assert!(
        ranked.visited_pairs <= plain.visited_pairs,
        "{ranked:?} {plain:?}"
    );
}

#[test]
fn the_trie_visits_fewer_blocks_than_the_ranked_sieve() {
    // Eight tasks of N = 20 in the trie, against the ranked sieve on the same keys.
    let work = |trie_min| {
        let mut ctx = Context::new(20, Level::detect());
        ctx.limits.min_ranked = 0;
        ctx.limits.trie_min = trie_min;
        let plan = MitmPlan::with_context(ctx);
        let ids = (0..plan.len()).step_by(plan.len() / 8);
        let mut all = Work::default();
        for id in ids {
            all.add(&plan.solve_counted(id).unwrap().1);
        }
        all
    };
    let (trie, ranked) = (work(0), work(usize::MAX));
    assert_eq!(trie.pair_product, ranked.pair_product);
    assert!(trie.routing_tests > 0 && ranked.routing_tests == 0);
    assert!(
        trie.visited_pairs < ranked.visited_pairs,
        "{trie:?} {ranked:?}"
    );
}

#[test]
fn counting_is_off_in_plain_solves() {
    let plan = MitmPlan::new(12, Level::detect());
    let _ = plan.solve_counted(5);
    SCRATCH.with(|s| {
        let mut s = s.borrow_mut();
        let before = s.take_work();
        assert_eq!(before, Work::default(), "taken after the counted solve");
    });
    plan.solve(5);
    // A plain solve still adds to the counters (cheaply) but times nothing.
    SCRATCH.with(|s| {
        let w = s.borrow_mut().take_work();
        assert!(w.keys_built > 0);
        assert_eq!(w.quarter_seconds + w.half_seconds + w.match_seconds, 0.0);
    });
}

/// The trie, and tasks split into small pieces, against the default sieves, task by task:
/// every task of N ≤ 18 and 2,000 sampled tasks of each N = 20..22 (about 8 minutes on 2
/// cores): `cargo test --release --lib -- --ignored totals_equal_the_default_sieves`.
#[test]
#[ignore]
fn trie_and_piece_totals_equal_the_default_sieves_task_by_task() {
    for n in (13..=18).chain(20..=22) {
        let mut ctx = Context::new(n, Level::detect());
        ctx.limits.min_ranked = 0;
        ctx.limits.trie_min = 0;
        same_totals_task_by_task(n, ctx, "trie");
        // Pieces of about 2^12 keys, in fills of at most 2^14, with the default sieves.
        let mut ctx = Context::new(n, Level::detect());
        ctx.prepared.stop_caching();
        ctx.limits.stored = 1 << 14;
        ctx.limits.piece = 1 << 12;
        same_totals_task_by_task(n, ctx, "pieces");
    }
}

/// Asserts that the plan of `ctx` counts every task of N ≤ 18, and 2,000 sampled tasks of
/// larger N, as the default plan does.
fn same_totals_task_by_task(n: u32, ctx: Context, what: &str) {
    let plain = MitmPlan::new(n, Level::detect());
    let other = MitmPlan::with_context(ctx);
    let differ = differing_tasks(
        n,
        plain.len(),
        |_| true,
        |id| other.solve(id) != plain.solve(id),
    );
    assert!(
        differ.is_empty(),
        "{what}, n = {n}: tasks {differ:?} differ"
    );
}

/// The ids for which `differs` holds, on 2 threads, among the tasks `keep` takes of a plan
/// of `len` tasks (N ≤ 18) or 2,000 tasks sampled from it (larger N).
fn differing_tasks(
    n: u32,
    len: usize,
    keep: impl Fn(usize) -> bool,
    differs: impl Fn(usize) -> bool + Sync,
) -> Vec<usize> {
    let ids: Vec<usize> = if n <= 18 {
        (0..len).filter(|&id| keep(id)).collect()
    } else {
        let mut rng = fastrand::Rng::with_seed(u64::from(n));
        (0..2000).map(|_| rng.usize(..len)).collect()
    };
    let pool = thread_pool(2).unwrap();
    pool.install(|| {
        use rayon::prelude::*;
        ids.par_iter().copied().filter(|&id| differs(id)).collect()
    })
}

/// A plan whose every task with stored keys is split into pieces of about `piece` keys
/// (the prepared-quarter cache off, as on large boards), in portions of `stored` keys.
fn split_plan(n: u32, level: Level, (stored, piece): (usize, usize), trie: bool) -> MitmPlan {
    let mut ctx = Context::new(n, level);
    ctx.prepared.stop_caching();
    ctx.limits = task::Limits {
        stored,
        queries: 300,
        min_ranked: 0,
        trie_min: if trie { 0 } else { usize::MAX },
        piece,
        swap: true,
    };
    MitmPlan::with_context(ctx)
}

#[test]
fn a_small_last_portion_after_large_ones_is_counted_with_them() {
    // All queries in one portion and a stored side of several portions, the last of them
    // below the ranking threshold: it takes the small tasks' path after the others.
    for n in [10, 12, 13] {
        let mut ctx = Context::new(n, Level::detect());
        ctx.limits = task::Limits {
            stored: 40,
            queries: usize::MAX,
            min_ranked: 60,
            ..task::Limits::default()
        };
        let plan = MitmPlan::with_context(ctx);
        assert_eq!(Some(total(&plan)), known::total(n), "n = {n}");
    }
}

#[test]
fn tasks_split_into_tiny_pieces_keep_their_totals() {
    // Pieces of a few keys on up to six hot bits: every piece, the empty ones included, and
    // the portions inside a piece run; task by task against the unsplit plan, odd N's cross
    // tasks (the west halves of several (h, x) queens in each piece) among them.
    for level in simd::available_levels() {
        for n in [8, 9, 10, 11, 12] {
            let plain = MitmPlan::new(n, level);
            let split = split_plan(n, level, (1, 1), false);
            let (mut pieces, mut cross) = (0, 0);
            for id in 0..plain.len() {
                let (count, work) = split.solve_counted(id).expect("mitm keeps counters");
                assert_eq!(count, plain.solve(id), "{level:?} n = {n}, task {id}");
                pieces += work.pieces;
                if split.task(id).y != 0 {
                    cross += work.pieces;
                }
            }
            assert!(pieces > 0, "{level:?} n = {n}: no task was split");
            assert!(
                cross > 0 || n % 2 == 0,
                "{level:?} n = {n}: no cross task was split"
            );
        }
    }
    for (n, trie) in [(13, true), (14, false), (15, true), (16, false)] {
        let plan = split_plan(n, Level::detect(), (10, 64), trie);
        let (sum, works) = counted_total(&plan);
        assert_eq!(Some(sum), known::total(n), "n = {n}, trie {trie}");
        let pieces: u64 = works.iter().map(|w| w.pieces).sum();
        assert!(pieces > 0, "n = {n}: no task was split");
    }
}

#[test]
fn a_piece_that_overflows_its_fill_is_cut_again_on_a_spare_bit() {
    // Fills of one key and pieces aimed at 2^20: a split task is cut on one hot bit, its
    // pieces overflow their fills and are cut again on up to two spare bits, at every
    // level, against the unsplit plan; some task ends in more pieces than its hot bit gives.
    for level in simd::available_levels() {
        for n in [10, 11, 12, 13] {
            let plain = MitmPlan::new(n, level);
            let split = split_plan(n, level, (1, 1 << 20), n % 2 == 1);
            let mut cut_again = 0;
            for id in 0..plain.len() {
                let (count, work) = split.solve_counted(id).expect("mitm keeps counters");
                assert_eq!(count, plain.solve(id), "{level:?} n = {n}, task {id}");
                cut_again += usize::from(work.pieces > 2);
            }
            assert!(cut_again > 0, "{level:?} n = {n}: no piece was cut again");
        }
    }
}

#[test]
fn hot_bits_past_the_grouped_six_filter_the_halves_exactly() {
    // Pieces of one key on the largest task of N = 14 and 16: more than six hot bits, so
    // pieces keep their pattern on the others by filtering, at every level, against the
    // unsplit plan (with a smaller task of each, split less).
    for level in simd::available_levels() {
        for n in [14, 16] {
            let plain = MitmPlan::new(n, level);
            let split = split_plan(n, level, (1, 1), false);
            for id in [0, 1, plain.len() / 2] {
                let (count, work) = split.solve_counted(id).expect("mitm keeps counters");
                assert_eq!(count, plain.solve(id), "{level:?} n = {n}, task {id}");
                assert!(work.pieces > 64 || id > 0, "{level:?} n = {n}: {work:?}");
            }
        }
    }
}

#[test]
fn boards_whose_quarters_exceed_the_memory_bound_are_refused() {
    let options = PlanOptions::default();
    assert!(Mitm.plan(29, &options).is_ok());
    for n in 30..=32 {
        let err = Mitm.plan(n, &options).err().expect("refused");
        assert!(err.is_usage(), "{err}");
        let text = err.to_string();
        assert!(
            text.contains(&format!("N = {n}")) && text.contains("29"),
            "{text}"
        );
    }
}

#[test]
fn drawn_pieces_estimate_a_task_without_bias() {
    // Pieces of one key split the tasks of N = 14 into up to 64 pieces.
    let plan = split_plan(14, Level::detect(), (1, 1), false);
    assert_drawn_pieces_are_unbiased(&plan, 7);
}

/// Over many draws, the estimates of a task's count average to its count (summed over six
/// tasks solved in part, among every `step`-th task, within four standard errors: a bias of
/// 10% is about five), and their stated variance matches their spread.
fn assert_drawn_pieces_are_unbiased(plan: &MitmPlan, step: usize) {
    let runs = 1000;
    let (mut bias, mut se2, mut partial) = (0.0, 0.0, 0);
    for id in (0..plan.len()).step_by(step) {
        let truth = plan.solve(id) as f64;
        let draws = |seed| Draws {
            count: 2,
            seed,
            counted: false,
        };
        let first = plan
            .solve_sampled(id, draws(0))
            .expect("mitm solves in part");
        if !first.is_partial() {
            assert_eq!(first.count(), (truth, 0.0), "task {id} solved whole");
            continue;
        }
        let estimates: Vec<(f64, f64)> = (0..runs)
            .map(|seed| plan.solve_sampled(id, draws(seed)).unwrap().count())
            .collect();
        let mean = estimates.iter().map(|e| e.0).sum::<f64>() / runs as f64;
        let stated = estimates.iter().map(|e| e.1).sum::<f64>() / runs as f64;
        let spread =
            estimates.iter().map(|e| (e.0 - mean).powi(2)).sum::<f64>() / (runs - 1) as f64;
        if stated == 0.0 && spread == 0.0 {
            // Every piece counts the same (at even N the transposes can leave a task no
            // pair): exact, and nothing to measure a spread on.
            assert_eq!(mean, truth, "task {id}");
            continue;
        }
        let ratio = stated / spread.max(f64::MIN_POSITIVE);
        assert!(
            (0.6..1.6).contains(&ratio),
            "task {id}: variance {stated} vs {spread}"
        );
        bias += mean - truth;
        se2 += stated / runs as f64;
        partial += 1;
        if partial == 6 {
            break;
        }
    }
    assert_eq!(partial, 6, "too few tasks were solved in part");
    assert!(
        bias.abs() <= 4.0 * se2.sqrt(),
        "bias {bias}, standard error {}",
        se2.sqrt()
    );
}

#[test]
fn the_two_stage_interval_brackets_the_known_total() {
    // Tasks sampled, then two pieces drawn from each task of many: the solution count's
    // interval holds Q(14) for most seeds, as the one-stage estimator's does.
    let plan = split_plan(14, Level::detect(), (1, 1), false);
    let truth = known::total(14).unwrap() as f64;
    let seeds = 40;
    let mut partial = 0;
    let hits = (1..=seeds)
        .filter(|&seed| {
            let d = crate::estimate::design(&plan, 64, seed);
            let counts: std::collections::BTreeMap<usize, (f64, f64)> = d
                .tasks()
                .into_iter()
                .map(|t| {
                    let draws = Draws {
                        count: 2,
                        seed,
                        counted: false,
                    };
                    let s = plan.solve_sampled(t, draws).unwrap();
                    partial += usize::from(s.is_partial());
                    (t, s.count())
                })
                .collect();
            let e = d.combine_sampled(&plan, |t| counts[&t].0, |t| counts[&t].1);
            assert!(e.low <= e.estimate && e.estimate <= e.high);
            e.low <= truth && truth <= e.high
        })
        .count();
    assert!(
        partial > seeds as usize,
        "too few tasks solved in part: {partial}"
    );
    let coverage = hits as f64 / seeds as f64;
    assert!(coverage >= 0.75, "coverage {coverage}");
}

#[test]
fn a_thread_never_reuses_quarters_prepared_for_another_plan() {
    // N = 8 and 9 share h = 4, and the task kind slot of even N and of the centre queen: a
    // thread that solved an N = 8 task must not take its prepared quarters for N = 9's task
    // with the same quarter row masks (their key bits and filters differ).
    let (even, odd) = (
        split_plan(8, Level::detect(), (1, 1), false),
        split_plan(9, Level::detect(), (1, 1), false),
    );
    let fresh: Vec<u128> = (0..odd.len()).map(|id| odd.solve(id)).collect();
    for a in 0..even.len() {
        for (b, &count) in fresh.iter().enumerate() {
            even.solve(a);
            assert_eq!(odd.solve(b), count, "N = 9 task {b} after N = 8 task {a}");
        }
    }
}
