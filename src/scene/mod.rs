//! Scene files: RON, SI units (metres, seconds, y up), validated with clear errors.
//!
//! A scene describes the domain and its grid, where the liquid (or smoke) starts, the solid
//! obstacles, and the solver settings. `Scene::load` parses and validates; nothing is
//! allocated on a GPU before a scene has passed validation. The shipped scenes are also
//! compiled in (`crate::scene::shipped`), so their names load from any folder.

mod bodies;
pub mod catalog;
mod diffusion;
pub mod flow;
pub mod fractions;
pub mod mesh;
pub mod motion;
pub mod probes;
mod problems;
mod seed;
pub mod shipped;
mod validate;

pub use bodies::{
    obstacle_body, shape_body, BodyMotion, BodyShape, BodySpec, CouplingScheme, MAX_BODIES,
    MAX_BODY_DENSITY, MIN_BODY_DENSITY,
};
pub use diffusion::{DiffusionSettings, Wall, WallSpot, WallValues, MAX_DIFFUSION, MAX_WALL_SPOTS};
pub use flow::{Drain, Emitter, Side};
pub use problems::StandardProblem;
pub use seed::{InitialState, SplitMix64};

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use thiserror::Error;

/// Cell types shared by every stage (defined with the other GPU constants).
pub use crate::gpu::constants::{AIR, FLUID, SOLID};

#[derive(Debug, Error)]
pub enum SceneError {
    // The cause is in the message and deliberately not a `#[source]`: `{:#}` would print it twice.
    #[error("cannot read scene {path}: {cause}")]
    Io {
        path: PathBuf,
        cause: std::io::Error,
    },
    #[error(
        "cannot read scene {path}: no such file, and no scene shipped with eddy has that \
         name (shipped: {shipped}; `eddy scenes` lists them)"
    )]
    NotFound { path: PathBuf, shipped: String },
    #[error("{path}:{line}:{col}: {message}")]
    Parse {
        path: PathBuf,
        line: usize,
        col: usize,
        message: String,
    },
    #[error("{path}: {message}")]
    Invalid { path: PathBuf, message: String },
}

/// What the scene simulates.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SceneKind {
    /// 3D PIC/FLIP liquid with particles.
    #[default]
    Liquid,
    /// Eulerian smoke on an nx x ny x 1 grid.
    Smoke,
}

/// Pressure preconditioner, chosen at run time.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PreconditionerKind {
    None,
    Jacobi,
    /// Incomplete Poisson, M^-1 = K K^T with K = I - L D^-1.
    Ip,
    /// Modified incomplete Cholesky, level 0, exact lexicographic order (wavefronts on GPU).
    Mic0,
    /// MIC(0) inside 8x8x8 tiles (16x16 on a slice), couplings across tiles dropped.
    #[serde(rename = "mic0_tiled")]
    Mic0Tiled,
    /// One geometric multigrid V-cycle: the fewest iterations and dispatches per solve.
    #[default]
    Mg,
}

impl PreconditionerKind {
    pub const ALL: [PreconditionerKind; 6] = [
        Self::None,
        Self::Jacobi,
        Self::Ip,
        Self::Mic0,
        Self::Mic0Tiled,
        Self::Mg,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::Jacobi => "jacobi",
            Self::Ip => "ip",
            Self::Mic0 => "mic0",
            Self::Mic0Tiled => "mic0_tiled",
            Self::Mg => "mg",
        }
    }

    /// Whether it needs MIC(0)'s inverse diagonal (a vector of its own).
    pub fn is_mic(self) -> bool {
        matches!(self, Self::Mic0 | Self::Mic0Tiled)
    }
}

impl std::fmt::Display for PreconditionerKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for PreconditionerKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Self::ALL
            .iter()
            .copied()
            .find(|p| p.name() == s.to_ascii_lowercase())
            .ok_or_else(|| {
                let names: Vec<&str> = Self::ALL.iter().map(|p| p.name()).collect();
                format!(
                    "unknown preconditioner {s:?}; expected one of: {}",
                    names.join(", ")
                )
            })
    }
}

/// Particle/grid transfer of the liquid.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TransferKind {
    /// PIC/FLIP blend, `pic_ratio` PIC.
    #[default]
    Flip,
    /// Affine particle-in-cell (Jiang et al. 2015): each particle carries the gradient of
    /// the grid velocity, which keeps rotation and shear that PIC averages away without
    /// FLIP's noise. `pic_ratio` does not apply.
    Apic,
}

impl TransferKind {
    pub const ALL: [TransferKind; 2] = [Self::Flip, Self::Apic];

    pub fn name(self) -> &'static str {
        match self {
            Self::Flip => "flip",
            Self::Apic => "apic",
        }
    }
}

