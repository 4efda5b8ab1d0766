//! Smoke sources and mouse splats (shaders/smoke_emit.wgsl).

use super::SmokeFields;
use crate::gpu::{Binding::*, Kernel};
use crate::sim::fields::GridFields;

pub struct SmokeEmit {
    kernel: Kernel,
    group: wgpu::BindGroup,
}

impl SmokeEmit {
    pub fn new(device: &wgpu::Device, f: &GridFields, s: &SmokeFields) -> Self {
        let kernel = Kernel::new(
            device,
            "smoke_emit.wgsl",
            "SmokeEmit",
            &["cells", "faces"],
            &[Uniform, Uniform, StorageRead, StorageRead, Storage, Storage],
        );
        let group = kernel.bind(
            device,
            &[
                &f.params_buffer,
                &s.params_buffer,
                &s.emitters,
                &f.cell_type,
                &s.dye,
                &f.vel,
            ],
        );
        Self { kernel, group }
    }

    pub fn record(&self, pass: &mut wgpu::ComputePass<'_>, f: &GridFields) {
        self.kernel
            .dispatch(pass, "cells", &self.group, f.num_cells());
        self.kernel
            .dispatch(pass, "faces", &self.group, f.num_faces());
    }
}
