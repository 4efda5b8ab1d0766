//! The GPU simulation: one module per stage, one [`Simulation`] that owns the buffers and
//! runs the stages in the order of the algorithm.

pub mod advect;
pub mod bodies;
pub mod boundary;
pub mod divergence;
pub mod extrapolate;
pub mod fields;
pub mod forces;
pub mod g2p;
pub mod mark_cells;
pub mod p2g;
pub mod params;
pub mod pressure;
pub mod project;
pub mod smoke;
pub mod stats;
pub mod transfer;
pub mod views;
pub mod volume_correction;

use crate::gpu::{BufferReader, GpuContext, GpuError, PassTimer, StageTiming};
use crate::scene::{Scene, SceneKind};
use fields::{GridFields, Particles, COUNTERS};
use params::SimParams;
use pressure::{PcgVectors, PressureSolver, SolveReport};
use std::sync::Arc;
use thiserror::Error;

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

/// The stages of one substep, in order. The viewer can stop a step after any of them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Stage {
    P2g,
    MarkCells,
    VolumeCorrection,
    Forces,
    Boundary,
    Pressure,
    Project,
    Extrapolate,
    G2p,
    Advect,
}

impl Stage {
    pub const ALL: [Stage; 10] = [
        Stage::P2g,
        Stage::MarkCells,
        Stage::VolumeCorrection,
        Stage::Forces,
        Stage::Boundary,
        Stage::Pressure,
        Stage::Project,
        Stage::Extrapolate,
        Stage::G2p,
        Stage::Advect,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Stage::P2g => "p2g",
            Stage::MarkCells => "mark_cells",
            Stage::VolumeCorrection => "volume_correction",
            Stage::Forces => "forces",
            Stage::Boundary => "boundary",
            Stage::Pressure => "pressure",
            Stage::Project => "project",
            Stage::Extrapolate => "extrapolate",
            Stage::G2p => "g2p",
            Stage::Advect => "advect",
        }
    }
}

/// One row of stats.csv.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct FrameStats {
    pub frame: u64,
    pub time_s: f64,
    pub substeps: u32,
    pub particles: u32,
    pub fluid_cells: u32,
    /// Iterations of the last solve in the frame.
    pub pcg_iterations: u32,
    /// max|r| / max|b| at the end of the last solve in the frame.
    pub pcg_residual: f64,
    /// max |div u| over FLUID cells after the last projection, 1/s.
    pub max_divergence: f64,
    /// J, with particle mass = density * cell volume / particles per cell.
    pub kinetic_energy: f64,
    pub max_speed: f64,
    /// FLUID cells x cell volume, m^3.
    pub volume: f64,
    /// Volume inside the free surface (FLUID cells plus the level set's reach past their
    /// faces), m^3.
    pub liquid_volume: f64,
    /// Largest particle x, m.
    pub front_x: f64,
    /// Iterations of all solves in the frame.
    pub pcg_iterations_total: u32,
    /// max |rho / rho0 - 1| over FLUID cells in the frame's last substep.
    pub density_error_max: f64,
    /// Mean |rho / rho0 - 1| over FLUID cells in the frame's last substep.
    pub density_error_mean: f64,
    /// Iterations of all volume-correction solves in the frame.
    pub volume_iterations: u32,
    /// Largest final max|r| / max|b| over the frame's solves (not in stats.csv).
    pub pcg_max_residual: f64,
    /// Solves in the frame that stopped above the tolerance, at max_iterations or on a
    /// breakdown (not in stats.csv).
    pub unconverged_solves: u32,
}

impl FrameStats {
    pub const CSV_HEADER: &'static str = "frame,time_s,substeps,particles,fluid_cells,pcg_iterations,pcg_residual,max_divergence,kinetic_energy,max_speed,volume,front_x,pcg_iterations_total,liquid_volume,density_error_max,density_error_mean,volume_iterations";

    pub fn csv_row(&self) -> String {
        format!(
            "{},{:.6},{},{},{},{},{:.6e},{:.6e},{:.6e},{:.6},{:.6e},{:.6},{},{:.6e},{:.4},{:.4},{}",
            self.frame,
            self.time_s,
            self.substeps,
            self.particles,
            self.fluid_cells,
            self.pcg_iterations,
            self.pcg_residual,
            self.max_divergence,
            self.kinetic_energy,
            self.max_speed,
            self.volume,
            self.front_x,
            self.pcg_iterations_total,
            self.liquid_volume,
            self.density_error_max,
            self.density_error_mean,
            self.volume_iterations
        )
    }
}

