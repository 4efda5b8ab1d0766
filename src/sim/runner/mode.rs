//! What a mode adds to the runner ([`Mode`]) and what a substep reports back.

use super::*;

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
    pub(super) dt: f64,
    pub(super) solve: Option<SolveReport>,
    /// A pipelined solve's queued iterations (its report comes from its slot's words).
    pub(super) queued: Option<u32>,
    /// Whether its stage timestamps were copied.
    pub(super) timed: bool,
    /// Whether its bodies' force sums were copied.
    pub(super) body_forces: bool,
    /// Bytes of the mode's [`Mode::readback`] buffer copied (None without).
    pub(super) extra_bytes: Option<u64>,
    /// A substep recorded ahead on the GPU clock: its tick is in its slot, and it may not
    /// have run (its frame had ended before it).
    pub(super) ticked: bool,
}

/// What [`Runner::run_substep`] ran: the report of the substep left pending before it, if
/// that one came back, and its own unless it is pending now; its length and, on the GPU
/// clock, the tick (None for a substep recorded ahead: its tick comes back with its slot).
pub(super) struct Ran<X> {
    pub(super) earlier: Option<SubstepReport<X>>,
    pub(super) this: Option<SubstepReport<X>>,
    pub(super) dt: f64,
    pub(super) tick: Option<Tick>,
}

/// The reports a read of a pipelined frame's slots completed, and whether its frame ended.
pub(super) type Drained<X> = (Vec<SubstepReport<X>>, bool);

/// A frame's sums over its substeps' reports.
#[derive(Default)]
pub(super) struct FrameAccount<X: Default> {
    pub(super) iterations: u32,
    pub(super) worst_residual: f64,
    pub(super) unconverged: u32,
    pub(super) last: SubstepReport<X>,
    pub(super) all: Vec<X>,
}

/// How a substep's pressure solve runs and reads back: its slot in a pipelined frame,
/// whether it is on the GPU clock or left pending, the frame's time left (the length of
/// its last substep) and where each part of the readback lies.
pub(super) struct SolvePlan {
    pub(super) slot: Option<usize>,
    pub(super) on_clock: bool,
    pub(super) defer: bool,
    pub(super) remaining: f64,
    pub(super) layout: ReadbackLayout,
}

/// What a substep's recording has gathered so far: its length (the clock's, once its tick
/// is read), the solve (or its queued iterations), whether the bodies' forces were
/// recorded, the words of the substep left pending before it, and the tick.
pub(super) struct Gathered {
    pub(super) dt: f64,
    pub(super) queued: Option<u32>,
    pub(super) solve: Option<SolveReport>,
    pub(super) body_forces: bool,
    pub(super) earlier_words: Option<Vec<u32>>,
    pub(super) tick: Option<Tick>,
}
