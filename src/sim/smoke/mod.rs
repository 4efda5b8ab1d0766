//! The 2D smoke mode: Eulerian smoke on an nx x ny x 1 grid, run by the same MAC grid,
//! boundary conditions, divergence, PCG and projection as the liquid (those stages are the
//! liquid's own objects, given `nz = 1`). What only smoke needs lives here: sources and
//! splats, semi-Lagrangian / MacCormack advection of velocity and dye, buoyancy and
//! vorticity confinement, painted obstacles, and tracer particles. Moving solids are rigid
//! bodies (`sim::bodies`; a kinematic one follows its prescribed velocity), stamped into
//! the cells by the mark stage.
//!
//! One substep, in order: mark cells (static solids + bodies) -> emit (sources, splats)
//! -> advect velocity and dye (with dissipation) -> forces (confinement, buoyancy) ->
//! solid boundary conditions -> pressure (divergence, PCG) -> project -> tracers -> stats.

pub mod advect;
pub mod emit;
pub mod fields;
pub mod forces;
pub mod mark;
pub mod params;
pub mod stats;
pub mod tracers;
pub mod views;

pub use fields::SmokeFields;
pub use params::{
    smoke_params, Emitter, SmokeParams, EMIT_BOX, EMIT_DISC, EMIT_SPLAT, SCHEME_MACCORMACK,
    SCHEME_SL,
};

use super::core::clock::CflTerms;
use super::core::diffusion;
use super::core::fields::{FieldRoom, GridFields, Particles};
use super::core::params::SimParams;
use super::core::pressure::PcgVectors;
use super::core::recorder::{Recorder, SharedStage, StageList};
use super::runner::{Core, Mode, ModeColumns, Runner, SmokeColumns, SubstepReport};
use super::SimError;
use crate::gpu::GpuContext;
use crate::scene::{Scene, SceneKind, SplitMix64};
use crate::sim::core::probes::Probes;
use std::sync::Arc;

pub use crate::sim::core::params::AIR_DENSITY;
/// Most emitters (scene sources + splats) per substep.
pub const MAX_EMITTERS: usize = 256;
// Scene validation caps the sources below the emitter slots, so none is dropped.
const _: () = assert!(crate::scene::MAX_SMOKE_SOURCES < MAX_EMITTERS);
/// Positions kept per tracer for its trail.
pub const TRAIL_LEN: u32 = 16;

/// The stages of one smoke substep, in order (the viewer can stop after any of them).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SmokeStage {
    Mark,
    Emit,
    Advect,
    Diffusion,
    Forces,
    Boundary,
    Pressure,
    Project,
    Tracers,
}

impl SmokeStage {
    pub const ALL: [SmokeStage; 9] = [
        SmokeStage::Mark,
        SmokeStage::Emit,
        SmokeStage::Advect,
        SmokeStage::Diffusion,
        SmokeStage::Forces,
        SmokeStage::Boundary,
        SmokeStage::Pressure,
        SmokeStage::Project,
        SmokeStage::Tracers,
    ];

    pub fn name(self) -> &'static str {
        match self {
            SmokeStage::Mark => "mark",
            SmokeStage::Emit => "emit",
            SmokeStage::Advect => "advect",
            SmokeStage::Diffusion => "diffusion",
            SmokeStage::Forces => "forces",
            SmokeStage::Boundary => "boundary",
            SmokeStage::Pressure => "pressure",
            SmokeStage::Project => "project",
            SmokeStage::Tracers => "tracers",
        }
    }
}

/// Tracers seeded uniformly (jittered) over the non-solid cells of the slice.
pub fn seed_tracers(scene: &Scene, solid: &[u32]) -> Vec<[f32; 4]> {
    let [nx, ny, _] = scene.dims();
    let h = scene.h();
    let free: Vec<usize> = (0..solid.len()).filter(|&c| solid[c] == 0).collect();
    let mut rng = SplitMix64(scene.seed ^ 0x5EED_7AC3);
    let mut out = Vec::with_capacity(scene.smoke.tracers as usize);
    if free.is_empty() {
        return out;
    }
    for _ in 0..scene.smoke.tracers {
        let c = free[(rng.next_u64() % free.len() as u64) as usize];
        let (i, j) = ((c as u32 % nx) as f64, ((c as u32 / nx) % ny) as f64);
        let x = (i + 0.05 + 0.9 * rng.next_f64()) * h;
        let y = (j + 0.05 + 0.9 * rng.next_f64()) * h;
        out.push([x as f32, y as f32, (0.5 * h) as f32, 0.0]);
    }
    out
}