/// What one substep measured.
#[derive(Clone, Debug, Default)]
pub struct SubstepReport {
    pub dt: f64,
    pub fluid_cells: u32,
    pub max_speed: f32,
    pub front_x: f32,
    pub max_divergence: f32,
    /// Cells of liquid past the FLUID cells' faces up to the free surface (sum of theta - 1/2
    /// over FLUID-AIR faces; negative where the surface lies inside FLUID cells).
    pub surface_volume: f32,
    /// max |rho / rho0 - 1| over FLUID cells after P2G (before the volume correction).
    pub density_error_max: f32,
    /// Mean |rho / rho0 - 1| over FLUID cells (each cell's error clamped to 4).
    pub density_error_mean: f32,
    pub solve: Option<SolveReport>,
    /// The volume correction's solve, when it ran.
    pub correction: Option<SolveReport>,
}

/// First of the three counters that receive the volume correction's bb, rr and iterations
/// (copied as one range of the state header, so they must follow each other there).
const CORRECTION_COUNTERS: usize = 8;
const _: () = {
    use pressure::pcg::PcgStateHeader as H;
    assert!(std::mem::offset_of!(H, rr) == std::mem::offset_of!(H, bb) + 4);
    assert!(std::mem::offset_of!(H, iterations) == std::mem::offset_of!(H, bb) + 8);
    assert!(CORRECTION_COUNTERS + 3 <= fields::COUNTERS);
};

