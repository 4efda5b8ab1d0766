//! The 2D smoke mode: Eulerian smoke on an nx x ny x 1 grid, run by the same MAC grid,
//! boundary conditions, divergence, PCG and projection as the liquid (those stages are the
//! liquid's own objects, given `nz = 1`). What only smoke needs lives here: sources and
//! splats, semi-Lagrangian / MacCormack advection of velocity and dye, buoyancy and
//! vorticity confinement, painted and moving obstacles, and tracer particles.
//!
//! One substep, in order: mark cells (static solids + obstacle) -> emit (sources, splats)
//! -> advect velocity and dye (with dissipation) -> forces (confinement, buoyancy) ->
//! solid boundary conditions -> pressure (divergence, PCG) -> project -> tracers -> stats.

pub mod advect;
pub mod emit;
pub mod forces;
pub mod mark;
pub mod stats;
pub mod tracers;
pub mod views;

use super::fields::{GridFields, Particles, COUNTERS};
use super::params::SimParams;
use super::pressure::{PcgVectors, PressureSolver, SolveReport};
use super::{boundary, divergence, project, SimError};
use crate::gpu::{
    storage_buffer, uniform_buffer, BufferReader, GpuContext, PassTimer, StageTiming,
};
use crate::scene::{AdvectionScheme, Scene, SceneKind, Shape, SplitMix64};
use bytemuck::{Pod, Zeroable};
use std::sync::Arc;

/// Air density for kinetic energy, kg/m^3.
pub const AIR_DENSITY: f64 = 1.2;
/// Most emitters (scene sources + splats) per substep.
pub const MAX_EMITTERS: usize = 256;
// Scene validation caps the sources below the emitter slots, so none is dropped.
const _: () = assert!(crate::scene::MAX_SMOKE_SOURCES < MAX_EMITTERS);
/// Positions kept per tracer for its trail.
pub const TRAIL_LEN: u32 = 16;

/// Keep in sync with `SmokeParams` in shaders/smoke_common.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
pub struct SmokeParams {
    pub obstacle_lo: [f32; 4],
    pub obstacle_hi: [f32; 4],
    pub obstacle_vel: [f32; 4],
    pub up: [f32; 4],
    pub decay: [f32; 4],
    pub buoyancy: f32,
    pub dye_weight: f32,
    pub ambient: f32,
    pub vorticity: f32,
    pub velocity_decay: f32,
    pub scheme: u32,
    pub num_emitters: u32,
    pub trail_slot: u32,
    pub num_tracers: u32,
    pub trail_len: u32,
    pub _pad: [u32; 2],
}
const _: () = assert!(std::mem::size_of::<SmokeParams>() == 128);

/// Keep in sync with `Emitter` in shaders/smoke_common.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct Emitter {
    pub lo: [f32; 4],
    pub hi: [f32; 4],
    /// rgb dye, w temperature.
    pub dye: [f32; 4],
    pub vel: [f32; 4],
    /// 0 box, 1 disc (sources: raise to the value), 2 gaussian splat (add).
    pub kind: u32,
    pub set_velocity: u32,
    pub _pad: [u32; 2],
}
const _: () = assert!(std::mem::size_of::<Emitter>() == 80);

pub const EMIT_BOX: u32 = 0;
pub const EMIT_DISC: u32 = 1;
pub const EMIT_SPLAT: u32 = 2;

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
    /// Per-workgroup stats sums (see shaders/smoke_stats.wgsl).
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
            partials: f("SmokeFields::partials", cells.div_ceil(64) * 16),
        }
    }

    pub fn bytes(cells: u64, faces: u64, tracers: u64) -> u64 {
        cells * (16 * 6 + 4) + faces * 4 + tracers * TRAIL_LEN as u64 * 16 + cells.div_ceil(64) * 16
    }
}

/// The stages of one smoke substep, in order (the viewer can stop after any of them).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SmokeStage {
    Mark,
    Emit,
    Advect,
    Forces,
    Boundary,
    Pressure,
    Project,
    Tracers,
}

