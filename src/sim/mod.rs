//! The GPU simulation: one module per stage, and one step runner ([`runner::Runner`]) that
//! runs a mode's stages in the order of the algorithm: the liquid ([`Simulation`]) or the
//! smoke ([`smoke::SmokeSimulation`]).

pub mod advect;
pub mod bodies;
pub mod boundary;
pub mod diffusion;
pub mod divergence;
pub mod extrapolate;
pub mod fields;
pub mod forces;
pub mod g2p;
pub mod liquid;
pub mod mark_cells;
pub mod p2g;
pub mod params;
pub mod pressure;
pub mod project;
pub mod runner;
pub mod smoke;
pub mod spacing;
pub mod stats;
pub mod transfer;
pub mod views;
pub mod volume_correction;

use crate::gpu::{GpuContext, GpuError};
use crate::scene::{Scene, SceneKind};
use fields::{GridFields, Particles};
use pressure::PcgVectors;
use thiserror::Error;

pub use liquid::{LiquidSubstep, Simulation, Stage};
pub use runner::{
    FrameStats, LiquidColumns, ModeColumns, Runner, SmokeColumns, StageList, SubstepReport,
};

/// Liquid density used for pressure and kinetic energy, kg/m^3.
pub const DENSITY: f64 = 1000.0;

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

/// Particle positions and velocities as read back (vec4 each, w unused).
pub type ParticleState = (Vec<[f32; 4]>, Vec<[f32; 4]>);

/// Bytes of GPU memory a scene needs, and its largest single buffer.
#[derive(Clone, Copy, Debug)]
pub struct MemoryEstimate {
    pub total: u64,
    pub largest_buffer: u64,
    pub largest_name: &'static str,
    /// What to reduce when the largest buffer does not fit.
    pub largest_hint: &'static str,
}

const GRID_HINT: &str = "reduce the resolution";

pub fn memory_estimate(scene: &Scene, particles: u64) -> MemoryEstimate {
    let [nx, ny, nz] = scene.dims().map(|v| v as u64);
    let cells = nx * ny * nz;
    let faces = (nx + 1) * ny * nz + nx * (ny + 1) * nz + nx * ny * (nz + 1);
    let apic = scene.transfer == crate::scene::TransferKind::Apic;
    let affine = if apic {
        Particles::affine_bytes(particles)
    } else {
        0
    };
    let spaced = scene.particle_spacing > 0.0;
    let total = GridFields::bytes(cells, faces)
        + PcgVectors::bytes(scene.dims(), scene.pressure.max_iterations as u64)
        + Particles::bytes(particles)
        + affine
        + if spaced {
            spacing::bytes(cells, particles)
        } else {
            0
        }
        + volume_correction::bytes(faces)
        + diffusion::memory(scene).0
        + bodies::coupling::memory(scene);
    let candidates = [
        diffusion::memory_candidate(scene),
        (
            affine,
            "APIC affine buffer (48 bytes per particle)",
            "reduce the resolution, the fluid shapes or particles_per_cell, or use transfer: flip",
        ),
        (faces * 8, "P2G accumulator (8 bytes per face)", GRID_HINT),
        (cells * 16, "packed matrix (16 bytes per cell)", GRID_HINT),
        (
            particles.saturating_mul(16),
            "particle buffer (16 bytes per particle)",
            "reduce the resolution, the fluid shapes or particles_per_cell",
        ),
    ];
    let (largest_buffer, largest_name, largest_hint) = candidates
        .into_iter()
        .max_by_key(|c| c.0)
        .unwrap_or((0, "", ""));
    MemoryEstimate {
        total,
        largest_buffer,
        largest_name,
        largest_hint,
    }
}

/// The largest buffer any binding may hold on this adapter.
pub fn buffer_limit(ctx: &GpuContext) -> u64 {
    ctx.limits
        .max_storage_buffer_binding_size
        .min(ctx.limits.max_buffer_size)
}

/// Refuses an estimate whose largest buffer the adapter cannot hold.
pub fn check_estimate(ctx: &GpuContext, est: MemoryEstimate) -> Result<MemoryEstimate, SimError> {
    let limit = buffer_limit(ctx);
    if est.largest_buffer > limit {
        return Err(SimError::TooLarge {
            what: est.largest_name,
            bytes: est.largest_buffer,
            limit,
            adapter: ctx.info.name.clone(),
            hint: est.largest_hint,
        });
    }
    Ok(est)
}

