//! The viscosity step's incremental pressure correction (split.wgsl).
//!
//! A substep solves the viscosity and then the pressure, one after the other. Done plainly
//! (viscosity on u, then u -= grad p), the split leaves an error of order dt nu / h^2
//! times the pressure's acceleration: the viscosity diffuses velocities that the
//! projection then moves by the whole pressure gradient, slip included at no-slip
//! surfaces. Where nu dt / h^2 is large (slow creeping flows on fine grids, the implicit
//! step's very purpose) the error is no longer small: a sphere settling at Re 0.04, 8 cells
//! across, fell 2.9 times as fast as Stokes' law with the wall correction at dt nu / h^2 =
//! 11, 1.8 times at 3.2. The incremental form (Goda 1979; van Kan 1986) gives the
//! viscosity the velocities with the last substep's pressure and body force already
//! applied, u + dt (g - grad p_last / rho), takes that amount off after the solve, and lets
//! the projection subtract the whole new gradient: u_new = u* + dt grad p_last - dt grad
//! p_new, which is the classic scheme solving for the increment p_new - p_last. At a steady
//! state the increment vanishes and the discrete Stokes or Navier-Stokes equations hold
//! exactly, whatever the substep; a liquid at rest shifts by nothing (its last projection
//! balanced g by grad p on each of these faces).
//!
//! The dynamic bodies take the same shift in the viscosity's coupling (their last pressure
//! force, [`crate::sim::bodies::viscous::viscous_bodies`]), so the step sees liquid and
//! body as the pressure will leave them. The first substep of a run (no pressure yet) and
//! the first after the viscosity is switched on run unshifted.
//!
//! The liquid keeps the last pressure (4 bytes a cell) and takes its gradient on today's
//! cells and free surface. The smoke's forces are its buoyancy and vorticity confinement,
//! not a gravity the shift could add, so it keeps instead the acceleration the forces and the
//! pressure gave each face in the last substep (4 bytes a face, `mark` before the forces
//! and `close` after the projection); a substep stopped between the two (the viewer's)
//! leaves the next one unshifted. Either buffer is allocated only for viscous
//! scenes and carried by checkpoints.

use super::fields::GridFields;
use super::pressure::PcgVectors;
use crate::gpu::{storage_buffer, uniform_buffer, Kernel};
use bytemuck::{Pod, Zeroable};

crate::kernel_entries!(
    /// The entry points of split.wgsl.
    SplitEntries { keep, shift_in, shift_out, mark, close }
);

/// Mirror of `SplitParams` in split.wgsl (layout checked by tests/integration/shaders.rs).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct SplitParams {
    /// 1: the mode's forces stage adds g on the faces the shift moves (the liquid).
    pub gravity: f32,
    /// 1 when `cover` holds the bodies' faces.
    pub covered: u32,
    /// 1: the shift is the last substep's change of each face (the smoke).
    pub delta: u32,
    pub pad: u32,
}
crate::wgsl_mirror!(split_params_layout: SplitParams = "split.wgsl" SplitParams {
    gravity: gravity,
    covered: covered,
    delta: delta,
    pad: pad,
});

pub struct ViscousSplit {
    kernel: Kernel,
    e: SplitEntries,
    group: wgpu::BindGroup,
    liquid: bool,
    /// The liquid's p / rho of the last projection in FLUID cells, m^2/s^2.
    pub last: wgpu::Buffer,
    /// The smoke's acceleration of each face by the forces and the pressure in the last
    /// substep, m/s^2.
    pub delta: wgpu::Buffer,
    /// Whether the buffer holds a whole substep's pressure (a substep shifts only then).
    pub kept: bool,
    /// Whether the smoke's change was started (`mark`) and not yet closed.
    open: std::cell::Cell<bool>,
}

