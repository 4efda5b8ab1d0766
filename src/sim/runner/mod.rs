//! The one step runner both modes share: the CFL frame loop, the recording of a substep's
//! stages into labelled and timed passes, the pressure solve, the counter readback, the
//! checks that stop a blown-up run, and the frame's stats.
//!
//! A mode ([`crate::sim::liquid::Liquid`], [`crate::sim::smoke::Smoke`]) is a list of stages
//! ([`Mode::Stage`]) plus the stages only it has. The stages every mode shares (solid
//! boundary conditions, the pressure solve, the projection) are recorded here, by the
//! runner's own stage objects, so the two modes cannot drift apart in them.
//!
//! To add a stage to a mode: add it to the mode's stage enum (in order), record it in the
//! mode's [`Mode::record`], and give it a Rust file and a WGSL file of its own (see
//! docs/ARCHITECTURE.md).

use crate::gpu::{BufferReader, GpuContext, PassTimer, Region, StageTiming, Traffic};
use crate::scene::Scene;
use crate::sim::bodies::coupling::Bodies;
use crate::sim::bodies::strong::StrongCoupling;
use crate::sim::bodies::MAX_MOVE_CFL;
use crate::sim::checked_cfl_dt;
use crate::sim::core::clock::{self, CflTerms, Tick, CLOCK_BYTES};
use crate::sim::core::divergence;
use crate::sim::core::project;
use crate::sim::core::recorder::{new_encoder, Recorder, SharedStage, StageList};
use crate::sim::core::{
    boundary,
    fields::{FieldRoom, GridFields, COUNTERS},
    params::SimParams,
    pressure::{self, PcgVectors, PressureSolver, Scratch, SolveReport},
};
use crate::sim::ensure_finite;
use crate::sim::SimError;
use std::fmt::Debug;
use std::sync::Arc;

// Counter slots every mode's kernels fill: FLUID (or non-SOLID) cells, largest speed, front
// and largest divergence after the projection.
use crate::gpu::constants::{
    COUNTER_FLUID_CELLS, COUNTER_FRONT_X, COUNTER_MAX_DIVERGENCE, COUNTER_MAX_SPEED,
};

mod frame;
mod mode;
mod readback;
pub mod state;
mod stats;
mod substep;

pub(crate) use mode::Pending;
use mode::{Drained, FrameAccount, Gathered, Ran, SolvePlan};
pub use mode::{Mode, SubstepReport};
use readback::*;
pub use stats::{FrameStats, LiquidColumns, ModeColumns, SmokeColumns};

