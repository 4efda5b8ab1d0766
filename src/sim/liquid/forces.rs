//! Body forces (gravity) on faces next to the liquid or under particles (forces.wgsl).

use crate::gpu::Kernel;
use crate::sim::core::fields::GridFields;

crate::kernel_entries!(
    /// The entry points of forces.wgsl.
    ForcesEntries { main }
);

pub struct Forces {
    kernel: Kernel,
    e: ForcesEntries,
    group: wgpu::BindGroup,
}

impl Forces {
    pub fn new(device: &wgpu::Device, f: &GridFields) -> Self {
        let kernel = Kernel::new(device, crate::wgsl!("forces.wgsl"), "Forces");
        let group = kernel.bind(
            device,
            &[
                ("params", &f.params_buffer),
                ("cell_type", &f.cell_type),
                ("grid_vel", &f.vel),
                ("weighted", &f.weighted),
            ],
        );
        Self {
            e: ForcesEntries::of(&kernel),
            kernel,
            group,
        }
    }

    pub fn record(&self, pass: &mut wgpu::ComputePass<'_>, f: &GridFields) {
        self.kernel
            .dispatch(pass, self.e.main, &self.group, f.num_faces());
    }
}