impl std::fmt::Display for TransferKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A shape in metres. `velocity` is the initial velocity of fluid shapes, and the velocity
/// of a solid's surface for solid shapes (u.n = u_solid.n on its faces).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub enum Shape {
    Box {
        min: (f64, f64, f64),
        max: (f64, f64, f64),
        #[serde(default)]
        velocity: (f64, f64, f64),
    },
    Sphere {
        center: (f64, f64, f64),
        radius: f64,
        #[serde(default)]
        velocity: (f64, f64, f64),
    },
    /// A solid cylinder: `length` along `axis` (any non-zero direction), centred on
    /// `center`. A short one is a disc (a faucet's mouth, a drain's plug hole).
    Cylinder {
        center: (f64, f64, f64),
        axis: (f64, f64, f64),
        radius: f64,
        length: f64,
        #[serde(default)]
        velocity: (f64, f64, f64),
    },
    /// A triangle mesh read from an OBJ or STL file (`solids` only; see
    /// src/scene/mesh/): `path` relative to the scene file's folder, scaled by `scale` about
    /// the file's origin, turned by `rotation_deg` about the world x, then y, then z axes,
    /// then moved by `translation` (m). Inside is where its generalised winding number
    /// exceeds 1/2, so a mesh with holes or gaps still has an inside.
    Mesh {
        path: String,
        #[serde(default = "unit_scale")]
        scale: f64,
        #[serde(default)]
        translation: (f64, f64, f64),
        #[serde(default)]
        rotation_deg: (f64, f64, f64),
        #[serde(default)]
        velocity: (f64, f64, f64),
        /// A path over time (liquid scenes): the keys place the mesh instead of
        /// `translation` and `rotation_deg`, and its cells' solid velocity follows the
        /// motion (src/scene/motion.rs).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        keyframes: Vec<motion::Keyframe>,
        /// The mesh as read and placed: filled in when the scene loads (`Scene::load`,
        /// `Scene::load_meshes`), not part of the scene's text or its equality.
        #[serde(skip)]
        loaded: mesh::MeshSlot,
    },
}

fn unit_scale() -> f64 {
    1.0
}

impl Shape {
    pub fn contains(&self, p: [f64; 3]) -> bool {
        match self {
            Shape::Box { min, max, .. } => {
                p[0] >= min.0
                    && p[0] <= max.0
                    && p[1] >= min.1
                    && p[1] <= max.1
                    && p[2] >= min.2
                    && p[2] <= max.2
            }
            Shape::Sphere { center, radius, .. } => {
                let d = [p[0] - center.0, p[1] - center.1, p[2] - center.2];
                d[0] * d[0] + d[1] * d[1] + d[2] * d[2] <= radius * radius
            }
            Shape::Cylinder {
                center,
                axis,
                radius,
                length,
                ..
            } => {
                let (along, r2) = cylinder_coords(*center, *axis, p);
                along.abs() <= 0.5 * length && r2 <= radius * radius
            }
            // Negative signed distance (false while not loaded).
            Shape::Mesh { loaded, .. } => loaded.get().is_some_and(|m| m.contains(p)),
        }
    }

    /// The path of a keyframed `Mesh` (empty for a mesh that stays, and the other shapes).
    pub fn keyframes(&self) -> &[motion::Keyframe] {
        match self {
            Shape::Mesh { keyframes, .. } => keyframes,
            _ => &[],
        }
    }

    /// The loaded mesh of a `Mesh` shape (None for the other shapes, or before loading).
    pub fn solid_mesh(&self) -> Option<&std::sync::Arc<mesh::SolidMesh>> {
        match self {
            Shape::Mesh { loaded, .. } => loaded.get(),
            _ => None,
        }
    }

    /// Reads a `Mesh` shape's file (relative paths against `base`) and places it; the
    /// other shapes have nothing to load. The message names the file.
    pub fn load_mesh(&mut self, base: &mesh::MeshBase) -> Result<(), String> {
        if let Shape::Mesh {
            path,
            scale,
            translation,
            rotation_deg,
            loaded,
            keyframes,
            ..
        } = self
        {
            // A keyframed mesh is loaded where its path starts.
            let (rotation_deg, translation) = if keyframes.is_empty() {
                (*rotation_deg, *translation)
            } else {
                motion::validate_keyframes(keyframes)?;
                motion::pose_at(keyframes, 0.0)
            };
            let placement = mesh::Placement {
                scale: *scale,
                rotation_deg,
                translation,
            };
            validate::check_placement(path, &placement)?;
            let m = mesh::load_placed(path, &placement, base).map_err(|e| e.to_string())?;
            *loaded = mesh::MeshSlot::new(m);
        }
        Ok(())
    }

    /// Containment in x and y only: smoke scenes are slices, and their shapes are prisms
    /// (boxes) or discs (spheres) across the slice.
    pub fn contains_xy(&self, p: [f64; 2]) -> bool {
        match self {
            Shape::Box { min, max, .. } => {
                p[0] >= min.0 && p[0] <= max.0 && p[1] >= min.1 && p[1] <= max.1
            }
            Shape::Sphere { center, radius, .. } => {
                let d = [p[0] - center.0, p[1] - center.1];
                d[0] * d[0] + d[1] * d[1] <= radius * radius
            }
            // The cylinder's cross-section in the slice's mid-plane (z = its centre's).
            Shape::Cylinder { center, .. } => self.contains([p[0], p[1], center.2]),
            // The mesh's cross-section half way up its bounds in z. (A slice's SOLID cells
            // cut it at the slice's own mid-depth: `Scene::solid_cells`.)
            Shape::Mesh { loaded, .. } => loaded.get().is_some_and(|m| {
                let (lo, hi) = m.bounds;
                m.contains([p[0], p[1], 0.5 * (lo[2] + hi[2])])
            }),
        }
    }