/// The state and stages every mode has: the grid, the pressure solver, the shared stages,
/// the pass timer, the counters, and the clock.
pub struct Core {
    pub ctx: Arc<GpuContext>,
    pub scene: Scene,
    pub fields: GridFields,
    pub pcg: PcgVectors,
    pub(crate) boundary: boundary::Boundary,
    pub(crate) divergence: divergence::Divergence,
    pub(crate) pressure: PressureSolver,
    pub(crate) project: project::Project,
    /// Shared, so a substep's recorder can hold it while the core changes.
    pub(crate) timer: Arc<PassTimer>,
    counters_reader: BufferReader,
    /// A pipelined frame's readbacks, one per substep: its counters (the layout of
    /// `counters_reader`) and its solve's final state ([`Runner::step_frame`]).
    slots: Vec<Slot>,
    /// What the last pipelined frame on the GPU clock knew of its length: its substeps and
    /// the margin the next one records ahead beyond them, 0 to 2 ([`Runner::step_frame`]).
    ahead: (u32, u32),
    /// The final state of a solve queued ahead in a substep that reads its counters at its
    /// end, read with them.
    solve_reader: BufferReader,
    /// Whether the run has warned that a pipelined solve stopped at its queued iterations.
    warned_stopped: bool,
    /// Bytes of the mode's own buffer in the end-of-substep readback ([`Core::fit_readback`]).
    readback_extra: u64,
    /// The substep's clock on the GPU (a frame's later substeps, [`Runner::step_frame`]).
    pub(crate) clock: clock::Clock,
    /// Whether a frame's later substeps may take their length on the GPU (on by default;
    /// tests turn it off to compare with the host's clock).
    pub gpu_clock_enabled: bool,
    /// Simulated time, s.
    pub time: f64,
    pub frame: u64,
    /// Full substeps run in the current frame (for errors that name the substep).
    pub substeps_in_frame: u32,
    /// Substeps of the current frame whose length the capillary limit set, not the speed
    /// ([`Core::count_capillary`]).
    pub capillary_in_frame: u32,
    /// Largest speed after the last full substep (drives the CFL substep).
    pub max_speed: f32,
    /// Substeps recorded ahead on the GPU clock that did not run, their frame having ended
    /// before them ([`Runner::step_frame`]): recorded work spent for nothing, counted.
    pub skipped_substeps: u64,
    /// Whether the run has warned that its tolerance lies below the f32 floor.
    pub warned_f32_floor: bool,
    /// Whether the substep being run ends its frame (set by [`Runner::step_frame`]): the
    /// mode's per-frame sums then come back with its counters ([`Mode::readback`]).
    pub frame_end: bool,
    pub last_solve: Option<SolveReport>,
    /// GPU ms per stage over the last frame (empty without timestamp support).
    pub last_timing: StageTiming,
    /// GPU ms per stage of the last full substep (empty after a partial one).
    pub last_substep_timing: StageTiming,
    /// Compute dispatches each stage has recorded since the simulation was made (a stage's
    /// solves included), in the order the stages first ran.
    pub dispatches_by_stage: Vec<(&'static str, u64)>,
    /// The scene's rigid bodies and their coupling (None without bodies). The mode creates
    /// them (they bind its particles) and stamps them in its marking stage; the runner
    /// sums the pressure's force on them and moves them after each full substep.
    pub bodies: Option<Bodies>,
    /// The scene's probes, sampled after every full substep and read once per frame.
    pub probes: Option<crate::sim::core::probes::Probes>,
    /// A copy of p as each warm-started solve starts (its initial guess), kept for
    /// [`Runner::freeze_system`] once [`Runner::keep_initial_guess`] asks for it.
    pub(crate) initial_guess: Option<wgpu::Buffer>,
    /// The copy of p into `initial_guess` before a substep's solve, as a dispatch: a
    /// substep recorded ahead that does not run must not replace the last solve's guess.
    guess_copy: Option<crate::gpu::KernelCopy>,
    /// `pressure.refine`: the refined solution's low part (allocated with the first
    /// refinement) and what the last refinement did.
    pub(crate) p_lo: Option<wgpu::Buffer>,
    pub last_refine: Option<crate::sim::core::pressure::refine::RefineReport>,
    /// Whether this substep's solve was refined (the projection subtracts `p_lo` too).
    refined: bool,
    /// Whether PCG's b, r, z, d, q and t hold the last solve's vectors: where they share P2G's
    /// accumulators (`PcgVectors`) only until a stage after the projection runs.
    pub solver_vectors_live: bool,
    /// A copy of b, r, z, d, q and t taken after each pressure solve, where they share P2G's
    /// accumulators and a reader asked to keep them ([`Runner::keep_solver_vectors`]).
    kept_vectors: Option<wgpu::Buffer>,
    /// The copy of b, r, z, d, q and t into `kept_vectors`, as dispatches: a substep
    /// recorded ahead that does not run must not replace the last solve's copy.
    keep_copy: Option<crate::gpu::KernelCopy>,
    /// The slot of the pipelined substep being recorded, None for any other: a mode's own
    /// solves (the diffusion's) then queue ahead into it instead of reading their
    /// convergence ([`Mode::host_readers`]).
    pub queue_slot: Option<usize>,
    /// The viscosity's incremental pressure correction (viscous scenes only).
    pub(crate) split: Option<crate::sim::core::split::ViscousSplit>,
    /// Surface tension's curvature and jump (liquid scenes with `surface_tension` only).
    pub(crate) tension: Option<crate::sim::core::tension::SurfaceTension>,
}

impl Core {
    /// The grid of `params`, its pressure vectors and the shared stages; `stages` names the
    /// timer's slots.
    pub fn new(
        ctx: Arc<GpuContext>,
        scene: &Scene,
        params: SimParams,
        stages: &[&'static str],
        (open, scratch): (Option<&[f32]>, u64),
    ) -> Self {
        let device = &ctx.device;
        let room = FieldRoom {
            solid_cells: scene.has_solid_cells(),
            particles: scene.kind == crate::scene::SceneKind::Liquid,
            scratch,
        };
        let mut fields = GridFields::new(device, params, room);
        let tension = scene.kind == crate::scene::SceneKind::Liquid && scene.surface_tension > 0.0;
        if tension {
            fields.keep_curvature(device);
        }
        if let Some(open) = open {
            fields.set_open(&ctx, open);
        }
        if scene.bodies_cut_faces() {
            fields.set_bodies_cut(&ctx, open);
        }
        let pcg = PcgVectors::new(
            device,
            params.num_cells,
            scene.pressure.max_iterations,
            scene.pressure.preconditioner.is_mic(),
            // b, r, z, d, q and t live in P2G's accumulators (PcgVectors says why), which
            // only the liquid's stages use.
            Scratch::In {
                buffer: &fields.acc,
                shared: scene.kind == crate::scene::SceneKind::Liquid,
            },
        );
        // The pressure stage is timed in two parts, its set-up pass and its iterations, so
        // the GPU's wait while the host encodes the first chunk is not counted.
        debug_assert!(stages.contains(&PRESSURE_STAGE));
        let timer = PassTimer::with_parts(&ctx, stages, &[(PRESSURE_ITERATIONS, PRESSURE_STAGE)]);
        let tension =
            tension.then(|| crate::sim::core::tension::SurfaceTension::new(device, &fields, &pcg));
        let core = Self {
            tension,
            boundary: boundary::Boundary::new(device, &fields),
            divergence: divergence::Divergence::new(device, &fields, &pcg),
            pressure: pressure_solver(&ctx, &fields, &pcg, scene),
            project: project::Project::new(device, &fields, &pcg),
            // The counters, the stage timestamps and the bodies' force sums: one read at
            // the end of a substep.
            counters_reader: counters_reader(&ctx, &timer, 0),
            slots: Vec::new(),
            ahead: (0, 0),
            solve_reader: solve_reader(&ctx, &pcg),
            warned_stopped: false,
            readback_extra: 0,
            clock: clock::Clock::new(device, &fields),
            gpu_clock_enabled: true,
            timer: Arc::new(timer),
            fields,
            pcg,
            scene: scene.clone(),
            time: 0.0,
            frame: 0,
            substeps_in_frame: 0,
            capillary_in_frame: 0,
            skipped_substeps: 0,
            warned_f32_floor: false,
            frame_end: false,
            max_speed: 0.0,
            last_solve: None,
            last_timing: StageTiming::default(),
            last_substep_timing: StageTiming::default(),
            dispatches_by_stage: Vec::new(),
            bodies: None,
            probes: None,
            initial_guess: None,
            guess_copy: None,
            p_lo: None,
            last_refine: None,
            refined: false,
            solver_vectors_live: true,
            kept_vectors: None,
            keep_copy: None,
            queue_slot: None,
            split: None,
            ctx,
        };
        core.write_solver_config();
        core
    }

    /// `pressure.refine`: refines the solve that just ran to a true residual of `target`
    /// (src/sim/core/pressure/refine.rs), the projection then subtracting `p_lo` too. Takes
    /// the fields it needs, so a recorder may hold the context meanwhile.
    fn refine(
        (pressure, project, p_lo): (
            &mut PressureSolver,
            &mut project::Project,
            &mut Option<wgpu::Buffer>,
        ),
        ctx: &GpuContext,
        fields: &GridFields,
        pcg: &PcgVectors,
        settings: &crate::scene::PressureSettings,
    ) -> Result<crate::sim::core::pressure::refine::RefineReport, SimError> {
        let p_lo = p_lo.get_or_insert_with(|| {
            let buf = crate::gpu::storage_buffer(
                &ctx.device,
                "Core::p_lo",
                fields.num_cells() as u64 * 4,
            );
            project.bind_lo(&ctx.device, fields, &buf);
            buf
        });
        Ok(pressure.refine(ctx, fields, pcg, p_lo, settings, settings.refine)?)
    }

    /// Makes room in the end-of-substep readback for a mode's [`Mode::readback`] buffer of
    /// `bytes` (after the counters, the stage timestamps and the bodies' sums).
    pub fn fit_readback(&mut self, bytes: u64) {
        self.counters_reader = counters_reader(&self.ctx, &self.timer, bytes);
        self.readback_extra = bytes;
        self.slots.clear();
    }

    /// Sets the substep's length the kernels read (`SimParams::dt`), for a stage run alone.
    pub(crate) fn set_dt(&mut self, dt: f64) {
        self.fields.params.dt = dt as f32;
        self.ctx.queue.write_buffer(
            &self.fields.params_buffer,
            0,
            bytemuck::bytes_of(&self.fields.params),
        );
    }

    /// The report of a solve queued ahead ([`PressureSolver::queue_ahead`], `queued`
    /// iterations) from its state's `words`, read back after its substep (`substep` of the
    /// frame being run): a solve that stopped at its queue is warned about once.
    fn unread_solve(&mut self, queued: u32, words: &[u32], substep: u32) -> SolveReport {
        let kind = self.scene.pressure.preconditioner;
        let term = self.bodies.as_ref().and_then(|b| b.added_term());
        let tolerance = self.scene.pressure.tolerance;
        let solve = self.pressure.report_from(words, kind, term, tolerance);
        if solve.status == pressure::SolveStatus::Stopped && !self.warned_stopped {
            self.warned_stopped = true;
            log::warn!(
                "frame {}, substep {substep}: a pressure solve queued ahead was still running \
                 when its {queued} queued iterations ran out (max|r|/max|b| {:.1e}, tolerance \
                 {tolerance:e}); the projection used it as it stood, the next solves queue \
                 more (pressure.margin {}, stats.csv: unconverged_solves)",
                self.frame + 1,
                solve.residual,
                self.scene.pressure.margin,
            );
        }
        solve
    }

    /// Whether a substep that reads its counters at its end may queue its solve ahead and
    /// bring the solve's state back in that read (`pressure.pipelined`, once a solve has
    /// run, without `refine`, which reads the solution first).
    fn solves_unread(&self) -> bool {
        let s = &self.scene.pressure;
        s.pipelined && queues_ahead(s) && s.refine == 0.0 && self.pressure.has_guess()
    }

    /// Makes the slots of a pipelined frame's first `n` substeps (once; kept across frames).
    fn ensure_slots(&mut self, n: usize) {
        while self.slots.len() < n {
            let counters = counters_reader(&self.ctx, &self.timer, self.readback_extra);
            let solve = solve_reader(&self.ctx, &self.pcg);
            self.slots.push(Slot { counters, solve });
        }
    }

    fn readback_layout(&self) -> ReadbackLayout {
        ReadbackLayout::new(&self.timer, self.readback_extra)
    }

    /// The low part of the last refined solution (`pressure.refine`; None before one).
    pub fn p_lo(&self) -> Option<&wgpu::Buffer> {
        self.p_lo.as_ref()
    }

    /// The largest speed the CFL step must respect, m/s: the fluid's, or a rigid body's
    /// when one is faster (a body may cross no more cells per substep than the fluid).
    pub fn max_speed_with_bodies(&self) -> f64 {
        let fluid = self.max_speed as f64;
        match &self.bodies {
            Some(b) => fluid.max(b.set.max_speed()),
            None => fluid,
        }
    }

    /// Writes the scene's pressure settings to the solver's config.
    pub(crate) fn write_solver_config(&self) {
        self.pressure.write_config(
            &self.ctx,
            &self.pcg,
            &self.scene.pressure,
            self.added_term().is_some(),
        );
    }

    /// What the pressure solve adds to its matrix: the bodies' strong coupling, if any.
    pub fn added_term(&self) -> Option<&dyn pressure::AddedTerm> {
        self.bodies.as_ref().and_then(|b| b.added_term())
    }

    /// Fails when a live change to `scene` needs a new simulation (the grid, or a longer
    /// residual history than was allocated).
    pub(crate) fn check_live_settings(&self, scene: &Scene) -> Result<(), String> {
        scene.validate()?;
        // Compared as it runs: the simulation holds a `smoke.obstacle` as its body.
        let scene = &*scene.as_run();
        if scene.resolution != self.scene.resolution
            || scene.domain != self.scene.domain
            || scene.pressure.max_iterations + 1 > self.pcg.history_len
            || scene.bodies != self.scene.bodies
            || scene.body_coupling != self.scene.body_coupling
            || (scene.surface_tension > 0.0) != (self.scene.surface_tension > 0.0)
        {
            return Err("this change needs a reset".into());
        }
        Ok(())
    }

    /// Where the last pressure solve's `v` (one of PCG's b, r, z, d, q and t) can be read:
    /// its own region while it is live, else the same region of the copy kept after the
    /// solve; refused where later stages have used its room and nothing kept it
    /// (`PcgVectors`: they share P2G's accumulators).
    pub fn solver_vector(&self, v: &Region) -> Result<Region, SimError> {
        if self.solver_vectors_live {
            return Ok(v.clone());
        }
        match &self.kept_vectors {
            Some(kept) => Ok(Region {
                buffer: kept.clone(),
                ..v.clone()
            }),
            None => Err(SimError::Unsupported(
                "the last solve's right-hand side and vectors share P2G's accumulator buffer \
                 in this run, and the stages after the projection have used it since; keep \
                 them (Runner::keep_solver_vectors, as `eddy run --export-system` and the \
                 viewer do) or stop the substep at the pressure or projection stage"
                    .into(),
            )),
        }
    }

    /// `buf`, one of the fields only the views read (P2G's weights, the divergence before
    /// and after projection), where a reader kept them ([`GridFields::keep_views`]);
    /// refused otherwise, with `what` named.
    pub fn view_field<'a>(
        &self,
        buf: &'a wgpu::Buffer,
        what: &str,
    ) -> Result<&'a wgpu::Buffer, SimError> {
        if self.fields.has_views() {
            Ok(buf)
        } else {
            Err(SimError::Unsupported(format!(
                "this run keeps no {what}: only the views read it, and it takes memory only                  where a reader asks for it (Runner::keep_grid_views, as the viewer and                  `eddy run --fields` do); the next substep after that fills it"
            )))
        }
    }

