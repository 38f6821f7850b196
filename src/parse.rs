//! Value parsers for the command line. A leaf: it imports nothing else from the binary, so
//! any module may use it without forming a cycle.

use std::num::NonZeroUsize;
use std::time::Duration;

use nqueens::recheck::Recheck;
use nqueens::{MAX_N, MAX_THREADS, MIN_N};

/// What [`whole`] made of a piece of text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Whole {
    /// A whole number that fits in `i64`.
    Number(i64),
    /// Digits, but too many for `i64`: out of any range, yet not malformed.
    TooLong,
    /// Not a whole number at all.
    Malformed,
}

/// Reads a whole number, telling "99999999999999999999" (out of range) from "abc" (not a
/// number), so the error names the right fault.
pub(crate) fn whole(s: &str) -> Whole {
    let s = s.trim();
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Whole::Malformed;
    }
    s.parse::<i64>().map_or(Whole::TooLong, Whole::Number)
}

/// Parses a board size, naming the accepted range on error.
pub(crate) fn parse_n(s: &str) -> Result<u32, String> {
    let range = format!("N must be a whole number from {MIN_N} to {MAX_N}");
    match whole(s) {
        Whole::Number(n) if (i64::from(MIN_N)..=i64::from(MAX_N)).contains(&n) => Ok(n as u32),
        Whole::Number(_) | Whole::TooLong => {
            Err(format!("out of range {MIN_N}..{MAX_N} ({range})"))
        }
        Whole::Malformed => Err(format!("not a whole number ({range})")),
    }
}

/// Parses a number of seconds above 0 and at most `max` (fractions allowed, e.g. 0.5).
///
/// Hand-written rather than `humantime`: these options take bare seconds ("5", "0.5"), which
/// `humantime` refuses without a unit, and it has no fractions ("1.5h").
pub(crate) fn parse_seconds(s: &str, max: f64) -> Result<Duration, String> {
    match s.trim().parse::<f64>() {
        Ok(x) if x > 0.0 && x <= max => Duration::try_from_secs_f64(x).map_err(|e| e.to_string()),
        _ => Err(format!(
            "'{s}' is not a positive number of seconds, at most {max} (e.g. 5 or 0.5)"
        )),
    }
}

/// Thread counts given as one comma-separated value (`bench -j 1,2,4`). A type of its own:
/// clap's derive would read a bare `Vec` as an option given several times.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ThreadCounts(pub Vec<NonZeroUsize>);

/// Parses a comma-separated list of thread counts (`bench -j 1,2,4`).
pub(crate) fn parse_thread_list(s: &str) -> Result<ThreadCounts, String> {
    s.split(',')
        .map(parse_threads)
        .collect::<Result<_, _>>()
        .map(ThreadCounts)
}

/// Parses the thread count of a command that runs on one count: a list gets its own message,
/// since `bench` takes one.
pub(crate) fn parse_one_thread_count(s: &str) -> Result<NonZeroUsize, String> {
    if s.contains(',') {
        return Err("this command takes one thread count, not a list".to_string());
    }
    parse_threads(s)
}

/// Parses a thread count, naming the accepted range on error.
pub(crate) fn parse_threads(s: &str) -> Result<NonZeroUsize, String> {
    let range = format!("threads must be a whole number from 1 to {MAX_THREADS}");
    match whole(s) {
        Whole::Number(t) if (1..=MAX_THREADS as i64).contains(&t) => {
            Ok(NonZeroUsize::new(t as usize).expect("t >= 1"))
        }
        Whole::Number(_) | Whole::TooLong => {
            Err(format!("out of range 1..{MAX_THREADS} ({range})"))
        }
        Whole::Malformed => Err(format!("not a whole number ({range})")),
    }
}

/// Parses a `--recheck` fraction.
pub(crate) fn parse_fraction(s: &str) -> Result<Recheck, String> {
    let fraction: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("'{s}' is not a number (e.g. 0.01)"))?;
    Recheck::new(fraction).map_err(|e| e.to_string())
}

/// Parses a percentage from 0 to 100.
pub(crate) fn parse_percent(s: &str) -> Result<f64, String> {
    match s.trim().trim_end_matches('%').parse::<f64>() {
        Ok(x) if (0.0..=100.0).contains(&x) => Ok(x),
        _ => Err(format!("'{s}' is not a percentage from 0 to 100")),
    }
}

