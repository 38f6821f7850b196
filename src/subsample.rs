//! A task solved in part, for estimates: some of its pieces drawn at random with known
//! probabilities, and their counts, seconds and work scaled back to the whole task.
//!
//! From N ≈ 26 one task of the mitm plan takes seconds to minutes, so an estimate that solves
//! a few dozen whole tasks would take hours. Such a task is already cut into pieces that are
//! solved one after the other (its stored side split by hot key bits), so its cost is the
//! work the pieces share plus the sum of the pieces' own. Drawing `m` pieces with
//! replacement, piece `i` with probability `p_i`, the Hansen–Hurwitz estimator
//! `(1/m) Σ y_i / p_i` is an unbiased estimate of the pieces' sum for any measure `y`, and
//! the spread of the `y_i / p_i` gives its variance. The probabilities follow the pieces'
//! expected work, so that a large piece is likely to be drawn and a small one, when drawn,
//! is not scaled up from nothing.
//!
//! The estimate then samples in two stages, tasks and pieces within a task; see
//! [`crate::estimate`] for how the two variances combine.

use crate::work::{is_peak, Counters, Work};

/// How to solve a task in part.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Draws {
    /// Pieces to draw (with replacement); a task with no more than `4 × count` pieces is
    /// solved whole.
    pub count: usize,
    /// Seed of the draw: the same seed and task draw the same pieces on every machine.
    pub seed: u64,
    /// Whether to time the engine's phases as well (as [`crate::Plan::solve_counted`]).
    pub counted: bool,
}

/// One part of a task that was solved.
#[derive(Debug, Clone, PartialEq)]
pub struct Part {
    /// The probability with which each draw picks this piece; `None` for the work every
    /// piece shares (or the whole task), which is always done.
    pub probability: Option<f64>,
    /// How many of the draws picked this piece (it is solved once).
    pub drawn: usize,
    /// Solutions of the part, with the task's symmetry weight.
    pub count: u128,
    /// CPU seconds of the part on its thread.
    pub seconds: f64,
    /// The engine's work counters of the part.
    pub work: Work,
}

/// A task solved in part: the shared work and the drawn pieces.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Subsample {
    /// The parts solved.
    pub parts: Vec<Part>,
    /// The number of pieces the task has (1 when it was solved whole).
    pub pieces: usize,
}

impl Subsample {
    /// A task solved whole in `seconds`.
    pub fn whole(count: u128, seconds: f64, work: Work) -> Self {
        Subsample {
            parts: vec![Part {
                probability: None,
                drawn: 1,
                count,
                seconds,
                work,
            }],
            pieces: 1,
        }
    }

    /// Whether only some pieces were solved.
    pub fn is_partial(&self) -> bool {
        self.parts.iter().any(|p| p.probability.is_some())
    }

    /// The estimate of `value` over the whole task and the variance of that estimate (0 when
    /// it is exact or fewer than two pieces were drawn).
    pub fn expand(&self, value: impl Fn(&Part) -> f64) -> (f64, f64) {
        let fixed: f64 = self
            .parts
            .iter()
            .filter(|p| p.probability.is_none())
            .map(&value)
            .sum();
        let scaled: Vec<(f64, usize)> = self
            .parts
            .iter()
            .filter_map(|p| p.probability.map(|q| (value(p) / q, p.drawn)))
            .collect();
        let m: usize = scaled.iter().map(|&(_, d)| d).sum();
        if m == 0 {
            return (fixed, 0.0);
        }
        let mean = scaled.iter().map(|&(y, d)| y * d as f64).sum::<f64>() / m as f64;
        let variance = if m < 2 {
            0.0
        } else {
            let squares: f64 = scaled
                .iter()
                .map(|&(y, d)| (y - mean).powi(2) * d as f64)
                .sum();
            squares / (m * (m - 1)) as f64
        };
        (fixed + mean, variance)
    }

    /// The estimated count of the whole task and its variance.
    pub fn count(&self) -> (f64, f64) {
        self.expand(|p| p.count as f64)
    }

    /// The estimated CPU seconds of the whole task and their variance.
    pub fn seconds(&self) -> (f64, f64) {
        self.expand(|p| p.seconds)
    }

    /// Each work counter, estimated for the whole task; a peak (the most of one batch) is
    /// the most of any part solved, not scaled.
    pub fn counters(&self) -> Counters {
        let names = Work::default().counters();
        names
            .iter()
            .enumerate()
            .map(|(i, &(name, _))| {
                let of = |p: &Part| p.work.counters()[i].1;
                let value = if is_peak(name) {
                    self.parts.iter().map(of).fold(0.0, f64::max)
                } else {
                    self.expand(of).0
                };
                (name, value)
            })
            .collect()
    }
}

