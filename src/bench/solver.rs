//! `eddy bench`: iterations, time per solve and per step, and the PCG iteration's memory
//! bandwidth as a fraction of this adapter's copy bandwidth, for each preconditioner on the
//! standard problems.

use super::{BenchError, StreamedTable};
use crate::gpu::{
    read_buffer, storage_buffer, uniform_buffer, GpuContext, Kernel, PassTimer, StageTiming,
};
use crate::scene::{PreconditionerKind, StandardProblem};
use crate::sim::lab::SolverLab;
use crate::sim::{core::params::SimParams, core::pressure::SolveStatus, Simulation, Stage};
use std::sync::Arc;
use std::time::Instant;

crate::kernel_entries!(
    /// The entry points of copy.wgsl.
    BenchCopyEntries { main }
);

/// What to run.
#[derive(Clone, Debug)]
pub struct BenchOptions {
    pub sizes: Vec<u32>,
    pub problems: Vec<StandardProblem>,
    pub preconditioners: Vec<PreconditionerKind>,
    pub tolerance: f64,
    pub max_iterations: u32,
    /// Timed pressure solves per case.
    pub solves: u32,
    /// Timed full steps per case.
    pub steps: u32,
    /// PCG iterations submitted between convergence checks.
    pub check_every: u32,
}

impl Default for BenchOptions {
    fn default() -> Self {
        Self {
            sizes: vec![16, 32, 64],
            problems: StandardProblem::ALL.to_vec(),
            preconditioners: PreconditionerKind::ALL.to_vec(),
            tolerance: 1e-6,
            max_iterations: 4000,
            solves: 3,
            steps: 3,
            check_every: 8,
        }
    }
}

impl BenchOptions {
    pub fn validate(&self) -> Result<(), BenchError> {
        let bad = |m: String| Err(BenchError::Options(m));
        if self.sizes.is_empty() || self.problems.is_empty() || self.preconditioners.is_empty() {
            return bad(
                "--sizes, --problems and --preconditioners must each name at least one".into(),
            );
        }
        if let Some(s) = self.sizes.iter().find(|s| **s < 4 || **s > 1024) {
            return bad(format!(
                "size {s} is out of range: sizes are cells per axis, 4 to 1024"
            ));
        }
        super::check_common(
            self.tolerance,
            &[
                ("--solves", self.solves),
                ("--steps", self.steps),
                ("--max-iterations", self.max_iterations),
                ("--check-every", self.check_every),
            ],
        )
    }
}

pub fn parse_problem(s: &str) -> Result<StandardProblem, String> {
    StandardProblem::NAMED
        .iter()
        .copied()
        .find(|p| p.name() == s)
        .ok_or_else(|| {
            let names: Vec<&str> = StandardProblem::NAMED.iter().map(|p| p.name()).collect();
            format!(
                "unknown problem {s:?}; expected one of {}",
                names.join(", ")
            )
        })
}

/// One row of the table.
#[derive(Clone, Debug, serde::Serialize)]
pub struct BenchRow {
    pub problem: String,
    pub size: u32,
    pub cells: u64,
    pub fluid_cells: u32,
    pub particles: u32,
    pub preconditioner: String,
    pub iterations: u32,
    pub status: String,
    /// max|r| / max|b| of the recursive residual the convergence test read.
    pub residual: f64,
    /// max|b - A p| / max|b| of the stored solution (see `SolveReport::true_residual`).
    pub true_residual: f64,
    /// The f32 floor of that residual on the system (see `SolveReport::f32_floor`).
    pub f32_floor: f64,
    pub dispatches_per_iteration: u32,
    pub ms_per_iteration: f64,
    pub ms_per_solve: f64,
    pub ms_per_step: f64,
    pub steps_per_s: f64,
    /// Estimated bytes moved per PCG iteration.
    pub bytes_per_iteration: u64,
    pub pcg_gb_per_s: f64,
    /// pcg_gb_per_s / copy_gb_per_s.
    pub bandwidth_fraction: f64,
    /// GPU ms per stage of one full step (empty without timestamps).
    pub stage_ms: Vec<(String, f64)>,
}

