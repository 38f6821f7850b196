//! Counting engines: one module per engine, all behind the [`Engine`] trait.
//!
//! An engine turns a board size into a [`Plan`] of independent tasks; the executor in
//! [`crate::plan`] runs any plan in parallel. Adding an engine means adding a module and a
//! line to [`ENGINES`]; the CLI lists the names from here.
//!
//! How each engine works: docs/algorithms.md; what each costs per N: docs/benchmarks.md.

pub(crate) mod kernel;
pub mod mirror;
pub mod mitm;
pub mod symmetry;
#[cfg(test)]
pub(crate) mod testing;

use crate::error::{check_n, Error};
use crate::plan::Plan;

/// Parameters an engine may use when it builds its plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlanOptions {
    /// Number of pre-placed rows per task, or `None` to let the engine choose.
    pub split_depth: Option<u32>,
    /// Worker threads the plan will run on (guides the automatic split).
    pub threads: usize,
}

impl Default for PlanOptions {
    fn default() -> Self {
        PlanOptions {
            split_depth: None,
            threads: 1,
        }
    }
}

/// A way of counting N-Queens solutions.
pub trait Engine: Sync {
    /// The name users select it by (`--engine NAME`).
    fn name(&self) -> &'static str;
    /// One line describing the method, for `--help`.
    fn summary(&self) -> &'static str;
    /// Version of the engine's plan layout; part of every plan fingerprint.
    fn version(&self) -> u32;
    /// Builds the plan of tasks for an `n`×`n` board.
    fn plan(&self, n: u32, options: &PlanOptions) -> Result<Box<dyn Plan>, Error>;
}

/// The smallest split depth (`--split-depth`) the backtracking engines accept.
pub const MIN_SPLIT_DEPTH: u32 = 1;
/// The largest split depth the backtracking engines accept (capped at N).
pub const MAX_SPLIT_DEPTH: u32 = 8;

/// Checks a user-chosen split depth for an `n`×`n` board.
pub fn check_split_depth(n: u32, depth: u32) -> Result<u32, Error> {
    let max = MAX_SPLIT_DEPTH.min(n);
    if (MIN_SPLIT_DEPTH..=max).contains(&depth) {
        Ok(depth)
    } else {
        Err(Error::SplitDepth {
            n,
            depth,
            min: MIN_SPLIT_DEPTH,
            max,
        })
    }
}

/// The number of nodes `kernel::expand_to` would return for `node` and `row`, counted
/// depth first without building them, or some number above `cap` once the count passes it
/// (so a huge `--split-depth` is refused in bounded time and memory).
pub(crate) fn count_to(rows: &kernel::Rows, node: kernel::Node, row: u32, cap: usize) -> usize {
    let row = row.min(rows.n());
    if node.row >= row {
        return 1;
    }
    if node.row + 1 == row {
        return node.children(rows).count();
    }
    let mut len = 0;
    for child in node.children(rows) {
        len += count_to(rows, child, row, cap - len.min(cap));
        if len > cap {
            break;
        }
    }
    len
}

/// Every engine, in the order `--help` lists them.
pub static ENGINES: &[&dyn Engine] = &[&mirror::Mirror, &symmetry::Symmetry, &mitm::Mitm];

/// The pseudo-engine name that picks the fastest engine for the board.
pub const AUTO: &str = "auto";

/// The names accepted by [`find`]: `auto`, then every engine.
pub fn names() -> Vec<&'static str> {
    std::iter::once(AUTO)
        .chain(ENGINES.iter().map(|e| e.name()))
        .collect()
}

/// Looks an engine up by name; `auto` picks the fastest one for `n`.
pub fn find(name: &str, n: u32) -> Result<&'static dyn Engine, Error> {
    if name == AUTO {
        return Ok(auto(n));
    }
    ENGINES
        .iter()
        .copied()
        .find(|e| e.name() == name)
        .ok_or_else(|| Error::UnknownEngine {
            name: crate::error::excerpt(name),
            choices: names().join(", "),
        })
}

