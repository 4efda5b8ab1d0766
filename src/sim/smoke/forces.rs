//! Buoyancy and vorticity confinement (shaders/smoke_forces.wgsl).

use super::SmokeFields;
use crate::gpu::{Binding::*, Kernel};
use crate::sim::fields::GridFields;

pub struct SmokeForces {
    kernel: Kernel,
    group: wgpu::BindGroup,
}

impl SmokeForces {
    pub fn new(device: &wgpu::Device, f: &GridFields, s: &SmokeFields) -> Self {
        let kernel = Kernel::new(
            device,
            "smoke_forces.wgsl",
            "SmokeForces",
            &["vorticity", "cell_forces", "apply"],
            &[
                Uniform,
                Uniform,
                StorageRead,
                Storage,
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
                &s.force,
            ],
        );
        Self { kernel, group }
    }

    /// The curl of the current velocity (also used by the stats and the vorticity view).
    pub fn record_vorticity(&self, pass: &mut wgpu::ComputePass<'_>, f: &GridFields) {
        self.kernel
            .dispatch(pass, "vorticity", &self.group, f.num_cells());
    }

    pub fn record(&self, pass: &mut wgpu::ComputePass<'_>, f: &GridFields) {
        self.record_vorticity(pass, f);
        self.kernel
            .dispatch(pass, "cell_forces", &self.group, f.num_cells());
        self.kernel
            .dispatch(pass, "apply", &self.group, f.num_faces());
    }
}