    pub fn velocity(&self) -> [f64; 3] {
        let v = match self {
            Shape::Box { velocity, .. }
            | Shape::Sphere { velocity, .. }
            | Shape::Cylinder { velocity, .. }
            | Shape::Mesh { velocity, .. } => velocity,
        };
        [v.0, v.1, v.2]
    }

    /// Axis-aligned bounds (min, max).
    pub fn bounds(&self) -> ([f64; 3], [f64; 3]) {
        match self {
            Shape::Box { min, max, .. } => ([min.0, min.1, min.2], [max.0, max.1, max.2]),
            Shape::Sphere { center, radius, .. } => (
                [center.0 - radius, center.1 - radius, center.2 - radius],
                [center.0 + radius, center.1 + radius, center.2 + radius],
            ),
            Shape::Cylinder {
                center,
                axis,
                radius,
                length,
                ..
            } => {
                // Per axis: half the length's projection plus the end discs' reach.
                let a = unit(*axis);
                let c = [center.0, center.1, center.2];
                let mut lo = [0.0; 3];
                let mut hi = [0.0; 3];
                for i in 0..3 {
                    let e =
                        0.5 * length * a[i].abs() + radius * (1.0 - a[i] * a[i]).max(0.0).sqrt();
                    lo[i] = c[i] - e;
                    hi[i] = c[i] + e;
                }
                (lo, hi)
            }
            // The placed mesh's; a point at `translation` before it is loaded.
            Shape::Mesh {
                loaded,
                translation: t,
                ..
            } => loaded
                .get()
                .map_or(([t.0, t.1, t.2], [t.0, t.1, t.2]), |m| m.bounds),
        }
    }

    /// Volume, m^3.
    pub fn volume(&self) -> f64 {
        match self {
            Shape::Box { min, max, .. } => (max.0 - min.0) * (max.1 - min.1) * (max.2 - min.2),
            Shape::Sphere { radius, .. } => 4.0 / 3.0 * std::f64::consts::PI * radius.powi(3),
            Shape::Cylinder { radius, length, .. } => {
                std::f64::consts::PI * radius * radius * length
            }
            // Enclosed volume of the placed mesh (exact for a closed one; 0 before loading).
            Shape::Mesh { loaded, .. } => {
                loaded.get().map_or(0.0, |m| m.mesh.signed_volume().abs())
            }
        }
    }
}

/// Point `p` against a cylinder's axis through `center` along `axis`: its distance along
/// the axis from the centre (signed) and its squared distance from the axis.
fn cylinder_coords(center: (f64, f64, f64), axis: (f64, f64, f64), p: [f64; 3]) -> (f64, f64) {
    let a = unit(axis);
    let d = [p[0] - center.0, p[1] - center.1, p[2] - center.2];
    let along = d[0] * a[0] + d[1] * a[1] + d[2] * a[2];
    (
        along,
        d[0] * d[0] + d[1] * d[1] + d[2] * d[2] - along * along,
    )
}

/// `v` scaled to unit length (`v` itself when it is zero).
pub fn unit(v: (f64, f64, f64)) -> [f64; 3] {
    let n = (v.0 * v.0 + v.1 * v.1 + v.2 * v.2).sqrt();
    if n > 0.0 {
        [v.0 / n, v.1 / n, v.2 / n]
    } else {
        [v.0, v.1, v.2]
    }
}

/// Pressure-solver settings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PressureSettings {
    pub preconditioner: PreconditionerKind,
    /// Relative residual max|r| / max|b| (max norm) at which PCG stops.
    pub tolerance: f64,
    pub max_iterations: u32,
    /// Iterations between convergence checks on the host (the GPU never waits for them).
    /// The host queues the next chunk before it reads a chunk's flag, so up to two chunks
    /// run after convergence as dispatches that return at once: 2 suits `mg`'s 3-8
    /// iterations (1.3-1.9x faster than 8 on the software adapter, benchmarks/history.md).
    pub check_every: u32,
    /// Start from the previous step's pressure.
    pub warm_start: bool,
    /// Mixed-precision iterative refinement: after each solve, correct the solution until
    /// max|b - A p| / max|b|, computed in f64, is at most this (0: off).
    /// src/sim/core/pressure/refine.rs.
    #[serde(skip_serializing_if = "is_zero")]
    pub refine: f64,
    /// Solves queued ahead (on by default: on an H100 the shipped scenes ran at 1.00-1.10x
    /// the substeps/s of reading each solve, medians over four interleaved runs, with 1.0
    /// host read per substep instead of 1.3-2.2 and no solve stopped; benchmarks/history.md).
    /// `false` reads each solve's state back before its projection. It applies to `mg`
    /// solves (`sim::runner::queues_ahead`): other preconditioners' iteration counts
    /// vary too much from one solve to the next for a queue, and their solves are read
    /// back as they run (`eddy check` says so). Pipelined substeps: where a
    /// frame's later substeps take their length on the GPU
    /// (no bodies, inflow/outflow, emitters, keyframed meshes, viscosity, diffusion or
    /// `refine`), and once a solve has run, the host does not read a solve back before its
    /// projection. It queues the last solve's iterations plus `margin` (those past
    /// convergence return at once on the GPU), records the rest of the substep and the next
    /// one while the GPU runs, and reads the frame's solves at its end. A solve still
    /// running when its queue ends stops there: eddy warns, stats.csv counts it in
    /// `unconverged_solves`, and the next solves queue more. Scenes on the host's clock
    /// (bodies, inflow/outflow, keyframed meshes) queue their solves the same way and read
    /// a solve's state with its substep's counters at its end.
    pub pipelined: bool,
    /// Iterations a pipelined solve queues beyond the last solve's count.
    pub margin: u32,
}

