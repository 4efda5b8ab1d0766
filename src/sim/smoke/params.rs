//! The smoke's uniforms and emitters, as the shaders read them (common.wgsl).

use super::TRAIL_LEN;
use crate::scene::{AdvectionScheme, Scene, Shape};
use bytemuck::{Pod, Zeroable};

/// Mirror of `SmokeParams` in common.wgsl (layout checked by tests/integration/shaders.rs).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
pub struct SmokeParams {
    pub up: [f32; 4],
    /// Dissipation rates, 1/s: dye r, g, b, temperature (a substep of dt keeps
    /// exp(-rate dt)).
    pub dissipation: [f32; 4],
    pub buoyancy: f32,
    pub dye_weight: f32,
    pub ambient: f32,
    pub vorticity: f32,
    /// The velocity's dissipation rate, 1/s.
    pub velocity_dissipation: f32,
    /// [`SCHEME_SL`] or [`SCHEME_MACCORMACK`].
    pub scheme: u32,
    pub num_emitters: u32,
    pub trail_slot: u32,
    pub num_tracers: u32,
    pub trail_len: u32,
    pub _pad: [u32; 2],
}
const _: () = assert!(std::mem::size_of::<SmokeParams>() == 80);
crate::wgsl_mirror!(smoke_params_layout: SmokeParams = "common.wgsl" SmokeParams {
    up: up,
    dissipation: dissipation,
    buoyancy: buoyancy,
    dye_weight: dye_weight,
    ambient: ambient,
    vorticity: vorticity,
    velocity_dissipation: velocity_dissipation,
    scheme: scheme,
    num_emitters: num_emitters,
    trail_slot: trail_slot,
    num_tracers: num_tracers,
    trail_len: trail_len,
    _pad0: _pad[0],
    _pad1: _pad[1],
});

/// Mirror of `Emitter` in common.wgsl (layout checked by tests/integration/shaders.rs).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct Emitter {
    pub lo: [f32; 4],
    pub hi: [f32; 4],
    /// rgb dye, w temperature.
    pub dye: [f32; 4],
    pub vel: [f32; 4],
    /// [`EMIT_BOX`], [`EMIT_DISC`] (sources: raise to the value) or [`EMIT_SPLAT`] (add).
    pub kind: u32,
    pub set_velocity: u32,
    pub _pad: [u32; 2],
}
const _: () = assert!(std::mem::size_of::<Emitter>() == 80);
crate::wgsl_mirror!(emitter_layout: Emitter = "common.wgsl" Emitter {
    lo: lo,
    hi: hi,
    dye: dye,
    vel: vel,
    kind: kind,
    set_velocity: set_velocity,
    _pad0: _pad[0],
    _pad1: _pad[1],
});

pub use crate::gpu::constants::{EMIT_BOX, EMIT_DISC, EMIT_SPLAT, SCHEME_MACCORMACK, SCHEME_SL};

impl Emitter {
    /// A scene source: dye and temperature raised to its values inside the shape.
    pub fn source(src: &crate::scene::SmokeSource) -> Self {
        let v = src.velocity;
        let mut e = Emitter {
            dye: [
                src.dye.0 as f32,
                src.dye.1 as f32,
                src.dye.2 as f32,
                src.temperature as f32,
            ],
            vel: [v.0 as f32, v.1 as f32, v.2 as f32, 0.0],
            set_velocity: (v.0 != 0.0 || v.1 != 0.0 || v.2 != 0.0) as u32,
            ..Default::default()
        };
        match &src.shape {
            Shape::Box { min, max, .. } => {
                e.kind = EMIT_BOX;
                e.lo = [min.0 as f32, min.1 as f32, min.2 as f32, 0.0];
                e.hi = [max.0 as f32, max.1 as f32, max.2 as f32, 0.0];
            }
            Shape::Sphere { center, radius, .. } => {
                e.kind = EMIT_DISC;
                e.lo = [
                    center.0 as f32,
                    center.1 as f32,
                    center.2 as f32,
                    *radius as f32,
                ];
            }
            // Validation keeps sources to boxes and spheres; anything else would be the
            // box of its bounds.
            other => {
                let (lo, hi) = other.bounds();
                e.kind = EMIT_BOX;
                e.lo = [lo[0] as f32, lo[1] as f32, lo[2] as f32, 0.0];
                e.hi = [hi[0] as f32, hi[1] as f32, hi[2] as f32, 0.0];
            }
        }
        e
    }

    /// A mouse splat at `centre` (m): adds `dye` (rgb) and `velocity` (m/s) with a
    /// gaussian of radius `radius` (m).
    pub fn splat(centre: [f32; 2], radius: f32, dye: [f32; 3], velocity: [f32; 2]) -> Self {
        Emitter {
            lo: [centre[0], centre[1], 0.0, radius.max(1e-6)],
            dye: [dye[0], dye[1], dye[2], 0.0],
            vel: [velocity[0], velocity[1], 0.0, 0.0],
            kind: EMIT_SPLAT,
            ..Default::default()
        }
    }
}

/// Uniform parameters of a smoke scene (the substep's length is `SimParams::dt`).
pub fn smoke_params(scene: &Scene) -> SmokeParams {
    let s = &scene.smoke;
    let g = [scene.gravity.0, scene.gravity.1, scene.gravity.2];
    let gl = (g[0] * g[0] + g[1] * g[1] + g[2] * g[2]).sqrt();
    let up = if gl > 0.0 {
        [-g[0] / gl, -g[1] / gl, -g[2] / gl]
    } else {
        [0.0, 1.0, 0.0]
    };
    SmokeParams {
        up: [up[0] as f32, up[1] as f32, up[2] as f32, 0.0],
        dissipation: [
            s.dye_dissipation as f32,
            s.dye_dissipation as f32,
            s.dye_dissipation as f32,
            s.temperature_dissipation as f32,
        ],
        buoyancy: s.buoyancy as f32,
        dye_weight: s.dye_weight as f32,
        ambient: s.ambient_temperature as f32,
        vorticity: s.vorticity as f32,
        velocity_dissipation: s.velocity_dissipation as f32,
        scheme: match s.advection {
            AdvectionScheme::SemiLagrangian => SCHEME_SL,
            AdvectionScheme::MacCormack => SCHEME_MACCORMACK,
        },
        num_tracers: s.tracers,
        trail_len: TRAIL_LEN,
        ..Default::default()
    }
}
