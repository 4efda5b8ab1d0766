//! Surface tension on the ghost-fluid free surface (tension.wgsl, tension_phi.wgsl).
//!
//! The pressure solve already puts the free surface where the level set the solve sees,
//! phi = 0.5 - surface, crosses between a FLUID and an AIR cell centre (a fraction theta of
//! the way, free_surface.wgsl) and imposes p = 0 there. With surface tension sigma the
//! liquid's pressure there is sigma kappa instead (Laplace), kappa the mean curvature of
//! the surface (Enright, Nguyen, Fedkiw & Osher 2003; Hong & Kim 2005): the matrix is
//! unchanged, the right-hand side of each FLUID cell gains w phi_s / theta per face to AIR
//! (phi_s = sigma kappa dt / rho, the solve's unknown p dt / rho), and the projection takes
//! the same value as the surface's in its gradient (ghost_gradient.wgsl).
//!
//! The curvature scheme: the height function (Cummins, Francois & Kothe 2005) on the
//! filtered particle density, which is a volume fraction blurred by the P2G kernel. At a
//! cell whose level set phi = 0.5 - surface has a gradient, the columns of seven cells
//! along the gradient's largest axis are summed into liquid heights H over the 5x5 columns
//! around it (less the corners); where every column holds the whole step (liquid at one
//! end, air at the other) the heights are unblurred to second order,
//! H - (s^2 / 2) lap H with s^2 = 1/4 cell^2 the P2G kernel's sideways variance
//! (TENSION_SPREAD in src/gpu/constants.rs), and kappa = -div(grad H / sqrt(1 + |grad H|^2))
//! from central differences on the 3x3 around the cell. The columns' sums are exact for the
//! particles (the tents along a column sum to one), so the heights are the liquid's own;
//! second differences of the density across its step, the earlier scheme, read a sphere
//! 4-6% too curved at 8-12 cells across and the blurred heights 3-5%; unblurred they read
//! it within 1% at 12 cells across (`eddy validate --cases laplace`). Where the columns do
//! not hold the step (a sheet thinner than seven cells, a corner, cells away from the
//! surface, a cell whose own column puts the surface more than a cell away)
//! kappa = div(grad phi / |grad phi|) from second-order central differences over the
//! 3x3x3 neighbourhood. Clamped to 1/h; on the surface it is interpolated linearly
//! between the FLUID and the AIR cell at theta. The particles' jitter makes the parasitic
//! currents measured in the same case.
//!
//! A scene without surface tension binds a one-word placeholder for `curvature` and runs
//! neither kernel: its projection reads 0 for phi_s and its results keep their bits.

use super::{fields::GridFields, pressure::PcgVectors};
use crate::gpu::Kernel;

crate::kernel_entries!(
    /// The entry points of tension.wgsl.
    TensionEntries { mean_curvature, jump }
);

pub struct SurfaceTension {
    kernel: Kernel,
    e: TensionEntries,
    group: wgpu::BindGroup,
}

impl SurfaceTension {
    /// Binds `f.curvature`, which must hold a value per cell ([`GridFields::keep_curvature`]).
    pub fn new(device: &wgpu::Device, f: &GridFields, v: &PcgVectors) -> Self {
        assert!(
            f.has_curvature(),
            "surface tension without a curvature per cell"
        );
        let kernel = Kernel::new(device, crate::wgsl!("tension.wgsl"), "SurfaceTension");
        let group = kernel.bind(
            device,
            &[
                ("params", &f.params_buffer),
                ("cell_type", &f.cell_type),
                ("surface", &f.surface),
                ("curvature", &f.curvature),
                ("b", &v.b),
                ("open", &f.open),
            ],
        );
        Self {
            e: TensionEntries::of(&kernel),
            kernel,
            group,
        }
    }

    /// The curvature of the level set the solve sees, then the surface's share of b. After
    /// the divergence wrote b (and the cell marking the filtered density).
    pub fn record(&self, pass: &mut wgpu::ComputePass<'_>, f: &GridFields) {
        let n = f.num_cells();
        self.kernel
            .dispatch(pass, self.e.mean_curvature, &self.group, n);
        self.kernel.dispatch(pass, self.e.jump, &self.group, n);
    }
}

/// The capillary substep limit (Brackbill, Kothe & Zemach 1992): a capillary wave of the
/// shortest length the grid holds, 2h, must not cross a cell in one substep,
/// dt <= sqrt(rho h^3 / (2 pi sigma)), s; None without surface tension.
pub fn capillary_dt(sigma: f64, density: f64, h: f64) -> Option<f64> {
    (sigma > 0.0).then(|| (density * h * h * h / (2.0 * std::f64::consts::PI * sigma)).sqrt())
}

#[cfg(test)]
mod tests {
    use super::capillary_dt;

    #[test]
    fn the_capillary_limit_of_water_on_a_millimetre_grid() {
        // sqrt(1000 * 1e-9 / (2 pi 0.072)) = 1.487 ms.
        let dt = capillary_dt(0.072, 1000.0, 1e-3).unwrap();
        assert!((dt - 1.487e-3).abs() < 1e-6, "{dt}");
        assert_eq!(capillary_dt(0.0, 1000.0, 1e-3), None);
    }
}
