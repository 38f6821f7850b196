//! The compute kernels: each WGSL entry point as a pipeline with an explicit layout (a
//! uniform block of parameters at a dynamic offset, then storage buffers), and how they
//! are dispatched. Every module is the host's constants ([`super::layout::prelude`]), the
//! shared helpers and types, and its own file.

use super::layout::ROW;
use super::shader::source;

/// Bytes of one dispatch's parameters (the largest parameter block, rounded to the
/// uniform offset alignment every device accepts).
pub(crate) const PARAMS_BYTES: u64 = 256;

/// How a kernel reads a storage binding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Access {
    Read,
    Write,
}

use Access::{Read, Write};

/// One compiled entry point.
pub(crate) struct Kernel {
    pipeline: wgpu::ComputePipeline,
    pub(crate) layout: wgpu::BindGroupLayout,
    pub(crate) label: &'static str,
}

/// Every kernel of a batch.
pub(crate) struct Kernels {
    pub(crate) scan_reduce: Kernel,
    pub(crate) scan_down: Kernel,
    pub(crate) scan_single: Kernel,
    pub(crate) count_pairs: Kernel,
    pub(crate) write_pairs: Kernel,
    pub(crate) join_sizes: Kernel,
    pub(crate) job_dest: Kernel,
    pub(crate) tree_top: Kernel,
    pub(crate) wide_count: Kernel,
    pub(crate) wide_move: Kernel,
    pub(crate) tree_rest: Kernel,
    pub(crate) alloc_blocks: Kernel,
    pub(crate) place_blocks: Kernel,
    pub(crate) tables: Kernel,
    pub(crate) count_routes: Kernel,
    pub(crate) write_routes: Kernel,
    pub(crate) plan_routes: Kernel,
    pub(crate) count: Kernel,
    pub(crate) ties: Kernel,
}

/// The storage bindings (from binding 1) of each module's kernels, in binding order.
pub(crate) const GEN: &[Access] = &[Read, Read, Read, Read, Write, Write, Write, Write, Write];
pub(crate) const PLAN: &[Access] = &[Write, Read, Read, Write, Write, Read, Write, Read, Write];
pub(crate) const TREE: &[Access] = &[
    Read, Write, Write, Read, Write, Write, Write, Write, Write, Write,
];
pub(crate) const TABLES: &[Access] = &[Read, Read, Read, Read, Write, Write, Write];
pub(crate) const ROUTE: &[Access] = &[Write, Read, Read, Read, Read, Write, Write, Write];
pub(crate) const COUNT: &[Access] = &[Write, Read, Read, Read, Read, Read];
pub(crate) const TIES: &[Access] = &[Write, Read, Read, Read];
pub(crate) const SCAN: &[Access] = &[Write];

/// Every module, and the binding of its `results` (the join rows and work counters) where
/// its kernels add to them: binding 1, or for the half join, the tables and the tree the last.
pub(crate) const MODULES: [(&str, Option<u32>); 8] = [
    ("scan.wgsl", None),
    ("gen.wgsl", Some(GEN.len() as u32)),
    ("plan.wgsl", Some(1)),
    ("tree.wgsl", Some(TREE.len() as u32)),
    ("tables.wgsl", Some(TABLES.len() as u32)),
    ("route.wgsl", Some(1)),
    ("count.wgsl", Some(1)),
    ("ties.wgsl", Some(1)),
];

impl Kernels {
    /// Compiles every kernel for `device` (`software`: a CPU driver, whose block count
    /// checks its visits; shader.rs).
    pub(crate) fn new(device: &wgpu::Device, software: bool) -> Self {
        let m = |i: usize, trusted| {
            let (file, results_at) = MODULES[i];
            module(device, file, source(file, results_at, software), trusted)
        };
        let (scan, gen, plan, tree) = (m(0, false), m(1, false), m(2, false), m(3, false));
        let (tables, route, count, ties) = (m(4, false), m(5, false), m(6, true), m(7, false));
        // The kernels of one module share a layout, so that one bind group serves them all.
        let layout = |access: &[Access]| bind_layout(device, access);
        let (scan_l, gen_l, plan_l) = (layout(SCAN), layout(GEN), layout(PLAN));
        let (route_l, tree_l) = (layout(ROUTE), layout(TREE));
        let k = |module: &wgpu::ShaderModule, entry: &'static str, l: &wgpu::BindGroupLayout| {
            Kernel::new(device, module, entry, l)
        };
        Kernels {
            scan_reduce: k(&scan, "reduce", &scan_l),
            scan_down: k(&scan, "down", &scan_l),
            scan_single: k(&scan, "single", &scan_l),
            count_pairs: k(&gen, "count_pairs", &gen_l),
            write_pairs: k(&gen, "write_pairs", &gen_l),
            join_sizes: k(&plan, "join_sizes", &plan_l),
            job_dest: k(&plan, "job_dest", &plan_l),
            tree_top: k(&tree, "top", &tree_l),
            wide_count: k(&tree, "wide_count", &tree_l),
            wide_move: k(&tree, "wide_move", &tree_l),
            tree_rest: k(&tree, "rest", &tree_l),
            alloc_blocks: k(&plan, "alloc_blocks", &plan_l),
            place_blocks: k(&plan, "place_blocks", &plan_l),
            tables: k(&tables, "build", &layout(TABLES)),
            count_routes: k(&route, "count_routes", &route_l),
            write_routes: k(&route, "write_routes", &route_l),
            plan_routes: k(&plan, "plan_routes", &plan_l),
            count: k(&count, "count", &layout(COUNT)),
            ties: k(&ties, "ties", &layout(TIES)),
        }
    }
}

