//! `eddy bench --smoke`: steps per second of the 2D smoke mode on square grids, for each
//! preconditioner, with the GPU time per stage where the adapter has timestamp queries.
//!
//! The problem is a hot plume (`plume_scene`): a dyed, hot disc at the bottom of a closed
//! square box, with buoyancy, vorticity confinement and MacCormack advection. It is warmed
//! up so the flow is developed (30 substeps by default), then timed over fixed substeps of
//! 1/120 s (30 by default). IP and MG are the default preconditioners (MIC(0) is 30x slower than
//! IP here). Steps/s is wall
//! clock per substep including every readback the viewer also pays for (PCG convergence
//! checks, the stats), so it is what a user sees; GPU ms per step is the sum of the
//! timestamped stages.

use crate::bench::{BenchError, StreamedTable};
use crate::gpu::{GpuContext, StageTiming};
use crate::scene::{PreconditionerKind, Scene, SceneKind, Shape, SmokeSource};
use crate::sim::smoke::{SmokeSimulation, SmokeStage};
use std::sync::Arc;
use std::time::Instant;

#[derive(Clone, Debug)]
pub struct SmokeBenchOptions {
    /// Cells per side of the square grid.
    pub sizes: Vec<u32>,
    pub preconditioners: Vec<PreconditionerKind>,
    pub tolerance: f64,
    /// Untimed substeps first (the plume develops).
    pub warmup: u32,
    /// Timed substeps.
    pub steps: u32,
    /// PCG iterations submitted between convergence checks.
    pub check_every: u32,
    /// Kinematic viscosity of the plume, m^2/s (0: inviscid, no viscosity solve).
    pub viscosity: f64,
}

impl Default for SmokeBenchOptions {
    fn default() -> Self {
        Self {
            sizes: vec![128, 256, 512],
            preconditioners: vec![PreconditionerKind::Ip, PreconditionerKind::Mg],
            tolerance: 1e-4,
            warmup: 30,
            steps: 30,
            check_every: 8,
            viscosity: 0.0,
        }
    }
}

impl SmokeBenchOptions {
    pub fn validate(&self) -> Result<(), BenchError> {
        let bad = |m: String| Err(BenchError::Options(m));
        if self.sizes.is_empty() || self.preconditioners.is_empty() {
            return bad("--sizes and --preconditioners must each name at least one".into());
        }
        if let Some(s) = self.sizes.iter().find(|s| **s < 8 || **s > 4096) {
            return bad(format!(
                "smoke size {s} is out of range: cells per side, 8 to 4096"
            ));
        }
        if !(self.viscosity.is_finite()
            && (0.0..=crate::scene::MAX_DIFFUSION).contains(&self.viscosity))
        {
            return bad(format!(
                "--viscosity must be in [0, {:e}] m^2/s, got {}",
                crate::scene::MAX_DIFFUSION,
                self.viscosity
            ));
        }
        // Warm-up may be 0 (no untimed substeps), but it is bounded like the other counts.
        if self.warmup > super::MAX_COUNT {
            return bad(format!(
                "--warmup must be at most {}, got {}",
                super::MAX_COUNT,
                self.warmup
            ));
        }
        super::check_common(
            self.tolerance,
            &[("--steps", self.steps), ("--check-every", self.check_every)],
        )
    }
}

/// The benchmark's plume on an n x n grid in a 1 m box.
pub fn plume_scene(n: u32, kind: PreconditionerKind, tolerance: f64) -> Scene {
    let h = 1.0 / n as f64;
    let mut s = Scene {
        name: format!("smoke plume {n}^2"),
        kind: SceneKind::Smoke,
        domain: (1.0, 1.0, h),
        resolution: (n, n, 1),
        ..Scene::default()
    };
    s.pressure.preconditioner = kind;
    s.pressure.tolerance = tolerance;
    s.pressure.max_iterations = 2000;
    s.pressure.warm_start = true;
    s.smoke.buoyancy = 4.0;
    s.smoke.vorticity = 0.3;
    s.smoke.tracers = 4096;
    s.smoke.sources = vec![SmokeSource {
        shape: Shape::Sphere {
            center: (0.5, 0.1, 0.5 * h),
            radius: 0.05,
            velocity: (0.0, 0.0, 0.0),
        },
        dye: (1.0, 0.6, 0.3),
        temperature: 1.0,
        velocity: (0.0, 0.0, 0.0),
    }];
    s
}

#[derive(Clone, Debug, serde::Serialize)]
pub struct SmokeBenchRow {
    pub size: u32,
    pub cells: u64,
    pub preconditioner: String,
    pub advection: String,
    /// Mean PCG iterations per timed substep (warm-started).
    pub pcg_iterations: f64,
    /// Mean viscosity-solve iterations per timed substep (0 when inviscid).
    pub viscosity_iterations: f64,
    /// Wall clock per substep, ms.
    pub ms_per_step: f64,
    pub steps_per_s: f64,
    /// GPU time per substep from timestamps (0 without them), ms.
    pub gpu_ms_per_step: f64,
    pub stage_ms: Vec<(String, f64)>,
}

