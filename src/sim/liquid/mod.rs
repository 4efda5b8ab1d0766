//! The liquid mode: hybrid PIC/FLIP (or APIC) particles on the MAC grid.
//!
//! One substep, in order: particles to grid -> mark cells (and their density) -> volume
//! correction -> forces -> solid boundary conditions -> pressure -> project -> extrapolate
//! -> grid to particles -> advect. The runner ([`super::runner`]) records the boundary,
//! pressure and projection stages; the others are recorded here.

pub mod advect;
pub mod extrapolate;
pub mod flow;
pub mod forces;
pub mod g2p;
pub mod limits;
pub mod mark_cells;
pub mod moving;
pub mod p2g;
pub mod spacing;
pub mod stats;
pub mod transfer;
pub mod views;
pub mod volume_correction;

use super::{
    bodies, check_scene_limits,
    core::diffusion,
    core::fields::Particles,
    core::params::SimParams,
    core::pressure::{self, SolveReport},
    core::recorder::{Recorder, SharedStage, StageList},
    runner::{Core, LiquidColumns, Mode, ModeColumns, Runner, SubstepReport},
    SimError, DENSITY,
};
use crate::gpu::GpuContext;
use crate::scene::{Scene, SceneKind};
use crate::sim::core::clock::CflTerms;
use crate::sim::core::probes::Probes;
use std::sync::Arc;

/// The stages of one liquid substep, in order. The viewer can stop a step after any of them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Stage {
    P2g,
    MarkCells,
    VolumeCorrection,
    Viscosity,
    Forces,
    Boundary,
    Pressure,
    Project,
    Extrapolate,
    G2p,
    Spacing,
    Advect,
}

impl Stage {
    pub const ALL: [Stage; 12] = [
        Stage::P2g,
        Stage::MarkCells,
        Stage::VolumeCorrection,
        Stage::Viscosity,
        Stage::Forces,
        Stage::Boundary,
        Stage::Pressure,
        Stage::Project,
        Stage::Extrapolate,
        Stage::G2p,
        Stage::Spacing,
        Stage::Advect,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Stage::P2g => "p2g",
            Stage::MarkCells => "mark_cells",
            Stage::VolumeCorrection => "volume_correction",
            Stage::Viscosity => "viscosity",
            Stage::Forces => "forces",
            Stage::Boundary => "boundary",
            Stage::Pressure => "pressure",
            Stage::Project => "project",
            Stage::Extrapolate => "extrapolate",
            Stage::G2p => "g2p",
            Stage::Spacing => "spacing",
            Stage::Advect => "advect",
        }
    }
}

impl StageList for Stage {
    const ALL: &'static [Self] = &Stage::ALL;

    fn name(self) -> &'static str {
        Stage::name(self)
    }

    fn shared(self) -> Option<SharedStage> {
        match self {
            Stage::Boundary => Some(SharedStage::Boundary),
            Stage::Pressure => Some(SharedStage::Pressure),
            Stage::Project => Some(SharedStage::Project),
            _ => None,
        }
    }
}

use crate::gpu::constants::{
    COUNTER_CORRECTION_BB, COUNTER_CORRECTION_ITERATIONS, COUNTER_CORRECTION_RR,
    COUNTER_DENSITY_ERROR_MAX, COUNTER_DENSITY_ERROR_SUM, COUNTER_FLUID_CELLS,
    COUNTER_SURFACE_VOLUME, DENSITY_ERROR_SCALE, SURFACE_VOLUME_SCALE,
};
// The volume correction's bb, rr and iterations are copied as one range of the state header
// into three counters in a row.
const _: () = {
    use pressure::pcg::PcgStateHeader as H;
    assert!(std::mem::offset_of!(H, rr) == std::mem::offset_of!(H, bb) + 4);
    assert!(std::mem::offset_of!(H, iterations) == std::mem::offset_of!(H, bb) + 8);
    assert!(COUNTER_CORRECTION_RR == COUNTER_CORRECTION_BB + 1);
    assert!(COUNTER_CORRECTION_ITERATIONS == COUNTER_CORRECTION_BB + 2);
    assert!(COUNTER_CORRECTION_ITERATIONS < super::core::fields::COUNTERS);
};

/// What one liquid substep measured beyond the shared counters.
#[derive(Clone, Debug, Default)]
pub struct LiquidSubstep {
    /// Cells of liquid past the FLUID cells' faces up to the free surface (sum of theta - 1/2
    /// over FLUID-AIR faces; negative where the surface lies inside FLUID cells).
    pub surface_volume: f32,
    /// max |rho / rho0 - 1| over FLUID cells after P2G (before the volume correction).
    pub density_error_max: f32,
    /// Mean |rho / rho0 - 1| over FLUID cells (each cell's error clamped to 4).
    pub density_error_mean: f32,
    /// The volume correction's solve, when it ran.
    pub correction: Option<SolveReport>,
    /// The viscosity solve, when it ran.
    pub viscosity: Option<SolveReport>,
    /// Particles the inflow added and the outflow removed (a full substep of a scene with
    /// emitters, drains or open sides).
    pub emitted: u32,
    pub removed: u32,
}

