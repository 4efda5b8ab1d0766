//! Solid boundary conditions u.n = u_solid.n (boundary.wgsl).

use super::fields::GridFields;
use crate::gpu::Kernel;

crate::kernel_entries!(
    /// The entry points of boundary.wgsl.
    BoundaryEntries { main, unweighted }
);

pub struct Boundary {
    kernel: Kernel,
    e: BoundaryEntries,
    group: wgpu::BindGroup,
    /// The liquid with cut faces: faces no particle reached take the solid's velocity
    /// (boundary.wgsl `unweighted`) in the stage before the solve.
    fill_unweighted: bool,
}

impl Boundary {
    pub fn new(device: &wgpu::Device, f: &GridFields, liquid: bool) -> Self {
        let kernel = Kernel::new(device, crate::wgsl!("boundary.wgsl"), "Boundary");
        let group = kernel.bind(
            device,
            &[
                ("params", &f.params_buffer),
                ("cell_type", &f.cell_type),
                ("solid_vel", &f.solid_vel),
                ("grid_vel", &f.vel),
                ("open", &f.open),
                ("solid", &f.solid),
                ("weight", &f.weight),
            ],
        );
        Self {
            e: BoundaryEntries::of(&kernel),
            kernel,
            group,
            fill_unweighted: liquid && f.has_cut_faces(),
        }
    }

    /// The boundary stage, before the solve.
    pub fn record(&self, pass: &mut wgpu::ComputePass<'_>, f: &GridFields) {
        self.record_solids(pass, f);
        if self.fill_unweighted {
            self.kernel
                .dispatch(pass, self.e.unweighted, &self.group, f.num_faces());
        }
    }

    /// The solids' velocities on their faces alone (again after the solve, where the bodies
    /// moved with it).
    pub fn record_solids(&self, pass: &mut wgpu::ComputePass<'_>, f: &GridFields) {
        self.kernel
            .dispatch(pass, self.e.main, &self.group, f.num_faces());
    }
}