impl SmokeStage {
    pub const ALL: [SmokeStage; 8] = [
        SmokeStage::Mark,
        SmokeStage::Emit,
        SmokeStage::Advect,
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
            SmokeStage::Forces => "forces",
            SmokeStage::Boundary => "boundary",
            SmokeStage::Pressure => "pressure",
            SmokeStage::Project => "project",
            SmokeStage::Tracers => "tracers",
        }
    }
}

/// One row of a smoke run's stats.csv: the liquid's columns where they apply, then the
/// smoke's own.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct SmokeFrameStats {
    pub frame: u64,
    pub time_s: f64,
    pub substeps: u32,
    /// Tracer particles.
    pub particles: u32,
    /// Non-SOLID cells.
    pub fluid_cells: u32,
    pub pcg_iterations: u32,
    pub pcg_residual: f64,
    pub max_divergence: f64,
    /// J, air density 1.2 kg/m^3 over the slice's depth.
    pub kinetic_energy: f64,
    pub max_speed: f64,
    /// Non-SOLID cells x cell volume, m^3.
    pub volume: f64,
    /// Largest x holding dye (> 1e-3), m.
    pub front_x: f64,
    pub pcg_iterations_total: u32,
    /// Sum over cells of mean(r, g, b) x cell volume (dye units x m^3).
    pub dye_total: f64,
    /// Dye-weighted mean height, m.
    pub dye_center_y: f64,
    /// Sum over cells of |omega|^2 x cell volume, m^3/s^2.
    pub enstrophy: f64,
    /// Largest final max|r| / max|b| over the frame's solves (not in stats.csv).
    pub pcg_max_residual: f64,
    /// Solves in the frame that stopped above the tolerance, at max_iterations or on a
    /// breakdown (not in stats.csv).
    pub unconverged_solves: u32,
}

impl SmokeFrameStats {
    pub const CSV_HEADER: &'static str = "frame,time_s,substeps,particles,fluid_cells,pcg_iterations,pcg_residual,max_divergence,kinetic_energy,max_speed,volume,front_x,pcg_iterations_total,dye_total,dye_center_y,enstrophy";

    pub fn csv_row(&self) -> String {
        format!(
            "{},{:.6},{},{},{},{},{:.6e},{:.6e},{:.6e},{:.6},{:.6e},{:.6},{},{:.9e},{:.6},{:.6e}",
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
            self.dye_total,
            self.dye_center_y,
            self.enstrophy
        )
    }
}

/// What one smoke substep measured.
#[derive(Clone, Debug, Default)]
pub struct SmokeSubstepReport {
    pub dt: f64,
    pub fluid_cells: u32,
    pub max_speed: f32,
    pub front_x: f32,
    pub max_divergence: f32,
    pub dye_total: f64,
    pub dye_center_y: f64,
    pub enstrophy: f64,
    pub kinetic_energy: f64,
    pub solve: Option<SolveReport>,
}

/// The moving obstacle's current state.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Obstacle {
    /// Box: min corner; disc: centre (m).
    pub lo: [f64; 2],
    /// Box: max corner (m).
    pub hi: [f64; 2],
    /// Disc radius (m), 0 for a box.
    pub radius: f64,
    pub velocity: [f64; 2],
    /// While the user drags it, the obstacle follows the mouse instead of moving itself.
    pub held: bool,
}

impl Obstacle {
    pub fn from_shape(s: &Shape) -> Self {
        let v = s.velocity();
        match s {
            Shape::Box { min, max, .. } => Obstacle {
                lo: [min.0, min.1],
                hi: [max.0, max.1],
                radius: 0.0,
                velocity: [v[0], v[1]],
                held: false,
            },
            Shape::Sphere { center, radius, .. } => Obstacle {
                lo: [center.0, center.1],
                hi: [center.0, center.1],
                radius: *radius,
                velocity: [v[0], v[1]],
                held: false,
            },
        }
    }

