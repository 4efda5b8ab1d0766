//! Body forces (gravity) on faces next to the liquid or under particles (shaders/forces.wgsl).

use super::fields::GridFields;
use crate::gpu::{Binding::*, Kernel};

pub struct Forces {
    kernel: Kernel,
    group: wgpu::BindGroup,
}

impl Forces {
    pub fn new(device: &wgpu::Device, f: &GridFields) -> Self {
        let kernel = Kernel::new(
            device,
            "forces.wgsl",
            "Forces",
            &["main"],
            &[Uniform, StorageRead, Storage, StorageRead],
        );
        let group = kernel.bind(device, &[&f.params_buffer, &f.cell_type, &f.vel, &f.weight]);
        Self { kernel, group }
    }

    pub fn record(&self, pass: &mut wgpu::ComputePass<'_>, f: &GridFields) {
        self.kernel
            .dispatch(pass, "main", &self.group, f.num_faces());
    }
}
