//! Parsers of external input (files a user or a crash may have damaged): arbitrary text
//! never panics.

use super::*;
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn any_shard_spec_text_parses_or_is_refused(text in ".{0,40}") {
        if let Ok(spec) = text.parse::<ShardSpec>() {
            prop_assert!(spec.index < spec.count);
        }
    }

    #[test]
    fn any_digit_pair_is_a_spec_exactly_when_i_is_below_k(i in any::<u64>(), k in any::<u64>()) {
        let parsed = format!("{i}/{k}").parse::<ShardSpec>();
        prop_assert_eq!(parsed.is_ok(), k > 0 && i < k);
    }

    #[test]
    fn any_bytes_as_a_checkpoint_or_shard_file_are_refused_without_panic(
        bytes in proptest::collection::vec(any::<u8>(), 0..2_000),
    ) {
        let dir = dir();
        let path = dir.path().join("f.json");
        std::fs::write(&path, &bytes).unwrap();
        let _ = Checkpoint::load(&path);
        let _ = PartialResult::load(&path);
    }

    #[test]
    fn json_objects_with_arbitrary_fields_are_refused_without_panic(
        fields in proptest::collection::vec(("[a-z_]{1,12}", "[0-9a-z\"/.:-]{0,24}"), 0..12),
    ) {
        let body: Vec<String> = fields.iter().map(|(k, v)| format!("\"{k}\": {v}")).collect();
        let dir = dir();
        let path = dir.path().join("f.json");
        std::fs::write(&path, format!("{{{}}}", body.join(", "))).unwrap();
        let _ = Checkpoint::load(&path);
        let _ = PartialResult::load(&path);
    }
}
