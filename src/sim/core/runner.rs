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

use super::clock::{self, CflTerms, Tick, CLOCK_BYTES};
use super::divergence;
use super::project;
use super::recorder::{new_encoder, Recorder, SharedStage, StageList};
use super::{
    boundary,
    fields::{FieldRoom, GridFields, COUNTERS},
    params::SimParams,
    pressure::{self, PcgVectors, PressureSolver, Scratch, SolveReport},
};
use crate::gpu::{BufferReader, GpuContext, PassTimer, Region, StageTiming, Traffic};
use crate::scene::Scene;
use crate::sim::bodies::coupling::Bodies;
use crate::sim::bodies::strong::StrongCoupling;
use crate::sim::bodies::MAX_MOVE_CFL;
use crate::sim::checked_cfl_dt;
use crate::sim::ensure_finite;
use crate::sim::SimError;
use std::fmt::Debug;
use std::sync::Arc;

// Counter slots every mode's kernels fill: FLUID (or non-SOLID) cells, largest speed, front
// and largest divergence after the projection.
use crate::gpu::constants::{
    COUNTER_FLUID_CELLS, COUNTER_FRONT_X, COUNTER_MAX_DIVERGENCE, COUNTER_MAX_SPEED,
};

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
    pub(crate) timer: PassTimer,
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
        let core = Self {
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
            timer,
            fields,
            pcg,
            scene: scene.clone(),
            time: 0.0,
            frame: 0,
            substeps_in_frame: 0,
            skipped_substeps: 0,
            warned_f32_floor: false,
            frame_end: false,
            max_speed: 0.0,
            last_solve: None,
            last_timing: StageTiming::default(),
            last_substep_timing: StageTiming::default(),
            dispatches_by_stage: Vec::new(),
            bodies: None,
            initial_guess: None,
            guess_copy: None,
            p_lo: None,
            last_refine: None,
            refined: false,
            solver_vectors_live: true,
            kept_vectors: None,
            keep_copy: None,
            queue_slot: None,
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

/// Bytes of the counters at the head of the end-of-substep readback (the stage
/// timestamps follow, 8-byte aligned, then the bodies' force sums).
const COUNTERS_BYTES: u64 = (COUNTERS as u64 * 4).next_multiple_of(8);

/// Where the bodies' force sums start in the end-of-substep readback.
fn sums_offset(timer: &PassTimer) -> u64 {
    (COUNTERS_BYTES + timer.resolved().map_or(0, |(_, n)| n)).next_multiple_of(8)
}

/// Where each part of the end-of-substep readback starts.
#[derive(Clone, Copy, Debug)]
struct ReadbackLayout {
    sums_at: u64,
    extra_at: u64,
    /// The GPU clock's tick of the substep after (copied by that substep, which reads it
    /// back with its solve).
    clock_at: u64,
    /// The push-out's sums the substep's bodies lost (the liquid's).
    push_at: u64,
}

/// Adds the dispatches recorded since `since` (a stage's name and the thread's count when
/// it began) to that stage's in `counts`.
fn count_dispatches(counts: &mut Vec<(&'static str, u64)>, since: Option<(&'static str, u64)>) {
    let Some((name, d0)) = since else { return };
    let d = Traffic::now().dispatches - d0;
    match counts.iter_mut().find(|(n, _)| *n == name) {
        Some((_, total)) => *total += d,
        None => counts.push((name, d)),
    }
}

/// A staging buffer for a solve's whole state (header and residual history).
fn solve_reader(ctx: &GpuContext, pcg: &PcgVectors) -> BufferReader {
    BufferReader::new(&ctx.device, pcg.state.size(), "Runner::solve")
}

/// One substep's readbacks in a pipelined frame.
struct Slot {
    counters: BufferReader,
    solve: BufferReader,
}

/// Bytes of the push-out's sums in the readback.
const PUSH_BYTES: u64 = crate::sim::bodies::coupling::PUSH_WORDS * 4;

impl ReadbackLayout {
    fn new(timer: &PassTimer, extra: u64) -> Self {
        let sums_at = sums_offset(timer);
        let extra_at = sums_at + StrongCoupling::SUMS_BYTES;
        let clock_at = extra_at + extra;
        Self {
            sums_at,
            extra_at,
            clock_at,
            push_at: clock_at + CLOCK_BYTES,
        }
    }
}

/// The end-of-substep readback: the counters, the stage timestamps, the bodies' force sums,
/// `extra` bytes of the mode's own ([`Mode::readback`]), the next substep's tick and the
/// push-out's sums.
fn counters_reader(ctx: &GpuContext, timer: &PassTimer, extra: u64) -> BufferReader {
    let size = ReadbackLayout::new(timer, extra).push_at + PUSH_BYTES;
    BufferReader::new(&ctx.device, size, "Runner::counters")
}

/// The name of the modes' pressure stage, and of the timer slot of its iterations.
const PRESSURE_STAGE: &str = "pressure";
const PRESSURE_ITERATIONS: &str = "pressure iterations";

/// Runs the pressure iterations (recorded and submitted by the solver, which reads its
/// convergence back, with `with`'s staging buffer in the same read), timed in the pressure
/// stage's second part (`PRESSURE_ITERATIONS`).
#[allow(clippy::too_many_arguments)]
fn iterate(
    pressure: &mut PressureSolver,
    ctx: &GpuContext,
    fields: &GridFields,
    pcg: &PcgVectors,
    scene: &Scene,
    timer: &PassTimer,
    bodies: Option<&Bodies>,
    with: Option<&BufferReader>,
) -> Result<(SolveReport, Option<Vec<u32>>), SimError> {
    let timer = timer.enabled().then_some((timer, PRESSURE_ITERATIONS));
    let term = bodies.and_then(|b| b.added_term());
    Ok(pressure.iterate_with(ctx, fields, pcg, &scene.pressure, timer, term, with)?)
}

/// What a mode adds to the runner: its stages, its own GPU work, and its measurements.
pub trait Mode: Sized {
    type Stage: StageList;
    /// The mode's own measurements of one substep.
    type Substep: Clone + Debug + Default;
    /// What the mode's host work learnt while recording a substep (its diffusion solves'
    /// reports): handed back with that substep's counters, which may come back after the
    /// next substep was recorded.
    type Host: Default;
    /// What the runner's error names the largest speed of (e.g. "the largest particle speed").
    const SPEED: &'static str;

    /// The CFL substep, s.
    fn cfl_dt(&self, core: &Core) -> f64;

    /// The CFL rule when the substep's length depends on the largest speed the last
    /// substep measured alone and no host work before a substep needs that length: a
    /// frame's later substeps then take it on the GPU ([`super::clock`]). None (the
    /// default) keeps the host's clock.
    fn gpu_clock(&self, _core: &Core) -> Option<CflTerms> {
        None
    }

    /// Particles the mode moves (liquid particles, smoke tracers).
    fn particles(&self) -> u32;
    /// Whether recording a substep makes the host read from the GPU (a diffusion solve):
    /// such a substep cannot be pipelined ([`Runner::step_frame`]).
    fn reads_while_recording(&self, _core: &Core) -> bool {
        false
    }

    /// Host work before a substep of `dt` is recorded (uniforms, emitters, moving solids).
    /// `core.fields.params` already holds `dt` and is written after this returns.
    fn begin_substep(&mut self, _core: &mut Core, _dt: f64) {}

    /// Records one of the mode's own stages (never a [`SharedStage`]). A stage that solves
    /// on the host's watch (an implicit diffusion) submits what is recorded first
    /// ([`Recorder::submit`]) and keeps its report for [`Mode::read_substep`].
    fn record(
        &mut self,
        stage: Self::Stage,
        rec: &mut Recorder<'_>,
        core: &Core,
    ) -> Result<(), SimError>;

    /// Records what follows the last stage that ran, on every substep, full or not
    /// (stats kernels, copies for the readback).
    fn record_end(&mut self, _rec: &mut Recorder<'_>, _core: &Core) {}

    /// A buffer of the mode's that comes back whole with the substep's counters (its stats'
    /// partial sums; `core.frame_end` says whether the substep ends the frame), sized by
    /// [`Core::fit_readback`] when the mode is made.
    fn readback(&self, _core: &Core) -> Option<&wgpu::Buffer> {
        None
    }

    /// Rebuilds the mode's bind groups that hold the views' fields, which
    /// [`Runner::keep_grid_views`] just replaced (`GridFields::keep_views`).
    fn rebind_views(&mut self, _core: &Core) {}

    /// The readers that bring back what a pipelined substep's host work queued (its
    /// solves' states, as `host` records them), read with the substep's slot.
    fn host_readers(&self, _host: &Self::Host) -> Vec<&BufferReader> {
        Vec::new()
    }

    /// Completes `host` from the words of [`Mode::host_readers`], in their order.
    fn finish_host(&mut self, _core: &Core, _host: &mut Self::Host, _words: &[Vec<u32>]) {}

    /// Takes what the substep just recorded left in [`Mode::Host`].
    fn take_host(&mut self) -> Self::Host {
        Self::Host::default()
    }

    /// The mode's measurements, once the counters of a substep that ran up to `last` are
    /// back (`c`), with the words of its [`Mode::readback`] buffer (`extra`; empty without)
    /// and what its recording left (`host`).
    fn read_substep(
        &mut self,
        core: &Core,
        c: &[u32],
        extra: &[u32],
        last: Self::Stage,
        host: Self::Host,
    ) -> Result<Self::Substep, SimError>;

    /// Host work once a full substep is recorded (e.g. advancing a ring buffer); its
    /// counters may not be back yet.
    fn end_full_substep(&mut self) {}

    /// The last `n` full substeps recorded did not run (recorded ahead past their frame's
    /// end, [`Runner::step_frame`]): undoes what [`Mode::end_full_substep`] did for them.
    fn skipped_substeps(&mut self, _n: u32) {}

    /// Fails when one of the substep's measurements is not finite.
    fn check_finite(
        &self,
        _s: &Self::Substep,
        _finite: &mut dyn FnMut(&'static str, f64) -> Result<(), SimError>,
    ) -> Result<(), SimError> {
        Ok(())
    }

    /// The frame's kinetic energy (J), counted volume (m^3) and the mode's own stats.csv
    /// columns, after the frame's `substeps` (the last one measured `last`; `all` holds
    /// each substep's measurements).
    fn frame_columns(
        &self,
        core: &Core,
        last: &SubstepReport<Self::Substep>,
        all: &[Self::Substep],
        substeps: u32,
    ) -> Result<(f64, f64, ModeColumns), SimError>;
}

/// What one substep measured: the shared counters, the solve, and the mode's own part.
#[derive(Clone, Debug, Default)]
pub struct SubstepReport<X> {
    pub dt: f64,
    /// FLUID cells (liquid) or non-SOLID cells (smoke).
    pub fluid_cells: u32,
    pub max_speed: f32,
    pub front_x: f32,
    pub max_divergence: f32,
    pub solve: Option<SolveReport>,
    /// The mode's own measurements.
    pub extra: X,
    /// GPU ms per stage (empty after a partial substep or without timestamps).
    pub timing: StageTiming,
    /// The substep's number in its frame, from 1 (a partial substep counts as the next).
    pub substep: u32,
}

/// A substep whose counters are still on their way: they come back with the next
/// substep's solve (a frame's substeps on the GPU clock, [`Runner::step_frame`]).
pub(crate) struct Pending {
    dt: f64,
    solve: Option<SolveReport>,
    /// A pipelined solve's queued iterations (its report comes from its slot's words).
    queued: Option<u32>,
    /// Whether its stage timestamps were copied.
    timed: bool,
    /// Whether its bodies' force sums were copied.
    body_forces: bool,
    /// Bytes of the mode's [`Mode::readback`] buffer copied (None without).
    extra_bytes: Option<u64>,
    /// A substep recorded ahead on the GPU clock: its tick is in its slot, and it may not
    /// have run (its frame had ended before it).
    ticked: bool,
}

/// What [`Runner::run_substep`] ran: the report of the substep left pending before it, if
/// that one came back, and its own unless it is pending now; its length and, on the GPU
/// clock, the tick (None for a substep recorded ahead: its tick comes back with its slot).
struct Ran<X> {
    earlier: Option<SubstepReport<X>>,
    this: Option<SubstepReport<X>>,
    dt: f64,
    tick: Option<Tick>,
}

/// The reports a read of a pipelined frame's slots completed, and whether its frame ended.
type Drained<X> = (Vec<SubstepReport<X>>, bool);

/// A frame's sums over its substeps' reports.
#[derive(Default)]
struct FrameAccount<X: Default> {
    iterations: u32,
    worst_residual: f64,
    unconverged: u32,
    last: SubstepReport<X>,
    all: Vec<X>,
}

/// Warns when the frame's last allowed substep takes the rest of the frame, longer than its
/// CFL step `cfl` allows.
fn warn_max_substeps(frame: u64, max_substeps: u32, remaining: f64, cfl: f64) {
    if clock::substep_length(cfl, remaining, false) >= remaining {
        return;
    }
    log::warn!(
        "frame {frame}: max_substeps {max_substeps} reached; last substep {remaining:.3e} s \
         exceeds the CFL limit {cfl:.3e} s"
    );
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

impl<M: Mode> Runner<M> {
    /// The CFL substep, s.
    pub fn cfl_dt(&self) -> f64 {
        self.mode.cfl_dt(&self.core)
    }

    pub fn dims(&self) -> [u32; 3] {
        self.core.fields.params.n
    }

    /// Starts a frame of `dt` seconds: a body held by the user moves with the mouse's
    /// displacement since the last frame began. [`Self::step_frame`] calls it; a caller
    /// stepping substep by substep calls it before each.
    pub fn begin_frame(&mut self, dt: f64) {
        if let Some(b) = self.core.bodies.as_mut() {
            b.set.begin_frame(dt);
        }
    }

    /// Advances one frame (`frame_dt`) in CFL substeps.
    /// Stops with an error naming the frame and the quantity as soon as a substep's
    /// measurements turn NaN or infinite, or the CFL substep collapses below its floor.
    ///
    /// Where the mode's CFL step depends on the largest speed alone ([`Mode::gpu_clock`];
    /// no bodies, inflow, moving meshes or refinement), a frame's later substeps
    /// take their length on the GPU ([`super::clock`]) and leave their counters to come
    /// back with the next substep's solve. A pipelined frame ([`Self::pipelines`]) goes
    /// further: the host records as many substeps as it expects the frame to need
    /// ([`Self::substeps_ahead`]) without reading anything, and the GPU's clock gates those
    /// past the frame's end
    /// ([`crate::gpu::gate`]); the frame's slots then come back in one read, and a frame
    /// that needed more records more. A substep's checks then run as its slot returns;
    /// they stop the run all the same, naming the substep that broke.
    pub fn step_frame(&mut self) -> Result<FrameStats, SimError> {
        let frame_dt = self.core.scene.frame_dt;
        let frame = self.core.frame + 1;
        let mut remaining = frame_dt;
        let mut acc = FrameAccount::default();
        self.core.last_timing = StageTiming::default();
        self.core.substeps_in_frame = 0;
        self.pending = None;
        self.pipe.clear();
        self.begin_frame(frame_dt);
        let clock = self.gpu_clock();
        let pipe = clock.is_some() && self.pipelines();
        let max_substeps = self.core.scene.max_substeps;
        let mut started = 0u32;
        // A pipelined frame on the GPU clock records its substeps ahead up to `until`.
        let mut until = 0u32;
        let mut short = false;
        let skipped_before = self.core.skipped_substeps;
        // Relative to the frame, so a frame of any valid length ends after whole substeps.
        while remaining > frame_dt * 1e-9 {
            let force_rest = started + 1 >= max_substeps;
            let host_dt = match clock {
                Some(terms) if started > 0 => {
                    if started == 1 {
                        // What is left of the frame is the GPU's from here on.
                        self.core.clock.start_frame(
                            &self.core.ctx.queue,
                            terms,
                            remaining,
                            started,
                            max_substeps,
                        );
                    }
                    None
                }
                _ => {
                    let cfl = checked_cfl_dt(
                        frame,
                        started + 1,
                        self.cfl_dt(),
                        self.core.max_speed,
                        frame_dt,
                    )?;
                    let dt = clock::substep_length(cfl, remaining, force_rest);
                    if force_rest {
                        warn_max_substeps(frame, max_substeps, remaining, cfl);
                    }
                    // The frame's last substep (the loop's own test, after `remaining -= dt`).
                    self.core.frame_end = remaining - dt <= frame_dt * 1e-9;
                    Some(dt)
                }
            };
            let defer = clock.is_some();
            let run = self.run_substep(host_dt, M::Stage::last(), defer, remaining, pipe);
            self.core.frame_end = false;
            let ran = run?;
            started += 1;
            if pipe && host_dt.is_none() {
                // Recorded ahead: its tick comes back with the frame's slots.
                if until == 0 {
                    until = self.substeps_ahead(remaining, ran.dt, started);
                }
                if started < until.min(max_substeps) {
                    continue;
                }
                self.record_frame_end_readback();
                let (reports, ended) = self.drain_pipe(frame, &mut remaining)?;
                for report in reports {
                    self.account(frame, report, &mut acc)?;
                }
                if !ended {
                    // The frame needs more substeps than were recorded ahead.
                    short = true;
                    let dt = (self.core.fields.params.dt as f64).max(1e-12);
                    let more = (remaining / dt).ceil().clamp(1.0, max_substeps as f64);
                    until = started.saturating_add(more as u32);
                }
                continue;
            }
            for report in ran.earlier.into_iter().chain(ran.this) {
                self.account(frame, report, &mut acc)?;
            }
            match ran.tick {
                // The GPU's clock: the checks the host makes before a substep of its own.
                Some(tick) => {
                    checked_cfl_dt(
                        frame,
                        started,
                        tick.cfl as f64,
                        self.core.max_speed,
                        frame_dt,
                    )?;
                    if force_rest {
                        warn_max_substeps(frame, max_substeps, remaining, tick.cfl as f64);
                    }
                    remaining = if tick.last { 0.0 } else { remaining - ran.dt };
                }
                None => remaining -= ran.dt,
            }
        }
        let (reports, _) = self.drain_pipe(frame, &mut remaining)?;
        for report in reports {
            self.account(frame, report, &mut acc)?;
        }
        if let Some(b) = self.core.bodies.as_mut() {
            b.settle_push(&self.core.ctx)?;
        }
        self.core.frame += 1;
        let substeps = self.core.substeps_in_frame;
        if until > 0 {
            // A frame that needed more than was recorded widens the next one's margin; one
            // that recorded substeps for nothing narrows it.
            let margin = self.core.ahead.1;
            let margin = if short {
                (margin + 1).min(2)
            } else if self.core.skipped_substeps > skipped_before {
                margin.saturating_sub(1)
            } else {
                margin
            };
            self.core.ahead = (substeps, margin);
        }
        let last = acc.last;
        let (kinetic_energy, volume, columns) = self
            .mode
            .frame_columns(&self.core, &last, &acc.all, substeps)?;
        ensure_finite(frame, substeps, "the kinetic energy", kinetic_energy)?;
        let (pcg_iterations, pcg_residual, pcg_true_residual) =
            last.solve.as_ref().map_or((0, 0.0, 0.0), |s| {
                (
                    s.iterations,
                    s.residual,
                    s.true_residual.unwrap_or(s.residual),
                )
            });
        Ok(FrameStats {
            frame: self.core.frame,
            time_s: self.core.time,
            substeps,
            particles: self.mode.particles(),
            fluid_cells: last.fluid_cells,
            pcg_iterations,
            pcg_residual,
            pcg_true_residual,
            max_divergence: last.max_divergence as f64,
            kinetic_energy,
            max_speed: last.max_speed as f64,
            volume,
            front_x: last.front_x as f64,
            pcg_iterations_total: acc.iterations,
            pcg_max_residual: acc.worst_residual,
            unconverged_solves: acc.unconverged,
            columns,
        })
    }

    /// Whether this frame's substeps may be pipelined (on the GPU clock): the scene asks
    /// for it, a solve has run (its count is the guess) and no stage reads while the host
    /// records it.
    fn pipelines(&self) -> bool {
        self.core.solves_unread() && !self.mode.reads_while_recording(&self.core)
    }

    /// Makes the next pipelined frame on the GPU clock record at least `n` substeps before
    /// it reads its slots (tests: substeps recorded past a frame's end must change nothing).
    pub fn record_ahead_at_least(&mut self, n: u32) {
        self.core.ahead.0 = self.core.ahead.0.max(n);
    }

    /// How many substeps (`started` so far, the last recorded ahead) a pipelined frame on
    /// the GPU clock records before it reads its slots: the last such frame's count plus a
    /// margin (wider after a frame that needed more, narrower after one that recorded
    /// substeps for nothing), and at least what the frame's first substep length `dt`
    /// suggests for the `remaining` seconds.
    fn substeps_ahead(&self, remaining: f64, dt: f64, started: u32) -> u32 {
        let (last, margin) = self.core.ahead;
        let more = (remaining / dt.max(1e-12)).ceil().min(1e6) as u32;
        let from_dt = (started - 1).saturating_add(more);
        last.saturating_add(margin).max(from_dt).max(started)
    }

    /// Before a read of the slots of substeps recorded ahead: the mode's per-frame sums
    /// ([`Mode::readback`]) join the last recorded slot. The substeps after the frame's
    /// last did not run, so the sums are the last one's ([`Self::drain_pipe`] moves them).
    fn record_frame_end_readback(&mut self) {
        self.core.frame_end = true;
        let layout = self.core.readback_layout();
        let i = self.pipe.len() - 1;
        if let Some(buf) = self.mode.readback(&self.core) {
            let mut enc = new_encoder(&self.core.ctx, "Runner::frame_end");
            self.core.slots[i]
                .counters
                .copy_at(&mut enc, buf, layout.extra_at, buf.size());
            self.core.ctx.submit(enc.finish());
            self.pipe[i].0.extra_bytes = Some(buf.size());
        }
        self.core.frame_end = false;
    }

    /// Reads a pipelined frame's slots in one wait and completes its substeps in order
    /// (nothing without a pipelined frame). A substep recorded ahead takes its length from
    /// its tick, with the host's checks, and `remaining` goes down by it; one that did not
    /// run is dropped. Also says whether the frame has ended: a tick said so, or no
    /// substep was recorded ahead.
    fn drain_pipe(
        &mut self,
        frame: u64,
        remaining: &mut f64,
    ) -> Result<Drained<M::Substep>, SimError> {
        if self.pipe.is_empty() {
            return Ok((Vec::new(), true));
        }
        let entries = std::mem::take(&mut self.pipe);
        // Each slot's counters and solve, then what the mode's host work queued in it.
        let mut readers: Vec<&BufferReader> = Vec::new();
        let mut starts = Vec::with_capacity(entries.len() + 1);
        for (slot, (_, host)) in self.core.slots.iter().zip(&entries) {
            starts.push(readers.len());
            readers.extend([&slot.counters, &slot.solve]);
            readers.extend(self.mode.host_readers(host));
        }
        starts.push(readers.len());
        let mut words = BufferReader::read_all(&self.core.ctx, &readers)?;
        let layout = self.core.readback_layout();
        let (frame_dt, max_substeps) = (self.core.scene.frame_dt, self.core.scene.max_substeps);
        let extra_of_last = entries.last().and_then(|(p, _)| p.extra_bytes);
        let mut ended = !entries.iter().any(|(p, _)| p.ticked);
        let mut skipped = 0u32;
        let mut reports = Vec::with_capacity(entries.len());
        let n = entries.len();
        for (i, (mut p, mut host)) in entries.into_iter().enumerate() {
            let at = starts[i];
            if p.ticked {
                let t = Tick::from_words(&words[at][layout.clock_at as usize / 4..]);
                if !t.ran {
                    skipped += 1;
                    continue;
                }
                // The checks the host makes before a substep of its own.
                checked_cfl_dt(
                    frame,
                    t.started,
                    t.cfl as f64,
                    self.core.max_speed,
                    frame_dt,
                )?;
                if t.started >= max_substeps {
                    warn_max_substeps(frame, max_substeps, *remaining, t.cfl as f64);
                }
                // The frame's last substep ends exactly on the frame.
                p.dt = if t.last { *remaining } else { t.dt as f64 };
                *remaining = if t.last { 0.0 } else { *remaining - p.dt };
                self.core.fields.params.dt = t.dt;
                if t.last && i + 1 < n {
                    if let Some(bytes) = extra_of_last {
                        let r =
                            layout.extra_at as usize / 4..(layout.extra_at + bytes) as usize / 4;
                        let last = words[starts[n - 1]][r.clone()].to_vec();
                        words[at][r].copy_from_slice(&last);
                        p.extra_bytes = Some(bytes);
                    }
                }
                ended |= t.last;
            }
            if let Some(queued) = p.queued {
                let substep = self.core.substeps_in_frame + 1;
                p.solve = Some(self.core.unread_solve(queued, &words[at + 1], substep));
            }
            self.mode
                .finish_host(&self.core, &mut host, &words[at + 2..starts[i + 1]]);
            reports.push(self.complete(p, M::Stage::last(), &words[at], host)?);
        }
        if skipped > 0 {
            self.core.skipped_substeps += skipped as u64;
            self.mode.skipped_substeps(skipped);
        }
        let hardest = reports
            .iter()
            .filter_map(|r| r.solve.as_ref())
            .map(|s| s.iterations);
        if let Some(n) = hardest.max() {
            self.core.pressure.guess_at_least(n);
        }
        Ok((reports, ended))
    }

    /// The GPU clock's rule when this run may use it ([`Self::step_frame`]).
    fn gpu_clock(&self) -> Option<CflTerms> {
        let core = &self.core;
        let host_work =
            !core.gpu_clock_enabled || core.bodies.is_some() || core.scene.pressure.refine > 0.0;
        if host_work {
            return None;
        }
        self.mode.gpu_clock(core)
    }

    /// A full substep's checks and its share of the frame's stats.
    fn account(
        &mut self,
        frame: u64,
        report: SubstepReport<M::Substep>,
        acc: &mut FrameAccount<M::Substep>,
    ) -> Result<(), SimError> {
        self.core.last_timing.merge(&report.timing);
        let substep = report.substep;
        let mut finite =
            |quantity: &'static str, value: f64| ensure_finite(frame, substep, quantity, value);
        finite(M::SPEED, report.max_speed as f64)?;
        finite(
            "the largest divergence after projection",
            report.max_divergence as f64,
        )?;
        self.mode.check_finite(&report.extra, &mut finite)?;
        if let Some(solve) = &report.solve {
            finite("the pressure residual", solve.residual)?;
            let tolerance = self.core.scene.pressure.tolerance;
            if let Some(floor) = solve.f32_floor.filter(|f| *f > tolerance) {
                if !self.core.warned_f32_floor {
                    self.core.warned_f32_floor = true;
                    log::warn!(
                        "frame {frame}: the pressure tolerance {tolerance:e} lies below what \
                         f32 can reach on this system (about {floor:.1e} of max|b|): the \
                         true residual stops near that floor whatever the iterations \
                         (stats.csv: pcg_true_residual)"
                    );
                }
            }
            acc.iterations += solve.iterations;
            acc.worst_residual = acc.worst_residual.max(solve.residual);
            if solve.status != pressure::SolveStatus::Converged
                && solve.residual > self.core.scene.pressure.tolerance
            {
                acc.unconverged += 1;
            }
        }
        acc.all.push(report.extra.clone());
        acc.last = report;
        Ok(())
    }

    /// One substep of `dt` seconds, running the stages up to and including `last` (the
    /// viewer stops early to inspect intermediate fields; a full substep runs them all).
    pub fn substep(
        &mut self,
        dt: f64,
        last: M::Stage,
    ) -> Result<SubstepReport<M::Substep>, SimError> {
        self.pending = None;
        self.pipe.clear();
        let ran = self.run_substep(Some(dt), last, false, dt, false)?;
        ran.this
            .ok_or_else(|| SimError::Unsupported("a substep left its counters unread".into()))
    }

    /// One substep: of `dt` seconds, or (None) of the length the GPU's clock takes from the
    /// last substep's counters, with `remaining` seconds of the frame left. The counters of
    /// a substep left pending come back with this one's solve (`earlier`); with `defer`, a
    /// full substep that does not end its frame leaves its own pending too (`this` None).
    /// With `pipe` (a full substep of a pipelined frame) nothing is read: the solve is
    /// queued ahead ([`PressureSolver::queue_ahead`]) and the readbacks go to the substep's
    /// slot. On the clock such a substep is recorded ahead: its tick joins its slot, and
    /// everything after the clock is gated on it ([`crate::gpu::gate`]), so it runs only if
    /// its frame has not ended.
    fn run_substep(
        &mut self,
        dt: Option<f64>,
        last: M::Stage,
        defer: bool,
        remaining: f64,
        pipe: bool,
    ) -> Result<Ran<M::Substep>, SimError> {
        let on_clock = dt.is_none();
        let slot = pipe.then_some(self.pipe.len());
        if let Some(i) = slot {
            self.core.ensure_slots(i + 1);
        }
        self.core.queue_slot = slot;
        let ahead = on_clock && pipe;
        let mut queued = None;
        // On the GPU clock the host does not know the length yet: what it writes is the last
        // one, which the clock overwrites on the GPU before anything reads it.
        let mut dt = dt.unwrap_or(self.core.fields.params.dt as f64);
        self.core.fields.params.dt = dt as f32;
        self.mode.begin_substep(&mut self.core, dt);
        if let Some(b) = self.core.bodies.as_mut() {
            b.begin_substep(&self.core.ctx, &self.core.fields, dt)?;
        }
        self.core.ctx.queue.write_buffer(
            &self.core.fields.params_buffer,
            0,
            bytemuck::bytes_of(&self.core.fields.params),
        );
        let kind = self.core.scene.pressure.preconditioner;
        let layout = self.core.readback_layout();
        let mut rec = Recorder::new(&self.core.ctx, &self.core.timer, "Runner::substep");
        let mut gate = None;
        if on_clock {
            // The clock reads the counters the last substep left, so it runs first.
            self.core.clock.record(rec.encoder(), &self.core.fields);
            if ahead {
                // The gate's prologue reads the tick: it goes to the GPU first, ungated.
                rec.submit("Runner::substep");
                gate = Some(self.core.clock.gate.enter());
            } else {
                self.core.counters_reader.copy_at(
                    rec.encoder(),
                    &self.core.clock.out,
                    layout.clock_at,
                    CLOCK_BYTES,
                );
            }
        }
        rec.encoder()
            .clear_buffer(&self.core.fields.counters, 0, None);
        if let Some(b) = &self.core.bodies {
            b.record_push_reaction(rec.encoder());
        }
        let mut solve = None;
        let mut body_forces = false;
        let mut earlier_words = None;
        let mut tick = None;
        let mut counting = None;
        for &stage in M::Stage::ALL.iter().filter(|&&s| s <= last) {
            count_dispatches(&mut self.core.dispatches_by_stage, counting.take());
            counting = Some((stage.name(), Traffic::now().dispatches));
            let f = &self.core.fields;
            // The liquid's stages after the projection (and before the next solve) reuse
            // the room of b, r, z, d, q and t.
            self.core.solver_vectors_live = !self.core.pcg.shared()
                || matches!(
                    stage.shared(),
                    Some(SharedStage::Pressure | SharedStage::Project)
                );
            match stage.shared() {
                None => self.mode.record(stage, &mut rec, &self.core)?,
                Some(SharedStage::Boundary) => {
                    let mut pass = rec.pass(stage);
                    self.core.boundary.record(&mut pass, f);
                }
                Some(SharedStage::Pressure) => {
                    if let Some(b) = self.core.bodies.as_mut() {
                        b.coupling
                            .separate_regions(&self.core.ctx, &mut rec, f, &b.set)?;
                        b.coupling.clear_sums(rec.encoder());
                    }
                    if let Some(copy) = &self.core.guess_copy {
                        if self.core.scene.pressure.warm_start {
                            let mut pass =
                                rec.encoder()
                                    .begin_compute_pass(&wgpu::ComputePassDescriptor {
                                        label: Some("keep_initial_guess"),
                                        timestamp_writes: None,
                                    });
                            copy.record(&mut pass);
                        }
                    }
                    {
                        let ready = rec.matrix_ready;
                        let mut pass = rec.pass(stage);
                        self.core.divergence.record(&mut pass, f);
                        if let Some(b) = &self.core.bodies {
                            b.coupling.record_compatible(&mut pass, f);
                        }
                        let term = self.core.added_term();
                        if ready {
                            self.core.pressure.record_start(&mut pass, f, kind, term);
                        } else {
                            self.core.pressure.record_setup(&mut pass, f, kind, term);
                        }
                    }
                    rec.submit("Runner::substep_end");
                    let unread = !defer && !on_clock && self.core.solves_unread();
                    if slot.is_some() || unread {
                        let into = match slot {
                            Some(i) => &mut self.core.slots[i].solve,
                            None => &mut self.core.solve_reader,
                        };
                        let timer = (self.core.timer.enabled())
                            .then_some((&self.core.timer, PRESSURE_ITERATIONS));
                        let term = self.core.bodies.as_ref().and_then(|b| b.added_term());
                        queued = Some(self.core.pressure.queue_ahead(
                            rec.encoder(),
                            &self.core.fields,
                            &self.core.pcg,
                            &self.core.scene.pressure,
                            timer,
                            term,
                            into,
                        ));
                        continue;
                    }
                    // The solve's read brings back what the last substep left pending and
                    // this substep's tick.
                    let with =
                        (self.pending.is_some() || on_clock).then_some(&self.core.counters_reader);
                    let (mut report, words) = iterate(
                        &mut self.core.pressure,
                        &self.core.ctx,
                        &self.core.fields,
                        &self.core.pcg,
                        &self.core.scene,
                        &self.core.timer,
                        self.core.bodies.as_ref(),
                        with,
                    )?;
                    if let (true, Some(w)) = (on_clock, &words) {
                        let at = layout.clock_at as usize / 4;
                        let t = Tick::from_words(&w[at..]);
                        // The frame's last substep ends exactly on the frame.
                        dt = if t.last { remaining } else { t.dt as f64 };
                        self.core.fields.params.dt = t.dt;
                        self.core.frame_end = t.last;
                        tick = Some(t);
                    }
                    earlier_words = words.filter(|_| self.pending.is_some());
                    self.core.refined = false;
                    let target = self.core.scene.pressure.refine;
                    if target > 0.0 && self.core.bodies.is_none() {
                        let r = Core::refine(
                            (
                                &mut self.core.pressure,
                                &mut self.core.project,
                                &mut self.core.p_lo,
                            ),
                            &self.core.ctx,
                            &self.core.fields,
                            &self.core.pcg,
                            &self.core.scene.pressure,
                        )?;
                        report.true_residual = Some(r.true_residual);
                        self.core.last_refine = Some(r);
                        self.core.refined = true;
                    }
                    solve = Some(report);
                }
                Some(SharedStage::Project) => {
                    // The solve's vectors, kept (where asked) before the stages after the
                    // projection reuse their room.
                    self.core.record_keep_vectors(rec.encoder());
                    let mut pass = rec.pass(stage);
                    // The pressure's force and torque on the bodies; with the strong
                    // coupling their cells take the velocities the solve found, and the
                    // faces next to them follow.
                    if let Some(b) = &self.core.bodies {
                        b.strong.record_forces(&mut pass);
                    }
                    self.core.project.record(&mut pass, f);
                    if self.core.refined {
                        self.core.project.record_lo(&mut pass, f);
                    }
                    if self.core.added_term().is_some() {
                        self.core.boundary.record(&mut pass, f);
                    }
                    self.core.divergence.record_after(&mut pass, f);
                    body_forces = true;
                }
            }
        }
        count_dispatches(&mut self.core.dispatches_by_stage, counting.take());
        // Only a full substep is left pending, and only by `step_frame`, whose next substep
        // is full too: its solve brought the pending counters back.
        debug_assert!(self.pending.is_none() || earlier_words.is_some());
        self.mode.record_end(&mut rec, &self.core);
        self.core.timer.resolve(rec.encoder());
        let full = last == M::Stage::last();
        let timed = self
            .core
            .timer
            .resolved()
            .filter(|_| full)
            .map(|(b, n)| (b.clone(), n));
        let extra_buf = self.mode.readback(&self.core);
        let extra_bytes = extra_buf.map(|b| b.size());
        let reader = match slot {
            Some(i) => &mut self.core.slots[i].counters,
            None => &mut self.core.counters_reader,
        };
        reader.copy_from(rec.encoder(), &self.core.fields.counters);
        if let Some((buf, n)) = &timed {
            reader.copy_at(rec.encoder(), buf, COUNTERS_BYTES, *n);
        }
        if let Some(b) = self.core.bodies.as_ref().filter(|_| body_forces) {
            reader.copy_at(
                rec.encoder(),
                &b.strong.sums,
                layout.sums_at,
                StrongCoupling::SUMS_BYTES,
            );
            if let Some(push) = b.coupling.push_sums() {
                reader.copy_at(rec.encoder(), push, layout.push_at, PUSH_BYTES);
            }
        }
        if let Some(buf) = extra_buf {
            reader.copy_at(rec.encoder(), buf, layout.extra_at, buf.size());
        }
        if ahead {
            // The tick, still the clock's until the next substep's.
            let out = &self.core.clock.out;
            reader.copy_at(rec.encoder(), out, layout.clock_at, CLOCK_BYTES);
        }
        rec.finish();
        drop(gate);
        if full {
            self.mode.end_full_substep();
        }
        let host = self.mode.take_host();
        let earlier = match (self.pending.take(), earlier_words) {
            (Some((p, h)), Some(words)) => Some(self.complete(p, M::Stage::last(), &words, h)?),
            _ => None,
        };
        let now = Pending {
            dt,
            solve,
            queued,
            timed: timed.is_some(),
            body_forces,
            extra_bytes,
            ticked: ahead,
        };
        let this = if pipe {
            self.pipe.push((now, host));
            None
        } else if defer && full && !self.core.frame_end {
            self.pending = Some((now, host));
            None
        } else {
            let mut now = now;
            let solve = now.queued.map(|_| &self.core.solve_reader);
            let (words, solve_words) =
                self.core.counters_reader.read_with(&self.core.ctx, solve)?;
            if let (Some(queued), Some(w)) = (now.queued, solve_words) {
                let substep = self.core.substeps_in_frame + 1;
                now.solve = Some(self.core.unread_solve(queued, &w, substep));
            }
            Some(self.complete(now, last, &words, host)?)
        };
        Ok(Ran {
            earlier,
            this,
            dt,
            tick,
        })
    }

    /// A substep's report from the words of its readback (`layout` of
    /// [`Core::readback_layout`]); after a full substep the clock moves on and the bodies
    /// move.
    fn complete(
        &mut self,
        p: Pending,
        last: M::Stage,
        words: &[u32],
        host: M::Host,
    ) -> Result<SubstepReport<M::Substep>, SimError> {
        let layout = self.core.readback_layout();
        if let Some(b) = self.core.bodies.as_mut().filter(|_| p.body_forces) {
            let at = layout.sums_at as usize / 4;
            let n = StrongCoupling::SUMS_BYTES as usize / 4;
            b.strong.keep_sums(bytemuck::cast_slice(&words[at..at + n]));
            if b.coupling.push_sums().is_some() {
                let at = layout.push_at as usize / 4;
                b.keep_push(&words[at..at + PUSH_BYTES as usize / 4]);
            }
        }
        let c = &words[..COUNTERS];
        let mut timing = StageTiming::default();
        if p.timed {
            let t = &words[COUNTERS_BYTES as usize / 4..];
            self.core.timer.add_words(t, &mut timing);
        }
        let extra_words = p.extra_bytes.map_or(&[][..], |n| {
            let at = layout.extra_at as usize / 4;
            &words[at..at + n as usize / 4]
        });
        let extra = self
            .mode
            .read_substep(&self.core, c, extra_words, last, host)?;
        let report = SubstepReport {
            dt: p.dt,
            fluid_cells: c[COUNTER_FLUID_CELLS],
            max_speed: f32::from_bits(c[COUNTER_MAX_SPEED]),
            front_x: f32::from_bits(c[COUNTER_FRONT_X]),
            max_divergence: f32::from_bits(c[COUNTER_MAX_DIVERGENCE]),
            solve: p.solve,
            extra,
            timing,
            substep: self.core.substeps_in_frame + 1,
        };
        self.core.last_substep_timing = report.timing.clone();
        if last == M::Stage::last() {
            self.core.max_speed = report.max_speed;
            self.core.time += p.dt;
            // The bodies move over the substep once the fluid has pushed them.
            self.core.substeps_in_frame += 1;
            let at = (self.core.frame + 1, self.core.substeps_in_frame);
            let max_move = MAX_MOVE_CFL * self.core.scene.cfl.max(1.0) * self.core.scene.h();
            if let Some(b) = self.core.bodies.as_mut() {
                b.finish_substep(&self.core.ctx, p.dt, max_move, at)?;
            }
        }
        if report.solve.is_some() {
            self.core.last_solve = report.solve.clone();
        }
        Ok(report)
    }

    /// Solves the pressure system again on the current grid state, without touching the
    /// velocities (benchmarks time this; the step itself uses `substep`). Expects a
    /// substep to have run at least up to the boundary stage.
    pub fn solve_pressure_again(&mut self) -> Result<SolveReport, SimError> {
        let core = &mut self.core;
        let kind = core.scene.pressure.preconditioner;
        core.write_solver_config();
        let stage = M::Stage::ALL
            .iter()
            .copied()
            .find(|s| s.shared() == Some(SharedStage::Pressure))
            .expect("every mode has a pressure stage");
        let mut rec = Recorder::new(&core.ctx, &core.timer, "Runner::solve_pressure_again");
        if let (Some(x0), true) = (&core.initial_guess, core.scene.pressure.warm_start) {
            let n = core.fields.num_cells() as u64 * 4;
            rec.encoder()
                .copy_buffer_to_buffer(&core.pcg.p, 0, x0, 0, n);
        }
        {
            let mut pass = rec.pass(stage);
            core.divergence.record(&mut pass, &core.fields);
            let term = core.added_term();
            core.pressure
                .record_setup(&mut pass, &core.fields, kind, term);
        }
        rec.finish();
        let (report, _) = iterate(
            &mut core.pressure,
            &core.ctx,
            &core.fields,
            &core.pcg,
            &core.scene,
            &core.timer,
            core.bodies.as_ref(),
            None,
        )?;
        core.last_solve = Some(report.clone());
        core.solver_vectors_live = true;
        Ok(report)
    }

    /// Keeps a copy of the PCG's b, r, z, d, q and t after each solve (24 bytes per cell and
    /// one GPU copy per solve), so that their views and the system's export still read the
    /// last solve (the pressure's, or the volume correction's in a substep stopped there)
    /// after later stages: they share P2G's accumulators otherwise
    /// (`PcgVectors`), and those reads are refused. The viewer and `eddy run
    /// --export-system` ask for this; results do not change.
    pub fn keep_solver_vectors(&mut self) {
        let core = &mut self.core;
        if core.pcg.shared() && core.kept_vectors.is_none() {
            let kept = crate::gpu::storage_buffer(
                &core.ctx.device,
                "Core::kept_vectors",
                core.pcg.scratch_len(),
            );
            let v = &core.pcg;
            let pairs: Vec<(Region, Region)> = [&v.b, &v.r, &v.z, &v.d, &v.q, &v.t]
                .into_iter()
                .map(|r| {
                    let to = Region {
                        buffer: kept.clone(),
                        ..r.clone()
                    };
                    (r.clone(), to)
                })
                .collect();
            core.keep_copy = Some(crate::gpu::KernelCopy::new(&core.ctx.device, &pairs));
            core.kept_vectors = Some(kept);
        }
    }

    /// Keeps the fields only the views read (P2G's weights, the divergence before and after
    /// projection: `GridFields::keep_views`) from the next substep on; a headless run
    /// saves their 8 bytes per cell and 4 per face.
    pub fn keep_grid_views(&mut self) {
        let core = &mut self.core;
        if core.fields.keep_views(&core.ctx.device) {
            // The bind groups that hold the placeholders.
            core.divergence =
                divergence::Divergence::new(&core.ctx.device, &core.fields, &core.pcg);
            self.mode.rebind_views(&self.core);
        }
    }

    /// Whether the PCG's vectors outlast a substep (their own room, or a kept copy).
    pub fn keeps_solver_vectors(&self) -> bool {
        !self.core.pcg.shared() || self.core.kept_vectors.is_some()
    }

    /// Keeps (or stops keeping) a copy of each warm-started solve's initial guess, so that
    /// [`Self::freeze_system`] can freeze warm-started systems (one copy of p per solve,
    /// and only in scenes with `pressure.warm_start`).
    pub fn keep_initial_guess(&mut self, keep: bool) {
        let core = &mut self.core;
        if !keep {
            core.initial_guess = None;
            core.guess_copy = None;
        } else if core.initial_guess.is_none() {
            let n = core.fields.num_cells() as u64 * 4;
            let x0 = crate::gpu::storage_buffer(&core.ctx.device, "Core::initial_guess", n);
            let region = |buffer: &wgpu::Buffer| Region {
                buffer: buffer.clone(),
                offset: 0,
                size: n,
            };
            let pair = (region(&core.pcg.p), region(&x0));
            core.guess_copy = Some(crate::gpu::KernelCopy::new(&core.ctx.device, &[pair]));
            core.initial_guess = Some(x0);
        }
    }

    /// The last pressure solve's system (A, b, and the solution phi) for the Matrix Market
    /// export.
    pub fn export_system(&self) -> Result<crate::sim::frames::ExportedSystem, SimError> {
        let core = &self.core;
        Ok(crate::sim::frames::ExportedSystem {
            dims: core.fields.params.n,
            a: crate::gpu::read_buffer(&core.ctx, &core.pcg.a)?,
            b: core.solver_vector(&core.pcg.b)?.read(&core.ctx)?,
            p: crate::gpu::read_buffer(&core.ctx, &core.pcg.p)?,
        })
    }

    /// The pressure system the last solve solved, frozen for the solver lab
    /// (`pressure::lab`): call after a substep that ran the pressure stage. With rigid
    /// bodies in the strong coupling it keeps their added term; a warm-started solve is
    /// refused unless [`Self::keep_initial_guess`] was on before the solve.
    pub fn freeze_system(&self) -> Result<pressure::lab::FrozenSystem, SimError> {
        let core = &self.core;
        let solved = core.solved_vectors()?;
        let origin = format!(
            "{}, frame {}, t = {:.6} s, grid {:?}",
            core.scene.name, core.frame, core.time, core.fields.params.n
        );
        pressure::lab::capture(
            &core.ctx,
            &core.fields,
            &solved,
            core.bodies
                .as_ref()
                .filter(|_| core.added_term().is_some())
                .map(|b| (&b.strong, &b.coupling.body_id, &b.coupling.cover)),
            pressure::lab::SolveRecord {
                settings: &core.scene.pressure,
                initial_guess: core.initial_guess.as_ref(),
                last: core.last_solve.as_ref(),
                origin,
            },
        )
    }

    /// GPU time of the last `solve_pressure_again` (or substep) pressure stage, ms, when the
    /// adapter has timestamps.
    pub fn read_stage_timing(&self) -> Result<Option<StageTiming>, SimError> {
        let core = &self.core;
        if !core.timer.enabled() {
            return Ok(None);
        }
        let mut enc = new_encoder(&core.ctx, "Runner::read_stage_timing");
        core.timer.resolve(&mut enc);
        core.ctx.submit(enc.finish());
        let mut t = StageTiming::default();
        core.timer.read_into(&core.ctx, &mut t)?;
        Ok(Some(t))
    }
}

/// The columns of stats.csv only one mode has.
#[derive(Clone, Debug, serde::Serialize)]
#[serde(untagged)]
pub enum ModeColumns {
    Liquid(LiquidColumns),
    Smoke(SmokeColumns),
}

/// The liquid's own stats.csv columns.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct LiquidColumns {
    /// Volume inside the free surface (FLUID cells plus the level set's reach past their
    /// faces), m^3.
    pub liquid_volume: f64,
    /// max |rho / rho0 - 1| over FLUID cells in the frame's last substep.
    pub density_error_max: f64,
    /// Mean |rho / rho0 - 1| over FLUID cells in the frame's last substep.
    pub density_error_mean: f64,
    /// Iterations of all volume-correction solves in the frame.
    pub volume_iterations: u32,
    /// Iterations of all viscosity solves in the frame (0 when inviscid).
    pub viscosity_iterations: u32,
    /// Viscosity solves in the frame that stopped above their tolerance.
    pub diffusion_unconverged: u32,
    /// Particles the emitters added in the frame.
    pub particles_emitted: u64,
    /// Particles drains and open sides removed in the frame.
    pub particles_removed: u64,
}

/// The smoke's own stats.csv columns.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct SmokeColumns {
    /// Sum over cells of mean(r, g, b) x cell volume (dye units x m^3).
    pub dye_total: f64,
    /// Dye-weighted mean height, m.
    pub dye_center_y: f64,
    /// Sum over cells of |omega|^2 x cell volume, m^3/s^2.
    pub enstrophy: f64,
    /// Iterations of all viscosity solves in the frame (0 when inviscid).
    pub viscosity_iterations: u32,
    /// Viscosity, heat and dye solves in the frame that stopped above their tolerance.
    pub diffusion_unconverged: u32,
}

/// One row of stats.csv, for either mode: the shared columns, then the mode's own.
#[derive(Clone, Debug, serde::Serialize)]
pub struct FrameStats {
    pub frame: u64,
    pub time_s: f64,
    pub substeps: u32,
    /// Liquid particles, or smoke tracers.
    pub particles: u32,
    /// FLUID cells (liquid) or non-SOLID cells (smoke).
    pub fluid_cells: u32,
    /// Iterations of the last solve in the frame.
    pub pcg_iterations: u32,
    /// max|r| / max|b| at the end of the last solve in the frame (the recursive residual
    /// its convergence test reads).
    pub pcg_residual: f64,
    /// max|b - A p| / max|b| of that solve's stored solution: the true residual.
    pub pcg_true_residual: f64,
    /// max |div u| over FLUID cells after the last projection, 1/s.
    pub max_divergence: f64,
    /// J: liquid particle mass = density * cell volume / particles per cell; smoke: air
    /// density 1.2 kg/m^3 over the slice's depth.
    pub kinetic_energy: f64,
    pub max_speed: f64,
    /// Counted cells x cell volume, m^3.
    pub volume: f64,
    /// Liquid: largest particle x; smoke: largest x holding dye (> 1e-3), m.
    pub front_x: f64,
    /// Iterations of all solves in the frame.
    pub pcg_iterations_total: u32,
    /// Largest final max|r| / max|b| over the frame's solves (not in stats.csv).
    pub pcg_max_residual: f64,
    /// Pressure solves in the frame that stopped above the tolerance: at max_iterations,
    /// at the end of their queue (`pressure.pipelined`), or on a breakdown.
    pub unconverged_solves: u32,
    /// The mode's own columns.
    #[serde(flatten)]
    pub columns: ModeColumns,
}

impl FrameStats {
    /// The frame's diffusion solves (viscosity, heat, dye) that stopped above their
    /// tolerance (either mode).
    pub fn diffusion_unconverged(&self) -> u32 {
        match &self.columns {
            ModeColumns::Liquid(l) => l.diffusion_unconverged,
            ModeColumns::Smoke(m) => m.diffusion_unconverged,
        }
    }

    /// Iterations of the frame's viscosity solves (either mode; 0 when inviscid).
    pub fn viscosity_iterations(&self) -> u32 {
        match &self.columns {
            ModeColumns::Liquid(l) => l.viscosity_iterations,
            ModeColumns::Smoke(m) => m.viscosity_iterations,
        }
    }

    /// The liquid's columns, when this is a liquid frame.
    pub fn liquid(&self) -> Option<&LiquidColumns> {
        match &self.columns {
            ModeColumns::Liquid(l) => Some(l),
            ModeColumns::Smoke(_) => None,
        }
    }

    /// The smoke's columns, when this is a smoke frame.
    pub fn smoke(&self) -> Option<&SmokeColumns> {
        match &self.columns {
            ModeColumns::Smoke(m) => Some(m),
            ModeColumns::Liquid(_) => None,
        }
    }
}