pub fn memory_estimate(scene: &Scene) -> super::MemoryEstimate {
    let [nx, ny, nz] = scene.dims().map(|v| v as u64);
    let cells = nx * ny * nz;
    let faces = (nx + 1) * ny * nz + nx * (ny + 1) * nz + nx * ny * (nz + 1);
    let tracers = scene.smoke.tracers as u64;
    let room = FieldRoom {
        solid_cells: scene.has_solid_cells(),
        particles: false,
        scratch: 0,
    };
    let total = GridFields::bytes(cells, faces, room)
        + PcgVectors::bytes(
            scene.dims(),
            scene.pressure.max_iterations as u64,
            scene.pressure.preconditioner.is_mic(),
        )
        + Particles::bytes(tracers)
        + SmokeFields::bytes(cells, faces, tracers)
        + diffusion::memory(scene).0
        + super::bodies::coupling::memory(scene)
        + GridFields::open_bytes(scene, faces);
    let grid = "reduce the resolution";
    let candidates = [
        diffusion::memory_candidate(scene),
        (faces * 8, "P2G accumulator (8 bytes per face)", grid),
        (cells * 16, "per-cell vec4 fields (16 bytes per cell)", grid),
        (
            tracers * TRAIL_LEN as u64 * 16,
            "tracer trail buffer (256 bytes per tracer)",
            "reduce smoke.tracers",
        ),
    ];
    let (largest_buffer, largest_name, largest_hint) = candidates
        .into_iter()
        .max_by_key(|c| c.0)
        .unwrap_or((0, "", ""));
    super::MemoryEstimate {
        total,
        largest_buffer,
        largest_name,
        largest_hint,
    }
}

impl StageList for SmokeStage {
    const ALL: &'static [Self] = &SmokeStage::ALL;

    fn name(self) -> &'static str {
        SmokeStage::name(self)
    }

    fn shared(self) -> Option<SharedStage> {
        match self {
            SmokeStage::Boundary => Some(SharedStage::Boundary),
            SmokeStage::Pressure => Some(SharedStage::Pressure),
            SmokeStage::Project => Some(SharedStage::Project),
            _ => None,
        }
    }
}

/// What one smoke substep measured beyond the shared counters (sums over the slice, from
/// stats.wgsl).
#[derive(Clone, Debug, Default)]
pub struct SmokeSubstep {
    /// Sum over cells of mean(r, g, b) x cell volume (dye units x m^3).
    pub dye_total: f64,
    /// Dye-weighted mean height, m.
    pub dye_center_y: f64,
    /// Sum over cells of |omega|^2 x cell volume, m^3/s^2.
    pub enstrophy: f64,
    /// J, air density 1.2 kg/m^3 over the slice's depth.
    pub kinetic_energy: f64,
    /// The diffusion stage's solves (viscosity; heat and dye), when they ran.
    pub diffusion: diffusion::DiffusionReport,
}

/// The smoke's buffers, tracers, static solids and the stages only the smoke has.
pub struct Smoke {
    pub smoke: SmokeFields,
    pub tracers: Particles,
    /// The uniforms of the last substep, as uploaded.
    pub params: SmokeParams,
    mark: mark::SmokeMark,
    emit: emit::SmokeEmit,
    advect: advect::SmokeAdvect,
    forces: forces::SmokeForces,
    tracer_stage: tracers::SmokeTracers,
    stats: stats::SmokeStats,
    diffusion: diffusion::Diffusion,
    /// This substep's diffusion solves (or those it queued), kept for the report.
    diffused: diffusion::DiffusionHost,
    /// Scene and painted solids, as on the GPU.
    static_solid: Vec<u32>,
    static_vel: Vec<[f32; 4]>,
    /// The faces' open fractions, as on the GPU (where the scene's solids cut faces): an
    /// erased cell's faces open whole.
    static_open: Option<Vec<f32>>,
    static_dirty: bool,
    splats: Vec<Emitter>,
    trail_slot: u32,
}

/// The smoke simulation.
pub type SmokeSimulation = Runner<Smoke>;

