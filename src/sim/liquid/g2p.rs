//! Grid-to-particle transfer: the PIC/FLIP blend, or APIC's velocity and affine matrix
//! (g2p.wgsl).

use crate::gpu::Kernel;
use crate::sim::core::fields::{GridFields, Particles};

crate::kernel_entries!(
    /// The entry points of g2p.wgsl.
    G2pEntries { main }
);

pub struct G2p {
    kernel: Kernel,
    e: G2pEntries,
    group: wgpu::BindGroup,
}

impl G2p {
    pub fn new(device: &wgpu::Device, f: &GridFields, p: &Particles) -> Self {
        let kernel = Kernel::new(device, crate::wgsl!("g2p.wgsl"), "G2p");
        let group = kernel.bind(
            device,
            &[
                ("params", &f.params_buffer),
                ("pos", &p.pos),
                ("vel", &p.vel),
                ("grid_vel", &f.vel),
                ("vel_old", &f.vel_old),
                ("flip_delta", &p.flip_delta),
                ("affine", &p.affine),
                ("gather_scale", &f.gather_scale),
            ],
        );
        Self {
            e: G2pEntries::of(&kernel),
            kernel,
            group,
        }
    }

    pub fn record(&self, pass: &mut wgpu::ComputePass<'_>, p: &Particles) {
        self.kernel
            .dispatch(pass, self.e.main, &self.group, p.count);
    }
}
