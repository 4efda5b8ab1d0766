//! The solver lab: one substep's pressure system frozen outside the simulation
//! ([`FrozenSystem`]), solved again on the GPU one PCG iteration at a time
//! ([`SolverLab`]), with every vector and scalar readable after each iteration; every
//! preconditioner raced on it ([`race`]); the spectrum of the preconditioned operator
//! estimated from the CG coefficients ([`lanczos`]); and where the residual is left
//! ([`SolverLab::worst_cells`]).
//!
//! The lab runs the very kernels of the simulation's solve (`PressureSolver`: the same
//! `record_iteration`, the same preconditioner set-up) on its own grid buffers, uploaded
//! from the frozen system, so iteration k of the lab is bit for bit iteration k of the solve
//! (tests/integration/lab.rs). Stepping submits one iteration per command buffer and reads
//! the solver's state header back after each. Going back ([`SolverLab::back`]) recomputes
//! from the start: the set-up plus k-1 iterations, nothing kept but the scalars; no
//! snapshots are held, so memory stays that of one solve.
//!
//! The file format of a frozen system is in src/output/frozen.rs.

use super::pcg::{PcgStateHeader, STATE_HEADER_BYTES};
use super::{PcgVectors, PressureSolver, Scratch, SolveReport, SolveStatus};
use crate::gpu::constants::{AIR, FLUID, PCG_BREAKDOWN, PCG_CONVERGED, PCG_ITERATION_LIMIT, SOLID};
use crate::gpu::{read_buffer, GpuContext, GpuError, PassTimer, Region};
use crate::scene::{PreconditionerKind, PressureSettings};
use crate::sim::bodies::strong::{CoupleBody, ForceScales, StrongCoupling};
use crate::sim::bodies::MAX_BODIES;
use crate::sim::core::fields::{FieldRoom, GridFields};
use crate::sim::core::params::SimParams;
use crate::sim::SimError;
use std::sync::Arc;
use std::time::Instant;

/// How the simulation's own solve of a frozen system ended.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct FrozenSolve {
    pub iterations: u32,
    /// max|r| / max|b| at the end (the recursive residual).
    pub residual: f64,
    /// "Converged", "IterationLimit", "Breakdown" or "Running".
    pub status: String,
}

impl FrozenSolve {
    pub fn of(r: &SolveReport) -> Self {
        Self {
            iterations: r.iterations,
            residual: r.residual,
            status: format!("{:?}", r.status),
        }
    }
}

/// Everything the GPU solver needs to solve one substep's pressure system again: the grid,
/// the cell types (the multigrid coarsens them), the packed matrix A (diag, +x, +y, +z per
/// cell, built from the cell types and the free surface), the right-hand side b, the
/// free-surface field the matrix was built from (0.5 - surface is the level set; kept for
/// views, A already holds the 1/theta terms), the warm start's initial guess if the solve
/// had one, the solution the simulation found, and the settings it solved with; with rigid
/// bodies in the strong coupling, what their added term K = s J^T M^-1 J reads
/// ([`FrozenBodies`]): the lab then solves (A + K) phi = b with the simulation's own term
/// kernels.
#[derive(Clone, Debug, PartialEq)]
pub struct FrozenSystem {
    pub dims: [u32; 3],
    /// Cell size, m.
    pub h: f32,
    /// AIR, FLUID or SOLID per cell (`crate::gpu::constants`).
    pub cell_type: Vec<u32>,
    pub a: Vec<[f32; 4]>,
    pub b: Vec<f32>,
    pub surface: Vec<f32>,
    /// The initial guess of a warm-started solve (None: x0 = 0).
    pub x0: Option<Vec<f32>>,
    /// The solution phi the simulation's solve stored (f32).
    pub solution: Vec<f32>,
    /// The settings the simulation solved with (the race's default tolerance).
    pub settings: PressureSettings,
    /// How the simulation's solve ended, when known.
    pub solve: Option<FrozenSolve>,
    /// Where it came from (scene, frame, time), free text.
    pub origin: String,
    /// The bodies of the strong coupling's added term (None: the system is A alone).
    pub bodies: Option<FrozenBodies>,
}