fn is_zero(v: &f64) -> bool {
    *v == 0.0
}

impl Default for PressureSettings {
    fn default() -> Self {
        Self {
            preconditioner: PreconditionerKind::Mg,
            tolerance: 1e-5,
            max_iterations: 1000,
            check_every: 2,
            warm_start: false,
            refine: 0.0,
            pipelined: true,
            margin: 2,
        }
    }
}

/// A complete scene.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Scene {
    pub name: String,
    pub kind: SceneKind,
    /// Domain size in metres; the domain spans [0, size] on each axis.
    pub domain: (f64, f64, f64),
    /// Cells along x, y, z. Cells must be cubes: domain / resolution equal on every axis.
    pub resolution: (u32, u32, u32),
    /// m/s^2.
    pub gravity: (f64, f64, f64),
    pub fluid: Vec<Shape>,
    pub solids: Vec<Shape>,
    /// Particles seeded per fluid cell (a cube number: 1, 8 or 27).
    pub particles_per_cell: u32,
    /// Seed of the jitter of particle positions.
    pub seed: u64,
    /// Fraction of PIC in the PIC/FLIP blend (0.05 = 5% PIC, 95% FLIP).
    pub pic_ratio: f64,
    /// Particle/grid transfer: `flip` (the PIC/FLIP blend) or `apic`.
    pub transfer: TransferKind,
    /// Largest distance in cells a particle may move in one substep.
    pub cfl: f64,
    /// Seconds per frame.
    pub frame_dt: f64,
    /// Upper bound on substeps per frame.
    pub max_substeps: u32,
    /// Layers of velocity extrapolation into AIR.
    pub extrapolation_layers: u32,
    /// Liquid scenes: move particles out of cells denser than the rest density each
    /// substep (a second Poisson solve, see src/sim/liquid/volume_correction.rs), so the liquid
    /// keeps its volume.
    pub volume_correction: bool,
    /// Liquid scenes: the minimum distance between particle centres, as a fraction of the
    /// rest spacing h / particles_per_cell^(1/3); closer particles inside the liquid push
    /// each other apart each substep (src/sim/liquid/spacing.rs). Default 0.5; 0 turns it off.
    pub particle_spacing: f64,
    /// Kinematic viscosity, m^2/s, of the liquid or the smoke, solved implicitly before
    /// the forces (src/sim/core/diffusion.rs). 0 (inviscid) skips the stage.
    pub viscosity: f64,
    /// The implicit diffusion solves: viscosity, and the smoke's heat and dye.
    pub diffusion: DiffusionSettings,
    /// Liquid scenes: surface tension sigma, N/m (water 0.072). The pressure jumps by
    /// sigma kappa across the free surface, kappa the curvature of the level set the solve
    /// sees (src/sim/core/tension.rs); the capillary substep limit comes with it. 0 (the
    /// default) leaves the surface at p = 0.
    #[serde(skip_serializing_if = "is_zero")]
    pub surface_tension: f64,
    /// Rigid bodies, moved by the fluid, gravity and contacts (see src/sim/bodies/).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub bodies: Vec<BodySpec>,
    /// How the bodies and the fluid push each other: `strong` (the default) or `weak`.
    #[serde(skip_serializing_if = "CouplingScheme::is_strong")]
    pub body_coupling: CouplingScheme,
    pub pressure: PressureSettings,
    /// Smoke settings (smoke scenes only).
    pub smoke: SmokeSettings,
    /// Liquid scenes: inflows (src/scene/flow.rs).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub emitters: Vec<Emitter>,
    /// Liquid scenes: shapes that remove the particles inside them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub drains: Vec<Drain>,
    /// Liquid scenes: domain sides the liquid leaves through (`[x_max]`): particles in the
    /// side's outermost cell layer are removed, so that layer is AIR (p = 0).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub open_sides: Vec<Side>,
    /// Liquid scenes: most particles at once (the buffers' size). Default: the seeded
    /// particles plus what the emitters add, at most what fills the domain
    /// (`Scene::particle_capacity`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_particles: Option<u64>,
    /// Static solids and keyframed meshes cut the faces of the grid (src/scene/fractions.rs):
    /// the pressure solve sees their true surface. `false` makes every solid a staircase of
    /// whole cells, as in the simplest solvers (to compare the two).
    #[serde(skip_serializing_if = "is_true")]
    pub cut_faces: bool,
    /// Rigid bodies cut faces too (strong coupling only; src/sim/bodies/coupling.wgsl
    /// `cover_faces`): each face's control volume is covered in part, so the fluid flows
    /// round a body's true surface. Default (None): on; `Some(false)` stamps whole cells
    /// (to compare the two).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub body_cut_faces: Option<bool>,
    /// Liquid scenes with strongly coupled bodies and `mg`: `Some(true)` deflates the bodies'
    /// modes in the solve (src/sim/bodies/strong.wgsl, `deflate_*`), which `mg` alone leaves
    /// as outlying eigenvalues. Default (None): off. It costs every solve a set-up and every
    /// iteration two dispatches, and saves iterations: 16 bodies cold at 64^3, 14 -> 10 on
    /// the software adapter; the shipped `floating_bodies` and `buoyancy` 13% and 24%, which
    /// there made their pressure stage 1.02x and 0.81x as long. Not yet measured on a GPU,
    /// where its first version (a weaker space) cost 9-14% (benchmarks/history.md).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub body_deflation: Option<bool>,
    /// Instruments sampled after every substep into probes.csv (src/scene/probes.rs):
    /// `Point`, `Gauge`, `Sensor` and `Force`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub probes: Vec<probes::ProbeSpec>,
    /// `substep` (the default: a row per substep) or `frame` (a row per frame).
    #[serde(skip_serializing_if = "probes::ProbeEvery::is_substep")]
    pub probe_every: probes::ProbeEvery,
}

