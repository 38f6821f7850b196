//! Two-colour counts against a brute-force oracle that shares nothing with the bitset method.

use super::*;
use proptest::prelude::*;

/// Places black and white queens row by row with explicit attack checks: an oracle that
/// shares nothing with the bitset method.
fn brute(mask: &Mask) -> u128 {
    fn safe(placed: &[usize], c: usize) -> bool {
        let r = placed.len();
        placed
            .iter()
            .enumerate()
            .all(|(r2, &c2)| c2 != c && r - r2 != c.abs_diff(c2))
    }
    fn go(mask: &Mask, black: &mut Vec<usize>, white: &mut Vec<usize>) -> u128 {
        let n = mask.n() as usize;
        let r = black.len();
        if r == n {
            return 1;
        }
        let mut total = 0;
        let allowed = |c: usize| mask.is_allowed(r as u32, c as u32);
        for b in 0..n {
            if !allowed(b) || !safe(black, b) {
                continue;
            }
            for w in 0..n {
                if w != b && allowed(w) && safe(white, w) {
                    black.push(b);
                    white.push(w);
                    total += go(mask, black, white);
                    black.pop();
                    white.pop();
                }
            }
        }
        total
    }
    go(mask, &mut Vec::new(), &mut Vec::new())
}

#[test]
fn full_boards_give_the_published_values() {
    let expected = [2u128, 40, 12, 496, 3252, 48328, 205188, 2732488, 76261328];
    for (n, want) in (4..=12).zip(expected) {
        let result = count(&Mask::full(n).unwrap(), 2).unwrap();
        assert_eq!(result.pairs, want, "n = {n}");
        assert_eq!(result.symmetries, 8);
    }
}

#[test]
fn the_classic_samples() {
    let all = parse("4\n1 1 1 1\n1 1 1 1\n1 1 1 1\n1 1 1 1\n", "s").unwrap();
    assert_eq!(count(&all, 1).unwrap().pairs, 2);
    // The classic second sample blocks the second cell of the top row: one of the two
    // 4x4 solutions uses it, so no pair is left.
    let second = parse("4\n1 0 1 1\n1 1 1 1\n1 1 1 1\n1 1 1 1\n", "s").unwrap();
    assert_eq!(count(&second, 1).unwrap().pairs, 0);
    // No 4x4 solution uses a corner, so blocking the top-left cell changes nothing.
    let corner = parse("4\n0 1 1 1\n1 1 1 1\n1 1 1 1\n1 1 1 1\n", "s").unwrap();
    assert_eq!(count(&corner, 1).unwrap().pairs, 2);
}

#[test]
fn tiny_boards_have_no_pairs() {
    for n in 1..=3 {
        assert_eq!(count(&Mask::full(n).unwrap(), 1).unwrap().pairs, 0);
    }
}

#[test]
fn the_symmetry_reduction_changes_nothing() {
    for n in 4..=10 {
        let mask = Mask::full(n).unwrap();
        let with = count_with_symmetry(&mask, 2, true).unwrap();
        let without = count_with_symmetry(&mask, 2, false).unwrap();
        assert_eq!(with.pairs, without.pairs, "n = {n}");
        assert_eq!(without.representatives, without.solutions);
    }
}

/// n = 13 both ways (under a second each in the optimised test profile).
#[test]
fn thirteen_with_and_without_symmetry_agree() {
    let mask = Mask::full(13).unwrap();
    let with = count_with_symmetry(&mask, 2, true).unwrap();
    let without = count_with_symmetry(&mask, 2, false).unwrap();
    assert_eq!(with.pairs, without.pairs);
}

#[test]
fn full_boards_match_brute_force() {
    for n in 1..=6 {
        let mask = Mask::full(n).unwrap();
        assert_eq!(count(&mask, 2).unwrap().pairs, brute(&mask), "n = {n}");
    }
}

#[test]
fn symmetric_masks_find_their_symmetries() {
    // Centre cell of a 5x5 blocked: all 8 symmetries survive; a corner: 2 (the diagonal).
    let mut rows = vec![0b11111u32; 5];
    rows[2] = 0b11011;
    assert_eq!(symmetries(&Mask::from_rows(&rows).unwrap()).len(), 8);
    let mut rows = vec![0b11111u32; 5];
    rows[0] = 0b11110;
    assert_eq!(symmetries(&Mask::from_rows(&rows).unwrap()).len(), 2);
}

#[test]
fn malformed_input_names_the_line() {
    for (text, line) in [
        ("", 1),
        ("x\n", 1),
        ("4\n1111\n1111\n1111\n", 5),
        ("2\n11\n1z\n", 3),
        ("2\n11\n11\n\n11\n", 5),
    ] {
        match parse(text, "t") {
            Err(Error::Parse { line: l, .. }) => assert_eq!(l, line, "{text:?}"),
            other => panic!("{text:?}: {other:?}"),
        }
    }
}

