//! One join as the GPU takes it, owned so that it can wait in a queue while the worker that
//! made it goes on: its jobs (one per column split and class of each side, in the CPU's
//! order), what each side's jobs share, the join's weights and flags, and the quarter words
//! it reads that are not on the GPU already.

use std::sync::Arc;

use rustc_hash::FxHashMap;

use crate::engine::mitm::half::HalfSpec;
use crate::engine::mitm::join::Join;
use crate::engine::mitm::prepared::Prepared;
#[cfg(doc)]
use crate::engine::mitm::transpose::Tags;
use crate::gpu::layout::{
    split, Job, JoinDesc, Side, CARRIED, CLASS_SHIFT, JOB_TAG_BITS, JOIN_REFUSE, JOIN_SWAP,
    JOIN_TIES, ROLE_EAST, ROLE_TIED_EAST, ROLE_TIED_WEST, ROLE_WEST,
};
use crate::gpu::resident::Resident;
use crate::gpu::words::{spare_buffer, Words};

/// One join, ready to be packed into a batch.
#[derive(Debug, Clone)]
pub(crate) struct Request {
    /// The jobs of each role in turn ([`Request::roles`]); `side` indexes [`Request::sides`],
    /// `first_item` counts from the request's first item.
    pub(crate) jobs: Vec<Job>,
    pub(crate) sides: Vec<Side>,
    /// The first job of each role (west, east, tied west, tied east), and the jobs' end.
    pub(crate) roles: [u32; 5],
    /// Flags, fill cap, weights, live bits and tie marks (the job indices are the batch's).
    pub(crate) desc: JoinDesc,
    /// Quarter words the jobs read that are not resident on the GPU ([`CARRIED`]); shared
    /// by the parts of a join that is cut.
    pub(crate) words: Arc<Words>,
}

thread_local! {
    /// The carried words of the last request this thread made.
    static LAST_WORDS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    /// The last request's map of carried groups, kept for its room.
    static CARRIED_GROUPS: std::cell::Cell<Option<Groups>> = const { std::cell::Cell::new(None) };
}

/// The groups of quarter words carried so far, by (stamp, class, first word, words): where
/// they start in the carried words.
type Groups = FxHashMap<(u64, usize, u32, u32), u32>;

impl Request {
    /// The request for `join`, whose fills hold at most `cap` stored keys; quarters that
    /// `resident` has on the GPU are read there, the others are carried.
    pub(crate) fn new(join: &Join<'_, '_>, cap: u32, resident: &Resident) -> Self {
        let marks = join
            .shape
            .ties
            .map_or(0, |(m, _)| m.iter().fold(0, |a, b| a | b));
        // A thread's consecutive joins are alike: start with room for the last one's words,
        // rather than grow (and copy) them a dozen times.
        let mut words = spare_buffer();
        words.reserve(LAST_WORDS.get());
        let mut carried = CARRIED_GROUPS.take().unwrap_or_default();
        carried.clear();
        let mut b = Builder {
            words,
            carried,
            resident,
            resident_at: Vec::new(),
            sides: Vec::new(),
            max_pairs: u64::from(cap.max(1)),
        };
        let west_roles = AllTied {
            all: ROLE_WEST,
            tied: ROLE_TIED_WEST,
        };
        let east_roles = AllTied {
            all: ROLE_EAST,
            tied: ROLE_TIED_EAST,
        };
        let (west, tied_west) = b.side_jobs(join.stored, west_roles, marks);
        let (east, tied_east) = b.side_jobs(join.queries, east_roles, marks);
        let mut jobs =
            Vec::with_capacity(west.len() + east.len() + tied_west.len() + tied_east.len());
        let mut roles = [0u32; 5];
        for (r, role) in [west, east, tied_west, tied_east].into_iter().enumerate() {
            roles[r] = jobs.len() as u32;
            jobs.extend(role);
        }
        roles[4] = jobs.len() as u32;
        let mut item = 0u64;
        for job in &mut jobs {
            job.first_item = item as u32;
            item += job.items();
        }
        LAST_WORDS.set(b.words.len());
        CARRIED_GROUPS.set(Some(b.carried));
        Request {
            jobs,
            sides: b.sides,
            roles,
            desc: desc(join, cap),
            words: Arc::new(Words::new(b.words)),
        }
    }