impl Scene {
    /// Whether a grid cell of this scene can be solid: every smoke scene (obstacles are
    /// drawn while it runs), a liquid with solids or rigid bodies. A liquid without either
    /// has only the domain's walls, which lie outside the grid, and its grid keeps no solid
    /// fields (`GridFields::new`).
    pub fn has_solid_cells(&self) -> bool {
        self.kind == SceneKind::Smoke || !self.solids.is_empty() || !self.bodies.is_empty()
    }

    /// Whether the scene's rigid bodies cut faces (src/sim/bodies/coupling.wgsl,
    /// `cover_faces`): with `body_cut_faces` (on by default) and the strong coupling. The
    /// weak coupling's bodies stay whole cells.
    pub fn bodies_cut_faces(&self) -> bool {
        let wanted = self.body_cut_faces.unwrap_or(true);
        !self.bodies.is_empty() && wanted && self.body_coupling.is_strong()
    }
}

fn is_true(b: &bool) -> bool {
    *b
}

impl Default for Scene {
    fn default() -> Self {
        Self {
            name: "untitled".into(),
            kind: SceneKind::Liquid,
            domain: (1.0, 1.0, 1.0),
            resolution: (32, 32, 32),
            gravity: (0.0, -9.81, 0.0),
            fluid: Vec::new(),
            solids: Vec::new(),
            particles_per_cell: 8,
            seed: 1,
            pic_ratio: 0.05,
            transfer: TransferKind::Flip,
            cfl: 1.0,
            frame_dt: 1.0 / 60.0,
            max_substeps: 32,
            extrapolation_layers: 3,
            volume_correction: true,
            particle_spacing: 0.5,
            viscosity: 0.0,
            diffusion: DiffusionSettings::default(),
            surface_tension: 0.0,
            bodies: Vec::new(),
            body_coupling: CouplingScheme::Strong,
            pressure: PressureSettings::default(),
            smoke: SmokeSettings::default(),
            emitters: Vec::new(),
            drains: Vec::new(),
            open_sides: Vec::new(),
            max_particles: None,
            cut_faces: true,
            body_cut_faces: None,
            body_deflation: None,
            probes: Vec::new(),
            probe_every: probes::ProbeEvery::Substep,
        }
    }
}

/// Hard limit on grid cells independent of the adapter: indices are u32 in the shaders.
pub const MAX_CELLS: u64 = 1 << 28;
/// Most cells along one axis: a cell then spans at least 128 f32 ulps of the largest
/// coordinate, so positions still tell neighbouring cells apart.
pub const MAX_AXIS_CELLS: u32 = 1 << 16;
/// Range of domain edges and cell sizes, m. The GPU works in f32: inside this range h^2,
/// h^3 and 1/h^2 stay normal f32 numbers with room to spare.
pub const MIN_LENGTH: f64 = 1e-6;
pub const MAX_LENGTH: f64 = 1e6;
/// Bound on shape coordinates and radii, m (f32 holds them, and their squares).
pub const MAX_COORDINATE: f64 = 1e9;
/// Largest speed (m/s) and acceleration (m/s^2) a scene may ask for: far beyond any liquid
/// or smoke flow, and far from f32 overflow when squared (kinetic energy, |u|^2).
pub const MAX_SPEED: f64 = 1e6;
/// Largest surface tension a scene may set, N/m (liquid metals reach about 1.5).
pub const MAX_SURFACE_TENSION: f64 = 10.0;
pub const MAX_ACCELERATION: f64 = 1e6;
/// Bound on the smoke mode's coefficients and source values (dye, temperature, buoyancy,
/// dissipation), for the same f32 headroom.
pub const MAX_SMOKE_VALUE: f64 = 1e6;
/// Bound on substeps per frame: the work of one frame stays bounded whatever the CFL.
pub const MAX_SUBSTEPS: u32 = 1000;
/// Smallest CFL number: below it a particle needs more than 100 substeps to cross a cell.
pub const MIN_CFL: f64 = 0.01;
/// Range of the frame length, s.
pub const MIN_FRAME_DT: f64 = 1e-6;
pub const MAX_FRAME_DT: f64 = 10.0;
/// Smallest pressure tolerance: f32 vectors cannot resolve a relative residual far below
/// their epsilon, so a smaller one would only ever stop at max_iterations.
pub const MIN_TOLERANCE: f64 = 1e-10;
/// Most smoke sources; the rest of the GPU's emitter slots are left to the viewer's splats.
pub const MAX_SMOKE_SOURCES: usize = 64;
/// Most particles a liquid scene may seed: u32 indices on the GPU with headroom, and 32
/// bytes each on the host while seeding.
pub const MAX_PARTICLES: u64 = 1 << 28;
/// Longest scene name, in characters.
pub const MAX_NAME_CHARS: usize = 256;
/// Largest scene file, bytes.
pub const MAX_SCENE_BYTES: usize = 16 << 20;

