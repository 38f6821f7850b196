//! Joins of random keys through the batch pipeline against brute force: shared batches,
//! large fills, and every way a join too large for a batch is redone, cut or stored in
//! portions.

use std::sync::Arc;

use super::common::{brute, gpu, join_keys, keys, small_joiner};
use crate::gpu::join::{wait, GpuJoiner};
use crate::gpu::layout::{self, split, JoinDesc, JOIN_SWAP};
use crate::gpu::request::Request;
use crate::gpu::slot::Capacity;
use crate::work::Work;

#[test]
fn batched_joins_equal_brute_force_on_random_keys() {
    let Some(gpu) = gpu("batched_joins_equal_brute_force_on_random_keys") else {
        return;
    };
    let mut rng = fastrand::Rng::with_seed(11);
    let live = !(1u64 << 3) & ((1 << 61) - 1);
    let factors = [1, 2, 3, 4];
    for joiner in [
        GpuJoiner::new(Arc::clone(&gpu.device), None, None).unwrap(),
        small_joiner(&gpu),
    ] {
        // One block, a leaf of several blocks, many leaves; dense and sparse keys; stored on
        // either side. Submitted together, so that they share batches.
        let cases = [
            (1, 7, 20, 0.2, 0),
            (300, 500, 24, 0.3, JOIN_SWAP),
            (5000, 900, 40, 0.25, 0),
            (20000, 3000, 50, 0.12, 0),
            (700, 9000, 44, 0.2, JOIN_SWAP),
        ];
        let mut pending = Vec::new();
        for (w, e, bits, density, flags) in cases {
            let west = keys(&mut rng, w, bits, density);
            let east = keys(&mut rng, e, bits, density);
            let desc = JoinDesc {
                flags,
                cap: u32::MAX,
                factors,
                live: split(live),
                ..JoinDesc::default()
            };
            let rx = joiner
                .submit_request(Request::of_keys(&west, &east, desc))
                .unwrap();
            pending.push((rx, brute(&west, &east, factors, live), (w, e, bits)));
        }
        let mut all = Work::default();
        for (rx, want, case) in pending {
            let mut work = Work::default();
            let got = wait(rx, &mut work).unwrap();
            assert_eq!(got, Some(want.0), "{case:?}");
            assert_eq!(work.hits, want.1, "{case:?}");
            all.add(&work);
        }
        // Whole joins write every item with keys: at most the pairs tested, and most of them.
        let (written, tested) = (all.gpu_pairs_written, all.half_pairs_tested);
        assert!(2 * written > tested && written <= tested, "{all:?}");
    }
}

