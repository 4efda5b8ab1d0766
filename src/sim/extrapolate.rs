//! Velocity extrapolation into AIR, layer by layer (shaders/extrapolate.wgsl).

use super::fields::GridFields;
use crate::gpu::{Binding::*, Kernel};

pub struct Extrapolate {
    kernel: Kernel,
    /// groups[0] reads valid[1] and writes valid[0]; groups[1] the other way round.
    groups: [wgpu::BindGroup; 2],
}

impl Extrapolate {
    pub fn new(device: &wgpu::Device, f: &GridFields) -> Self {
        let kernel = Kernel::new(
            device,
            "extrapolate.wgsl",
            "Extrapolate",
            &["init", "layer", "finish"],
            &[
                Uniform,
                StorageRead,
                StorageRead,
                Storage,
                Storage,
                StorageRead,
            ],
        );
        let make = |src: usize, dst: usize| {
            kernel.bind(
                device,
                &[
                    &f.params_buffer,
                    &f.cell_type,
                    &f.valid[src],
                    &f.valid[dst],
                    &f.vel,
                    &f.weight,
                ],
            )
        };
        let groups = [make(1, 0), make(0, 1)];
        Self { kernel, groups }
    }

    pub fn record(&self, pass: &mut wgpu::ComputePass<'_>, f: &GridFields, layers: u32) {
        let n = f.num_faces();
        // init writes valid[0]; layer l reads the buffer written last and writes the other.
        self.kernel.dispatch(pass, "init", &self.groups[0], n);
        let mut latest = 0;
        for _ in 0..layers {
            let g = if latest == 0 { 1 } else { 0 };
            self.kernel.dispatch(pass, "layer", &self.groups[g], n);
            latest = g;
        }
        // finish reads valid[latest]: that is the input of the group writing the other one.
        let g = if latest == 0 { 1 } else { 0 };
        self.kernel.dispatch(pass, "finish", &self.groups[g], n);
    }
}
