//! Finding and opening a GPU: adapters, limits, and the errors a user can act on.

use std::sync::{Arc, OnceLock};

use super::kernels::Kernels;
use super::shader::WORKGROUP_BYTES;
use crate::error::Error;

/// What a missing GPU needs, for the messages that say so.
const INSTALL: &str = "install the Vulkan loader (Debian/Ubuntu: libvulkan1) and your GPU \
                       driver's Vulkan driver (NVIDIA: the driver's Vulkan ICD; AMD/Intel: \
                       mesa-vulkan-drivers)";

/// Storage buffers the busiest kernels bind (the tree's, `tree.wgsl`).
const STORAGE_BUFFERS: u32 = 10;

/// What a machine whose Vulkan loader works but offers no device needs.
const INSTALL_DRIVER: &str = "install your GPU driver's Vulkan driver (NVIDIA: the driver's \
                              Vulkan ICD; AMD/Intel: mesa-vulkan-drivers)";

/// One GPU this machine offers, as `--gpu-device` numbers them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Adapter {
    /// Its number: the order the graphics API lists it in.
    pub index: usize,
    /// Its name, e.g. `NVIDIA H100 80GB HBM3`.
    pub name: String,
    /// The graphics API: `Vulkan`, `Metal` or `Dx12`.
    pub backend: String,
    /// The driver and its version.
    pub driver: String,
    /// A software driver running on the CPU (Mesa's lavapipe): exact, but slow.
    pub software: bool,
    /// Bytes of its own memory (its largest device-local heap), where its driver says
    /// (Vulkan's do; wgpu does not): the default batch slots take half of it.
    pub memory: Option<u64>,
}

impl std::fmt::Display for Adapter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({}", self.name, self.backend)?;
        if !self.driver.is_empty() {
            write!(f, ", {}", self.driver)?;
        }
        if self.software {
            write!(f, ", software")?;
        }
        write!(f, ")")
    }
}

/// An open GPU, ready to count ([`crate::gpu::plan`]). Cheap to clone: clones share it.
#[derive(Clone)]
pub struct Gpu {
    pub(crate) device: Arc<Device>,
    /// Test hook: the joins of a plan fail after this many, as on a lost device.
    pub(crate) fail_after: Option<u64>,
}

impl PartialEq for Gpu {
    /// The same device opened once (clones of one [`Gpu`]).
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.device, &other.device) && self.fail_after == other.fail_after
    }
}

impl std::fmt::Debug for Gpu {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gpu")
            .field("adapter", &self.device.adapter)
            .finish()
    }
}

/// The device, its queue, its compiled kernels, and whether it failed.
pub(crate) struct Device {
    pub(crate) device: wgpu::Device,
    pub(crate) queue: wgpu::Queue,
    pub(crate) adapter: Adapter,
    pub(crate) limits: wgpu::Limits,
    /// A GPU that shares the machine's memory (less of it for the batches).
    pub(crate) integrated: bool,
    pub(crate) kernels: Kernels,
    /// Whether wgpu checks each indirect dispatch's arguments with a dispatch of its own (a
    /// dependent step more each).
    pub(crate) indirect_validation: bool,
    /// The first error no request caught (device lost, say): every later request fails.
    lost: Arc<OnceLock<String>>,
}

impl Gpu {
    /// Opens GPU number `index` of [`adapters`], or without one the first hardware GPU (a
    /// software driver only where there is nothing else).
    ///
    /// # Errors
    /// [`Error::NoGpu`] where no GPU can be used: no Vulkan loader, no adapter, no adapter
    /// of that number, or one without what the kernels need; the message says what to do.
    pub fn open(index: Option<usize>) -> Result<Gpu, Error> {
        let instance = instance();
        let found = enumerate(&instance);
        let chosen = match index {
            Some(i) => found.into_iter().nth(i).ok_or_else(|| no_such_device(i))?,
            None => pick_default(found)?,
        };
        let device = open_adapter(chosen.0, chosen.1)?;
        Ok(Gpu {
            device: Arc::new(device),
            fail_after: None,
        })
    }

    /// Test hook: every plan made on this GPU from now on fails its joins after `joins` of
    /// them, as it would on a device lost in a run.
    #[doc(hidden)]
    pub fn fail_after(mut self, joins: Option<u64>) -> Self {
        self.fail_after = joins;
        self
    }

    /// The adapter this GPU was opened on.
    pub fn adapter(&self) -> &Adapter {
        &self.device.adapter
    }
}

/// Every GPU adapter this machine offers, numbered as `--gpu-device` takes them.
///
/// # Errors
/// [`Error::NoGpu`] where the graphics API cannot be loaded at all (no Vulkan loader).
pub fn adapters() -> Result<Vec<Adapter>, Error> {
    loader_check()?;
    Ok(enumerate(&instance()).into_iter().map(|(_, a)| a).collect())
}

fn instance() -> wgpu::Instance {
    wgpu::Instance::new(wgpu::InstanceDescriptor {
        backends: wgpu::Backends::PRIMARY,
        flags: instance_flags(),
        ..wgpu::InstanceDescriptor::new_without_display_handle()
    })
}

