//! Every preconditioner raced on one frozen system.

use super::*;

/// One preconditioner's run in a [`race`].
#[derive(Clone, Debug, serde::Serialize)]
pub struct RaceRow {
    pub preconditioner: PreconditionerKind,
    /// Iterations of the solve (the simulation's own loop, `PressureSolver::iterate`).
    pub iterations: u32,
    pub status: SolveStatus,
    /// max|r| / max|b| at the end.
    pub residual: f64,
    /// max|b - A x| / max|b| at the end (the GPU's compensated evaluation).
    pub true_residual: Option<f64>,
    /// max|r| / max|b| before the first and after each iteration.
    pub history: Vec<f32>,
    pub dispatches_per_iteration: u32,
    /// Time of the set-up and the iterations, ms: GPU time from timestamp queries when
    /// `timer` is "gpu", else the host's wall time around them ("wall").
    pub time_ms: f64,
    /// Of `time_ms`, the set-up (the preconditioner's factorisation or hierarchy, the
    /// initial residual and direction), ms: the time at iteration 0 (0 without timestamps).
    /// The iterations share the rest evenly: they run the same kernels.
    pub setup_ms: f64,
    pub timer: &'static str,
    /// Wall time of the set-up and the solve, ms (always measured).
    pub wall_ms: f64,
    /// The Lanczos estimate from the coefficients of a stepped re-run of the same solve.
    pub spectrum: Option<Spectrum>,
}

/// Solves `sys` once with every preconditioner: the iterations, residual history,
/// dispatches and time of the simulation's own solve loop, and the Lanczos spectrum
/// estimate from a stepped re-run (whose iteration count is the same: same kernels).
pub fn race(
    ctx: Arc<GpuContext>,
    sys: &FrozenSystem,
    tolerance: f64,
    max_iterations: u32,
) -> Result<Vec<RaceRow>, SimError> {
    race_some(
        ctx,
        sys,
        &PreconditionerKind::ALL,
        tolerance,
        max_iterations,
        &mut |_, _| {},
    )
}

/// [`race`] over `kinds`, calling `progress(done, kind)` before each.
pub fn race_some(
    ctx: Arc<GpuContext>,
    sys: &FrozenSystem,
    kinds: &[PreconditionerKind],
    tolerance: f64,
    max_iterations: u32,
    progress: &mut dyn FnMut(usize, PreconditionerKind),
) -> Result<Vec<RaceRow>, SimError> {
    let mut rows = Vec::new();
    for (i, &kind) in kinds.iter().enumerate() {
        progress(i, kind);
        let mut lab =
            SolverLab::with_max_iterations(ctx.clone(), sys, kind, tolerance, max_iterations)?;
        let (report, time_ms, timer, wall_ms, setup_ms) = lab.timed_solve()?;
        lab.track_true_residual = false;
        lab.run_to(max_iterations)?;
        rows.push(RaceRow {
            preconditioner: kind,
            iterations: report.iterations,
            status: report.status,
            residual: report.residual,
            true_residual: report.true_residual,
            history: report.history.clone(),
            dispatches_per_iteration: report.dispatches_per_iteration,
            time_ms,
            setup_ms,
            timer,
            wall_ms,
            spectrum: lab.spectrum(),
        });
    }
    Ok(rows)
}

impl SolverLab {
    /// Solves from iteration 0 with the simulation's loop (`PressureSolver::iterate`) and
    /// times it: (report, ms, "gpu" or "wall", wall ms, set-up ms of the GPU time, 0
    /// without timestamps). Leaves the lab back at iteration 0.
    pub fn timed_solve(&mut self) -> Result<(SolveReport, f64, &'static str, f64, f64), SimError> {
        const STAGE: &str = "lab::solve";
        const SETUP: &str = "lab::setup";
        let timer = PassTimer::new(&self.ctx, &[STAGE, SETUP]);
        self.upload_x0();
        // Nothing queued before the clock starts.
        let _ = self.read_header()?;
        let t0 = Instant::now();
        let mut enc = self.encoder("SolverLab::timed_start");
        // The set-up and the iterations are timed apart (`iterate` times STAGE from its
        // first chunk), so the GPU's wait while the host encodes that chunk is left out.
        {
            let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("lab::start"),
                timestamp_writes: timer.writes(SETUP, true, true),
            });
            self.record_start(&mut pass);
        }
        self.ctx.submit(enc.finish());
        let t = timer.enabled().then_some((&timer, STAGE));
        let settings = self.settings();
        let term = self
            .term
            .as_ref()
            .map(|(t, _, _)| t as &dyn crate::sim::core::pressure::AddedTerm);
        let report = self
            .solver
            .iterate(&self.ctx, &self.fields, &self.v, &settings, t, term)?;
        let wall_ms = t0.elapsed().as_secs_f64() * 1e3;
        let out = if timer.enabled() {
            let mut enc = self.encoder("SolverLab::timer");
            timer.resolve(&mut enc);
            self.ctx.submit(enc.finish());
            let mut st = crate::gpu::StageTiming::default();
            timer.read_into(&self.ctx, &mut st)?;
            (
                report,
                st.get(STAGE) + st.get(SETUP),
                "gpu",
                wall_ms,
                st.get(SETUP),
            )
        } else {
            (report, wall_ms, "wall", wall_ms, 0.0)
        };
        self.start()?;
        Ok(out)
    }
}
