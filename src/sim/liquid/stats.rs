//! Per-particle statistics for the CFL condition and stats.csv (stats.wgsl).

use crate::gpu::Kernel;
use crate::sim::core::fields::{GridFields, Particles};

crate::kernel_entries!(
    /// The entry points of stats.wgsl.
    ParticleStatsEntries { particles }
);

pub struct ParticleStats {
    kernel: Kernel,
    e: ParticleStatsEntries,
    group: wgpu::BindGroup,
}

impl ParticleStats {
    pub fn new(device: &wgpu::Device, f: &GridFields, p: &Particles) -> Self {
        let kernel = Kernel::new(device, crate::wgsl!("stats.wgsl"), "ParticleStats");
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