impl Runner<Smoke> {
    pub fn new(ctx: Arc<GpuContext>, scene: &Scene) -> Result<Self, SimError> {
        if scene.kind != SceneKind::Smoke {
            return Err(SimError::Unsupported(format!(
                "scene {:?} is a {:?} scene; the smoke simulation runs smoke scenes",
                scene.name, scene.kind
            )));
        }
        scene.validate().map_err(SimError::Unsupported)?;
        let scene = &*scene.as_run();
        super::check_estimate(&ctx, memory_estimate(scene))?;
        let crate::scene::fractions::StaticSolids {
            flags: static_solid,
            velocity: static_vel,
            open,
        } = scene.static_solids();
        let tracer_pos = seed_tracers(scene, &static_solid);
        let mut params = SimParams::new(scene.dims(), scene.h() as f32, tracer_pos.len() as u32);
        params.gravity = [
            scene.gravity.0 as f32,
            scene.gravity.1 as f32,
            scene.gravity.2 as f32,
        ];
        let mut core = Core::new(
            ctx,
            scene,
            params,
            &SmokeStage::ALL.map(|s| s.name()),
            (open.as_deref(), 0),
        );
        let (ctx, fields) = (&core.ctx, &core.fields);
        let device = &ctx.device;
        let sp = smoke_params(scene);
        let cells = params.num_cells as u64;
        let faces = params.num_faces() as u64;
        let smoke = SmokeFields::new(device, &sp, cells, faces, tracer_pos.len() as u64);
        let zeros = vec![[0f32; 4]; tracer_pos.len()];
        let tracers = Particles::new(device, &ctx.queue, &tracer_pos, &zeros);
        // Every trail slot starts at the seed position (no streak from the origin).
        for slot in 0..TRAIL_LEN as u64 {
            ctx.queue.write_buffer(
                &smoke.trail,
                slot * tracer_pos.len() as u64 * 16,
                bytemuck::cast_slice(&tracer_pos),
            );
        }
        let mut mode = Smoke {
            mark: mark::SmokeMark::new(device, fields, &smoke),
            emit: emit::SmokeEmit::new(device, fields, &smoke),
            advect: advect::SmokeAdvect::new(device, fields, &smoke),
            forces: forces::SmokeForces::new(device, fields, &smoke),
            tracer_stage: tracers::SmokeTracers::new(device, fields, &smoke, &tracers),
            stats: stats::SmokeStats::new(device, fields, &smoke),
            diffusion: diffusion::Diffusion::new(device),
            diffused: diffusion::DiffusionHost::default(),
            static_solid,
            static_vel,
            static_open: open,
            static_dirty: true,
            splats: Vec::new(),
            trail_slot: 0,
            smoke,
            tracers,
            params: sp,
        };
        // The stats' partials come back with the substep's counters.
        core.fit_readback(mode.smoke.partials.size());
        if let Some(set) = super::bodies::BodySet::from_scene(scene) {
            let b = super::bodies::coupling::Bodies::new(
                &core.ctx,
                set,
                super::bodies::coupling::CouplingInputs {
                    fields: &core.fields,
                    pcg: &core.pcg,
                    particles: &mode.tracers,
                    mode: super::bodies::coupling::CouplingMode::Smoke,
                    base: Some((&mode.smoke.static_solid, &mode.smoke.static_vel)),
                    static_cells: None,
                    face_area: scene.h() * scene.domain.2,
                    particle_mass: 0.0,
                    deflate: false,
                },
            )?;
            mode.diffusion.set_cover(&b.coupling.cover);
            core.bodies = Some(b);
            // The solve takes the bodies' term from now on.
            core.write_solver_config();
        }
        core.ensure_split();
        core.probes = Probes::new(
            &core.ctx,
            scene,
            &core.fields,
            &core.pcg,
            Some(&mode.smoke.dye),
        );
        Ok(Self {
            core,
            mode,
            pending: None,
            pipe: Vec::new(),
        })
    }
}

/// Whether a scene diffuses anything (viscosity, heat or dye).
fn diffuses(scene: &Scene) -> bool {
    let s = &scene.smoke;
    scene.viscosity > 0.0 || s.temperature_diffusion > 0.0 || s.dye_diffusion > 0.0
}

impl Runner<Smoke> {
    /// Whether the scene diffuses anything (viscosity, heat or dye).
    pub fn diffuses(&self) -> bool {
        diffuses(&self.core.scene)
    }

    /// The diffusion stage alone on the current velocities, dye and cell types (after a
    /// `SmokeStage::Mark`); the substep runs it too. Runs only the solves whose
    /// coefficient is not 0.
    pub fn run_diffusion(&mut self, dt: f64) -> Result<diffusion::DiffusionReport, SimError> {
        self.core.set_dt(dt);
        self.mode.diffuse(&self.core)
    }
}

/// Which of the diffusion's systems the scene uses: the velocity's (viscosity) and the
/// scalars' (heat and dye).
fn diffused(scene: &Scene) -> (bool, bool) {
    let s = &scene.smoke;
    (
        scene.viscosity > 0.0,
        s.temperature_diffusion > 0.0 || s.dye_diffusion > 0.0,
    )
}

impl Smoke {
    /// The diffusion coefficients of the dye's r, g, b and the temperature, m^2/s.
    fn scalar_coefficients(scene: &Scene) -> [f64; 4] {
        let s = &scene.smoke;
        [
            s.dye_diffusion,
            s.dye_diffusion,
            s.dye_diffusion,
            s.temperature_diffusion,
        ]
    }

