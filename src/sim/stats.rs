//! Per-particle statistics for the CFL condition and stats.csv (shaders/stats.wgsl).

use super::fields::{GridFields, Particles};
use crate::gpu::{Binding::*, Kernel};

pub struct ParticleStats {
    kernel: Kernel,
    group: wgpu::BindGroup,
}

impl ParticleStats {
    pub fn new(device: &wgpu::Device, f: &GridFields, p: &Particles) -> Self {
        let kernel = Kernel::new(
            device,
            "stats.wgsl",
            "ParticleStats",
            &["particles"],
            &[Uniform, StorageRead, StorageRead, Storage, Storage],
        );
        let group = kernel.bind(
            device,
            &[&f.params_buffer, &p.pos, &p.vel, &f.counters, &p.energy],
        );
        Self { kernel, group }
    }

    pub fn record(&self, pass: &mut wgpu::ComputePass<'_>, p: &Particles) {
        self.kernel
            .dispatch(pass, "particles", &self.group, p.count);
    }
}
