//! Velocity extrapolation into AIR, layer by layer (extrapolate.wgsl).

use crate::gpu::Kernel;
use crate::sim::core::fields::GridFields;

crate::kernel_entries!(
    /// The entry points of extrapolate.wgsl.
    ExtrapolateEntries { init, layer, finish }
);

pub struct Extrapolate {
    kernel: Kernel,
    e: ExtrapolateEntries,
    /// groups[0] reads valid[1] and writes valid[0]; groups[1] the other way round.
    groups: [wgpu::BindGroup; 2],
}

impl Extrapolate {
    pub fn new(device: &wgpu::Device, f: &GridFields) -> Self {
        let kernel = Kernel::new(device, crate::wgsl!("extrapolate.wgsl"), "Extrapolate");
        let make = |src: usize, dst: usize| {
            kernel.bind(
                device,
                &[
                    ("params", &f.params_buffer),
                    ("cell_type", &f.cell_type),
                    ("valid_in", &f.valid[src]),
                    ("valid_out", &f.valid[dst]),
                    ("grid_vel", &f.vel),
                    ("weight", &f.weight),
                ],
            )
        };
        let groups = [make(1, 0), make(0, 1)];
        Self {
            e: ExtrapolateEntries::of(&kernel),
            kernel,
            groups,
        }
    }

    pub fn record(&self, pass: &mut wgpu::ComputePass<'_>, f: &GridFields, layers: u32) {
        let n = f.num_faces();
        // init writes valid[0]; layer l reads the buffer written last and writes the other.
        self.kernel.dispatch(pass, self.e.init, &self.groups[0], n);
        let mut latest = 0;
        for _ in 0..layers {
            let g = if latest == 0 { 1 } else { 0 };
            self.kernel.dispatch(pass, self.e.layer, &self.groups[g], n);
            latest = g;
        }
        // finish reads valid[latest]: that is the input of the group writing the other one.
        let g = if latest == 0 { 1 } else { 0 };
        self.kernel
            .dispatch(pass, self.e.finish, &self.groups[g], n);
    }
}