/// The liquid's particles and the stages only the liquid has.
pub struct Liquid {
    pub particles: Particles,
    pub(crate) p2g: p2g::P2g,
    mark: mark_cells::MarkCells,
    volume: volume_correction::VolumeCorrection,
    diffusion: diffusion::Diffusion,
    /// This substep's viscosity solve, kept for the report.
    viscosity: diffusion::DiffusionHost,
    forces: forces::Forces,
    extrapolate: extrapolate::Extrapolate,
    pub(crate) g2p: g2p::G2p,
    /// Allocated when the scene first asks for particle spacing.
    spacing: Option<spacing::Spacing>,
    advect: advect::Advect,
    stats: stats::ParticleStats,
    /// Particles the stats kernel summed over this substep (the flow may change the count
    /// after it).
    stats_count: u32,
    /// The kinetic energy (J) the frame's last substep brought back with its counters.
    frame_kinetic: Option<f64>,
    /// Inflow and outflow, in scenes with emitters, drains or open sides.
    pub flow: Option<flow::Flow>,
    /// Keyframed mesh solids, stamped over the static solids before each substep.
    pub moving: Option<moving::MovingSolids>,
}

/// The liquid simulation.
pub type Simulation = Runner<Liquid>;

/// The scene's seeding less the particles inside `bodies` (the scene's, if it has any): a
/// body placed in the liquid displaces it. What the simulation starts from, and what
/// `eddy check` estimates the first step from.
pub fn seed(scene: &Scene, bodies: Option<&bodies::BodySet>) -> crate::scene::InitialState {
    let mut init = scene.initial_state();
    if let Some(set) = bodies {
        set.displace_seeded(&mut init);
    }
    init
}

impl Runner<Liquid> {
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
        let set = bodies::BodySet::from_scene(scene);
        let init = seed(scene, set.as_ref());
        let mut params =
            SimParams::new(scene.dims(), scene.h() as f32, init.positions.len() as u32);
        params.pic_ratio = scene.pic_ratio as f32;
        params.rest_weight = scene.particles_per_cell as f32;
        params.surface_tension = (scene.surface_tension / crate::sim::DENSITY) as f32;
        params.transfer = transfer::param(scene.transfer);
        params.gravity = [
            scene.gravity.0 as f32,
            scene.gravity.1 as f32,
            scene.gravity.2 as f32,
        ];
        let moving = moving::MovingSolids::from_scene(scene).map_err(SimError::Unsupported)?;
        // Keyframed meshes cut faces as they move: the fractions are then uploaded each stamp.
        let open = moving
            .as_ref()
            .and_then(|m| m.open.as_deref())
            .or(init.open.as_deref());
        // The spacing keeps its lists in P2G's accumulators: room for every particle the
        // buffers hold.
        let scratch = if scene.particle_spacing > 0.0 {
            let particles = scene.particle_capacity(params.num_particles as u64);
            spacing::lists_bytes(params.num_cells as u64, particles)
        } else {
            0
        };
        let stages = Stage::ALL.map(|s| s.name());
        let mut core = Core::new(ctx, scene, params, &stages, (open, scratch));
        let (ctx, fields, pcg) = (&core.ctx, &core.fields, &core.pcg);
        let device = &ctx.device;
        if fields.has_solid_cells() {
            ctx.queue
                .write_buffer(&fields.solid, 0, bytemuck::cast_slice(&init.solid));
            ctx.queue.write_buffer(
                &fields.solid_vel,
                0,
                bytemuck::cast_slice(&init.solid_velocity),
            );
        } else {
            debug_assert!(
                init.solid.iter().all(|&s| s == 0),
                "a solid cell in a scene without solids"
            );
        }
        let capacity = scene.particle_capacity(init.positions.len() as u64);
        let mut particles = Particles::with_capacity(
            device,
            &ctx.queue,
            &init.positions,
            &init.velocities,
            u32::try_from(capacity).map_err(|_| SimError::TooManyParticles {
                particles: capacity,
                max: crate::scene::MAX_PARTICLES,
            })?,
        );
        if scene.transfer == crate::scene::TransferKind::Apic {
            particles.ensure_affine(device);
        }
        let mode = Liquid {
            p2g: p2g::P2g::new(device, fields, &particles),
            mark: mark_cells::MarkCells::new(device, fields),
            volume: volume_correction::VolumeCorrection::new(device, fields, pcg, &particles),
            diffusion: diffusion::Diffusion::new(device),
            viscosity: diffusion::DiffusionHost::default(),
            forces: forces::Forces::new(device, fields),
            extrapolate: extrapolate::Extrapolate::new(device, fields),
            g2p: g2p::G2p::new(device, fields, &particles),
            spacing: None,
            advect: advect::Advect::new(device, fields, &particles),
            stats: stats::ParticleStats::new(device, fields, &particles),
            stats_count: particles.count,
            frame_kinetic: None,
            flow: scene
                .has_flow()
                .then(|| flow::Flow::new(ctx, scene, fields, &particles, &init.solid)),
            moving,
            particles,
        };
        // The kinetic energy's partial sums come back with the frame's last substep.
        core.fit_readback(mode.particles.energy.size());
        core.max_speed = init
            .velocities
            .iter()
            .map(|v| (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt())
            .fold(0.0, f32::max);
        let mut mode = mode;
        if let Some(set) = set {
            let b = bodies::coupling::Bodies::new(
                &core.ctx,
                set,
                bodies::coupling::CouplingInputs {
                    fields: &core.fields,
                    pcg: &core.pcg,
                    particles: &mode.particles,
                    mode: bodies::coupling::CouplingMode::Liquid,
                    base: None,
                    static_cells: Some((&init.solid, &init.solid_velocity)),
                    face_area: scene.h() * scene.h(),
                    particle_mass: particle_mass(scene),
                    deflate: scene.body_deflation.unwrap_or(false),
                },
            )?;
            mode.diffusion.set_cover(&b.coupling.cover);
            core.bodies = Some(b);
            // The solve takes the bodies' term from now on.
            core.write_solver_config();
        }
        core.ensure_split();
        core.probes = Probes::new(&core.ctx, scene, &core.fields, &core.pcg, None);
        Ok(Self {
            core,
            mode,
            pending: None,
            pipe: Vec::new(),
        })
    }

