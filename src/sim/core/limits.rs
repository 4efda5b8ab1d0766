//! What the adapter can hold: a scene's memory estimate is refused before anything is
//! allocated when its largest buffer is past the adapter's binding limit (or, for a named
//! adapter planned for without it, past its memory).

use crate::gpu::GpuContext;
use crate::sim::SimError;
use std::path::Path;

/// Bytes of GPU memory a scene needs, and its largest single buffer.
#[derive(Clone, Copy, Debug)]
pub struct MemoryEstimate {
    pub total: u64,
    pub largest_buffer: u64,
    pub largest_name: &'static str,
    /// What to reduce when the largest buffer does not fit.
    pub largest_hint: &'static str,
}

/// The limits the size checks read: the largest buffer a binding may hold, and (for an
/// adapter planned for, not opened) its memory.
#[derive(Clone, Debug, PartialEq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AdapterLimits {
    /// The adapter's name, as messages give it.
    pub name: String,
    /// Largest buffer one binding may hold, bytes (wgpu's max_storage_buffer_binding_size
    /// and max_buffer_size, the smaller).
    pub max_binding: u64,
    /// GPU memory, bytes (None: not checked; wgpu does not report it).
    #[serde(default)]
    pub memory: Option<u64>,
    /// Where the figures come from.
    #[serde(default)]
    pub source: String,
}

/// wgpu's cap on a Vulkan binding (`wgpu_hal::auxil::MAX_I32_BINDING_SIZE`): every binding
/// limit wgpu reports on Vulkan is at most this, whatever the driver allows.
pub const WGPU_MAX_BINDING: u64 = (1 << 31) - 1;

const GIB: u64 = 1 << 30;

/// The adapters `eddy check --limits NAME` knows, by name: (name, description, binding
/// limit, memory, source).
pub const KNOWN_ADAPTERS: [(&str, &str, u64, u64, &str); 5] = [
    (
        "h100",
        "NVIDIA H100 80GB (Vulkan)",
        WGPU_MAX_BINDING,
        80 * GIB,
        "binding: wgpu's Vulkan cap of 2 GiB - 1 (a 202 MB binding ran on one; `eddy check` \
         on the card prints what wgpu reports there); memory: the card's 80 GB",
    ),
    (
        "h200",
        "NVIDIA H200 (Vulkan)",
        WGPU_MAX_BINDING,
        139 * GIB,
        "binding: wgpu's Vulkan cap of 2 GiB - 1; memory: the 139 GiB the driver exposes of \
         the card's 141 GB",
    ),
    (
        "a100",
        "NVIDIA A100 80GB (Vulkan)",
        WGPU_MAX_BINDING,
        80 * GIB,
        "binding: wgpu's Vulkan cap of 2 GiB - 1; memory: the card's 80 GB",
    ),
    (
        "rtx4090",
        "NVIDIA GeForce RTX 4090 (Vulkan)",
        WGPU_MAX_BINDING,
        24 * GIB,
        "binding: wgpu's Vulkan cap of 2 GiB - 1; memory: the card's 24 GB",
    ),
    (
        "llvmpipe",
        "llvmpipe (Mesa's software Vulkan)",
        128 << 20,
        0,
        "binding: the 128 MiB storage-buffer range Mesa 22.3's lavapipe reports (measured); \
         memory: the host's, not checked",
    ),
];

impl AdapterLimits {
    /// The limits of the adapter `ctx` opened.
    pub fn of(ctx: &GpuContext) -> Self {
        Self {
            name: ctx.info.name.clone(),
            max_binding: buffer_limit(ctx),
            memory: None,
            source: "the adapter's own limits".into(),
        }
    }

