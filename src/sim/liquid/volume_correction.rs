//! Volume correction by density projection (volume_correction.wgsl).
//!
//! PIC/FLIP particles drift: they bunch where the flow converges numerically and the liquid
//! they represent shrinks. A divergence source in the pressure right-hand side (Bridson's
//! book) would push them apart through the velocities, which FLIP then keeps as kinetic
//! energy and a pool never comes to rest; a position-based projection moves the particles
//! and leaves the velocities alone. It is a second Poisson solve per substep with the
//! pressure matrix and preconditioner (set up once for both solves), cut short at
//! [`CORRECTION_ITERATIONS`].
//!
//! The solve runs before the pressure's (it shares the matrix), but the particles move
//! after G2P: the pressure solve weighs each face with the particles P2G put around it,
//! and G2P must hand the change back to those same particles where they were. Moved
//! first, they gathered the change at new places, and next to a body thrown through a
//! free blob the liquid took up 3% less momentum than the body lost in the first substep.
//! The potential waits in a buffer of its own (`VolumeCorrection::potential`) while the
//! pressure solve uses the solution vector.

use crate::gpu::{storage_buffer, Kernel};
use crate::sim::{
    core::fields::{GridFields, Particles},
    core::pressure::PcgVectors,
};

/// Relative residual at which the correction solve stops early.
pub const CORRECTION_TOLERANCE: f64 = 1e-2;
/// Iterations of the correction solve: one preconditioned CG step (with `mg`, one V-cycle)
/// leaves a residual of about a tenth, and the next substep corrects what is left. The
/// liquid keeps its volume and waves as well as with 2-3 iterations; the correction adds
/// about 15% of the pressure solve's GPU time (benchmarks/history.md).
pub const CORRECTION_ITERATIONS: u32 = 1;

crate::kernel_entries!(
    /// The entry points of volume_correction.wgsl.
    VolumeCorrectionEntries { rhs, gradient, displace }
);

pub struct VolumeCorrection {
    kernel: Kernel,
    e: VolumeCorrectionEntries,
    group: wgpu::BindGroup,
    /// The correction's potential, copied from the solve's solution (4 bytes per cell),
    /// which the gradient reads after G2P.
    potential: wgpu::Buffer,
}

impl VolumeCorrection {
    pub fn new(device: &wgpu::Device, f: &GridFields, v: &PcgVectors, p: &Particles) -> Self {
        let kernel = Kernel::new(
            device,
            crate::wgsl!("volume_correction.wgsl"),
            "VolumeCorrection",
        );
        let potential = storage_buffer(
            device,
            "VolumeCorrection::potential",
            Self::potential_bytes(f.num_cells() as u64),
        );
        let group = kernel.bind(
            device,
            &[
                ("params", &f.params_buffer),
                ("cell_type", &f.cell_type),
                ("density", &f.density),
                ("b", &v.b),
                ("phi", &potential),
                ("solid", &f.solid),
                ("pos", &p.pos),
                ("surface", &f.surface),
                // The potential's gradient per face: the first half of P2G's accumulators,
                // idle from the end of P2G until the extrapolation writes its flags there (no
                // buffer of its own, 4 bytes per face saved).
                ("grad", &f.acc),
                ("open", &f.open),
            ],
        );
        Self {
            e: VolumeCorrectionEntries::of(&kernel),
            kernel,
            group,
            potential,
        }
    }

    /// Bytes of the potential's buffer for a grid of `cells` cells.
    pub fn potential_bytes(cells: u64) -> u64 {
        (cells * 4).max(4)
    }

    /// Keeps the solve's solution (`v.p`) for [`Self::record_displace`] after G2P.
    pub fn record_keep_potential(&self, enc: &mut wgpu::CommandEncoder, v: &PcgVectors) {
        enc.copy_buffer_to_buffer(&v.p, 0, &self.potential, 0, self.potential.size());
    }

    /// b = -h^2 max(density - 1, 0) on FLUID cells.
    pub fn record_rhs(&self, pass: &mut wgpu::ComputePass<'_>, f: &GridFields) {
        self.kernel
            .dispatch(pass, self.e.rhs, &self.group, f.num_cells());
    }

    /// Moves every particle by grad(psi), psi being the potential kept from the solve: the
    /// gradient across every face (into P2G's accumulators, idle between G2P and the
    /// spacing), then its interpolation at each particle. Recorded after G2P.
    pub fn record_displace(&self, pass: &mut wgpu::ComputePass<'_>, f: &GridFields, p: &Particles) {
        self.kernel
            .dispatch(pass, self.e.gradient, &self.group, f.num_faces());
        self.kernel
            .dispatch(pass, self.e.displace, &self.group, p.count);
    }
}
