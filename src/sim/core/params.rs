//! Uniform parameters shared by every kernel.

use bytemuck::{Pod, Zeroable};

/// The liquid's and the air's densities, kg/m^3 (defined with the shared constants, so the
/// scene and the reference read them without the simulation).
pub use crate::gpu::constants::{AIR_DENSITY, DENSITY};

/// Per-component clamp of particle velocity in P2G, m/s (see `sim::liquid::p2g` for the
/// fixed-point overflow argument it serves).
pub const MAX_PARTICLE_SPEED: f32 = 512.0;

/// Mirror of `SimParams` in prelude.wgsl (layout checked by tests/integration/shaders.rs).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
pub struct SimParams {
    pub n: [u32; 3],
    pub num_cells: u32,
    pub h: f32,
    pub inv_h: f32,
    pub dt: f32,
    pub pic_ratio: f32,
    pub gravity: [f32; 3],
    pub num_particles: u32,
    pub num_u: u32,
    pub num_v: u32,
    pub num_w: u32,
    pub max_particle_speed: f32,
    pub fluid_weight: f32,
    /// Particle/grid transfer: [`TRANSFER_FLIP`] or [`TRANSFER_APIC`].
    pub transfer: u32,
    pub _pad: [u32; 2],
    pub rest_weight: f32,
    /// Surface tension over the liquid's density, sigma / rho (m^3/s^2); 0 without.
    pub surface_tension: f32,
    pub _pad_rest: [u32; 2],
}
const _: () = assert!(std::mem::size_of::<SimParams>() == 96);
crate::wgsl_mirror!(sim_params_layout: SimParams = "prelude.wgsl" SimParams {
    n: n,
    num_cells: num_cells,
    h: h,
    inv_h: inv_h,
    dt: dt,
    pic_ratio: pic_ratio,
    gravity: gravity,
    num_particles: num_particles,
    num_u: num_u,
    num_v: num_v,
    num_w: num_w,
    max_particle_speed: max_particle_speed,
    fluid_weight: fluid_weight,
    transfer: transfer,
    _pad1: _pad[0],
    _pad2: _pad[1],
    rest_weight: rest_weight,
    surface_tension: surface_tension,
    _pad4: _pad_rest[0],
    _pad5: _pad_rest[1],
});

/// `SimParams::transfer` values.
pub use crate::gpu::constants::{TRANSFER_APIC, TRANSFER_FLIP};

/// The FLUID threshold on a cell's relative density (defined with the shared constants).
pub use crate::gpu::constants::FLUID_DENSITY_FRACTION;

impl SimParams {
    pub fn new(n: [u32; 3], h: f32, num_particles: u32) -> Self {
        let [nx, ny, nz] = n;
        Self {
            n,
            num_cells: nx * ny * nz,
            h,
            inv_h: 1.0 / h,
            dt: 0.0,
            pic_ratio: 0.05,
            gravity: [0.0, -9.81, 0.0],
            num_particles,
            num_u: (nx + 1) * ny * nz,
            num_v: nx * (ny + 1) * nz,
            num_w: nx * ny * (nz + 1),
            max_particle_speed: MAX_PARTICLE_SPEED,
            fluid_weight: FLUID_DENSITY_FRACTION,
            transfer: TRANSFER_FLIP,
            _pad: [0; 2],
            rest_weight: 1.0,
            surface_tension: 0.0,
            _pad_rest: [0; 2],
        }
    }

    pub fn num_faces(&self) -> u32 {
        self.num_u + self.num_v + self.num_w
    }
}