/// The fastest engine for an `n`×`n` board on this machine that counts it.
pub fn auto(n: u32) -> &'static dyn Engine {
    // Measured: mirror is fastest below N = 12 (every count < 1.5 ms);
    // symmetry is 1.4x faster than mirror at 12; mitm is level at 12, 30x faster than mirror
    // from 16, and ahead of symmetry at every larger N sampled (docs/benchmarks.md,
    // docs/frontier.md). Past mitm's reach, symmetry is the fastest that counts the board.
    match n {
        0..SYMMETRY_FROM => &mirror::Mirror,
        SYMMETRY_FROM..MITM_FROM => &symmetry::Symmetry,
        MITM_FROM..=MITM_MAX_N => &mitm::Mitm,
        _ => &symmetry::Symmetry,
    }
}

/// The largest board the meet-in-the-middle engine counts; past it [`auto`] picks the
/// symmetry engine.
pub const MITM_MAX_N: u32 = mitm::MAX_N;

/// The smallest board the meet-in-the-middle engine cuts into quarters (smaller ones go to
/// the symmetry engine): from it to [`MITM_MAX_N`], the boards whose joins a GPU runs.
pub const MITM_MIN_N: u32 = mitm::MITM_MIN_N;

/// Core-hours the symmetry engine needs for an `n`×`n` board past the meet-in-the-middle
/// engine's reach, extrapolated from its measured N = 24 (not a measurement: no sample of
/// such a board can be timed, one task takes days); `None` within reach.
pub fn extrapolated_core_hours(n: u32) -> Option<f64> {
    extrapolation(n).map(|x| x.core_hours().0)
}

/// How the cost of a board past every engine's measurable reach is extrapolated: the
/// symmetry engine's measured cost at `from_n`, grown by a factor per step of N.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Extrapolation {
    /// The board extrapolated to.
    pub n: u32,
    /// The board measured.
    pub from_n: u32,
    /// Its core-hours: estimate, and the low and high ends of its 90% interval.
    pub at_from: (f64, f64, f64),
    /// The growth per step of N of the estimate and of the low end.
    pub growth: f64,
    /// The growth per step of N of the high end (Q(N)'s steepest known step).
    pub growth_high: f64,
}

impl Extrapolation {
    /// Core-hours at `n`: estimate, low and high end.
    pub fn core_hours(&self) -> (f64, f64, f64) {
        let steps = (self.n - self.from_n) as i32;
        let (estimate, low, high) = self.at_from;
        let grown = self.growth.powi(steps);
        (
            estimate * grown,
            low * grown,
            high * self.growth_high.powi(steps),
        )
    }
}

/// How the symmetry engine's cost of an `n`×`n` board past the meet-in-the-middle engine's
/// reach is extrapolated ([`Extrapolation`]); `None` within reach.
pub fn extrapolation(n: u32) -> Option<Extrapolation> {
    let (low, high) = symmetry::CORE_HOURS_AT_24_INTERVAL;
    (n > MITM_MAX_N).then_some(Extrapolation {
        n,
        from_n: 24,
        at_from: (symmetry::CORE_HOURS_AT_24, low, high),
        growth: symmetry::GROWTH_PER_N,
        growth_high: symmetry::GROWTH_PER_N_HIGH,
    })
}

/// For a board past the meet-in-the-middle engine's reach counted with `engine` (a name, or
/// `auto`): what the count costs, for people; `None` within reach, or for mitm, which
/// refuses such boards itself.
pub fn beyond_mitm(n: u32, engine: &str) -> Option<String> {
    let years = extrapolated_core_hours(n)? / (24.0 * 365.25);
    let years = if years >= 1e6 {
        format!("{:.1} million core-years", years / 1e6)
    } else {
        format!("{:.0} thousand core-years", years / 1e3)
    };
    let how = match engine {
        AUTO => format!(", so auto counts it with the symmetry engine: about {years}"),
        "symmetry" => format!("; the symmetry engine counts it in about {years}"),
        "mirror" => format!("; the mirror engine takes more than the symmetry engine's {years}"),
        _ => return None,
    };
    Some(format!(
        "N = {n} is past the mitm engine's reach (N ≤ {MITM_MAX_N}){how}, extrapolated at \
         {}× per step of N from {} core-hours at N = 24, not measured",
        symmetry::GROWTH_PER_N,
        symmetry::CORE_HOURS_AT_24
    ))
}

/// The first board size at which [`auto`] picks the symmetry engine.
const SYMMETRY_FROM: u32 = 12;
/// The first board size at which [`auto`] picks the meet-in-the-middle engine (measured:
/// level with the mirror engine at N = 12, faster from N = 13, by 30× or more from N = 16).
const MITM_FROM: u32 = 13;

