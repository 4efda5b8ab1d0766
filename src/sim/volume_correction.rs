//! Volume correction by density projection (shaders/volume_correction.wgsl).
//!
//! PIC/FLIP particles drift: they bunch where the flow converges numerically and the liquid
//! they represent shrinks. A divergence source in the pressure right-hand side (Bridson's
//! book) would push them apart through the velocities, which FLIP then keeps as kinetic
//! energy and a pool never comes to rest; a position-based projection moves the particles
//! and leaves the velocities alone. It is a second Poisson solve per substep with the
//! pressure matrix and preconditioner (set up once for both solves) at a loose tolerance
//! ([`CORRECTION_TOLERANCE`]).

use super::fields::{GridFields, Particles};
use super::pressure::PcgVectors;
use crate::gpu::{Binding::*, Kernel};

/// Relative residual of the correction solve: the displacement is a fraction of a cell and
/// the next substep corrects what is left, so two digits are plenty.
pub const CORRECTION_TOLERANCE: f64 = 1e-2;
/// Iterations recorded for the correction (they stop early at the tolerance). `mg` reaches
/// the tolerance in 1-2; a weaker preconditioner leaves a larger residual, which later
/// substeps correct further.
pub const CORRECTION_ITERATIONS: u32 = 3;

pub struct VolumeCorrection {
    kernel: Kernel,
    group: wgpu::BindGroup,
}

impl VolumeCorrection {
    pub fn new(device: &wgpu::Device, f: &GridFields, v: &PcgVectors, p: &Particles) -> Self {
        let kernel = Kernel::new(
            device,
            "volume_correction.wgsl",
            "VolumeCorrection",
            &["rhs", "displace"],
            &[
                Uniform,
                StorageRead,
                StorageRead,
                Storage,
                StorageRead,
                StorageRead,
                Storage,
                StorageRead,
            ],
        );
        let group = kernel.bind(
            device,
            &[
                &f.params_buffer,
                &f.cell_type,
                &f.density,
                &v.b,
                &v.p,
                &f.solid,
                &p.pos,
                &f.surface,
            ],
        );
        Self { kernel, group }
    }

    /// b = -h^2 max(density - 1, 0) on FLUID cells.
    pub fn record_rhs(&self, pass: &mut wgpu::ComputePass<'_>, f: &GridFields) {
        self.kernel
            .dispatch(pass, "rhs", &self.group, f.num_cells());
    }

    /// Moves every particle by grad(psi), psi being the solution in `PcgVectors::p`.
    pub fn record_displace(&self, pass: &mut wgpu::ComputePass<'_>, p: &Particles) {
        self.kernel.dispatch(pass, "displace", &self.group, p.count);
    }
}
