//! Kernel loading and bind-group layouts.
//!
//! A [`Kernel`] is the compute entry points of one WGSL file plus the layout of its bind
//! group 0, both read from the shader with naga: the layout is declared once, in the WGSL.
//! Every bind group is made by [`Kernel::bind`] from buffers paired with the WGSL names of
//! their bindings, checked against the shader, so two buffers cannot be swapped silently;
//! entry points are [`Entry`] handles looked up (and checked) when a stage is created.

use super::buffers::Region;
/// Workgroup size of the element-wise kernels.
pub use super::constants::WORKGROUP;
use super::wgsl::{shader_module, Wgsl};
/// Largest workgroup count per dispatch dimension that every adapter accepts.
const MAX_GROUPS_PER_DIM: u32 = 65535;

/// Panics unless `given` names each of `declared` (a shader's bind group 0) once and
/// nothing else: a bind group is made by name, so a misspelt or doubled name is a bug.
pub(super) fn check_names<'a>(
    label: &str,
    declared: impl Iterator<Item = &'a str> + Clone,
    given: &[&str],
) {
    for name in given {
        assert!(
            declared.clone().any(|d| d == *name),
            "{label}: the shader has no binding named {name} (it has {:?})",
            declared.clone().collect::<Vec<_>>()
        );
        assert_eq!(
            given.iter().filter(|n| *n == name).count(),
            1,
            "{label}: {name} bound twice"
        );
    }
    for d in declared {
        assert!(given.contains(&d), "{label}: binding {d} not given");
    }
}

/// The kind of one binding of a kernel's bind group 0, read from the shader.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Binding {
    Uniform,
    /// A uniform bound with a dynamic offset (one slot per dispatch, e.g. wavefront planes).
    UniformDynamic {
        size: u64,
    },
    Storage,
    StorageRead,
}

/// One global of bind group 0: its WGSL name, binding number and kind.
#[derive(Clone, Debug)]
struct Global {
    name: String,
    binding: u32,
    kind: Binding,
}

/// A compute entry point of a [`Kernel`], checked to exist when it was looked up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry(usize);