#[derive(Clone, Debug, serde::Serialize)]
pub struct SmokeBenchReport {
    pub adapter: String,
    pub timestamps: bool,
    pub tolerance: f64,
    pub check_every: u32,
    pub warmup: u32,
    pub steps: u32,
    /// m^2/s.
    pub viscosity: f64,
    pub rows: Vec<SmokeBenchRow>,
}

/// Runs every case; `progress` and `report` as in [`crate::bench::run`].
pub fn run(
    ctx: Arc<GpuContext>,
    opts: &SmokeBenchOptions,
    mut progress: impl FnMut(usize, usize, &str),
    mut report: impl FnMut(&SmokeBenchReport),
) -> Result<SmokeBenchReport, BenchError> {
    opts.validate()?;
    let total = opts.sizes.len() * opts.preconditioners.len();
    let dt = 1.0 / 120.0;
    let mut r = SmokeBenchReport {
        adapter: ctx.describe(),
        timestamps: ctx.timestamps,
        tolerance: opts.tolerance,
        check_every: opts.check_every,
        warmup: opts.warmup,
        steps: opts.steps,
        viscosity: opts.viscosity,
        rows: Vec::new(),
    };
    report(&r);
    for &n in &opts.sizes {
        for &kind in &opts.preconditioners {
            progress(r.rows.len(), total, &format!("smoke {n}^2 {kind}"));
            let mut scene = plume_scene(n, kind, opts.tolerance);
            scene.pressure.check_every = opts.check_every;
            scene.viscosity = opts.viscosity;
            let mut sim = SmokeSimulation::new(ctx.clone(), &scene)?;
            for _ in 0..opts.warmup {
                sim.substep(dt, SmokeStage::Tracers)?;
            }
            let mut stages = StageTiming::default();
            let mut iterations = 0u64;
            let mut viscosity_iterations = 0u64;
            let t0 = Instant::now();
            for _ in 0..opts.steps {
                let rep = sim.substep(dt, SmokeStage::Tracers)?;
                iterations += rep.solve.as_ref().map_or(0, |s| s.iterations as u64);
                viscosity_iterations += rep.extra.diffusion.viscosity_iterations() as u64;
                stages.merge(&sim.last_substep_timing);
            }
            let ms = t0.elapsed().as_secs_f64() * 1e3 / opts.steps as f64;
            let steps = opts.steps as f64;
            r.rows.push(SmokeBenchRow {
                size: n,
                cells: n as u64 * n as u64,
                preconditioner: kind.name().into(),
                advection: scene.smoke.advection.name().into(),
                pcg_iterations: iterations as f64 / steps,
                viscosity_iterations: viscosity_iterations as f64 / steps,
                ms_per_step: ms,
                steps_per_s: 1e3 / ms,
                gpu_ms_per_step: stages.total() / steps,
                stage_ms: stages
                    .stages
                    .iter()
                    .map(|(k, v)| (k.clone(), v / steps))
                    .collect(),
            });
            report(&r);
        }
    }
    progress(r.rows.len(), total, "done");
    Ok(r)
}

pub fn table(r: &SmokeBenchReport) -> String {
    r.table()
}

impl StreamedTable for SmokeBenchReport {
    fn head(&self) -> String {
        format!(
            "adapter: {}\nsmoke plume, {} warm-up + {} timed substeps of 1/120 s, tolerance {:e}, convergence checked every {} iterations, viscosity {} m^2/s; steps/s is wall clock\n\n\
             {:>9} {:>9} {:>7} {:>10} {:>10} {:>9} {:>9} {:>11}\n",
            self.adapter,
            self.warmup,
            self.steps,
            self.tolerance,
            self.check_every,
            self.viscosity,
            "grid",
            "cells",
            "precond",
            "pcg iters",
            "visc iters",
            "ms/step",
            "steps/s",
            "GPU ms/step"
        )
    }

    fn row_count(&self) -> usize {
        self.rows.len()
    }

    fn row(&self, i: usize) -> String {
        let row = &self.rows[i];
        format!(
            "{:>9} {:>9} {:>7} {:>10.1} {:>10.1} {:>9.2} {:>9.1} {:>11}\n",
            format!("{0}x{0}", row.size),
            row.cells,
            row.preconditioner,
            row.pcg_iterations,
            row.viscosity_iterations,
            row.ms_per_step,
            row.steps_per_s,
            if self.timestamps {
                format!("{:.3}", row.gpu_ms_per_step)
            } else {
                "n/a".into()
            }
        )
    }

    fn tail(&self) -> String {
        let mut s = String::new();
        if self.timestamps {
            if let Some(first) = self.rows.first() {
                s += "\nGPU ms per substep by stage:\n";
                s += &format!("{:<16}", "case");
                for (n, _) in &first.stage_ms {
                    s += &format!(" {n:>9}");
                }
                s += "\n";
                for row in &self.rows {
                    s += &format!(
                        "{:<16}",
                        format!("{0}x{0} {1}", row.size, row.preconditioner)
                    );
                    for (_, ms) in &row.stage_ms {
                        s += &format!(" {ms:>9.3}");
                    }
                    s += "\n";
                }
            }
        } else {
            s += "\nthis adapter has no timestamp queries: no per-stage GPU times\n";
        }
        s
    }
}