/// A mask of n rows from cell flags, mostly allowed.
fn mask_of(n: u32, cells: &[bool]) -> Mask {
    let rows: Vec<u32> = cells
        .chunks(n as usize)
        .map(|row| row.iter().rev().fold(0, |m, &a| m << 1 | u32::from(a)))
        .collect();
    Mask::from_rows(&rows).unwrap()
}

/// The cells of `mask` allowed in every image under the symmetries `group`.
fn symmetrise(mask: &Mask, group: &[Symmetry]) -> Mask {
    let n = mask.n() as usize;
    let rows: Vec<u32> = (0..n)
        .map(|r| {
            (0..n).fold(0, |m, c| {
                let ok = group.iter().all(|g| {
                    let (r2, c2) = g.map(n, r, c);
                    mask.is_allowed(r2 as u32, c2 as u32)
                });
                m | u32::from(ok) << c
            })
        })
        .collect();
    Mask::from_rows(&rows).unwrap()
}

/// The options of a count on `threads` threads with an index of at most `groups` groups of
/// words (the room the slicing leaves for them, and a little).
fn sliced(threads: usize, n: u32, groups: u64) -> TwoColourOptions {
    let group = (8 * index::GROUP) as u64 * u64::from(n * n);
    let limit = (16 << 20) + (groups * group).div_ceil(3) * 4 + 4;
    TwoColourOptions::new()
        .threads(threads)
        .memory_limit(Some(limit))
}

#[test]
fn an_index_in_slices_gives_the_same_pairs() {
    // n = 11: 2680 solutions, 3 groups of 1024; one group per slice.
    let mask = Mask::full(11).unwrap();
    for symmetry in [true, false] {
        let options = sliced(2, 11, 1).symmetry(symmetry);
        let result = count_with(&mask, &options, &NoProgress).unwrap();
        assert_eq!(result.pairs, 2_732_488, "symmetry {symmetry}");
        assert_eq!(result.solutions, 2680);
    }
    let two = count_with(&mask, &sliced(1, 11, 2), &NoProgress).unwrap();
    assert_eq!(two.pairs, 2_732_488);
}

#[test]
fn no_room_for_one_group_is_a_memory_error_not_an_abort() {
    let options = TwoColourOptions::new().threads(1).memory_limit(Some(0));
    match count_with(&Mask::full(8).unwrap(), &options, &NoProgress) {
        Err(Error::Memory { need, .. }) => assert!(need > 16 << 20),
        other => panic!("{other:?}"),
    }
}

#[test]
fn boards_whose_pairs_would_take_decades_are_refused_at_once() {
    // 20×20: 39,029,188,884 solutions, published; 32×32: sampled.
    for n in [20, 32] {
        match count(&Mask::full(n).unwrap(), 1) {
            Err(Error::Unsupported { what, .. }) => assert!(what.contains("2^64"), "{what}"),
            other => panic!("n = {n}: {other:?}"),
        }
    }
    assert!(cost::work(19, known_total(19), 8) <= MAX_WORK);
    assert!(cost::work(20, known_total(20), 8) > MAX_WORK);
}

fn known_total(n: u32) -> u128 {
    crate::known::total(n).unwrap()
}

#[test]
fn a_count_too_large_is_stopped_once_its_solutions_pass_the_bound() {
    let mask = Mask::full(12).unwrap();
    let mut prefixes = index::prefixes(&mask, 64);
    let tasks: Vec<usize> = (0..prefixes.len()).collect();
    let group = symmetries(&mask);
    let found = index::number(&mask, &mut prefixes, &tasks, &group, 5000).unwrap_err();
    assert!(found > 5000);
    let all = index::number(&mask, &mut prefixes, &tasks, &group, u64::MAX).unwrap();
    assert_eq!(all, 14_200);
}

#[test]
fn thread_counts_out_of_range_are_errors() {
    let mask = Mask::full(6).unwrap();
    for threads in [0, crate::MAX_THREADS + 1, usize::MAX] {
        assert!(matches!(count(&mask, threads), Err(Error::Threads { .. })));
    }
}

#[test]
fn the_cost_is_published_for_open_boards_and_sampled_for_masks() {
    let open = cost(&Mask::full(16).unwrap());
    assert_eq!((open.solutions, open.exact), (14_772_512, true));
    assert_eq!(open.index_bytes, index::bytes(16, 14_772_512));
    for seed in 0..6u64 {
        let n = 10 + (seed % 3) as u32;
        let mut rng = fastrand::Rng::with_seed(seed);
        let rows: Vec<u32> = (0..n)
            .map(|_| (0..n).fold(0, |m, c| m | u32::from(rng.u32(0..6) != 0) << c))
            .collect();
        let mask = Mask::from_rows(&rows).unwrap();
        let estimate = cost(&mask);
        let exact = crate::puzzles::mask::count_masked(&mask, 1, &NoProgress)
            .unwrap()
            .total;
        assert!(!estimate.exact);
        assert!(
            estimate.solutions * 4 >= exact && estimate.solutions <= exact * 4,
            "seed {seed}: {} against {exact}",
            estimate.solutions
        );
    }
}