impl Scene {
    /// Reads, parses and validates a scene file.
    pub fn load(path: impl AsRef<Path>) -> Result<Scene, SceneError> {
        let path = path.as_ref();
        let invalid = |message: String| SceneError::Invalid {
            path: path.to_path_buf(),
            message,
        };
        // A shipped scene's name works from any folder; an existing file always wins.
        if !path.exists() {
            if let Some(shipped) = crate::scene::shipped::for_missing_path(path) {
                return Self::parse_with(shipped.source, path, &mesh::MeshBase::Shipped);
            }
        }
        let io = |cause: std::io::Error| match cause.kind() {
            std::io::ErrorKind::NotFound => SceneError::NotFound {
                path: path.to_path_buf(),
                shipped: crate::scene::shipped::names(),
            },
            _ => SceneError::Io {
                path: path.to_path_buf(),
                cause,
            },
        };
        // A FIFO would block forever and a device (/dev/zero) never end: only regular files
        // are scenes, and no more than a scene's worth of bytes is read.
        let meta = std::fs::metadata(path).map_err(io)?;
        if !meta.is_file() {
            let what = if meta.is_dir() {
                "a folder"
            } else {
                "not a regular file"
            };
            return Err(invalid(format!("{what}, not a scene file (RON text)")));
        }
        let mut bytes = Vec::new();
        {
            use std::io::Read;
            // Opened without blocking and checked again on the open file: a FIFO swapped in
            // after the check above is still refused.
            let (file, _) = crate::files::open_regular(path).map_err(io)?;
            file.take(MAX_SCENE_BYTES as u64 + 1)
                .read_to_end(&mut bytes)
                .map_err(io)?;
        }
        // A scene is a small text file; anything larger is a wrong path, not a scene.
        if bytes.len() > MAX_SCENE_BYTES {
            return Err(invalid(format!(
                "more than {MAX_SCENE_BYTES} bytes is not a scene file (scenes are RON text of at \
                 most {MAX_SCENE_BYTES} bytes)"
            )));
        }
        let text = String::from_utf8(bytes).map_err(|e| {
            invalid(format!(
                "not UTF-8 text (invalid byte at offset {}): scene files are RON text",
                e.utf8_error().valid_up_to()
            ))
        })?;
        Self::parse(&text, path)
    }

    /// Parses and validates scene text; `path` names it in messages, and its folder is where
    /// relative mesh paths are found.
    pub fn parse(text: &str, path: &Path) -> Result<Scene, SceneError> {
        let folder = path.parent().unwrap_or(Path::new("")).to_path_buf();
        Self::parse_with(text, path, &mesh::MeshBase::Folder(folder))
    }

    /// [`Self::parse`] with the meshes found through `base`.
    pub fn parse_with(text: &str, path: &Path, base: &mesh::MeshBase) -> Result<Scene, SceneError> {
        // Editors on Windows save a byte-order mark; it is not part of the RON text.
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        // Optional settings take their value as it is (`z: 0.25`) or as `Some(0.25)`.
        let options = ron::Options::default()
            .with_default_extension(ron::extensions::Extensions::IMPLICIT_SOME);
        let scene: Scene = options.from_str(text).map_err(|e| {
            let line = e.span.start.line;
            // RON's message names what it expected, not always the field: quoting the line
            // does.
            let message = match source_excerpt(text, line, e.span.start.col) {
                Some(l) => format!("{} (in `{l}`)", e.code),
                None => e.code.to_string(),
            };
            SceneError::Parse {
                path: path.to_path_buf(),
                line,
                col: e.span.start.col,
                message,
            }
        })?;
        let mut scene = scene;
        let invalid = |message| SceneError::Invalid {
            path: path.to_path_buf(),
            message,
        };
        scene.load_meshes(base).map_err(invalid)?;
        scene.validate().map_err(invalid)?;
        scene.obstacle_to_body();
        Ok(scene)
    }

