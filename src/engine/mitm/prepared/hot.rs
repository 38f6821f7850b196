//! Regrouping a quarter's words by their pattern of a split's hot bits.

use super::{next_stamp, Prepared};

/// Most hot bits a prepared quarter is grouped by (64 groups per column mask).
pub(crate) const MAX_HOT: usize = 6;
/// The pattern of the key bits `hot` in `word`: bit i is bit `hot[i]` of the word.
pub(crate) fn pattern(word: u64, hot: &[u32]) -> u32 {
    hot.iter()
        .enumerate()
        .fold(0, |p, (i, &bit)| p | ((word >> bit) as u32 & 1) << i)
}
impl Prepared {
    /// The words of class `class` with column mask `cols` whose hot bits (those of the last
    /// [`Prepared::group_by`]) are exactly `pattern` (bit i: the i-th hot bit).
    pub(crate) fn get_group(&self, class: usize, cols: u32, pattern: u32) -> &[u64] {
        let o = &self.offsets[class];
        let g = (cols as usize) << self.hot.len() | pattern as usize;
        &self.words[class][o[g] as usize..o[g + 1] as usize]
    }

    /// Regroups the words within each column mask by their pattern of the key bits `hot`
    /// (at most [`MAX_HOT`]), so that [`Prepared::get_group`] finds the words of one pattern.
    /// [`Prepared::get`] still returns every word of a column mask.
    pub(crate) fn group_by(&mut self, hot: &[u32]) {
        assert!(hot.len() <= MAX_HOT, "at most {MAX_HOT} hot bits");
        if self.hot == hot {
            return;
        }
        self.stamp = next_stamp();
        let (old_k, k) = (self.hot.len(), hot.len());
        let masks = (self.offsets[0].len() - 1) >> old_k;
        let mut scratch = Vec::new();
        for class in 0..2 {
            // Each column mask's words are contiguous: sort them by pattern in place,
            // through a scratch buffer as large as the largest group.
            let old = std::mem::take(&mut self.offsets[class]);
            let mut offsets = vec![0u32; (masks << k) + 1];
            for cols in 0..masks {
                let range = old[cols << old_k] as usize..old[(cols + 1) << old_k] as usize;
                let group = &mut self.words[class][range.clone()];
                let mut counts = [0u32; 1 << MAX_HOT];
                for &w in group.iter() {
                    counts[pattern(w, hot) as usize] += 1;
                }
                let mut at = [0u32; 1 << MAX_HOT];
                let mut sum = range.start as u32;
                for p in 0..1usize << k {
                    offsets[cols << k | p] = sum;
                    at[p] = sum - range.start as u32;
                    sum += counts[p];
                }
                scratch.clear();
                scratch.resize(group.len(), 0);
                for &w in group.iter() {
                    let p = pattern(w, hot) as usize;
                    scratch[at[p] as usize] = w;
                    at[p] += 1;
                }
                group.copy_from_slice(&scratch);
            }
            offsets[masks << k] = old[masks << old_k];
            self.offsets[class] = offsets;
        }
        self.hot = hot.to_vec();
    }
}