    /// A known adapter by name ([`KNOWN_ADAPTERS`], case and `-`/`_` ignored).
    pub fn known(name: &str) -> Option<Self> {
        let key: String = name
            .chars()
            .filter(|c| c.is_ascii_alphanumeric())
            .collect::<String>()
            .to_ascii_lowercase();
        KNOWN_ADAPTERS
            .iter()
            .find(|k| k.0 == key)
            .map(|&(_, name, binding, memory, source)| Self {
                name: name.into(),
                max_binding: binding,
                memory: (memory > 0).then_some(memory),
                source: source.into(),
            })
    }

    /// A known adapter's name or a limits file (RON: `(name: "...", max_binding: BYTES,
    /// memory: Some(BYTES), source: "...")`).
    pub fn named_or_file(what: &str) -> Result<Self, String> {
        if let Some(l) = Self::known(what) {
            return Ok(l);
        }
        let path = Path::new(what);
        let names: Vec<&str> = KNOWN_ADAPTERS.iter().map(|k| k.0).collect();
        if !path.is_file() {
            return Err(format!(
                "--limits {what:?}: neither a known adapter ({}) nor a limits file",
                names.join(", ")
            ));
        }
        // A limits file is a few lines: anything larger is a wrong path, refused unread.
        let len = std::fs::metadata(path)
            .map_err(|e| format!("--limits {}: {e}", path.display()))?
            .len();
        if len > 1 << 16 {
            return Err(format!(
                "--limits {}: {len} bytes is too large for a limits file",
                path.display()
            ));
        }
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("--limits {}: {e}", path.display()))?;
        let l: Self = ron::Options::default()
            .with_default_extension(ron::extensions::Extensions::IMPLICIT_SOME)
            .from_str(&text)
            .map_err(|e| format!("--limits {}: {e}", path.display()))?;
        if l.max_binding < 1 << 20 || l.memory.is_some_and(|m| m < 1 << 20) {
            return Err(format!(
                "--limits {}: max_binding and memory are bytes (at least 1 MiB)",
                path.display()
            ));
        }
        Ok(l)
    }
}

/// The largest buffer any binding may hold on this adapter.
pub fn buffer_limit(ctx: &GpuContext) -> u64 {
    ctx.limits
        .max_storage_buffer_binding_size
        .min(ctx.limits.max_buffer_size)
}

/// Refuses an estimate whose largest buffer the adapter cannot hold.
pub fn check_estimate(ctx: &GpuContext, est: MemoryEstimate) -> Result<MemoryEstimate, SimError> {
    check_estimate_for(&AdapterLimits::of(ctx), est)
}

/// [`check_estimate`] against `limits`, and against its memory when it has a figure.
pub fn check_estimate_for(
    limits: &AdapterLimits,
    est: MemoryEstimate,
) -> Result<MemoryEstimate, SimError> {
    check_buffer_for(
        limits,
        est.largest_buffer,
        est.largest_name,
        est.largest_hint,
    )?;
    if let Some(memory) = limits.memory {
        if est.total > memory {
            return Err(SimError::TooLarge {
                what: "GPU memory for all its buffers together",
                bytes: est.total,
                limit: memory,
                adapter: limits.name.clone(),
                hint: "reduce the resolution, the fluid shapes or particles_per_cell",
            });
        }
    }
    Ok(est)
}

/// Refuses a buffer of `bytes` the adapter cannot bind, naming it (`what`) and what to
/// change (`hint`).
pub fn check_buffer(
    ctx: &GpuContext,
    bytes: u64,
    what: &'static str,
    hint: &'static str,
) -> Result<(), SimError> {
    check_buffer_for(&AdapterLimits::of(ctx), bytes, what, hint)
}

/// [`check_buffer`] against `limits`.
pub fn check_buffer_for(
    limits: &AdapterLimits,
    bytes: u64,
    what: &'static str,
    hint: &'static str,
) -> Result<(), SimError> {
    if bytes > limits.max_binding {
        return Err(SimError::TooLarge {
            what,
            bytes,
            limit: limits.max_binding,
            adapter: limits.name.clone(),
            hint,
        });
    }
    Ok(())
}
