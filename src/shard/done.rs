//! The set of a shard's rounds that are done, as a compressed bitmap: what checkpoints save
//! and what block sums and the recorder read. A leaf module below all three.

use base64::Engine as _;
use roaring::RoaringBitmap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The rounds of a shard that are done, as a compressed bitmap.
///
/// In JSON: base64 of the bitmap's portable serialisation (run-compressed).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DoneSet(pub(crate) RoaringBitmap);

impl DoneSet {
    /// The number of rounds done.
    pub fn len(&self) -> u64 {
        self.0.len()
    }

    /// Whether nothing is done.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Whether round `round` is done.
    pub fn contains(&self, round: usize) -> bool {
        u32::try_from(round).is_ok_and(|r| self.0.contains(r))
    }

    /// Marks round `round` done; `false` if it already was (or cannot be a round: past
    /// 2^32).
    pub fn insert(&mut self, round: usize) -> bool {
        u32::try_from(round).is_ok_and(|r| self.0.insert(r))
    }

    /// The number of rounds done from round 0 on without a gap.
    pub(crate) fn prefix(&self) -> usize {
        // Rounds 0..m are all done when m of them are at most m − 1: a binary search.
        let full = |m: u64| m == 0 || self.0.rank((m - 1) as u32) == m;
        let (mut lo, mut hi) = (0, self.0.len());
        while lo < hi {
            let mid = hi - (hi - lo) / 2;
            if full(mid) {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        lo as usize
    }

    /// The rounds done from round `round` on, ascending.
    pub(crate) fn from(&self, round: usize) -> impl Iterator<Item = usize> + '_ {
        let start = u32::try_from(round).unwrap_or(u32::MAX);
        self.0.range(start..).map(|r| r as usize)
    }
}

impl Serialize for DoneSet {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut bitmap = self.0.clone();
        bitmap.optimize();
        let mut bytes = Vec::with_capacity(bitmap.serialized_size());
        bitmap
            .serialize_into(&mut bytes)
            .map_err(serde::ser::Error::custom)?;
        s.serialize_str(&base64::engine::general_purpose::STANDARD.encode(bytes))
    }
}

impl<'de> Deserialize<'de> for DoneSet {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error as _;
        let text = String::deserialize(d)?;
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(text)
            .map_err(|e| D::Error::custom(format!("done set is not base64 ({e})")))?;
        RoaringBitmap::deserialize_from(&bytes[..])
            .map(DoneSet)
            .map_err(|e| D::Error::custom(format!("done set is not a bitmap ({e})")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(rounds: &[usize]) -> DoneSet {
        let mut done = DoneSet::default();
        for &r in rounds {
            done.insert(r);
        }
        done
    }

    #[test]
    fn the_prefix_is_the_run_of_rounds_from_zero() {
        assert_eq!(set(&[]).prefix(), 0);
        assert_eq!(set(&[1, 2]).prefix(), 0);
        assert_eq!(set(&[0, 1, 2]).prefix(), 3);
        assert_eq!(set(&[0, 1, 2, 4, 9]).prefix(), 3);
        let big: Vec<usize> = (0..100_000).chain([100_001, 200_000]).collect();
        assert_eq!(set(&big).prefix(), 100_000);
    }

    #[test]
    fn rounds_from_one_on_are_listed_in_order() {
        let done = set(&[0, 1, 2, 4, 9]);
        assert_eq!(done.from(3).collect::<Vec<_>>(), [4, 9]);
        assert_eq!(done.from(0).count(), 5);
        assert_eq!(done.from(10).count(), 0);
    }
}