/// The rigid bodies of a system solved with the strong coupling, as its added term reads
/// them (src/sim/bodies/strong.wgsl).
#[derive(Clone, Debug, PartialEq)]
pub struct FrozenBodies {
    /// Per cell: 0, or k + 1 in the cells body k covers.
    pub body_id: Vec<u32>,
    /// Per face (u, v, w back to back): the covering body's index + 1 in the top 8 bits and
    /// its share of the face in unorm24 below (src/sim/bodies/coupling.wgsl, `cover`).
    pub cover: Vec<u32>,
    /// Per body: its centre, its inverse mass and inertia times s = h rho A_face, and the
    /// box of cells it may cover (velocities are kept but the term does not read them).
    pub couple: Vec<CoupleBody>,
    /// The term is P K P, P the projection off the constant over the FLUID cells (the
    /// smoke's closed box).
    pub project: bool,
    /// The solve deflated the bodies' modes (with `mg`: src/sim/bodies/strong.wgsl).
    pub deflate: bool,
}

impl FrozenBodies {
    /// The bodies as the f64 reference of the term reads them (src/reference/bodies.rs).
    pub fn ref_bodies(&self) -> Vec<crate::reference::bodies::RefCoupledBody> {
        let v3 = |a: [f32; 4]| [a[0] as f64, a[1] as f64, a[2] as f64];
        self.couple
            .iter()
            .map(|c| crate::reference::bodies::RefCoupledBody {
                centre: v3(c.centre),
                inv_mass: v3(c.inv_mass),
                // s I^-1 is symmetric: its columns are its rows.
                inv_inertia: [c.inv_inertia_x, c.inv_inertia_y, c.inv_inertia_z].map(v3),
            })
            .collect()
    }
}

impl FrozenSystem {
    pub fn cells(&self) -> usize {
        // Dims come from files: a product past usize is no grid (and matches no array).
        self.dims
            .iter()
            .try_fold(1usize, |a, &d| a.checked_mul(d as usize))
            .unwrap_or(usize::MAX)
    }

    /// Checks that every array has one entry per cell and that the cell types are known.
    pub fn check(&self) -> Result<(), String> {
        let n = self.cells();
        if n == 0 {
            return Err(format!("the grid {:?} has no cells", self.dims));
        }
        let lens = [
            ("cell_type", self.cell_type.len()),
            ("A", self.a.len()),
            ("b", self.b.len()),
            ("surface", self.surface.len()),
            ("solution", self.solution.len()),
            ("x0", self.x0.as_ref().map_or(n, |v| v.len())),
        ];
        for (what, len) in lens {
            if len != n {
                return Err(format!(
                    "{what} has {len} entries, the grid {:?} {n} cells",
                    self.dims
                ));
            }
        }
        let values: [(&str, Option<&[f32]>); 5] = [
            ("A", Some(bytemuck::cast_slice(&self.a))),
            ("b", Some(&self.b)),
            ("surface", Some(&self.surface)),
            ("solution", Some(&self.solution)),
            ("x0", self.x0.as_deref()),
        ];
        for (what, v) in values {
            if let Some(i) = v.and_then(|v| v.iter().position(|x| !x.is_finite())) {
                return Err(format!(
                    "{what} holds a value that is not finite (entry {i}): no solve of it can \
                     be trusted"
                ));
            }
        }
        let s = &self.settings;
        let in_range = s.tolerance > 0.0 && s.tolerance < 1.0 && self.h.is_finite() && self.h > 0.0;
        if !in_range {
            return Err(format!(
                "its settings are out of range (tolerance {:e}, must be in (0, 1); cell size \
                 {:e}, must be positive)",
                s.tolerance, self.h
            ));
        }
        if let Some(c) = self.cell_type.iter().position(|&t| t > SOLID) {
            return Err(format!("cell {c} has unknown type {}", self.cell_type[c]));
        }
        if let Some(fb) = &self.bodies {
            if fb.body_id.len() != n {
                return Err(format!(
                    "body_id has {} entries, the grid {:?} {n} cells",
                    fb.body_id.len(),
                    self.dims
                ));
            }
            let faces: usize = crate::scene::fractions::face_counts(self.dims.map(|d| d as usize))
                .iter()
                .sum();
            if fb.cover.len() != faces {
                return Err(format!(
                    "cover has {} entries, the grid {:?} {faces} faces",
                    fb.cover.len(),
                    self.dims
                ));
            }
            if let Some(f) = fb
                .cover
                .iter()
                .position(|&w| (w >> 24) as usize > fb.couple.len())
            {
                return Err(format!(
                    "face {f} is covered by body {} of {}",
                    fb.cover[f] >> 24,
                    fb.couple.len()
                ));
            }
            if fb.couple.is_empty() || fb.couple.len() > MAX_BODIES {
                return Err(format!(
                    "{} bodies; a system with bodies has 1 to {MAX_BODIES}",
                    fb.couple.len()
                ));
            }
            if let Some(c) = fb
                .body_id
                .iter()
                .position(|&id| id as usize > fb.couple.len())
            {
                return Err(format!(
                    "cell {c} belongs to body {} of {}",
                    fb.body_id[c],
                    fb.couple.len()
                ));
            }
        }
        Ok(())
    }

