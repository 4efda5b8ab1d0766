//! Inspectable fields as data: every grid field the step produces, by name, with the
//! buffer that holds it and how to read one scalar per cell or face. One slice viewer
//! draws any of them; nothing else needs to know where a field lives.

use crate::scene::PreconditionerKind;
use crate::sim::{core::pressure::PressureSolver, runner::Core, SimError, Simulation};
use std::borrow::Cow;

/// Where a field's samples sit on the MAC grid.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Location {
    Cell,
    /// Faces of velocity component 0 (u), 1 (v) or 2 (w).
    Face(u32),
}

/// Every grid field a user can look at.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Field {
    U,
    V,
    W,
    /// Components of `GridFields::vel_old`: the velocity after P2G, before forces (FLIP's
    /// old velocity). Shown as `u_p2g`, `v_p2g`, `w_p2g` on the command line.
    UOld,
    VOld,
    WOld,
    WeightU,
    WeightV,
    WeightW,
    /// FLIP velocity change, u_new - u_old, per face.
    FlipDeltaU,
    FlipDeltaV,
    FlipDeltaW,
    /// The fraction of each face open to the fluid (the solids' cut faces; 1 everywhere in
    /// a scene whose solids are their own staircase).
    OpenU,
    OpenV,
    OpenW,
    /// The factor on each face's FLIP change that G2P hands the particles (bodies that
    /// cut faces: src/sim/bodies/coupling.wgsl `gather_scale_faces`; 1 elsewhere).
    GatherU,
    GatherV,
    GatherW,
    CellType,
    /// Velocity of the solid in each SOLID cell (scene solids; rigid bodies' v + w x r),
    /// per component, m/s: what the boundary stage puts on the solid's faces.
    SolidVelX,
    SolidVelY,
    SolidVelZ,
    ParticleCount,
    /// Relative particle density rho / rho0 (1 = rest).
    Density,
    /// Liquid level set 0.5 - filtered rho / rho0 (negative inside; the free surface is its
    /// zero).
    LevelSet,
    /// Mean curvature of the level set, 1/m (positive where the liquid bulges out), as the
    /// surface tension computes it; zero in a scene without surface tension.
    Curvature,
    /// The Laplace pressure sigma kappa, Pa: the jump the surface tension puts across the
    /// free surface, read at each cell centre.
    LaplacePressure,
    Divergence,
    DivergenceAfter,
    ADiag,
    APlusX,
    APlusY,
    APlusZ,
    Rhs,
    Pressure,
    Residual,
    Preconditioned,
    SearchDirection,
    ASearchDirection,
    MicPrecon,
    /// A vector of one level of the `mg` preconditioner (which levels exist depends on
    /// the grid: [`MgField::list`]).
    Mg(MgField),
}

impl Field {
    /// The fields of the simulation grid (the multigrid levels come from [`MgField::list`]).
    pub const ALL: [Field; 40] = [
        Field::U,
        Field::V,
        Field::W,
        Field::UOld,
        Field::VOld,
        Field::WOld,
        Field::WeightU,
        Field::WeightV,
        Field::WeightW,
        Field::FlipDeltaU,
        Field::FlipDeltaV,
        Field::FlipDeltaW,
        Field::OpenU,
        Field::OpenV,
        Field::OpenW,
        Field::GatherU,
        Field::GatherV,
        Field::GatherW,
        Field::CellType,
        Field::SolidVelX,
        Field::SolidVelY,
        Field::SolidVelZ,
        Field::ParticleCount,
        Field::Density,
        Field::LevelSet,
        Field::Curvature,
        Field::LaplacePressure,
        Field::Divergence,
        Field::DivergenceAfter,
        Field::ADiag,
        Field::APlusX,
        Field::APlusY,
        Field::APlusZ,
        Field::Rhs,
        Field::Pressure,
        Field::Residual,
        Field::Preconditioned,
        Field::SearchDirection,
        Field::ASearchDirection,
        Field::MicPrecon,
    ];

