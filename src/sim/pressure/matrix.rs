//! Packed pressure matrix (diag, +x, +y, +z) built from the cell types and the free surface
//! (shaders/build_matrix.wgsl).

use super::PcgVectors;
use crate::gpu::{Binding::*, Kernel};
use crate::sim::fields::GridFields;

pub struct BuildMatrix {
    kernel: Kernel,
    group: wgpu::BindGroup,
}

impl BuildMatrix {
    pub fn new(device: &wgpu::Device, f: &GridFields, v: &PcgVectors) -> Self {
        let kernel = Kernel::new(
            device,
            "build_matrix.wgsl",
            "BuildMatrix",
            &["main"],
            &[Uniform, StorageRead, Storage, StorageRead, Storage],
        );
        let group = kernel.bind(
            device,
            &[
                &f.params_buffer,
                &f.cell_type,
                &v.a,
                &f.surface,
                &f.counters,
            ],
        );
        Self { kernel, group }
    }

    pub fn record(&self, pass: &mut wgpu::ComputePass<'_>, f: &GridFields) {
        self.kernel
            .dispatch(pass, "main", &self.group, f.num_cells());
    }
}
