//! Particle advection (RK2) and the domain / solid constraints (shaders/advect.wgsl).

use super::fields::{GridFields, Particles};
use crate::gpu::{Binding::*, Kernel};

pub struct Advect {
    kernel: Kernel,
    group: wgpu::BindGroup,
}

impl Advect {
    pub fn new(device: &wgpu::Device, f: &GridFields, p: &Particles) -> Self {
        let kernel = Kernel::new(
            device,
            "advect.wgsl",
            "Advect",
            &["main"],
            &[Uniform, StorageRead, StorageRead, Storage, Storage],
        );
        let group = kernel.bind(
            device,
            &[&f.params_buffer, &f.solid, &f.vel, &p.pos, &p.vel],
        );
        Self { kernel, group }
    }

    pub fn record(&self, pass: &mut wgpu::ComputePass<'_>, p: &Particles) {
        self.kernel.dispatch(pass, "main", &self.group, p.count);
    }
}