impl ViscousSplit {
    /// The split of a grid `f` solved into `v`: the liquid's (`liquid`) or the smoke's;
    /// `cover`: the bodies' shares of the faces, if any.
    pub fn new(
        device: &wgpu::Device,
        f: &GridFields,
        v: &PcgVectors,
        liquid: bool,
        cover: Option<&wgpu::Buffer>,
    ) -> Self {
        let kernel = Kernel::new(device, crate::wgsl!("split.wgsl"), "ViscousSplit");
        let (cells, faces) = (f.num_cells() as u64 * 4, f.num_faces() as u64 * 4);
        let last = storage_buffer(device, "ViscousSplit::last", if liquid { cells } else { 4 });
        let delta = storage_buffer(
            device,
            "ViscousSplit::delta",
            if liquid { 4 } else { faces },
        );
        let params = SplitParams {
            gravity: liquid as u32 as f32,
            covered: cover.is_some() as u32,
            delta: !liquid as u32,
            pad: 0,
        };
        let params_buffer =
            uniform_buffer(device, "ViscousSplit::params", bytemuck::bytes_of(&params));
        let no_cover = storage_buffer(device, "ViscousSplit::no_cover", 4);
        let group = kernel.bind(
            device,
            &[
                ("params", &f.params_buffer),
                ("sp", &params_buffer),
                ("cell_type", &f.cell_type),
                ("phi", &last),
                ("solved", &v.p),
                ("grid_vel", &f.vel),
                ("surface", &f.surface),
                ("open", &f.open),
                ("cover", cover.unwrap_or(&no_cover)),
                ("delta", &delta),
                ("curvature", &f.curvature),
            ],
        );
        Self {
            e: SplitEntries::of(&kernel),
            kernel,
            group,
            liquid,
            last,
            delta,
            kept: false,
            open: std::cell::Cell::new(false),
        }
    }

    /// Bytes it allocates on a grid of `cells` cells and `faces` faces (the liquid's or the
    /// smoke's).
    pub fn bytes(liquid: bool, cells: u64, faces: u64) -> u64 {
        4 * if liquid { cells } else { faces } + 4 + 16 + 4
    }

    /// The buffer a checkpoint carries, by name.
    pub fn carried(&self) -> (&'static str, &wgpu::Buffer) {
        if self.liquid {
            ("split.last", &self.last)
        } else {
            ("split.delta", &self.delta)
        }
    }

    /// After the projection: keeps its pressure (the liquid) or closes the substep's change
    /// of the faces (the smoke).
    pub fn record_after_projection(&self, pass: &mut wgpu::ComputePass<'_>, f: &GridFields) {
        if self.liquid {
            (self.kernel).dispatch(pass, self.e.keep, &self.group, f.num_cells());
        } else {
            (self.kernel).dispatch(pass, self.e.close, &self.group, f.num_faces());
            self.open.set(false);
        }
    }

    /// The smoke's, before its forces: starts the substep's change of the faces.
    pub fn record_before_forces(&self, pass: &mut wgpu::ComputePass<'_>, f: &GridFields) {
        if !self.liquid {
            (self.kernel).dispatch(pass, self.e.mark, &self.group, f.num_faces());
            self.open.set(true);
        }
    }

    /// After a substep: when it stopped between the smoke's forces and its projection, the
    /// change it kept is half made and the next substep runs unshifted.
    pub fn end_substep(&mut self) {
        if self.open.replace(false) {
            self.kept = false;
        }
    }

    /// Before the viscosity solve: u += dt (g - grad p_last / rho) where it solves, or the
    /// smoke's last change (nothing before a whole substep has been kept).
    pub fn record_in(&self, pass: &mut wgpu::ComputePass<'_>, f: &GridFields) {
        if self.kept {
            self.kernel
                .dispatch(pass, self.e.shift_in, &self.group, f.num_faces());
        }
    }

    /// After the viscosity solve: the same amount off.
    pub fn record_out(&self, pass: &mut wgpu::ComputePass<'_>, f: &GridFields) {
        if self.kept {
            self.kernel
                .dispatch(pass, self.e.shift_out, &self.group, f.num_faces());
        }
    }
}
