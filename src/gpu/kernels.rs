//! The compute kernels: each WGSL entry point as a pipeline with an explicit layout (a
//! uniform block of parameters at a dynamic offset, then storage buffers), and how they
//! are dispatched.

/// Bytes of one dispatch's parameters (the largest parameter block, rounded to the
/// uniform offset alignment every device accepts).
pub(crate) const PARAMS_BYTES: u64 = 256;

/// Workgroups per row of a dispatch (`ROW` in common.wgsl).
const ROW: u32 = 32768;

/// How a kernel reads a storage binding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Access {
    Read,
    Write,
}

use Access::{Read, Write};

use super::shader::source;

/// One compiled entry point.
pub(crate) struct Kernel {
    pipeline: wgpu::ComputePipeline,
    layout: wgpu::BindGroupLayout,
    label: &'static str,
}

/// Every kernel the GPU joins run.
pub(crate) struct Kernels {
    pub(crate) scan_reduce: Kernel,
    pub(crate) scan_down: Kernel,
    pub(crate) scan_single: Kernel,
    pub(crate) gen_count: Kernel,
    pub(crate) gen_write: Kernel,
    pub(crate) job_offsets: Kernel,
    pub(crate) sample: Kernel,
    pub(crate) classify: Kernel,
    pub(crate) scatter: Kernel,
    pub(crate) count_blocks: Kernel,
    pub(crate) describe_blocks: Kernel,
    pub(crate) tables: Kernel,
    pub(crate) count_routes: Kernel,
    pub(crate) write_routes: Kernel,
    pub(crate) count: Kernel,
    pub(crate) ties: Kernel,
}

impl Kernels {
    /// Compiles every kernel for `device`.
    pub(crate) fn new(device: &wgpu::Device) -> Self {
        let gen_access = [Read, Read, Write, Write];
        let gather_access = [Read, Read, Read, Write];
        let sieve_access = [Read, Read, Read, Write, Write, Write, Write];
        // The kernels that keep work counters have their binding last.
        let tables_access = [Read, Read, Read, Read, Write, Write, Write];
        let route_access = [Read, Read, Read, Read, Write, Write, Write];
        let stats_at = |access: &[Access]| Some(access.len() as u32);
        let m = |file: &'static str, stats_at: Option<u32>, trusted: bool| {
            module(device, file, source(file, stats_at), trusted)
        };
        let scan = m("scan.wgsl", None, false);
        let gen = m("gen.wgsl", None, false);
        let gather = m("gather.wgsl", None, false);
        let sieve = m("sieve.wgsl", None, false);
        let tables = m("tables.wgsl", stats_at(&tables_access), false);
        let route = m("route.wgsl", stats_at(&route_access), false);
        let count = m("count.wgsl", None, true);
        let ties = m("ties.wgsl", None, false);
        let k = |m: &wgpu::ShaderModule, entry: &'static str, access: &[Access]| {
            Kernel::new(device, m, entry, access)
        };
        Kernels {
            scan_reduce: k(&scan, "reduce", &[Write]),
            scan_down: k(&scan, "down", &[Write]),
            scan_single: k(&scan, "single", &[Write]),
            gen_count: k(&gen, "count_pairs", &gen_access),
            gen_write: k(&gen, "write_pairs", &gen_access),
            job_offsets: k(&gather, "job_offsets", &gather_access),
            sample: k(&gather, "sample", &gather_access),
            classify: k(&sieve, "classify", &sieve_access),
            scatter: k(&sieve, "scatter", &sieve_access),
            count_blocks: k(&sieve, "count_blocks", &sieve_access),
            describe_blocks: k(&sieve, "describe_blocks", &sieve_access),
            tables: k(&tables, "build", &tables_access),
            count_routes: k(&route, "count_routes", &route_access),
            write_routes: k(&route, "write_routes", &route_access),
            count: k(&count, "count", &[Read, Read, Read, Read, Read, Write]),
            ties: k(&ties, "ties", &[Read, Write]),
        }
    }
}

