//! [`SolverLab`]: PCG on a frozen system one iteration at a time, every vector readable.

use super::*;

/// The scalars of one PCG iteration (row 0: before the first iteration).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct IterationRow {
    pub iteration: u32,
    /// alpha = r.z / d.q of this iteration (0 in row 0).
    pub alpha: f32,
    /// beta = r.z(new) / r.z(old) of this iteration (0 in row 0).
    pub beta: f32,
    /// r.z after the iteration: rho(0) as the GPU summed it, then beta times the one before
    /// (the GPU's own scalars, in f64).
    pub rz: f64,
    /// max|r| / max|b| of the recursive residual (what the convergence test reads).
    pub residual: f64,
    /// max|b - A x| / max|b| of the iterate, in f64 on the host from the read-back x
    /// (None when the lab does not track it: [`SolverLab::track_true_residual`]).
    pub true_residual: Option<f64>,
}

/// The PCG vectors after an iteration, one entry per cell of the grid.
#[derive(Clone, Debug)]
pub struct LabVectors {
    /// The iterate x (the pressure phi).
    pub p: Vec<f32>,
    pub r: Vec<f32>,
    /// z = M^-1 r.
    pub z: Vec<f32>,
    /// The search direction.
    pub d: Vec<f32>,
    /// A d.
    pub q: Vec<f32>,
}

/// One multigrid level's vectors within the last V-cycle (the one that computed z).
#[derive(Clone, Debug)]
pub struct MgLevelVectors {
    pub level: usize,
    pub dims: [u32; 3],
    /// Right-hand side: r on level 0, the restricted residual of the finer level below.
    pub rhs: Vec<f32>,
    /// The residual after pre-smoothing (level 0: PCG's scratch t), what is restricted.
    /// The coarsest level solves directly and keeps none (empty).
    pub residual: Vec<f32>,
    /// The level's solution: z on level 0, the correction to the finer level below it.
    pub correction: Vec<f32>,
}

/// A cell where the residual is large.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct WorstCell {
    pub cell: [u32; 3],
    /// |r| there, relative to max|b|.
    pub residual: f64,
    /// "fluid", "air" or "solid".
    pub cell_type: &'static str,
    /// FLUID cells among its six neighbours (those inside the grid).
    pub fluid_neighbours: u32,
    /// The matrix diagonal (non-SOLID neighbours, AIR ones with 1/theta).
    pub diagonal: f32,
}

pub fn type_name(t: u32) -> &'static str {
    match t {
        FLUID => "fluid",
        AIR => "air",
        SOLID => "solid",
        _ => "?",
    }
}

/// PCG on a frozen system, one iteration at a time on the GPU.
pub struct SolverLab {
    pub(super) ctx: Arc<GpuContext>,
    pub(super) sys: FrozenSystem,
    pub(super) fields: GridFields,
    pub(super) v: PcgVectors,
    pub(super) solver: PressureSolver,
    /// The bodies' added term on the lab's own vectors, and the body ids it reads.
    pub(super) term: Option<(StrongCoupling, wgpu::Buffer, wgpu::Buffer)>,
    pub(super) kind: PreconditionerKind,
    pub(super) tolerance: f64,
    pub(super) max_iterations: u32,
    pub(super) header: PcgStateHeader,
    pub(super) rows: Vec<IterationRow>,
    /// Compute the true residual after every iteration (one read-back of x each).
    pub track_true_residual: bool,
}

/// Iterations the lab keeps room for by default.
pub const LAB_MAX_ITERATIONS: u32 = 4000;

impl SolverLab {
    /// Uploads `sys` to buffers of its own and sets the solve up (preconditioner set-up,
    /// initial residual and direction): iteration 0.
    pub fn new(
        ctx: Arc<GpuContext>,
        sys: &FrozenSystem,
        kind: PreconditionerKind,
        tolerance: f64,
    ) -> Result<Self, SimError> {
        Self::with_max_iterations(ctx, sys, kind, tolerance, LAB_MAX_ITERATIONS)
    }