/// A fill far past one subtree (layout::SUBTREE_KEYS) has its top levels built level by
/// level, several of the tree's levels a pass: exact, and never cut (one workgroup building all of a tree of this size ran past
/// lavapipe's loop limit, and its join was cut).
#[test]
fn a_large_fill_is_built_level_by_level_without_a_cut() {
    let Some(gpu) = gpu("a_large_fill_is_built_level_by_level_without_a_cut") else {
        return;
    };
    let mut rng = fastrand::Rng::with_seed(5);
    let live = (1u64 << 61) - 1;
    let factors = [1, 2, 1, 2];
    let west = keys(&mut rng, 160_000, 50, 0.12);
    let east = keys(&mut rng, 2_000, 50, 0.12);
    let joiner = GpuJoiner::new(Arc::clone(&gpu.device), None, None).unwrap();
    let (got, work) = join_keys(&joiner, &west, &east, factors, live, 0);
    let want = brute(&west, &east, factors, live);
    assert_eq!(got, Some(want.0));
    assert_eq!(work.hits, want.1);
    assert_eq!(work.stored_keys, west.len() as u64);
    assert_eq!(work.regenerations, 0, "the join was cut");
    // Its root alone partitions every key.
    assert!(work.tree_tests >= west.len() as u64, "{}", work.tree_tests);
    // Its top passes split `TOP_DEPTH` of the tree's levels each: a fill of ten subtrees'
    // keys is moved in two passes at most at the top (one level a pass moved them 5.4
    // times here, three levels about three), its samples not much more: a node samples by
    // its size, not the most a pass takes.
    let tiled = work.gpu_wide_tiles * u64::from(layout::WIDE_TILE);
    let keys = west.len() as f64;
    let moved = (work.gpu_top_writes + tiled) as f64 / keys;
    assert!(moved <= 2.5, "{moved} moves a key: {work:?}");
    let passes = (work.gpu_top_accesses / 2 + tiled) as f64 / keys;
    assert!(passes < moved + 0.5, "{passes} passes a key: {work:?}");
    // Each of those moves writes its keys, a pass the accesses count once: the root's
    // pass alone (in tiles or not) moves every key, and a top level's workgroup reads a
    // key twice for each it writes. Its subtrees, each past a leaf, write every key at
    // least once (where they hold keys in registers, once built), and read each they
    // write.
    assert!(work.gpu_top_writes + tiled >= west.len() as u64, "{work:?}");
    assert!(2 * work.gpu_top_writes <= work.gpu_top_accesses, "{work:?}");
    assert!(work.gpu_rest_writes >= west.len() as u64, "{work:?}");
    assert!(work.gpu_rest_writes <= work.gpu_rest_accesses, "{work:?}");
}

/// A top level's large nodes partitioned in tiles across workgroups build the tree their
/// own workgroups build: the same blocks, routes and visits, every count exact.
#[test]
fn nodes_split_across_workgroups_build_the_same_tree() {
    let Some(gpu) = gpu("nodes_split_across_workgroups_build_the_same_tree") else {
        return;
    };
    let mut rng = fastrand::Rng::with_seed(23);
    let live = (1u64 << 61) - 1;
    let factors = [1, 2, 3, 4];
    let west = keys(&mut rng, 70_000, 48, 0.15);
    let east = keys(&mut rng, 3_000, 48, 0.15);
    let want = brute(&west, &east, factors, live);
    let run = |wide_keys: u32| {
        let mut cap = Capacity::of_budget(&gpu.device, 64 << 20);
        cap.wide_keys = wide_keys;
        let joiner = GpuJoiner::with_capacity(Arc::clone(&gpu.device), cap, 1 << 12, None);
        let (got, work) = join_keys(&joiner, &west, &east, factors, live, 0);
        assert_eq!(
            (got, work.hits),
            (Some(want.0), want.1),
            "wide keys {wide_keys}"
        );
        assert_eq!(work.regenerations, 0, "wide keys {wide_keys}");
        work
    };
    let narrow = run(u32::MAX);
    // Every top-level node past one subtree, at every level a batch of this fill records.
    let wide = run(layout::SUBTREE_KEYS);
    assert_eq!(narrow.gpu_wide_steps, 0);
    assert!(wide.gpu_wide_steps >= 8, "{}", wide.gpu_wide_steps);
    let same = |w: &Work| {
        (
            w.blocks_built,
            w.visited_pairs,
            w.routing_tests,
            w.tree_tests,
            w.stored_keys,
        )
    };
    assert_eq!(same(&wide), same(&narrow));
}

