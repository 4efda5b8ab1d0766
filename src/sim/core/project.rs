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
            ],
        );
        Self {
            e: ProjectEntries::of(&kernel),
            kernel,
            group,
        }
    }

    pub fn record(&self, pass: &mut wgpu::ComputePass<'_>, f: &GridFields) {
        self.kernel
            .dispatch(pass, self.e.main, &self.group, f.num_faces());
    }
}
