//! Grid-to-particle transfer: the PIC/FLIP blend, or APIC's velocity and affine matrix
//! (shaders/g2p.wgsl).

use super::fields::{GridFields, Particles};
use crate::gpu::{Binding::*, Kernel};

pub struct G2p {
    kernel: Kernel,
    group: wgpu::BindGroup,
}

impl G2p {
    pub fn new(device: &wgpu::Device, f: &GridFields, p: &Particles) -> Self {
        let kernel = Kernel::new(
            device,
            "g2p.wgsl",
            "G2p",
            &["main"],
            &[
                Uniform,
                StorageRead,
                Storage,
                StorageRead,
                StorageRead,
                Storage,
                Storage,
            ],
        );
        let group = kernel.bind(
            device,
            &[
                &f.params_buffer,
                &p.pos,
                &p.vel,
                &f.vel,
                &f.vel_old,
                &p.flip_delta,
                &p.affine,
            ],
        );
        Self { kernel, group }
    }

    pub fn record(&self, pass: &mut wgpu::ComputePass<'_>, p: &Particles) {
        self.kernel.dispatch(pass, "main", &self.group, p.count);
    }
}