/// Fixed-point scale of the summed density error (DENSITY_ERROR_SCALE in
/// shaders/mark_cells.wgsl).
const DENSITY_ERROR_SCALE: f32 = 64.0;
/// Fixed-point scale of the surface volume sum (SURFACE_VOLUME_SCALE in
/// shaders/build_matrix.wgsl).
const SURFACE_VOLUME_SCALE: f32 = 1024.0;

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
    let total = GridFields::bytes(cells, faces)
        + PcgVectors::bytes(scene.dims(), scene.pressure.max_iterations as u64)
        + Particles::bytes(particles)
        + affine;
    let candidates = [
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

pub struct Simulation {
    pub ctx: Arc<GpuContext>,
    pub scene: Scene,
    pub fields: GridFields,
    pub particles: Particles,
    pub pcg: PcgVectors,
    p2g: p2g::P2g,
    mark: mark_cells::MarkCells,
    volume: volume_correction::VolumeCorrection,
    forces: forces::Forces,
    boundary: boundary::Boundary,
    divergence: divergence::Divergence,
    pressure: PressureSolver,
    project: project::Project,
    extrapolate: extrapolate::Extrapolate,
    g2p: g2p::G2p,
    advect: advect::Advect,
    stats: stats::ParticleStats,
    timer: PassTimer,
    counters_reader: BufferReader,
    /// Simulated time, s.
    pub time: f64,
    pub frame: u64,
    /// Largest particle speed after the last substep (drives the CFL substep).
    pub max_speed: f32,
    pub last_solve: Option<SolveReport>,
    /// GPU ms per stage over the last frame (empty without timestamp support).
    pub last_timing: StageTiming,
    /// The scene's rigid bodies and their coupling (None without bodies).
    pub bodies: Option<bodies::coupling::Bodies>,
}

impl Simulation {
    pub fn new(ctx: Arc<GpuContext>, scene: &Scene) -> Result<Self, SimError> {
        if scene.kind != SceneKind::Liquid {
            return Err(SimError::Unsupported(format!(
                "scene {:?} is a {:?} scene; the particle simulation runs liquid scenes",
                scene.name, scene.kind
            )));
        }
        // Sizes first: a grid or a particle count too large for the adapter is refused
        // before the host spends memory on seeding.
        check_scene_limits(&ctx, scene)?;
        let init = scene.initial_state();
        let device = &ctx.device;
        let mut params =
            SimParams::new(scene.dims(), scene.h() as f32, init.positions.len() as u32);
        params.pic_ratio = scene.pic_ratio as f32;
        params.rest_weight = scene.particles_per_cell as f32;
        params.transfer = transfer::param(scene.transfer);
        params.gravity = [
            scene.gravity.0 as f32,
            scene.gravity.1 as f32,
            scene.gravity.2 as f32,
        ];
        let fields = GridFields::new(device, params);
        ctx.queue
            .write_buffer(&fields.solid, 0, bytemuck::cast_slice(&init.solid));
        ctx.queue.write_buffer(
            &fields.solid_vel,
            0,
            bytemuck::cast_slice(&init.solid_velocity),
        );
        let mut particles = Particles::new(device, &ctx.queue, &init.positions, &init.velocities);
        if scene.transfer == crate::scene::TransferKind::Apic {
            particles.ensure_affine(device);
        }
        let pcg = PcgVectors::new(device, params.num_cells, scene.pressure.max_iterations);
        let max_speed = init
            .velocities
            .iter()
            .map(|v| (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt())
            .fold(0.0, f32::max);
        let timer = PassTimer::new(&ctx, &Stage::ALL.map(|s| s.name()));
        let bodies = match bodies::BodySet::from_scene(scene) {
            None => None,
            Some(set) => Some(bodies::coupling::Bodies::new(
                &ctx,
                set,
                bodies::coupling::CouplingInputs {
                    fields: &fields,
                    phi: &pcg.p,
                    rhs: &pcg.b,
                    particles: &particles,
                    mode: bodies::coupling::CouplingMode::Liquid,
                    base: None,
                    static_cells: Some((&init.solid, &init.solid_velocity)),
                    face_area: scene.h() * scene.h(),
                    density: DENSITY,
                    length: scene.domain.0.max(scene.domain.1).max(scene.domain.2),
                    gravity: [scene.gravity.0, scene.gravity.1, scene.gravity.2],
                },
            )?),
        };
        let sim = Self {
            bodies,
            p2g: p2g::P2g::new(device, &fields, &particles),
            mark: mark_cells::MarkCells::new(device, &fields),
            volume: volume_correction::VolumeCorrection::new(device, &fields, &pcg, &particles),
            forces: forces::Forces::new(device, &fields),
            boundary: boundary::Boundary::new(device, &fields),
            divergence: divergence::Divergence::new(device, &fields, &pcg),
            pressure: PressureSolver::new(&ctx, &fields, &pcg),
            project: project::Project::new(device, &fields, &pcg),
            extrapolate: extrapolate::Extrapolate::new(device, &fields),
            g2p: g2p::G2p::new(device, &fields, &particles),
            advect: advect::Advect::new(device, &fields, &particles),
            stats: stats::ParticleStats::new(device, &fields, &particles),
            counters_reader: BufferReader::new(device, COUNTERS as u64 * 4, "Simulation::counters"),
            timer,
            fields,
            particles,
            pcg,
            scene: scene.clone(),
            time: 0.0,
            frame: 0,
            max_speed,
            last_solve: None,
            last_timing: StageTiming::default(),
            ctx,
        };
        sim.pressure
            .write_config(&sim.ctx, &sim.pcg, &sim.scene.pressure);
        Ok(sim)
    }

    /// Applies settings that can change without reallocation (PIC ratio, CFL, gravity,
    /// solver settings, extrapolation layers). Returns an error when the change needs a
    /// reset (resolution, shapes, particles per cell, max iterations beyond the history).
    pub fn apply_live_settings(&mut self, scene: &Scene) -> Result<(), String> {
        scene.validate()?;
        if scene.resolution != self.scene.resolution
            || scene.domain != self.scene.domain
            || scene.particles_per_cell != self.scene.particles_per_cell
            || scene.bodies != self.scene.bodies
            || scene.pressure.max_iterations + 1 > self.pcg.history_len
        {
            return Err("this change needs a reset".into());
        }
        self.set_transfer(scene.transfer)
            .map_err(|e| format!("transfer {}: {e}", scene.transfer))?;
        self.scene.pic_ratio = scene.pic_ratio;
        self.scene.cfl = scene.cfl;
        self.scene.gravity = scene.gravity;
        self.scene.pressure = scene.pressure.clone();
        self.scene.extrapolation_layers = scene.extrapolation_layers;
        self.scene.volume_correction = scene.volume_correction;
        self.scene.frame_dt = scene.frame_dt;
        self.scene.max_substeps = scene.max_substeps;
        self.fields.params.pic_ratio = scene.pic_ratio as f32;
        self.fields.params.gravity = [
            scene.gravity.0 as f32,
            scene.gravity.1 as f32,
            scene.gravity.2 as f32,
        ];
        self.pressure
            .write_config(&self.ctx, &self.pcg, &self.scene.pressure);
        Ok(())
    }

    /// The volume correction's solve: the scene's preconditioner, a cold start (the solution
    /// buffer holds the last pressure), a loose tolerance and a fixed iteration budget. It
    /// shares the solution buffer, so a warm-started pressure solve starts from the
    /// correction's potential rather than the last pressure (still converges; warm starts
    /// gain less).
    fn correction_settings(&self) -> crate::scene::PressureSettings {
        crate::scene::PressureSettings {
            tolerance: self
                .scene
                .pressure
                .tolerance
                .max(volume_correction::CORRECTION_TOLERANCE),
            max_iterations: volume_correction::CORRECTION_ITERATIONS
                .min(self.scene.pressure.max_iterations),
            warm_start: false,
            ..self.scene.pressure.clone()
        }
    }

    /// The correction solve's outcome from the counters it was copied to.
    fn correction_report(&self, c: &[u32]) -> SolveReport {
        let k = CORRECTION_COUNTERS;
        let (bb, rr) = (f32::from_bits(c[k]) as f64, f32::from_bits(c[k + 1]) as f64);
        let residual = if bb > 0.0 { rr / bb } else { 0.0 };
        let settings = self.correction_settings();
        SolveReport {
            iterations: c[k + 2],
            residual,
            status: if residual <= settings.tolerance {
                pressure::SolveStatus::Converged
            } else {
                pressure::SolveStatus::IterationLimit
            },
            history: vec![],
            dispatches_per_iteration: self
                .pressure
                .dispatches_per_iteration(settings.preconditioner),
        }
    }

    /// CFL substep: particles move at most `cfl` cells, counting the speed gravity adds.
    pub fn cfl_dt(&self) -> f64 {
        let h = self.scene.h();
        let g = self.scene.gravity;
        let gmag = (g.0 * g.0 + g.1 * g.1 + g.2 * g.2).sqrt();
        // Bodies count too: a body may cross no more cells per substep than the fluid.
        let speed = match &self.bodies {
            Some(b) => (self.max_speed as f64).max(b.set.max_speed()),
            None => self.max_speed as f64,
        };
        self.scene.cfl * h / (speed + (h * gmag).sqrt()).max(1e-9)
    }

    /// Advances one frame (`frame_dt`) in CFL substeps.
    /// Stops with an error naming the frame and the quantity as soon as a substep's
    /// measurements turn NaN or infinite, or the CFL substep collapses below its floor.
    pub fn step_frame(&mut self) -> Result<FrameStats, SimError> {
        let frame_dt = self.scene.frame_dt;
        let frame = self.frame + 1;
        let mut remaining = frame_dt;
        let mut substeps = 0u32;
        let mut total_iterations = 0u32;
        let mut worst_residual = 0.0f64;
        let mut unconverged = 0u32;
        let mut volume_iterations = 0u32;
        let mut last = SubstepReport::default();
        self.last_timing = StageTiming::default();
        // Relative to the frame, so a frame of any valid length ends after whole substeps.
        while remaining > frame_dt * 1e-9 {
            let cfl = checked_cfl_dt(frame, substeps + 1, self.cfl_dt(), self.max_speed, frame_dt)?;
            let mut dt = cfl.min(remaining);
            // Avoid a sliver of a last substep; stretching by 10% keeps the CFL near its target.
            if remaining - dt < 0.1 * dt {
                dt = remaining;
            }
            if substeps + 1 >= self.scene.max_substeps && dt < remaining {
                log::warn!(
                    "frame {}: max_substeps {} reached; last substep {:.3e} s exceeds the CFL limit {:.3e} s",
                    self.frame,
                    self.scene.max_substeps,
                    remaining,
                    dt
                );
                dt = remaining;
            }
            last = self.substep(dt, Stage::Advect)?;
            substeps += 1;
            let finite =
                |quantity, value: f32| ensure_finite(frame, substeps, quantity, value as f64);
            finite("the largest particle speed", last.max_speed)?;
            finite(
                "the largest divergence after projection",
                last.max_divergence,
            )?;
            if let Some(c) = &last.correction {
                volume_iterations += c.iterations;
            }
            if let Some(solve) = &last.solve {
                ensure_finite(frame, substeps, "the pressure residual", solve.residual)?;
                total_iterations += solve.iterations;
                worst_residual = worst_residual.max(solve.residual);
                if solve.status != pressure::SolveStatus::Converged
                    && solve.residual > self.scene.pressure.tolerance
                {
                    unconverged += 1;
                }
            }
            remaining -= dt;
        }
        self.frame += 1;
        let energy: Vec<f32> = crate::gpu::read_buffer(&self.ctx, &self.particles.energy)?;
        let h = self.scene.h();
        let cell_volume = h * h * (self.scene.domain.2 / self.scene.resolution.2 as f64);
        let mass = DENSITY * h * h * h / self.scene.particles_per_cell as f64;
        let kinetic: f64 = energy
            .iter()
            .take(self.particles.count.div_ceil(64) as usize)
            .map(|e| *e as f64)
            .sum::<f64>()
            * mass;
        ensure_finite(frame, substeps, "the kinetic energy", kinetic)?;
        let solve = last.solve.clone().unwrap_or_else(|| SolveReport {
            iterations: 0,
            residual: 0.0,
            status: pressure::SolveStatus::Converged,
            history: vec![],
            dispatches_per_iteration: 0,
        });
        Ok(FrameStats {
            frame: self.frame,
            time_s: self.time,
            substeps,
            particles: self.particles.count,
            fluid_cells: last.fluid_cells,
            pcg_iterations: solve.iterations,
            pcg_residual: solve.residual,
            max_divergence: last.max_divergence as f64,
            kinetic_energy: kinetic,
            max_speed: last.max_speed as f64,
            volume: last.fluid_cells as f64 * cell_volume,
            liquid_volume: (last.fluid_cells as f64 + last.surface_volume as f64) * cell_volume,
            front_x: last.front_x as f64,
            pcg_iterations_total: total_iterations,
            density_error_max: last.density_error_max as f64,
            density_error_mean: last.density_error_mean as f64,
            volume_iterations,
            pcg_max_residual: worst_residual,
            unconverged_solves: unconverged,
        })
    }

    fn begin_pass<'e>(
        &'e self,
        enc: &'e mut wgpu::CommandEncoder,
        stage: Stage,
    ) -> wgpu::ComputePass<'e> {
        let end = stage != Stage::Pressure;
        enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some(stage.name()),
            timestamp_writes: self.timer.writes(stage.name(), true, end),
        })
    }

    /// One substep of length `dt`, running the stages up to and including `last`
    /// (the viewer stops early to inspect intermediate fields; a full step passes Advect).
    pub fn substep(&mut self, dt: f64, last: Stage) -> Result<SubstepReport, SimError> {
        self.fields.params.dt = dt as f32;
        self.ctx.queue.write_buffer(
            &self.fields.params_buffer,
            0,
            bytemuck::bytes_of(&self.fields.params),
        );
        let run = |s: Stage| s <= last;
        // Rigid bodies: their state for this substep (src/sim/bodies/).
        if let Some(b) = self.bodies.as_mut() {
            b.coupling.upload(&self.ctx, &b.set, dt);
        }
        let kind = self.scene.pressure.preconditioner;
        let f = &self.fields;
        let mut enc = self
            .ctx
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("Simulation::substep"),
            });
        enc.clear_buffer(&f.counters, 0, None);
        self.p2g.clear(&mut enc, f);
        {
            let mut pass = self.begin_pass(&mut enc, Stage::P2g);
            self.p2g.record(&mut pass, f, &self.particles);
        }
        if run(Stage::MarkCells) {
            let mut pass = self.begin_pass(&mut enc, Stage::MarkCells);
            // Bodies become moving solids before the cells are classified.
            if let Some(b) = &self.bodies {
                b.coupling.record_stamp(&mut pass, f);
            }
            self.mark.record(&mut pass, f);
        }
        let correct = run(Stage::VolumeCorrection) && self.scene.volume_correction;
        if correct {
            // The whole correction is recorded at once, a fixed number of iterations (they
            // stop early on the GPU at the tolerance): no host round trip, so it costs only
            // its GPU time. Its config differs from the pressure solve's, so it is submitted
            // on its own before that config is written.
            let settings = self.correction_settings();
            self.pressure.write_config(&self.ctx, &self.pcg, &settings);
            {
                let mut pass = self.begin_pass(&mut enc, Stage::VolumeCorrection);
                self.volume.record_rhs(&mut pass, f);
                self.pressure.record_setup(&mut pass, f, kind);
                for _ in 0..settings.max_iterations {
                    self.pressure.record_iteration(&mut pass, f, kind);
                }
                self.volume.record_displace(&mut pass, &self.particles);
            }
            // bb, rr and iterations of the solve's state header go to the counters.
            enc.copy_buffer_to_buffer(
                &self.pcg.state,
                std::mem::offset_of!(pressure::pcg::PcgStateHeader, bb) as u64,
                &f.counters,
                4 * CORRECTION_COUNTERS as u64,
                12,
            );
            self.ctx.queue.submit([enc.finish()]);
            self.pressure
                .write_config(&self.ctx, &self.pcg, &self.scene.pressure);
            enc = self
                .ctx
                .device
                .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                    label: Some("Simulation::substep_forces"),
                });
        }
        let f = &self.fields;
        if run(Stage::Forces) {
            let mut pass = self.begin_pass(&mut enc, Stage::Forces);
            self.forces.record(&mut pass, f);
        }
        if run(Stage::Boundary) {
            let mut pass = self.begin_pass(&mut enc, Stage::Boundary);
            self.boundary.record(&mut pass, f);
        }
        if run(Stage::Pressure) {
            let mut pass = self.begin_pass(&mut enc, Stage::Pressure);
            self.divergence.record(&mut pass, f);
            if correct {
                // Same cells as the volume correction's solve: same matrix and preconditioner.
                self.pressure.record_start(&mut pass, f, kind);
            } else {
                self.pressure.record_setup(&mut pass, f, kind);
            }
        }
        self.ctx.queue.submit([enc.finish()]);
        let solve = if run(Stage::Pressure) {
            let timer = self
                .timer
                .enabled()
                .then_some((&self.timer, Stage::Pressure.name()));
            Some(self.pressure.iterate(
                &self.ctx,
                &self.fields,
                &self.pcg,
                &self.scene.pressure,
                timer,
            )?)
        } else {
            None
        };
        let f = &self.fields;
        let mut enc = self
            .ctx
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("Simulation::substep_end"),
            });
        let body_forces = run(Stage::Project) && self.bodies.is_some();
        if body_forces {
            if let Some(b) = &self.bodies {
                b.coupling.clear_forces(&mut enc);
            }
        }
        if run(Stage::Project) {
            let mut pass = self.begin_pass(&mut enc, Stage::Project);
            self.project.record(&mut pass, f);
            self.divergence.record_after(&mut pass, f);
            // The pressure's force and torque on the bodies.
            if let Some(b) = &self.bodies {
                b.coupling.record_forces(&mut pass, f);
            }
        }
        if run(Stage::Extrapolate) {
            let mut pass = self.begin_pass(&mut enc, Stage::Extrapolate);
            self.extrapolate
                .record(&mut pass, f, self.scene.extrapolation_layers);
            // Extrapolation also fills faces next to solids; put u_solid back there.
            self.boundary.record(&mut pass, f);
        }
        if run(Stage::G2p) {
            let mut pass = self.begin_pass(&mut enc, Stage::G2p);
            self.g2p.record(&mut pass, &self.particles);
        }
        if run(Stage::Advect) {
            let mut pass = self.begin_pass(&mut enc, Stage::Advect);
            self.advect.record(&mut pass, &self.particles);
            self.stats.record(&mut pass, &self.particles);
        }
        self.timer.resolve(&mut enc);
        self.counters_reader.copy_from(&mut enc, &f.counters);
        if let Some(b) = self.bodies.as_mut().filter(|_| body_forces) {
            b.coupling.copy_forces(&mut enc);
        }
        self.ctx.queue.submit([enc.finish()]);
        let c: Vec<u32> = self.counters_reader.read(&self.ctx)?;
        // The bodies move over the substep once the fluid has pushed them.
        if let Some(b) = self.bodies.as_mut().filter(|_| last == Stage::Advect) {
            b.finish_substep(&self.ctx, dt)?;
        }
        if self.timer.enabled() && last == Stage::Advect {
            let mut t = std::mem::take(&mut self.last_timing);
            self.timer.read_into(&self.ctx, &mut t)?;
            self.last_timing = t;
        }
        let report = SubstepReport {
            dt,
            fluid_cells: c[0],
            max_speed: f32::from_bits(c[1]),
            front_x: f32::from_bits(c[2]),
            max_divergence: f32::from_bits(c[3]),
            surface_volume: c[6] as i32 as f32 / SURFACE_VOLUME_SCALE,
            density_error_max: f32::from_bits(c[4]),
            density_error_mean: if c[0] > 0 {
                c[5] as f32 / (DENSITY_ERROR_SCALE * c[0] as f32)
            } else {
                0.0
            },
            solve: solve.clone(),
            correction: correct.then(|| self.correction_report(&c)),
        };
        if last == Stage::Advect {
            self.max_speed = report.max_speed;
            self.time += dt;
        }
        if solve.is_some() {
            self.last_solve = solve;
        }
        Ok(report)
    }
}