    /// [`Self::diffuse`] queued ahead into `enc` for a pipelined substep's `slot`.
    fn queue_diffusion(
        &mut self,
        core: &Core,
        enc: &mut wgpu::CommandEncoder,
        slot: usize,
    ) -> Result<diffusion::QueuedSolves, SimError> {
        let scene = &core.scene;
        let s = &scene.smoke;
        let (velocity, scalars) = diffused(scene);
        let mut queued = diffusion::QueuedSolves::default();
        if velocity {
            self.diffusion.wall_slide = [0.0, 0.0, 0.0, s.lid_velocity as f32];
            let coupling = core.viscous_coupling(&mut self.diffusion, Some(&self.smoke.dye))?;
            queued.velocity = Some(self.diffusion.queue_velocity(
                &core.ctx,
                enc,
                &core.fields,
                Some(&self.smoke.dye),
                scene.viscosity,
                &scene.diffusion,
                slot,
                coupling.map(|c| c as &dyn diffusion::VelocityCoupling),
            )?);
        }
        if scalars {
            queued.scalars = Some(self.diffusion.queue_scalars(
                &core.ctx,
                enc,
                &core.fields,
                &self.smoke.dye,
                Self::scalar_coefficients(scene),
                (&s.wall_temperature, &s.wall_dye),
                &scene.diffusion,
                slot,
            )?);
        }
        Ok(queued)
    }

    /// One implicit step of viscosity, heat and dye diffusion over the substep's dt
    /// (`SimParams::dt`), those whose coefficient is not 0.
    fn diffuse(&mut self, core: &Core) -> Result<diffusion::DiffusionReport, SimError> {
        let scene = &core.scene;
        let s = &scene.smoke;
        let nu = scene.viscosity;
        let k = Self::scalar_coefficients(scene);
        let scalars = k.iter().any(|&v| v > 0.0);
        let timing = |begin: bool, end: bool| {
            core.timer.enabled().then_some(diffusion::Timing {
                timer: &core.timer,
                stage: SmokeStage::Diffusion.name(),
                begin,
                end,
            })
        };
        let mut report = diffusion::DiffusionReport::default();
        if nu > 0.0 {
            // The top wall slides along +x at the lid's speed (a lid-driven cavity).
            self.diffusion.wall_slide = [0.0, 0.0, 0.0, s.lid_velocity as f32];
        }
        let coupling = if nu > 0.0 {
            core.viscous_coupling(&mut self.diffusion, Some(&self.smoke.dye))?
        } else {
            None
        };
        if nu > 0.0 && scalars && coupling.is_none() {
            // Both solves queued before one read brings both back.
            let (v, sc) = self.diffusion.both(
                &core.ctx,
                &core.fields,
                &self.smoke.dye,
                nu,
                k,
                (&s.wall_temperature, &s.wall_dye),
                &scene.diffusion,
                timing(true, true),
            )?;
            report.velocity = Some(v);
            report.scalars = Some(sc);
            return Ok(report);
        }
        if nu > 0.0 {
            report.velocity = Some(self.diffusion.velocity(
                &core.ctx,
                &core.fields,
                Some(&self.smoke.dye),
                nu,
                &scene.diffusion,
                timing(true, !scalars),
                coupling.map(|c| c as &dyn diffusion::VelocityCoupling),
            )?);
        }
        if scalars {
            report.scalars = Some(self.diffusion.scalars(
                &core.ctx,
                &core.fields,
                &self.smoke.dye,
                k,
                &s.wall_temperature,
                &s.wall_dye,
                &scene.diffusion,
                timing(nu <= 0.0, true),
            )?);
        }
        Ok(report)
    }

    /// Uploads the smoke's uniforms, emitters and (when changed) the static solids for a
    /// substep of `dt`.
    fn upload(&mut self, core: &Core) {
        let q = &core.ctx.queue;
        let scene = &core.scene;
        let mut emitters: Vec<Emitter> = scene.smoke.sources.iter().map(Emitter::source).collect();
        emitters.truncate(MAX_EMITTERS);
        let room = MAX_EMITTERS - emitters.len();
        emitters.extend(self.splats.drain(..).take(room));
        let mut p = smoke_params(scene);
        p.num_emitters = emitters.len() as u32;
        p.trail_slot = self.trail_slot;
        p.num_tracers = self.tracers.count;
        self.params = p;
        q.write_buffer(&self.smoke.params_buffer, 0, bytemuck::bytes_of(&p));
        if !emitters.is_empty() {
            q.write_buffer(&self.smoke.emitters, 0, bytemuck::cast_slice(&emitters));
        }
        if self.static_dirty {
            q.write_buffer(
                &self.smoke.static_solid,
                0,
                bytemuck::cast_slice(&self.static_solid),
            );
            q.write_buffer(
                &self.smoke.static_vel,
                0,
                bytemuck::cast_slice(&self.static_vel),
            );
            if let Some(open) = &self.static_open {
                q.write_buffer(core.fields.static_open(), 0, bytemuck::cast_slice(open));
            }
            self.static_dirty = false;
        }
    }
}

