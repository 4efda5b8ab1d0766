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
//! The file format of a frozen system is in src/output/frozen.rs. Here: the frozen system
//! and its capture (mod.rs), stepping it (stepper.rs), the race (race.rs) and the
//! spectrum (spectrum.rs).

use crate::gpu::constants::{AIR, FLUID, PCG_BREAKDOWN, PCG_CONVERGED, PCG_ITERATION_LIMIT, SOLID};
use crate::gpu::{read_buffer, GpuContext, GpuError, PassTimer, Region};
use crate::scene::{PreconditionerKind, PressureSettings};
use crate::sim::bodies::strong::{CoupleBody, ForceScales, StrongCoupling};
use crate::sim::bodies::MAX_BODIES;
use crate::sim::core::fields::{FieldRoom, GridFields};
use crate::sim::core::params::SimParams;
use crate::sim::core::pressure::pcg::{PcgStateHeader, STATE_HEADER_BYTES};
use crate::sim::core::pressure::{PcgVectors, PressureSolver, Scratch, SolveReport, SolveStatus};
use crate::sim::SimError;
use std::sync::Arc;
use std::time::Instant;

mod race;
mod spectrum;
mod stepper;

pub use race::{race, race_some, RaceRow};
use spectrum::coefficients;
pub use spectrum::{lanczos, Spectrum};
pub use stepper::{
    type_name, worst_cells, IterationRow, LabVectors, MgLevelVectors, SolverLab, WorstCell,
    LAB_MAX_ITERATIONS,
};

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
        crate::sim::core::pressure::refine::apply_packed_f64(self.dims, &self.a, x)
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