/// The whole report.
#[derive(Clone, Debug, serde::Serialize)]
pub struct BenchReport {
    pub adapter: String,
    pub timestamps: bool,
    /// Where times come from: "gpu timestamps" or "wall clock (submit + wait)".
    pub timing_source: String,
    pub copy_gb_per_s: f64,
    pub tolerance: f64,
    pub rows: Vec<BenchRow>,
}

/// Bytes per cell one PCG iteration reads and writes, counting each array once per kernel
/// (see src/sim/core/pressure/pcg.wgsl and src/sim/core/pressure/precond.wgsl): apply_a 24, dot_dq 8, update_pr 24,
/// dot_rz 8, update_d 12, plus the preconditioner. For `mg` (src/sim/core/pressure/multigrid.wgsl) a
/// red-black sweep pair reads the matrix, b and x and writes x (28 B), a boundary pair reads
/// the boundary flags (4 B), residual 28, restriction (residual and weight sums) 8 and
/// prolongation (weight sums, x read and written) 12, on the finest level; the coarser
/// levels add 1/7 of that in 3D.
pub fn bytes_per_cell_per_iteration(kind: PreconditionerKind) -> u64 {
    use crate::sim::core::pressure::multigrid::{BOUNDARY_SWEEPS, SWEEPS};
    let base = 24 + 8 + 24 + 8 + 12;
    base + match kind {
        PreconditionerKind::None | PreconditionerKind::Jacobi => 24,
        PreconditionerKind::Ip => 48,
        PreconditionerKind::Mic0 => 56,
        PreconditionerKind::Mic0Tiled => 48,
        PreconditionerKind::Mg => {
            let level = 2 * 28 * SWEEPS as u64 + 2 * 4 * BOUNDARY_SWEEPS as u64 + 28 + 8 + 12;
            level * 8 / 7
        }
    }
}

/// Copy bandwidth of the adapter in GB/s (bytes read + written), from a plain copy kernel.
pub fn copy_bandwidth(ctx: &GpuContext) -> Result<f64, BenchError> {
    let limit = ctx
        .limits
        .max_storage_buffer_binding_size
        .min(ctx.limits.max_buffer_size);
    // 256 MiB per buffer (or the adapter's limit): far more than any last-level cache, so
    // this measures DRAM. vec4 loads and stores, one per thread.
    let floats = ((256u64 << 20) / 4).min(limit / 4) as u32 / 4 * 4;
    let mut params = SimParams::new([1, 1, 1], 1.0, 0);
    params.num_cells = floats / 4;
    let pbuf = uniform_buffer(&ctx.device, "Bench::params", bytemuck::bytes_of(&params));
    let src = storage_buffer(&ctx.device, "Bench::src", floats as u64 * 4);
    let dst = storage_buffer(&ctx.device, "Bench::dst", floats as u64 * 4);
    let k = Kernel::new(&ctx.device, crate::wgsl!("copy.wgsl"), "BenchCopy");
    let e = BenchCopyEntries::of(&k);
    let group = k.bind(
        &ctx.device,
        &[("params", &pbuf), ("src", &src), ("dst", &dst)],
    );
    let timer = PassTimer::new(ctx, &["copy"]);
    let reps = 5;
    let run = |timed: bool| -> Result<f64, BenchError> {
        let start = Instant::now();
        let mut enc = ctx.device.create_command_encoder(&Default::default());
        {
            let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("copy"),
                timestamp_writes: if timed {
                    timer.writes("copy", true, true)
                } else {
                    None
                },
            });
            for _ in 0..reps {
                k.dispatch(&mut pass, e.main, &group, floats / 4);
            }
        }
        timer.resolve(&mut enc);
        ctx.submit(enc.finish());
        ctx.wait()?;
        let wall = start.elapsed().as_secs_f64() * 1e3;
        if timed && timer.enabled() {
            let mut t = StageTiming::default();
            timer.read_into(ctx, &mut t)?;
            return Ok(t.get("copy"));
        }
        Ok(wall)
    };
    run(false)?; // warm-up (pipeline compilation, first touch)
    let ms = run(true)?;
    let _ = read_buffer::<f32>(ctx, &dst)?;
    Ok(2.0 * floats as f64 * 4.0 * reps as f64 / (ms * 1e-3) / 1e9)
}

