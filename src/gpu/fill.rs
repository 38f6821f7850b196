//! A fill of the GPU sieve and the queries counted against it: the stored keys of one
//! portion, its tree and blocks, and each query portion routed and counted; and the tied
//! pairs of even N, counted one by one.

use std::ops::Range;

use super::join::{add_sums, scan, scan_scratch, Fill, Plan, Slot, Stage, Tally};
use super::shader::{Stat, BLOCK_INFO, ROUTES_PER_GROUP, ROUTE_QUERIES_PER_GROUP, STATS_WORDS};
use super::tree::{Tree, LEAF_KEYS};
use super::Device;
use crate::engine::mitm::join::Join;
use crate::work::Work;

use super::join::{KEY_SAMPLE, QUERY_SAMPLE, TABLE_WORDS};

/// East tied halves a ties workgroup takes (ties.wgsl's `EAST`).
const TIE_EAST: u64 = 4096;

/// Where a fill's counters and offsets lie in the slot's `scan` buffer (u32 words), for a
/// tree of `leaves` leaves, at most `blocks` blocks and `groups` route workgroups.
#[derive(Debug, Clone, Copy)]
struct Regions {
    leaves: u64,
    blocks: u64,
    /// Each leaf's keys, scanned into its first key (leaves + 1).
    leaf_keys: u64,
    leaf_cursor: u64,
    /// Each leaf's blocks, scanned into its first block (leaves + 1).
    leaf_blocks: u64,
    /// Each block's routed queries, scanned into its first (blocks + 1).
    block_queries: u64,
    block_cursor: u64,
    tests: u64,
    scratch: u64,
    end: u64,
}

impl Regions {
    fn new(leaves: u64, blocks: u64, groups: u64) -> Self {
        let leaf_keys = 0;
        let leaf_cursor = leaf_keys + leaves + 1;
        let leaf_blocks = leaf_cursor + leaves;
        let block_queries = leaf_blocks + leaves + 1;
        let block_cursor = block_queries + blocks + 1;
        let tests = block_cursor + blocks;
        let scratch = tests + groups;
        let end = scratch + scan_scratch(leaves + 1).max(scan_scratch(blocks + 1));
        Regions {
            leaves,
            blocks,
            leaf_keys,
            leaf_cursor,
            leaf_blocks,
            block_queries,
            block_cursor,
            tests,
            scratch,
            end,
        }
    }
}

/// A tree's nodes and leaves.
fn shape(tree: &Tree) -> (u64, u64) {
    (tree.nodes.len() as u64, u64::from(tree.leaves))
}

/// What one query portion's routes and counts came to.
struct Counted {
    weighted: u128,
    hits: u128,
    routes: u64,
    tests: u64,
    blocks: u64,
    /// The work counters since the fill began ([`Stat`] order).
    stats: Stats,
}

/// The kernels' work counters, [`Stat`] by [`Stat`].
type Stats = [u64; Stat::ALL.len()];

/// Counters read back as (low, high) u32 pairs.
fn stats_of(words: &[u32]) -> Stats {
    let mut stats = Stats::default();
    for (s, w) in stats.iter_mut().zip(words.chunks_exact(2)) {
        *s = u64::from(w[0]) | u64::from(w[1]) << 32;
    }
    stats
}

/// The larger of each counter: the later reading of counters that only grow.
fn later(a: Stats, b: Stats) -> Stats {
    std::array::from_fn(|i| a[i].max(b[i]))
}

