//! Semi-Lagrangian and MacCormack advection of smoke velocity and dye
//! (shaders/smoke_advect.wgsl).

use super::SmokeFields;
use crate::gpu::{Binding::*, Kernel};
use crate::sim::fields::GridFields;

pub struct SmokeAdvect {
    kernel: Kernel,
    group: wgpu::BindGroup,
}

impl SmokeAdvect {
    pub fn new(device: &wgpu::Device, f: &GridFields, s: &SmokeFields) -> Self {
        let kernel = Kernel::new(
            device,
            "smoke_advect.wgsl",
            "SmokeAdvect",
            &[
                "faces_forward",
                "faces_finish",
                "cells_forward",
                "cells_finish",
            ],
            &[
                Uniform,
                Uniform,
                StorageRead,
                StorageRead,
                Storage,
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
                &f.vel_old,
                &s.vel_hat,
                &f.vel,
                &s.dye_old,
                &s.dye_hat,
                &s.dye,
            ],
        );
        Self { kernel, group }
    }

    /// Keeps the velocity and dye the step starts from (the advection reads them while it
    /// overwrites `vel` and `dye`). Record before the pass.
    pub fn record_copies(&self, enc: &mut wgpu::CommandEncoder, f: &GridFields, s: &SmokeFields) {
        enc.copy_buffer_to_buffer(&f.vel, 0, &f.vel_old, 0, f.vel.size());
        enc.copy_buffer_to_buffer(&s.dye, 0, &s.dye_old, 0, s.dye.size());
    }

    pub fn record(&self, pass: &mut wgpu::ComputePass<'_>, f: &GridFields) {
        let k = &self.kernel;
        k.dispatch(pass, "faces_forward", &self.group, f.num_faces());
        k.dispatch(pass, "faces_finish", &self.group, f.num_faces());
        k.dispatch(pass, "cells_forward", &self.group, f.num_cells());
        k.dispatch(pass, "cells_finish", &self.group, f.num_cells());
    }
}