    pub fn label(self) -> Cow<'static, str> {
        Cow::Borrowed(match self {
            Field::Mg(m) => return Cow::Owned(m.label()),
            Field::U => "u (x velocity)",
            Field::V => "v (y velocity)",
            Field::W => "w (z velocity)",
            Field::UOld => "u after P2G",
            Field::VOld => "v after P2G",
            Field::WOld => "w after P2G",
            Field::WeightU => "P2G weight u",
            Field::WeightV => "P2G weight v",
            Field::WeightW => "P2G weight w",
            Field::OpenU => "open fraction of x faces",
            Field::OpenV => "open fraction of y faces",
            Field::OpenW => "open fraction of z faces",
            Field::GatherU => "G2P factor on x faces",
            Field::GatherV => "G2P factor on y faces",
            Field::GatherW => "G2P factor on z faces",
            Field::SolidVelX => "solid velocity x",
            Field::SolidVelY => "solid velocity y",
            Field::SolidVelZ => "solid velocity z",
            Field::FlipDeltaU => "FLIP delta u",
            Field::FlipDeltaV => "FLIP delta v",
            Field::FlipDeltaW => "FLIP delta w",
            Field::CellType => "cell type",
            Field::ParticleCount => "particles per cell",
            Field::Density => "density / rest density",
            Field::LevelSet => "liquid level set (0.5 - filtered density)",
            Field::Curvature => "surface curvature (1/m)",
            Field::LaplacePressure => "Laplace pressure sigma kappa (Pa)",
            Field::Divergence => "divergence (before)",
            Field::DivergenceAfter => "divergence (after)",
            Field::ADiag => "A diagonal",
            Field::APlusX => "A +x",
            Field::APlusY => "A +y",
            Field::APlusZ => "A +z",
            Field::Rhs => "b (rhs)",
            Field::Pressure => "pressure (Pa)",
            Field::Residual => "PCG r",
            Field::Preconditioned => "PCG z",
            Field::SearchDirection => "PCG d (search)",
            Field::ASearchDirection => "PCG q = A d",
            Field::MicPrecon => "MIC(0) inverse diagonal",
        })
    }

    /// One line on what the field holds, for `eddy view --help`.
    pub fn meaning(self) -> &'static str {
        match self {
            Field::Mg(_) => "a vector of one multigrid level",
            Field::U => "x velocity on the faces after the last stage run (m/s)",
            Field::V => "y velocity on the faces after the last stage run (m/s)",
            Field::W => "z velocity on the faces after the last stage run (m/s)",
            Field::UOld => "x face velocity as P2G left it, before forces (FLIP's old u)",
            Field::VOld => "y face velocity as P2G left it, before forces (FLIP's old v)",
            Field::WOld => "z face velocity as P2G left it, before forces (FLIP's old w)",
            Field::WeightU => "sum of the particles' trilinear weights on each x face",
            Field::WeightV => "sum of the particles' trilinear weights on each y face",
            Field::WeightW => "sum of the particles' trilinear weights on each z face",
            Field::FlipDeltaU => "FLIP change of u, new minus after P2G (m/s)",
            Field::FlipDeltaV => "FLIP change of v, new minus after P2G (m/s)",
            Field::FlipDeltaW => "FLIP change of w, new minus after P2G (m/s)",
            Field::OpenU | Field::OpenV | Field::OpenW => {
                "fraction of each face the solids leave open to the fluid (cut faces)"
            }
            Field::GatherU | Field::GatherV | Field::GatherW => {
                "factor on each face's FLIP change G2P hands the particles (near bodies)"
            }
            Field::CellType => "AIR, FLUID or SOLID per cell",
            Field::SolidVelX => {
                "x velocity of the solid in each SOLID cell (bodies: v + w x r; m/s)"
            }
            Field::SolidVelY => {
                "y velocity of the solid in each SOLID cell (bodies: v + w x r; m/s)"
            }
            Field::SolidVelZ => {
                "z velocity of the solid in each SOLID cell (bodies: v + w x r; m/s)"
            }
            Field::ParticleCount => "particles in each cell",
            Field::Density => {
                "particle density over the rest density (1 = rest; mean of the face weights)"
            }
            Field::LevelSet => {
                "0.5 - filtered density: the liquid level set, zero on the free surface"
            }
            Field::Curvature => {
                "mean curvature of the level set (1/m), clamped to 1/h; 0 without surface tension"
            }
            Field::LaplacePressure => {
                "sigma kappa (Pa): the pressure the surface tension holds across the surface"
            }
            Field::Divergence => "div u per cell before the pressure projection (1/s)",
            Field::DivergenceAfter => "div u per cell after projection: what the solve left (1/s)",
            Field::ADiag => "pressure matrix A, diagonal entry of each cell",
            Field::APlusX => "pressure matrix A, coupling of each cell to its +x neighbour",
            Field::APlusY => "pressure matrix A, coupling of each cell to its +y neighbour",
            Field::APlusZ => "pressure matrix A, coupling of each cell to its +z neighbour",
            Field::Rhs => "right-hand side of the solve, b = -h^2 div u",
            Field::Pressure => "pressure after the solve (Pa)",
            Field::Residual => "PCG residual r = b - A p",
            Field::Preconditioned => "PCG z = M^-1 r, the preconditioned residual",
            Field::SearchDirection => "PCG search direction d",
            Field::ASearchDirection => "PCG q = A d",
            Field::MicPrecon => "inverse diagonal of the MIC(0) factorisation",
        }
    }

    /// Short name for the command line (`eddy view --field divergence`).
    pub fn id(self) -> Cow<'static, str> {
        Cow::Borrowed(match self {
            Field::Mg(m) => return Cow::Owned(m.id()),
            Field::U => "u",
            Field::V => "v",
            Field::W => "w",
            Field::UOld => "u_p2g",
            Field::VOld => "v_p2g",
            Field::WOld => "w_p2g",
            Field::WeightU => "weight_u",
            Field::WeightV => "weight_v",
            Field::WeightW => "weight_w",
            Field::FlipDeltaU => "flip_delta_u",
            Field::FlipDeltaV => "flip_delta_v",
            Field::FlipDeltaW => "flip_delta_w",
            Field::OpenU => "open_u",
            Field::OpenV => "open_v",
            Field::OpenW => "open_w",
            Field::GatherU => "gather_u",
            Field::GatherV => "gather_v",
            Field::GatherW => "gather_w",
            Field::CellType => "cell_type",
            Field::SolidVelX => "solid_u",
            Field::SolidVelY => "solid_v",
            Field::SolidVelZ => "solid_w",
            Field::ParticleCount => "particle_count",
            Field::Density => "density",
            Field::LevelSet => "level_set",
            Field::Curvature => "curvature",
            Field::LaplacePressure => "laplace_pressure",
            Field::Divergence => "divergence",
            Field::DivergenceAfter => "divergence_after",
            Field::ADiag => "a_diag",
            Field::APlusX => "a_plus_x",
            Field::APlusY => "a_plus_y",
            Field::APlusZ => "a_plus_z",
            Field::Rhs => "rhs",
            Field::Pressure => "pressure",
            Field::Residual => "pcg_r",
            Field::Preconditioned => "pcg_z",
            Field::SearchDirection => "pcg_d",
            Field::ASearchDirection => "pcg_q",
            Field::MicPrecon => "mic_precon",
        })
    }

    pub fn location(self) -> Location {
        match self {
            Field::U
            | Field::UOld
            | Field::WeightU
            | Field::FlipDeltaU
            | Field::OpenU
            | Field::GatherU => Location::Face(0),
            Field::V
            | Field::VOld
            | Field::WeightV
            | Field::FlipDeltaV
            | Field::OpenV
            | Field::GatherV => Location::Face(1),
            Field::W
            | Field::WOld
            | Field::WeightW
            | Field::FlipDeltaW
            | Field::OpenW
            | Field::GatherW => Location::Face(2),
            _ => Location::Cell,
        }
    }

    /// Fields with a sign read best with a diverging colormap centred on 0.
    pub fn signed(self) -> bool {
        !matches!(
            self,
            Field::WeightU
                | Field::WeightV
                | Field::WeightW
                | Field::OpenU
                | Field::OpenV
                | Field::OpenW
                | Field::GatherU
                | Field::GatherV
                | Field::GatherW
                | Field::CellType
                | Field::ParticleCount
                | Field::Density
                | Field::ADiag
                | Field::MicPrecon
        ) && self.cell_types() != self
    }

    /// The cell types of the grid this field lives on (the hover text names them, and a
    /// field equal to its own cell types is drawn with the cell-type colours).
    pub fn cell_types(self) -> Field {
        match self {
            Field::Mg(m) => Field::Mg(MgField {
                vector: MgVector::CellType,
                ..m
            }),
            _ => Field::CellType,
        }
    }
}

