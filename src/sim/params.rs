//! Uniform parameters shared by every kernel.

use bytemuck::{Pod, Zeroable};

/// Keep in sync with `SimParams` in shaders/prelude.wgsl.
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
}
const _: () = assert!(std::mem::size_of::<SimParams>() == 80);

/// `SimParams::transfer` values (keep in sync with shaders/prelude.wgsl).
pub const TRANSFER_FLIP: u32 = 0;
pub const TRANSFER_APIC: u32 = 1;

/// A cell is FLUID when the mean P2G weight of its six faces reaches this fraction of the
/// rest density (particles per cell). Counting every cell that holds a single particle as
/// full of liquid makes the volume the pressure solve sees grow by 20% and more as a dam
/// break spreads into thin sheets; a density threshold keeps it within a few percent.
/// Particles in cells below it fly ballistically (gravity still acts on their faces).
pub const FLUID_DENSITY_FRACTION: f32 = 0.5;

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
            max_particle_speed: super::p2g::MAX_PARTICLE_SPEED,
            fluid_weight: 0.0,
            transfer: TRANSFER_FLIP,
            _pad: [0; 2],
        }
    }

    pub fn num_faces(&self) -> u32 {
        self.num_u + self.num_v + self.num_w
    }
}
