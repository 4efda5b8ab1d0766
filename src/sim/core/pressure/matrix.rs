//! Packed pressure matrix (diag, +x, +y, +z) built from the cell types and the free surface
//! (matrix.wgsl).

use super::PcgVectors;
use crate::gpu::Kernel;
use crate::sim::core::fields::GridFields;

crate::kernel_entries!(
    /// The entry points of matrix.wgsl.
    BuildMatrixEntries { main }
);

pub struct BuildMatrix {
    kernel: Kernel,
    e: BuildMatrixEntries,
    group: wgpu::BindGroup,
}

impl BuildMatrix {
    pub fn new(device: &wgpu::Device, f: &GridFields, v: &PcgVectors) -> Self {
        let kernel = Kernel::new(device, crate::wgsl!("matrix.wgsl"), "BuildMatrix");
        let group = kernel.bind(
            device,
            &[
                ("params", &f.params_buffer),
                ("cell_type", &f.cell_type),
                ("a", &v.a),
                ("surface", &f.surface),
                ("counters", &f.counters),
                ("open", &f.open),
                ("solid", &f.solid),
            ],
        );
        Self {
            e: BuildMatrixEntries::of(&kernel),
            kernel,
            group,
        }
    }

    pub fn record(&self, pass: &mut wgpu::ComputePass<'_>, f: &GridFields) {
        self.kernel
            .dispatch(pass, self.e.main, &self.group, f.num_cells());
    }
}
