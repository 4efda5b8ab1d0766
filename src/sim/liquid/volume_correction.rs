//! Volume correction by density projection (volume_correction.wgsl).
//!
//! PIC/FLIP particles drift: they bunch where the flow converges numerically and the liquid
//! they represent shrinks. A divergence source in the pressure right-hand side (Bridson's
//! book) would push them apart through the velocities, which FLIP then keeps as kinetic
//! energy and a pool never comes to rest; a position-based projection moves the particles
//! and leaves the velocities alone. It is a second Poisson solve per substep with the
//! pressure matrix and preconditioner (set up once for both solves), cut short at
//! [`CORRECTION_ITERATIONS`].

use crate::gpu::Kernel;
use crate::sim::{
    core::fields::{GridFields, Particles},
    core::pressure::PcgVectors,
};

/// Relative residual at which the correction solve stops early.
pub const CORRECTION_TOLERANCE: f64 = 1e-2;
/// Iterations of the correction solve: one preconditioned CG step (with `mg`, one V-cycle)
/// leaves a residual of about a tenth, and the next substep corrects what is left. The
/// liquid keeps its volume and waves as well as with 2-3 iterations; the correction adds
/// about 15% of the pressure solve's GPU time (BENCHMARKS.md).
pub const CORRECTION_ITERATIONS: u32 = 1;

crate::kernel_entries!(
    /// The entry points of volume_correction.wgsl.
    VolumeCorrectionEntries { rhs, gradient, displace }
);

pub struct VolumeCorrection {
    kernel: Kernel,
    e: VolumeCorrectionEntries,
    group: wgpu::BindGroup,
}

impl VolumeCorrection {
    pub fn new(device: &wgpu::Device, f: &GridFields, v: &PcgVectors, p: &Particles) -> Self {
        let kernel = Kernel::new(
            device,
            crate::wgsl!("volume_correction.wgsl"),
            "VolumeCorrection",
        );
        let group = kernel.bind(
            device,
            &[
                ("params", &f.params_buffer),
                ("cell_type", &f.cell_type),
                ("density", &f.density),
                ("b", &v.b),
                ("phi", &v.p),
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
        }
    }

    /// b = -h^2 max(density - 1, 0) on FLUID cells.
    pub fn record_rhs(&self, pass: &mut wgpu::ComputePass<'_>, f: &GridFields) {
        self.kernel
            .dispatch(pass, self.e.rhs, &self.group, f.num_cells());
    }

    /// Moves every particle by grad(psi), psi being the solution in `PcgVectors::p`: the
    /// gradient across every face, then its interpolation at each particle.
    pub fn record_displace(&self, pass: &mut wgpu::ComputePass<'_>, f: &GridFields, p: &Particles) {
        self.kernel
            .dispatch(pass, self.e.gradient, &self.group, f.num_faces());
        self.kernel
            .dispatch(pass, self.e.displace, &self.group, p.count);
    }
}
