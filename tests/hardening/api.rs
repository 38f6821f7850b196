//! The library's public API is the contract: any input gives a documented error or a right
//! answer, never a panic, a capacity overflow or an allocation without bound.

use nqueens::engine::{self, PlanOptions};
use nqueens::puzzles::mask::{count_masked, Mask, MaskPlan};
use nqueens::puzzles::{place, solutions, two_colour, verify};
use nqueens::recheck::{Fault, Recheck};
use nqueens::{count, CountOptions, Error, NoProgress, Plan, MAX_THREADS};

#[test]
fn a_huge_checker_count_is_clamped_not_a_panic() {
    let recheck = Recheck::new(1.0).unwrap().checkers(usize::MAX);
    assert_eq!(recheck.checker_threads(), MAX_THREADS);
    assert_eq!(Recheck::new(1.0).unwrap().checkers(0).checker_threads(), 1);
    let options = CountOptions::new().threads(2).recheck(Some(recheck));
    match count(8, &options) {
        Ok(c) => assert_eq!((c.total, c.rechecked.is_some()), (92, true)),
        // A system may refuse a thousand threads: an error, not an abort.
        Err(Error::ThreadPool(message)) => assert!(message.contains("recheck"), "{message}"),
        Err(other) => panic!("{other}"),
    }
}

#[test]
fn count_options_out_of_range_are_errors() {
    for threads in [0, MAX_THREADS + 1, usize::MAX] {
        let options = CountOptions::new().threads(threads);
        assert!(
            matches!(count(8, &options), Err(Error::Threads { .. })),
            "{threads}"
        );
    }
    for depth in [0, 9, u32::MAX] {
        let options = CountOptions::new()
            .engine("mirror")
            .split_depth(Some(depth));
        assert!(
            matches!(count(12, &options), Err(Error::SplitDepth { .. })),
            "{depth}"
        );
    }
    for n in [0, 33, u32::MAX] {
        assert!(matches!(
            count(n, &CountOptions::new()),
            Err(Error::BoardSize { .. })
        ));
    }
    let long = "x".repeat(1 << 20);
    let err = count(8, &CountOptions::new().engine(&long)).unwrap_err();
    assert!(matches!(err, Error::UnknownEngine { .. }));
    assert!(
        err.to_string().len() < 300,
        "the name is cut, not echoed whole"
    );
    let fault = Fault {
        task: usize::MAX,
        delta: u128::MAX,
    };
    let options = CountOptions::new().threads(1).fault(Some(fault));
    assert_eq!(count(8, &options).unwrap().total, 92, "a fault on no task");
}

#[test]
fn thread_pools_out_of_range_are_errors() {
    for threads in [0, MAX_THREADS + 1, usize::MAX] {
        let pool = nqueens::plan::thread_pool(threads);
        assert!(matches!(pool, Err(Error::Threads { .. })), "{threads}");
    }
    assert_eq!(
        nqueens::plan::thread_pool(2).unwrap().current_num_threads(),
        2
    );
}

#[test]
fn engine_plans_take_any_thread_count() {
    for name in engine::names() {
        let options = PlanOptions {
            split_depth: None,
            threads: usize::MAX,
        };
        let plan = engine::plan(name, 12, &options).unwrap();
        assert!(!plan.is_empty(), "{name}");
    }
}

#[test]
fn puzzle_functions_take_any_input() {
    for n in [0, 33, u32::MAX] {
        assert!(matches!(
            solutions::Solutions::new(n),
            Err(Error::BoardSize { .. })
        ));
        assert!(matches!(Mask::full(n), Err(Error::BoardSize { .. })));
    }
    let mask = Mask::full(12).unwrap();
    assert!(!MaskPlan::new(&mask, usize::MAX).is_empty());
    for threads in [0, usize::MAX] {
        let counted = count_masked(&mask, threads, &NoProgress);
        assert!(matches!(counted, Err(Error::Threads { .. })));
        let paired = two_colour::count(&mask, threads);
        assert!(matches!(paired, Err(Error::Threads { .. })));
    }
    assert!(!mask.is_allowed(u32::MAX, u32::MAX));
    for n in [0, u64::from(u32::MAX) + 1, u64::MAX] {
        let message = place::Construction::new(n).unwrap_err().to_string();
        assert!(message.ends_with(&format!("got {n}")), "{message}");
        assert!(place::min_conflicts(n, 0).is_err());
    }
    let c = place::Construction::new(8).unwrap();
    assert_eq!(c.row(u32::MAX), None);
    let verdict = verify::check(&[u32::MAX, 0], Some(u64::MAX));
    assert!(!verdict.is_valid());
    let mut out = Vec::new();
    assert!(place::write_board(&mut out, &[u32::MAX]).is_err());
    assert!(solutions::write_board(&mut out, &[u32::MAX]).is_err());
}
