//! Divergence and pressure right-hand side (divergence.wgsl).

use super::{fields::GridFields, pressure::PcgVectors};
use crate::gpu::Kernel;

crate::kernel_entries!(
    /// The entry points of divergence.wgsl.
    DivergenceEntries { before, after }
);

pub struct Divergence {
    kernel: Kernel,
    e: DivergenceEntries,
    group: wgpu::BindGroup,
}

impl Divergence {
    pub fn new(device: &wgpu::Device, f: &GridFields, v: &PcgVectors) -> Self {
        let kernel = Kernel::new(device, crate::wgsl!("divergence.wgsl"), "Divergence");
        let group = kernel.bind(
            device,
            &[
                ("params", &f.params_buffer),
                ("cell_type", &f.cell_type),
                ("grid_vel", &f.vel),
                ("divergence", &f.divergence),
                ("b", &v.b),
                ("div_after", &f.div_after),
                ("counters", &f.counters),
                ("open", &f.open),
                ("solid", &f.solid),
                ("solid_vel", &f.solid_vel),
            ],
        );
        Self {
            e: DivergenceEntries::of(&kernel),
            kernel,
            group,
        }
    }

    /// Divergence of the velocity about to be projected, and b = -h^2 div.
    pub fn record(&self, pass: &mut wgpu::ComputePass<'_>, f: &GridFields) {
        self.kernel
            .dispatch(pass, self.e.before, &self.group, f.num_cells());
    }

    /// Divergence left after projection, with its max over FLUID cells in the counter
    /// `COUNTER_MAX_DIVERGENCE`.
    pub fn record_after(&self, pass: &mut wgpu::ComputePass<'_>, f: &GridFields) {
        self.kernel
            .dispatch(pass, self.e.after, &self.group, f.num_cells());
    }
}
