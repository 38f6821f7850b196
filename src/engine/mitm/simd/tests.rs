//! Each dispatched loop at every level this CPU has against the generic one, and the level
//! detection's pure parts.

use super::case::random_tables;
use super::*;

#[test]
fn every_block_count_level_equals_the_generic_loop() {
    let mut rng = fastrand::Rng::with_seed(18);
    for level in available_levels() {
        for chunks in 1..=13 {
            for blocks in [1, 2] {
                for queries in [0, 1, 7, 16, 33, 100] {
                    for ones in [false, true] {
                        let (tables, per, index, stride) =
                            random_tables(&mut rng, chunks, blocks, queries, ones);
                        let start = rng.usize(..=queries);
                        let range = start..rng.usize(start..=queries);
                        let want = kernels::count_blocks_generic(
                            &tables,
                            per,
                            &index,
                            stride,
                            range.clone(),
                        );
                        // SAFETY: two whole blocks at most; every offset is below `per`.
                        let got = unsafe {
                            count_blocks(level, &tables, per, &index, stride, range.clone())
                        };
                        let case = format!("{level:?} chunks {chunks} blocks {blocks}");
                        assert_eq!(got, want, "{case} range {range:?} ones {ones}");
                    }
                }
            }
        }
    }
}

#[test]
fn every_block_build_level_holds_the_portable_sets_up_to_key_order() {
    let mut rng = fastrand::Rng::with_seed(5);
    // Keys and queries live in the layout's bits, without its hole (as the sieves keep them).
    let holes = 1 << 7;
    let bits = ((1u64 << 34) - 1) & !holes;
    let layout = Layout::new(34, holes, 5);
    let mut random = || rng.u64(..) & rng.u64(..) & bits;
    for level in available_levels() {
        for len in [1, 5, 31, 32, 33, 63, 64, 65, 100, 447, 511, 512] {
            let keys: Vec<u64> = (0..len).map(|_| random()).collect();
            let mut got = vec![Lanes::ZERO; layout.per_block];
            let mut want = vec![Lanes::ZERO; layout.per_block];
            build_block(level, &keys, &layout, &mut got);
            kernels::build_block_generic(&keys, &layout, &mut want);
            let ones = |t: &Lanes| t.0.iter().map(|w| w.count_ones()).sum::<u32>();
            for (e, (g, w)) in got.iter().zip(&want).enumerate() {
                assert_eq!(ones(g), ones(w), "{level:?} len {len} entry {e}");
            }
            let queries: Vec<u64> = (0..64).map(|_| random()).collect();
            let mut index = Vec::new();
            let stride = index_all(Level::PORTABLE, &layout, &queries, &mut index);
            for (i, &q) in queries.iter().enumerate() {
                let naive = keys.iter().filter(|&&k| k & q == 0).count() as u64;
                let per = layout.per_block;
                let counted = kernels::count_blocks_generic(&got, per, &index, stride, i..i + 1);
                assert_eq!(counted, naive, "{level:?} len {len} query {i}");
            }
        }
    }
}

#[test]
fn pext_counts_as_slow_only_on_amd_before_zen_3() {
    // CPUID leaf 1 eax of an EPYC 7002 (Zen 2), 7003 (Zen 3), and a Xeon.
    assert_eq!(family(0x0083_0F10), 0x17);
    assert_eq!(family(0x00A0_0F11), 0x19);
    assert_eq!(family(0x0005_0657), 0x6);
    assert!(microcoded_pext(b"AuthenticAMD", 0x17));
    assert!(microcoded_pext(b"HygonGenuine", 0x18));
    assert!(!microcoded_pext(b"AuthenticAMD", 0x19));
    assert!(!microcoded_pext(b"AuthenticAMD", 0x1A));
    assert!(!microcoded_pext(b"GenuineIntel", 0x6));
}

#[test]
fn the_level_cap_parses_known_names_only() {
    assert_eq!(parse_cap("avx2"), Ok(Some("avx2")));
    assert_eq!(parse_cap(" AVX512bw "), Ok(Some("avx512bw")));
    assert_eq!(parse_cap(""), Ok(None));
    assert_eq!(parse_cap("sse2"), Err("sse2".to_string()));
    for name in LEVEL_NAMES {
        assert_eq!(parse_cap(name), Ok(Some(name)));
    }
}

#[test]
fn a_cap_never_raises_the_level_and_names_round_trip() {
    let best = best_up_to(None);
    for name in LEVEL_NAMES {
        let capped = best_up_to(Some(name));
        assert!(capped <= best);
        let rank = |n: &str| LEVEL_NAMES.iter().position(|&x| x == n);
        assert!(rank(capped.name()) <= rank(name), "{name} gave {capped:?}");
        assert!(available_levels().contains(&capped));
    }
    assert_eq!(best_up_to(Some("portable")), Level::PORTABLE);
}

