//! One join as the GPU takes it, owned so that it can wait in a queue while the worker that
//! made it goes on: its jobs (one per column split and class of each side, in the CPU's
//! order), what each side's jobs share, the join's weights and flags, and the quarter words
//! it reads that are not on the GPU already.

use std::sync::Arc;

use rustc_hash::FxHashMap;

use super::layout::{
    split, unsplit, Job, JoinDesc, Side, CARRIED, CLASS_SHIFT, JOB_TAG_BITS, JOIN_EAST_STORED,
    JOIN_PORTION, JOIN_REFUSE, JOIN_SWAP, JOIN_TIES, ROLE_EAST, ROLE_TIED_EAST, ROLE_TIED_WEST,
    ROLE_WEST,
};
use super::resident::Resident;
use super::words::{spare_buffer, Words};
use crate::engine::mitm::half::HalfSpec;
use crate::engine::mitm::join::Join;
use crate::engine::mitm::prepared::Prepared;
#[cfg(doc)]
use crate::engine::mitm::transpose::Tags;

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

    /// The requests whose counts add up to this one's: its jobs of role `role` cut into
    /// runs of at most `most` pairs (a job of more is cut by its north words, and a north
    /// word with more south words than that by its south words), each with every job of the
    /// other side; the tied halves go with the first alone.
    pub(crate) fn cut(&self, role: u32, most: u64) -> Vec<Request> {
        let r = role as usize;
        let (first, end) = (self.roles[r] as usize, self.roles[r + 1] as usize);
        let mut pieces: Vec<Job> = Vec::new();
        for job in &self.jobs[first..end] {
            pieces.extend(cut_job(job, most));
        }
        let mut runs: Vec<Vec<Job>> = vec![Vec::new()];
        let mut pairs = 0;
        for job in pieces {
            let last = runs.last_mut().expect("a run");
            if pairs + job.pairs() > most && !last.is_empty() {
                runs.push(Vec::new());
                pairs = 0;
            }
            pairs += job.pairs();
            runs.last_mut().expect("a run").push(job);
        }
        runs.into_iter()
            .enumerate()
            .map(|(i, run)| self.with_role(r, run, i == 0))
            .collect()
    }

    /// The two requests whose counts add up to this one's, its stored side (role `stored`)
    /// split on key bit `bit`, as its tree's root splits it: the keys without the bit, met by
    /// every query, and those with it, met by the queries without it. A cut into runs of
    /// jobs makes parts that every query meets whole; this one keeps the tree's first split,
    /// so its parts visit about the blocks the whole would. The first takes the tied halves.
    /// `None` where the bit cannot split it: not a live bit, one a stored side fixes already
    /// (so that a part split again takes a new bit), or a portion (a range of its keys).
    pub(crate) fn split_on(&self, bit: u32, stored: u32) -> Option<[Request; 2]> {
        let b = 1u64.checked_shl(bit)?;
        let fixed = |s: &Side| unsplit(s.exact_mask) & b != 0;
        let carries =
            |s: &Side| (unsplit(s.extra) | unsplit(s.exact_mask) & unsplit(s.exact_bits)) & b != 0;
        let stored_sides = || self.sides.iter().filter(|s| s.role == stored);
        let splits = stored_sides().all(|s| !fixed(s) && unsplit(s.extra) & b == 0);
        if unsplit(self.desc.live) & b == 0 || !splits || self.desc.flags & JOIN_PORTION != 0 {
            return None;
        }
        let query = if stored == ROLE_WEST {
            ROLE_EAST
        } else {
            ROLE_WEST
        };
        let part = |with: bool| {
            let mut sides = self.sides.clone();
            // A query side whose halves all carry the bit meets none of the keys with it.
            let mut empty = vec![false; sides.len()];
            for (s, empty) in sides.iter_mut().zip(&mut empty) {
                if s.role == stored {
                    s.exact_mask = split(unsplit(s.exact_mask) | b);
                    s.exact_bits = split(unsplit(s.exact_bits) | if with { b } else { 0 });
                } else if s.role == query && with {
                    *empty = carries(s);
                    s.exact_mask = split(unsplit(s.exact_mask) | b);
                }
            }
            let mut roles = self.role_jobs();
            for jobs in &mut roles {
                jobs.retain(|j| !empty[j.side() as usize]);
            }
            self.rebuilt(roles, sides, !with)
        };
        Some([part(false), part(true)])
    }

    /// The requests whose counts add up to this one's, its stored side (the east one where
    /// `east`) of `keys` keys, past its fill cap, stored a portion of at most the cap (and
    /// at most `most` keys) at a time (keys in the CPU's order), each portion met by every
    /// query, as the CPU stores it. The first takes the tied halves.
    pub(crate) fn portions(&self, east: bool, keys: u32, most: u32) -> Vec<Request> {
        let size = self.desc.cap.min(most).max(1);
        (0..keys.div_ceil(size))
            .map(|k| self.portion(east, k * size, size, k == 0))
            .collect()
    }

    /// A portion ([`JOIN_PORTION`]) that found no room alone in a batch cut into `parts`
    /// ranges of its keys as even as can be (two at least, none empty); none where it holds
    /// one key only. The first takes the tied halves.
    pub(crate) fn ranges(&self, parts: u64) -> Vec<Request> {
        let (lo, size) = (self.desc.lo, self.desc.cap);
        let east = self.desc.flags & JOIN_EAST_STORED != 0;
        if size < 2 {
            return Vec::new();
        }
        let parts = parts.clamp(2, u64::from(size));
        let end = |k: u64| lo + (u64::from(size) * k / parts) as u32;
        (0..parts)
            .map(|k| self.portion(east, end(k), end(k + 1) - end(k), k == 0))
            .collect()
    }

    /// This request storing keys `lo` to `lo + size` of its stored side (the east one where
    /// `east`), with its tied halves only if `ties`.
    fn portion(&self, east: bool, lo: u32, size: u32, ties: bool) -> Request {
        let mut out = self.rebuilt(self.role_jobs(), self.sides.clone(), ties);
        out.desc.flags |= JOIN_PORTION | if east { JOIN_EAST_STORED } else { 0 };
        out.desc.lo = lo;
        out.desc.cap = size;
        out
    }

    /// Each role's jobs.
    fn role_jobs(&self) -> [Vec<Job>; 4] {
        std::array::from_fn(|k| {
            self.jobs[self.roles[k] as usize..self.roles[k + 1] as usize].to_vec()
        })
    }

    /// This request with role `r`'s jobs replaced by `jobs`, and its tied halves only if
    /// `ties`.
    fn with_role(&self, r: usize, jobs: Vec<Job>, ties: bool) -> Request {
        let mut roles = self.role_jobs();
        roles[r] = jobs;
        self.rebuilt(roles, self.sides.clone(), ties)
    }

    /// This request with the jobs `roles` (each role's) of sides `sides`, and its tied
    /// halves only if `ties`.
    fn rebuilt(&self, mut roles: [Vec<Job>; 4], sides: Vec<Side>, ties: bool) -> Request {
        let mut desc = self.desc;
        if !ties {
            roles[ROLE_TIED_WEST as usize].clear();
            roles[ROLE_TIED_EAST as usize].clear();
            desc.flags &= !JOIN_TIES;
        }
        let mut out = Request {
            jobs: Vec::new(),
            sides,
            roles: [0; 5],
            desc,
            words: Arc::clone(&self.words),
        };
        let mut item = 0u64;
        for (k, role) in roles.into_iter().enumerate() {
            out.roles[k] = out.jobs.len() as u32;
            for mut job in role {
                job.first_item = item as u32;
                item += job.items();
                out.jobs.push(job);
            }
        }
        out.roles[4] = out.jobs.len() as u32;
        out
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

/// `job` in pieces of at most `most` pairs where it can be: runs of its north words, each
/// with all its south words; where one north word meets more than `most`, each north word
/// with runs of its south words (a job of one north word, the last a join can be cut to,
/// could otherwise not be cut at all). The pieces make the job's pairs once each.
fn cut_job(job: &Job, most: u64) -> Vec<Job> {
    let south = u64::from(job.south_len.max(1));
    let most = most.clamp(1, u64::from(u32::MAX));
    if south <= most {
        let step = (most / south) as u32;
        return (0..job.north_len)
            .step_by(step as usize)
            .map(|from| Job {
                north: job.north + from,
                north_len: step.min(job.north_len - from),
                ..*job
            })
            .collect();
    }
    let step = most as u32;
    (0..job.north_len)
        .flat_map(|n| {
            (0..job.south_len)
                .step_by(step as usize)
                .map(move |from| Job {
                    north: job.north + n,
                    north_len: 1,
                    south: job.south + from,
                    south_len: step.min(job.south_len - from),
                    ..*job
                })
        })
        .collect()
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    /// Each (north, south) word pair of a role's jobs.
    fn pairs_of(r: &Request, role: u32) -> Vec<(u32, u32)> {
        let jobs = &r.jobs[r.roles[role as usize] as usize..r.roles[role as usize + 1] as usize];
        jobs.iter()
            .flat_map(|j| {
                (0..j.north_len)
                    .flat_map(move |n| (0..j.south_len).map(move |s| (j.north + n, j.south + s)))
            })
            .collect()
    }

    /// A cut makes every pair of the role once, in parts of at most `most` pairs (where a
    /// north word meets more, its south words are cut), each part with all the other
    /// side's: down to a join of one north word, which is still cut.
    #[test]
    fn a_cut_makes_each_pair_once_down_to_one_north_word() {
        let mut whole = Request::of_keys(&[1, 2, 3], &[8; 5], JoinDesc::default());
        whole.jobs[0].south_len = 40;
        let one = {
            let mut r = Request::of_keys(&[1], &[8; 5], JoinDesc::default());
            r.jobs[0].south_len = 40;
            r
        };
        for (r, most) in [(&whole, 50), (&whole, 7), (&one, 7), (&one, 40), (&one, 1)] {
            let parts = r.cut(ROLE_WEST, most);
            let want: BTreeSet<_> = pairs_of(r, ROLE_WEST).into_iter().collect();
            let mut got = Vec::new();
            for p in &parts {
                let mine = pairs_of(p, ROLE_WEST);
                assert!(mine.len() as u64 <= most, "{most}: {}", mine.len());
                assert_eq!(pairs_of(p, ROLE_EAST), pairs_of(r, ROLE_EAST));
                got.extend(mine);
            }
            assert_eq!(got.len(), want.len(), "{most}: a pair made twice");
            assert_eq!(got.into_iter().collect::<BTreeSet<_>>(), want, "{most}");
            let pairs = r.pairs(ROLE_WEST);
            assert_eq!(
                parts.len() as u64 >= 2,
                pairs > most,
                "{most}: {}",
                parts.len()
            );
        }
    }

    /// A portion's ranges cover its range once, in order, as even as can be, none empty;
    /// the first alone takes the tied halves; one key cannot be cut.
    #[test]
    fn a_portions_ranges_cover_it_once() {
        let desc = JoinDesc {
            flags: JOIN_TIES,
            ..JoinDesc::default()
        };
        let whole = Request::of_keys(&[1, 2, 3], &[8; 5], desc);
        for parts in [1, 2, 3, 7, 64, 200] {
            let ranges = whole.portion(true, 10, 101, true).ranges(parts);
            assert_eq!(ranges.len() as u64, parts.clamp(2, 101));
            let mut at = 10;
            for (k, r) in ranges.iter().enumerate() {
                assert_eq!(r.desc.lo, at, "{parts}");
                assert!(
                    r.desc.cap >= 101 / ranges.len() as u32,
                    "{parts}: {}",
                    r.desc.cap
                );
                assert_ne!(r.desc.flags & JOIN_EAST_STORED, 0);
                assert_eq!(r.desc.flags & JOIN_TIES != 0, k == 0, "{parts}");
                at += r.desc.cap;
            }
            assert_eq!(at, 10 + 101);
        }
        assert!(whole.portion(true, 3, 1, true).ranges(4).is_empty());
    }
}
