//! Cell classification SOLID / FLUID / AIR (shaders/mark_cells.wgsl).

use super::fields::GridFields;
use crate::gpu::{Binding::*, Kernel};

pub struct MarkCells {
    kernel: Kernel,
    group: wgpu::BindGroup,
}

impl MarkCells {
    pub fn new(device: &wgpu::Device, f: &GridFields) -> Self {
        let kernel = Kernel::new(
            device,
            "mark_cells.wgsl",
            "MarkCells",
            &["main", "filter_density"],
            &[
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
                &f.count,
                &f.solid,
                &f.cell_type,
                &f.counters,
                &f.weight,
                &f.density,
                &f.surface,
            ],
        );
        Self { kernel, group }
    }

    pub fn record(&self, pass: &mut wgpu::ComputePass<'_>, f: &GridFields) {
        self.kernel
            .dispatch(pass, "main", &self.group, f.num_cells());
        self.kernel
            .dispatch(pass, "filter_density", &self.group, f.num_cells());
    }
}