impl std::str::FromStr for Field {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Field::ALL
            .iter()
            .copied()
            .find(|f| f.id() == s)
            .or_else(|| MgField::parse(s).map(Field::Mg))
            .ok_or_else(|| {
                let names: Vec<Cow<str>> = Field::ALL.iter().map(|f| f.id()).collect();
                format!(
                    "unknown field {s:?}; one of: {}, or {}",
                    names.join(", "),
                    MgField::NAMES
                )
            })
    }
}

/// One field read back: values over its location's grid of dimensions `dims` (i fastest).
#[derive(Clone, Debug)]
pub struct FieldData {
    pub field: Field,
    pub dims: [u32; 3],
    /// Simulation-grid cells per sample along each axis: 1, except on a coarse multigrid
    /// level (2^l along the axes the level coarsened), which covers the same domain.
    pub spacing: [u32; 3],
    pub values: Vec<f32>,
}

impl FieldData {
    pub fn get(&self, i: u32, j: u32, k: u32) -> f32 {
        self.values[(i + self.dims[0] * (j + self.dims[1] * k)) as usize]
    }
}

impl Simulation {
    /// Reads one field from the GPU.
    pub fn read_field(&self, field: Field) -> Result<FieldData, SimError> {
        if let Field::Mg(m) = field {
            return read_mg(&self.core, m);
        }
        let p = &self.fields.params;
        let n = p.n;
        let read_f32 = |b: &wgpu::Buffer| crate::gpu::read_buffer::<f32>(&self.ctx, b);
        let face_range = |comp: u32| {
            let off = match comp {
                0 => 0,
                1 => p.num_u,
                _ => p.num_u + p.num_v,
            } as usize;
            let len = [p.num_u, p.num_v, p.num_w][comp as usize] as usize;
            off..off + len
        };
        let (dims, values) = match field.location() {
            Location::Face(comp) => {
                let mut d = n;
                d[comp as usize] += 1;
                let r = face_range(comp);
                let values = match field {
                    Field::U | Field::V | Field::W => read_f32(&self.fields.vel)?[r].to_vec(),
                    Field::UOld | Field::VOld | Field::WOld => {
                        read_f32(&self.fields.vel_old)?[r].to_vec()
                    }
                    Field::WeightU | Field::WeightV | Field::WeightW => {
                        read_f32(self.core.view_field(&self.fields.weight, "P2G weights")?)?[r]
                            .to_vec()
                    }
                    Field::OpenU | Field::OpenV | Field::OpenW => {
                        if self.fields.has_cut_faces() {
                            read_f32(&self.fields.open)?[r].to_vec()
                        } else {
                            vec![1.0; r.len()]
                        }
                    }
                    Field::GatherU | Field::GatherV | Field::GatherW => {
                        if self.fields.has_gather_scale() {
                            read_f32(&self.fields.gather_scale)?[r].to_vec()
                        } else {
                            vec![1.0; r.len()]
                        }
                    }
                    _ => {
                        let new = read_f32(&self.fields.vel)?;
                        let old = read_f32(&self.fields.vel_old)?;
                        r.map(|i| new[i] - old[i]).collect()
                    }
                };
                (d, values)
            }
            Location::Cell => {
                let u32s = |b: &wgpu::Buffer| -> Result<Vec<f32>, SimError> {
                    Ok(crate::gpu::read_buffer::<u32>(&self.ctx, b)?
                        .into_iter()
                        .map(|v| v as f32)
                        .collect())
                };
                let a_entry = |k: usize| -> Result<Vec<f32>, SimError> {
                    Ok(crate::gpu::read_buffer::<[f32; 4]>(&self.ctx, &self.pcg.a)?
                        .into_iter()
                        .map(|r| r[k])
                        .collect())
                };
                let v = &self.pcg;
                let values = match field {
                    Field::CellType => u32s(&self.fields.cell_type)?,
                    Field::SolidVelX | Field::SolidVelY | Field::SolidVelZ => {
                        let k = match field {
                            Field::SolidVelX => 0,
                            Field::SolidVelY => 1,
                            _ => 2,
                        };
                        // In the solids' cells (a cell next to a face a body covers carries
                        // its velocity too, for the face: not shown).
                        if !self.fields.has_solid_cells() {
                            // No cell of this scene can be solid (no solid fields).
                            vec![0.0; self.fields.num_cells() as usize]
                        } else {
                            let solid =
                                crate::gpu::read_buffer::<u32>(&self.ctx, &self.fields.solid)?;
                            crate::gpu::read_buffer::<[f32; 4]>(&self.ctx, &self.fields.solid_vel)?
                                .into_iter()
                                .zip(solid)
                                .map(|(v, s)| if s != 0 { v[k] } else { 0.0 })
                                .collect()
                        }
                    }
                    Field::ParticleCount => u32s(&self.fields.count)?,
                    Field::Density => read_f32(&self.fields.density)?,
                    Field::LevelSet => read_f32(&self.fields.surface)?
                        .into_iter()
                        .map(|d| 0.5 - d)
                        .collect(),
                    Field::Curvature | Field::LaplacePressure => {
                        if self.fields.has_curvature() {
                            // The kernel stores sigma / rho; the view gives sigma in N/m.
                            let sigma = if field == Field::LaplacePressure {
                                p.surface_tension as f64 * crate::sim::DENSITY
                            } else {
                                1.0
                            };
                            read_f32(&self.fields.curvature)?
                                .into_iter()
                                .map(|k| (k as f64 * sigma) as f32)
                                .collect()
                        } else {
                            vec![0.0; self.fields.num_cells() as usize]
                        }
                    }
                    Field::Divergence => read_f32(self.core.view_field(
                        &self.fields.divergence,
                        "divergence before the projection",
                    )?)?,
                    Field::DivergenceAfter => {
                        read_f32(self.core.view_field(
                            &self.fields.div_after,
                            "divergence after the projection",
                        )?)?
                    }
                    Field::ADiag => a_entry(0)?,
                    Field::APlusX => a_entry(1)?,
                    Field::APlusY => a_entry(2)?,
                    Field::APlusZ => a_entry(3)?,
                    Field::Rhs => solver_vector(&self.core, &v.b, field)?,
                    Field::Pressure => {
                        // phi = p dt / rho  =>  p = phi rho / dt
                        let scale = (crate::sim::DENSITY / (p.dt.max(1e-12) as f64)) as f32;
                        read_f32(&v.p)?.into_iter().map(|x| x * scale).collect()
                    }
                    Field::Residual => solver_vector(&self.core, &v.r, field)?,
                    Field::Preconditioned => solver_vector(&self.core, &v.z, field)?,
                    Field::SearchDirection => solver_vector(&self.core, &v.d, field)?,
                    Field::ASearchDirection => solver_vector(&self.core, &v.q, field)?,
                    // Zero until a MIC(0) preconditioner is asked for.
                    Field::MicPrecon if !v.has_mic() => vec![0.0; self.fields.num_cells() as usize],
                    Field::MicPrecon => read_f32(&v.precon)?,
                    _ => unreachable!("face and multigrid fields are handled above"),
                };
                (n, values)
            }
        };
        Ok(FieldData {
            field,
            dims,
            spacing: [1; 3],
            values,
        })
    }