impl Slot {
    /// Fills the sieve with the stored keys of the jobs `stored` and counts every query
    /// portion against it.
    pub(super) fn fill_and_count(
        &mut self,
        dev: &Device,
        (plan, offsets): (&Plan, &[u32]),
        (stored, queries): (Range<usize>, &[Range<usize>]),
        fill: Fill,
        (work, tally): (&mut Work, &mut Tally),
    ) -> Result<(), String> {
        let s = u64::from(offsets[stored.end] - offsets[stored.start]);
        if s == 0 {
            return Ok(());
        }
        let target = self.stored.at_least(dev, 8 * s)?;
        self.write_keys(dev, (plan, offsets), stored.clone(), &target)?;
        let q_max = queries
            .iter()
            .map(|r| u64::from(offsets[r.end] - offsets[r.start]))
            .max()
            .unwrap_or(0);
        let qbuf = self.queries.at_least(dev, 8 * q_max)?;
        let q0 = self.write_keys(dev, (plan, offsets), queries[0].clone(), &qbuf)?;
        let tree = self.tree_for(dev, fill.live, s, u64::from(q0))?;
        let regions = Regions::new(
            u64::from(tree.leaves),
            s.div_ceil(512) + u64::from(tree.leaves),
            q_max.div_ceil(ROUTE_QUERIES_PER_GROUP),
        );
        self.sieve(dev, &tree, fill, (s, regions))?;
        work.stored_keys += s;
        work.keys_built += s;
        let mut blocks = 0;
        let mut stats = Stats::default();
        for (i, range) in queries.iter().enumerate() {
            let q = if i == 0 {
                q0
            } else {
                self.write_keys(dev, (plan, offsets), range.clone(), &qbuf)?
            };
            work.keys_built += u64::from(q);
            if q == 0 {
                continue;
            }
            self.upload_fill(dev, fill, (s, u64::from(q)), shape(&tree))?;
            let c = self.route_and_count(dev, regions, (0, u64::from(q)))?;
            blocks = c.blocks;
            stats = later(stats, c.stats);
            work.queries += u64::from(q);
            work.pair_product += s * u64::from(q);
            work.visited_pairs += c.routes;
            work.routing_tests += c.tests;
            work.hits += u64::try_from(c.hits).unwrap_or(u64::MAX);
            tally.count += c.weighted;
        }
        work.blocks_built += blocks;
        let [key_tests, chunks, atomics] = stats;
        work.table_key_tests += key_tests;
        work.table_chunks += chunks;
        work.route_atomics += atomics;
        Ok(())
    }

    /// The tree of a fill of `s` stored keys (in `stored`) and `q` queries (in `queries`),
    /// chosen from samples of both.
    fn tree_for(&mut self, dev: &Device, live: u64, s: u64, q: u64) -> Result<Tree, String> {
        let ks = s.min(u64::from(KEY_SAMPLE));
        let qs = q.min(u64::from(QUERY_SAMPLE));
        let k = &dev.kernels;
        let out = self.out.at_least(dev, 8 * (ks + qs))?;
        let jobs = self.jobs.at_least(dev, 16)?;
        let items = self.items.at_least(dev, 16)?;
        self.params.clear();
        let mut stage = Stage::new(dev);
        for (keys, n, len, to) in [(&self.stored, s, ks, 0), (&self.queries, q, qs, ks)] {
            if len == 0 {
                continue;
            }
            let p = [len as u32, (n / len) as u32, 0, to as u32];
            let buffers = [&jobs, &items, keys.get(), &out];
            stage.run(&mut self.params, &k.sample, &p, &buffers, len.div_ceil(256));
        }
        stage.read(&out, 0, 2 * (ks + qs));
        let read = stage.submit(&mut self.params, &mut self.staging)?;
        let keys: Vec<u64> = read[0]
            .chunks_exact(2)
            .map(|w| (u64::from(w[0]) | u64::from(w[1]) << 32) & live)
            .collect();
        let (stored, queries) = (&keys[..ks as usize], &keys[ks as usize..]);
        // Leaves of a block, unless the blocks of that many leaves would not fit one binding.
        let room = Slot::max_blocks(dev).saturating_sub(s.div_ceil(512));
        let mut leaf_keys = LEAF_KEYS;
        loop {
            let (mut k, mut q) = (stored.to_vec(), queries.to_vec());
            let tree = Tree::build(&mut k, &mut q, s, leaf_keys);
            if u64::from(tree.leaves) <= room || tree.leaves <= 1 {
                return Ok(tree);
            }
            leaf_keys *= 2.0;
        }
    }

