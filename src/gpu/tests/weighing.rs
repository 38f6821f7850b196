//! The block count's weighings and sums against brute force: every chunk count and class
//! weighing, sums past 32 bits, and the weights it refuses.

use std::sync::Arc;

use super::common::{brute, gpu, join_keys, keys};
use crate::gpu::join::{weights_fit, GpuJoiner};
use crate::gpu::layout::JOIN_SWAP;
use crate::gpu::slot::Capacity;

/// A weighing of a join's pairs: the west classes' factors, whether the east side is stored
/// (its queries then carry the factors), and the classes the west and east keys take.
struct Weighing {
    what: &'static str,
    factors: [u32; 4],
    swapped: bool,
    classes: (u32, u32),
}

/// The weighings of the engine's joins, and the largest weights the count takes.
const WEIGHINGS: [Weighing; 8] = [
    Weighing {
        what: "odd N: one class",
        factors: [1, 0, 0, 0],
        swapped: false,
        classes: (1, 4),
    },
    Weighing {
        what: "even N, ew = 2",
        factors: [4, 4, 4, 4],
        swapped: false,
        classes: (4, 4),
    },
    Weighing {
        what: "even N, ew = 1",
        factors: [2, 4, 4, 4],
        swapped: false,
        classes: (4, 4),
    },
    Weighing {
        what: "even N, ew = 0",
        factors: [0, 4, 4, 4],
        swapped: false,
        classes: (4, 4),
    },
    Weighing {
        what: "even N below 18",
        factors: [1, 2, 2, 4],
        swapped: false,
        classes: (4, 4),
    },
    Weighing {
        what: "swapped, odd N",
        factors: [1, 0, 0, 0],
        swapped: true,
        classes: (1, 4),
    },
    Weighing {
        what: "swapped, even N",
        factors: [2, 4, 4, 4],
        swapped: true,
        classes: (4, 4),
    },
    Weighing {
        what: "the largest weights",
        factors: [255, 254, 255, 255],
        swapped: false,
        classes: (4, 4),
    },
];

/// `keys` with their classes drawn from the first `classes`.
fn with_classes(rng: &mut fastrand::Rng, keys: &[u64], classes: u32) -> Vec<u64> {
    keys.iter()
        .map(|k| k & !(3 << 61) | u64::from(rng.u32(..classes)) << 61)
        .collect()
}

#[test]
fn every_chunk_count_and_weighing_equals_brute_force() {
    let Some(gpu) = gpu("every_chunk_count_and_weighing_equals_brute_force") else {
        return;
    };
    let mut rng = fastrand::Rng::with_seed(3);
    let joiner = GpuJoiner::new(Arc::clone(&gpu.device), None, None).unwrap();
    let live = (1 << 61) - 1;
    for chunks in 1..=12u32 {
        // One block (a single leaf) whose keys mix every one of their bits: 5·chunks − 2.
        let bits = 5 * chunks - 2;
        let size = if chunks % 2 == 0 { 512 } else { 300 };
        let few = keys(&mut rng, 200, bits, 0.2);
        let many = keys(&mut rng, size, bits, 0.2);
        for w in &WEIGHINGS {
            // The stored side is the larger, west unless swapped.
            let (west, east) = if w.swapped {
                (&few, &many)
            } else {
                (&many, &few)
            };
            let west = with_classes(&mut rng, west, w.classes.0);
            let east = with_classes(&mut rng, east, w.classes.1);
            let flags = if w.swapped { JOIN_SWAP } else { 0 };
            let (count, work) = join_keys(&joiner, &west, &east, w.factors, live, flags);
            let case = format!("{chunks} chunks, {}", w.what);
            let want = brute(&west, &east, w.factors, live);
            assert_eq!((count, work.hits), (Some(want.0), want.1), "{case}");
            assert!(work.hits > 0, "{case}: no pair met");
            assert_eq!(work.table_chunks, u64::from(chunks), "{case}: chunks built");
            assert_eq!(work.blocks_built, 1, "{case}: one block");
            // Every visit of that block reads its chunks.
            assert_eq!(
                work.gpu_visit_chunks,
                work.visited_pairs * u64::from(chunks),
                "{case}: visits' chunks"
            );
        }
    }
}