/// wgpu's defaults, less its check of every indirect dispatch's arguments in an optimised
/// build without debug assertions: the check is a dispatch of its own and a barrier before
/// each of a batch's indirect dispatches (dependent steps the GPU waits on), and the
/// arguments are the kernels' own, in range by construction (`row_args`, each count within
/// its list's room). Builds with debug assertions, the tests', keep it, and
/// `WGPU_VALIDATION_INDIRECT_CALL=1` turns it on anywhere.
fn instance_flags() -> wgpu::InstanceFlags {
    let mut flags = wgpu::InstanceFlags::default();
    if !cfg!(debug_assertions) {
        flags.remove(wgpu::InstanceFlags::VALIDATION_INDIRECT_CALL);
    }
    flags.with_env()
}

/// The adapters, with their descriptions, in the API's order.
fn enumerate(instance: &wgpu::Instance) -> Vec<(wgpu::Adapter, Adapter)> {
    let adapters = pollster::block_on(instance.enumerate_adapters(wgpu::Backends::PRIMARY));
    adapters
        .into_iter()
        .enumerate()
        .map(|(index, a)| {
            let info = a.get_info();
            let described = Adapter {
                index,
                name: info.name.clone(),
                backend: format!("{:?}", info.backend),
                driver: format!("{} {}", info.driver, info.driver_info)
                    .trim()
                    .to_string(),
                software: info.device_type == wgpu::DeviceType::Cpu,
                memory: memory_of(&a),
            };
            (a, described)
        })
        .collect()
}

/// Bytes of `adapter`'s largest device-local memory heap, where it is a Vulkan one; `None`
/// elsewhere (Metal, DX12).
#[cfg(any(
    windows,
    target_os = "linux",
    target_os = "android",
    target_os = "freebsd"
))]
fn memory_of(adapter: &wgpu::Adapter) -> Option<u64> {
    use ash::vk::MemoryHeapFlags;
    // SAFETY: the guard keeps the adapter alive while it is read, and nothing of it is
    // destroyed or changed: its physical device's memory properties are only queried, with
    // the instance that enumerated it.
    let hal = unsafe { adapter.as_hal::<wgpu::hal::api::Vulkan>() }?;
    let instance = hal.shared_instance().raw_instance();
    // SAFETY: the physical device is the instance's own (wgpu enumerated it from it).
    let properties =
        unsafe { instance.get_physical_device_memory_properties(hal.raw_physical_device()) };
    properties
        .memory_heaps_as_slice()
        .iter()
        .filter(|heap| heap.flags.contains(MemoryHeapFlags::DEVICE_LOCAL))
        .map(|heap| heap.size)
        .max()
}

/// No Vulkan here: wgpu says nothing of a GPU's memory.
#[cfg(not(any(
    windows,
    target_os = "linux",
    target_os = "android",
    target_os = "freebsd"
)))]
fn memory_of(_adapter: &wgpu::Adapter) -> Option<u64> {
    None
}

/// The first hardware adapter, else a software one.
fn pick_default(found: Vec<(wgpu::Adapter, Adapter)>) -> Result<(wgpu::Adapter, Adapter), Error> {
    loader_check()?;
    let hardware = found.iter().position(|(_, a)| !a.software);
    let at = hardware.or(if found.is_empty() { None } else { Some(0) });
    match at {
        Some(i) => Ok(found.into_iter().nth(i).expect("index from the list")),
        None => Err(Error::NoGpu(no_adapter())),
    }
}

/// Why there is no adapter, where the Vulkan loader loads (for [`adapters`]' empty list).
pub fn no_adapter() -> String {
    format!(
        "no GPU adapter was found (the Vulkan loader loads, but no driver offers a device): \
         {INSTALL_DRIVER}, or run without --gpu"
    )
}

fn no_such_device(i: usize) -> Error {
    let list = match adapters() {
        Ok(list) if !list.is_empty() => list
            .iter()
            .map(|a| format!("{}: {a}", a.index))
            .collect::<Vec<_>>()
            .join("; "),
        _ => "none".to_string(),
    };
    Error::NoGpu(format!(
        "there is no GPU number {i} (--gpu-device counts from 0; this machine has: {list})"
    ))
}

/// On Linux, whether the Vulkan loader can be loaded at all: wgpu only logs its absence.
fn loader_check() -> Result<(), Error> {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: dlopen with a valid NUL-terminated name and flags; the handle is closed
        // at once and nothing from the library is called.
        let handle = unsafe { libc::dlopen(c"libvulkan.so.1".as_ptr(), libc::RTLD_LAZY) };
        if handle.is_null() {
            // SAFETY: dlerror returns NULL or a NUL-terminated string valid until the next
            // dl call, copied at once.
            let why = unsafe {
                let text = libc::dlerror();
                match text.is_null() {
                    true => String::new(),
                    false => std::ffi::CStr::from_ptr(text)
                        .to_string_lossy()
                        .into_owned(),
                }
            };
            // Missing or broken: the loader's own words say which.
            return Err(Error::NoGpu(format!(
                "the Vulkan loader libvulkan.so.1 could not be loaded ({why}): {INSTALL}, \
                 or run without --gpu"
            )));
        }
        // SAFETY: the handle came from the dlopen above and is closed once.
        unsafe { libc::dlclose(handle) };
    }
    Ok(())
}

