//! A request's parts, whose counts add up to its count: runs of one side's jobs, the two
//! sides of a bit its stored keys split on (as its tree splits them), and ranges of the
//! stored keys of a side past a fill's cap (portions).

use std::sync::Arc;

use super::whole::Request;
use crate::gpu::layout::{
    split, unsplit, Job, Side, JOIN_EAST_STORED, JOIN_PORTION, JOIN_TIES, ROLE_EAST,
    ROLE_TIED_EAST, ROLE_TIED_WEST, ROLE_WEST,
};

impl Request {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::layout::JoinDesc;
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