    /// Applies settings that can change without reallocation (PIC ratio, CFL, gravity,
    /// solver settings, extrapolation layers). Returns an error when the change needs a
    /// reset (resolution, shapes, particles per cell, max iterations beyond the history).
    pub fn apply_live_settings(&mut self, scene: &Scene) -> Result<(), String> {
        self.core.check_live_settings(scene)?;
        if scene.particles_per_cell != self.scene.particles_per_cell {
            return Err("this change needs a reset".into());
        }
        self.set_transfer(scene.transfer)
            .map_err(|e| format!("transfer {}: {e}", scene.transfer))?;
        let core = &mut self.core;
        core.apply_live_settings(scene);
        core.scene.pic_ratio = scene.pic_ratio;
        core.scene.extrapolation_layers = scene.extrapolation_layers;
        core.scene.volume_correction = scene.volume_correction;
        core.scene.particle_spacing = scene.particle_spacing;
        core.scene.viscosity = scene.viscosity;
        core.ensure_split();
        core.scene.diffusion = scene.diffusion.clone();
        core.scene.surface_tension = scene.surface_tension;
        core.fields.params.surface_tension = (scene.surface_tension / crate::sim::DENSITY) as f32;
        core.fields.params.pic_ratio = scene.pic_ratio as f32;
        core.fields.params.gravity = [
            scene.gravity.0 as f32,
            scene.gravity.1 as f32,
            scene.gravity.2 as f32,
        ];
        Ok(())
    }
}

impl Runner<Liquid> {
    /// The viscosity solve alone on the current face velocities and cell types (a substep
    /// up to `Stage::Boundary` must have run, for the cell types and the solids' velocities
    /// at their faces); the substep runs it too.
    pub fn run_viscosity(&mut self, dt: f64) -> Result<SolveReport, SimError> {
        self.core.set_dt(dt);
        self.mode.solve_viscosity(&self.core)
    }
}

/// The liquid a particle carries, kg: a cell's mass over the particles seeded in it.
fn particle_mass(scene: &Scene) -> f64 {
    DENSITY * scene.h().powi(3) / scene.particles_per_cell.max(1) as f64
}

impl Liquid {
    /// The particles' kinetic energy (J) from the stats kernel's partial sums `energy`.
    fn kinetic_energy(&self, core: &Core, energy: &[f32]) -> f64 {
        energy
            .iter()
            .take(self.stats_count.div_ceil(crate::gpu::WORKGROUP) as usize)
            .map(|e| *e as f64)
            .sum::<f64>()
            * particle_mass(&core.scene)
    }

    /// One implicit viscosity step over the substep's dt (`SimParams::dt`) on the grid's
    /// face velocities.
    fn solve_viscosity(&mut self, core: &Core) -> Result<SolveReport, SimError> {
        let timing = core.timer.enabled().then_some(diffusion::Timing {
            timer: &core.timer,
            stage: Stage::Viscosity.name(),
            begin: true,
            end: true,
        });
        let nu = core.scene.viscosity;
        let coupling = core.viscous_coupling(&mut self.diffusion, None)?;
        self.diffusion.velocity(
            &core.ctx,
            &core.fields,
            None,
            nu,
            &core.scene.diffusion,
            timing,
            coupling.map(|c| c as &dyn diffusion::VelocityCoupling),
        )
    }