/// Runs every case; `progress` is called before each with (done, total, case), and
/// `report` with the report so far: once with no rows, then after each case.
pub fn run(
    ctx: Arc<GpuContext>,
    opts: &BenchOptions,
    mut progress: impl FnMut(usize, usize, &str),
    mut report: impl FnMut(&BenchReport),
) -> Result<BenchReport, BenchError> {
    opts.validate()?;
    let copy = copy_bandwidth(&ctx)?;
    let total = opts.sizes.len() * opts.problems.len() * opts.preconditioners.len();
    let mut r = BenchReport {
        adapter: ctx.describe(),
        timestamps: ctx.timestamps,
        timing_source: if ctx.timestamps {
            "gpu timestamps".into()
        } else {
            "wall clock (submit + wait)".into()
        },
        copy_gb_per_s: copy,
        tolerance: opts.tolerance,
        rows: Vec::new(),
    };
    report(&r);
    for &n in &opts.sizes {
        for &problem in &opts.problems {
            let mut scene = problem.scene(n);
            scene.pressure.tolerance = opts.tolerance;
            scene.pressure.max_iterations = opts.max_iterations;
            scene.pressure.check_every = opts.check_every;
            // Settle once and start every preconditioner from the same particles.
            let mut settle = Simulation::new(ctx.clone(), &scene)?;
            for _ in 0..problem.settle_frames() {
                settle.step_frame()?;
            }
            let (pos, vel) = settle.read_particles()?;
            drop(settle);
            for &kind in &opts.preconditioners {
                progress(
                    r.rows.len(),
                    total,
                    &format!("{} {n}^3 {kind}", problem.name()),
                );
                let mut s = scene.clone();
                s.pressure.preconditioner = kind;
                r.rows
                    .push(run_case(&ctx, &s, problem, n, &pos, &vel, opts, copy)?);
                report(&r);
            }
        }
    }
    progress(r.rows.len(), total, "done");
    Ok(r)
}

#[allow(clippy::too_many_arguments)]
fn run_case(
    ctx: &Arc<GpuContext>,
    scene: &crate::scene::Scene,
    problem: StandardProblem,
    n: u32,
    pos: &[[f32; 4]],
    vel: &[[f32; 4]],
    opts: &BenchOptions,
    copy_gb_per_s: f64,
) -> Result<BenchRow, BenchError> {
    let kind = scene.pressure.preconditioner;
    let mut sim = Simulation::new(ctx.clone(), scene)?;
    sim.keep_initial_guess(problem.leaves_the_term_out());
    sim.upload_particles(pos, vel)?;
    let dt = scene.frame_dt;
    // The system of this state, solved repeatedly (the first solve also warms up).
    let rep = sim.substep(dt, Stage::Boundary)?;
    let fluid_cells = rep.fluid_cells;
    let first = sim.solve_pressure_again()?;
    if problem.leaves_the_term_out() {
        return term_left_out(ctx, &sim, problem, n, fluid_cells, opts, copy_gb_per_s);
    }
    // Untimed solves for a quarter of a second first. The seeding before them leaves the
    // GPU idle for seconds, and solves timed right after may run at idle clocks: the
    // likeliest reason an H100's 256^3 re-solve read 29-64 ms across calls while the
    // step's own solve held at 28 ms (not yet confirmed on a GPU).
    warm_up(|| sim.solve_pressure_again().map(|_| ()))?;
    let mut solve_ms = 0.0;
    for _ in 0..opts.solves {
        let t0 = Instant::now();
        sim.solve_pressure_again()?;
        let wall = t0.elapsed().as_secs_f64() * 1e3;
        solve_ms += match sim.read_stage_timing()? {
            Some(t) if t.get("pressure") > 0.0 => t.get("pressure"),
            _ => wall,
        };
    }
    let ms_per_solve = solve_ms / opts.solves as f64;
    // Full steps from the same starting particles, after one untimed step (software
    // adapters compile each kernel on its first dispatch).
    sim.upload_particles(pos, vel)?;
    sim.substep(dt, Stage::Advect)?;
    sim.upload_particles(pos, vel)?;
    let mut stages = StageTiming::default();
    let mut step_ms = 0.0;
    for _ in 0..opts.steps {
        let t0 = Instant::now();
        sim.substep(dt, Stage::Advect)?;
        let wall = t0.elapsed().as_secs_f64() * 1e3;
        match sim.read_stage_timing()? {
            Some(t) if t.total() > 0.0 => {
                step_ms += t.total();
                stages.merge(&t);
            }
            _ => step_ms += wall,
        }
    }
    let ms_per_step = step_ms / opts.steps as f64;
    let steps = opts.steps as f64;
    let mut row = BenchRow::of_solve(
        problem,
        n,
        scene.cell_count(),
        (fluid_cells, sim.mode.particles.count),
        kind,
        &first,
        ms_per_solve,
        copy_gb_per_s,
    );
    row.ms_per_step = ms_per_step;
    row.steps_per_s = 1e3 / ms_per_step;
    row.stage_ms = stages
        .stages
        .iter()
        .map(|(k, v)| (k.clone(), v / steps))
        .collect();
    Ok(row)
}