    pub fn fluid_cells(&self) -> usize {
        self.cell_type.iter().filter(|&&t| t == FLUID).count()
    }

    /// (i, j, k) of cell `c`.
    pub fn coord(&self, c: usize) -> [u32; 3] {
        let [nx, ny, _] = self.dims.map(|d| d as usize);
        [
            (c % nx) as u32,
            ((c / nx) % ny) as u32,
            (c / (nx * ny)) as u32,
        ]
    }

    /// The neighbours of cell `c` inside the grid.
    fn neighbours(&self, c: usize) -> impl Iterator<Item = usize> + '_ {
        let [nx, ny, nz] = self.dims.map(|d| d as usize);
        let [i, j, k] = self.coord(c).map(|v| v as usize);
        let strides = [1, nx, nx * ny];
        let at = [i, j, k];
        let len = [nx, ny, nz];
        (0..3).flat_map(move |ax| {
            let lo = (at[ax] > 0).then(|| c - strides[ax]);
            let hi = (at[ax] + 1 < len[ax]).then(|| c + strides[ax]);
            lo.into_iter().chain(hi)
        })
    }

    /// y = A x in f64 (the packed matrix read as the GPU reads it).
    pub fn apply_a_f64(&self, x: &[f64]) -> Vec<f64> {
        super::refine::apply_packed_f64(self.dims, &self.a, x)
    }

    /// (A + K) x in f64: the packed matrix, plus the bodies' added term where the system
    /// has one (src/reference/bodies.rs, the f64 reference of strong.wgsl).
    pub fn apply_f64(&self, x: &[f32]) -> Vec<f64> {
        let xf: Vec<f64> = x.iter().map(|&v| v as f64).collect();
        let mut y = self.apply_a_f64(&xf);
        if let Some(fb) = &self.bodies {
            use crate::reference::bodies::{coupled_term, coupled_term_projected};
            let g = crate::reference::Grid {
                nx: self.dims[0] as usize,
                ny: self.dims[1] as usize,
                nz: self.dims[2] as usize,
                h: self.h as f64,
            };
            let bodies = fb.ref_bodies();
            let types: Vec<u8> = self.cell_type.iter().map(|&t| t as u8).collect();
            let slice = self.dims[2] == 1;
            let term = if fb.project {
                coupled_term_projected(g, &bodies, (&fb.body_id, &fb.cover), &types, x, slice)
            } else {
                coupled_term(g, &bodies, (&fb.body_id, &fb.cover), &types, x, slice)
            };
            for (y, k) in y.iter_mut().zip(term) {
                *y += k;
            }
        }
        y
    }

    /// max|b - (A + K) x| / max|b| in f64 over the cells with a matrix row.
    pub fn true_residual(&self, x: &[f32]) -> f64 {
        let ax = self.apply_f64(x);
        let mut rmax = 0.0f64;
        let mut bmax = 0.0f64;
        for c in 0..self.cells() {
            bmax = bmax.max((self.b[c] as f64).abs());
            if self.a[c][0] != 0.0 {
                rmax = rmax.max((self.b[c] as f64 - ax[c]).abs());
            }
        }
        if bmax > 0.0 {
            rmax / bmax
        } else {
            0.0
        }
    }
}