    /// The PCG vectors as the last solve left them ([`Self::solver_vector`] for b).
    fn solved_vectors(&self) -> Result<PcgVectors, SimError> {
        let mut v = self.pcg.clone();
        v.b = self.solver_vector(&self.pcg.b)?;
        Ok(v)
    }

    /// Distinct dispatch sizes registered by the gate of the substeps recorded ahead
    /// ([`crate::gpu::Gate`]; 0 before the first).
    pub fn gate_sizes(&self) -> usize {
        self.clock.gate.sizes()
    }

    /// Records the copy of the solve's vectors a reader asked to keep (after the pressure
    /// solve, and after the volume correction's, before the pressure's takes their room).
    pub(crate) fn record_keep_vectors(&self, encoder: &mut wgpu::CommandEncoder) {
        if let Some(copy) = &self.keep_copy {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("keep_vectors"),
                timestamp_writes: None,
            });
            copy.record(&mut pass);
        }
    }

    /// Takes the settings every mode takes live: the CFL number, gravity, the frame, the
    /// substep cap and the solver (after [`Core::check_live_settings`]).
    pub(crate) fn apply_live_settings(&mut self, scene: &Scene) {
        self.scene.cfl = scene.cfl;
        self.scene.gravity = scene.gravity;
        self.scene.frame_dt = scene.frame_dt;
        self.scene.max_substeps = scene.max_substeps;
        self.scene.pressure = scene.pressure.clone();
        self.ensure_preconditioner(scene.pressure.preconditioner);
        self.write_solver_config();
    }

    /// Makes `kind` usable: MIC(0) asked for while running gets its diagonal's room, and
    /// the solver is rebuilt to bind it.
    pub(crate) fn ensure_preconditioner(&mut self, kind: crate::scene::PreconditionerKind) {
        if kind.is_mic() && self.pcg.ensure_mic(&self.ctx.device) {
            self.pressure = pressure_solver(&self.ctx, &self.fields, &self.pcg, &self.scene);
        }
    }
}

