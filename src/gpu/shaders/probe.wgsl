// One step of the dispatch probe (`src/gpu/probe.rs`): a single invocation adds one to a
// word of a buffer it reads and writes. Each dispatch so depends on the one before it (wgpu
// puts a barrier between them), as the stages of a batch do, and the word ends up counting
// the dispatches that ran.

@group(0) @binding(0) var<storage, read_write> steps: array<u32>;

@compute @workgroup_size(1)
fn step() {
    steps[0] = steps[0] + 1u;
}
