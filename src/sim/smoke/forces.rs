//! Buoyancy and vorticity confinement (forces.wgsl).

use super::SmokeFields;
use crate::gpu::Kernel;
use crate::sim::core::fields::GridFields;

crate::kernel_entries!(
    /// The entry points of forces.wgsl.
    SmokeForcesEntries { vorticity, cell_forces, apply }
);

pub struct SmokeForces {
    kernel: Kernel,
    e: SmokeForcesEntries,
    group: wgpu::BindGroup,
}

impl SmokeForces {
    pub fn new(device: &wgpu::Device, f: &GridFields, s: &SmokeFields) -> Self {
        let kernel = Kernel::new(device, crate::wgsl!("forces.wgsl"), "SmokeForces");
        let group = kernel.bind(
            device,
            &[
                ("params", &f.params_buffer),
                ("smoke", &s.params_buffer),
                ("cell_type", &f.cell_type),
                ("vel", &f.vel),
                ("dye", &s.dye),
                ("curl", &s.curl),
                ("force", &s.force),
            ],
        );
        Self {
            e: SmokeForcesEntries::of(&kernel),
            kernel,
            group,
        }
    }

    /// The curl of the current velocity (also used by the stats and the vorticity view).
    pub fn record_vorticity(&self, pass: &mut wgpu::ComputePass<'_>, f: &GridFields) {
        self.kernel
            .dispatch(pass, self.e.vorticity, &self.group, f.num_cells());
    }

    pub fn record(&self, pass: &mut wgpu::ComputePass<'_>, f: &GridFields) {
        self.record_vorticity(pass, f);
        self.kernel
            .dispatch(pass, self.e.cell_forces, &self.group, f.num_cells());
        self.kernel
            .dispatch(pass, self.e.apply, &self.group, f.num_faces());
    }
}