    /// The volume correction's solve: the scene's preconditioner, a cold start (the solution
    /// buffer holds the last pressure), a loose tolerance and a fixed iteration budget. It
    /// shares the solution buffer, so a warm-started pressure solve starts from the
    /// correction's potential rather than the last pressure (still converges; warm starts
    /// gain less).
    fn correction_settings(scene: &Scene) -> crate::scene::PressureSettings {
        crate::scene::PressureSettings {
            tolerance: scene
                .pressure
                .tolerance
                .max(volume_correction::CORRECTION_TOLERANCE),
            max_iterations: volume_correction::CORRECTION_ITERATIONS
                .min(scene.pressure.max_iterations),
            warm_start: false,
            ..scene.pressure.clone()
        }
    }

    /// The correction solve's outcome from the counters it was copied to.
    fn correction_report(core: &Core, c: &[u32]) -> SolveReport {
        let (bb, rr) = (
            f32::from_bits(c[COUNTER_CORRECTION_BB]) as f64,
            f32::from_bits(c[COUNTER_CORRECTION_RR]) as f64,
        );
        let residual = if bb > 0.0 { rr / bb } else { 0.0 };
        let settings = Self::correction_settings(&core.scene);
        SolveReport {
            iterations: c[COUNTER_CORRECTION_ITERATIONS],
            residual,
            true_residual: None,
            f32_floor: None,
            status: if residual <= settings.tolerance {
                pressure::SolveStatus::Converged
            } else {
                pressure::SolveStatus::IterationLimit
            },
            history: vec![],
            dispatches_per_iteration: core
                .pressure
                .dispatches_per_iteration(settings.preconditioner, None),
        }
    }

    /// Whether this substep corrects the volume (the correction ran if the stage did).
    fn corrects(core: &Core) -> bool {
        core.scene.volume_correction
    }

    /// The volume correction: one Poisson solve on this substep's cells that moves the
    /// particles apart where they bunch. The whole correction is recorded at once, a fixed
    /// number of iterations (they stop early on the GPU at the tolerance): no host round
    /// trip, so it costs only its GPU time. Its config differs from the pressure solve's,
    /// so it is submitted on its own before that config is written back; the pressure
    /// stage then reuses its matrix and preconditioner.
    fn record_volume_correction(&self, rec: &mut Recorder<'_>, core: &Core) {
        let kind = core.scene.pressure.preconditioner;
        let f = &core.fields;
        let settings = Self::correction_settings(&core.scene);
        core.pressure
            .write_config(&core.ctx, &core.pcg, &settings, false);
        {
            let mut pass = rec.pass_part(Stage::VolumeCorrection, true, false);
            self.volume.record_rhs(&mut pass, f);
            core.pressure.record_setup(&mut pass, f, kind, None);
            for _ in 1..settings.max_iterations {
                core.pressure.record_iteration(&mut pass, f, kind, None);
            }
            core.pressure.record_last_iteration(&mut pass, f);
        }
        // The potential waits for G2P (the particles move after it, see
        // volume_correction.rs); where the solve's vectors are kept, they are copied too.
        self.volume.record_keep_potential(rec.encoder(), &core.pcg);
        core.record_keep_vectors(rec.encoder());
        let _ = rec.pass_part(Stage::VolumeCorrection, false, true);
        // bb, rr and iterations of the solve's state header go to the counters.
        rec.encoder().copy_buffer_to_buffer(
            &core.pcg.state,
            std::mem::offset_of!(pressure::pcg::PcgStateHeader, bb) as u64,
            &f.counters,
            4 * COUNTER_CORRECTION_BB as u64,
            12,
        );
        rec.submit("Liquid::substep_forces");
        core.write_solver_config();
        rec.matrix_ready = true;
    }
}

/// The liquid's CFL rule: the largest speed plus sqrt(h |g|), the speed gravity gives
/// over a cell.
fn cfl_terms(scene: &Scene) -> CflTerms {
    let h = scene.h();
    let g = scene.gravity;
    let gmag = (g.0 * g.0 + g.1 * g.1 + g.2 * g.2).sqrt();
    CflTerms {
        cfl_h: scene.cfl * h,
        accel: (h * gmag).sqrt(),
        cap: crate::sim::core::tension::capillary_dt(scene.surface_tension, crate::sim::DENSITY, h),
    }
}

impl Mode for Liquid {
    type Stage = Stage;
    type Substep = LiquidSubstep;
    type Host = diffusion::DiffusionHost;
    const SPEED: &'static str = "the largest particle speed";

    /// CFL substep: particles move at most `cfl` cells, counting the speed gravity adds.
    fn cfl_dt(&self, core: &Core) -> f64 {
        // Emitted liquid moves at its emitter's speed from its first substep.
        let emitters = core
            .scene
            .emitters
            .iter()
            .filter(|e| e.active(core.time))
            .map(|e| e.speed() as f32)
            .fold(0.0, f32::max);
        // A keyframed mesh moves its solid cells at its path's speed.
        let meshes = self.moving.as_ref().map_or(0.0, |m| m.path_speed());
        let speed = core
            .max_speed_with_bodies()
            .max(emitters as f64)
            .max(meshes);
        cfl_terms(&core.scene).dt(speed)
    }

