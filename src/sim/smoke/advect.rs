//! Semi-Lagrangian and MacCormack advection of smoke velocity and dye
//! (advect.wgsl).

use super::SmokeFields;
use crate::gpu::Kernel;
use crate::sim::core::fields::GridFields;

crate::kernel_entries!(
    /// The entry points of advect.wgsl.
    SmokeAdvectEntries { faces_forward, faces_finish, cells_forward, cells_finish }
);

pub struct SmokeAdvect {
    kernel: Kernel,
    e: SmokeAdvectEntries,
    group: wgpu::BindGroup,
}

impl SmokeAdvect {
    pub fn new(device: &wgpu::Device, f: &GridFields, s: &SmokeFields) -> Self {
        let kernel = Kernel::new(device, crate::wgsl!("advect.wgsl"), "SmokeAdvect");
        let group = kernel.bind(
            device,
            &[
                ("params", &f.params_buffer),
                ("smoke", &s.params_buffer),
                ("cell_type", &f.cell_type),
                ("vel_old", &f.vel_old),
                ("vel_hat", &s.vel_hat),
                ("vel", &f.vel),
                ("dye_old", &s.dye_old),
                ("dye_hat", &s.dye_hat),
                ("dye", &s.dye),
            ],
        );
        Self {
            e: SmokeAdvectEntries::of(&kernel),
            kernel,
            group,
        }
    }

    /// Keeps the velocity and dye the step starts from (the advection reads them while it
    /// overwrites `vel` and `dye`). Record before the pass.
    pub fn record_copies(&self, enc: &mut wgpu::CommandEncoder, f: &GridFields, s: &SmokeFields) {
        enc.copy_buffer_to_buffer(&f.vel, 0, &f.vel_old, 0, f.vel.size());
        enc.copy_buffer_to_buffer(&s.dye, 0, &s.dye_old, 0, s.dye.size());
    }

    pub fn record(&self, pass: &mut wgpu::ComputePass<'_>, f: &GridFields) {
        let k = &self.kernel;
        k.dispatch(pass, self.e.faces_forward, &self.group, f.num_faces());
        k.dispatch(pass, self.e.faces_finish, &self.group, f.num_faces());
        k.dispatch(pass, self.e.cells_forward, &self.group, f.num_cells());
        k.dispatch(pass, self.e.cells_finish, &self.group, f.num_cells());
    }
}
