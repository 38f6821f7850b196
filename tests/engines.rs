//! Every engine against brute force, the published values, and itself under other thread
//! counts and split depths.

mod common;

use nqueens::{count, engine, known, CountOptions};
use proptest::prelude::*;

fn total(n: u32, options: &CountOptions) -> u128 {
    count(n, options).expect("count succeeds").total
}

#[test]
fn brute_force_oracle_agrees_with_a_hand_count() {
    assert_eq!(common::brute_force(4), 2);
    assert_eq!(common::brute_force(6), 4);
}

#[test]
fn every_engine_matches_brute_force_for_n_1_to_10() {
    for e in engine::ENGINES {
        for n in 1..=10u32 {
            let expected = u128::from(common::brute_force(n as usize));
            let options = CountOptions::new().engine(e.name()).threads(2);
            assert_eq!(total(n, &options), expected, "{} n = {n}", e.name());
        }
    }
}

#[test]
fn every_engine_matches_the_known_values_up_to_14() {
    for e in engine::ENGINES {
        for n in 1..=14u32 {
            let result = count(n, &CountOptions::new().engine(e.name())).unwrap();
            assert_eq!(Some(result.total), known::total(n), "{} n = {n}", e.name());
            assert_eq!(result.verified, Some(true));
        }
    }
}

#[test]
fn thread_counts_one_two_three_agree() {
    for e in engine::ENGINES {
        for n in [9u32, 12, 13] {
            let totals: Vec<u128> = (1..=3)
                .map(|t| total(n, &CountOptions::new().engine(e.name()).threads(t)))
                .collect();
            assert!(
                totals.iter().all(|&t| t == totals[0]),
                "{} n = {n}: {totals:?}",
                e.name()
            );
        }
    }
}

#[test]
fn mirror_split_depths_agree() {
    for depth in 1..=6 {
        let options = CountOptions::new()
            .engine("mirror")
            .split_depth(Some(depth));
        assert_eq!(total(12, &options), 14_200, "depth {depth}");
    }
}

#[test]
fn bad_options_are_errors_not_panics() {
    assert!(count(0, &CountOptions::new()).is_err());
    assert!(count(33, &CountOptions::new()).is_err());
    assert!(count(8, &CountOptions::new().threads(0)).is_err());
    assert!(count(8, &CountOptions::new().engine("nope")).is_err());
    assert!(count(
        8,
        &CountOptions::new().engine("mirror").split_depth(Some(0))
    )
    .is_err());
    assert!(count(8, &CountOptions::new().engine("mirror").unique(true)).is_err());
}

#[test]
#[ignore = "takes a few seconds per engine; run with --ignored"]
fn every_engine_matches_the_known_values_15_and_16() {
    for e in engine::ENGINES {
        for n in 15..=16u32 {
            let result = count(n, &CountOptions::new().engine(e.name())).unwrap();
            assert_eq!(Some(result.total), known::total(n), "{} n = {n}", e.name());
        }
    }
}

/// The backtracking engines' full boards past 16 (mitm's are in the default suite): about a
/// minute on 2 cores.
#[test]
#[ignore = "a minute on 2 cores; run with --ignored"]
fn every_engine_matches_the_known_value_at_17() {
    for e in engine::ENGINES {
        let result = count(17, &CountOptions::new().engine(e.name())).unwrap();
        assert_eq!(Some(result.total), known::total(17), "{}", e.name());
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn serial_count_equals_parallel_count(n in 4u32..=11, threads in 2usize..=4, depth in 1u32..=4) {
        let serial = total(n, &CountOptions::new().engine("mirror").threads(1));
        let options = CountOptions::new().engine("mirror").threads(threads).split_depth(Some(depth));
        prop_assert_eq!(total(n, &options), serial);
    }
}