/// A subtree's node small enough to hold in registers builds the tree that partitions
/// through memory build, each key read once and written once below it: the same blocks,
/// routes and visits, every count exact.
#[test]
fn subtrees_held_in_registers_build_the_same_tree() {
    let Some(gpu) = gpu("subtrees_held_in_registers_build_the_same_tree") else {
        return;
    };
    let mut rng = fastrand::Rng::with_seed(31);
    let live = (1u64 << 61) - 1;
    let factors = [1, 2, 3, 4];
    // A fill of one subtree held whole, and one whose subtrees split through memory first.
    for stored in [3_000, 40_000] {
        let west = keys(&mut rng, stored, 48, 0.15);
        let east = keys(&mut rng, 2_000, 48, 0.15);
        let want = brute(&west, &east, factors, live);
        let run = |held_keys: u32| {
            let mut cap = Capacity::of_budget(&gpu.device, 64 << 20);
            cap.held_keys = held_keys;
            let joiner = GpuJoiner::with_capacity(Arc::clone(&gpu.device), cap, 1 << 12, None);
            let (got, work) = join_keys(&joiner, &west, &east, factors, live, 0);
            let case = (stored, held_keys);
            assert_eq!((got, work.hits), (Some(want.0), want.1), "{case:?}");
            assert_eq!(work.regenerations, 0, "{case:?}");
            work
        };
        let memory = run(0);
        let held = run(layout::HELD_KEYS);
        let same = |w: &Work| {
            (
                w.blocks_built,
                w.visited_pairs,
                w.routing_tests,
                w.tree_tests,
                w.gpu_rest_iterations,
                w.gpu_pair_rounds,
            )
        };
        assert_eq!(same(&held), same(&memory), "{stored}");
        assert!(held.gpu_rest_writes < memory.gpu_rest_writes, "{stored}");
        assert!(
            held.gpu_rest_accesses < memory.gpu_rest_accesses,
            "{stored}"
        );
        assert!(
            held.gpu_pair_accesses < memory.gpu_pair_accesses,
            "{stored}"
        );
        if stored <= layout::HELD_KEYS as usize {
            // Its root, held: each key read once and written once where its leaf lies.
            assert_eq!(held.gpu_rest_writes, stored as u64);
        }
    }
}

/// Routing keeps each workgroup's histogram of blocks for its second walk in the slot's
/// partition scratch, sized by its stored keys: where that runs out, the workgroups without
/// room count their queries again, and every count stays exact. (Those workgroups take no
/// room, each a global atomic fewer.)
#[test]
fn routing_histograms_without_room_are_counted_again_and_exact() {
    let Some(gpu) = gpu("routing_histograms_without_room_are_counted_again_and_exact") else {
        return;
    };
    let mut rng = fastrand::Rng::with_seed(29);
    let live = (1u64 << 61) - 1;
    let factors = [1, 2, 3, 4];
    let west = keys(&mut rng, 1_500, 48, 0.15);
    let east = keys(&mut rng, 120_000, 48, 0.15);
    let want = brute(&west, &east, factors, live);
    let run = |stored: Option<u32>| {
        let mut cap = Capacity::of_budget(&gpu.device, 64 << 20);
        cap.stored = stored.unwrap_or(cap.stored);
        let joiner = GpuJoiner::with_capacity(Arc::clone(&gpu.device), cap, 1 << 12, None);
        let (got, work) = join_keys(&joiner, &west, &east, factors, live, 0);
        assert_eq!((got, work.hits), (Some(want.0), want.1), "{stored:?}");
        assert_eq!(work.regenerations, 0, "{stored:?}");
        work
    };
    let roomy = run(None);
    // Room for 1,500 entries: the 469 workgroups' headers, and histograms of a few blocks
    // each for some of them.
    let tight = run(Some(west.len() as u32));
    assert_eq!(tight.visited_pairs, roomy.visited_pairs);
    assert!(
        tight.route_atomics < roomy.route_atomics,
        "{} against {}",
        tight.route_atomics,
        roomy.route_atomics
    );
}

