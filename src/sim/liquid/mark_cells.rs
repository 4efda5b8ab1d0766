//! Cell classification SOLID / FLUID / AIR (mark_cells.wgsl).

use crate::gpu::Kernel;
use crate::sim::core::fields::GridFields;

crate::kernel_entries!(
    /// The entry points of mark_cells.wgsl.
    MarkCellsEntries { main, cut_cells, filter_density }
);

pub struct MarkCells {
    kernel: Kernel,
    e: MarkCellsEntries,
    group: wgpu::BindGroup,
}

impl MarkCells {
    pub fn new(device: &wgpu::Device, f: &GridFields) -> Self {
        let kernel = Kernel::new(device, crate::wgsl!("mark_cells.wgsl"), "MarkCells");
        let group = kernel.bind(
            device,
            &[
                ("params", &f.params_buffer),
                ("count", &f.count),
                ("solid", &f.solid),
                ("cell_type", &f.cell_type),
                ("counters", &f.counters),
                ("acc", &f.acc),
                ("density", &f.density),
                ("surface", &f.surface),
                ("open", &f.open),
            ],
        );
        Self {
            e: MarkCellsEntries::of(&kernel),
            kernel,
            group,
        }
    }

    pub fn record(&self, pass: &mut wgpu::ComputePass<'_>, f: &GridFields) {
        self.kernel
            .dispatch(pass, self.e.main, &self.group, f.num_cells());
        if f.has_cut_faces() {
            self.kernel
                .dispatch(pass, self.e.cut_cells, &self.group, f.num_cells());
        }
        self.kernel
            .dispatch(pass, self.e.filter_density, &self.group, f.num_cells());
    }
}
