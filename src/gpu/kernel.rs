//! Kernel loading and bind-group layouts.
//!
//! A [`Kernel`] is one compute entry point plus the layout of its bind group 0. The layout
//! is declared once, as a list of [`Binding`]s, and every bind group for it is made by
//! [`Kernel::bind`] from buffers listed in the same order, so bindings are never copied by
//! position in two places.

use std::borrow::Cow;

/// Workgroup size of the element-wise kernels (keep in sync with `WG` in shaders/prelude.wgsl).
pub const WORKGROUP: u32 = 64;
/// Largest workgroup count per dispatch dimension that every adapter accepts.
const MAX_GROUPS_PER_DIM: u32 = 65535;

/// Every WGSL file of eddy, by file name. `//!include NAME` lines pull in another entry.
pub const SHADER_SOURCES: &[(&str, &str)] = &[
    ("prelude.wgsl", include_str!("../../shaders/prelude.wgsl")),
    ("cells.wgsl", include_str!("../../shaders/cells.wgsl")),
    ("p2g.wgsl", include_str!("../../shaders/p2g.wgsl")),
    (
        "mark_cells.wgsl",
        include_str!("../../shaders/mark_cells.wgsl"),
    ),
    ("forces.wgsl", include_str!("../../shaders/forces.wgsl")),
    ("boundary.wgsl", include_str!("../../shaders/boundary.wgsl")),
    (
        "divergence.wgsl",
        include_str!("../../shaders/divergence.wgsl"),
    ),
    (
        "build_matrix.wgsl",
        include_str!("../../shaders/build_matrix.wgsl"),
    ),
    ("pcg.wgsl", include_str!("../../shaders/pcg.wgsl")),
    ("precond.wgsl", include_str!("../../shaders/precond.wgsl")),
    (
        "multigrid.wgsl",
        include_str!("../../shaders/multigrid.wgsl"),
    ),
    ("project.wgsl", include_str!("../../shaders/project.wgsl")),
    (
        "free_surface.wgsl",
        include_str!("../../shaders/free_surface.wgsl"),
    ),
    (
        "ghost_gradient.wgsl",
        include_str!("../../shaders/ghost_gradient.wgsl"),
    ),
    (
        "volume_correction.wgsl",
        include_str!("../../shaders/volume_correction.wgsl"),
    ),
    (
        "extrapolate.wgsl",
        include_str!("../../shaders/extrapolate.wgsl"),
    ),
    ("g2p.wgsl", include_str!("../../shaders/g2p.wgsl")),
    ("advect.wgsl", include_str!("../../shaders/advect.wgsl")),
    ("stats.wgsl", include_str!("../../shaders/stats.wgsl")),
    (
        "bench_copy.wgsl",
        include_str!("../../shaders/bench_copy.wgsl"),
    ),
    (
        "smoke_common.wgsl",
        include_str!("../../shaders/smoke_common.wgsl"),
    ),
    (
        "smoke_mark.wgsl",
        include_str!("../../shaders/smoke_mark.wgsl"),
    ),
    (
        "smoke_emit.wgsl",
        include_str!("../../shaders/smoke_emit.wgsl"),
    ),
    (
        "smoke_advect.wgsl",
        include_str!("../../shaders/smoke_advect.wgsl"),
    ),
    (
        "smoke_forces.wgsl",
        include_str!("../../shaders/smoke_forces.wgsl"),
    ),
    (
        "smoke_stats.wgsl",
        include_str!("../../shaders/smoke_stats.wgsl"),
    ),
    (
        "smoke_tracers.wgsl",
        include_str!("../../shaders/smoke_tracers.wgsl"),
    ),
    ("bodies.wgsl", include_str!("../../shaders/bodies.wgsl")),
    (
        "render_particles.wgsl",
        include_str!("../../shaders/render_particles.wgsl"),
    ),
    (
        "render_lines.wgsl",
        include_str!("../../shaders/render_lines.wgsl"),
    ),
    (
        "render_slice.wgsl",
        include_str!("../../shaders/render_slice.wgsl"),
    ),
    (
        "render_push.wgsl",
        include_str!("../../shaders/render_push.wgsl"),
    ),
    (
        "render_surface_common.wgsl",
        include_str!("../../shaders/render_surface_common.wgsl"),
    ),
    (
        "render_surface_depth.wgsl",
        include_str!("../../shaders/render_surface_depth.wgsl"),
    ),
    (
        "render_surface_thickness.wgsl",
        include_str!("../../shaders/render_surface_thickness.wgsl"),
    ),
    (
        "render_surface_smooth.wgsl",
        include_str!("../../shaders/render_surface_smooth.wgsl"),
    ),
    (
        "fullscreen.wgsl",
        include_str!("../../shaders/fullscreen.wgsl"),
    ),
    (
        "render_surface_blit.wgsl",
        include_str!("../../shaders/render_surface_blit.wgsl"),
    ),
    (
        "render_surface_shade.wgsl",
        include_str!("../../shaders/render_surface_shade.wgsl"),
    ),
];