#[test]
fn packing_keeps_exactly_the_masked_bits_in_order_at_every_level() {
    let mut rng = fastrand::Rng::with_seed(21);
    for level in available_levels() {
        for _ in 0..200 {
            let mask = rng.u64(..) & rng.u64(..);
            let keys: Vec<u64> = (0..rng.usize(0..40)).map(|_| rng.u64(..)).collect();
            let mut got = keys.clone();
            pack_bits(level, &mut got, mask);
            for (&k, &g) in keys.iter().zip(&got) {
                // Bit i of the packed key is the i-th lowest bit of the mask, read from k.
                let positions = (0..64).filter(|p| mask >> p & 1 == 1);
                let want = positions
                    .enumerate()
                    .fold(0u64, |acc, (i, p)| acc | (k >> p & 1) << i);
                assert_eq!(g, want, "{level:?} key {k:#x} mask {mask:#x}");
            }
        }
    }
}

#[test]
fn every_packed_count_level_equals_the_indexed_generic_count() {
    let mut rng = fastrand::Rng::with_seed(23);
    for level in available_levels() {
        for bits in [0, 1, 5, 6, 7, 12, 31, 36, 54, 60, 63, 64] {
            // `bits` mixed bits anywhere in the word, and a few common bits among the rest.
            let mut mixed = 0u64;
            while mixed.count_ones() < bits {
                mixed |= 1 << rng.u32(..64);
            }
            let common = !mixed & rng.u64(..) & rng.u64(..) & rng.u64(..);
            let leaf = LeafBits { mixed, common };
            let layout = Layout::packed(bits);
            for blocks in [1, 2] {
                let keys: Vec<u64> = (0..blocks * 512 - rng.usize(..200))
                    .map(|_| rng.u64(..) & rng.u64(..) & rng.u64(..))
                    .collect();
                let mut tables = vec![Lanes::ZERO; blocks * layout.per_block];
                for (block, table) in keys.chunks(512).zip(tables.chunks_mut(layout.per_block)) {
                    let block: Vec<u64> = block
                        .iter()
                        .map(|&k| kernels::pack_bits_generic(k, mixed))
                        .collect();
                    build_block(level, &block, &layout, table);
                }
                // Some queries with a common bit: the count skips them.
                let queries: Vec<u64> = (0..rng.usize(..70))
                    .map(|_| rng.u64(..) & rng.u64(..) & (rng.u64(..) | !common))
                    .collect();
                let kept: Vec<u64> = queries
                    .iter()
                    .filter(|&&q| q & common == 0)
                    .map(|&q| kernels::pack_bits_generic(q, mixed))
                    .collect();
                let mut index = Vec::new();
                let stride = index_all(Level::PORTABLE, &layout, &kept, &mut index);
                let want = kernels::count_blocks_generic(
                    &tables,
                    layout.per_block,
                    &index[..stride * layout.chunks()],
                    stride,
                    0..kept.len(),
                );
                let got = count_packed(level, &tables, layout.per_block, leaf, &queries);
                let label = format!("{level:?} bits {bits} blocks {blocks}");
                assert_eq!(got, (want, kept.len() as u64), "{label}");
            }
        }
    }
}

#[test]
fn the_packed_block_size_is_the_packed_layouts() {
    for bits in 0..=64 {
        assert_eq!(
            kernels::packed_per_block(bits),
            Layout::packed(bits).per_block,
            "{bits}"
        );
    }
}

#[test]
fn every_bit_count_level_equals_a_count_word_by_word() {
    let mut rng = fastrand::Rng::with_seed(8);
    for level in available_levels() {
        for len in [0, 1, 63, 64, 65, 200, 255, 256, 511, 2048] {
            let words: Vec<u64> = (0..len).map(|_| rng.u64(..) & rng.u64(..)).collect();
            for (step, clear) in [(1, 0), (3, 0xff00), (7, !0 << 40)] {
                let want: Vec<u32> = (0..64)
                    .map(|p| {
                        let set = words.iter().step_by(step).filter(|&&w| w >> p & 1 == 1);
                        set.filter(|_| clear >> p & 1 == 0).count() as u32
                    })
                    .collect();
                let got = bit_counts(level, &words, step, clear);
                assert_eq!(got.to_vec(), want, "{level:?}, {len} words, step {step}");
            }
        }
    }
}

/// A CPU without AVX-512 tests fewer levels, and every test above passes all the same: this
/// names in the test log the levels tested here and those that were not (written past the
/// harness's capture, so a passing run shows it too).
#[test]
fn the_levels_tested_on_this_cpu_are_named_in_the_log() {
    let here: Vec<&str> = available_levels().iter().map(|l| l.name()).collect();
    let missing: Vec<&str> = LEVEL_NAMES
        .iter()
        .filter(|l| !here.contains(l))
        .copied()
        .collect();
    let note = format!(
        "matcher levels tested on this CPU: {}; not tested here (the CPU lacks them): {}; \
         backtracking kernel steps: {} and portable\n",
        here.join(", "),
        if missing.is_empty() {
            "none".to_string()
        } else {
            missing.join(", ")
        },
        crate::engine::kernel::code_path()
    );
    std::io::Write::write_all(&mut std::io::stderr(), note.as_bytes()).unwrap();
    assert_eq!(here.first(), Some(&"portable"));
    assert_eq!(here.len() + missing.len(), LEVEL_NAMES.len());
}