    /// The same with room for `max_iterations` (the solve stops there, status
    /// IterationLimit, as the simulation's would).
    pub fn with_max_iterations(
        ctx: Arc<GpuContext>,
        sys: &FrozenSystem,
        kind: PreconditionerKind,
        tolerance: f64,
        max_iterations: u32,
    ) -> Result<Self, SimError> {
        sys.check().map_err(SimError::Unsupported)?;
        if !(tolerance > 0.0 && tolerance < 1.0) {
            return Err(SimError::Unsupported(format!(
                "the tolerance must be in (0, 1), got {tolerance:e}"
            )));
        }
        // The largest buffers the lab makes are per cell or per face (a vec4 each at most):
        // refused here, named, rather than by the driver.
        let [nx, ny, nz] = sys.dims.map(|d| d as u64 + 1);
        crate::sim::core::limits::check_buffer(
            &ctx,
            16 * nx * ny * nz,
            "a frozen system's grid buffers (16 bytes a cell)",
            "race a system exported from a smaller grid, or use an adapter with larger buffers",
        )?;
        if max_iterations == 0 {
            return Err(SimError::Unsupported(
                "max_iterations must be at least 1".into(),
            ));
        }
        let device = &ctx.device;
        let params = SimParams::new(sys.dims, sys.h, 0);
        let fields = GridFields::new(device, params, FieldRoom::SOLVE);
        let v = PcgVectors::new(device, params.num_cells, max_iterations, true, Scratch::Own);
        let solver = PressureSolver::new(&ctx, &fields, &v);
        let term = sys.bodies.as_ref().map(|fb| {
            let body_id = crate::gpu::storage_buffer(
                device,
                "SolverLab::body_id",
                4 * fb.body_id.len() as u64,
            );
            ctx.queue
                .write_buffer(&body_id, 0, bytemuck::cast_slice(&fb.body_id));
            let cover =
                crate::gpu::storage_buffer(device, "SolverLab::cover", 4 * fb.cover.len() as u64);
            ctx.queue
                .write_buffer(&cover, 0, bytemuck::cast_slice(&fb.cover));
            // Only `hydrostatic` matters here (it decides `project`); the scale s is already
            // in the frozen bodies' inverse masses.
            let scales = ForceScales {
                density: 1.0,
                face_area: 1.0,
                h: sys.h as f64,
                hydrostatic: false,
                closed: fb.project,
            };
            let mut t = StrongCoupling::new(&ctx, &fields, &v, (&body_id, &cover), scales, true);
            t.deflate = fb.deflate;
            t.upload_bodies(&ctx, &fb.couple)?;
            Ok::<_, SimError>((t, body_id, cover))
        });
        let term = term.transpose()?;
        let mut lab = Self {
            ctx,
            sys: sys.clone(),
            fields,
            v,
            solver,
            term,
            kind,
            tolerance,
            max_iterations,
            header: PcgStateHeader::default(),
            rows: Vec::new(),
            track_true_residual: true,
        };
        lab.upload();
        lab.start()?;
        Ok(lab)
    }

    pub(super) fn term(&self) -> Option<&dyn crate::sim::core::pressure::AddedTerm> {
        self.term
            .as_ref()
            .map(|(t, _, _)| t as &dyn crate::sim::core::pressure::AddedTerm)
    }

    pub(super) fn settings(&self) -> PressureSettings {
        PressureSettings {
            preconditioner: self.kind,
            tolerance: self.tolerance,
            max_iterations: self.max_iterations,
            check_every: self.sys.settings.check_every.max(1),
            warm_start: self.sys.x0.is_some(),
            ..self.sys.settings.clone()
        }
    }

    pub(super) fn upload(&self) {
        let q = &self.ctx.queue;
        q.write_buffer(
            &self.fields.cell_type,
            0,
            bytemuck::cast_slice(&self.sys.cell_type),
        );
        q.write_buffer(
            &self.fields.surface,
            0,
            bytemuck::cast_slice(&self.sys.surface),
        );
        q.write_buffer(&self.v.a, 0, bytemuck::cast_slice(&self.sys.a));
        self.v.b.write(q, bytemuck::cast_slice(&self.sys.b));
        self.solver
            .write_config(&self.ctx, &self.v, &self.settings(), self.term.is_some());
    }

