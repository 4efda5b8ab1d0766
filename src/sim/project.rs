//! Pressure-gradient subtraction (shaders/project.wgsl).

use super::fields::GridFields;
use super::pressure::PcgVectors;
use crate::gpu::{Binding::*, Kernel};

pub struct Project {
    kernel: Kernel,
    group: wgpu::BindGroup,
}

impl Project {
    pub fn new(device: &wgpu::Device, f: &GridFields, v: &PcgVectors) -> Self {
        let kernel = Kernel::new(
            device,
            "project.wgsl",
            "Project",
            &["main"],
            &[Uniform, StorageRead, StorageRead, Storage, StorageRead],
        );
        let group = kernel.bind(
            device,
            &[&f.params_buffer, &f.cell_type, &v.p, &f.vel, &f.surface],
        );
        Self { kernel, group }
    }

    pub fn record(&self, pass: &mut wgpu::ComputePass<'_>, f: &GridFields) {
        self.kernel
            .dispatch(pass, "main", &self.group, f.num_faces());
    }
}
