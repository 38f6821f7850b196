//! A join's halves as GPU work: the quarter words it reads (each class of each quarter
//! once) and its jobs, one per (column split, class) of a half, in the CPU's order.

use crate::engine::mitm::half::HalfSpec;
use crate::engine::mitm::prepared::Prepared;

/// South words per work item of the half join (the `tile` of gen.wgsl).
pub(crate) const TILE: u32 = 32;

/// Key bits that carry a half's class (0..3) on the GPU: no key of any board the engine
/// takes reaches them (N = 28: 54 diagonal bits, 3 tags and 4 marks, bits 0..60).
pub(crate) const CLASS_SHIFT: u32 = 61;

/// One job: north words × south words of one column split and class.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Job {
    pub(crate) north: u32,
    pub(crate) north_len: u32,
    pub(crate) south: u32,
    pub(crate) south_len: u32,
    pub(crate) forbid: u64,
    pub(crate) extra: u64,
    pub(crate) exact: (u64, u64),
    pub(crate) first_item: u32,
}

impl Job {
    /// South tiles, and so items per north word.
    pub(crate) fn tiles(&self) -> u32 {
        self.south_len.div_ceil(TILE)
    }

    /// Work items.
    pub(crate) fn items(&self) -> u64 {
        u64::from(self.north_len) * u64::from(self.tiles())
    }

    /// Word pairs the job tests.
    pub(crate) fn pairs(&self) -> u64 {
        u64::from(self.north_len) * u64::from(self.south_len)
    }

    /// The job as gen.wgsl's `Job` struct lays it out.
    pub(crate) fn encode(&self, out: &mut Vec<u32>) {
        let split = |x: u64| [x as u32, (x >> 32) as u32];
        out.extend([self.north, self.north_len, self.south, self.south_len]);
        out.extend(split(self.forbid));
        out.extend(split(self.extra));
        out.extend(split(self.exact.0));
        out.extend(split(self.exact.1));
        out.extend([self.first_item, self.tiles(), 0, 0]);
    }
}

/// The word arrays a join reads, laid end to end: (stamp, class) of each quarter, and
/// where its words start.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Arena {
    pub(crate) parts: Vec<((u64, usize), u32)>,
    pub(crate) len: u32,
}

impl Arena {
    /// Adds both classes of `p`, unless they are there already.
    fn add(&mut self, p: &Prepared) {
        for class in 0..2 {
            let id = (p.stamp(), class);
            if !self.parts.iter().any(|&(x, _)| x == id) {
                self.parts.push((id, self.len));
                self.len += p.words(class).len() as u32;
            }
        }
    }

    /// Where `slice` (a range of class `class` of `p`) starts in the arena.
    fn at(&self, p: &Prepared, class: usize, slice: &[u64]) -> u32 {
        let id = (p.stamp(), class);
        let start = self.parts.iter().find(|&&(x, _)| x == id).expect("added").1;
        let words = p.words(class);
        // The groups of a quarter are ranges of its words.
        let skip = (slice.as_ptr() as usize - words.as_ptr() as usize) / 8;
        start + skip as u32
    }
}

/// The jobs of one or more sides: each side's jobs in order, and which of them make tied
/// halves (even N's transposes; their keys carry a mark of `marks`).
#[derive(Debug, Default)]
pub(crate) struct SideJobs {
    pub(crate) all: Vec<Job>,
    pub(crate) tied: Vec<Job>,
}

/// The arena of every quarter `specs` read.
pub(crate) fn arena<'a>(specs: impl IntoIterator<Item = &'a HalfSpec<'a>>) -> Arena {
    let mut arena = Arena::default();
    for spec in specs {
        arena.add(spec.north);
        arena.add(spec.south);
    }
    arena
}

/// The jobs of the halves of `specs`, each cut so that it tests at most `max_pairs` word
/// pairs (so it makes at most that many keys); a job's keys carry its class.
pub(crate) fn side_jobs(
    specs: &[HalfSpec<'_>],
    arena: &Arena,
    marks: u64,
    max_pairs: u64,
) -> SideJobs {
    let mut out = SideJobs::default();
    for spec in specs {
        for &cn in spec.masks.iter().filter(|&&cn| cn & !spec.cols == 0) {
            column_jobs(spec, cn, arena, (marks, max_pairs), &mut out);
        }
    }
    out
}

/// The jobs of `spec`'s halves whose north quarter uses the columns `cn`.
fn column_jobs(
    spec: &HalfSpec<'_>,
    cn: u32,
    arena: &Arena,
    (marks, max_pairs): (u64, u64),
    out: &mut SideJobs,
) {
    let cs = spec.cols ^ cn;
    let tags = spec.tags.map(|t| t.row(cn));
    for class in (0..4).filter(|&c| spec.wanted[c]) {
        let tag = match tags {
            Some(row) => match row[class] {
                Some(tag) => tag,
                None => continue,
            },
            None => 0,
        };
        let (n, s) = match spec.patterns {
            None => (
                spec.north.get(class >> 1, cn),
                spec.south.get(class & 1, cs),
            ),
            Some((pn, ps)) => (
                spec.north.get_group(class >> 1, cn, pn),
                spec.south.get_group(class & 1, cs, ps),
            ),
        };
        if n.is_empty() || s.is_empty() {
            continue;
        }
        let job = Job {
            north: arena.at(spec.north, class >> 1, n),
            north_len: n.len() as u32,
            south: arena.at(spec.south, class & 1, s),
            south_len: s.len() as u32,
            forbid: spec.forbid,
            extra: spec.extra | tag | (class as u64) << CLASS_SHIFT,
            exact: spec.exact,
            first_item: 0,
        };
        let step = (max_pairs / s.len() as u64).clamp(1, u64::from(u32::MAX)) as u32;
        for from in (0..job.north_len).step_by(step as usize) {
            let piece = Job {
                north: job.north + from,
                north_len: step.min(job.north_len - from),
                ..job
            };
            out.all.push(piece);
            if tag & marks != 0 {
                out.tied.push(piece);
            }
        }
    }
}

/// Writes the words of `arena`'s quarters, in its order, as u32 pairs.
pub(crate) fn arena_words<'a>(
    arena: &Arena,
    specs: impl IntoIterator<Item = &'a HalfSpec<'a>>,
) -> Vec<u32> {
    let mut quarters: Vec<&Prepared> = Vec::new();
    for spec in specs {
        for p in [spec.north, spec.south] {
            if !quarters.iter().any(|q| q.stamp() == p.stamp()) {
                quarters.push(p);
            }
        }
    }
    let mut out = Vec::with_capacity(2 * arena.len as usize);
    for &((stamp, class), _) in &arena.parts {
        let p = quarters
            .iter()
            .find(|q| q.stamp() == stamp)
            .expect("in the arena");
        out.extend(
            p.words(class)
                .iter()
                .flat_map(|&w| [w as u32, (w >> 32) as u32]),
        );
    }
    out
}