/// Untimed solves for a quarter of a second (at most 32) before the timed ones (see
/// `run_case`).
fn warm_up(mut solve: impl FnMut() -> Result<(), crate::sim::SimError>) -> Result<(), BenchError> {
    let warm = Instant::now();
    for _ in 0..32 {
        if warm.elapsed().as_secs_f64() >= 0.25 {
            break;
        }
        solve()?;
    }
    Ok(())
}

impl BenchRow {
    /// A row from a solve's report and its time, `ms_per_step` and `steps_per_s` NaN (JSON
    /// null) and no stages until a caller times full steps.
    #[allow(clippy::too_many_arguments)]
    fn of_solve(
        problem: StandardProblem,
        n: u32,
        cells: u64,
        (fluid_cells, particles): (u32, u32),
        kind: PreconditionerKind,
        first: &crate::sim::core::pressure::SolveReport,
        ms_per_solve: f64,
        copy_gb_per_s: f64,
    ) -> Self {
        let ms_per_iteration = ms_per_solve / first.iterations.max(1) as f64;
        let bytes = bytes_per_cell_per_iteration(kind) * cells;
        let gbs = bytes as f64 / (ms_per_iteration * 1e-3) / 1e9;
        BenchRow {
            problem: problem.name().into(),
            size: n,
            cells,
            fluid_cells,
            particles,
            preconditioner: kind.name().into(),
            iterations: first.iterations,
            status: status_name(first.status).into(),
            residual: first.residual,
            true_residual: first.true_residual.unwrap_or(first.residual),
            f32_floor: first.f32_floor.unwrap_or(0.0),
            dispatches_per_iteration: first.dispatches_per_iteration,
            ms_per_iteration,
            ms_per_solve,
            ms_per_step: f64::NAN,
            steps_per_s: f64::NAN,
            bytes_per_iteration: bytes,
            pcg_gb_per_s: gbs,
            bandwidth_fraction: gbs / copy_gb_per_s,
            stage_ms: Vec::new(),
        }
    }
}

/// The system `sim` just solved, with the strong coupling's term left out (A alone, the
/// bodies held still), solved again by the solver lab: the simulation's set-up and loop on
/// a copy of its grid, cells, matrix and right-hand side. No full steps (`ms_per_step` is
/// NaN, JSON null): a substep without the term is the weak scheme's, another problem.
#[allow(clippy::too_many_arguments)]
fn term_left_out(
    ctx: &Arc<GpuContext>,
    sim: &Simulation,
    problem: StandardProblem,
    n: u32,
    fluid_cells: u32,
    opts: &BenchOptions,
    copy_gb_per_s: f64,
) -> Result<BenchRow, BenchError> {
    let mut sys = sim.freeze_system()?;
    sys.bodies = None;
    let kind = sys.settings.preconditioner;
    let mut lab = SolverLab::with_max_iterations(
        ctx.clone(),
        &sys,
        kind,
        opts.tolerance,
        opts.max_iterations,
    )?;
    // The first solve gives the iterations and residuals.
    let (first, ..) = lab.timed_solve()?;
    warm_up(|| lab.timed_solve().map(|_| ()))?;
    let mut solve_ms = 0.0;
    for _ in 0..opts.solves {
        solve_ms += lab.timed_solve()?.1;
    }
    let ms_per_solve = solve_ms / opts.solves as f64;
    Ok(BenchRow::of_solve(
        problem,
        n,
        sys.cells() as u64,
        (fluid_cells, sim.mode.particles.count),
        kind,
        &first,
        ms_per_solve,
        copy_gb_per_s,
    ))
}

