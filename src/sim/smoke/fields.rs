//! Buffers only the smoke mode has (the grid's own are in [`crate::sim::core::fields`]).

use super::params::{Emitter, SmokeParams};
use super::{MAX_EMITTERS, TRAIL_LEN};
use crate::gpu::{storage_buffer, uniform_buffer, WORKGROUP};

/// Buffers only the smoke mode has.
pub struct SmokeFields {
    pub params_buffer: wgpu::Buffer,
    /// Dye rgb and temperature (w) per cell.
    pub dye: wgpu::Buffer,
    /// Dye at the start of the advection.
    pub dye_old: wgpu::Buffer,
    /// Semi-Lagrangian dye (MacCormack's first step).
    pub dye_hat: wgpu::Buffer,
    /// Semi-Lagrangian face velocities.
    pub vel_hat: wgpu::Buffer,
    /// Vorticity (xyz) and its magnitude (w) per cell.
    pub curl: wgpu::Buffer,
    /// Confinement + buoyancy force per cell (m/s^2).
    pub force: wgpu::Buffer,
    /// Painted and scene solids (1 = SOLID), and their velocities.
    pub static_solid: wgpu::Buffer,
    pub static_vel: wgpu::Buffer,
    pub emitters: wgpu::Buffer,
    /// Tracer positions, `TRAIL_LEN` slots of `tracers` positions each.
    pub trail: wgpu::Buffer,
    /// Per-workgroup stats sums (see stats.wgsl).
    pub partials: wgpu::Buffer,
}

impl SmokeFields {
    pub fn new(
        device: &wgpu::Device,
        p: &SmokeParams,
        cells: u64,
        faces: u64,
        tracers: u64,
    ) -> Self {
        let f = |label: &str, bytes: u64| storage_buffer(device, label, bytes);
        Self {
            params_buffer: uniform_buffer(device, "SmokeFields::params", bytemuck::bytes_of(p)),
            dye: f("SmokeFields::dye", cells * 16),
            dye_old: f("SmokeFields::dye_old", cells * 16),
            dye_hat: f("SmokeFields::dye_hat", cells * 16),
            vel_hat: f("SmokeFields::vel_hat", faces * 4),
            curl: f("SmokeFields::curl", cells * 16),
            force: f("SmokeFields::force", cells * 16),
            static_solid: f("SmokeFields::static_solid", cells * 4),
            static_vel: f("SmokeFields::static_vel", cells * 16),
            emitters: f(
                "SmokeFields::emitters",
                (MAX_EMITTERS * std::mem::size_of::<Emitter>()) as u64,
            ),
            trail: f("SmokeFields::trail", tracers * TRAIL_LEN as u64 * 16),
            partials: f(
                "SmokeFields::partials",
                cells.div_ceil(WORKGROUP as u64) * 16,
            ),
        }
    }

    pub fn bytes(cells: u64, faces: u64, tracers: u64) -> u64 {
        cells * (16 * 6 + 4)
            + faces * 4
            + tracers * TRAIL_LEN as u64 * 16
            + cells.div_ceil(WORKGROUP as u64) * 16
    }
}
