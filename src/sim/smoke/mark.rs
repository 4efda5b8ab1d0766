//! Smoke cell types from the static solids (mark.wgsl); rigid bodies, moving
//! ones included, are stamped over them by the bodies' coupling, and `record_clear` then
//! empties every SOLID cell of dye.

use super::SmokeFields;
use crate::gpu::Kernel;
use crate::sim::core::fields::GridFields;

crate::kernel_entries!(
    /// The entry points of mark.wgsl.
    SmokeMarkEntries { main, clear }
);

pub struct SmokeMark {
    kernel: Kernel,
    e: SmokeMarkEntries,
    group: wgpu::BindGroup,
}

impl SmokeMark {
    pub fn new(device: &wgpu::Device, f: &GridFields, s: &SmokeFields) -> Self {
        let kernel = Kernel::new(device, crate::wgsl!("mark.wgsl"), "SmokeMark");
        let group = kernel.bind(
            device,
            &[
                ("params", &f.params_buffer),
                ("static_solid", &s.static_solid),
                ("static_vel", &s.static_vel),
                ("cell_type", &f.cell_type),
                ("solid", &f.solid),
                ("solid_vel", &f.solid_vel),
                ("dye", &s.dye),
                ("counters", &f.counters),
            ],
        );
        Self {
            e: SmokeMarkEntries::of(&kernel),
            kernel,
            group,
        }
    }

    /// Cell types and solid velocities of the static solids.
    pub fn record(&self, pass: &mut wgpu::ComputePass<'_>, f: &GridFields) {
        self.kernel
            .dispatch(pass, self.e.main, &self.group, f.num_cells());
    }

    /// Dye and temperature of every SOLID cell to zero (after the bodies are stamped).
    pub fn record_clear(&self, pass: &mut wgpu::ComputePass<'_>, f: &GridFields) {
        self.kernel
            .dispatch(pass, self.e.clear, &self.group, f.num_cells());
    }
}
