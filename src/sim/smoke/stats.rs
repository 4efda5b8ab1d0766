//! Smoke statistics: dye total and centre, enstrophy, kinetic energy, max speed
//! (shaders/smoke_stats.wgsl).

use super::SmokeFields;
use crate::gpu::{Binding::*, Kernel};
use crate::sim::fields::GridFields;

pub struct SmokeStats {
    kernel: Kernel,
    group: wgpu::BindGroup,
}

impl SmokeStats {
    pub fn new(device: &wgpu::Device, f: &GridFields, s: &SmokeFields) -> Self {
        let kernel = Kernel::new(
            device,
            "smoke_stats.wgsl",
            "SmokeStats",
            &["main"],
            &[
                Uniform,
                Uniform,
                StorageRead,
                StorageRead,
                StorageRead,
                StorageRead,
                Storage,
                Storage,
            ],
        );
        let group = kernel.bind(
            device,
            &[
                &f.params_buffer,
                &s.params_buffer,
                &f.cell_type,
                &f.vel,
                &s.dye,
                &s.curl,
                &s.partials,
                &f.counters,
            ],
        );
        Self { kernel, group }
    }

    pub fn record(&self, pass: &mut wgpu::ComputePass<'_>, f: &GridFields) {
        self.kernel
            .dispatch(pass, "main", &self.group, f.num_cells());
    }
}