    /// Without bodies, inflow, outflow, emitters and moving meshes nothing on the host
    /// needs a substep's length before it runs (the viscosity's coefficient is taken on the
    /// GPU from `SimParams::dt`), and the largest speed is the particles' alone.
    fn gpu_clock(&self, core: &Core) -> Option<CflTerms> {
        let s = &core.scene;
        let host_work = core.bodies.is_some()
            || self.flow.is_some()
            || self.moving.is_some()
            || !s.emitters.is_empty();
        (!host_work).then(|| cfl_terms(s))
    }

    fn particles(&self) -> u32 {
        self.particles.count
    }

    fn reads_while_recording(&self, core: &Core) -> bool {
        // The viscosity solve reads its convergence until it has solved once; then a
        // pipelined substep queues it ahead.
        core.scene.viscosity > 0.0 && !self.diffusion.can_queue(true, false)
    }

    fn host_readers(&self, host: &diffusion::DiffusionHost) -> Vec<&crate::gpu::BufferReader> {
        self.diffusion.slot_readers(host.queued)
    }

    fn finish_host(
        &mut self,
        core: &Core,
        host: &mut diffusion::DiffusionHost,
        words: &[Vec<u32>],
    ) {
        self.diffusion.finish(host, words, &core.scene.diffusion);
    }

    fn begin_substep(&mut self, core: &mut Core, dt: f64) {
        self.viscosity = diffusion::DiffusionHost::default();
        // The count the last substep's inflow and outflow left.
        core.fields.params.num_particles = self.particles.count;
        if let Some(b) = core.bodies.as_mut() {
            b.coupling.set_particles(self.particles.count);
        }
        if let Some(flow) = self.flow.as_mut() {
            let at = (&core.fields, &self.particles);
            flow.begin(&core.ctx, &core.scene, at, core.time, dt);
        }
        if let Some(m) = self.moving.as_mut() {
            if m.stamp(&core.scene, core.time, dt) {
                let q = &core.ctx.queue;
                q.write_buffer(&core.fields.solid, 0, bytemuck::cast_slice(&m.solid));
                q.write_buffer(&core.fields.solid_vel, 0, bytemuck::cast_slice(&m.vel));
                if let Some(open) = m.open.as_ref() {
                    q.write_buffer(core.fields.static_open(), 0, bytemuck::cast_slice(open));
                }
            }
        }
        let scene = &core.scene;
        if scene.particle_spacing > 0.0 {
            let device = &core.ctx.device;
            let stage = self.spacing.get_or_insert_with(|| {
                spacing::Spacing::new(device, &core.fields, &self.particles)
            });
            let radius =
                spacing::min_distance(scene.h(), scene.particles_per_cell, scene.particle_spacing);
            stage.write_params(&core.ctx.queue, radius);
        }
    }

    fn take_host(&mut self) -> diffusion::DiffusionHost {
        std::mem::take(&mut self.viscosity)
    }

    fn rebind_views(&mut self, core: &Core) {
        // P2G writes the weights the views read.
        self.p2g = p2g::P2g::new(&core.ctx.device, &core.fields, &self.particles);
    }