    /// Dimensions of the multigrid levels whose vectors can be viewed, finest first.
    pub fn mg_levels(&self) -> Vec<[u32; 3]> {
        mg_levels(&self.pressure, self.scene.pressure.preconditioner)
    }
}

/// A vector of one level of the `mg` preconditioner's V-cycle, as the last V-cycle of
/// the last solve left it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MgVector {
    /// The level's right-hand side: PCG's r on level 0, the restricted residual of the
    /// next finer level on the others.
    Rhs,
    /// The residual after pre-smoothing, which is restricted to the next coarser level.
    /// The coarsest level has none: it is solved in place.
    Residual,
    /// The level's solution after post-smoothing, its correction to the next finer level
    /// (PCG's z, the preconditioned residual, on level 0).
    Correction,
    /// The level's cell types (a coarse cell is AIR when any of its cells is, else FLUID
    /// when any is).
    CellType,
}

impl MgVector {
    pub const ALL: [MgVector; 4] = [
        MgVector::Rhs,
        MgVector::Residual,
        MgVector::Correction,
        MgVector::CellType,
    ];

    fn id(self) -> &'static str {
        match self {
            MgVector::Rhs => "rhs",
            MgVector::Residual => "residual",
            MgVector::Correction => "correction",
            MgVector::CellType => "cell_type",
        }
    }

    fn label(self) -> &'static str {
        match self {
            MgVector::Rhs => "right-hand side b",
            MgVector::Residual => "residual after pre-smoothing",
            MgVector::Correction => "correction x",
            MgVector::CellType => "cell types",
        }
    }
}