    /// Records the preconditioner's set-up and the initial residual and direction on the
    /// uploaded matrix (the matrix itself is not rebuilt: A is the frozen one).
    pub(super) fn record_start(&self, pass: &mut wgpu::ComputePass<'_>) {
        self.solver.precond.record_setup(pass, self.kind);
        self.solver
            .record_start(pass, &self.fields, self.kind, self.term());
    }

    pub(super) fn upload_x0(&self) {
        let zero;
        let x0: &[f32] = match &self.sys.x0 {
            Some(x) => x,
            None => {
                zero = vec![0f32; self.sys.cells()];
                &zero
            }
        };
        self.ctx
            .queue
            .write_buffer(&self.v.p, 0, bytemuck::cast_slice(x0));
    }

    /// Back to iteration 0.
    pub(super) fn start(&mut self) -> Result<(), SimError> {
        self.upload_x0();
        let mut enc = self.encoder("SolverLab::start");
        {
            let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("lab::start"),
                timestamp_writes: None,
            });
            self.record_start(&mut pass);
        }
        self.ctx.submit(enc.finish());
        self.header = self.read_header()?;
        self.rows.clear();
        let residual = self.recursive_residual();
        let true_residual = if self.track_true_residual {
            Some(self.sys.true_residual(&self.read(&self.v.p)?))
        } else {
            None
        };
        self.rows.push(IterationRow {
            iteration: 0,
            alpha: 0.0,
            beta: 0.0,
            rz: self.header.rho as f64,
            residual,
            true_residual,
        });
        Ok(())
    }

    pub(super) fn encoder(&self, label: &str) -> wgpu::CommandEncoder {
        self.ctx
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some(label) })
    }

    pub(super) fn read_header(&self) -> Result<PcgStateHeader, GpuError> {
        let words: Vec<u32> = read_buffer(&self.ctx, &self.v.state)?;
        let h = (STATE_HEADER_BYTES / 4) as usize;
        Ok(bytemuck::pod_read_unaligned(bytemuck::cast_slice(
            &words[..h],
        )))
    }

    pub(super) fn read(&self, b: &wgpu::Buffer) -> Result<Vec<f32>, GpuError> {
        self.read_region(&Region::whole(b.clone()))
    }

    pub(super) fn read_region(&self, b: &Region) -> Result<Vec<f32>, GpuError> {
        let mut v: Vec<f32> = b.read(&self.ctx)?;
        v.truncate(self.sys.cells());
        Ok(v)
    }

    pub(super) fn recursive_residual(&self) -> f64 {
        if self.header.bb > 0.0 {
            self.header.rr as f64 / self.header.bb as f64
        } else {
            0.0
        }
    }

    /// Iterations done so far.
    pub fn iteration(&self) -> u32 {
        self.header.iterations
    }

    /// Whether the solve has stopped (converged, at the iteration limit, or broken down).
    pub fn done(&self) -> bool {
        self.header.done != 0
    }

    pub fn status(&self) -> SolveStatus {
        if self.header.done == 0 {
            return SolveStatus::Running;
        }
        match self.header.status {
            // A NaN compares below any tolerance on the GPU: not a convergence.
            PCG_CONVERGED if !(self.header.rr.is_finite() && self.header.bb.is_finite()) => {
                SolveStatus::Breakdown
            }
            PCG_CONVERGED => SolveStatus::Converged,
            PCG_ITERATION_LIMIT => SolveStatus::IterationLimit,
            PCG_BREAKDOWN => SolveStatus::Breakdown,
            _ => SolveStatus::Running,
        }
    }

    pub fn preconditioner(&self) -> PreconditionerKind {
        self.kind
    }

    pub fn tolerance(&self) -> f64 {
        self.tolerance
    }

    pub fn system(&self) -> &FrozenSystem {
        &self.sys
    }

    /// The scalars of iterations 0..=k so far.
    pub fn rows(&self) -> &[IterationRow] {
        &self.rows
    }

    /// Dispatches one iteration records (preconditioner included).
    pub fn dispatches_per_iteration(&self) -> u32 {
        self.solver.dispatches_per_iteration(self.kind, self.term())
    }

    /// One more iteration; false (and nothing run) once the solve has stopped.
    pub fn step(&mut self) -> Result<bool, SimError> {
        if self.done() {
            return Ok(false);
        }
        let mut enc = self.encoder("SolverLab::step");
        {
            let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("lab::iteration"),
                timestamp_writes: None,
            });
            self.solver
                .record_iteration(&mut pass, &self.fields, self.kind, self.term());
        }
        self.ctx.submit(enc.finish());
        let before = self.header.iterations;
        self.header = self.read_header()?;
        if self.header.iterations == before {
            // Broke down in update_pr (d.q <= 0): no iteration was counted.
            return Ok(false);
        }
        let prev = self.rows.last().map_or(0.0, |r| r.rz);
        let true_residual = if self.track_true_residual {
            Some(self.sys.true_residual(&self.read(&self.v.p)?))
        } else {
            None
        };
        self.rows.push(IterationRow {
            iteration: self.header.iterations,
            alpha: self.header.alpha,
            beta: self.header.beta,
            rz: self.header.beta as f64 * prev,
            residual: self.recursive_residual(),
            true_residual,
        });
        Ok(true)
    }

    /// Steps (or recomputes from the start) to iteration `k`, or to where the solve stops
    /// before it. Returns the iteration reached.
    pub fn run_to(&mut self, k: u32) -> Result<u32, SimError> {
        if k < self.iteration() {
            self.start()?;
        }
        while self.iteration() < k {
            if !self.step()? {
                break;
            }
        }
        Ok(self.iteration())
    }

    /// Steps until the solve stops or `max` iterations are done.
    pub fn run_to_convergence(&mut self, max: u32) -> Result<u32, SimError> {
        self.run_to(max)
    }

    /// Back one iteration: recomputes from the start (the set-up and k-1 iterations, the
    /// cost of a solve stopped at k-1; no snapshots are kept). The result is bit for bit
    /// the iteration k-1 seen before.
    pub fn back(&mut self) -> Result<u32, SimError> {
        let k = self.iteration().saturating_sub(1);
        self.run_to(k)
    }

    /// Starts again from iteration 0 with another preconditioner or tolerance.
    pub fn restart(&mut self, kind: PreconditionerKind, tolerance: f64) -> Result<(), SimError> {
        self.kind = kind;
        self.tolerance = tolerance;
        self.solver
            .write_config(&self.ctx, &self.v, &self.settings(), self.term.is_some());
        self.start()
    }

    /// p (x), r, z, d and q as they stand after the current iteration.
    pub fn vectors(&self) -> Result<LabVectors, SimError> {
        Ok(LabVectors {
            p: self.read(&self.v.p)?,
            r: self.read_region(&self.v.r)?,
            z: self.read_region(&self.v.z)?,
            d: self.read_region(&self.v.d)?,
            q: self.read_region(&self.v.q)?,
        })
    }

    /// Each multigrid level's right-hand side, smoothed residual and correction within the
    /// last V-cycle applied (only meaningful with `mg`: other preconditioners leave the
    /// coarse levels as the last `mg` solve left them, and use t as their own scratch).
    pub fn mg_levels(&self) -> Result<Vec<MgLevelVectors>, SimError> {
        let mg = &self.solver.precond.multigrid;
        let last = mg.plan.levels() - 1;
        let mut out = Vec::with_capacity(mg.plan.levels());
        for l in 0..mg.plan.levels() {
            let cells = mg.plan.cells(l) as usize;
            let rd = |b: &Region| -> Result<Vec<f32>, GpuError> {
                let mut v: Vec<f32> = b.read(&self.ctx)?;
                v.truncate(cells);
                Ok(v)
            };
            let (rhs, residual, correction) = if l == 0 {
                (rd(&self.v.r)?, rd(&self.v.t)?, rd(&self.v.z)?)
            } else {
                let c = &mg.coarse[l - 1];
                let res = if l == last {
                    Vec::new()
                } else {
                    c.read(&self.ctx, &c.res)?
                };
                (c.read(&self.ctx, &c.b)?, res, c.read(&self.ctx, &c.x)?)
            };
            out.push(MgLevelVectors {
                level: l,
                dims: mg.plan.dims[l],
                rhs,
                residual,
                correction,
            });
        }
        Ok(out)
    }

    /// |r| / max|b| per cell: the recursive residual, or (`true_residual`) b - A x
    /// evaluated in f64 from the read-back x.
    pub fn residual_field(&self, true_residual: bool) -> Result<Vec<f64>, SimError> {
        let bmax = self
            .sys
            .b
            .iter()
            .fold(0f64, |m, &v| m.max((v as f64).abs()));
        let scale = if bmax > 0.0 { 1.0 / bmax } else { 0.0 };
        let r: Vec<f64> = if true_residual {
            let ax = self.sys.apply_f64(&self.read(&self.v.p)?);
            (0..self.sys.cells())
                .map(|c| {
                    if self.sys.a[c][0] == 0.0 {
                        0.0
                    } else {
                        self.sys.b[c] as f64 - ax[c]
                    }
                })
                .collect()
        } else {
            self.read_region(&self.v.r)?
                .iter()
                .map(|&v| v as f64)
                .collect()
        };
        Ok(r.iter().map(|v| v.abs() * scale).collect())
    }

    /// The `n` cells with the largest residual (see [`Self::residual_field`]), largest first.
    pub fn worst_cells(&self, n: usize, true_residual: bool) -> Result<Vec<WorstCell>, SimError> {
        let field = self.residual_field(true_residual)?;
        Ok(worst_cells(&self.sys, &field, n))
    }

    /// z = M^-1 r with this lab's preconditioner, for any r (one entry per cell). The
    /// application overwrites the solver's vectors, so the lab recomputes its current
    /// iteration afterwards (the cost of [`Self::run_to`] from 0).
    pub fn apply_preconditioner(&mut self, r: &[f32]) -> Result<Vec<f32>, SimError> {
        if r.len() != self.sys.cells() {
            return Err(SimError::Unsupported(format!(
                "apply_preconditioner: r has {} entries, the grid {} cells",
                r.len(),
                self.sys.cells()
            )));
        }
        let k = self.iteration();
        let mut z =
            self.solver
                .apply_preconditioner(&self.ctx, &self.fields, &self.v, self.kind, r)?;
        z.truncate(r.len());
        self.start()?;
        self.run_to(k)?;
        Ok(z)
    }

    /// The spectrum estimate from the CG coefficients of the iterations so far.
    pub fn spectrum(&self) -> Option<Spectrum> {
        let (a, b) = coefficients(&self.rows);
        lanczos(&a, &b, self.tolerance)
    }
}

/// The `n` largest entries of `field` (one per cell), largest first.
pub fn worst_cells(sys: &FrozenSystem, field: &[f64], n: usize) -> Vec<WorstCell> {
    let mut order: Vec<usize> = (0..field.len()).filter(|&c| field[c] > 0.0).collect();
    order.sort_by(|&x, &y| field[y].total_cmp(&field[x]).then(x.cmp(&y)));
    order
        .into_iter()
        .take(n)
        .map(|c| WorstCell {
            cell: sys.coord(c),
            residual: field[c],
            cell_type: type_name(sys.cell_type[c]),
            fluid_neighbours: sys
                .neighbours(c)
                .filter(|&m| sys.cell_type[m] == FLUID)
                .count() as u32,
            diagonal: sys.a[c][0],
        })
        .collect()
}
