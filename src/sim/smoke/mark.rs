//! Smoke cell types from the static solids and the moving obstacle (shaders/smoke_mark.wgsl).

use super::SmokeFields;
use crate::gpu::{Binding::*, Kernel};
use crate::sim::fields::GridFields;

pub struct SmokeMark {
    kernel: Kernel,
    group: wgpu::BindGroup,
}

impl SmokeMark {
    pub fn new(device: &wgpu::Device, f: &GridFields, s: &SmokeFields) -> Self {
        let kernel = Kernel::new(
            device,
            "smoke_mark.wgsl",
            "SmokeMark",
            &["main"],
            &[
                Uniform,
                Uniform,
                StorageRead,
                StorageRead,
                Storage,
                Storage,
                Storage,
                Storage,
                Storage,
            ],
        );
        let group = kernel.bind(
            device,
            &[
                &f.params_buffer,
                &s.params_buffer,
                &s.static_solid,
                &s.static_vel,
                &f.cell_type,
                &f.solid,
                &f.solid_vel,
                &s.dye,
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
