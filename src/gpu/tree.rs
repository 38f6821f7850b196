//! The sieve's tree, chosen on the host from a sample of a fill's stored keys and queries.
//!
//! As in the CPU engine's trie, each node splits its keys on one bit: the child whose keys
//! have the bit is met only by the queries without it, the other child by all. A node picks
//! the bit that rules out the most pairs there, (sampled keys with it) × (sampled queries
//! with it that reach the node), and a node whose share of the keys is expected to fit one
//! block is a leaf. Only the tree's shape comes from the sample: every stored key then
//! walks it on the GPU, so a leaf may hold more or fewer keys than expected (it is cut
//! into as many blocks as it needs), and each block is still tested on every key bit.

/// A leaf node's tag in its first word (the rest is the leaf's number).
pub(crate) const LEAF: u32 = 0x8000_0000;

/// Keys a leaf is aimed at: one block.
pub(crate) const LEAF_KEYS: f64 = 512.0;

/// A fill's tree: nodes `[bit, child without it, child with it, 0]`, or `[LEAF | leaf, 0,
/// 0, 0]`, in preorder: each split is followed by the subtree with its bit, then the one
/// without it. A walk that may enter the first steps to the next node, else jumps to the
/// second, and goes on with the next node after a leaf: no stack (route.wgsl).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Tree {
    pub(crate) nodes: Vec<[u32; 4]>,
    pub(crate) leaves: u32,
}

impl Tree {
    /// The tree for `total` stored keys, from a sample of them (`keys`) and of the queries
    /// (`queries`), both masked to the bits that count (reordered in place), with leaves
    /// aimed at `leaf_keys` keys.
    pub(crate) fn build(keys: &mut [u64], queries: &mut [u64], total: u64, leaf_keys: f64) -> Tree {
        let mut tree = Tree::default();
        let scale = total as f64 / keys.len().max(1) as f64 * LEAF_KEYS / leaf_keys;
        tree.node(keys, queries, 0, scale);
        tree
    }

    /// Builds the node of `keys` reached by `queries`, with the bits `used` above it (so
    /// at most 64 levels); returns its index.
    fn node(&mut self, keys: &mut [u64], queries: &mut [u64], used: u64, scale: f64) -> u32 {
        let at = self.nodes.len() as u32;
        self.nodes.push([0; 4]);
        let bit = if keys.len() as f64 * scale <= LEAF_KEYS {
            None
        } else {
            best_bit(keys, queries, used)
        };
        let Some(p) = bit else {
            self.nodes[at as usize] = [LEAF | self.leaves, 0, 0, 0];
            self.leaves += 1;
            return at;
        };
        let mask = 1u64 << p;
        let mid = partition(keys, mask);
        let (without, with) = keys.split_at_mut(mid);
        let open = partition(queries, mask);
        let one = self.node(with, &mut queries[..open], used | mask, scale);
        debug_assert_eq!(one, at + 1, "preorder");
        let zero = self.node(without, queries, used | mask, scale);
        self.nodes[at as usize] = [p, zero, one, 0];
        at
    }
}

/// The bit, not in `used`, that some but not all `keys` have, with the most (keys with it)
/// × (queries with it); none where no query has any of them.
fn best_bit(keys: &[u64], queries: &[u64], used: u64) -> Option<u32> {
    let (k, q) = (bit_counts(keys), bit_counts(queries));
    (0..64u32)
        .filter(|&p| {
            used >> p & 1 == 0 && k[p as usize] > 0 && (k[p as usize] as usize) < keys.len()
        })
        .map(|p| {
            (
                u64::from(k[p as usize]) * u64::from(q[p as usize]),
                std::cmp::Reverse(p),
            )
        })
        .filter(|&(score, _)| score > 0)
        .max()
        .map(|(_, std::cmp::Reverse(p))| p)
}

/// How many of `keys` have each bit.
fn bit_counts(keys: &[u64]) -> [u32; 64] {
    let mut counts = [0u32; 64];
    for &k in keys {
        let mut bits = k;
        while bits != 0 {
            counts[bits.trailing_zeros() as usize] += 1;
            bits &= bits - 1;
        }
    }
    counts
}

/// Moves the keys without `mask` to the front; returns how many there are.
fn partition(keys: &mut [u64], mask: u64) -> usize {
    let mut front = 0;
    for i in 0..keys.len() {
        if keys[i] & mask == 0 {
            keys.swap(front, i);
            front += 1;
        }
    }
    front
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The leaf a key walks to.
    fn leaf_of(tree: &Tree, key: u64) -> u32 {
        let mut node = tree.nodes[0];
        while node[0] & LEAF == 0 {
            node = tree.nodes[node[if key >> node[0] & 1 == 1 { 2 } else { 1 }] as usize];
        }
        node[0] & !LEAF
    }

    #[test]
    fn a_small_fill_is_one_leaf() {
        let mut keys = vec![1, 2, 3];
        let tree = Tree::build(&mut keys, &mut [1, 4], 300, LEAF_KEYS);
        assert_eq!(tree.nodes, vec![[LEAF, 0, 0, 0]]);
        assert_eq!(tree.leaves, 1);
    }

    #[test]
    fn leaves_split_the_keys_on_bits_the_queries_have() {
        let mut rng = fastrand::Rng::with_seed(3);
        let mut keys: Vec<u64> = (0..4096).map(|_| rng.u64(..) & rng.u64(..)).collect();
        let mut queries: Vec<u64> = (0..512).map(|_| rng.u64(..) & rng.u64(..)).collect();
        let all = keys.clone();
        let tree = Tree::build(&mut keys, &mut queries, 4096, LEAF_KEYS);
        assert!(tree.leaves >= 8, "{} leaves", tree.leaves);
        // Every key reaches exactly one leaf, and no leaf is far past a block.
        let mut sizes = vec![0usize; tree.leaves as usize];
        for &k in &all {
            sizes[leaf_of(&tree, k) as usize] += 1;
        }
        assert!(sizes.iter().all(|&s| s > 0 && s <= 512), "{sizes:?}");
        // Both children of every split exist, in preorder: the child with the bit next.
        for (at, n) in tree.nodes.iter().enumerate() {
            if n[0] & LEAF == 0 {
                assert_eq!(n[2] as usize, at + 1);
                assert!(n[1] as usize > at + 1);
            }
        }
    }
}