    fn record(
        &mut self,
        stage: Stage,
        rec: &mut Recorder<'_>,
        core: &Core,
    ) -> Result<(), SimError> {
        let f = &core.fields;
        match stage {
            Stage::P2g => {
                self.p2g.clear(rec.encoder(), f);
                let mut pass = rec.pass(stage);
                self.p2g.record(&mut pass, f, &self.particles);
            }
            Stage::MarkCells => {
                let mut pass = rec.pass(stage);
                // Bodies become moving solids before the cells are classified.
                if let Some(b) = &core.bodies {
                    b.coupling.record_stamp(&mut pass, f);
                }
                self.mark.record(&mut pass, f);
                if let Some(b) = &core.bodies {
                    b.coupling.record_gather_scale(&mut pass, f);
                }
            }
            Stage::VolumeCorrection => {
                if Self::corrects(core) {
                    self.record_volume_correction(rec, core);
                }
            }
            Stage::Viscosity => {
                // An implicit solve with its own submissions, on the velocities with the
                // solids' own at their faces. It runs before the forces: diffusing u + g dt
                // would drag the body force's uniform increment to zero at no-slip walls, a
                // rotational error the projection cannot remove, and a pool at rest would
                // stir itself at about |g| dt.
                let queue = core
                    .queue_slot
                    .filter(|_| core.scene.viscosity > 0.0)
                    .filter(|_| self.diffusion.can_queue(true, false));
                if let Some(slot) = queue {
                    // A pipelined substep: the solve queues ahead behind the boundary pass,
                    // and its state comes back with the substep's slot.
                    {
                        let mut pass = rec.pass_part(stage, true, false);
                        core.boundary.record(&mut pass, f);
                        core.record_split_in(&mut pass);
                    }
                    let coupling = core.viscous_coupling(&mut self.diffusion, None)?;
                    self.viscosity.queued.velocity = Some(self.diffusion.queue_velocity(
                        &core.ctx,
                        rec.encoder(),
                        f,
                        None,
                        core.scene.viscosity,
                        &core.scene.diffusion,
                        slot,
                        coupling.map(|c| c as &dyn diffusion::VelocityCoupling),
                    )?);
                    let mut pass = rec.pass_part(stage, false, true);
                    core.record_split_out(&mut pass);
                } else if core.scene.viscosity > 0.0 {
                    {
                        let mut pass =
                            rec.encoder()
                                .begin_compute_pass(&wgpu::ComputePassDescriptor {
                                    label: Some("viscosity::boundary"),
                                    timestamp_writes: None,
                                });
                        core.boundary.record(&mut pass, f);
                        core.record_split_in(&mut pass);
                    }
                    rec.submit("Liquid::substep_forces");
                    self.viscosity.report.velocity = Some(self.solve_viscosity(core)?);
                    core.record_split_out_pass(rec.encoder());
                }
            }
            Stage::Forces => {
                let mut pass = rec.pass(stage);
                self.forces.record(&mut pass, f);
            }
            Stage::Extrapolate => {
                let mut pass = rec.pass(stage);
                self.extrapolate
                    .record(&mut pass, f, core.scene.extrapolation_layers);
                // Extrapolation also fills faces next to solids; put u_solid back there.
                core.boundary.record(&mut pass, f);
            }
            Stage::G2p => {
                let mut pass = rec.pass(stage);
                self.g2p.record(&mut pass, &self.particles);
                // The volume correction's move, once G2P has handed the particles the
                // pressure's change where P2G found them (volume_correction.rs).
                if Self::corrects(core) {
                    self.volume.record_displace(&mut pass, f, &self.particles);
                }
            }
            Stage::Spacing => {
                if let (Some(spacing), true) = (&self.spacing, core.scene.particle_spacing > 0.0) {
                    let mut pass = rec.pass(stage);
                    spacing.record(&mut pass, f, &self.particles);
                }
            }
            Stage::Advect => {
                let mut pass = rec.pass(stage);
                self.advect.record(&mut pass, &self.particles);
                self.stats.record(&mut pass, &self.particles);
                self.stats_count = self.particles.count;
                // Then particles leave through drains and open sides and the emitters add
                // theirs; the new count comes back with the counters.
                if let Some(flow) = &self.flow {
                    flow.record(&mut pass);
                }
            }
            Stage::Boundary | Stage::Pressure | Stage::Project => {
                unreachable!("the runner records the shared stage {stage:?}")
            }
        }
        Ok(())
    }

    fn readback(&self, core: &Core) -> Option<&wgpu::Buffer> {
        core.frame_end.then_some(&self.particles.energy)
    }

    fn read_substep(
        &mut self,
        core: &Core,
        c: &[u32],
        extra: &[u32],
        last: Stage,
        host: diffusion::DiffusionHost,
    ) -> Result<LiquidSubstep, SimError> {
        self.frame_kinetic =
            (!extra.is_empty()).then(|| self.kinetic_energy(core, bytemuck::cast_slice(extra)));
        let fluid = c[COUNTER_FLUID_CELLS];
        let corrected = last >= Stage::VolumeCorrection && Self::corrects(core);
        let (mut emitted, mut removed) = (0, 0);
        if let Some(flow) = self.flow.as_mut().filter(|_| last == Stage::Advect) {
            let count = flow.finish(c);
            emitted = c[crate::gpu::constants::COUNTER_EMITTED];
            removed = c[crate::gpu::constants::COUNTER_REMOVED];
            let lost = c[crate::gpu::constants::COUNTER_NOT_EMITTED];
            if lost > 0 && !flow.warned_full {
                flow.warned_full = true;
                log::warn!(
                    "t = {:.4} s: the liquid holds max_particles = {} particles; the emitters \
                     stop adding until particles leave ({lost} not emitted this substep; \
                     raise max_particles in the scene to go on filling)",
                    core.time,
                    self.particles.capacity
                );
            }
            self.particles.count = count;
        }
        Ok(LiquidSubstep {
            surface_volume: c[COUNTER_SURFACE_VOLUME] as i32 as f32 / SURFACE_VOLUME_SCALE,
            density_error_max: f32::from_bits(c[COUNTER_DENSITY_ERROR_MAX]),
            density_error_mean: if fluid > 0 {
                c[COUNTER_DENSITY_ERROR_SUM] as f32 / (DENSITY_ERROR_SCALE * fluid as f32)
            } else {
                0.0
            },
            correction: corrected.then(|| Self::correction_report(core, c)),
            viscosity: host.report.velocity,
            emitted,
            removed,
        })
    }