/// A join whose blocks (or routes) pass a batch's room is split as its tree's root splits
/// it, again where a part still passes it, into parts that fit, their counts adding up to
/// its count, their visits about the whole's (a cut into runs of jobs, met by every query
/// each, visited 1.19 times them) and each stored key in one of them.
#[test]
fn a_join_past_the_blocks_room_is_cut_and_exact() {
    let Some(gpu) = gpu("a_join_past_the_blocks_room_is_cut_and_exact") else {
        return;
    };
    let mut rng = fastrand::Rng::with_seed(17);
    let live = (1u64 << 61) - 1;
    let factors = [1, 2, 3, 4];
    let west = keys(&mut rng, 24_000, 44, 0.2);
    let east = keys(&mut rng, 6_000, 44, 0.2);
    let want = brute(&west, &east, factors, live);
    let roomy = GpuJoiner::new(Arc::clone(&gpu.device), None, None).unwrap();
    let (got, whole) = join_keys(&roomy, &west, &east, factors, live, 0);
    assert_eq!((got, whole.hits), (Some(want.0), want.1));
    assert_eq!(whole.regenerations, 0);
    let mut cap = Capacity::of_budget(&gpu.device, 64 << 20);
    cap.blocks = whole.blocks_built as u32 / 3;
    let tight = GpuJoiner::with_capacity(Arc::clone(&gpu.device), cap, 1 << 12, None);
    let (got, parts) = join_keys(&tight, &west, &east, factors, live, 0);
    assert_eq!((got, parts.hits), (Some(want.0), want.1));
    assert!(parts.regenerations >= 2, "{}", parts.regenerations);
    let visits = parts.visited_pairs as f64 / whole.visited_pairs as f64;
    let trees = parts.tree_tests as f64 / whole.tree_tests as f64;
    eprintln!(
        "cut in {} parts: {visits:.3} of the whole's visits, {trees:.3} of its tree's tests",
        parts.regenerations + 1
    );
    assert!(visits <= 1.05, "{visits:.3} times the whole's visits");
    // Its keys show it past the room at its root: the rest of its tree is not built (2.45
    // times the whole's tree tests in all; 4.17 where it was, before its root was split).
    assert!(trees <= 3.0, "{trees:.3} times the whole's tree tests");
    assert_eq!(parts.stored_keys, whole.stored_keys);
    // Its try tested the whole's pairs, its parts the rest; it notes what a batch holding
    // it whole needs: its keys, and blocks and routes past the tight room.
    assert_eq!((whole.gpu_part_pairs, whole.gpu_cut_keys), (0, 0));
    assert_eq!(whole.gpu_cut_blocks_peak, 0);
    // Its try's share of the tree's work is noted, a part of what the parts' counters hold.
    let tried = whole.gpu_tried_top_accesses + whole.gpu_tried_rest_accesses;
    assert_eq!((tried, whole.gpu_tried_wide_tiles), (0, 0));
    let tried = parts.gpu_tried_top_accesses + parts.gpu_tried_rest_accesses;
    let built = parts.gpu_top_accesses
        + parts.gpu_top_writes
        + parts.gpu_rest_accesses
        + parts.gpu_rest_writes;
    assert!(tried > 0 && tried < built, "{parts:?}");
    assert_eq!(
        parts.half_pairs_tested - parts.gpu_part_pairs,
        whole.half_pairs_tested
    );
    assert_eq!(parts.gpu_cut_stored_peak, whole.stored_keys);
    assert_eq!(parts.gpu_cut_queries_peak, whole.queries);
    assert!(parts.gpu_cut_keys >= whole.stored_keys);
    assert!(parts.gpu_cut_blocks_peak > u64::from(cap.blocks));
    assert!(parts.gpu_cut_routes_peak >= parts.visited_pairs);
    // Past the routes' room instead: split the same way (its stored side has the more
    // pairs), exact, visiting what the whole does.
    let mut cap = Capacity::of_budget(&gpu.device, 64 << 20);
    cap.routes = whole.visited_pairs as u32 / 3;
    let tight = GpuJoiner::with_capacity(Arc::clone(&gpu.device), cap, 1 << 12, None);
    let (got, parts) = join_keys(&tight, &west, &east, factors, live, 0);
    assert_eq!((got, parts.hits), (Some(want.0), want.1));
    let visits = parts.visited_pairs as f64 / whole.visited_pairs as f64;
    let trees = parts.tree_tests as f64 / whole.tree_tests as f64;
    eprintln!(
        "routes cut in {} parts: {visits:.3} of the whole's visits, {trees:.3} of its tree's tests",
        parts.regenerations + 1
    );
    assert!(parts.regenerations >= 2, "{}", parts.regenerations);
    assert!(visits <= 1.05, "{visits:.3} times the whole's visits");
    // Each key stored by one part (a cut of the queries stores them all in each).
    assert_eq!(parts.stored_keys, whole.stored_keys);
}