/// The fastest engine for an `n`×`n` board whose tasks are a split depth of the search tree
/// (what `--split-depth` sets): mirror below N = 12, symmetry from there.
pub fn auto_backtracking(n: u32) -> &'static dyn Engine {
    if n < SYMMETRY_FROM {
        &mirror::Mirror
    } else {
        &symmetry::Symmetry
    }
}

/// The fastest engine for an `n`×`n` board that also counts fundamental solutions.
pub fn auto_unique(n: u32) -> &'static dyn Engine {
    // Every engine with unique counts: mitm where it is the fastest, symmetry elsewhere.
    if (MITM_FROM..=MITM_MAX_N).contains(&n) {
        &mitm::Mitm
    } else {
        &symmetry::Symmetry
    }
}

/// The environment variable that caps the matcher's instruction-set level: the matcher runs
/// at the best level the CPU supports that is not above the named one (for measuring one
/// level against another, or to rule a code path out). Unset or empty: no cap.
pub const ISA_VAR: &str = mitm::simd::CAP_VAR;

/// The matcher's instruction-set levels, lowest first: the values [`ISA_VAR`] accepts.
pub const ISA_LEVELS: [&str; 5] = mitm::simd::LEVEL_NAMES;

/// The instruction-set level the matcher runs at (one of [`ISA_LEVELS`]): the best this CPU
/// supports, capped by [`ISA_VAR`].
pub fn matcher_level() -> &'static str {
    mitm::simd::Level::detect().name()
}

/// Checks [`ISA_VAR`]: [`Error::UnknownIsa`] when it names no level; `Ok(Some(level))` when
/// it names a `level` this CPU lacks, so that the matcher falls back to the best one below
/// ([`matcher_level`]); `Ok(None)` otherwise.
pub fn check_isa_cap() -> Result<Option<&'static str>, Error> {
    let cap = mitm::simd::cap().map_err(|value| Error::UnknownIsa {
        value: crate::error::excerpt(&value),
        choices: ISA_LEVELS.join(", "),
    })?;
    Ok(cap.filter(|&name| {
        !mitm::simd::available_levels()
            .iter()
            .any(|l| l.name() == name)
    }))
}

/// Internals that the criterion benches time; not part of the API, may change at any time.
#[doc(hidden)]
pub mod internals {
    pub use super::mitm::simd::BlockCountCase;
}

/// The code paths the engines chose for this CPU at run time: the backtracking kernel's step
/// and the meet-in-the-middle matcher's vector level.
pub fn code_paths() -> String {
    format!(
        "kernel {}, matcher {}",
        kernel::code_path(),
        mitm::simd::Level::detect().name()
    )
}

/// Builds the plan of the engine called `name` for an `n`×`n` board.
pub fn plan(name: &str, n: u32, options: &PlanOptions) -> Result<Box<dyn Plan>, Error> {
    check_n(n)?;
    find(name, n)?.plan(n, options)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_depth_outside_the_range_is_an_error() {
        assert!(check_split_depth(10, 0).is_err());
        assert!(check_split_depth(4, 5).is_err());
        assert_eq!(check_split_depth(10, 3).unwrap(), 3);
    }

    #[test]
    fn every_listed_name_resolves() {
        for name in names() {
            assert!(find(name, 8).is_ok(), "{name}");
        }
    }

    #[test]
    fn auto_picks_by_board_size() {
        assert_eq!(auto(8).name(), "mirror");
        assert_eq!(auto(12).name(), "symmetry");
        assert_eq!(auto(16).name(), "mitm");
        assert_eq!(auto(23).name(), "mitm");
        assert_eq!(auto(24).name(), "mitm");
        assert_eq!(auto(29).name(), "mitm");
        assert_eq!(auto(30).name(), "symmetry");
        assert_eq!(auto(32).name(), "symmetry");
        assert_eq!(auto_unique(30).name(), "symmetry");
        assert_eq!(auto_unique(12).name(), "symmetry");
        assert_eq!(auto_unique(13).name(), "mitm");
        assert!(auto_unique(8)
            .plan(8, &PlanOptions::default())
            .unwrap()
            .has_unique());
    }

    #[test]
    fn unknown_names_list_the_choices() {
        let err = find("quantum", 8).err().expect("should fail").to_string();
        assert!(err.contains("mirror") && err.contains("auto"), "{err}");
    }
}
