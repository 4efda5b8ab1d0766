//! Smoke statistics: dye total and centre, enstrophy, kinetic energy, max speed
//! (stats.wgsl).

use super::SmokeFields;
use crate::gpu::Kernel;
use crate::sim::core::fields::GridFields;

crate::kernel_entries!(
    /// The entry points of stats.wgsl.
    SmokeStatsEntries { main }
);

pub struct SmokeStats {
    kernel: Kernel,
    e: SmokeStatsEntries,
    group: wgpu::BindGroup,
}

impl SmokeStats {
    pub fn new(device: &wgpu::Device, f: &GridFields, s: &SmokeFields) -> Self {
        let kernel = Kernel::new(device, crate::wgsl!("stats.wgsl"), "SmokeStats");
        let group = kernel.bind(
            device,
            &[
                ("params", &f.params_buffer),
                ("smoke", &s.params_buffer),
                ("cell_type", &f.cell_type),
                ("vel", &f.vel),
                ("dye", &s.dye),
                ("curl", &s.curl),
                ("partials", &s.partials),
                ("counters", &f.counters),
            ],
        );
        Self {
            e: SmokeStatsEntries::of(&kernel),
            kernel,
            group,
        }
    }

    pub fn record(&self, pass: &mut wgpu::ComputePass<'_>, f: &GridFields) {
        self.kernel
            .dispatch(pass, self.e.main, &self.group, f.num_cells());
    }
}
