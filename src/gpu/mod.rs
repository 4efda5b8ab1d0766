//! GPU access: adapter choice, device creation, typed buffers, readback, kernels, pass timing.
//!
//! Everything that talks to wgpu directly and is not specific to one simulation stage lives
//! here, so stages only describe their bindings and dispatches.

mod buffers;
pub mod constants;
mod copy;
pub mod gate;
mod kernel;
pub mod layout;
mod render_layout;
mod timing;
pub mod traffic;
pub mod wgsl;

pub use buffers::{
    read_buffer, read_buffer_range, storage_buffer, uniform_buffer, BufferReader, Region,
    REGION_ALIGN,
};
pub use copy::KernelCopy;
pub use gate::Gate;
pub use kernel::{Bindable, Binding, Entry, Kernel, WORKGROUP};
pub use render_layout::RenderLayout;
pub use timing::{PassTimer, StageTiming};
pub use traffic::Traffic;
pub use wgsl::{shader_module, Wgsl};

use thiserror::Error;

/// Errors raised while finding an adapter or creating a device.
#[derive(Debug, Error)]
pub enum GpuError {
    #[error(
        "no GPU adapter found (backends: {backends}).\n\
         eddy needs a Vulkan, Metal, DX12 or GL adapter. On a machine without a GPU install \
         Mesa's software Vulkan driver (Debian/Ubuntu: `sudo apt-get install mesa-vulkan-drivers`) \
         and run again; `WGPU_BACKEND=vulkan` selects it explicitly."
    )]
    NoAdapter { backends: String },
    #[error("WGPU_ADAPTER_NAME={wanted:?} matches no adapter; available adapters: {available}")]
    AdapterNotFound { wanted: String, available: String },
    #[error("could not create a device on adapter {adapter:?}: {source}")]
    Device {
        adapter: String,
        #[source]
        source: wgpu::RequestDeviceError,
    },
    #[error("GPU error during {what}: {message}")]
    Validation { what: String, message: String },
    #[error("GPU readback failed: {0}")]
    Readback(String),
}

/// The adapter, device and queue every part of eddy shares.
pub struct GpuContext {
    pub instance: wgpu::Instance,
    pub adapter: wgpu::Adapter,
    pub device: wgpu::Device,
    pub queue: wgpu::Queue,
    pub info: wgpu::AdapterInfo,
    pub limits: wgpu::Limits,
    /// True when compute passes can carry timestamp queries.
    pub timestamps: bool,
}

impl GpuContext {
    /// Submits one command buffer (counted in [`Traffic`]); while a [`Gate`] is entered,
    /// behind the gate's prologue.
    pub fn submit(&self, commands: wgpu::CommandBuffer) -> wgpu::SubmissionIndex {
        let prologue = gate::prologue(self);
        let start = std::time::Instant::now();
        let index = self.queue.submit(prologue.into_iter().chain([commands]));
        let ns = start.elapsed().as_nanos() as u64;
        traffic::count(|t| {
            t.submits += 1;
            t.submit_ns += ns;
        });
        index
    }

    /// Picks an adapter honouring `WGPU_BACKEND` and `WGPU_ADAPTER_NAME` and creates a device
    /// with the adapter's own limits (large grids need more than wgpu's defaults).
    pub fn new() -> Result<Self, GpuError> {
        Self::with_instance(wgpu::Instance::new(instance_descriptor()), None)
    }

