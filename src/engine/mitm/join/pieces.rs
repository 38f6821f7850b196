//! A join of a split cut into pieces on its hot bits, each piece cut again on spare bits
//! where it overflows one fill.

use super::{HalfSpec, Keys, Shape};
use crate::engine::mitm::limits::Limits;
use crate::engine::mitm::piece;
use crate::engine::mitm::simd::Level;

impl Keys {
    /// [`Keys::join`] for a task split into pieces on the hot bits of `cut`: piece P stores
    /// the halves whose hot bits are exactly P and meets the queries without any of them. Only
    /// the pieces in `patterns` are joined (all of them for a count); one that overflows its
    /// fill is cut again on the cut's spare bits ([`Keys::join_piece`]).
    pub(crate) fn join_split(
        &mut self,
        (east, wests): (&HalfSpec<'_>, &[HalfSpec<'_>]),
        cut: &piece::Cut,
        patterns: std::ops::Range<u32>,
        factors: [u64; 4],
        (shape, limits, level): (&Shape, Limits, Level),
    ) -> u64 {
        let mut total = 0;
        for pattern in patterns {
            let queries = piece::query_spec(east, &cut.hot, pattern);
            let stored: Vec<HalfSpec<'_>> = wests
                .iter()
                .flat_map(|w| piece::stored_specs(w, cut, pattern))
                .collect();
            let run = (shape, limits, level);
            total += self.join_piece((queries, stored), &cut.spare, factors, run);
        }
        total
    }

    /// Joins one piece; where its stored side overflows one fill and a spare bit is left,
    /// cuts it in two on that bit instead (the halves without it, met by every query, and
    /// those with it, met by the queries without it), each joined the same way. A piece
    /// whose halves come in several fills meets every query once per fill; two pieces of
    /// one fill each meet fewer. The first fill's portions are built again.
    fn join_piece(
        &mut self,
        (queries, stored): (HalfSpec<'_>, Vec<HalfSpec<'_>>),
        spare: &[u32],
        factors: [u64; 4],
        run: (&Shape, Limits, Level),
    ) -> u64 {
        let refuse = !spare.is_empty();
        let sides = (std::slice::from_ref(&queries), &stored[..]);
        if let Some(count) = self.join_unless_overflowing(sides, factors, run, refuse) {
            self.work.pieces += 1;
            return count;
        }
        let (bit, rest) = (1u64 << spare[0], &spare[1..]);
        let without = stored
            .iter()
            .map(|s| HalfSpec {
                forbid: s.forbid | bit,
                ..*s
            })
            .collect();
        let with = stored
            .iter()
            .map(|s| HalfSpec {
                exact: (s.exact.0 | bit, s.exact.1 | bit),
                ..*s
            })
            .collect();
        let avoiding = HalfSpec {
            forbid: queries.forbid | bit,
            ..queries
        };
        self.join_piece((queries, without), rest, factors, run)
            + self.join_piece((avoiding, with), rest, factors, run)
    }
}