/// One vector of one multigrid level; level 0 is the simulation grid.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MgField {
    pub level: u8,
    pub vector: MgVector,
}

impl MgField {
    /// The command-line names, for error messages.
    pub const NAMES: &'static str =
        "mg_rhs_L, mg_residual_L, mg_correction_L, mg_cell_type_L (L: multigrid level, 0 finest)";

    /// The views of a grid with these levels (finest first): every vector of every level
    /// but the coarsest level's residual.
    pub fn list(levels: &[[u32; 3]]) -> Vec<MgField> {
        let last = levels.len().saturating_sub(1);
        (0..levels.len())
            .flat_map(|l| {
                MgVector::ALL
                    .into_iter()
                    .filter(move |&v| !(v == MgVector::Residual && l == last))
                    .map(move |vector| MgField {
                        level: l as u8,
                        vector,
                    })
            })
            .collect()
    }

    /// `mg_residual_1` etc.
    pub fn id(self) -> String {
        format!("mg_{}_{}", self.vector.id(), self.level)
    }

    pub fn label(self) -> String {
        format!("MG level {} {}", self.level, self.vector.label())
    }

    /// The label with the level's dimensions (for menus, where the levels are known).
    pub fn describe(self, levels: &[[u32; 3]]) -> String {
        match levels.get(self.level as usize) {
            Some([x, y, z]) => format!("{} ({x}x{y}x{z})", self.label()),
            None => self.label(),
        }
    }

