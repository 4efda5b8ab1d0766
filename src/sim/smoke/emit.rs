//! Smoke sources and mouse splats (emit.wgsl).

use super::SmokeFields;
use crate::gpu::Kernel;
use crate::sim::core::fields::GridFields;

crate::kernel_entries!(
    /// The entry points of emit.wgsl.
    SmokeEmitEntries { cells, faces }
);

pub struct SmokeEmit {
    kernel: Kernel,
    e: SmokeEmitEntries,
    group: wgpu::BindGroup,
}

impl SmokeEmit {
    pub fn new(device: &wgpu::Device, f: &GridFields, s: &SmokeFields) -> Self {
        let kernel = Kernel::new(device, crate::wgsl!("emit.wgsl"), "SmokeEmit");
        let group = kernel.bind(
            device,
            &[
                ("params", &f.params_buffer),
                ("smoke", &s.params_buffer),
                ("emitters", &s.emitters),
                ("cell_type", &f.cell_type),
                ("dye", &s.dye),
                ("grid_vel", &f.vel),
            ],
        );
        Self {
            e: SmokeEmitEntries::of(&kernel),
            kernel,
            group,
        }
    }

    pub fn record(&self, pass: &mut wgpu::ComputePass<'_>, f: &GridFields) {
        self.kernel
            .dispatch(pass, self.e.cells, &self.group, f.num_cells());
        self.kernel
            .dispatch(pass, self.e.faces, &self.group, f.num_faces());
    }
}