    /// Centre of the obstacle (m).
    pub fn centre(&self) -> [f64; 2] {
        [
            0.5 * (self.lo[0] + self.hi[0]),
            0.5 * (self.lo[1] + self.hi[1]),
        ]
    }

    /// Half extents (m) in x and y.
    pub fn half(&self) -> [f64; 2] {
        if self.radius > 0.0 {
            [self.radius; 2]
        } else {
            [
                0.5 * (self.hi[0] - self.lo[0]),
                0.5 * (self.hi[1] - self.lo[1]),
            ]
        }
    }

    /// Moves the centre to `c`, keeping the obstacle inside `domain`.
    pub fn set_centre(&mut self, c: [f64; 2], domain: [f64; 2]) {
        let half = self.half();
        let mut centre = [0.0; 2];
        for a in 0..2 {
            centre[a] = c[a].clamp(half[a], (domain[a] - half[a]).max(half[a]));
        }
        if self.radius > 0.0 {
            self.lo = centre;
            self.hi = centre;
        } else {
            self.lo = [centre[0] - half[0], centre[1] - half[1]];
            self.hi = [centre[0] + half[0], centre[1] + half[1]];
        }
    }

    /// Moves by velocity * dt and bounces off the domain walls.
    pub fn advance(&mut self, dt: f64, domain: [f64; 2]) {
        let half = self.half();
        let c = self.centre();
        let mut next = [0.0; 2];
        for a in 0..2 {
            next[a] = c[a] + self.velocity[a] * dt;
            if next[a] - half[a] < 0.0 && self.velocity[a] < 0.0
                || next[a] + half[a] > domain[a] && self.velocity[a] > 0.0
            {
                self.velocity[a] = -self.velocity[a];
            }
        }
        self.set_centre(next, domain);
    }

    fn write(&self, p: &mut SmokeParams) {
        if self.radius > 0.0 {
            p.obstacle_lo = [self.lo[0] as f32, self.lo[1] as f32, 0.0, 2.0];
            p.obstacle_hi = [0.0, 0.0, 0.0, self.radius as f32];
        } else {
            p.obstacle_lo = [self.lo[0] as f32, self.lo[1] as f32, 0.0, 1.0];
            p.obstacle_hi = [self.hi[0] as f32, self.hi[1] as f32, 0.0, 0.0];
        }
        p.obstacle_vel = [self.velocity[0] as f32, self.velocity[1] as f32, 0.0, 0.0];
    }
}