/// A shader module. With `trusted` in an optimised build, wgpu's bounds checks are left
/// out: only the block count, whose every index is in range by construction (workgroup
/// memory indices by the chunk and table sizes, buffer indices by the batch's capacities,
/// which its sizes never pass), and which is most of a count's time.
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
        // SAFETY: the count kernel indexes workgroup memory below its declared sizes (chunks
        // ≤ 12 of 512 words, class sets after them) and reads its buffers below the batch's
        // capacities: routes below `route_cap`, blocks below the blocks given out (at most
        // `block_cap`), whose tables and info the slot's buffers hold; tests build it with
        // the checks on.
        unsafe { device.create_shader_module_trusted(desc, wgpu::ShaderRuntimeChecks::unchecked()) }
    } else {
        device.create_shader_module(desc)
    }
}

/// The layout of a kernel's bindings: a uniform block of parameters at a dynamic offset,
/// then storage buffers read or written as `access` says.
fn bind_layout(device: &wgpu::Device, access: &[Access]) -> wgpu::BindGroupLayout {
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
    device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: None,
        entries: &entries,
    })
}

impl Kernel {
    fn new(
        device: &wgpu::Device,
        module: &wgpu::ShaderModule,
        entry: &'static str,
        layout: &wgpu::BindGroupLayout,
    ) -> Self {
        let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some(entry),
            bind_group_layouts: &[Some(layout)],
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
            layout: layout.clone(),
            label: entry,
        }
    }

    /// A bind group of this kernel over `params` (one block at a dynamic offset) and
    /// `buffers`, made once and kept: a batch slot's buffers never change.
    pub(crate) fn bind(
        &self,
        device: &wgpu::Device,
        params: &wgpu::Buffer,
        buffers: &[&wgpu::Buffer],
    ) -> wgpu::BindGroup {
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
        device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some(self.label),
            layout: &self.layout,
            entries: &entries,
        })
    }

    /// Records a dispatch of `groups` workgroups (in rows of [`ROW`]) with `group`, its
    /// parameters at `params_at`; returns the dependent steps that adds (0 for no
    /// workgroups: nothing is recorded).
    pub(crate) fn dispatch(
        &self,
        pass: &mut wgpu::ComputePass<'_>,
        group: &wgpu::BindGroup,
        params_at: u32,
        groups: u32,
    ) -> u64 {
        if groups == 0 {
            return 0;
        }
        pass.set_pipeline(&self.pipeline);
        pass.set_bind_group(0, group, &[params_at]);
        let (x, y) = if groups <= ROW {
            (groups, 1)
        } else {
            (ROW, groups.div_ceil(ROW))
        };
        pass.dispatch_workgroups(x, y, 1);
        1
    }

    /// Records a dispatch whose size the GPU wrote: three words of `args` from word `at`;
    /// returns the dependent steps that adds (one: wgpu's own check of the arguments, where
    /// it is on, is not counted here).
    pub(crate) fn dispatch_indirect(
        &self,
        pass: &mut wgpu::ComputePass<'_>,
        group: &wgpu::BindGroup,
        params_at: u32,
        args: &wgpu::Buffer,
        at: u32,
    ) -> u64 {
        pass.set_pipeline(&self.pipeline);
        pass.set_bind_group(0, group, &[params_at]);
        pass.dispatch_workgroups_indirect(args, 4 * u64::from(at));
        1
    }
}
