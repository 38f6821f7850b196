//! The few words of each group that a split's hot bits are chosen from, taken before any
//! filter or regrouping.

use super::{Prepared, Side};
use crate::engine::mitm::quarter::{Placement, Placements};

/// Words sampled per group (column mask and class) to estimate how often each key bit is set.
const SAMPLE: usize = 8;
impl Prepared {
    /// Takes the samples [`Prepared::take_samples`] would take from the written words, by
    /// walking the placements again: the same words, since a group's words are written in
    /// walk order. The group starts must already be set.
    pub(super) fn sample_walk(
        &mut self,
        list: Placements<'_>,
        word: impl Fn(&Placement) -> u64,
        side: Side,
    ) {
        let groups = self.offsets[0].len() - 1;
        let mut stride = [vec![0u32; groups], vec![0u32; groups]];
        for (class, stride) in stride.iter_mut().enumerate() {
            let o = &self.offsets[class];
            let (at, of) = (&mut self.sample_at[class], &mut self.sample_of[class]);
            at.clear();
            at.push(0);
            of.clear();
            for (c, g) in o.windows(2).enumerate() {
                let len = g[1] - g[0];
                let step = (len / SAMPLE as u32).max(1);
                stride[c] = step;
                of.push(len);
                at.push(at[c] + len.div_ceil(step));
            }
            self.samples[class].clear();
            self.samples[class].resize(at[groups] as usize, 0);
        }
        let mut seen = [vec![0u32; groups], vec![0u32; groups]];
        list.each(|c, p| {
            let w = word(&p);
            if w & side.forbid != 0 {
                return;
            }
            let (k, c) = (usize::from(w & side.split != 0), c as usize);
            let i = seen[k][c];
            seen[k][c] += 1;
            if i.is_multiple_of(stride[k][c]) {
                let at = self.sample_at[k][c] + i / stride[k][c];
                self.samples[k][at as usize] = w;
            }
        });
    }

    /// Keeps about [`SAMPLE`] words per group (column mask and class), spread over it.
    pub(super) fn take_samples(&mut self) {
        for class in 0..2 {
            let (o, words) = (&self.offsets[class], &self.words[class]);
            let (samples, at) = (&mut self.samples[class], &mut self.sample_at[class]);
            let of = &mut self.sample_of[class];
            samples.clear();
            at.clear();
            at.push(0);
            of.clear();
            for group in o.windows(2) {
                let group = &words[group[0] as usize..group[1] as usize];
                of.push(group.len() as u32);
                samples.extend(group.iter().step_by((group.len() / SAMPLE).max(1)));
                at.push(samples.len() as u32);
            }
        }
    }

    /// About [`SAMPLE`] words of class `class` with column mask `cols`, the same whatever the
    /// quarter was grouped by since: a task's hot bits are chosen from them
    /// ([`piece::hot_bits`](crate::engine::mitm::piece::hot_bits)), and every unit of a
    /// split, on whichever thread or machine, must choose the same ones.
    pub(crate) fn sampled(&self, class: usize, cols: u32) -> &[u64] {
        let (at, c) = (&self.sample_at[class], cols as usize);
        &self.samples[class][at[c] as usize..at[c + 1] as usize]
    }

    /// The number of words of class `class` with column mask `cols` that
    /// [`Prepared::sampled`] was taken from: before any filter of [`Prepared::fill`].
    pub(crate) fn sampled_of(&self, class: usize, cols: u32) -> usize {
        self.sample_of[class][cols as usize] as usize
    }
}