/// What the solve being captured was asked and did ([`capture`]).
pub struct SolveRecord<'a> {
    pub settings: &'a PressureSettings,
    /// The copy of p taken as a warm-started solve began (a warm-started system without
    /// one is refused).
    pub initial_guess: Option<&'a wgpu::Buffer>,
    pub last: Option<&'a SolveReport>,
    /// Where the system comes from (scene, frame, time, grid), for the lab's title.
    pub origin: String,
}

/// Captures the pressure system the last solve on `f` and `v` solved (call after a substep
/// that ran the pressure stage, before the next one). `bodies`: the strong coupling's term
/// and the cells' body ids, when the solve had that added term.
pub fn capture(
    ctx: &GpuContext,
    f: &GridFields,
    v: &PcgVectors,
    bodies: Option<(&StrongCoupling, &wgpu::Buffer, &wgpu::Buffer)>,
    record: SolveRecord<'_>,
) -> Result<FrozenSystem, SimError> {
    let SolveRecord {
        settings,
        initial_guess,
        last,
        origin,
    } = record;
    let x0 =
        match (settings.warm_start, initial_guess) {
            (false, _) => None,
            (true, Some(buf)) => Some(buf),
            (true, None) => return Err(SimError::Unsupported(
                "this scene warm-starts its pressure solve and the solve overwrote its initial \
                 guess (keep it with keep_initial_guess(true) before the substep, or set \
                 pressure.warm_start: false)"
                    .into(),
            )),
        };
    let n = f.num_cells() as usize;
    let take = |mut v: Vec<f32>| {
        v.truncate(n);
        v
    };
    let mut cell_type: Vec<u32> = read_buffer(ctx, &f.cell_type)?;
    cell_type.truncate(n);
    let mut a: Vec<[f32; 4]> = read_buffer(ctx, &v.a)?;
    a.truncate(n);
    let sys = FrozenSystem {
        dims: f.params.n,
        h: f.params.h,
        cell_type,
        a,
        b: take(v.b.read(ctx)?),
        surface: take(read_buffer(ctx, &f.surface)?),
        x0: match x0 {
            Some(buf) => Some(take(read_buffer(ctx, buf)?)),
            None => None,
        },
        solution: take(read_buffer(ctx, &v.p)?),
        settings: settings.clone(),
        solve: last.map(FrozenSolve::of),
        origin,
        bodies: match bodies {
            Some((term, body_id, cover)) => {
                let count = term.params.bodies as usize;
                let mut id: Vec<u32> = read_buffer(ctx, body_id)?;
                id.truncate(n);
                let cover: Vec<u32> = read_buffer(ctx, cover)?;
                let mut couple: Vec<CoupleBody> = read_buffer(ctx, &term.couple)?;
                couple.truncate(count);
                Some(FrozenBodies {
                    body_id: id,
                    cover,
                    couple,
                    project: term.params.project != 0,
                    deflate: term.deflate,
                })
            }
            None => None,
        },
    };
    sys.check().map_err(SimError::Unsupported)?;
    Ok(sys)
}

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
    ctx: Arc<GpuContext>,
    sys: FrozenSystem,
    fields: GridFields,
    v: PcgVectors,
    solver: PressureSolver,
    /// The bodies' added term on the lab's own vectors, and the body ids it reads.
    term: Option<(StrongCoupling, wgpu::Buffer, wgpu::Buffer)>,
    kind: PreconditionerKind,
    tolerance: f64,
    max_iterations: u32,
    header: PcgStateHeader,
    rows: Vec<IterationRow>,
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

    fn term(&self) -> Option<&dyn super::AddedTerm> {
        self.term
            .as_ref()
            .map(|(t, _, _)| t as &dyn super::AddedTerm)
    }

    fn settings(&self) -> PressureSettings {
        PressureSettings {
            preconditioner: self.kind,
            tolerance: self.tolerance,
            max_iterations: self.max_iterations,
            check_every: self.sys.settings.check_every.max(1),
            warm_start: self.sys.x0.is_some(),
            ..self.sys.settings.clone()
        }
    }

    fn upload(&self) {
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
    fn record_start(&self, pass: &mut wgpu::ComputePass<'_>) {
        self.solver.precond.record_setup(pass, self.kind);
        self.solver
            .record_start(pass, &self.fields, self.kind, self.term());
    }

    fn upload_x0(&self) {
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
    fn start(&mut self) -> Result<(), SimError> {
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

    fn encoder(&self, label: &str) -> wgpu::CommandEncoder {
        self.ctx
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some(label) })
    }

    fn read_header(&self) -> Result<PcgStateHeader, GpuError> {
        let words: Vec<u32> = read_buffer(&self.ctx, &self.v.state)?;
        let h = (STATE_HEADER_BYTES / 4) as usize;
        Ok(bytemuck::pod_read_unaligned(bytemuck::cast_slice(
            &words[..h],
        )))
    }

    fn read(&self, b: &wgpu::Buffer) -> Result<Vec<f32>, GpuError> {
        self.read_region(&Region::whole(b.clone()))
    }

    fn read_region(&self, b: &Region) -> Result<Vec<f32>, GpuError> {
        let mut v: Vec<f32> = b.read(&self.ctx)?;
        v.truncate(self.sys.cells());
        Ok(v)
    }

    fn recursive_residual(&self) -> f64 {
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

/// alpha and beta of iterations 1.. as f64.
fn coefficients(rows: &[IterationRow]) -> (Vec<f64>, Vec<f64>) {
    let it = rows.iter().filter(|r| r.iteration > 0);
    let a = it.clone().map(|r| r.alpha as f64).collect();
    let b = it.map(|r| r.beta as f64).collect();
    (a, b)
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

/// Extreme eigenvalues of the preconditioned operator M^-1 A estimated by Lanczos from CG's
/// coefficients, the condition number, and the textbook iteration bound from it.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Spectrum {
    /// Lanczos steps (CG iterations) the estimate uses.
    pub steps: usize,
    pub lambda_min: f64,
    pub lambda_max: f64,
    /// lambda_max / lambda_min (a lower bound on the true condition number, which the
    /// extreme Ritz values approach from inside).
    pub kappa: f64,
    /// k = 1/2 sqrt(kappa) ln(2/eps): iterations after which the A-norm error of CG has
    /// dropped by eps (the tolerance; eddy's test is in the max norm of r, so this is a
    /// guide, not a promise).
    pub bound_iterations: f64,
}

/// The Lanczos tridiagonal T_k of preconditioned CG from its coefficients (alpha_j,
/// beta_j of iterations j = 1..k) and its extreme eigenvalues:
/// T[0][0] = 1/alpha_1, T[j][j] = 1/alpha_{j+1} + beta_j/alpha_j,
/// T[j][j+1] = sqrt(beta_{j+1})/alpha_{j+1}. None with no usable iteration.
pub fn lanczos(alpha: &[f64], beta: &[f64], eps: f64) -> Option<Spectrum> {
    // Only the leading run of finite, positive coefficients (a breakdown ends it); the
    // last iteration's beta is not used.
    let ok = |x: f64| x.is_finite() && x > 0.0;
    let mut k = 0;
    while k < alpha.len() && ok(alpha[k]) && (k == 0 || beta.get(k - 1).is_some_and(|&b| ok(b))) {
        k += 1;
    }
    if k == 0 {
        return None;
    }
    let mut t = nalgebra::DMatrix::<f64>::zeros(k, k);
    for j in 0..k {
        t[(j, j)] = 1.0 / alpha[j]
            + if j > 0 {
                beta[j - 1] / alpha[j - 1]
            } else {
                0.0
            };
        if j + 1 < k {
            let off = beta[j].sqrt() / alpha[j];
            t[(j, j + 1)] = off;
            t[(j + 1, j)] = off;
        }
    }
    let eig = nalgebra::SymmetricEigen::new(t).eigenvalues;
    let lambda_min = eig.iter().copied().fold(f64::INFINITY, f64::min);
    let lambda_max = eig.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let kappa = lambda_max / lambda_min;
    Some(Spectrum {
        steps: k,
        lambda_min,
        lambda_max,
        kappa,
        bound_iterations: 0.5 * kappa.sqrt() * (2.0 / eps).ln(),
    })
}

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
            .map(|(t, _, _)| t as &dyn super::AddedTerm);
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