/// Declares a struct holding the [`Entry`] handles of a kernel's entry points, one field per
/// WGSL entry point, looked up (and checked) once when the stage is created:
/// `kernel_entries!(PcgEntries { init_mask, apply_a });` then `PcgEntries::of(&kernel)`.
#[macro_export]
macro_rules! kernel_entries {
    ($(#[$m:meta])* $name:ident { $($entry:ident),+ $(,)? }) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug)]
        pub struct $name {
            $(pub $entry: $crate::gpu::Entry,)+
        }

        impl $name {
            pub fn of(kernel: &$crate::gpu::Kernel) -> Self {
                Self {
                    $($entry: kernel.entry(stringify!($entry)),)+
                }
            }
        }
    };
}

/// The compute entry points of one WGSL file and the one bind-group layout they share, both
/// read from the shader itself (naga), so a binding is named, not counted.
pub struct Kernel {
    pub label: String,
    pipelines: Vec<(String, wgpu::ComputePipeline)>,
    layout: wgpu::BindGroupLayout,
    globals: Vec<Global>,
}

/// The globals of bind group 0 and the compute entry points of a WGSL file.
fn reflect(wgsl: Wgsl, dynamic: &[(&str, u64)]) -> (Vec<Global>, Vec<String>) {
    let shader = wgsl.path();
    let source = wgsl.expand();
    let module = naga::front::wgsl::parse_str(&source)
        .unwrap_or_else(|e| panic!("{shader}: {}", e.emit_to_string(&source)));
    let mut globals: Vec<Global> = module
        .global_variables
        .iter()
        .filter_map(|(_, gv)| {
            let rb = gv.binding.as_ref()?;
            assert_eq!(rb.group, 0, "{shader}: eddy's kernels bind group 0 only");
            let name = gv.name.clone().unwrap_or_default();
            let kind = match gv.space {
                naga::AddressSpace::Uniform => match dynamic.iter().find(|(n, _)| *n == name) {
                    Some((_, size)) => Binding::UniformDynamic { size: *size },
                    None => Binding::Uniform,
                },
                naga::AddressSpace::Storage { access } => {
                    if access.contains(naga::StorageAccess::STORE) {
                        Binding::Storage
                    } else {
                        Binding::StorageRead
                    }
                }
                other => panic!("{shader}: binding {name} in address space {other:?}"),
            };
            Some(Global {
                name,
                binding: rb.binding,
                kind,
            })
        })
        .collect();
    globals.sort_by_key(|g| g.binding);
    for (n, _) in dynamic {
        assert!(
            globals.iter().any(|g| g.name == *n),
            "{shader}: no uniform {n} to bind with a dynamic offset"
        );
    }
    let entries = module
        .entry_points
        .iter()
        .filter(|e| e.stage == naga::ShaderStage::Compute)
        .map(|e| e.name.clone())
        .collect();
    (globals, entries)
}

impl Kernel {
    /// Compiles every compute entry point of shader file `shader`, with the bind-group
    /// layout its globals declare.
    pub fn new(device: &wgpu::Device, shader: Wgsl, label: &str) -> Self {
        Self::with_dynamic(device, shader, label, &[])
    }

    /// As [`Kernel::new`], with the uniforms named in `dynamic` bound at a dynamic offset
    /// (a window of the given size, in bytes).
    pub fn with_dynamic(
        device: &wgpu::Device,
        shader: Wgsl,
        label: &str,
        dynamic: &[(&str, u64)],
    ) -> Self {
        let (globals, entries) = reflect(shader, dynamic);
        let module = shader_module(device, shader);
        let layout_entries: Vec<wgpu::BindGroupLayoutEntry> = globals
            .iter()
            .map(|g| wgpu::BindGroupLayoutEntry {
                binding: g.binding,
                visibility: wgpu::ShaderStages::COMPUTE,
                ty: match g.kind {
                    Binding::Uniform => wgpu::BindingType::Buffer {
                        ty: wgpu::BufferBindingType::Uniform,
                        has_dynamic_offset: false,
                        min_binding_size: None,
                    },
                    Binding::UniformDynamic { size } => wgpu::BindingType::Buffer {
                        ty: wgpu::BufferBindingType::Uniform,
                        has_dynamic_offset: true,
                        min_binding_size: wgpu::BufferSize::new(size),
                    },
                    Binding::Storage | Binding::StorageRead => wgpu::BindingType::Buffer {
                        ty: wgpu::BufferBindingType::Storage {
                            read_only: g.kind == Binding::StorageRead,
                        },
                        has_dynamic_offset: false,
                        min_binding_size: None,
                    },
                },
                count: None,
            })
            .collect();
        let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some(label),
            entries: &layout_entries,
        });
        let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some(label),
            bind_group_layouts: &[Some(&layout)],
            immediate_size: 0,
        });
        let pipelines = entries
            .into_iter()
            .map(|entry| {
                let name = format!("{label}::{entry}");
                let p = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                    label: Some(&name),
                    layout: Some(&pipeline_layout),
                    module: &module,
                    entry_point: Some(&entry),
                    compilation_options: Default::default(),
                    cache: None,
                });
                (entry, p)
            })
            .collect();
        Self {
            label: label.to_string(),
            pipelines,
            layout,
            globals,
        }
    }

    /// The handle of entry point `name`. Panics when the shader has no such compute entry
    /// point: stages look their entries up when they are created, so a misspelt name
    /// fails the first test that creates the stage.
    pub fn entry(&self, name: &str) -> Entry {
        Entry(
            self.pipelines
                .iter()
                .position(|(n, _)| n == name)
                .unwrap_or_else(|| panic!("{}: no entry point {name}", self.label)),
        )
    }

    /// The WGSL name of `entry`, for messages.
    /// The pipeline of `entry` (for a dispatch that must not be gated, [`super::gate`]).
    pub(crate) fn pipeline(&self, entry: Entry) -> &wgpu::ComputePipeline {
        &self.pipelines[entry.0].1
    }

    pub fn entry_name(&self, entry: Entry) -> &str {
        &self.pipelines[entry.0].0
    }

    /// Makes a bind group from `(WGSL name, buffer)` pairs (a whole buffer or a
    /// [`Region`] of one). Panics unless every global of the shader's bind group 0 is given
    /// exactly once, by its name.
    pub fn bind(
        &self,
        device: &wgpu::Device,
        buffers: &[(&str, &dyn Bindable)],
    ) -> wgpu::BindGroup {
        let given: Vec<&str> = buffers.iter().map(|(n, _)| *n).collect();
        check_names(
            &self.label,
            self.globals.iter().map(|g| g.name.as_str()),
            &given,
        );
        let entries: Vec<wgpu::BindGroupEntry> = self
            .globals
            .iter()
            .map(|g| {
                let buf = buffers
                    .iter()
                    .find(|(n, _)| *n == g.name)
                    .map(|(_, b)| *b)
                    .unwrap_or_else(|| panic!("{}: no buffer for {}", self.label, g.name));
                wgpu::BindGroupEntry {
                    binding: g.binding,
                    resource: match g.kind {
                        Binding::UniformDynamic { size } => {
                            wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                                size: wgpu::BufferSize::new(size),
                                ..buf.buffer_binding()
                            })
                        }
                        _ => wgpu::BindingResource::Buffer(buf.buffer_binding()),
                    },
                }
            })
            .collect();
        device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some(&self.label),
            layout: &self.layout,
            entries: &entries,
        })
    }

    /// Dispatches `entry` over enough workgroups of [`WORKGROUP`] threads to cover `threads`
    /// items. Counts above the per-dimension limit spill into y; shaders rebuild the linear
    /// index with `linear_id` from the prelude.
    pub fn dispatch(
        &self,
        pass: &mut wgpu::ComputePass<'_>,
        entry: Entry,
        group: &wgpu::BindGroup,
        threads: u32,
    ) {
        self.dispatch_groups(pass, entry, group, &[], threads.div_ceil(WORKGROUP));
    }

    /// Dispatches exactly `groups` workgroups (split over x and y when needed), with the
    /// dynamic offsets of the bind group, if any.
    pub fn dispatch_groups(
        &self,
        pass: &mut wgpu::ComputePass<'_>,
        entry: Entry,
        group: &wgpu::BindGroup,
        offsets: &[u32],
        groups: u32,
    ) {
        if groups == 0 {
            return;
        }
        pass.set_pipeline(&self.pipelines[entry.0].1);
        pass.set_bind_group(0, group, offsets);
        let (x, y) = split_groups(groups);
        if !super::gate::dispatch(pass, x, y) {
            pass.dispatch_workgroups(x, y, 1);
        }
        super::traffic::count(|t| t.dispatches += 1);
    }
}