/// The smoke's CFL rule: the largest speed plus sqrt(h a), with a bound on the
/// acceleration the buoyancy and the dye's weight give (1 m/s^2 more).
fn cfl_terms(scene: &Scene) -> CflTerms {
    let h = scene.h();
    let s = &scene.smoke;
    let accel = s.buoyancy.abs() + s.dye_weight.abs() + 1.0;
    CflTerms {
        cfl_h: scene.cfl * h,
        accel: (h * accel).sqrt(),
        cap: None,
    }
}

impl Mode for Smoke {
    type Stage = SmokeStage;
    type Substep = SmokeSubstep;
    type Host = diffusion::DiffusionHost;
    const SPEED: &'static str = "the largest smoke speed";

    /// Substep length from the CFL number (semi-Lagrangian advection is stable for any
    /// step; the CFL bound keeps it accurate). Buoyancy's speed scale keeps the first step
    /// from a fluid at rest from being the whole frame.
    fn cfl_dt(&self, core: &Core) -> f64 {
        cfl_terms(&core.scene).dt(core.max_speed_with_bodies())
    }

    /// Without bodies nothing on the host needs a substep's length before it runs (the
    /// dissipation's factors and the diffusion's coefficients are taken on the GPU from
    /// `SimParams::dt`).
    fn gpu_clock(&self, core: &Core) -> Option<CflTerms> {
        core.bodies.is_none().then(|| cfl_terms(&core.scene))
    }

    fn particles(&self) -> u32 {
        self.tracers.count
    }

