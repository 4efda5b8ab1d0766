//! Solid boundary conditions u.n = u_solid.n (boundary.wgsl).

use super::fields::GridFields;
use crate::gpu::Kernel;

crate::kernel_entries!(
    /// The entry points of boundary.wgsl.
    BoundaryEntries { main }
);

pub struct Boundary {
    kernel: Kernel,
    e: BoundaryEntries,
    group: wgpu::BindGroup,
}

impl Boundary {
    pub fn new(device: &wgpu::Device, f: &GridFields) -> Self {
        let kernel = Kernel::new(device, crate::wgsl!("boundary.wgsl"), "Boundary");
        let group = kernel.bind(
            device,
            &[
                ("params", &f.params_buffer),
                ("cell_type", &f.cell_type),
                ("solid_vel", &f.solid_vel),
                ("grid_vel", &f.vel),
                ("open", &f.open),
                ("solid", &f.solid),
            ],
        );
        Self {
            e: BoundaryEntries::of(&kernel),
            kernel,
            group,
        }
    }

    pub fn record(&self, pass: &mut wgpu::ComputePass<'_>, f: &GridFields) {
        self.kernel
            .dispatch(pass, self.e.main, &self.group, f.num_faces());
    }
}