/// The limits the kernels need, at most what the adapter offers: its largest buffers, and
/// the workgroup memory of the count kernel.
fn limits(adapter: &wgpu::Adapter, described: &Adapter) -> Result<wgpu::Limits, Error> {
    let offered = adapter.limits();
    if offered.max_compute_workgroup_storage_size < WORKGROUP_BYTES {
        return Err(Error::NoGpu(format!(
            "{described} has {} bytes of workgroup memory; the GPU engine needs {WORKGROUP_BYTES}",
            offered.max_compute_workgroup_storage_size
        )));
    }
    if offered.max_storage_buffers_per_shader_stage < STORAGE_BUFFERS {
        return Err(Error::NoGpu(format!(
            "{described} binds {} storage buffers per kernel; the GPU engine needs {STORAGE_BUFFERS}",
            offered.max_storage_buffers_per_shader_stage
        )));
    }
    Ok(wgpu::Limits {
        max_storage_buffer_binding_size: offered.max_storage_buffer_binding_size,
        max_buffer_size: offered.max_buffer_size,
        max_compute_workgroup_storage_size: WORKGROUP_BYTES,
        max_storage_buffers_per_shader_stage: STORAGE_BUFFERS,
        ..wgpu::Limits::default()
    })
}

fn open_adapter(adapter: wgpu::Adapter, described: Adapter) -> Result<Device, Error> {
    let caps = adapter.get_downlevel_capabilities();
    if !caps.flags.contains(wgpu::DownlevelFlags::COMPUTE_SHADERS) {
        return Err(Error::NoGpu(format!(
            "{described} cannot run compute shaders: {INSTALL}"
        )));
    }
    let limits = limits(&adapter, &described)?;
    let integrated = adapter.get_info().device_type == wgpu::DeviceType::IntegratedGpu;
    let request = adapter.request_device(&wgpu::DeviceDescriptor {
        label: Some("nqueens"),
        // Timestamps time each pass of a batch where the GPU has them.
        required_features: adapter.features() & wgpu::Features::TIMESTAMP_QUERY,
        required_limits: limits.clone(),
        experimental_features: Default::default(),
        memory_hints: wgpu::MemoryHints::Performance,
        trace: Default::default(),
    });
    let (device, queue) = pollster::block_on(request).map_err(|e| {
        let what = format!("{described} could not be opened: {e}");
        // Out of memory or lost is a failure of the moment (exit 1), not of the request.
        match is_failure_of_the_moment(&format!("{e:?}")) {
            true => Error::Gpu(what),
            false => Error::NoGpu(what),
        }
    })?;
    let lost = Arc::new(OnceLock::new());
    let on_error = Arc::clone(&lost);
    device.on_uncaptured_error(Arc::new(move |e: wgpu::Error| {
        let _ = on_error.set(e.to_string());
    }));
    let on_lost = Arc::clone(&lost);
    device.set_device_lost_callback(move |reason, message| {
        let _ = on_lost.set(format!("the device was lost ({reason:?}): {message}"));
    });
    let memory = device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
    let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
    let kernels = Kernels::new(&device, described.software);
    if let Some(e) = pollster::block_on(scope.pop()) {
        return Err(Error::NoGpu(format!(
            "{described} does not take the GPU engine's kernels: {e}"
        )));
    }
    if let Some(e) = pollster::block_on(memory.pop()) {
        return Err(Error::Gpu(format!(
            "{described} ran out of memory making the kernels: {e}"
        )));
    }
    Ok(Device {
        device,
        queue,
        adapter: described,
        limits,
        integrated,
        kernels,
        indirect_validation: instance_flags()
            .contains(wgpu::InstanceFlags::VALIDATION_INDIRECT_CALL),
        lost,
    })
}

/// Whether a failed device request (its debug text: wgpu does not export the kinds) was
/// for want of memory or a device lost, which another try may not meet.
fn is_failure_of_the_moment(debug: &str) -> bool {
    debug.contains("OutOfMemory") || debug.contains("Lost")
}

impl Device {
    /// The error that broke the device, if one did.
    pub(crate) fn lost(&self) -> Option<String> {
        self.lost.get().cloned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_and_lost_devices_are_failures_of_the_moment_and_the_rest_usage() {
        assert!(is_failure_of_the_moment(
            "RequestDeviceError { inner: Core(Device(OutOfMemory)) }"
        ));
        assert!(is_failure_of_the_moment(
            "RequestDeviceError { inner: Core(Device(Lost)) }"
        ));
        assert!(!is_failure_of_the_moment(
            "RequestDeviceError { inner: Core(LimitsExceeded(FailedLimit { .. })) }"
        ));
    }
}