/// Parses a time span: a positive number with an optional unit s, m, h or d (default s).
///
/// Hand-written for the reasons of [`parse_seconds`]: a bare number is seconds, and `1.5h`
/// is a fraction of an hour; `humantime` takes neither.
pub(crate) fn parse_span(s: &str) -> Result<Duration, String> {
    let t = s.trim();
    let (number, unit) = match t.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => (&t[..i], c),
        _ => (t, 's'),
    };
    let scale = match unit {
        's' => 1.0,
        'm' => 60.0,
        'h' => 3600.0,
        'd' => 86_400.0,
        _ => return Err(format!("'{s}': the unit must be s, m, h or d")),
    };
    match number.parse::<f64>() {
        Ok(x) if x.is_finite() && x > 0.0 && x * scale <= MAX_SPAN_S => {
            Ok(Duration::from_secs_f64(x * scale))
        }
        Ok(x) if x.is_finite() && x * scale > MAX_SPAN_S => Err(format!(
            "'{s}' is longer than the longest time taken, {MAX_SPAN_S} s (about 31 years)"
        )),
        _ => Err(format!(
            "'{s}' is not a positive time (e.g. 2h, 90m, 3600s)"
        )),
    }
}

/// The longest time span [`parse_span`] takes, in seconds.
const MAX_SPAN_S: f64 = 1e9;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn board_sizes_outside_the_range_name_it() {
        assert_eq!(parse_n("16"), Ok(16));
        for bad in ["0", "33", "-4", "abc", ""] {
            let err = parse_n(bad).unwrap_err();
            assert!(err.contains("1 to 32"), "{bad}: {err}");
        }
    }

    #[test]
    fn over_long_numbers_are_out_of_range_not_malformed() {
        let err = parse_n("99999999999999999999999").unwrap_err();
        assert!(err.starts_with("out of range 1..32"), "{err}");
        assert!(parse_n("-99999999999999999999999")
            .unwrap_err()
            .starts_with("out of range"));
        assert!(parse_n("1e3")
            .unwrap_err()
            .starts_with("not a whole number"));
        assert!(parse_threads("99999999999999999999")
            .unwrap_err()
            .starts_with("out of range"));
    }

    proptest::proptest! {
        #[test]
        fn arbitrary_text_never_panics_the_number_parsers(s in "\\PC{0,40}") {
            let _ = parse_n(&s);
            let _ = parse_thread_list(&s);
        }

        #[test]
        fn every_size_in_range_parses_back(n in 1u32..=32) {
            proptest::prop_assert_eq!(parse_n(&n.to_string()), Ok(n));
        }
    }

    #[test]
    fn seconds_must_be_positive_and_within_the_bound() {
        assert_eq!(parse_seconds("0.5", 10.0), Ok(Duration::from_millis(500)));
        assert_eq!(parse_seconds(" 10 ", 10.0), Ok(Duration::from_secs(10)));
        for bad in ["0", "-3", "soon", "10.5", "1e300", "NaN", "inf", ""] {
            let err = parse_seconds(bad, 10.0).unwrap_err();
            assert!(err.contains("at most 10"), "{bad}: {err}");
        }
    }

    #[test]
    fn thread_lists_parse_and_reject_zero() {
        let list = parse_thread_list("1,2,4").unwrap();
        assert_eq!(
            list.0.iter().map(|t| t.get()).collect::<Vec<_>>(),
            [1, 2, 4]
        );
        assert!(parse_thread_list("1,0").is_err());
    }

    #[test]
    fn zero_threads_is_rejected() {
        assert!(parse_threads("0").unwrap_err().contains("from 1"));
        assert_eq!(parse_threads("3").unwrap().get(), 3);
    }

    #[test]
    fn a_list_where_one_count_is_taken_says_so() {
        assert!(parse_one_thread_count("1,2")
            .unwrap_err()
            .contains("one thread count"));
        assert_eq!(parse_one_thread_count("2").unwrap().get(), 2);
    }

    #[test]
    fn spans_take_units_and_refuse_nonsense() {
        assert_eq!(parse_span("2h"), Ok(Duration::from_secs(7200)));
        assert_eq!(parse_span("90m"), Ok(Duration::from_secs(5400)));
        assert_eq!(parse_span("1.5d"), Ok(Duration::from_secs(129_600)));
        assert_eq!(parse_span("30"), Ok(Duration::from_secs(30)));
        for bad in ["", "h", "0h", "-1h", "2w", "1e300s", "nan"] {
            assert!(parse_span(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_span_too_long_is_called_too_long_not_negative() {
        let err = parse_span("9999999d").unwrap_err();
        assert!(err.contains("longer than the longest"), "{err}");
        assert!(!err.contains("not a positive"), "{err}");
        assert!(parse_span("-1d").unwrap_err().contains("not a positive"));
    }

    #[test]
    fn percentages_stay_in_range() {
        assert_eq!(parse_percent("15"), Ok(15.0));
        assert_eq!(parse_percent("2.5%"), Ok(2.5));
        assert_eq!(parse_percent("0"), Ok(0.0));
        for bad in ["", "-1", "101", "x", "nan"] {
            assert!(parse_percent(bad).is_err(), "{bad}");
        }
    }
}