    fn frame_columns(
        &self,
        core: &Core,
        last: &SubstepReport<LiquidSubstep>,
        all: &[LiquidSubstep],
        _substeps: u32,
    ) -> Result<(f64, f64, ModeColumns), SimError> {
        // From the frame's last substep (its read brought the partials back), or read now.
        let kinetic = match self.frame_kinetic {
            Some(k) => k,
            None => {
                let energy: Vec<f32> = crate::gpu::read_buffer(&core.ctx, &self.particles.energy)?;
                self.kinetic_energy(core, &energy)
            }
        };
        let scene = &core.scene;
        let h = scene.h();
        let cell_volume = h * h * (scene.domain.2 / scene.resolution.2 as f64);
        let x = &last.extra;
        Ok((
            kinetic,
            last.fluid_cells as f64 * cell_volume,
            ModeColumns::Liquid(LiquidColumns {
                liquid_volume: (last.fluid_cells as f64 + x.surface_volume as f64) * cell_volume,
                density_error_max: x.density_error_max as f64,
                density_error_mean: x.density_error_mean as f64,
                volume_iterations: all
                    .iter()
                    .filter_map(|s| s.correction.as_ref())
                    .map(|c| c.iterations)
                    .sum(),
                viscosity_iterations: all
                    .iter()
                    .filter_map(|s| s.viscosity.as_ref())
                    .map(|v| v.iterations)
                    .sum(),
                diffusion_unconverged: all
                    .iter()
                    .filter_map(|s| s.viscosity.as_ref())
                    .filter(|v| diffusion::unconverged(v, core.scene.diffusion.tolerance))
                    .count() as u32,
                particles_emitted: all.iter().map(|s| s.emitted as u64).sum(),
                particles_removed: all.iter().map(|s| s.removed as u64).sum(),
            }),
        ))
    }
}

/// Particle positions and velocities as read back (vec4 each, w unused).
pub type ParticleState = (Vec<[f32; 4]>, Vec<[f32; 4]>);

impl Simulation {
    /// Particle positions and velocities (vec4, w unused).
    pub fn read_particles(&self) -> Result<ParticleState, SimError> {
        let n = self.mode.particles.count as usize;
        if n == 0 {
            return Ok((vec![], vec![]));
        }
        let mut pos: Vec<[f32; 4]> = crate::gpu::read_buffer(&self.ctx, &self.mode.particles.pos)?;
        let mut vel: Vec<[f32; 4]> = crate::gpu::read_buffer(&self.ctx, &self.mode.particles.vel)?;
        pos.truncate(n);
        vel.truncate(n);
        Ok((pos, vel))
    }
}

impl Simulation {
    /// Runs the inflow/outflow stage alone, as a substep of `dt` would at its end, on the
    /// current particles and cell types; returns (emitted, removed), or `None` in a scene
    /// without inflow or outflow. Tests compare it with the f64 reference.
    pub fn run_flow(&mut self, dt: f64) -> Result<Option<(u32, u32)>, SimError> {
        let core = &mut self.core;
        let mode = &mut self.mode;
        let Some(flow) = mode.flow.as_mut() else {
            return Ok(None);
        };
        core.fields.params.num_particles = mode.particles.count;
        core.ctx.queue.write_buffer(
            &core.fields.params_buffer,
            0,
            bytemuck::bytes_of(&core.fields.params),
        );
        flow.begin(
            &core.ctx,
            &core.scene,
            (&core.fields, &mode.particles),
            core.time,
            dt,
        );
        let mut enc = core
            .ctx
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("Simulation::run_flow"),
            });
        enc.clear_buffer(&core.fields.counters, 0, None);
        {
            let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("flow"),
                timestamp_writes: None,
            });
            flow.record(&mut pass);
        }
        core.ctx.submit(enc.finish());
        let c: Vec<u32> = crate::gpu::read_buffer(&core.ctx, &core.fields.counters)?;
        mode.particles.count = flow.finish(&c);
        use crate::gpu::constants::{COUNTER_EMITTED, COUNTER_REMOVED};
        Ok(Some((c[COUNTER_EMITTED], c[COUNTER_REMOVED])))
    }

    /// Replaces the particle state (same count as the scene seeded). Tests use it to run
    /// the stages on arbitrary input.
    pub fn upload_particles(&mut self, pos: &[[f32; 4]], vel: &[[f32; 4]]) -> Result<(), SimError> {
        // With inflow or outflow the count may change, up to the buffers' capacity.
        let fits = if self.mode.flow.is_some() {
            pos.len() <= self.mode.particles.capacity as usize
        } else {
            pos.len() == self.mode.particles.count as usize
        };
        if !fits || vel.len() != pos.len() {
            return Err(SimError::Unsupported(format!(
                "upload_particles: expected {} particles, got {} positions and {} velocities",
                self.mode.particles.count,
                pos.len(),
                vel.len()
            )));
        }
        self.mode.particles.count = pos.len() as u32;
        self.fields.params.num_particles = pos.len() as u32;
        if !pos.is_empty() {
            self.ctx
                .queue
                .write_buffer(&self.mode.particles.pos, 0, bytemuck::cast_slice(pos));
            self.ctx
                .queue
                .write_buffer(&self.mode.particles.vel, 0, bytemuck::cast_slice(vel));
        }
        self.max_speed = vel
            .iter()
            .map(|v| (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt())
            .fold(0.0, f32::max);
        Ok(())
    }
}

