//! The dispatches of an in-place exclusive scan (scan.wgsl): one workgroup's scan for a
//! short range, else each segment's sum, the sums scanned the same way, and each segment
//! scanned from its sum.

use super::buffers::Params;
use crate::gpu::kernels::{Kernel, Kernels};
use crate::gpu::layout::{ScanParams, SCAN_SEGMENT};

/// The kernel of one step of an in-place scan (scan.wgsl).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ScanKernel {
    /// Each segment's sum, written after the values.
    Reduce,
    /// Each segment scanned, from its scanned sum.
    Down,
    /// A range of one segment, scanned alone.
    Single,
}

/// One dispatch of an in-place scan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct ScanStep {
    kernel: ScanKernel,
    /// Where its parameters lie among the batch's blocks.
    params_at: u32,
    groups: u32,
}

/// The dispatches of an exclusive scan of `len` words of `scan` from word `off`, in place
/// (segment sums after them), with their parameters pushed to `params`.
pub(super) fn scan_steps(params: &mut Params, off: u32, len: u32) -> Vec<ScanStep> {
    let block = |p: &mut Params, sums: u32| {
        let scan = ScanParams {
            off,
            len,
            sums,
            pad: 0,
        };
        p.push(bytemuck::bytes_of(&scan))
    };
    let step = |kernel, params_at, groups| ScanStep {
        kernel,
        params_at,
        groups,
    };
    if len <= SCAN_SEGMENT {
        return vec![step(ScanKernel::Single, block(params, 0), 1)];
    }
    let segments = len.div_ceil(SCAN_SEGMENT);
    let sums = off + len;
    let reduce = step(ScanKernel::Reduce, block(params, sums), segments);
    let down = step(ScanKernel::Down, block(params, sums), segments);
    let mut steps = vec![reduce];
    let inner = scan_steps(params, sums, segments);
    steps.extend(inner);
    steps.push(down);
    steps
}

/// Records the dispatches `steps` of a scan over `group` into `pass`; returns how many.
pub(super) fn run_scan(
    pass: &mut wgpu::ComputePass<'_>,
    k: &Kernels,
    group: &wgpu::BindGroup,
    steps: &[ScanStep],
) -> u64 {
    let mut recorded = 0;
    for step in steps {
        let kernel: &Kernel = match step.kernel {
            ScanKernel::Reduce => &k.scan_reduce,
            ScanKernel::Down => &k.scan_down,
            ScanKernel::Single => &k.scan_single,
        };
        recorded += kernel.dispatch(pass, group, step.params_at, step.groups);
    }
    recorded
}