    /// Uploads the fill's description for `s` stored keys and `q` queries, with a tree of
    /// `nodes` nodes and `leaves` leaves.
    fn upload_fill(
        &mut self,
        dev: &Device,
        fill: Fill,
        (s, q): (u64, u64),
        (nodes, leaves): (u64, u64),
    ) -> Result<(), String> {
        // The block count sums each invocation's weighted hits in u32 (count.wgsl).
        if let Some(w) = fill
            .stored_w
            .iter()
            .chain(&fill.query_w)
            .find(|&&w| w > 255)
        {
            return Err(format!(
                "a class weight of {w} is more than the GPU count takes (255)"
            ));
        }
        let mut words = vec![0, s as u32, 0, q as u32, 0, 0, leaves as u32, nodes as u32];
        words.extend([fill.live as u32, (fill.live >> 32) as u32, 0, 0]);
        words.extend(fill.stored_w);
        words.extend(fill.query_w);
        let buffer = self.fills.at_least(dev, 4 * words.len() as u64)?;
        super::join::write_u32(&dev.queue, &buffer, &words);
        Ok(())
    }

    /// Walks every stored key to its leaf, groups them by leaf, and builds the blocks.
    fn sieve(
        &mut self,
        dev: &Device,
        tree: &Tree,
        fill: Fill,
        (s, r): (u64, Regions),
    ) -> Result<(), String> {
        let nodes: Vec<u32> = tree.nodes.iter().flatten().copied().collect();
        let tree_buf = self.tree.at_least(dev, 4 * nodes.len() as u64)?;
        super::join::write_u32(&dev.queue, &tree_buf, &nodes);
        self.upload_fill(dev, fill, (s, 0), shape(tree))?;
        let scan_buf = self.scan.at_least(dev, 4 * r.end)?;
        let leaf_of = self.leaf_of.at_least(dev, 4 * s)?;
        let sorted = self.sorted.at_least(dev, 8 * s)?;
        let blocks = self.blocks.at_least(dev, 16 * r.blocks)?;
        let tables = self.tables.at_least(dev, 4 * TABLE_WORDS * r.blocks)?;
        let info = self.info.at_least(dev, 16 * BLOCK_INFO * r.blocks)?;
        let stats = self.stats.at_least(dev, 4 * STATS_WORDS)?;
        let (fills, keys) = (self.fills.get().clone(), self.stored.get().clone());
        let k = &dev.kernels;
        let p = [
            s,
            r.leaves,
            1,
            r.blocks,
            r.leaf_keys,
            r.leaf_cursor,
            r.leaf_blocks,
            0,
        ]
        .map(|x| x as u32);
        let sieve_buffers = [
            &fills, &tree_buf, &keys, &leaf_of, &scan_buf, &sorted, &blocks,
        ];
        self.params.clear();
        let mut stage = Stage::new(dev);
        stage.clear(&stats, 0, STATS_WORDS);
        stage.clear(&scan_buf, 0, r.block_queries);
        stage.run(
            &mut self.params,
            &k.classify,
            &p,
            &sieve_buffers,
            s.div_ceil(256),
        );
        scan(
            &mut stage,
            &mut self.params,
            &scan_buf,
            (r.leaf_keys, r.leaves + 1),
            r.scratch,
        );
        stage.run(
            &mut self.params,
            &k.scatter,
            &p,
            &sieve_buffers,
            s.div_ceil(256),
        );
        stage.run(
            &mut self.params,
            &k.count_blocks,
            &p,
            &sieve_buffers,
            r.leaves.div_ceil(256),
        );
        scan(
            &mut stage,
            &mut self.params,
            &scan_buf,
            (r.leaf_blocks, r.leaves + 1),
            r.scratch,
        );
        stage.run(
            &mut self.params,
            &k.describe_blocks,
            &p,
            &sieve_buffers,
            r.leaves.div_ceil(256),
        );
        let t = [r.blocks, 1, r.leaf_blocks, r.leaves].map(|x| x as u32);
        let table_buffers = [&fills, &sorted, &blocks, &scan_buf, &tables, &info, &stats];
        stage.run(&mut self.params, &k.tables, &t, &table_buffers, r.blocks);
        stage.submit(&mut self.params, &mut self.staging)?;
        Ok(())
    }

