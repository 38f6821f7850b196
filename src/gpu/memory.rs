//! How much of a GPU's memory a count's batches take, from what its driver says it has
//! ([`crate::gpu::Adapter::memory`]).

use crate::gpu::feeder::SLOTS;

/// The share of a GPU's own memory a count takes for its batch slots and resident words:
/// the rest is for the driver, the display and anything else the GPU runs.
const SHARE: f64 = 0.5;

/// Slots are whole multiples of this.
const GRAIN: u64 = 256 << 20;

/// The largest slot a GPU's memory gives: past it a batch holds more tasks than a count's
/// workers hand over while one runs (N = 21 and 22 take some 30 MB a task).
const MOST_SLOT: u64 = 16 << 30;

/// The largest resident words a GPU's memory gives.
const MOST_RESIDENT: u64 = 2 << 30;

/// The memory of an H100 (80 GB), as its driver states it: the GPU the span model prices.
pub(crate) const H100_BYTES: u64 = 81_559 << 20;

/// A batch slot's bytes and the resident words' bytes on a GPU of its own with `memory`
/// bytes: half of it, an eighth of that (at most 2 GiB) for the resident words, the rest in
/// the feeder's slots, whole multiples of 256 MiB, from 256 MiB to 16 GiB. An H100 (80 GB) gets
/// slots of 12.5 GiB, an H200 16 GiB, a GPU of 24 GB 3.5 GiB, one of 8 GB 1 GiB.
pub(crate) fn sizes_for(memory: u64) -> (u64, u64) {
    let budget = (memory as f64 * SHARE) as u64;
    let resident = (budget / 8).min(MOST_RESIDENT);
    let slot = (budget - resident) / SLOTS as u64 / GRAIN * GRAIN;
    (slot.clamp(GRAIN, MOST_SLOT), resident)
}

/// What `make` makes of a slot's and the resident words' bytes, from `sizes` on, both halved
/// while it fails for want of memory (its error's flag), down to slots of 256 MiB; else its
/// first other error, or the last.
pub(crate) fn halving<T, E>(
    sizes: (u64, u64),
    mut make: impl FnMut(u64, u64) -> Result<T, (E, bool)>,
) -> Result<T, E> {
    let (mut slot, mut resident) = sizes;
    loop {
        match make(slot, resident) {
            Ok(made) => return Ok(made),
            Err((_, true)) if slot / 2 >= GRAIN => {
                slot /= 2;
                resident /= 2;
            }
            Err((e, _)) => return Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each GPU's slots and resident words fit half its memory, in whole grains, within the
    /// bounds, and a larger GPU never gets smaller slots.
    #[test]
    fn slots_take_half_a_gpus_memory_in_grains_within_bounds() {
        const GIB: u64 = 1 << 30;
        assert_eq!(sizes_for(H100_BYTES), (12 * GIB + GIB / 2, 2 * GIB));
        assert_eq!(sizes_for(143_771 << 20).0, 16 * GIB);
        assert_eq!(sizes_for(24 * GIB), (7 * GIB / 2, 3 * GIB / 2));
        assert_eq!(sizes_for(8 * GIB), (GIB, GIB / 2));
        assert_eq!(sizes_for(GIB).0, GRAIN);
        let mut last = 0;
        for gib in 1..=256 {
            let memory = gib * GIB;
            let (slot, resident) = sizes_for(memory);
            assert_eq!(slot % GRAIN, 0);
            assert!((GRAIN..=MOST_SLOT).contains(&slot) && resident <= MOST_RESIDENT);
            if gib >= 2 {
                assert!(SLOTS as u64 * slot + resident <= memory / 2, "{gib} GiB");
            }
            assert!(slot >= last, "{gib} GiB");
            last = slot;
        }
    }

    /// Out of memory, slots are halved down to 256 MiB, the resident words with them; any
    /// other error ends the ladder at once.
    #[test]
    fn a_gpu_out_of_memory_gets_half_the_slots_down_to_a_grain() {
        const GIB: u64 = 1 << 30;
        let mut tried = Vec::new();
        let made = halving((4 * GIB, 2 * GIB), |slot, resident| {
            tried.push((slot, resident));
            if slot > GIB {
                Err(("out of memory", true))
            } else {
                Ok(slot)
            }
        });
        assert_eq!(made, Ok(GIB));
        assert_eq!(tried, [(4 * GIB, 2 * GIB), (2 * GIB, GIB), (GIB, GIB / 2)]);
        let mut slots = Vec::new();
        let never = halving((GIB, GIB / 8), |slot, _| -> Result<(), _> {
            slots.push(slot);
            Err(("out of memory", true))
        });
        assert_eq!(never, Err("out of memory"));
        assert_eq!(slots, [GIB, GIB / 2, GRAIN]);
        let mut calls = 0;
        let invalid = halving((4 * GIB, GIB), |_, _| -> Result<(), _> {
            calls += 1;
            Err(("invalid", false))
        });
        assert_eq!((invalid, calls), (Err("invalid"), 1));
    }
}
