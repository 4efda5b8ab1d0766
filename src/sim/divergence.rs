//! Divergence and pressure right-hand side (shaders/divergence.wgsl).

use super::fields::GridFields;
use super::pressure::PcgVectors;
use crate::gpu::{Binding::*, Kernel};

pub struct Divergence {
    kernel: Kernel,
    group: wgpu::BindGroup,
}

impl Divergence {
    pub fn new(device: &wgpu::Device, f: &GridFields, v: &PcgVectors) -> Self {
        let kernel = Kernel::new(
            device,
            "divergence.wgsl",
            "Divergence",
            &["before", "after"],
            &[
                Uniform,
                StorageRead,
                StorageRead,
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
                &f.cell_type,
                &f.vel,
                &f.divergence,
                &v.b,
                &f.div_after,
                &f.counters,
            ],
        );
        Self { kernel, group }
    }

    /// Divergence of the velocity about to be projected, and b = -h^2 div.
    pub fn record(&self, pass: &mut wgpu::ComputePass<'_>, f: &GridFields) {
        self.kernel
            .dispatch(pass, "before", &self.group, f.num_cells());
    }

    /// Divergence left after projection, with its max over FLUID cells in the counter
    /// `COUNTER_MAX_DIVERGENCE`.
    pub fn record_after(&self, pass: &mut wgpu::ComputePass<'_>, f: &GridFields) {
        self.kernel
            .dispatch(pass, "after", &self.group, f.num_cells());
    }
}
