//! The liquid's memory estimate and its size checks (grid, then particles).

use super::spacing;
use crate::gpu::GpuContext;
use crate::scene::Scene;
use crate::sim::{
    bodies,
    core::diffusion,
    core::fields::{FieldRoom, GridFields, Particles},
    core::limits::{check_estimate, check_estimate_for, AdapterLimits, MemoryEstimate},
    core::pressure::PcgVectors,
    SimError,
};

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
    let scratch = if spaced {
        super::spacing::lists_bytes(cells, particles)
    } else {
        0
    };
    let room = FieldRoom {
        solid_cells: scene.has_solid_cells(),
        particles: true,
        scratch,
    };
    let total = GridFields::bytes(cells, faces, room)
        + PcgVectors::bytes(
            scene.dims(),
            scene.pressure.max_iterations as u64,
            scene.pressure.preconditioner.is_mic(),
        )
        + Particles::bytes(particles)
        + super::volume_correction::VolumeCorrection::potential_bytes(cells)
        + affine
        + if spaced { spacing::BYTES } else { 0 }
        + if scene.has_flow() {
            let emit_cells = scene
                .emitters
                .iter()
                .filter(|e| e.flux.is_none())
                .map(|e| scene.shape_cells(&e.shape))
                .sum();
            super::flow::bytes(scene, particles, apic, emit_cells)
        } else {
            0
        }
        + diffusion::memory(scene).0
        + bodies::coupling::memory(scene)
        + GridFields::open_bytes(scene, faces);
    let candidates = [
        diffusion::memory_candidate(scene),
        bodies::coupling::deflation_candidate(scene),
        (
            affine,
            "APIC affine buffer (48 bytes per particle)",
            "reduce the resolution, the fluid shapes or particles_per_cell, or use transfer: flip",
        ),
        (
            GridFields::acc_bytes(cells, faces, scratch),
            "P2G accumulator (8 bytes per face; the PCG's scratch and the spacing's lists)",
            GRID_HINT,
        ),
        (cells * 16, "packed matrix (16 bytes per cell)", GRID_HINT),
        (
            particles.saturating_mul(16),
            "particle buffer (16 bytes per particle)",
            "reduce the resolution, the fluid shapes, particles_per_cell or max_particles",
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

/// Everything `Simulation::new` would refuse for size, checked
/// without allocating: the grid first, then the particles, counted (not seeded) when a quick
/// bound does not already settle it. `eddy check` runs this, so it approves exactly what
/// `eddy run` accepts.
pub fn check_scene_limits(ctx: &GpuContext, scene: &Scene) -> Result<MemoryEstimate, SimError> {
    check_scene_limits_for(&AdapterLimits::of(ctx), scene)
}

/// [`check_scene_limits`] against `limits` (an adapter planned for, or the one opened).
pub fn check_scene_limits_for(
    limits: &AdapterLimits,
    scene: &Scene,
) -> Result<MemoryEstimate, SimError> {
    check_estimate_for(limits, memory_estimate(scene, 0))?;
    // Bytes per particle of the largest particle buffer.
    let per_particle = if scene.transfer == crate::scene::TransferKind::Apic {
        Particles::affine_bytes(1)
    } else {
        16
    };
    let fits = |n: u64| {
        n <= crate::scene::MAX_PARTICLES && n.saturating_mul(per_particle) <= limits.max_binding
    };
    let bound = scene.particle_bound();
    let particles = if scene.has_flow() || scene.max_particles.is_some() {
        // The buffers hold the capacity, not only what is seeded.
        scene.particle_capacity(scene.particle_count())
    } else if fits(bound) {
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
    check_estimate_for(limits, memory_estimate(scene, particles))
}

/// Checks a scene against the adapter's limits before anything is allocated.
pub fn check_limits(
    ctx: &GpuContext,
    scene: &Scene,
    particles: u64,
) -> Result<MemoryEstimate, SimError> {
    check_estimate(ctx, memory_estimate(scene, particles))
}