/// Draws `count` of the pieces whose expected work is `weights`, with replacement, each
/// draw picking piece `i` with probability `weights[i] / Σ weights`: the distinct pieces
/// drawn, ascending, with that probability and how often each was drawn. Pieces of weight 0
/// (or a non-finite weight) get a small share, so that no piece is out of reach. No pieces:
/// nothing drawn. It takes time in proportion to `count` times the pieces.
pub fn draw(weights: &[f64], count: usize, seed: u64) -> Vec<(usize, f64, usize)> {
    if weights.is_empty() {
        return Vec::new();
    }
    let clean: Vec<f64> = weights
        .iter()
        .map(|&w| if w.is_finite() && w > 0.0 { w } else { 0.0 })
        .collect();
    let total: f64 = clean.iter().sum();
    // A floor of 1% of an even share: a piece the weights wrongly call empty can still be
    // drawn, and its scale-up stays bounded (at most 100 × the number of pieces).
    let floor = 0.01 * total.max(f64::MIN_POSITIVE) / clean.len().max(1) as f64;
    let shares: Vec<f64> = clean.iter().map(|&w| w + floor).collect();
    let sum: f64 = shares.iter().sum();
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut drawn = vec![0usize; shares.len()];
    for _ in 0..count {
        let mut x = rng.f64() * sum;
        let mut i = 0;
        while i + 1 < shares.len() && x >= shares[i] {
            x -= shares[i];
            i += 1;
        }
        drawn[i] += 1;
    }
    drawn
        .iter()
        .enumerate()
        .filter(|&(_, &d)| d > 0)
        .map(|(i, &d)| (i, shares[i] / sum, d))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn piece(probability: f64, drawn: usize, count: u128) -> Part {
        Part {
            probability: Some(probability),
            drawn,
            count,
            seconds: count as f64 / 10.0,
            work: Work::default(),
        }
    }

    #[test]
    fn a_whole_task_is_exact() {
        let s = Subsample::whole(42, 1.5, Work::default());
        assert_eq!(s.count(), (42.0, 0.0));
        assert_eq!(s.seconds(), (1.5, 0.0));
        assert!(!s.is_partial());
    }

    #[test]
    fn drawn_pieces_are_scaled_by_their_probability() {
        let mut s = Subsample::whole(0, 0.5, Work::default());
        s.parts.push(piece(0.5, 1, 100));
        s.parts.push(piece(0.25, 1, 30));
        s.pieces = 3;
        // Draws give 100 / 0.5 = 200 and 30 / 0.25 = 120: mean 160, variance
        // ((40² + 40²) / 1) / 2 = 1600.
        assert_eq!(s.count(), (160.0, 1600.0));
        let (seconds, _) = s.seconds();
        assert!((seconds - 16.5).abs() < 1e-9, "{seconds}");
        assert!(s.is_partial());
    }

    #[test]
    fn a_piece_drawn_twice_counts_twice() {
        let mut s = Subsample::default();
        s.parts.push(piece(0.5, 2, 100));
        s.parts.push(piece(0.5, 1, 50));
        // 200, 200, 100: mean 500 / 3.
        let (count, variance) = s.count();
        assert!((count - 500.0 / 3.0).abs() < 1e-9);
        assert!(variance > 0.0);
    }

    #[test]
    fn the_expansion_is_unbiased_over_draws() {
        // Pieces of very different sizes, drawn by rough weights: the mean of many
        // estimates is the true total.
        let sizes = [900.0, 300.0, 250.0, 40.0, 5.0, 0.0];
        let weights = [1000.0, 200.0, 300.0, 10.0, 1.0, 1.0];
        let total: f64 = sizes.iter().sum();
        let runs = 20_000;
        let mean: f64 = (0..runs)
            .map(|seed| {
                let drawn = draw(&weights, 2, seed);
                let s = Subsample {
                    parts: drawn
                        .iter()
                        .map(|&(i, p, d)| piece(p, d, sizes[i] as u128))
                        .collect(),
                    pieces: sizes.len(),
                };
                s.count().0
            })
            .sum::<f64>()
            / runs as f64;
        assert!((mean / total - 1.0).abs() < 0.01, "{mean} vs {total}");
    }

    #[test]
    fn no_pieces_draw_nothing() {
        assert!(draw(&[], 5, 1).is_empty());
        assert!(draw(&[1.0, 2.0], 0, 1).is_empty());
    }

    #[test]
    fn draws_are_deterministic_and_reach_empty_pieces() {
        let weights = [5.0, 0.0, f64::NAN, 1.0];
        assert_eq!(draw(&weights, 3, 7), draw(&weights, 3, 7));
        let reached: std::collections::BTreeSet<usize> = (0..5000)
            .flat_map(|seed| draw(&weights, 1, seed))
            .map(|(i, _, _)| i)
            .collect();
        assert_eq!(reached.len(), 4);
        let p: f64 = draw(&weights, 1, 3).iter().map(|&(_, p, _)| p).sum();
        assert!(p > 0.0 && p <= 1.0);
    }
}
