//! Particle advection (RK2) and the domain / solid constraints (advect.wgsl).

use crate::gpu::Kernel;
use crate::sim::core::fields::{GridFields, Particles};

crate::kernel_entries!(
    /// The entry points of advect.wgsl.
    AdvectEntries { main }
);

pub struct Advect {
    kernel: Kernel,
    e: AdvectEntries,
    group: wgpu::BindGroup,
}

impl Advect {
    pub fn new(device: &wgpu::Device, f: &GridFields, p: &Particles) -> Self {
        let kernel = Kernel::new(device, crate::wgsl!("advect.wgsl"), "Advect");
        let group = kernel.bind(
            device,
            &[
                ("params", &f.params_buffer),
                ("solid", &f.solid),
                ("grid_vel", &f.vel),
                ("pos", &p.pos),
                ("vel", &p.vel),
                ("solid_vel", &f.solid_vel),
            ],
        );
        Self {
            e: AdvectEntries::of(&kernel),
            kernel,
            group,
        }
    }

    pub fn record(&self, pass: &mut wgpu::ComputePass<'_>, p: &Particles) {
        self.kernel
            .dispatch(pass, self.e.main, &self.group, p.count);
    }
}
