//! One module per subcommand; each owns its `Args` and a `run` function.

pub(crate) mod bench;
pub(crate) mod completions;
pub(crate) mod count;
pub(crate) mod estimate;
pub(crate) mod input;
pub(crate) mod merge;
pub(crate) mod messages;
pub(crate) mod place;
pub(crate) mod solutions;
pub(crate) mod two_colour;
pub(crate) mod verify;

/// `1 solution`, `2 solutions`: a count with its noun in the right number.
pub(crate) fn plural(count: impl std::fmt::Display, noun: &str) -> String {
    let text = count.to_string();
    let s = if text == "1" { "" } else { "s" };
    format!("{text} {noun}{s}")
}