    /// Bytes it uploads with its batch: its jobs, sides, description and carried words.
    pub(crate) fn upload_bytes(&self) -> u64 {
        let words: &[u64] = &self.words;
        (std::mem::size_of_val(&self.jobs[..])
            + std::mem::size_of_val(&self.sides[..])
            + std::mem::size_of::<JoinDesc>()
            + std::mem::size_of_val(words)) as u64
    }

    /// Work items of the half join.
    pub(crate) fn items(&self) -> u64 {
        self.jobs.iter().map(Job::items).sum()
    }

    /// The word pairs the jobs of role `role` test: at least the keys they make.
    pub(crate) fn pairs(&self, role: u32) -> u64 {
        let r = role as usize;
        let jobs = &self.jobs[self.roles[r] as usize..self.roles[r + 1] as usize];
        jobs.iter().map(Job::pairs).sum()
    }

    /// The word pairs every job tests.
    pub(crate) fn all_pairs(&self) -> u64 {
        self.jobs.iter().map(Job::pairs).sum()
    }
}

#[cfg(test)]
impl Request {
    /// A join of given keys, west (stored unless swapped) and east, with `desc`'s flags,
    /// cap, weights and live bits: each side one job of its keys as north words against a
    /// single empty south word, so that the half join writes them as they are.
    pub(crate) fn of_keys(west: &[u64], east: &[u64], desc: JoinDesc) -> Self {
        let mut words = west.to_vec();
        words.extend_from_slice(east);
        words.push(0);
        let zero = CARRIED | (words.len() as u32 - 1);
        let job = |at: usize, len: usize, side: u32| Job {
            north: CARRIED | at as u32,
            north_len: len as u32,
            south: zero,
            south_len: 1,
            first_item: 0,
            side_tag: Job::side_tag(side, 0, 0),
        };
        let mut jobs = Vec::new();
        if !west.is_empty() {
            jobs.push(job(0, west.len(), 0));
        }
        let east_at = jobs.len() as u32;
        if !east.is_empty() {
            jobs.push(job(west.len(), east.len(), 1));
        }
        let mut item = 0;
        for j in &mut jobs {
            j.first_item = item;
            item += j.items() as u32;
        }
        let n = jobs.len() as u32;
        let side = |role| Side {
            role,
            ..Side::default()
        };
        Request {
            jobs,
            sides: vec![side(ROLE_WEST), side(ROLE_EAST)],
            roles: [0, east_at, n, n, n],
            desc,
            words: Arc::new(Words::new(words)),
        }
    }
}

/// The join's flags, fill cap, weights, live bits and tie marks.
fn desc(join: &Join<'_, '_>, cap: u32) -> JoinDesc {
    let mut flags = 0;
    if join.limits.swap {
        flags |= JOIN_SWAP;
    }
    if join.refuse {
        flags |= JOIN_REFUSE;
    }
    let live = !join.shape.holes & ((1u64 << CLASS_SHIFT) - 1);
    let mut desc = JoinDesc {
        cap,
        factors: join.factors.map(|f| f as u32),
        live: split(live),
        ..JoinDesc::default()
    };
    if let Some((marks, below)) = join.shape.ties {
        flags |= JOIN_TIES;
        desc.below = split(below);
        desc.marks = marks.map(split);
    }
    desc.flags = flags;
    desc
}

/// Makes a request's jobs and sides, and gathers the words it carries.
struct Builder<'r> {
    words: Vec<u64>,
    /// The groups of quarter words carried so far: where they start in `words`. Only the
    /// groups the jobs read are carried, each once.
    carried: Groups,
    resident: &'r Resident,
    /// Where each (stamp, class) of a quarter the jobs read lies in the resident words
    /// (`None`: carried): looked up once per request, not once per job.
    resident_at: Vec<((u64, usize), Option<u32>)>,
    sides: Vec<Side>,
    max_pairs: u64,
}