    /// Routes and counts the queries `first..first + len` of the fill; halves the range
    /// where its routes would not fit one binding.
    fn route_and_count(
        &mut self,
        dev: &Device,
        r: Regions,
        (first, len): (u64, u64),
    ) -> Result<Counted, String> {
        let k = &dev.kernels;
        let scan_buf = self.scan.get().clone();
        let routes = self.routes.at_least(dev, 16)?;
        let (fills, tree, queries, info) = (
            self.fills.get().clone(),
            self.tree.get().clone(),
            self.queries.get().clone(),
            self.info.get().clone(),
        );
        let stats = self.stats.get().clone();
        let groups = len.div_ceil(ROUTE_QUERIES_PER_GROUP);
        let p = [
            len,
            first,
            1,
            r.leaf_blocks,
            r.block_queries,
            r.block_cursor,
            r.tests,
            0,
        ]
        .map(|x| x as u32);
        self.params.clear();
        let mut stage = Stage::new(dev);
        stage.clear(&scan_buf, r.block_queries, 2 * r.blocks + 1);
        let route_buffers = [&fills, &tree, &queries, &info, &scan_buf, &routes, &stats];
        stage.run(
            &mut self.params,
            &k.count_routes,
            &p,
            &route_buffers,
            groups,
        );
        scan(
            &mut stage,
            &mut self.params,
            &scan_buf,
            (r.block_queries, r.blocks + 1),
            r.scratch,
        );
        stage.read(&scan_buf, r.block_queries + r.blocks, 1);
        stage.read(&scan_buf, r.leaf_blocks + r.leaves, 1);
        stage.read(&scan_buf, r.tests, groups);
        let read = stage.submit(&mut self.params, &mut self.staging)?;
        let (total, blocks) = (u64::from(read[0][0]), u64::from(read[1][0]));
        let tests: u64 = read[2].iter().map(|&t| u64::from(t)).sum();
        let max_routes = dev.limits.max_storage_buffer_binding_size / 8;
        if total > max_routes && len > 1 {
            let half = len / 2;
            let a = self.route_and_count(dev, r, (first, half))?;
            let b = self.route_and_count(dev, r, (first + half, len - half))?;
            return Ok(Counted {
                weighted: a.weighted + b.weighted,
                hits: a.hits + b.hits,
                routes: a.routes + b.routes,
                tests: a.tests + b.tests + tests,
                blocks,
                stats: later(a.stats, b.stats),
            });
        }
        let (weighted, hits, stats) = self.count(dev, r, (first, len), (total, blocks))?;
        Ok(Counted {
            weighted,
            hits,
            routes: total,
            tests,
            blocks,
            stats,
        })
    }

    /// Writes the routes counted by [`Slot::route_and_count`] and counts them; returns the
    /// weighted and plain counts, and the work counters since the fill began.
    fn count(
        &mut self,
        dev: &Device,
        r: Regions,
        (first, len): (u64, u64),
        (total, blocks): (u64, u64),
    ) -> Result<(u128, u128, Stats), String> {
        let k = &dev.kernels;
        let routes = self.routes.at_least(dev, 8 * total)?;
        let groups = total.div_ceil(ROUTES_PER_GROUP);
        let sums = self.sums.at_least(dev, 16 * groups)?;
        let scan_buf = self.scan.get().clone();
        let (fills, tree, queries) = (
            self.fills.get().clone(),
            self.tree.get().clone(),
            self.queries.get().clone(),
        );
        let (info, tables) = (self.info.get().clone(), self.tables.get().clone());
        let stats = self.stats.get().clone();
        // The count kernel runs without bounds checks in release builds: what it reads
        // must be where these sizes say.
        assert!(
            blocks <= r.blocks,
            "{blocks} blocks in room for {}",
            r.blocks
        );
        assert!(routes.size() >= 8 * total && tables.size() >= 4 * TABLE_WORDS * r.blocks);
        assert!(info.size() >= 16 * BLOCK_INFO * r.blocks && sums.size() >= 16 * groups);
        let p = [
            len,
            first,
            1,
            r.leaf_blocks,
            r.block_queries,
            r.block_cursor,
            r.tests,
            0,
        ]
        .map(|x| x as u32);
        self.params.clear();
        let mut stage = Stage::new(dev);
        let route_buffers = [&fills, &tree, &queries, &info, &scan_buf, &routes, &stats];
        stage.run(
            &mut self.params,
            &k.write_routes,
            &p,
            &route_buffers,
            len.div_ceil(ROUTE_QUERIES_PER_GROUP),
        );
        let c = [total, r.blocks, r.block_queries, r.leaf_blocks + r.leaves].map(|x| x as u32);
        let count_buffers = [&fills, &tables, &info, &scan_buf, &routes, &sums];
        stage.run_timed(&mut self.params, &k.count, &c, &count_buffers, groups);
        stage.read(&sums, 0, 4 * groups);
        stage.read(&stats, 0, STATS_WORDS);
        let read = stage.submit(&mut self.params, &mut self.staging)?;
        let (weighted, hits) = add_sums(&read[0]);
        Ok((weighted, hits, stats_of(&read[1])))
    }