/// Whether `pressure.pipelined` applies to solves with these settings: `mg`'s, whose
/// iteration counts barely move from one solve to the next (3-9 per frame over 40 frames
/// of five shipped scenes), so the last count plus the margin covers the next. The other
/// preconditioners' counts swing by tens of iterations (`ip` on the plume: 42-214), their queues
/// would run out, and their solves are read back as they run.
pub fn queues_ahead(s: &crate::scene::PressureSettings) -> bool {
    s.preconditioner == crate::scene::PreconditionerKind::Mg
}

/// The pressure solver of a scene's grid: the smoke's systems have no AIR cell, so its
/// multigrid runs no boundary sweeps (`Multigrid::set_air`).
fn pressure_solver(
    ctx: &GpuContext,
    f: &GridFields,
    v: &PcgVectors,
    scene: &Scene,
) -> PressureSolver {
    let mut solver = PressureSolver::new(ctx, f, v);
    let air = scene.kind == crate::scene::SceneKind::Liquid;
    solver.precond.multigrid.set_air(&ctx.queue, air);
    solver
}

/// A simulation: the shared core and one mode. [`crate::sim::Simulation`] is the liquid,
/// [`crate::sim::smoke::SmokeSimulation`] the smoke; both run through the code here.
pub struct Runner<M: Mode> {
    pub core: Core,
    pub mode: M,
    /// The substep whose counters come back with the next substep's solve, with what its
    /// recording left ([`Mode::Host`]).
    pub(crate) pending: Option<(Pending, M::Host)>,
    /// A pipelined frame's substeps so far, the i-th in the core's slot i, read at the
    /// frame's end.
    pub(crate) pipe: Vec<(Pending, M::Host)>,
}

