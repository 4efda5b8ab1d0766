//! Particle-to-grid transfer with fixed-point integer atomics (p2g.wgsl).
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

use crate::gpu::Kernel;
use crate::sim::core::fields::{GridFields, Particles};

// The overflow argument above is made for these scales.
const _: () = assert!(crate::gpu::constants::MOMENTUM_SCALE == 32768.0);
const _: () = assert!(crate::gpu::constants::WEIGHT_SCALE == 1048576.0);

pub use crate::sim::core::params::MAX_PARTICLE_SPEED;

crate::kernel_entries!(
    /// The entry points of p2g.wgsl.
    P2gEntries { scatter, normalize }
);

pub struct P2g {
    kernel: Kernel,
    e: P2gEntries,
    group: wgpu::BindGroup,
}

impl P2g {
    pub fn new(device: &wgpu::Device, f: &GridFields, p: &Particles) -> Self {
        let kernel = Kernel::new(device, crate::wgsl!("p2g.wgsl"), "P2g");
        let group = kernel.bind(
            device,
            &[
                ("params", &f.params_buffer),
                ("pos", &p.pos),
                ("vel", &p.vel),
                ("acc", &f.acc),
                ("count", &f.count),
                ("grid_vel", &f.vel),
                ("vel_old", &f.vel_old),
                ("weight", &f.weight),
                ("affine", &p.affine),
                ("weighted", &f.weighted),
            ],
        );
        Self {
            e: P2gEntries::of(&kernel),
            kernel,
            group,
        }
    }

    /// Zeroes the accumulators (P2G's pairs only: the rest of `acc` is the later stages'
    /// room, which they set before reading), the counts and the weight bits; recorded on
    /// the encoder before the pass.
    pub fn clear(&self, encoder: &mut wgpu::CommandEncoder, f: &GridFields) {
        encoder.clear_buffer(&f.acc, 0, Some(f.num_faces() as u64 * 8));
        encoder.clear_buffer(&f.count, 0, None);
        encoder.clear_buffer(&f.weighted, 0, None);
    }

    pub fn record(&self, pass: &mut wgpu::ComputePass<'_>, f: &GridFields, p: &Particles) {
        self.kernel
            .dispatch(pass, self.e.scatter, &self.group, p.count);
        self.kernel
            .dispatch(pass, self.e.normalize, &self.group, f.num_faces());
    }
}