/// Records what a count tells its observer; asks it to stop after `stop_after` tasks.
#[derive(Default)]
struct Recorder {
    started: std::sync::Mutex<Vec<usize>>,
    pairs: std::sync::Mutex<u128>,
    stop_after: Option<usize>,
}

impl Progress for Recorder {
    fn task_started(&self, task: usize, _cost: u64) {
        self.started.lock().unwrap().push(task);
    }
    fn task_done(&self, _task: usize, count: u128) {
        *self.pairs.lock().unwrap() += count;
    }
    fn should_stop(&self) -> bool {
        self.stop_after
            .is_some_and(|after| self.started.lock().unwrap().len() > after)
    }
}

#[test]
fn progress_hears_of_every_task_and_can_stop_the_count() {
    let mask = Mask::full(12).unwrap();
    let options = sliced(2, 12, 7);
    let recorder = Recorder::default();
    let result = count_with(&mask, &options, &recorder).unwrap();
    assert_eq!(*recorder.pairs.lock().unwrap(), result.pairs);
    let mut started = recorder.started.into_inner().unwrap();
    let all = started.len();
    started.sort_unstable();
    started.dedup();
    assert_eq!(started.len(), all, "task ids are unique across slices");
    let stopper = Recorder {
        stop_after: Some(1),
        ..Recorder::default()
    };
    let options = TwoColourOptions::new().threads(1);
    // n = 13 has chunks of 4096 black solutions to stop between.
    let stopped = count_with(&Mask::full(13).unwrap(), &options, &stopper);
    assert!(matches!(stopped, Err(Error::Interrupted)), "{stopped:?}");
}

#[test]
fn orbits_cover_every_solution_once() {
    for n in [5, 6, 8] {
        let mask = Mask::full(n).unwrap();
        let group = symmetries(&mask);
        let mut members = Vec::new();
        let mut reps = symmetry::Reps::new(&mask, &group);
        while let Some((_, size)) = reps.next_rep() {
            let orbit: Vec<Vec<u8>> = reps.orbit().members().map(<[u8]>::to_vec).collect();
            assert_eq!(orbit.len(), size, "n = {n}");
            members.extend(orbit);
        }
        let all = members.len();
        members.sort();
        members.dedup();
        assert_eq!(members.len(), all, "n = {n}: an orbit overlaps another");
        assert_eq!(Some(all as u128), crate::known::total(n));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn random_masks_match_brute_force(
        (n, cells) in (1u32..=6).prop_flat_map(|n| {
            (Just(n), prop::collection::vec(prop::bool::weighted(0.85), (n * n) as usize))
        }),
        threads in 1usize..=3,
    ) {
        let mask = mask_of(n, &cells);
        let want = brute(&mask);
        prop_assert_eq!(count(&mask, threads).unwrap().pairs, want);
        prop_assert_eq!(count_with_symmetry(&mask, threads, false).unwrap().pairs, want);
    }

    #[test]
    fn symmetric_random_masks_match_brute_force(
        (n, cells) in (4u32..=6).prop_flat_map(|n| {
            (Just(n), prop::collection::vec(prop::bool::weighted(0.9), (n * n) as usize))
        }),
        subgroup in 0usize..4,
    ) {
        // Whole group; mirror; 180-degree rotation; main-diagonal reflection.
        let group: Vec<Symmetry> = match subgroup {
            0 => SQUARE.to_vec(),
            1 => vec![SQUARE[0], SQUARE[1]],
            2 => vec![SQUARE[0], SQUARE[3]],
            _ => vec![SQUARE[0], SQUARE[4]],
        };
        let mask = symmetrise(&mask_of(n, &cells), &group);
        prop_assert!(symmetries(&mask).len() >= group.len());
        prop_assert_eq!(count(&mask, 2).unwrap().pairs, brute(&mask));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]
    #[test]
    fn sliced_random_masks_match_unsliced_counts(
        cells in prop::collection::vec(prop::bool::weighted(0.97), 121),
        symmetry in proptest::bool::ANY,
    ) {
        // One group per slice: boards of more than 1024 solutions are sliced.
        let n = 11;
        let mask = mask_of(n, &cells);
        let options = sliced(2, n, 1).symmetry(symmetry);
        let result = count_with(&mask, &options, &NoProgress).unwrap();
        prop_assert_eq!(result.pairs, count(&mask, 2).unwrap().pairs);
    }
}

/// A board kept by the quarter turns, not the mirror: the least member of its one orbit of
/// solutions starts in the right half (a quarter turn also takes (0, 0) to (0, n − 1)), and
/// its two solutions are each other's partners.
#[test]
fn a_board_kept_by_quarter_turns_counts_every_orbit() {
    let mask = Mask::from_rows(&[59, 55, 29, 46, 59, 55]).unwrap();
    assert_eq!(symmetries(&mask).len(), 4);
    assert!(!symmetries(&mask).contains(&SQUARE[1]));
    assert_eq!(brute(&mask), 2);
    assert_eq!(count(&mask, 1).unwrap().pairs, 2);
}