    /// A scene from JSON text (the scene's fields as [`Self::to_json`] writes them: what the
    /// Python module's dicts become), checked as a RON scene is; `name` names it in
    /// messages, and relative mesh paths are found against the working folder (then among
    /// the meshes shipped with eddy).
    pub fn parse_json(text: &str, name: &Path) -> Result<Scene, SceneError> {
        let mut scene: Scene = serde_json::from_str(text).map_err(|e| SceneError::Parse {
            path: name.to_path_buf(),
            line: e.line(),
            col: e.column(),
            message: e.to_string(),
        })?;
        let invalid = |message| SceneError::Invalid {
            path: name.to_path_buf(),
            message,
        };
        scene
            .load_meshes(&mesh::MeshBase::Folder(PathBuf::from(".")))
            .map_err(invalid)?;
        scene.validate().map_err(invalid)?;
        scene.obstacle_to_body();
        Ok(scene)
    }

    /// The scene as JSON text, every field written out ([`Self::parse_json`] reads it back).
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a scene serialises to JSON")
    }

    /// Reads and places every mesh of `solids` (relative paths against `base`): what
    /// [`Self::load`] does before validating, and what a scene built in code with mesh
    /// solids calls before it is validated or run. Each message names `solids[i]` and the
    /// file.
    pub fn load_meshes(&mut self, base: &mesh::MeshBase) -> Result<(), String> {
        for (i, s) in self.solids.iter_mut().enumerate() {
            s.load_mesh(base).map_err(|m| format!("solids[{i}]: {m}"))?;
        }
        Ok(())
    }

    /// The folder (made absolute) the scene's mesh solids were read against, when one was:
    /// what a checkpoint keeps so that resuming it finds the same files.
    pub fn mesh_folder(&self) -> Option<&Path> {
        self.solids
            .iter()
            .filter_map(|s| s.solid_mesh())
            .find_map(|m| match &m.base {
                mesh::MeshBase::Folder(dir) => Some(dir.as_path()),
                mesh::MeshBase::Shipped => None,
            })
    }

    /// Turns a smoke scene's `smoke.obstacle` into the kinematic body it stands for, the
    /// last of `bodies` (see [`obstacle_body`]): moving solids have one code path. Loading
    /// does this after validation, so errors still name `smoke.obstacle`; the smoke
    /// simulation does it for scenes built in code.
    pub fn obstacle_to_body(&mut self) {
        if self.kind != SceneKind::Smoke {
            return;
        }
        if let Some(o) = self.smoke.obstacle.take() {
            self.bodies.push(obstacle_body(&o, self.domain.2));
        }
    }

    /// The scene as the simulation runs it: a scene built in code may still carry
    /// `smoke.obstacle`, which becomes its kinematic body ([`Self::obstacle_to_body`]).
    /// Borrowed when there is nothing to convert.
    pub fn as_run(&self) -> std::borrow::Cow<'_, Scene> {
        if self.kind == SceneKind::Smoke && self.smoke.obstacle.is_some() {
            let mut s = self.clone();
            s.obstacle_to_body();
            std::borrow::Cow::Owned(s)
        } else {
            std::borrow::Cow::Borrowed(self)
        }
    }

    pub fn to_ron(&self) -> String {
        ron::ser::to_string_pretty(self, ron::ser::PrettyConfig::default())
            .unwrap_or_else(|e| format!("// cannot serialise scene: {e}"))
    }

    pub fn dims(&self) -> [u32; 3] {
        [self.resolution.0, self.resolution.1, self.resolution.2]
    }

    /// Cells in the grid, saturating at `u64::MAX` (a product of three u32 can overflow u64,
    /// and a wrapped count would pass every size check).
    pub fn cell_count(&self) -> u64 {
        (self.resolution.0 as u64)
            .checked_mul(self.resolution.1 as u64)
            .and_then(|v| v.checked_mul(self.resolution.2 as u64))
            .unwrap_or(u64::MAX)
    }

    /// Cell size in metres.
    pub fn h(&self) -> f64 {
        self.domain.0 / self.resolution.0 as f64
    }

    pub fn domain_size(&self) -> [f64; 3] {
        [self.domain.0, self.domain.1, self.domain.2]
    }

    /// The same scene on a grid with `n` cells along its longest axis (other axes scaled to
    /// keep cubic cells). Used by benchmarks and tests to run standard problems at any size.
    pub fn with_resolution(&self, n: u32) -> Scene {
        let d = self.domain_size();
        let longest = d.iter().cloned().fold(0.0, f64::max);
        let h = longest / n as f64;
        let cells = |l: f64| ((l / h).round() as u32).max(1);
        let mut s = self.clone();
        s.resolution = (
            cells(d[0]),
            cells(d[1]),
            if self.kind == SceneKind::Smoke {
                1
            } else {
                cells(d[2])
            },
        );
        s.domain = (
            s.resolution.0 as f64 * h,
            s.resolution.1 as f64 * h,
            if self.kind == SceneKind::Smoke {
                d[2]
            } else {
                s.resolution.2 as f64 * h
            },
        );
        s
    }
}