fn split_groups(groups: u32) -> (u32, u32) {
    if groups <= MAX_GROUPS_PER_DIM {
        (groups, 1)
    } else {
        let y = groups.div_ceil(MAX_GROUPS_PER_DIM);
        (groups.div_ceil(y), y)
    }
}

/// What [`Kernel::bind`] binds: a whole buffer, or a [`Region`] of one.
pub trait Bindable {
    fn buffer_binding(&self) -> wgpu::BufferBinding<'_>;
}

impl Bindable for wgpu::Buffer {
    fn buffer_binding(&self) -> wgpu::BufferBinding<'_> {
        wgpu::BufferBinding {
            buffer: self,
            offset: 0,
            size: None,
        }
    }
}

impl Bindable for Region {
    fn buffer_binding(&self) -> wgpu::BufferBinding<'_> {
        wgpu::BufferBinding {
            buffer: &self.buffer,
            offset: self.offset,
            size: wgpu::BufferSize::new(self.size),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_covers_all_groups() {
        // Up to a cell per invocation of eddy's largest grid (the scene's MAX_CELLS, 2^28;
        // 512^3 is 2^27).
        let most = (1u32 << 28) / super::WORKGROUP;
        for g in [
            1,
            100,
            65535,
            65536,
            1 << 20,
            3_000_001,
            (1 << 27) / super::WORKGROUP,
            most,
        ] {
            let (x, y) = split_groups(g);
            assert!(
                x <= MAX_GROUPS_PER_DIM && x * y >= g && x * (y - 1) < g,
                "{g}"
            );
        }
    }
}