impl<M: Mode> std::ops::Deref for Runner<M> {
    type Target = Core;
    fn deref(&self) -> &Core {
        &self.core
    }
}

impl<M: Mode> std::ops::DerefMut for Runner<M> {
    fn deref_mut(&mut self) -> &mut Core {
        &mut self.core
    }
}

impl Core {
    /// The capillary limit on the substep (surface tension's, [`crate::sim::core::tension::capillary_dt`]),
    /// s; None without surface tension.
    pub fn capillary_limit(&self) -> Option<f64> {
        crate::sim::core::tension::capillary_dt(
            self.scene.surface_tension,
            crate::sim::DENSITY,
            self.scene.h(),
        )
    }

    /// Counts a substep whose CFL step `cfl` (s, before the frame's end cut it) is the
    /// capillary limit: the CFL step is min(speed's step, limit), so it reaches the limit
    /// (to f32's rounding, the GPU clock's) only where surface tension, not the speed, set
    /// it.
    pub(crate) fn count_capillary(&mut self, cfl: f64) {
        if self
            .capillary_limit()
            .is_some_and(|cap| cfl >= cap * (1.0 - 1e-6))
        {
            self.capillary_in_frame += 1;
        }
    }

    /// Makes the viscosity's incremental pressure correction ([`ViscousSplit`]) once the
    /// scene is viscous; call after the bodies are made (it binds their faces' covers).
    ///
    /// [`ViscousSplit`]: crate::sim::core::split::ViscousSplit
    pub(crate) fn ensure_split(&mut self) {
        if self.scene.viscosity > 0.0 && self.split.is_none() {
            let cover = self.bodies.as_ref().map(|b| &b.coupling.cover);
            let liquid = self.scene.kind == crate::scene::SceneKind::Liquid;
            self.split = Some(crate::sim::core::split::ViscousSplit::new(
                &self.ctx.device,
                &self.fields,
                &self.pcg,
                liquid,
                cover,
            ));
        }
    }