    /// Even N: the tied pairs of the join, which weigh half their class's factor.
    pub(super) fn ties(
        &mut self,
        dev: &Device,
        (join, plan, offsets): (&Join<'_, '_>, &Plan, &[u32]),
        work: &mut Work,
        tally: &mut Tally,
    ) -> Result<(), String> {
        let Some((marks, below)) = join.shape.ties else {
            return Ok(());
        };
        let west = u64::from(offsets[plan.tied_east] - offsets[plan.tied.start]);
        let east = u64::from(offsets[plan.tied.end] - offsets[plan.tied_east]);
        if west == 0 || east == 0 {
            return Ok(());
        }
        let target = self.ties.at_least(dev, 8 * (west + east))?;
        self.write_keys(dev, (plan, offsets), plan.tied.clone(), &target)?;
        let west_groups = west.div_ceil(256);
        let groups = west_groups * east.div_ceil(TIE_EAST);
        let sums = self.sums.at_least(dev, 16 * groups)?;
        let split = |x: u64| [x as u32, (x >> 32) as u32];
        let mut p = vec![west as u32, (west + east) as u32, west_groups as u32, 0];
        for m in [marks[0], marks[1], marks[2], marks[3], below, 0] {
            p.extend(split(m));
        }
        let f = join.factors;
        p.extend([f[0] / 2, f[1] / 2, f[2] / 2, 0].map(|x| x as u32));
        self.params.clear();
        let mut stage = Stage::new(dev);
        stage.run(
            &mut self.params,
            &dev.kernels.ties,
            &p,
            &[&target, &sums],
            groups,
        );
        stage.read(&sums, 0, 4 * groups);
        let read = stage.submit(&mut self.params, &mut self.staging)?;
        let (weighted, hits) = add_sums(&read[0]);
        tally.count += weighted;
        work.hits += u64::try_from(hits).unwrap_or(u64::MAX);
        work.direct_pairs += west * east;
        work.keys_built += west + east;
        Ok(())
    }
}

#[cfg(test)]
impl Slot {
    /// The weighted and unweighted counts of (stored, query) pairs with no common live
    /// bit, through the sieve, routes and count alone (keys given, not made by the half
    /// join), and the kernels' work counters: for testing the kernels on keys of any shape.
    pub(super) fn count_keys(
        &mut self,
        dev: &Device,
        (stored, queries): (&[u64], &[u64]),
        fill: Fill,
    ) -> Result<(u128, u128, Stats), String> {
        let split = |keys: &[u64]| -> Vec<u32> {
            keys.iter()
                .flat_map(|&k| [k as u32, (k >> 32) as u32])
                .collect()
        };
        let (s, q) = (stored.len() as u64, queries.len() as u64);
        let sbuf = self.stored.at_least(dev, 8 * s)?;
        super::join::write_u32(&dev.queue, &sbuf, &split(stored));
        let qbuf = self.queries.at_least(dev, 8 * q)?;
        super::join::write_u32(&dev.queue, &qbuf, &split(queries));
        let tree = self.tree_for(dev, fill.live, s, q)?;
        let leaves = u64::from(tree.leaves);
        let regions = Regions::new(
            leaves,
            s.div_ceil(512) + leaves,
            q.div_ceil(ROUTE_QUERIES_PER_GROUP),
        );
        self.sieve(dev, &tree, fill, (s, regions))?;
        self.upload_fill(dev, fill, (s, q), shape(&tree))?;
        let c = self.route_and_count(dev, regions, (0, q))?;
        Ok((c.weighted, c.hits, c.stats))
    }
}
