//! Symmetry weights of row splits.
//!
//! The north/south flip maps a split E to rev(E), the east/west flip to its complement; a
//! count is the same for every split of one orbit, so each orbit is counted once with
//! weights `ns·ew` that add up to the orbit's size.

use super::key::Geometry;

/// The rows a task's halves share out: all rows, minus the middle row and `y` for odd N.
pub(crate) fn free_rows(geo: &Geometry, y: u32) -> u32 {
    let all = ((1u64 << geo.n) - 1) as u32;
    if geo.n.is_multiple_of(2) {
        all
    } else {
        all & !(1 << geo.h) & !(if y > 0 { 1 << y } else { 0 })
    }
}

/// `mask` with its `n` low bits reversed (row r ↔ row n − 1 − r).
pub(crate) fn reverse(mask: u32, n: u32) -> u32 {
    mask.reverse_bits() >> (32 - n)
}

/// North/south weight: 2 if E < rev(E), 1 if equal, 0 otherwise.
pub(crate) fn ns_weight(east: u32, n: u32) -> u64 {
    match east.cmp(&reverse(east, n)) {
        std::cmp::Ordering::Less => 2,
        std::cmp::Ordering::Equal => 1,
        std::cmp::Ordering::Greater => 0,
    }
}

/// East/west weight over the free rows: 1 if E and rev(E) agree nowhere, otherwise 2 or 0
/// by whether the first row where they agree is in E.
pub(crate) fn ew_weight(east: u32, n: u32, free: u32) -> u64 {
    let agree = !(east ^ reverse(east, n)) & free;
    if agree == 0 {
        1
    } else if east & agree & agree.wrapping_neg() != 0 {
        2
    } else {
        0
    }
}