    /// The pressure's right-hand side: the divergence of the velocity about to be projected
    /// and, with surface tension, the surface's jump.
    pub(crate) fn record_rhs(&self, pass: &mut wgpu::ComputePass<'_>) {
        self.divergence.record(pass, &self.fields);
        if let Some(t) = &self.tension {
            t.record(pass, &self.fields);
        }
    }

    /// Before the smoke's forces: its split starts the substep's change of the faces.
    pub(crate) fn record_split_mark(&self, pass: &mut wgpu::ComputePass<'_>) {
        if let Some(s) = &self.split {
            s.record_before_forces(pass, &self.fields);
        }
    }

    /// Before a substep's viscosity solve: its incremental pressure correction's shift.
    pub(crate) fn record_split_in(&self, pass: &mut wgpu::ComputePass<'_>) {
        if let Some(s) = &self.split {
            s.record_in(pass, &self.fields);
        }
    }

    /// After a substep's viscosity solve: the shift taken off again.
    pub(crate) fn record_split_out(&self, pass: &mut wgpu::ComputePass<'_>) {
        if let Some(s) = &self.split {
            s.record_out(pass, &self.fields);
        }
    }

    /// The same in a pass of its own in `enc`, after a viscosity solve that submitted its
    /// own work.
    pub(crate) fn record_split_out_pass(&self, enc: &mut wgpu::CommandEncoder) {
        if self.split.as_ref().is_some_and(|s| s.kept) {
            let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("viscosity::split"),
                timestamp_writes: None,
            });
            self.record_split_out(&mut pass);
        }
    }

    /// The dynamic bodies' coupling into this substep's viscosity step, prepared and bound
    /// to `diffusion`'s velocity system (made first where missing); None without bodies or
    /// without a dynamic one. `dye` is the smoke's dye buffer (the system binds it), None
    /// in the liquid.
    pub fn viscous_coupling(
        &self,
        diffusion: &mut crate::sim::core::diffusion::Diffusion,
        dye: Option<&wgpu::Buffer>,
    ) -> Result<Option<&crate::sim::bodies::viscous::ViscousCoupling>, SimError> {
        let Some(bodies) = self.bodies.as_ref() else {
            return Ok(None);
        };
        let (f, settings) = (&self.fields, &self.scene.diffusion);
        let view = diffusion.ensure_velocity(&self.ctx, f, dye, settings)?;
        // The bodies take the liquid's incremental shift (src/sim/core/split.rs) with it.
        let shift = (self.split.as_ref())
            .filter(|s| s.kept)
            .map(|_| f.params.dt as f64);
        Ok(bodies.viscous(&self.ctx, f, &view, self.scene.viscosity, shift))
    }
}