impl Simulation {
    /// Particle positions and velocities (vec4, w unused).
    pub fn read_particles(&self) -> Result<(Vec<[f32; 4]>, Vec<[f32; 4]>), SimError> {
        if self.particles.count == 0 {
            return Ok((vec![], vec![]));
        }
        Ok((
            crate::gpu::read_buffer(&self.ctx, &self.particles.pos)?,
            crate::gpu::read_buffer(&self.ctx, &self.particles.vel)?,
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
    /// Solves the pressure system again on the current grid state, without touching the
    /// velocities (benchmarks time this; the step itself uses `substep`). Expects a
    /// substep to have run at least up to `Stage::Boundary`.
    pub fn solve_pressure_again(&mut self) -> Result<SolveReport, SimError> {
        let kind = self.scene.pressure.preconditioner;
        self.pressure
            .write_config(&self.ctx, &self.pcg, &self.scene.pressure);
        let mut enc = self
            .ctx
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("Simulation::solve_pressure_again"),
            });
        {
            let mut pass = self.begin_pass(&mut enc, Stage::Pressure);
            self.divergence.record(&mut pass, &self.fields);
            self.pressure.record_setup(&mut pass, &self.fields, kind);
        }
        self.ctx.queue.submit([enc.finish()]);
        let timer = self
            .timer
            .enabled()
            .then_some((&self.timer, Stage::Pressure.name()));
        let report = self.pressure.iterate(
            &self.ctx,
            &self.fields,
            &self.pcg,
            &self.scene.pressure,
            timer,
        )?;
        self.last_solve = Some(report.clone());
        Ok(report)
    }

    /// GPU time of the last `solve_pressure_again` (or substep) pressure stage, ms, when the
    /// adapter has timestamps.
    pub fn read_stage_timing(&self) -> Result<Option<StageTiming>, SimError> {
        if !self.timer.enabled() {
            return Ok(None);
        }
        let mut enc = self.ctx.device.create_command_encoder(&Default::default());
        self.timer.resolve(&mut enc);
        self.ctx.queue.submit([enc.finish()]);
        let mut t = StageTiming::default();
        self.timer.read_into(&self.ctx, &mut t)?;
        Ok(Some(t))
    }
}

impl Simulation {
    /// Replaces the particle state (same count as the scene seeded). Tests use it to run
    /// the stages on arbitrary input.
    pub fn upload_particles(&mut self, pos: &[[f32; 4]], vel: &[[f32; 4]]) -> Result<(), SimError> {
        if pos.len() != self.particles.count as usize || vel.len() != pos.len() {
            return Err(SimError::Unsupported(format!(
                "upload_particles: expected {} particles, got {} positions and {} velocities",
                self.particles.count,
                pos.len(),
                vel.len()
            )));
        }
        self.ctx
            .queue
            .write_buffer(&self.particles.pos, 0, bytemuck::cast_slice(pos));
        self.ctx
            .queue
            .write_buffer(&self.particles.vel, 0, bytemuck::cast_slice(vel));
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
