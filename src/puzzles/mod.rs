//! The companion puzzles: every solution, boards with blocked cells, two colours,
//! one solution for huge n, and checking a claimed solution.
//!
//! - [`solutions`]: stream every solution in lexicographic order.
//! - [`mask`]: blocked cells; parse a mask and count with the shared kernel in parallel.
//! - [`two_colour`]: ordered pairs of disjoint solutions ("2n queens").
//! - [`place`]: one solution for n up to 2^32 − 1, by construction or min-conflicts search.
//! - [`verify`]: an O(n) checker that names the queens that attack each other.

pub mod mask;
pub mod place;
pub mod solutions;
pub mod two_colour;
pub mod verify;
