//! Which words of one west quarter can meet a word of the other in a unit's halves.

use super::hot::pattern;
use super::Prepared;

impl Prepared {
    /// Which (column mask, pattern of the key bits `fixed`) groups hold a word without a
    /// bit of `drop` ([`Partners`]).
    pub(crate) fn partners(&self, fixed: u64, drop: u64) -> Partners {
        let masks = (self.offsets[0].len() - 1) >> self.hot.len();
        let mut partners = Partners::new(masks, fixed);
        for class in 0..2 {
            for cols in 0..masks as u32 {
                for &w in self.get(class, cols).iter().filter(|&&w| w & drop == 0) {
                    partners.insert(cols, w);
                }
            }
        }
        partners
    }
}

/// The (column mask, pattern) groups of one west quarter's words, for a unit whose stored
/// halves all have the same pattern of its fixed hot bits: a word of the other west quarter
/// can only join a word whose column mask complements its own and whose pattern supplies
/// the fixed bits it lacks. The other quarter is written without the words that have no
/// such partner: the unit whose fixed bits are all set drops no word by its pattern, and
/// would otherwise hold the whole quarter.
#[derive(Debug)]
pub(crate) struct Partners {
    /// The fixed key bits, as a mask and in pattern order.
    fixed: u64,
    bits: Vec<u32>,
    /// One bit per (column mask, pattern of `bits`): whether a word has them.
    groups: Vec<u64>,
}

impl Partners {
    /// No group yet, for words of `masks` column masks and patterns of the key bits `fixed`.
    fn new(masks: usize, fixed: u64) -> Self {
        let bits: Vec<u32> = (0..64).filter(|&b| fixed >> b & 1 == 1).collect();
        Partners {
            fixed,
            groups: vec![0; (masks << bits.len()).div_ceil(64)],
            bits,
        }
    }

    /// The slot of a word with column mask `cols` and the fixed bits `bits` (a subset).
    fn slot(&self, cols: u32, bits: u64) -> usize {
        (cols as usize) << self.bits.len() | pattern(bits, &self.bits) as usize
    }

    /// Notes a word with column mask `cols`.
    fn insert(&mut self, cols: u32, word: u64) {
        let slot = self.slot(cols, word & self.fixed);
        self.groups[slot / 64] |= 1 << (slot % 64);
    }

    /// Whether a word with column mask `cols` has the fixed bits `bits` (a subset).
    fn has(&self, cols: u32, bits: u64) -> bool {
        let slot = self.slot(cols, bits);
        self.groups[slot / 64] >> (slot % 64) & 1 == 1
    }

    /// Whether `word` (column mask `cols`), in a half whose free columns are one of `halves`
    /// and whose fixed bits are `set`, has a partner: a noted word with the other columns
    /// and exactly the fixed bits of `set` that `word` lacks.
    pub(crate) fn pairs(&self, cols: u32, word: u64, set: u64, halves: &[u32]) -> bool {
        let wanted = set & !word & self.fixed;
        halves
            .iter()
            .any(|&free| cols & !free == 0 && self.has(free ^ cols, wanted))
    }
}