    pub fn signed(self) -> bool {
        self.vector != MgVector::CellType
    }

    /// Parses an [`MgField::id`]; whether the level exists is checked when it is read.
    pub fn parse(s: &str) -> Option<MgField> {
        let rest = s.strip_prefix("mg_")?;
        MgVector::ALL.into_iter().find_map(|vector| {
            let level = rest.strip_prefix(vector.id())?.strip_prefix('_')?;
            Some(MgField {
                level: level.parse().ok()?,
                vector,
            })
        })
    }
}

/// The multigrid levels of a solver whose vectors hold the current solve, finest first:
/// the grid's levels when it solves with `mg`, none otherwise (the level buffers are then
/// stale or, on level 0, another preconditioner's scratch).
pub(crate) fn mg_levels(solver: &PressureSolver, kind: PreconditionerKind) -> Vec<[u32; 3]> {
    if kind == PreconditionerKind::Mg {
        solver.precond.multigrid.plan.dims.clone()
    } else {
        vec![]
    }
}

/// Reads one multigrid vector. The liquid and the smoke simulation own the same solver
/// and PCG vectors, so both read their levels here; `cell_type` is the grid's own types
/// (level 0's).
pub(crate) fn read_mg(core: &Core, f: MgField) -> Result<FieldData, SimError> {
    let (ctx, solver, pcg) = (&*core.ctx, &core.pressure, &core.pcg);
    let (cell_type, kind) = (&core.fields.cell_type, core.scene.pressure.preconditioner);
    let err = |why: String| Err(SimError::Unsupported(format!("field {}: {why}", f.id())));
    if kind != PreconditionerKind::Mg {
        return err(format!(
            "the multigrid levels hold a solve only with the mg preconditioner; this scene uses {kind}"
        ));
    }
    let mg = &solver.precond.multigrid;
    let dims = &mg.plan.dims;
    let l = f.level as usize;
    let Some(&n) = dims.get(l) else {
        let [x, y, z] = dims[0];
        return err(format!(
            "the {x}x{y}x{z} grid has {} multigrid levels (0 to {})",
            dims.len(),
            dims.len() - 1
        ));
    };
    if f.vector == MgVector::Residual && l + 1 == dims.len() {
        return err(format!(
            "level {l} is the coarsest, solved in place: it has no residual (its right-hand side is mg_rhs_{l})"
        ));
    }
    let level = l.checked_sub(1).map(|c| &mg.coarse[c]);
    // The level's own words (a small level's lie in the tail's packed buffers; level 0's
    // vectors are PCG's).
    let words: Vec<u32> = match (level, f.vector) {
        (None, MgVector::Rhs) => to_words(solver_vector(core, &pcg.r, Field::Mg(f))?),
        (None, MgVector::Residual) => to_words(solver_vector(core, &pcg.t, Field::Mg(f))?),
        (None, MgVector::Correction) => to_words(solver_vector(core, &pcg.z, Field::Mg(f))?),
        (None, MgVector::CellType) => crate::gpu::read_buffer(ctx, cell_type)?,
        (Some(c), MgVector::Rhs) => c.read(ctx, &c.b)?,
        (Some(c), MgVector::Residual) => c.read(ctx, &c.res)?,
        (Some(c), MgVector::Correction) => c.read(ctx, &c.x)?,
        (Some(c), MgVector::CellType) => c.read(ctx, &c.types)?,
    };
    let values = if f.vector == MgVector::CellType {
        words.into_iter().map(|t| t as f32).collect()
    } else {
        bytemuck::cast_slice(&words).to_vec()
    };
    // Each level halves the axes the plan coarsened (an axis stops at one cell).
    let mut spacing = [1; 3];
    for pair in dims[..=l].windows(2) {
        for a in 0..3 {
            if pair[1][a] < pair[0][a] {
                spacing[a] *= 2;
            }
        }
    }
    Ok(FieldData {
        field: Field::Mg(f),
        dims: n,
        spacing,
        values,
    })
}