impl Builder<'_> {
    /// Where `slice` (a group of class `class` of `p`) starts: in the resident words, or in
    /// the carried ones (marked [`CARRIED`]).
    fn at(&mut self, p: &Prepared, class: usize, slice: &[u64]) -> u32 {
        let all = p.words(class);
        // The groups of a quarter are ranges of its words.
        let skip = ((slice.as_ptr() as usize - all.as_ptr() as usize) / 8) as u32;
        if let Some(base) = self.resident_base(p, class) {
            return base + skip;
        }
        let id = (p.stamp(), class, skip, slice.len() as u32);
        let words = &mut self.words;
        let start = *self.carried.entry(id).or_insert_with(|| {
            let start = words.len() as u32;
            words.extend_from_slice(slice);
            start
        });
        CARRIED | start
    }

    /// Where class `class` of `p` starts in the resident words, if it is there.
    fn resident_base(&mut self, p: &Prepared, class: usize) -> Option<u32> {
        let id = (p.stamp(), class);
        if let Some(&(_, at)) = self.resident_at.iter().find(|(k, _)| *k == id) {
            return at;
        }
        let at = self.resident.offset(p, class);
        self.resident_at.push((id, at));
        at
    }

    /// The jobs of the halves of `specs` in `roles`: every job, and those that make tied
    /// halves (even N's transposes: their keys carry a mark of `marks`).
    fn side_jobs(
        &mut self,
        specs: &[HalfSpec<'_>],
        roles: AllTied,
        marks: u64,
    ) -> (Vec<Job>, Vec<Job>) {
        let mut out = Jobs {
            all: Vec::new(),
            tied: Vec::new(),
            marks,
        };
        for spec in specs {
            let sides = AllTied {
                all: self.side(spec, roles.all),
                tied: self.side(spec, roles.tied),
            };
            for &cn in spec.masks.iter().filter(|&&cn| cn & !spec.cols == 0) {
                self.column_jobs(spec, cn, sides, &mut out);
            }
        }
        (out.all, out.tied)
    }

    /// `tag` (a key's tag and mark bits, [`Tags::row`]) as a job of side `side` carries it:
    /// from the side's first tag bit.
    fn job_tag(&self, side: u32, tag: u64) -> u32 {
        let at = self.sides[side as usize].tag_at;
        let bits = tag >> at;
        assert!(
            bits < 1 << JOB_TAG_BITS && bits << at == tag,
            "a tag {tag:#x} outside the {JOB_TAG_BITS} bits from bit {at}"
        );
        bits as u32
    }

    /// A new side entry for `spec` in role `role`.
    fn side(&mut self, spec: &HalfSpec<'_>, role: u32) -> u32 {
        self.sides.push(Side {
            forbid: split(spec.forbid),
            exact_mask: split(spec.exact.0),
            exact_bits: split(spec.exact.1),
            extra: split(spec.extra),
            join: 0,
            role,
            tag_at: spec.tags.map_or(0, |t| t.first_bit()),
            pad: 0,
        });
        self.sides.len() as u32 - 1
    }

    /// Adds to `out` the jobs of `spec`'s halves whose north quarter uses the columns `cn`
    /// (of `sides`), each cut to at most `max_pairs` pairs (so a portion
    /// of a side never needs to cut one); a job's keys carry its class.
    fn column_jobs(&mut self, spec: &HalfSpec<'_>, cn: u32, sides: AllTied, out: &mut Jobs) {
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
                north: self.at(spec.north, class >> 1, n),
                north_len: n.len() as u32,
                south: self.at(spec.south, class & 1, s),
                south_len: s.len() as u32,
                first_item: 0,
                side_tag: Job::side_tag(sides.all, self.job_tag(sides.all, tag), class as u32),
            };
            let step = (self.max_pairs / s.len() as u64).clamp(1, u64::from(u32::MAX)) as u32;
            for from in (0..job.north_len).step_by(step as usize) {
                let piece = Job {
                    north: job.north + from,
                    north_len: step.min(job.north_len - from),
                    ..job
                };
                out.all.push(piece);
                if tag & out.marks != 0 {
                    out.tied.push(piece.on_side(sides.tied));
                }
            }
        }
    }
}

/// A side's two roles, or its two entries in a batch's sides: one for every half, one for
/// the tied halves.
#[derive(Debug, Clone, Copy)]
struct AllTied {
    all: u32,
    tied: u32,
}

/// A side's jobs as they are made: all of them, and those that make tied halves (their
/// keys carry a mark of `marks`).
struct Jobs {
    all: Vec<Job>,
    tied: Vec<Job>,
    marks: u64,
}
