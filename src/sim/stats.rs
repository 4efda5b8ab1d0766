//! Per-particle statistics for the CFL condition and stats.csv (shaders/stats.wgsl).

use super::fields::{GridFields, Particles};
use crate::gpu::Kernel;

crate::kernel_entries!(
    /// The entry points of shaders/stats.wgsl.
    ParticleStatsEntries { particles }
);

pub struct ParticleStats {
    kernel: Kernel,
    e: ParticleStatsEntries,
    group: wgpu::BindGroup,
}

impl ParticleStats {
    pub fn new(device: &wgpu::Device, f: &GridFields, p: &Particles) -> Self {
        let kernel = Kernel::new(device, "stats.wgsl", "ParticleStats");
        let group = kernel.bind(
            device,
            &[
                ("params", &f.params_buffer),
                ("pos", &p.pos),
                ("vel", &p.vel),
                ("counters", &f.counters),
                ("energy", &p.energy),
            ],
        );
        Self {
            e: ParticleStatsEntries::of(&kernel),
            kernel,
            group,
        }
    }

    pub fn record(&self, pass: &mut wgpu::ComputePass<'_>, p: &Particles) {
        self.kernel
            .dispatch(pass, self.e.particles, &self.group, p.count);
    }
}