/// A join past the routes' room counts some of its visits before it is cut; those are not
/// its parts' visits, so its chunks are not counted either: the chunks a visit reads follow
/// the visits `visited_pairs` counts, as the span model prices them together.
#[test]
fn a_cut_joins_visit_chunks_are_its_parts_visits_chunks() {
    let Some(gpu) = gpu("a_cut_joins_visit_chunks_are_its_parts_visits_chunks") else {
        return;
    };
    let mut rng = fastrand::Rng::with_seed(5);
    let live = (1 << 61) - 1;
    // One block of seven chunks, met by most of 400 queries.
    let chunks = 7u32;
    let west = keys(&mut rng, 512, 5 * chunks - 2, 0.2);
    let east = keys(&mut rng, 400, 5 * chunks - 2, 0.2);
    let want = brute(&west, &east, [1; 4], live);
    let mut cap = Capacity::of_budget(&gpu.device, 64 << 20);
    cap.routes = 150;
    let tight = GpuJoiner::with_capacity(Arc::clone(&gpu.device), cap, 1 << 12, None);
    let (count, work) = join_keys(&tight, &west, &east, [1; 4], live, 0);
    assert_eq!((count, work.hits), (Some(want.0), want.1));
    assert!(work.regenerations >= 2, "not cut: {work:?}");
    assert_eq!(work.blocks_built, work.regenerations + 1, "a block a part");
    assert_eq!(
        work.gpu_visit_chunks,
        work.visited_pairs * u64::from(chunks),
        "{work:?}"
    );
}

#[test]
fn a_joins_sum_past_2_to_the_32_stays_exact_in_every_mode() {
    let Some(gpu) = gpu("a_joins_sum_past_2_to_the_32_stays_exact_in_every_mode") else {
        return;
    };
    // One block of 512 keys that meet every query: a count workgroup takes 2,048 routes of
    // 512 hits, each weighing up to 255, so its sum passes 2^28 while no invocation's passes
    // 2^28; 40,000 queries take the join's past 2^32 (count.wgsl).
    let mut rng = fastrand::Rng::with_seed(9);
    let joiner = GpuJoiner::new(Arc::clone(&gpu.device), None, None).unwrap();
    let zeros = [0u64; 512];
    let queries = vec![0u64; 40_000];
    for (factors, flags) in [
        ([255; 4], 0),
        ([255, 254, 255, 255], 0),
        ([255, 1, 2, 255], 0),
        ([255, 254, 253, 255], JOIN_SWAP),
    ] {
        let (west, east) = if flags == 0 {
            (
                with_classes(&mut rng, &zeros, 4),
                with_classes(&mut rng, &queries, 4),
            )
        } else {
            (
                with_classes(&mut rng, &queries[..512], 4),
                with_classes(&mut rng, &queries, 4),
            )
        };
        let live = (1 << 61) - 1;
        let (count, work) = join_keys(&joiner, &west, &east, factors, live, flags);
        let want = brute(&west, &east, factors, live);
        assert_eq!((count, work.hits), (Some(want.0), want.1), "{factors:?}");
        // 512 · 40,000 pairs of weight 255 pass 2^32; the lighter weighings pass 2^31.
        let past = if factors == [255; 4] {
            1u64 << 32
        } else {
            1 << 31
        };
        assert!(want.0 > past, "{factors:?}: {}", want.0);
    }
}

#[test]
fn a_weight_the_count_cannot_sum_is_refused() {
    let e = weights_fit([1, 256, 1, 1]).expect_err("a weight of 256");
    assert!(e.contains("256"), "{e}");
    assert!(weights_fit([255, 4, 4, 0]).is_ok());
}