/// Everything `Simulation::new` or `SmokeSimulation::new` would refuse for size, checked
/// without allocating: the grid first, then the particles, counted (not seeded) when a quick
/// bound does not already settle it. `eddy check` runs this, so it approves exactly what
/// `eddy run` accepts.
pub fn check_scene_limits(ctx: &GpuContext, scene: &Scene) -> Result<MemoryEstimate, SimError> {
    if scene.kind == SceneKind::Smoke {
        return check_estimate(ctx, smoke::memory_estimate(scene));
    }
    check_limits(ctx, scene, 0)?;
    // Bytes per particle of the largest particle buffer.
    let per_particle = if scene.transfer == crate::scene::TransferKind::Apic {
        Particles::affine_bytes(1)
    } else {
        16
    };
    let fits = |n: u64| {
        n <= crate::scene::MAX_PARTICLES && n.saturating_mul(per_particle) <= buffer_limit(ctx)
    };
    let bound = scene.particle_bound();
    let particles = if fits(bound) {
        bound
    } else {
        scene.particle_count()
    };
    if particles > crate::scene::MAX_PARTICLES {
        return Err(SimError::TooManyParticles {
            particles,
            max: crate::scene::MAX_PARTICLES,
        });
    }
    check_limits(ctx, scene, particles)
}

/// Checks a scene against the adapter's limits before anything is allocated.
pub fn check_limits(
    ctx: &GpuContext,
    scene: &Scene,
    particles: u64,
) -> Result<MemoryEstimate, SimError> {
    check_estimate(ctx, memory_estimate(scene, particles))
}

impl Simulation {
    /// Particle positions and velocities (vec4, w unused).
    pub fn read_particles(&self) -> Result<ParticleState, SimError> {
        if self.mode.particles.count == 0 {
            return Ok((vec![], vec![]));
        }
        Ok((
            crate::gpu::read_buffer(&self.ctx, &self.mode.particles.pos)?,
            crate::gpu::read_buffer(&self.ctx, &self.mode.particles.vel)?,
        ))
    }

    /// The last pressure solve's system (A, b, and the solution phi).
    pub fn export_system(&self) -> Result<crate::output::ExportedSystem, SimError> {
        Ok(crate::output::ExportedSystem {
            dims: self.fields.params.n,
            a: crate::gpu::read_buffer(&self.ctx, &self.pcg.a)?,
            b: crate::gpu::read_buffer(&self.ctx, &self.pcg.b)?,
            p: crate::gpu::read_buffer(&self.ctx, &self.pcg.p)?,
        })
    }
}

impl Simulation {
    /// Replaces the particle state (same count as the scene seeded). Tests use it to run
    /// the stages on arbitrary input.
    pub fn upload_particles(&mut self, pos: &[[f32; 4]], vel: &[[f32; 4]]) -> Result<(), SimError> {
        if pos.len() != self.mode.particles.count as usize || vel.len() != pos.len() {
            return Err(SimError::Unsupported(format!(
                "upload_particles: expected {} particles, got {} positions and {} velocities",
                self.mode.particles.count,
                pos.len(),
                vel.len()
            )));
        }
        self.ctx
            .queue
            .write_buffer(&self.mode.particles.pos, 0, bytemuck::cast_slice(pos));
        self.ctx
            .queue
            .write_buffer(&self.mode.particles.vel, 0, bytemuck::cast_slice(vel));
        self.max_speed = vel
            .iter()
            .map(|v| (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt())
            .fold(0.0, f32::max);
        Ok(())
    }
}

impl Simulation {
    /// z = M^-1 r with the GPU preconditioner `kind` on the matrix of the last solve.
    pub fn apply_preconditioner(
        &self,
        kind: crate::scene::PreconditionerKind,
        r: &[f32],
    ) -> Result<Vec<f32>, SimError> {
        if r.len() != self.fields.num_cells() as usize {
            return Err(SimError::Unsupported(format!(
                "apply_preconditioner: r has {} entries, the grid {} cells",
                r.len(),
                self.fields.num_cells()
            )));
        }
        Ok(self
            .pressure
            .apply_preconditioner(&self.ctx, &self.fields, &self.pcg, kind, r)?)
    }
}