/// Advection scheme of the smoke mode.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum AdvectionScheme {
    /// Semi-Lagrangian with (bi)linear interpolation: stable, diffusive.
    #[serde(rename = "semi_lagrangian")]
    SemiLagrangian,
    /// MacCormack: a forward and a backward semi-Lagrangian step whose error estimate
    /// corrects the first, clamped to the values the first one interpolated (Selle et al.
    /// 2008). Sharper, and never makes new extrema.
    #[default]
    #[serde(rename = "maccormack")]
    MacCormack,
}

impl AdvectionScheme {
    pub const ALL: [AdvectionScheme; 2] = [Self::SemiLagrangian, Self::MacCormack];

    pub fn name(self) -> &'static str {
        match self {
            Self::SemiLagrangian => "semi_lagrangian",
            Self::MacCormack => "maccormack",
        }
    }
}

/// A region that keeps injecting smoke: inside `shape`, dye and temperature are raised to
/// at least the given values every substep, and (when non-zero) the flow is set to
/// `velocity` (a jet). The shape's own `velocity` field is ignored.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SmokeSource {
    pub shape: Shape,
    /// Dye density per channel (red, green, blue), dimensionless.
    #[serde(default)]
    pub dye: (f64, f64, f64),
    /// Temperature above ambient, dimensionless (see `buoyancy`).
    #[serde(default)]
    pub temperature: f64,
    /// Velocity imposed inside the source, m/s; (0, 0, 0) leaves the flow alone.
    #[serde(default)]
    pub velocity: (f64, f64, f64),
}

/// Smoke settings. Buoyancy follows the Boussinesq form: the force per unit mass is
/// `up * (buoyancy * (T - ambient) - dye_weight * dye)`, with `up` opposite to gravity.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SmokeSettings {
    pub advection: AdvectionScheme,
    /// Vorticity confinement strength epsilon (dimensionless; the force is
    /// epsilon * h * (N x omega)). 0 turns it off.
    pub vorticity: f64,
    /// m/s^2 per unit temperature.
    pub buoyancy: f64,
    /// m/s^2 per unit dye density (dye is heavy: it sinks).
    pub dye_weight: f64,
    pub ambient_temperature: f64,
    /// Exponential decay rates, 1/s.
    pub velocity_dissipation: f64,
    pub dye_dissipation: f64,
    pub temperature_dissipation: f64,
    pub sources: Vec<SmokeSource>,
    /// The older way to write a moving solid, still read: a box or a sphere moving with its
    /// `velocity`. Loading turns it into a kinematic body ([`Scene::obstacle_to_body`]),
    /// appended to `bodies`; new scenes write `bodies: [(..., motion: kinematic)]`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub obstacle: Option<Shape>,
    /// Tracer particles advected by the flow (drawn with trails in the viewer).
    pub tracers: u32,
    /// Heat diffusivity kappa, m^2/s, solved implicitly; 0 skips it.
    pub temperature_diffusion: f64,
    /// Dye diffusivity, m^2/s, solved implicitly; 0 skips it.
    pub dye_diffusion: f64,
    /// Walls (or spots on them) held at fixed temperatures while the temperature diffuses:
    /// hot and cold walls that drive convection. Other walls are insulated.
    pub wall_temperature: WallValues,
    /// Walls held at a fixed dye density (the same in r, g and b) while the dye diffuses.
    pub wall_dye: WallValues,
    /// Speed of the top wall sliding along +x, m/s (a lid-driven cavity). It drags the air
    /// through the no-slip wall of the viscosity solve, so it needs `viscosity` > 0.
    #[serde(skip_serializing_if = "is_zero")]
    pub lid_velocity: f64,
}

impl Default for SmokeSettings {
    fn default() -> Self {
        Self {
            advection: AdvectionScheme::MacCormack,
            vorticity: 0.3,
            buoyancy: 1.0,
            dye_weight: 0.05,
            ambient_temperature: 0.0,
            velocity_dissipation: 0.0,
            dye_dissipation: 0.0,
            temperature_dissipation: 0.5,
            sources: Vec::new(),
            obstacle: None,
            tracers: 2048,
            temperature_diffusion: 0.0,
            dye_diffusion: 0.0,
            wall_temperature: WallValues::default(),
            wall_dye: WallValues::default(),
            lid_velocity: 0.0,
        }
    }
}

/// Most tracer particles a smoke scene may ask for.
pub const MAX_TRACERS: u32 = 1 << 22;

/// Up to 80 characters of line `line` (1-based) of `text` around column `col`, with
/// control characters escaped, for quoting in a message; `None` when blank or absent.
fn source_excerpt(text: &str, line: usize, col: usize) -> Option<String> {
    const WIDTH: usize = 80;
    let chars: Vec<char> = text.lines().nth(line.checked_sub(1)?)?.chars().collect();
    let start = col
        .saturating_sub(WIDTH / 2)
        .min(chars.len().saturating_sub(WIDTH));
    let end = (start + WIDTH).min(chars.len());
    let mut out = String::new();
    if start > 0 {
        out.push_str("...");
    }
    for c in &chars[start..end] {
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(*c);
        }
    }
    if end < chars.len() {
        out.push_str("...");
    }
    let out = out.trim();
    (!out.is_empty()).then(|| out.to_string())
}

#[cfg(test)]
mod tests;