/// Returns the source of `name` with its `//!include` lines expanded.
pub fn expand_wgsl(name: &str) -> String {
    let src = SHADER_SOURCES
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, s)| *s)
        .unwrap_or_else(|| panic!("unknown shader {name}: add it to SHADER_SOURCES"));
    let mut out = String::with_capacity(src.len() * 2);
    for line in src.lines() {
        if let Some(inc) = line.trim().strip_prefix("//!include ") {
            out.push_str(&expand_wgsl(inc.trim()));
        } else {
            out.push_str(line);
        }
        out.push('\n');
    }
    out
}

/// Creates the shader module for a WGSL file of [`SHADER_SOURCES`].
pub fn shader_module(device: &wgpu::Device, name: &str) -> wgpu::ShaderModule {
    device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some(name),
        source: wgpu::ShaderSource::Wgsl(Cow::Owned(expand_wgsl(name))),
    })
}

/// One entry of a kernel's bind group 0, in binding order.
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

/// The entry points of one WGSL file and the one bind-group layout they share.
pub struct Kernel {
    pub label: String,
    pipelines: Vec<(String, wgpu::ComputePipeline)>,
    layout: wgpu::BindGroupLayout,
    bindings: Vec<Binding>,
}

impl Kernel {
    /// Compiles `entries` of shader file `shader` with one layout made of `bindings`.
    pub fn new(
        device: &wgpu::Device,
        shader: &str,
        label: &str,
        entries: &[&str],
        bindings: &[Binding],
    ) -> Self {
        let module = shader_module(device, shader);
        let layout_entries: Vec<wgpu::BindGroupLayoutEntry> = bindings
            .iter()
            .enumerate()
            .map(|(i, b)| wgpu::BindGroupLayoutEntry {
                binding: i as u32,
                visibility: wgpu::ShaderStages::COMPUTE,
                ty: match *b {
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
                            read_only: *b == Binding::StorageRead,
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
            .iter()
            .map(|entry| {
                let name = format!("{label}::{entry}");
                let p = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                    label: Some(&name),
                    layout: Some(&pipeline_layout),
                    module: &module,
                    entry_point: Some(entry),
                    compilation_options: Default::default(),
                    cache: None,
                });
                (entry.to_string(), p)
            })
            .collect();
        Self {
            label: label.to_string(),
            pipelines,
            layout,
            bindings: bindings.to_vec(),
        }
    }

    /// Makes a bind group from buffers given in the kernel's binding order.
    pub fn bind(&self, device: &wgpu::Device, buffers: &[&wgpu::Buffer]) -> wgpu::BindGroup {
        assert_eq!(
            buffers.len(),
            self.bindings.len(),
            "{}: {} buffers for {} bindings",
            self.label,
            buffers.len(),
            self.bindings.len()
        );
        let entries: Vec<wgpu::BindGroupEntry> = buffers
            .iter()
            .zip(&self.bindings)
            .enumerate()
            .map(|(i, (buf, b))| wgpu::BindGroupEntry {
                binding: i as u32,
                resource: match b {
                    Binding::UniformDynamic { size } => {
                        wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                            buffer: buf,
                            offset: 0,
                            size: wgpu::BufferSize::new(*size),
                        })
                    }
                    _ => buf.as_entire_binding(),
                },
            })
            .collect();
        device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some(&self.label),
            layout: &self.layout,
            entries: &entries,
        })
    }

    fn pipeline(&self, entry: &str) -> &wgpu::ComputePipeline {
        self.pipelines
            .iter()
            .find(|(n, _)| n == entry)
            .map(|(_, p)| p)
            .unwrap_or_else(|| panic!("{}: no entry point {entry}", self.label))
    }

    /// Dispatches `entry` over enough workgroups of [`WORKGROUP`] threads to cover `threads`
    /// items. Counts above the per-dimension limit spill into y; shaders rebuild the linear
    /// index with `linear_id` from the prelude.
    pub fn dispatch(
        &self,
        pass: &mut wgpu::ComputePass<'_>,
        entry: &str,
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
        entry: &str,
        group: &wgpu::BindGroup,
        offsets: &[u32],
        groups: u32,
    ) {
        if groups == 0 {
            return;
        }
        pass.set_pipeline(self.pipeline(entry));
        pass.set_bind_group(0, group, offsets);
        let (x, y) = split_groups(groups);
        pass.dispatch_workgroups(x, y, 1);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_covers_all_groups() {
        for g in [1, 100, 65535, 65536, 1 << 20, 3_000_001] {
            let (x, y) = split_groups(g);
            assert!(
                x <= MAX_GROUPS_PER_DIM && x * y >= g && x * (y - 1) < g,
                "{g}"
            );
        }
    }
}
