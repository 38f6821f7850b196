//! Parsers of external input: arbitrary bytes never panic.

use nqueens::puzzles::{mask::Mask, two_colour, verify};
use proptest::prelude::*;

/// Text that is mostly board- or permutation-like, with arbitrary characters mixed in.
fn boardish() -> impl Strategy<Value = String> {
    proptest::collection::vec(
        prop_oneof![
            Just('0'),
            Just('1'),
            Just('.'),
            Just('#'),
            Just(' '),
            Just('\n'),
            any::<char>()
        ],
        0..400,
    )
    .prop_map(|chars| chars.into_iter().collect())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn masks_never_panic(text in boardish(), n in 0u32..40) {
        let _ = Mask::parse(&text, n, "t");
    }

    #[test]
    fn two_colour_boards_never_panic(text in boardish(), n in 0u32..40) {
        let _ = two_colour::parse(&text, "t");
        let _ = two_colour::parse(&format!("{n}\n{text}"), "t");
    }

    #[test]
    fn permutations_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
        let mut lines = 0usize;
        let _ = verify::read_perms(bytes.as_slice(), "t", |_, rows| {
            lines += 1;
            let _ = verify::check(rows, None);
            Ok(())
        });
        prop_assert!(lines <= bytes.len() + 1);
    }

    #[test]
    fn permutation_like_text_never_panics(text in "[0-9 \\n]{0,300}", size in 0u64..20) {
        let _ = verify::read_perms(text.as_bytes(), "t", |_, rows| {
            let _ = verify::check(rows, Some(size));
            Ok(())
        });
    }
}