/// Uniform parameters of a smoke scene for a substep of `dt` seconds.
pub fn smoke_params(scene: &Scene, dt: f64) -> SmokeParams {
    let s = &scene.smoke;
    let g = [scene.gravity.0, scene.gravity.1, scene.gravity.2];
    let gl = (g[0] * g[0] + g[1] * g[1] + g[2] * g[2]).sqrt();
    let up = if gl > 0.0 {
        [-g[0] / gl, -g[1] / gl, -g[2] / gl]
    } else {
        [0.0, 1.0, 0.0]
    };
    let decay = |rate: f64| (-rate * dt).exp() as f32;
    SmokeParams {
        up: [up[0] as f32, up[1] as f32, up[2] as f32, 0.0],
        decay: [
            decay(s.dye_dissipation),
            decay(s.dye_dissipation),
            decay(s.dye_dissipation),
            decay(s.temperature_dissipation),
        ],
        buoyancy: s.buoyancy as f32,
        dye_weight: s.dye_weight as f32,
        ambient: s.ambient_temperature as f32,
        vorticity: s.vorticity as f32,
        velocity_decay: decay(s.velocity_dissipation),
        scheme: match s.advection {
            AdvectionScheme::SemiLagrangian => 0,
            AdvectionScheme::MacCormack => 1,
        },
        num_tracers: s.tracers,
        trail_len: TRAIL_LEN,
        ..Default::default()
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
    let total = GridFields::bytes(cells, faces)
        + PcgVectors::bytes(scene.dims(), scene.pressure.max_iterations as u64)
        + Particles::bytes(tracers)
        + SmokeFields::bytes(cells, faces, tracers);
    let grid = "reduce the resolution";
    let candidates = [
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

pub struct SmokeSimulation {
    pub ctx: Arc<GpuContext>,
    pub scene: Scene,
    pub fields: GridFields,
    pub smoke: SmokeFields,
    pub tracers: Particles,
    pub pcg: PcgVectors,
    pub params: SmokeParams,
    mark: mark::SmokeMark,
    emit: emit::SmokeEmit,
    advect: advect::SmokeAdvect,
    forces: forces::SmokeForces,
    boundary: boundary::Boundary,
    divergence: divergence::Divergence,
    pressure: PressureSolver,
    project: project::Project,
    tracer_stage: tracers::SmokeTracers,
    stats: stats::SmokeStats,
    timer: PassTimer,
    counters_reader: BufferReader,
    partials_reader: BufferReader,
    /// Scene and painted solids, as on the GPU.
    static_solid: Vec<u32>,
    static_vel: Vec<[f32; 4]>,
    static_dirty: bool,
    pub obstacle: Option<Obstacle>,
    splats: Vec<Emitter>,
    trail_slot: u32,
    pub time: f64,
    pub frame: u64,
    pub max_speed: f32,
    pub last_solve: Option<SolveReport>,
    pub last_report: SmokeSubstepReport,
    /// GPU ms per stage of the last frame, summed over its substeps.
    pub last_timing: StageTiming,
    /// GPU ms per stage of the last full substep (empty after a partial one).
    pub last_substep_timing: StageTiming,
    /// The scene's rigid bodies and their coupling (None without bodies).
    pub bodies: Option<super::bodies::coupling::Bodies>,
}

impl SmokeSimulation {
    pub fn new(ctx: Arc<GpuContext>, scene: &Scene) -> Result<Self, SimError> {
        if scene.kind != SceneKind::Smoke {
            return Err(SimError::Unsupported(format!(
                "scene {:?} is a {:?} scene; the smoke simulation runs smoke scenes",
                scene.name, scene.kind
            )));
        }
        scene.validate().map_err(SimError::Unsupported)?;
        super::check_estimate(&ctx, memory_estimate(scene))?;
        let device = &ctx.device;
        let (static_solid, static_vel) = scene.solid_cells();
        let tracer_pos = seed_tracers(scene, &static_solid);
        let mut params = SimParams::new(scene.dims(), scene.h() as f32, tracer_pos.len() as u32);
        params.gravity = [
            scene.gravity.0 as f32,
            scene.gravity.1 as f32,
            scene.gravity.2 as f32,
        ];
        let fields = GridFields::new(device, params);
        let sp = smoke_params(scene, 0.0);
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
        let pcg = PcgVectors::new(device, params.num_cells, scene.pressure.max_iterations);
        let timer = PassTimer::new(&ctx, &SmokeStage::ALL.map(|s| s.name()));
        let bodies = match super::bodies::BodySet::from_scene(scene) {
            None => None,
            Some(set) => Some(super::bodies::coupling::Bodies::new(
                &ctx,
                set,
                super::bodies::coupling::CouplingInputs {
                    fields: &fields,
                    phi: &pcg.p,
                    rhs: &pcg.b,
                    particles: &tracers,
                    mode: super::bodies::coupling::CouplingMode::Smoke,
                    base: Some((&smoke.static_solid, &smoke.static_vel)),
                    static_cells: None,
                    face_area: scene.h() * scene.domain.2,
                    density: AIR_DENSITY,
                    length: scene.domain.0.max(scene.domain.1),
                    gravity: [scene.gravity.0, scene.gravity.1, scene.gravity.2],
                },
            )?),
        };
        let sim = Self {
            bodies,
            mark: mark::SmokeMark::new(device, &fields, &smoke),
            emit: emit::SmokeEmit::new(device, &fields, &smoke),
            advect: advect::SmokeAdvect::new(device, &fields, &smoke),
            forces: forces::SmokeForces::new(device, &fields, &smoke),
            boundary: boundary::Boundary::new(device, &fields),
            divergence: divergence::Divergence::new(device, &fields, &pcg),
            pressure: PressureSolver::new(&ctx, &fields, &pcg),
            project: project::Project::new(device, &fields, &pcg),
            tracer_stage: tracers::SmokeTracers::new(device, &fields, &smoke, &tracers),
            stats: stats::SmokeStats::new(device, &fields, &smoke),
            counters_reader: BufferReader::new(
                device,
                COUNTERS as u64 * 4,
                "SmokeSimulation::counters",
            ),
            partials_reader: BufferReader::new(
                device,
                smoke.partials.size(),
                "SmokeSimulation::partials",
            ),
            timer,
            obstacle: scene.smoke.obstacle.as_ref().map(Obstacle::from_shape),
            static_solid,
            static_vel,
            static_dirty: true,
            splats: Vec::new(),
            trail_slot: 0,
            fields,
            smoke,
            tracers,
            pcg,
            params: sp,
            scene: scene.clone(),
            time: 0.0,
            frame: 0,
            max_speed: 0.0,
            last_solve: None,
            last_report: SmokeSubstepReport::default(),
            last_timing: StageTiming::default(),
            last_substep_timing: StageTiming::default(),
            ctx,
        };
        sim.pressure
            .write_config(&sim.ctx, &sim.pcg, &sim.scene.pressure);
        Ok(sim)
    }

    pub fn dims(&self) -> [u32; 3] {
        self.fields.params.n
    }

    /// Adds a gaussian splat of dye and velocity, applied at the next substep.
    pub fn add_splat(&mut self, splat: Emitter) {
        let room = MAX_EMITTERS - self.scene.smoke.sources.len().min(MAX_EMITTERS);
        if self.splats.len() < room {
            self.splats.push(splat);
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
                if self.static_solid[c] != v {
                    self.static_solid[c] = v;
                    self.static_vel[c] = [0.0; 4];
                    changed += 1;
                }
            }
        }
        if changed > 0 {
            self.static_dirty = true;
        }
        changed
    }

    /// The static solid mask (scene + painted), i-fastest.
    pub fn static_solid(&self) -> &[u32] {
        &self.static_solid
    }

    /// Applies settings that need no reallocation (everything in `smoke` except the tracer
    /// count, gravity, CFL, frame length, solver settings).
    pub fn apply_live_settings(&mut self, scene: &Scene) -> Result<(), String> {
        scene.validate()?;
        if scene.resolution != self.scene.resolution
            || scene.domain != self.scene.domain
            || scene.smoke.tracers != self.scene.smoke.tracers
            || scene.bodies != self.scene.bodies
            || scene.pressure.max_iterations + 1 > self.pcg.history_len
        {
            return Err("this change needs a reset".into());
        }
        let obstacle_changed = scene.smoke.obstacle != self.scene.smoke.obstacle;
        self.scene.smoke = scene.smoke.clone();
        self.scene.gravity = scene.gravity;
        self.scene.cfl = scene.cfl;
        self.scene.frame_dt = scene.frame_dt;
        self.scene.max_substeps = scene.max_substeps;
        self.scene.pressure = scene.pressure.clone();
        if obstacle_changed {
            self.obstacle = scene.smoke.obstacle.as_ref().map(Obstacle::from_shape);
        }
        self.pressure
            .write_config(&self.ctx, &self.pcg, &self.scene.pressure);
        Ok(())
    }

    /// Substep length from the CFL number (semi-Lagrangian advection is stable for any
    /// step; the CFL bound keeps it accurate). Buoyancy's speed scale keeps the first step
    /// from a fluid at rest from being the whole frame.
    pub fn cfl_dt(&self) -> f64 {
        let h = self.scene.h();
        let s = &self.scene.smoke;
        let accel = s.buoyancy.abs() + s.dye_weight.abs() + 1.0;
        // Bodies count too: a body may cross no more cells per substep than the fluid.
        let speed = match &self.bodies {
            Some(b) => (self.max_speed as f64).max(b.set.max_speed()),
            None => self.max_speed as f64,
        };
        self.scene.cfl * h / (speed + (h * accel).sqrt()).max(1e-9)
    }

    /// Advances one frame (`frame_dt`) in CFL substeps.
    /// Stops with an error naming the frame and the quantity as soon as a substep's
    /// measurements turn NaN or infinite, or the CFL substep collapses below its floor.
    pub fn step_frame(&mut self) -> Result<SmokeFrameStats, SimError> {
        let frame_dt = self.scene.frame_dt;
        let frame = self.frame + 1;
        let mut remaining = frame_dt;
        let mut substeps = 0u32;
        let mut total_iterations = 0u32;
        let mut worst_residual = 0.0f64;
        let mut unconverged = 0u32;
        let mut last = SmokeSubstepReport::default();
        self.last_timing = StageTiming::default();
        // Relative to the frame, so a frame of any valid length ends after whole substeps.
        while remaining > frame_dt * 1e-9 {
            let cfl = super::checked_cfl_dt(
                frame,
                substeps + 1,
                self.cfl_dt(),
                self.max_speed,
                frame_dt,
            )?;
            let mut dt = cfl.min(remaining);
            if remaining - dt < 0.1 * dt || substeps + 1 >= self.scene.max_substeps {
                dt = remaining;
            }
            last = self.substep(dt, SmokeStage::Tracers)?;
            self.last_timing.merge(&self.last_substep_timing);
            substeps += 1;
            let finite =
                |quantity, value: f64| super::ensure_finite(frame, substeps, quantity, value);
            finite("the largest smoke speed", last.max_speed as f64)?;
            finite(
                "the largest divergence after projection",
                last.max_divergence as f64,
            )?;
            finite("the total dye", last.dye_total)?;
            finite("the kinetic energy", last.kinetic_energy)?;
            finite("the enstrophy", last.enstrophy)?;
            if let Some(solve) = &last.solve {
                finite("the pressure residual", solve.residual)?;
                total_iterations += solve.iterations;
                worst_residual = worst_residual.max(solve.residual);
                if solve.status != super::pressure::SolveStatus::Converged
                    && solve.residual > self.scene.pressure.tolerance
                {
                    unconverged += 1;
                }
            }
            remaining -= dt;
        }
        self.frame += 1;
        let mut stats = self.frame_stats(&last, substeps, total_iterations);
        stats.pcg_max_residual = worst_residual;
        stats.unconverged_solves = unconverged;
        Ok(stats)
    }

    fn frame_stats(&self, last: &SmokeSubstepReport, substeps: u32, total: u32) -> SmokeFrameStats {
        let (iterations, residual) = last
            .solve
            .as_ref()
            .map_or((0, 0.0), |s| (s.iterations, s.residual));
        let h = self.scene.h();
        SmokeFrameStats {
            frame: self.frame,
            time_s: self.time,
            substeps,
            particles: self.tracers.count,
            fluid_cells: last.fluid_cells,
            pcg_iterations: iterations,
            pcg_residual: residual,
            max_divergence: last.max_divergence as f64,
            kinetic_energy: last.kinetic_energy,
            max_speed: last.max_speed as f64,
            volume: last.fluid_cells as f64 * h * h * self.scene.domain.2,
            front_x: last.front_x as f64,
            pcg_iterations_total: total,
            dye_total: last.dye_total,
            dye_center_y: last.dye_center_y,
            enstrophy: last.enstrophy,
            pcg_max_residual: residual,
            unconverged_solves: 0,
        }
    }

    fn begin_pass<'e>(
        &'e self,
        enc: &'e mut wgpu::CommandEncoder,
        stage: SmokeStage,
    ) -> wgpu::ComputePass<'e> {
        let end = stage != SmokeStage::Pressure;
        enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some(stage.name()),
            timestamp_writes: self.timer.writes(stage.name(), true, end),
        })
    }

    /// Uploads the uniforms, emitters and (when changed) the static solids for a substep.
    fn upload(&mut self, dt: f64) {
        let q = &self.ctx.queue;
        self.fields.params.dt = dt as f32;
        q.write_buffer(
            &self.fields.params_buffer,
            0,
            bytemuck::bytes_of(&self.fields.params),
        );
        let mut emitters: Vec<Emitter> = self
            .scene
            .smoke
            .sources
            .iter()
            .map(Emitter::source)
            .collect();
        emitters.truncate(MAX_EMITTERS);
        let room = MAX_EMITTERS - emitters.len();
        emitters.extend(self.splats.drain(..).take(room));
        let mut p = smoke_params(&self.scene, dt);
        p.num_emitters = emitters.len() as u32;
        p.trail_slot = self.trail_slot;
        p.num_tracers = self.tracers.count;
        if let Some(o) = &self.obstacle {
            o.write(&mut p);
        }
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
            self.static_dirty = false;
        }
    }

    /// One substep of `dt` seconds, running the stages up to and including `last`.
    pub fn substep(&mut self, dt: f64, last: SmokeStage) -> Result<SmokeSubstepReport, SimError> {
        let domain = [self.scene.domain.0, self.scene.domain.1];
        if let Some(o) = self.obstacle.as_mut() {
            if !o.held {
                o.advance(dt, domain);
            }
        }
        self.upload(dt);
        // Rigid bodies: their state for this substep (src/sim/bodies/).
        if let Some(b) = self.bodies.as_mut() {
            b.coupling.upload(&self.ctx, &b.set, dt);
        }
        let run = |s: SmokeStage| s <= last;
        let kind = self.scene.pressure.preconditioner;
        let f = &self.fields;
        let mut enc = self
            .ctx
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("SmokeSimulation::substep"),
            });
        enc.clear_buffer(&f.counters, 0, None);
        {
            let mut pass = self.begin_pass(&mut enc, SmokeStage::Mark);
            self.mark.record(&mut pass, f);
            // Bodies become moving solids over the static ones.
            if let Some(b) = &self.bodies {
                b.coupling.record_stamp(&mut pass, f);
            }
        }
        if run(SmokeStage::Emit) {
            let mut pass = self.begin_pass(&mut enc, SmokeStage::Emit);
            self.emit.record(&mut pass, f);
        }
        if run(SmokeStage::Advect) {
            self.advect.record_copies(&mut enc, f, &self.smoke);
            let mut pass = self.begin_pass(&mut enc, SmokeStage::Advect);
            self.advect.record(&mut pass, f);
        }
        if run(SmokeStage::Forces) {
            let mut pass = self.begin_pass(&mut enc, SmokeStage::Forces);
            self.forces.record(&mut pass, f);
        }
        if run(SmokeStage::Boundary) {
            let mut pass = self.begin_pass(&mut enc, SmokeStage::Boundary);
            self.boundary.record(&mut pass, f);
        }
        if let Some(b) = self.bodies.as_ref().filter(|_| run(SmokeStage::Pressure)) {
            b.coupling.clear_forces(&mut enc);
        }
        if run(SmokeStage::Pressure) {
            let mut pass = self.begin_pass(&mut enc, SmokeStage::Pressure);
            self.divergence.record(&mut pass, f);
            // Bodies against walls: keep the closed box's system solvable.
            if let Some(b) = &self.bodies {
                b.coupling.record_compatible(&mut pass, f);
            }
            self.pressure.record_setup(&mut pass, f, kind);
        }
        self.ctx.queue.submit([enc.finish()]);
        let solve = if run(SmokeStage::Pressure) {
            let timer = self
                .timer
                .enabled()
                .then_some((&self.timer, SmokeStage::Pressure.name()));
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
                label: Some("SmokeSimulation::substep_end"),
            });
        let body_forces = run(SmokeStage::Project) && self.bodies.is_some();
        if run(SmokeStage::Project) {
            let mut pass = self.begin_pass(&mut enc, SmokeStage::Project);
            self.project.record(&mut pass, f);
            self.divergence.record_after(&mut pass, f);
            // The pressure's force and torque on the bodies.
            if let Some(b) = &self.bodies {
                b.coupling.record_forces(&mut pass, f);
            }
        }
        if run(SmokeStage::Tracers) {
            let mut pass = self.begin_pass(&mut enc, SmokeStage::Tracers);
            self.tracer_stage.record(&mut pass, &self.tracers);
        }
        {
            // Stats and the vorticity view see the velocity as the step leaves it.
            let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("stats"),
                timestamp_writes: None,
            });
            self.forces.record_vorticity(&mut pass, f);
            self.stats.record(&mut pass, f);
        }
        self.timer.resolve(&mut enc);
        self.counters_reader.copy_from(&mut enc, &f.counters);
        self.partials_reader
            .copy_from(&mut enc, &self.smoke.partials);
        if let Some(b) = self.bodies.as_mut().filter(|_| body_forces) {
            b.coupling.copy_forces(&mut enc);
        }
        self.ctx.queue.submit([enc.finish()]);
        let c: Vec<u32> = self.counters_reader.read(&self.ctx)?;
        // The bodies move over the substep once the air has pushed them.
        if let Some(b) = self.bodies.as_mut().filter(|_| last == SmokeStage::Tracers) {
            b.finish_substep(&self.ctx, dt)?;
        }
        let partials: Vec<[f32; 4]> = self.partials_reader.read(&self.ctx)?;
        self.last_substep_timing = StageTiming::default();
        if self.timer.enabled() && last == SmokeStage::Tracers {
            let mut t = StageTiming::default();
            self.timer.read_into(&self.ctx, &mut t)?;
            self.last_substep_timing = t;
        }
        let mut sums = [0f64; 4];
        for p in &partials {
            for a in 0..4 {
                sums[a] += p[a] as f64;
            }
        }
        let h = self.scene.h();
        let cell_volume = h * h * self.scene.domain.2;
        let report = SmokeSubstepReport {
            dt,
            fluid_cells: c[0],
            max_speed: f32::from_bits(c[1]),
            front_x: f32::from_bits(c[2]),
            max_divergence: f32::from_bits(c[3]),
            dye_total: sums[0] * cell_volume,
            dye_center_y: if sums[0] > 0.0 {
                sums[1] / sums[0]
            } else {
                0.0
            },
            enstrophy: sums[2] * cell_volume,
            kinetic_energy: 0.5 * AIR_DENSITY * sums[3] * cell_volume,
            solve: solve.clone(),
        };
        if last == SmokeStage::Tracers {
            self.max_speed = report.max_speed;
            self.time += dt;
            self.trail_slot = (self.trail_slot + 1) % TRAIL_LEN;
        }
        if solve.is_some() {
            self.last_solve = solve;
        }
        self.last_report = report.clone();
        Ok(report)
    }

    /// Dye (rgb) and temperature (w) per cell.
    pub fn read_dye(&self) -> Result<Vec<[f32; 4]>, SimError> {
        Ok(crate::gpu::read_buffer(&self.ctx, &self.smoke.dye)?)
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
            .write_buffer(&self.smoke.dye, 0, bytemuck::cast_slice(dye));
        self.ctx
            .queue
            .write_buffer(&self.fields.vel, 0, bytemuck::cast_slice(vel));
        Ok(())
    }

    /// Tracer positions (xyz, w unused).
    pub fn read_tracers(&self) -> Result<Vec<[f32; 4]>, SimError> {
        if self.tracers.count == 0 {
            return Ok(vec![]);
        }
        Ok(crate::gpu::read_buffer(&self.ctx, &self.tracers.pos)?)
    }

    /// The trail slot the next substep writes (the newest position is the slot before).
    pub fn trail_slot(&self) -> u32 {
        self.trail_slot
    }
}