#[test]
fn a_stored_side_past_its_cap_is_refused_or_cut() {
    let Some(gpu) = gpu("a_stored_side_past_its_cap_is_refused_or_cut") else {
        return;
    };
    let mut rng = fastrand::Rng::with_seed(3);
    let live = (1u64 << 61) - 1;
    let west = keys(&mut rng, 3000, 30, 0.2);
    let east = keys(&mut rng, 500, 30, 0.2);
    let want = brute(&west, &east, [1, 1, 2, 4], live);
    let joiner = GpuJoiner::new(Arc::clone(&gpu.device), None, None).unwrap();
    for (flags, expect) in [(layout::JOIN_REFUSE, None), (0, Some(want.0))] {
        let desc = JoinDesc {
            flags,
            cap: 1000,
            factors: [1, 1, 2, 4],
            live: split(live),
            ..JoinDesc::default()
        };
        let rx = joiner
            .submit_request(Request::of_keys(&west, &east, desc))
            .unwrap();
        let mut work = Work::default();
        assert_eq!(wait(rx, &mut work).unwrap(), expect);
    }
}

/// As the CPU, a join whose east side outweighs its west one but passes a fill stores the
/// east side a portion of a fill at a time, every west key querying each (storing the west
/// side, as before, left the many east keys as queries); a portion that does not fit a
/// batch is halved.
#[test]
fn an_east_side_past_its_cap_is_stored_in_portions() {
    let Some(gpu) = gpu("an_east_side_past_its_cap_is_stored_in_portions") else {
        return;
    };
    let mut rng = fastrand::Rng::with_seed(9);
    let live = (1u64 << 61) - 1;
    let west = keys(&mut rng, 400, 36, 0.2);
    let east = keys(&mut rng, 9000, 36, 0.2);
    let factors = [1, 2, 3, 4];
    let want = brute(&west, &east, factors, live);
    let joiner = |f: fn(&mut Capacity)| {
        let mut cap = Capacity::of_budget(&gpu.device, 64 << 20);
        f(&mut cap);
        GpuJoiner::with_capacity(Arc::clone(&gpu.device), cap, 1 << 12, None)
    };
    // The join through `joiner`: exact, and what it did.
    let join = |joiner: &GpuJoiner| {
        let desc = JoinDesc {
            flags: JOIN_SWAP,
            cap: 2000,
            factors,
            live: split(live),
            ..JoinDesc::default()
        };
        let rx = joiner
            .submit_request(Request::of_keys(&west, &east, desc))
            .unwrap();
        let mut work = Work::default();
        assert_eq!(wait(rx, &mut work).unwrap(), Some(want.0));
        assert_eq!(work.hits, want.1);
        work
    };
    let roomy = GpuJoiner::new(Arc::clone(&gpu.device), None, None).unwrap();
    let few_blocks = joiner(|c| c.blocks = 3);
    for (joiner, parts) in [(roomy, 5), (few_blocks, 6)] {
        let work = join(&joiner);
        assert_eq!(work.stored_keys, east.len() as u64, "{work:?}");
        let counted = work.queries / west.len() as u64;
        assert_eq!(work.queries, west.len() as u64 * counted);
        assert!(counted >= parts, "{counted} portions");
        if parts == 5 {
            // Portions in one batch carry the whole's words once: fewer sets than runs.
            assert!(work.gpu_word_sets < 1 + counted, "{work:?}");
            // Each portion makes all the east side's keys to keep a fifth or so of them:
            // its write pass tests the pairs of the items with keys in its range only.
            let (written, tested) = (work.gpu_pairs_written, work.half_pairs_tested);
            assert!(written > 0 && 2 * written < tested, "{work:?}");
        }
    }
    // Routes past a batch's: a portion's queries are cut by jobs, its stored range kept.
    let work = join(&joiner(|c| c.routes = 200));
    assert_eq!(work.queries, 5 * west.len() as u64, "{work:?}");
    assert!(work.regenerations > 5, "{}", work.regenerations);
}

