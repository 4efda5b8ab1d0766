//! Particle-to-grid transfer with fixed-point integer atomics (shaders/p2g.wgsl).
//!
//! Scales (`MOMENTUM_SCALE`, `WEIGHT_SCALE` in src/gpu/constants.rs): momentum w*v is stored
//! with 2^15 per m/s, weights with 2^20. A face collects
//! about 8 units of weight at the seeding density (its trilinear weights from the particles
//! of two cells), so the i32 weight sum overflows only past 2048 units, and the momentum sum
//! only past 65536 m/s x weight. Particle velocities are clamped to
//! [`MAX_PARTICLE_SPEED`] per component before the transfer, which keeps a face below the
//! limit up to 128 units of weight (16 times the seeding density) even at that speed.
//! With APIC a contribution's velocity v + c . (x_face - x) is clamped to the same bound, so
//! the argument holds for either transfer.

use super::fields::{GridFields, Particles};
use crate::gpu::{Binding::*, Kernel};

// The overflow argument above is made for these scales.
const _: () = assert!(crate::gpu::constants::MOMENTUM_SCALE == 32768.0);
const _: () = assert!(crate::gpu::constants::WEIGHT_SCALE == 1048576.0);

/// Per-component clamp of particle velocity in P2G, m/s.
pub const MAX_PARTICLE_SPEED: f32 = 512.0;

pub struct P2g {
    kernel: Kernel,
    group: wgpu::BindGroup,
}

impl P2g {
    pub fn new(device: &wgpu::Device, f: &GridFields, p: &Particles) -> Self {
        let kernel = Kernel::new(
            device,
            "p2g.wgsl",
            "P2g",
            &["scatter", "normalize"],
            &[
                Uniform,
                StorageRead,
                StorageRead,
                Storage,
                Storage,
                Storage,
                Storage,
                Storage,
                StorageRead,
            ],
        );
        let group = kernel.bind(
            device,
            &[
                &f.params_buffer,
                &p.pos,
                &p.vel,
                &f.acc,
                &f.count,
                &f.vel,
                &f.vel_old,
                &f.weight,
                &p.affine,
            ],
        );
        Self { kernel, group }
    }

    /// Zeroes the accumulators; recorded on the encoder before the pass.
    pub fn clear(&self, encoder: &mut wgpu::CommandEncoder, f: &GridFields) {
        encoder.clear_buffer(&f.acc, 0, None);
        encoder.clear_buffer(&f.count, 0, None);
    }

    pub fn record(&self, pass: &mut wgpu::ComputePass<'_>, f: &GridFields, p: &Particles) {
        self.kernel.dispatch(pass, "scatter", &self.group, p.count);
        self.kernel
            .dispatch(pass, "normalize", &self.group, f.num_faces());
    }
}