    fn reads_while_recording(&self, core: &Core) -> bool {
        // The diffusion solves read their convergence until each has solved once; then
        // a pipelined substep queues them ahead.
        let (velocity, scalars) = diffused(&core.scene);
        (velocity || scalars) && !self.diffusion.can_queue(velocity, scalars)
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

    fn begin_substep(&mut self, core: &mut Core, _dt: f64) {
        self.diffused = diffusion::DiffusionHost::default();
        if self.static_dirty {
            // The regions of the static solids alone, for the substeps in which no body can
            // seal one (BodyCoupling::separate_regions).
            if let Some(b) = core.bodies.as_mut() {
                let n = core.fields.params.n;
                let open = self.static_open.as_deref();
                b.coupling.set_static_regions(&self.static_solid, open, n);
            }
        }
        self.upload(core);
    }

    fn take_host(&mut self) -> diffusion::DiffusionHost {
        std::mem::take(&mut self.diffused)
    }

    fn record(
        &mut self,
        stage: SmokeStage,
        rec: &mut Recorder<'_>,
        core: &Core,
    ) -> Result<(), SimError> {
        let f = &core.fields;
        match stage {
            SmokeStage::Mark => {
                let mut pass = rec.pass(stage);
                self.mark.record(&mut pass, f);
                // Bodies (moving or not) become solids over the static ones.
                if let Some(b) = &core.bodies {
                    b.coupling.record_stamp(&mut pass, f);
                }
                self.mark.record_clear(&mut pass, f);
            }
            SmokeStage::Emit => {
                let mut pass = rec.pass(stage);
                self.emit.record(&mut pass, f);
            }
            SmokeStage::Advect => {
                self.advect.record_copies(rec.encoder(), f, &self.smoke);
                let mut pass = rec.pass(stage);
                self.advect.record(&mut pass, f);
            }
            SmokeStage::Diffusion => {
                // Viscosity, heat and dye diffusion: implicit solves with their own
                // submissions, skipped when every coefficient is 0. Before the forces, on
                // velocities with the solids' own at their faces: diffusing the buoyancy
                // increment would drag it to zero at no-slip walls, a rotational error the
                // projection cannot remove, which would stir a conducting layer that should
                // rest.
                let (velocity, scalars) = diffused(&core.scene);
                let queue = core
                    .queue_slot
                    .filter(|_| velocity || scalars)
                    .filter(|_| self.diffusion.can_queue(velocity, scalars));
                if let Some(slot) = queue {
                    // A pipelined substep: the solves queue ahead behind the boundary
                    // pass, and their states come back with the substep's slot.
                    {
                        let mut pass = rec.pass_part(stage, true, false);
                        core.boundary.record(&mut pass, f);
                        core.record_split_in(&mut pass);
                    }
                    self.diffused.queued = self.queue_diffusion(core, rec.encoder(), slot)?;
                    let mut pass = rec.pass_part(stage, false, true);
                    core.record_split_out(&mut pass);
                } else if velocity || scalars {
                    {
                        let mut pass =
                            rec.encoder()
                                .begin_compute_pass(&wgpu::ComputePassDescriptor {
                                    label: Some("diffusion::boundary"),
                                    timestamp_writes: None,
                                });
                        core.boundary.record(&mut pass, f);
                        core.record_split_in(&mut pass);
                    }
                    rec.submit("Smoke::substep_forces");
                    self.diffused.report = self.diffuse(core)?;
                    core.record_split_out_pass(rec.encoder());
                }
            }
            SmokeStage::Forces => {
                let mut pass = rec.pass(stage);
                core.record_split_mark(&mut pass);
                self.forces.record(&mut pass, f);
            }
            SmokeStage::Tracers => {
                let mut pass = rec.pass(stage);
                self.tracer_stage.record(&mut pass, &self.tracers);
            }
            SmokeStage::Boundary | SmokeStage::Pressure | SmokeStage::Project => {
                unreachable!("the runner records the shared stage {stage:?}")
            }
        }
        Ok(())
    }

    fn record_end(&mut self, rec: &mut Recorder<'_>, core: &Core) {
        {
            // Stats and the vorticity view see the velocity as the step leaves it.
            let mut pass = rec
                .encoder()
                .begin_compute_pass(&wgpu::ComputePassDescriptor {
                    label: Some("stats"),
                    timestamp_writes: None,
                });
            self.forces.record_vorticity(&mut pass, &core.fields);
            self.stats.record(&mut pass, &core.fields);
        }
    }

    fn readback(&self, _core: &Core) -> Option<&wgpu::Buffer> {
        Some(&self.smoke.partials)
    }

    fn read_substep(
        &mut self,
        core: &Core,
        _c: &[u32],
        extra: &[u32],
        _last: SmokeStage,
        host: diffusion::DiffusionHost,
    ) -> Result<SmokeSubstep, SimError> {
        let partials: &[[f32; 4]] = bytemuck::cast_slice(extra);
        let mut sums = [0f64; 4];
        for p in partials {
            for a in 0..4 {
                sums[a] += p[a] as f64;
            }
        }
        let h = core.scene.h();
        let cell_volume = h * h * core.scene.domain.2;
        Ok(SmokeSubstep {
            dye_total: sums[0] * cell_volume,
            dye_center_y: if sums[0] > 0.0 {
                sums[1] / sums[0]
            } else {
                0.0
            },
            enstrophy: sums[2] * cell_volume,
            kinetic_energy: 0.5 * AIR_DENSITY * sums[3] * cell_volume,
            diffusion: host.report,
        })
    }

    fn end_full_substep(&mut self) {
        self.trail_slot = (self.trail_slot + 1) % TRAIL_LEN;
    }

    fn skipped_substeps(&mut self, n: u32) {
        self.trail_slot = (self.trail_slot + TRAIL_LEN - n % TRAIL_LEN) % TRAIL_LEN;
    }

    fn check_finite(
        &self,
        s: &SmokeSubstep,
        finite: &mut dyn FnMut(&'static str, f64) -> Result<(), SimError>,
    ) -> Result<(), SimError> {
        finite("the total dye", s.dye_total)?;
        finite("the kinetic energy", s.kinetic_energy)?;
        finite("the enstrophy", s.enstrophy)
    }

    fn frame_columns(
        &self,
        core: &Core,
        last: &SubstepReport<SmokeSubstep>,
        all: &[SmokeSubstep],
        _substeps: u32,
    ) -> Result<(f64, f64, ModeColumns), SimError> {
        let h = core.scene.h();
        let x = &last.extra;
        Ok((
            x.kinetic_energy,
            last.fluid_cells as f64 * h * h * core.scene.domain.2,
            ModeColumns::Smoke(SmokeColumns {
                dye_total: x.dye_total,
                dye_center_y: x.dye_center_y,
                enstrophy: x.enstrophy,
                viscosity_iterations: all.iter().map(|s| s.diffusion.viscosity_iterations()).sum(),
                diffusion_unconverged: all
                    .iter()
                    .map(|s| s.diffusion.unconverged(core.scene.diffusion.tolerance))
                    .sum(),
            }),
        ))
    }
}

impl SmokeSimulation {
    /// Adds a gaussian splat of dye and velocity, applied at the next substep.
    pub fn add_splat(&mut self, splat: Emitter) {
        let room = MAX_EMITTERS - self.scene.smoke.sources.len().min(MAX_EMITTERS);
        if self.mode.splats.len() < room {
            self.mode.splats.push(splat);
        } else {
            log::warn!("more than {room} splats in one substep; dropping the rest");
        }
    }

    /// Paints (`solid = true`) or erases static SOLID cells in a disc of `radius` metres
    /// around `centre`. Scene solids can be erased too. Returns the cells changed.
    pub fn paint_solid(&mut self, centre: [f64; 2], radius: f64, solid: bool) -> usize {
        let [nx, ny, _] = self.dims();
        let h = self.scene.h();
        let mut changed = 0;
        for j in 0..ny {
            for i in 0..nx {
                let x = (i as f64 + 0.5) * h - centre[0];
                let y = (j as f64 + 0.5) * h - centre[1];
                if x * x + y * y > radius * radius {
                    continue;
                }
                let c = (i + nx * j) as usize;
                let v = solid as u32;
                if self.mode.static_solid[c] != v {
                    self.mode.static_solid[c] = v;
                    self.mode.static_vel[c] = [0.0; 4];
                    changed += 1;
                }
                // Erasing leaves no solid in the disc: its cells' faces open whole.
                if !solid {
                    if let Some(open) = self.mode.static_open.as_mut() {
                        self.mode.static_dirty |= open_cell_faces(open, [nx, ny], i, j);
                    }
                }
            }
        }
        if changed > 0 {
            self.mode.static_dirty = true;
        }
        changed
    }

    /// The static solid mask (scene + painted), i-fastest.
    pub fn static_solid(&self) -> &[u32] {
        &self.mode.static_solid
    }

    /// Applies settings that need no reallocation (everything in `smoke` except the tracer
    /// count, gravity, CFL, frame length, solver settings).
    pub fn apply_live_settings(&mut self, scene: &Scene) -> Result<(), String> {
        self.core.check_live_settings(scene)?;
        if scene.smoke.tracers != self.scene.smoke.tracers {
            return Err("this change needs a reset".into());
        }
        self.core.apply_live_settings(scene);
        self.core.scene.smoke = scene.smoke.clone();
        self.core.scene.viscosity = scene.viscosity;
        self.core.ensure_split();
        self.core.scene.diffusion = scene.diffusion.clone();
        Ok(())
    }

    /// Dye (rgb) and temperature (w) per cell.
    pub fn read_dye(&self) -> Result<Vec<[f32; 4]>, SimError> {
        Ok(crate::gpu::read_buffer(&self.ctx, &self.mode.smoke.dye)?)
    }

    /// Face velocities (u, v, w back to back).
    pub fn read_velocity(&self) -> Result<Vec<f32>, SimError> {
        Ok(crate::gpu::read_buffer(&self.ctx, &self.fields.vel)?)
    }

    /// Replaces the dye/temperature and face velocities (tests start from chosen states).
    pub fn upload_state(&mut self, dye: &[[f32; 4]], vel: &[f32]) -> Result<(), SimError> {
        if dye.len() != self.fields.num_cells() as usize
            || vel.len() != self.fields.num_faces() as usize
        {
            return Err(SimError::Unsupported(format!(
                "upload_state: expected {} cells and {} faces, got {} and {}",
                self.fields.num_cells(),
                self.fields.num_faces(),
                dye.len(),
                vel.len()
            )));
        }
        self.ctx
            .queue
            .write_buffer(&self.mode.smoke.dye, 0, bytemuck::cast_slice(dye));
        self.ctx
            .queue
            .write_buffer(&self.fields.vel, 0, bytemuck::cast_slice(vel));
        Ok(())
    }

    /// Tracer positions (xyz, w unused).
    pub fn read_tracers(&self) -> Result<Vec<[f32; 4]>, SimError> {
        if self.mode.tracers.count == 0 {
            return Ok(vec![]);
        }
        Ok(crate::gpu::read_buffer(&self.ctx, &self.mode.tracers.pos)?)
    }

    /// The trail slot the next substep writes (the newest position is the slot before).
    pub fn trail_slot(&self) -> u32 {
        self.mode.trail_slot
    }
}

impl SmokeSimulation {
    /// The state after the last frame (src/sim/runner/state.rs): the shared part, the dye and
    /// temperature, the tracers and their trails, and the solids painted in the viewer.
    pub fn save_state(&self) -> Result<crate::sim::runner::state::SimState, SimError> {
        let mut s = self.core.capture_core(SceneKind::Smoke)?;
        let m = &self.mode;
        s.push_words("smoke", &[m.tracers.count as f64, m.trail_slot as f64]);
        s.push_buffer(&self.ctx, "smoke.dye", &m.smoke.dye)?;
        if m.tracers.count > 0 {
            s.push_buffer(&self.ctx, "tracers.pos", &m.tracers.pos)?;
            s.push_buffer(&self.ctx, "tracers.trail", &m.smoke.trail)?;
        }
        s.push(
            "smoke.static_solid",
            bytemuck::cast_slice(&m.static_solid).to_vec(),
        );
        s.push(
            "smoke.static_vel",
            bytemuck::cast_slice(&m.static_vel).to_vec(),
        );
        if let Some(open) = &m.static_open {
            s.push("smoke.open", bytemuck::cast_slice(open).to_vec());
        }
        // What the bodies covered in the last substep and the open fractions they left,
        // which the next substep compares its own with (a face's uncovered part joins the
        // air at the body's velocity: sim/bodies/coupling.wgsl, `cover_faces`).
        if let (Some(b), true) = (&self.core.bodies, self.core.fields.open_static.is_some()) {
            s.push_buffer(&self.ctx, "bodies.cover", &b.coupling.cover)?;
            s.push_buffer(&self.ctx, "bodies.open", &self.core.fields.open)?;
        }
        Ok(s)
    }

    /// Continues from `state`, saved from a simulation of this scene.
    pub fn restore_state(
        &mut self,
        state: &crate::sim::runner::state::SimState,
    ) -> Result<(), SimError> {
        let w = state.words("smoke")?;
        if w.len() != 2 || w[0] != self.mode.tracers.count as f64 || w[1] >= TRAIL_LEN as f64 {
            return Err(SimError::Unsupported(format!(
                "the saved state holds {} tracers, the scene {}",
                w.first().copied().unwrap_or(0.0),
                self.mode.tracers.count
            )));
        }
        let solid = state.get("smoke.static_solid")?;
        let vel = state.get("smoke.static_vel")?;
        if solid.len() != self.mode.static_solid.len() * 4
            || vel.len() != self.mode.static_vel.len() * 16
        {
            return Err(SimError::Unsupported(
                "the saved solids are of another grid".into(),
            ));
        }
        state.check_finite_f32("smoke.dye")?;
        if self.mode.tracers.count > 0 {
            let size = self.core.scene.domain_size();
            state.check_positions("tracers.pos", size, 2)?;
        }
        self.core.restore_core(state, SceneKind::Smoke)?;
        let ctx = &self.core.ctx;
        let m = &mut self.mode;
        state.restore_buffer(ctx, "smoke.dye", &m.smoke.dye)?;
        if m.tracers.count > 0 {
            state.restore_buffer(ctx, "tracers.pos", &m.tracers.pos)?;
            state.restore_buffer(ctx, "tracers.trail", &m.smoke.trail)?;
        }
        m.trail_slot = w[1] as u32;
        m.static_solid = bytemuck::pod_collect_to_vec(solid);
        m.static_vel = bytemuck::pod_collect_to_vec(vel);
        // The cut faces as saved (the cells erased before the save opened theirs); a
        // checkpoint from before eddy cut faces has none: the scene's then.
        if let Some(open) = m.static_open.as_mut() {
            match state.get("smoke.open") {
                Ok(saved) if saved.len() == open.len() * 4 => {
                    *open = bytemuck::pod_collect_to_vec(saved);
                }
                Ok(_) => {
                    return Err(SimError::Unsupported(
                        "the saved cut faces are of another grid".into(),
                    ))
                }
                Err(_) => {
                    if let Some(scene) = self.core.scene.static_solids().open {
                        *open = scene;
                    }
                }
            }
        }
        m.static_dirty = true;
        // A checkpoint from before the smoke's bodies cut faces holds no cover: the first
        // substep then has nothing to compare with and blends no face.
        if let (Some(b), true) = (&self.core.bodies, self.core.fields.open_static.is_some()) {
            if state.get("bodies.cover").is_ok() {
                state.restore_buffer(ctx, "bodies.cover", &b.coupling.cover)?;
                state.restore_buffer(ctx, "bodies.open", &self.core.fields.open)?;
            }
        }
        Ok(())
    }
}

/// Opens the in-plane faces of cell (i, j) of an `n` slice whole (its solid was erased);
/// whether one was not.
fn open_cell_faces(open: &mut [f32], [nx, ny]: [u32; 2], i: u32, j: u32) -> bool {
    use crate::scene::fractions::face_slot;
    let (n, i, j) = ([nx as usize, ny as usize, 1], i as usize, j as usize);
    let mut changed = false;
    for g in [
        face_slot(n, 0, [i, j, 0]),
        face_slot(n, 0, [i + 1, j, 0]),
        face_slot(n, 1, [i, j, 0]),
        face_slot(n, 1, [i, j + 1, 0]),
    ] {
        changed |= open[g] != 1.0;
        open[g] = 1.0;
    }
    changed
}