/// A join that runs in several batches keeps its carried words on the GPU: uploaded once,
/// not once a batch, every count exact; a set no request holds any more leaves its room to
/// the next join's, and where there is no room the batches carry the words as before.
#[test]
fn a_cut_joins_words_go_up_once_for_all_its_batches() {
    let Some(gpu) = gpu("a_cut_joins_words_go_up_once_for_all_its_batches") else {
        return;
    };
    let mut rng = fastrand::Rng::with_seed(31);
    let live = (1u64 << 61) - 1;
    let factors = [1, 2, 3, 4];
    let west = keys(&mut rng, 3000, 36, 0.2);
    let east = keys(&mut rng, 400, 36, 0.2);
    let want = brute(&west, &east, factors, live);
    // A join's carried words: its keys and a zero.
    let set = (west.len() + east.len() + 1) as u64;
    // Three joins one after another, with routes for a few parts a batch, resident room
    // for `room` words, keeping sets of `from` words and more.
    let run = |from: usize, room: u64| {
        let mut cap = Capacity::of_budget(&gpu.device, 64 << 20);
        cap.routes = 300;
        let joiner = GpuJoiner::with_capacity(Arc::clone(&gpu.device), cap, room, None);
        joiner.keep_words_from(from, from);
        let mut work = Work::default();
        for _ in 0..3 {
            let (got, did) = join_keys(&joiner, &west, &east, factors, live, 0);
            assert_eq!(
                (got, did.hits),
                (Some(want.0), want.1),
                "from {from}, room {room}"
            );
            work.add(&did);
        }
        work
    };
    let carried = run(usize::MAX, 2 * set);
    assert!(carried.gpu_batches >= 9, "{carried:?}");
    assert_eq!(carried.gpu_word_sets, carried.gpu_batches, "{carried:?}");
    let kept = run(1, 2 * set);
    assert_eq!(kept.gpu_word_sets, 3, "{kept:?}");
    assert_eq!(kept.gpu_batches, carried.gpu_batches);
    assert!(kept.gpu_bytes_up < carried.gpu_bytes_up);
    // No room for a set: carried.
    let no_room = run(1, set - 1);
    assert_eq!(no_room.gpu_word_sets, no_room.gpu_batches, "{no_room:?}");
}

#[test]
#[ignore = "minutes on a software driver"]
fn a_fill_of_millions_of_keys_equals_brute_force() {
    let Some(gpu) = gpu("a_fill_of_millions_of_keys_equals_brute_force") else {
        return;
    };
    let mut rng = fastrand::Rng::with_seed(29);
    let live = (1u64 << 61) - 1;
    let factors = [1, 2, 3, 4];
    let west = keys(&mut rng, 4_000_000, 54, 0.1);
    let east = keys(&mut rng, 300, 54, 0.1);
    let want = brute(&west, &east, factors, live);
    let cap = Capacity::of_budget(&gpu.device, 3 << 30);
    let joiner = GpuJoiner::with_capacity(Arc::clone(&gpu.device), cap, 1 << 12, None);
    let (got, work) = join_keys(&joiner, &west, &east, factors, live, 0);
    assert_eq!((got, work.hits), (Some(want.0), want.1));
}