/// `v` to two decimals, or "-" where there is none (NaN).
fn or_dash(v: f64) -> String {
    if v.is_nan() {
        "-".into()
    } else {
        format!("{v:.2}")
    }
}

fn status_name(s: SolveStatus) -> &'static str {
    match s {
        SolveStatus::Converged => "converged",
        SolveStatus::IterationLimit => "iteration limit",
        SolveStatus::Breakdown => "breakdown",
        SolveStatus::Stopped => "stopped at its queued iterations",
        SolveStatus::Running => "running",
    }
}

/// The report as a plain-text table.
pub fn table(r: &BenchReport) -> String {
    r.table()
}

impl StreamedTable for BenchReport {
    fn head(&self) -> String {
        format!(
            "adapter: {}\ntimes: {}; copy bandwidth {:.2} GB/s; tolerance {:e} (max|r|/max|b|)\n\n\
             {:<13} {:>5} {:>9} {:>9} {:>7} {:>6} {:>9} {:>8} {:>8} {:>10} {:>10} {:>8} {:>8} {:>7}\n",
            self.adapter,
            self.timing_source,
            self.copy_gb_per_s,
            self.tolerance,
            "problem",
            "grid",
            "cells",
            "particles",
            "precond",
            "iters",
            "true res",
            "f32 floor",
            "disp/it",
            "ms/iter",
            "ms/solve",
            "ms/step",
            "steps/s",
            "bw"
        )
    }

    fn row_count(&self) -> usize {
        self.rows.len()
    }

    fn row(&self, i: usize) -> String {
        let row = &self.rows[i];
        format!(
            "{:<13} {:>5} {:>9} {:>9} {:>7} {:>6} {:>9.1e} {:>8.1e} {:>8} {:>10.3} {:>10.2} {:>8} {:>8} {:>6.1}%{}\n",
            row.problem,
            format!("{}^3", row.size),
            row.cells,
            row.particles,
            row.preconditioner,
            row.iterations,
            row.true_residual,
            row.f32_floor,
            row.dispatches_per_iteration,
            row.ms_per_iteration,
            row.ms_per_solve,
            or_dash(row.ms_per_step),
            or_dash(row.steps_per_s),
            100.0 * row.bandwidth_fraction,
            if row.status == "converged" { String::new() } else { format!("  ({})", row.status) }
        )
    }

    fn tail(&self) -> String {
        let mut s = String::new();
        if let Some(first) = self.rows.first() {
            if !first.stage_ms.is_empty() {
                s += "\nGPU ms per stage of a full step (per case):\n";
                let names: Vec<&String> = first.stage_ms.iter().map(|(n, _)| n).collect();
                let case =
                    |r: &BenchRow| format!("{} {}^3 {}", r.problem, r.size, r.preconditioner);
                let w = self
                    .rows
                    .iter()
                    .map(|r| case(r).len())
                    .max()
                    .unwrap_or(0)
                    .max(28);
                s += &format!("{:<w$}", "case");
                for n in &names {
                    s += &format!(" {:>11}", n);
                }
                s += "\n";
                for row in self.rows.iter().filter(|r| !r.stage_ms.is_empty()) {
                    s += &format!("{:<w$}", case(row));
                    for (_, ms) in &row.stage_ms {
                        s += &format!(" {:>11.3}", ms);
                    }
                    s += "\n";
                }
            }
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_are_validated() {
        let mut o = BenchOptions::default();
        assert!(o.validate().is_ok());
        o.sizes = vec![2];
        assert!(o.validate().unwrap_err().to_string().contains("size 2"));
        o.sizes = vec![8];
        o.tolerance = 0.0;
        assert!(o.validate().is_err());
        assert!(parse_problem("dam_break").is_ok());
        assert!(parse_problem("tsunami").unwrap_err().contains("tsunami"));
    }

    #[test]
    fn mic0_moves_the_most_bytes_per_iteration() {
        let b = |k| bytes_per_cell_per_iteration(k);
        assert!(b(PreconditionerKind::Mic0) > b(PreconditionerKind::Ip));
        assert!(b(PreconditionerKind::Ip) > b(PreconditionerKind::Jacobi));
        assert_eq!(b(PreconditionerKind::None), b(PreconditionerKind::Jacobi));
    }
}