    /// Same as [`GpuContext::new`] on a caller's instance, optionally requiring that the
    /// adapter can present to `surface` (the viewer's window).
    pub fn with_instance(
        instance: wgpu::Instance,
        surface: Option<&wgpu::Surface<'_>>,
    ) -> Result<Self, GpuError> {
        let backends = default_backends();
        let adapters = pollster::block_on(instance.enumerate_adapters(backends));
        let usable: Vec<wgpu::Adapter> = adapters
            .into_iter()
            .filter(|a| surface.is_none_or(|s| a.is_surface_supported(s)))
            .collect();
        let adapter = match std::env::var("WGPU_ADAPTER_NAME") {
            Ok(wanted) if !wanted.is_empty() => {
                let lower = wanted.to_lowercase();
                let names: Vec<String> = usable
                    .iter()
                    .map(|a| {
                        let i = a.get_info();
                        format!("{} ({:?})", i.name, i.backend)
                    })
                    .collect();
                usable
                    .into_iter()
                    .find(|a| a.get_info().name.to_lowercase().contains(&lower))
                    .ok_or_else(|| GpuError::AdapterNotFound {
                        wanted,
                        available: if names.is_empty() {
                            "none".into()
                        } else {
                            names.join(", ")
                        },
                    })?
            }
            _ => pick_preferred(usable).ok_or_else(|| GpuError::NoAdapter {
                backends: format!("{backends:?}"),
            })?,
        };
        let info = adapter.get_info();
        let features = adapter.features() & wgpu::Features::TIMESTAMP_QUERY;
        let limits = adapter.limits();
        let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            label: Some("eddy::device"),
            required_features: features,
            required_limits: limits.clone(),
            ..Default::default()
        }))
        .map_err(|source| GpuError::Device {
            adapter: info.name.clone(),
            source,
        })?;
        log::info!(
            "adapter: {} ({:?}, {:?}), timestamps: {}",
            info.name,
            info.backend,
            info.device_type,
            !features.is_empty()
        );
        Ok(Self {
            instance,
            adapter,
            device,
            queue,
            info,
            limits,
            timestamps: !features.is_empty(),
        })
    }

    /// One line naming the adapter, for logs, stats headers and benchmark tables.
    pub fn describe(&self) -> String {
        let driver = if self.info.driver_info.is_empty() {
            self.info.driver.clone()
        } else {
            format!("{} {}", self.info.driver, self.info.driver_info)
        };
        format!("{} ({:?}, {})", self.info.name, self.info.backend, driver)
    }

    /// Blocks until `submission` is done (and its buffers' mapping callbacks have run),
    /// while what was submitted after it may still run.
    pub fn wait_for(&self, submission: wgpu::SubmissionIndex) -> Result<(), GpuError> {
        self.device
            .poll(wgpu::PollType::Wait {
                submission_index: Some(submission),
                timeout: None,
            })
            .map(|_| ())
            .map_err(|e| GpuError::Readback(e.to_string()))
    }

    /// Blocks until all submitted work is done.
    pub fn wait(&self) -> Result<(), GpuError> {
        self.device
            .poll(wgpu::PollType::wait_indefinitely())
            .map(|_| ())
            .map_err(|e| GpuError::Readback(e.to_string()))
    }
}

/// `WGPU_BACKEND` if set, else the primary backends (Vulkan, Metal, DX12). GL is only
/// tried when asked for: its compute support is too uneven for the solver.
/// The instance eddy asks for: the backends of [`default_backends`] and the environment's
/// flags, less wgpu's validation of indirect dispatch arguments, which adds a dispatch and
/// two barriers to each indirect dispatch. eddy's only indirect dispatches are the gate's
/// ([`gate`]), whose arguments are the direct dispatch's own counts (each at most 65535,
/// the least any adapter allows) or zero. Kept on Windows, where D3D12 needs it for the
/// `num_workgroups` the shaders read; `WGPU_VALIDATION_INDIRECT_CALL=1` keeps it anywhere.
pub fn instance_descriptor() -> wgpu::InstanceDescriptor {
    let mut desc = wgpu::InstanceDescriptor::new_without_display_handle_from_env();
    desc.backends = default_backends();
    let asked = std::env::var_os("WGPU_VALIDATION_INDIRECT_CALL").is_some();
    if !asked && !cfg!(windows) {
        desc.flags
            .remove(wgpu::InstanceFlags::VALIDATION_INDIRECT_CALL);
    }
    desc
}

pub fn default_backends() -> wgpu::Backends {
    wgpu::Backends::from_env().unwrap_or(wgpu::Backends::PRIMARY)
}

/// Prefers discrete, then integrated, then virtual GPUs, then CPU (software) adapters.
fn pick_preferred(adapters: Vec<wgpu::Adapter>) -> Option<wgpu::Adapter> {
    let rank = |t: wgpu::DeviceType| match t {
        wgpu::DeviceType::DiscreteGpu => 0,
        wgpu::DeviceType::IntegratedGpu => 1,
        wgpu::DeviceType::VirtualGpu => 2,
        wgpu::DeviceType::Cpu => 3,
        wgpu::DeviceType::Other => 4,
    };
    let rank_backend = |b: wgpu::Backend| match b {
        wgpu::Backend::Vulkan | wgpu::Backend::Metal | wgpu::Backend::Dx12 => 0,
        _ => 1,
    };
    adapters.into_iter().min_by_key(|a| {
        let i = a.get_info();
        (rank_backend(i.backend), rank(i.device_type))
    })
}