impl Simulation {
    /// Rebuilds the `mg` V-cycle with its one-workgroup tail starting at the first coarse
    /// level of at most `tail_cells` cells (0: the coarsest alone), with or without the
    /// boundary sweeps (`air`, `Multigrid::set_air`), for the tests that compare the ways
    /// of running a cycle. Call between substeps.
    pub fn set_mg(&mut self, tail_cells: u32, air: bool) {
        use crate::sim::core::pressure::multigrid::{MgPlan, Multigrid};
        let plan = MgPlan::with_tail_cells(self.fields.params.n, tail_cells);
        let mut mg = Multigrid::with_plan(&self.ctx.device, &self.fields, &self.pcg, plan);
        mg.set_air(&self.ctx.queue, air);
        self.core.pressure.precond.multigrid = mg;
    }

    /// z = M^-1 r with the GPU preconditioner `kind` on the matrix of the last solve.
    pub fn apply_preconditioner(
        &mut self,
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
        self.core.ensure_preconditioner(kind);
        Ok(self
            .pressure
            .apply_preconditioner(&self.ctx, &self.fields, &self.pcg, kind, r)?)
    }
}

impl Simulation {
    /// The state after the last frame (src/sim/runner/state.rs): the shared part and the
    /// particles (positions, velocities, and the APIC matrices when the scene uses them),
    /// and in a scene with inflow or outflow that stage's host state.
    pub fn save_state(&self) -> Result<crate::sim::runner::state::SimState, SimError> {
        let mut s = self.core.capture_core(SceneKind::Liquid)?;
        let p = &self.mode.particles;
        let n = p.count as u64;
        s.push_words("particles", &[p.count as f64]);
        if p.count > 0 {
            s.push_buffer_prefix(&self.ctx, "particles.pos", &p.pos, 16 * n)?;
            s.push_buffer_prefix(&self.ctx, "particles.vel", &p.vel, 16 * n)?;
            if p.has_affine() {
                s.push_buffer_prefix(&self.ctx, "particles.affine", &p.affine, 48 * n)?;
            }
        }
        if let Some(flow) = &self.mode.flow {
            s.push_words("flow", &flow.state_words());
        }
        Ok(s)
    }

    /// Continues from `state`, saved from a simulation of this scene.
    pub fn restore_state(
        &mut self,
        state: &crate::sim::runner::state::SimState,
    ) -> Result<(), SimError> {
        let counts = state.words("particles")?;
        let p = &self.mode.particles;
        let saved = counts.first().copied().unwrap_or(-1.0);
        // Without inflow or outflow the count never changes; with them it may be anything
        // the buffers hold.
        let fits = if self.mode.flow.is_some() {
            counts.len() == 1 && saved >= 0.0 && saved <= p.capacity as f64
        } else {
            counts == [p.count as f64]
        };
        if !fits {
            return Err(SimError::Unsupported(format!(
                "the saved state holds {saved} particles, the scene {} {}",
                if self.mode.flow.is_some() {
                    "holds at most"
                } else {
                    "seeds"
                },
                if self.mode.flow.is_some() {
                    p.capacity
                } else {
                    p.count
                }
            )));
        }
        let flow_words = match &self.mode.flow {
            Some(_) => Some(state.words("flow")?),
            None => None,
        };
        if saved > 0.0 {
            // The same checks the scene's own start passes: finite, inside the domain.
            let size = self.core.scene.domain_size();
            state.check_positions("particles.pos", size, 3)?;
            state.check_finite_f32("particles.vel")?;
            if self.mode.particles.has_affine() {
                state.check_finite_f32("particles.affine")?;
            }
        }
        self.core.restore_core(state, SceneKind::Liquid)?;
        let n = saved as u32;
        let p = &self.mode.particles;
        if n > 0 {
            let b = 16 * n as u64;
            state.restore_buffer_prefix(&self.ctx, "particles.pos", &p.pos, b)?;
            state.restore_buffer_prefix(&self.ctx, "particles.vel", &p.vel, b)?;
            if p.has_affine() {
                state.restore_buffer_prefix(&self.ctx, "particles.affine", &p.affine, 3 * b)?;
            }
        }
        if let (Some(flow), Some(w)) = (self.mode.flow.as_mut(), flow_words) {
            flow.restore_words(&w).map_err(SimError::Unsupported)?;
        }
        self.mode.particles.count = n;
        self.fields.params.num_particles = n;
        Ok(())
    }
}