/// A shader module. With `trusted` in an optimised build, wgpu's bounds checks are left
/// out: only the block count, whose every index is in range by construction (workgroup
/// memory indices by the chunk and table sizes, buffer indices by the sizes the host
/// checks before each dispatch), and which is most of a count's time.
fn module(
    device: &wgpu::Device,
    label: &'static str,
    source: String,
    trusted: bool,
) -> wgpu::ShaderModule {
    let desc = wgpu::ShaderModuleDescriptor {
        label: Some(label),
        source: wgpu::ShaderSource::Wgsl(source.into()),
    };
    if trusted && !cfg!(debug_assertions) {
        // SAFETY: the count kernel indexes workgroup memory below its declared sizes (a row
        // pair of 1,024 words per two chunks, chunks ≤ 12, so below 6 · 1,024; the final
        // sums in its first 1,024 words; a stage's routes below 256, by the invocation's
        // index or the stage's length), reads a block's tables and info only for blocks
        // below the count `Slot::count` checks against the buffers' sizes, and routes below
        // the total it checks the same way; tests build it with the checks on.
        unsafe { device.create_shader_module_trusted(desc, wgpu::ShaderRuntimeChecks::unchecked()) }
    } else {
        device.create_shader_module(desc)
    }
}

impl Kernel {
    fn new(
        device: &wgpu::Device,
        module: &wgpu::ShaderModule,
        entry: &'static str,
        access: &[Access],
    ) -> Self {
        let params = wgpu::BindGroupLayoutEntry {
            binding: 0,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer {
                ty: wgpu::BufferBindingType::Uniform,
                has_dynamic_offset: true,
                min_binding_size: None,
            },
            count: None,
        };
        let storage = access
            .iter()
            .enumerate()
            .map(|(i, a)| wgpu::BindGroupLayoutEntry {
                binding: i as u32 + 1,
                visibility: wgpu::ShaderStages::COMPUTE,
                ty: wgpu::BindingType::Buffer {
                    ty: wgpu::BufferBindingType::Storage {
                        read_only: *a == Read,
                    },
                    has_dynamic_offset: false,
                    min_binding_size: None,
                },
                count: None,
            });
        let entries: Vec<_> = std::iter::once(params).chain(storage).collect();
        let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some(entry),
            entries: &entries,
        });
        let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some(entry),
            bind_group_layouts: &[Some(&layout)],
            immediate_size: 0,
        });
        let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some(entry),
            layout: Some(&pipeline_layout),
            module,
            entry_point: Some(entry),
            compilation_options: wgpu::PipelineCompilationOptions {
                zero_initialize_workgroup_memory: false,
                ..Default::default()
            },
            cache: None,
        });
        Kernel {
            pipeline,
            layout,
            label: entry,
        }
    }

    /// Records a dispatch of `groups` workgroups (in rows of [`ROW`]) on `buffers`, with the
    /// parameters at `params_at` of `params`.
    pub(crate) fn dispatch(
        &self,
        device: &wgpu::Device,
        pass: &mut wgpu::ComputePass<'_>,
        (params, params_at): (&wgpu::Buffer, u32),
        buffers: &[&wgpu::Buffer],
        groups: u32,
    ) {
        if groups == 0 {
            return;
        }
        let uniform = wgpu::BufferBinding {
            buffer: params,
            offset: 0,
            size: wgpu::BufferSize::new(PARAMS_BYTES),
        };
        let entries: Vec<_> = std::iter::once(wgpu::BindGroupEntry {
            binding: 0,
            resource: wgpu::BindingResource::Buffer(uniform),
        })
        .chain(
            buffers
                .iter()
                .enumerate()
                .map(|(i, b)| wgpu::BindGroupEntry {
                    binding: i as u32 + 1,
                    resource: b.as_entire_binding(),
                }),
        )
        .collect();
        let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some(self.label),
            layout: &self.layout,
            entries: &entries,
        });
        pass.set_pipeline(&self.pipeline);
        pass.set_bind_group(0, &group, &[params_at]);
        let (x, y) = if groups <= ROW {
            (groups, 1)
        } else {
            (ROW, groups.div_ceil(ROW))
        };
        pass.dispatch_workgroups(x, y, 1);
    }
}
