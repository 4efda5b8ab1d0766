//! Solid boundary conditions u.n = u_solid.n (shaders/boundary.wgsl).

use super::fields::GridFields;
use crate::gpu::{Binding::*, Kernel};

pub struct Boundary {
    kernel: Kernel,
    group: wgpu::BindGroup,
}

impl Boundary {
    pub fn new(device: &wgpu::Device, f: &GridFields) -> Self {
        let kernel = Kernel::new(
            device,
            "boundary.wgsl",
            "Boundary",
            &["main"],
            &[Uniform, StorageRead, StorageRead, Storage],
        );
        let group = kernel.bind(
            device,
            &[&f.params_buffer, &f.cell_type, &f.solid_vel, &f.vel],
        );
        Self { kernel, group }
    }

    pub fn record(&self, pass: &mut wgpu::ComputePass<'_>, f: &GridFields) {
        self.kernel
            .dispatch(pass, "main", &self.group, f.num_faces());
    }
}
