//! The GPU simulation: one step runner ([`runner::Runner`]) that runs a mode's stages
//! in the order of the algorithm, and the modes: the liquid ([`Simulation`], `liquid/`) and
//! the smoke ([`smoke::SmokeSimulation`], `smoke/`). `core/` holds what both share (the
//! runner, the grid fields, boundary, divergence, the pressure solve, projection,
//! diffusion); `bodies/` the rigid bodies both modes carry; `frames` the plain data the
//! simulation hands out for files; [`Sim`] (`handle.rs`) one handle for either mode.

pub mod bodies;
pub mod core;
pub mod frames;
pub mod handle;
pub mod lab;
pub mod liquid;
pub mod runner;
pub mod smoke;

use crate::gpu::{GpuContext, GpuError};
use crate::scene::{Scene, SceneKind};
use thiserror::Error;

pub use self::core::limits::{
    buffer_limit, check_estimate, check_estimate_for, AdapterLimits, MemoryEstimate, KNOWN_ADAPTERS,
};
pub use self::core::params::{AIR_DENSITY, DENSITY};
pub use self::core::recorder::StageList;
pub use self::runner::{
    FrameStats, LiquidColumns, ModeColumns, Runner, SmokeColumns, SubstepReport,
};
pub use handle::Sim;
pub use liquid::limits::{check_limits, memory_estimate};
pub use liquid::{LiquidSubstep, ParticleState, Simulation, Stage};

#[derive(Debug, Error)]
pub enum SimError {
    #[error(transparent)]
    Gpu(#[from] GpuError),
    #[error(
        "the scene needs a {what} of {bytes} bytes but adapter {adapter:?} allows at most {limit} \
         ({hint})"
    )]
    TooLarge {
        what: &'static str,
        bytes: u64,
        limit: u64,
        adapter: String,
        /// What to change in the scene, for this buffer.
        hint: &'static str,
    },
    #[error(
        "the scene seeds {particles} particles; eddy supports at most {max} \
         (reduce the resolution, the fluid shapes or particles_per_cell)"
    )]
    TooManyParticles { particles: u64, max: u64 },
    #[error("{0}")]
    Unsupported(String),
    #[error(
        "frame {frame}, substep {substep}: {quantity} became {value}: the simulation blew up \
         (a smaller cfl or frame_dt, or gentler velocities and forces, may keep it finite)"
    )]
    NonFinite {
        frame: u64,
        substep: u32,
        quantity: &'static str,
        value: f64,
    },
    #[error(
        "frame {frame}, substep {substep}: body {body} {what}; the run stops here rather than \
         go on without it (a smaller cfl or frame_dt, a larger max_substeps, or gentler body \
         velocities and densities nearer the fluid's may keep it)"
    )]
    BodyLost {
        frame: u64,
        substep: u32,
        body: usize,
        what: String,
    },
    #[error(
        "the scene's bodies overlap at the start: {0} (move them apart: contacts resolve \
         bodies that touch, not bodies inside each other or inside a solid)"
    )]
    BodiesOverlap(String),
    #[error(
        "frame {frame}, substep {substep}: the CFL substep {dt:.3e} s is below the floor \
         {floor:.3e} s (a millionth of frame_dt) because the largest speed is {speed:.3e} m/s: \
         the simulation blew up or its speeds are far beyond what its grid resolves"
    )]
    SubstepTooShort {
        frame: u64,
        substep: u32,
        dt: f64,
        floor: f64,
        speed: f64,
    },
}

/// A CFL substep shorter than this fraction of a frame stops the run: it means the flow
/// crosses a cell a million times per frame, which only a blow-up produces, and it would
/// otherwise spin through `max_substeps` steps that advance nothing.
pub const MIN_SUBSTEP_FRACTION: f64 = 1e-6;

/// Fails with [`SimError::NonFinite`] when `value` is NaN or infinite.
pub(crate) fn ensure_finite(
    frame: u64,
    substep: u32,
    quantity: &'static str,
    value: f64,
) -> Result<(), SimError> {
    if value.is_finite() {
        Ok(())
    } else {
        Err(SimError::NonFinite {
            frame,
            substep,
            quantity,
            value,
        })
    }
}

/// The substep the CFL condition asks for, refused when the speed is not finite or the step
/// falls below the floor.
pub(crate) fn checked_cfl_dt(
    frame: u64,
    substep: u32,
    dt: f64,
    speed: f32,
    frame_dt: f64,
) -> Result<f64, SimError> {
    ensure_finite(frame, substep, "the largest speed", speed as f64)?;
    let floor = frame_dt * MIN_SUBSTEP_FRACTION;
    if dt.is_nan() || dt < floor {
        return Err(SimError::SubstepTooShort {
            frame,
            substep,
            dt,
            floor,
            speed: speed as f64,
        });
    }
    Ok(dt)
}

/// Everything `Simulation::new` or `SmokeSimulation::new` would refuse (bodies that start
/// inside each other or a solid, and sizes), checked without allocating: the grid first, then the particles, counted (not seeded) when a quick
/// bound does not already settle it. `eddy check` runs this, so it approves exactly what
/// `eddy run` accepts.
pub fn check_scene_limits(ctx: &GpuContext, scene: &Scene) -> Result<MemoryEstimate, SimError> {
    check_scene_limits_for(&AdapterLimits::of(ctx), scene)
}

/// [`check_scene_limits`] against `limits`: the adapter opened, or one planned for
/// (`eddy check --limits`), whose memory is checked too when it has a figure.
pub fn check_scene_limits_for(
    limits: &AdapterLimits,
    scene: &Scene,
) -> Result<MemoryEstimate, SimError> {
    bodies::check_scene_start(scene)?;
    if scene.kind == SceneKind::Smoke {
        return check_estimate_for(limits, smoke::memory_estimate(scene));
    }
    liquid::limits::check_scene_limits_for(limits, scene)
}