impl Simulation {
    /// The grid fields named in `names` (of [`crate::output::vtk::LIQUID_FIELDS`]; the
    /// particles are written apart) for a field cache: cell types, pressure (Pa), the
    /// cell-centred velocity (the mean of each component's two faces), the MAC faces, the
    /// divergence after the projection, and the level set of the surface.
    pub fn field_frame(
        &self,
        names: &[String],
    ) -> Result<crate::sim::frames::FieldFrame, SimError> {
        use crate::sim::frames::{CellArray, FieldFrame};
        let n = self.fields.params.n;
        let has = |s: &str| names.iter().any(|x| x == s);
        let mut cells = vec![];
        let mut scalar = |name: &str, field: Field| -> Result<(), SimError> {
            if has(name) {
                cells.push(CellArray {
                    name: name.into(),
                    components: 1,
                    values: self.read_field(field)?.values,
                });
            }
            Ok(())
        };
        scalar("cell_type", Field::CellType)?;
        scalar("pressure", Field::Pressure)?;
        scalar("divergence", Field::DivergenceAfter)?;
        scalar("level_set", Field::LevelSet)?;
        let faces = if has("velocity") || has("faces") {
            Some([
                self.read_field(Field::U)?.values,
                self.read_field(Field::V)?.values,
                self.read_field(Field::W)?.values,
            ])
        } else {
            None
        };
        if let (true, Some(f)) = (has("velocity"), &faces) {
            let [nx, ny, nz] = n.map(|v| v as usize);
            let mut values = Vec::with_capacity(nx * ny * nz * 3);
            for k in 0..nz {
                for j in 0..ny {
                    for i in 0..nx {
                        let u = 0.5
                            * (f[0][i + (nx + 1) * (j + ny * k)]
                                + f[0][i + 1 + (nx + 1) * (j + ny * k)]);
                        let v = 0.5
                            * (f[1][i + nx * (j + (ny + 1) * k)]
                                + f[1][i + nx * (j + 1 + (ny + 1) * k)]);
                        let w =
                            0.5 * (f[2][i + nx * (j + ny * k)] + f[2][i + nx * (j + ny * (k + 1))]);
                        values.extend([u, v, w]);
                    }
                }
            }
            cells.push(CellArray {
                name: "velocity".into(),
                components: 3,
                values,
            });
        }
        // One read of the fractions, split into their three face grids.
        let open = if has("faces") && self.fields.has_cut_faces() {
            let o = crate::gpu::read_buffer::<f32>(&self.ctx, &self.fields.open)?;
            let (nu, nv) = (
                self.fields.params.num_u as usize,
                self.fields.params.num_v as usize,
            );
            Some([
                o[..nu].to_vec(),
                o[nu..nu + nv].to_vec(),
                o[nu + nv..].to_vec(),
            ])
        } else {
            None
        };
        Ok(FieldFrame {
            dims: n,
            h: self.fields.params.h as f64,
            cells,
            faces: faces.filter(|_| has("faces")),
            open,
        })
    }
}

fn to_words(v: Vec<f32>) -> Vec<u32> {
    bytemuck::cast_slice(&v).to_vec()
}

/// One of PCG's b, r, z, d, q and t as the last solve left it (`Core::solver_vector`).
fn solver_vector(core: &Core, v: &crate::gpu::Region, field: Field) -> Result<Vec<f32>, SimError> {
    match core.solver_vector(v) {
        Ok(at) => Ok(at.read(&core.ctx)?),
        Err(e) => Err(SimError::Unsupported(format!("field {}: {e}", field.id()))),
    }
}
