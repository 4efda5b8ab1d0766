//! Pressure-gradient subtraction (project.wgsl).

use super::{fields::GridFields, pressure::PcgVectors};
use crate::gpu::Kernel;

crate::kernel_entries!(
    /// The entry points of project.wgsl.
    ProjectEntries { main }
);

pub struct Project {
    kernel: Kernel,
    e: ProjectEntries,
    group: wgpu::BindGroup,
    /// The same gradient of a refined solution's low part (`pressure.refine`).
    group_lo: Option<wgpu::BindGroup>,
}

impl Project {
    pub fn new(device: &wgpu::Device, f: &GridFields, v: &PcgVectors) -> Self {
        let kernel = Kernel::new(device, crate::wgsl!("project.wgsl"), "Project");
        let group = kernel.bind(
            device,
            &[
                ("params", &f.params_buffer),
                ("cell_type", &f.cell_type),
                ("phi", &v.p),
                ("grid_vel", &f.vel),
                ("surface", &f.surface),
                ("open", &f.open),
                ("curvature", &f.curvature),
            ],
        );
        Self {
            e: ProjectEntries::of(&kernel),
            kernel,
            group,
            group_lo: None,
        }
    }

    /// Binds `p_lo`, the low part of a refined solution, for [`Self::record_lo`].
    pub fn bind_lo(&mut self, device: &wgpu::Device, f: &GridFields, p_lo: &wgpu::Buffer) {
        self.group_lo = Some(self.kernel.bind(
            device,
            &[
                ("params", &f.params_buffer),
                ("cell_type", &f.cell_type),
                ("phi", p_lo),
                ("grid_vel", &f.vel),
                ("surface", &f.surface),
                ("open", &f.open),
                ("curvature", &f.curvature),
            ],
        ));
    }

    /// Subtracts the gradient of `p_lo` as well (the projection is linear in phi).
    pub fn record_lo(&self, pass: &mut wgpu::ComputePass<'_>, f: &GridFields) {
        if let Some(g) = &self.group_lo {
            self.kernel.dispatch(pass, self.e.main, g, f.num_faces());
        }
    }

    pub fn record(&self, pass: &mut wgpu::ComputePass<'_>, f: &GridFields) {
        self.kernel
            .dispatch(pass, self.e.main, &self.group, f.num_faces());
    }
}
