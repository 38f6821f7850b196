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
