//! Scene files: RON, SI units (metres, seconds, y up), validated with clear errors.
//!
//! A scene describes the domain and its grid, where the liquid (or smoke) starts, the solid
//! obstacles, and the solver settings. `Scene::load` parses and validates; nothing is
//! allocated on a GPU before a scene has passed validation. The shipped scenes are also
//! compiled in (`crate::scenes`), so their names load from any folder.

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use thiserror::Error;

/// Cell types shared by every stage (keep in sync with shaders/prelude.wgsl).
pub const AIR: u32 = 0;
pub const FLUID: u32 = 1;
pub const SOLID: u32 = 2;

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
        }
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
        }
    }

    pub fn velocity(&self) -> [f64; 3] {
        let v = match self {
            Shape::Box { velocity, .. } | Shape::Sphere { velocity, .. } => velocity,
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
        }
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
    /// iterations (1.3-1.9x faster than 8 on the software adapter, BENCHMARKS.md).
    pub check_every: u32,
    /// Start from the previous step's pressure.
    pub warm_start: bool,
}

impl Default for PressureSettings {
    fn default() -> Self {
        Self {
            preconditioner: PreconditionerKind::Mg,
            tolerance: 1e-5,
            max_iterations: 1000,
            check_every: 2,
            warm_start: false,
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
    /// substep (a second Poisson solve, see src/sim/volume_correction.rs), so the liquid
    /// keeps its volume.
    pub volume_correction: bool,
    pub pressure: PressureSettings,
    /// Smoke settings (smoke scenes only).
    pub smoke: SmokeSettings,
    /// Rigid bodies, moved by the fluid, gravity and contacts (see src/sim/bodies/).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub bodies: Vec<BodySpec>,
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
            pressure: PressureSettings::default(),
            smoke: SmokeSettings::default(),
            bodies: Vec::new(),
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
            if let Some(shipped) = crate::scenes::for_missing_path(path) {
                return Self::parse(shipped.source, path);
            }
        }
        let bytes = std::fs::read(path).map_err(|cause| match cause.kind() {
            std::io::ErrorKind::NotFound => SceneError::NotFound {
                path: path.to_path_buf(),
                shipped: crate::scenes::names(),
            },
            _ => SceneError::Io {
                path: path.to_path_buf(),
                cause,
            },
        })?;
        // A scene is a small text file; anything larger is a wrong path, not a scene.
        if bytes.len() > MAX_SCENE_BYTES {
            return Err(invalid(format!(
                "{} bytes is not a scene file (scenes are RON text of at most {MAX_SCENE_BYTES} bytes)",
                bytes.len()
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

    /// Parses and validates scene text; `path` is only used in messages.
    pub fn parse(text: &str, path: &Path) -> Result<Scene, SceneError> {
        // Editors on Windows save a byte-order mark; it is not part of the RON text.
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let scene: Scene = ron::from_str(text).map_err(|e| {
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
        scene.validate().map_err(|message| SceneError::Invalid {
            path: path.to_path_buf(),
            message,
        })?;
        Ok(scene)
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

    /// Checks everything a user can get wrong; the message names the field and the fix.
    /// Every number must also be one the f32 GPU arithmetic can carry without overflow, so a
    /// scene that passes cannot turn into NaN through its inputs alone.
    pub fn validate(&self) -> Result<(), String> {
        if let Some(c) = self.name.chars().find(|c| c.is_control()) {
            return Err(format!(
                "name {:?} contains the control character U+{:04X}; names are printed to terminals and logs",
                self.name, c as u32
            ));
        }
        if self.name.chars().count() > MAX_NAME_CHARS {
            return Err(format!(
                "name is {} characters long; at most {MAX_NAME_CHARS}",
                self.name.chars().count()
            ));
        }
        let (nx, ny, nz) = self.resolution;
        if nx == 0 || ny == 0 || nz == 0 {
            return Err(format!(
                "resolution {:?} must be at least 1 cell on every axis",
                self.resolution
            ));
        }
        if nx < 2 || ny < 2 {
            return Err(format!(
                "resolution {:?}: x and y need at least 2 cells",
                self.resolution
            ));
        }
        if [nx, ny, nz].iter().any(|n| *n > MAX_AXIS_CELLS) {
            return Err(format!(
                "resolution {:?}: at most {MAX_AXIS_CELLS} cells per axis",
                self.resolution
            ));
        }
        if self.cell_count() > MAX_CELLS {
            return Err(format!(
                "resolution {:?} has {} cells; eddy supports at most {MAX_CELLS}",
                self.resolution,
                self.cell_count()
            ));
        }
        let d = self.domain_size();
        if d.iter().any(|v| !v.is_finite() || *v <= 0.0) {
            return Err(format!(
                "domain {:?} must be positive on every axis (metres)",
                self.domain
            ));
        }
        if d.iter().any(|v| !(MIN_LENGTH..=MAX_LENGTH).contains(v)) {
            return Err(format!(
                "domain {:?}: every axis must be between {MIN_LENGTH:e} and {MAX_LENGTH:e} m",
                self.domain
            ));
        }
        let hx = d[0] / nx as f64;
        let hy = d[1] / ny as f64;
        let hz = d[2] / nz as f64;
        let cubic = |a: f64, b: f64| (a - b).abs() <= 1e-6 * a.max(b);
        // A one-cell-thick slice (smoke mode) may have any depth: no flow crosses z.
        if !cubic(hx, hy) || (nz > 1 && !cubic(hx, hz)) {
            return Err(format!(
                "cells must be cubes: domain {:?} / resolution {:?} gives cell sizes {hx} x {hy} x {hz} m",
                self.domain, self.resolution
            ));
        }
        if hx < MIN_LENGTH {
            return Err(format!(
                "domain {:?} / resolution {:?} gives cells of {hx:e} m; the smallest cell eddy \
                 simulates in f32 is {MIN_LENGTH:e} m",
                self.domain, self.resolution
            ));
        }
        if self.kind == SceneKind::Smoke && nz != 1 {
            return Err(format!(
                "smoke scenes are 2D: resolution z must be 1, got {nz}"
            ));
        }
        let g = [self.gravity.0, self.gravity.1, self.gravity.2];
        if g.iter().any(|v| !v.is_finite()) {
            return Err(format!("gravity {:?} must be finite", self.gravity));
        }
        if norm(g) > MAX_ACCELERATION {
            return Err(format!(
                "gravity {:?} exceeds {MAX_ACCELERATION:e} m/s^2",
                self.gravity
            ));
        }
        match self.kind {
            SceneKind::Liquid => {
                if self.fluid.is_empty() {
                    return Err("a liquid scene needs at least one shape in `fluid`".into());
                }
                // A smoke block in a liquid scene would be ignored without a word.
                if self.smoke != SmokeSettings::default() {
                    return Err(
                        "smoke settings apply to smoke scenes only: remove `smoke`, or set `kind: smoke`"
                            .into(),
                    );
                }
            }
            SceneKind::Smoke => {
                if !self.fluid.is_empty() {
                    return Err(
                        "fluid shapes apply to liquid scenes only: smoke scenes inject smoke with `smoke.sources`"
                            .into(),
                    );
                }
                if self.transfer != TransferKind::default() {
                    return Err(
                        "transfer applies to liquid scenes only: smoke scenes have no particles to transfer"
                            .into(),
                    );
                }
            }
        }
        for (what, shapes) in [("fluid", &self.fluid), ("solids", &self.solids)] {
            for (i, s) in shapes.iter().enumerate() {
                validate_shape(s).map_err(|m| format!("{what}[{i}]: {m}"))?;
                let (lo, hi) = s.bounds();
                // Smoke scenes are one-cell slices: their shapes are read in x and y only.
                let axes = if self.kind == SceneKind::Smoke { 2 } else { 3 };
                let inside = (0..axes).all(|a| hi[a] > 0.0 && lo[a] < d[a]);
                if !inside {
                    return Err(format!(
                        "{what}[{i}] lies outside the domain [0, {:?}]: bounds {lo:?} .. {hi:?}",
                        self.domain
                    ));
                }
            }
        }
        if ![1, 8, 27].contains(&self.particles_per_cell) {
            return Err(format!(
                "particles_per_cell must be 1, 8 or 27 (a cube number), got {}",
                self.particles_per_cell
            ));
        }
        if !(0.0..=1.0).contains(&self.pic_ratio) {
            return Err(format!(
                "pic_ratio must be in [0, 1], got {}",
                self.pic_ratio
            ));
        }
        if !(MIN_CFL..=10.0).contains(&self.cfl) {
            return Err(format!(
                "cfl must be in [{MIN_CFL}, 10] (cells a particle may cross per substep), got {}",
                self.cfl
            ));
        }
        if !(MIN_FRAME_DT..=MAX_FRAME_DT).contains(&self.frame_dt) {
            return Err(format!(
                "frame_dt must be in [{MIN_FRAME_DT:e}, {MAX_FRAME_DT}] s, got {}",
                self.frame_dt
            ));
        }
        if !(1..=MAX_SUBSTEPS).contains(&self.max_substeps) {
            return Err(format!(
                "max_substeps must be in 1..={MAX_SUBSTEPS}, got {} (a frame's work must stay bounded)",
                self.max_substeps
            ));
        }
        if self.extrapolation_layers == 0 || self.extrapolation_layers > 64 {
            return Err(format!(
                "extrapolation_layers must be in 1..=64, got {}",
                self.extrapolation_layers
            ));
        }
        if self.kind == SceneKind::Smoke {
            self.smoke.validate(d)?;
        }
        if self.bodies.len() > MAX_BODIES {
            return Err(format!(
                "bodies: {} bodies, eddy supports at most {MAX_BODIES}",
                self.bodies.len()
            ));
        }
        for (i, b) in self.bodies.iter().enumerate() {
            b.validate(d, self.kind == SceneKind::Smoke)
                .map_err(|m| format!("bodies[{i}]: {m}"))?;
        }
        self.pressure.validate()
    }
}

/// Most rigid bodies in a scene (MAX_BODIES in shaders/bodies.wgsl).
pub const MAX_BODIES: usize = 64;
/// Range of a body's density, kg/m^3.
pub const MIN_BODY_DENSITY: f64 = 1e-3;
pub const MAX_BODY_DENSITY: f64 = 1e6;

/// The shape of a rigid body, in its own frame (centred on its centre of mass).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub enum BodyShape {
    /// A box with half extents along its own x, y, z (m). In a smoke slice a box is a
    /// rectangle across the slice's depth (its z extent is the slice's).
    Box { half_extents: (f64, f64, f64) },
    /// A sphere (m); in a smoke slice a disc across the slice's depth.
    Sphere { radius: f64 },
}

/// How a body moves.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BodyMotion {
    /// Moved by the fluid, gravity and contacts.
    #[default]
    Dynamic,
    /// Never moves (an obstacle that other bodies hit).
    Fixed,
    /// Follows its prescribed velocity and angular velocity, bouncing off the domain walls;
    /// pushes the fluid and other bodies, is pushed by nothing.
    Kinematic,
}

/// One rigid body of a scene.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BodySpec {
    pub shape: BodyShape,
    /// Centre of mass, m.
    pub center: (f64, f64, f64),
    /// kg/m^3 (water is 1000).
    #[serde(default = "default_body_density")]
    pub density: f64,
    /// m/s.
    #[serde(default)]
    pub velocity: (f64, f64, f64),
    /// rad/s, about the centre, world axes.
    #[serde(default)]
    pub angular_velocity: (f64, f64, f64),
    /// Rotation in degrees about the world x, y, then z axes (a slice body turns about z
    /// only).
    #[serde(default)]
    pub rotation_deg: (f64, f64, f64),
    /// Coefficient of restitution of its contacts, 0..=1.
    #[serde(default = "default_restitution")]
    pub restitution: f64,
    /// Coulomb friction coefficient of its contacts, >= 0.
    #[serde(default = "default_friction")]
    pub friction: f64,
    #[serde(default)]
    pub motion: BodyMotion,
}

fn default_body_density() -> f64 {
    500.0
}
fn default_restitution() -> f64 {
    0.3
}
fn default_friction() -> f64 {
    0.4
}

impl BodySpec {
    /// Checks one body against the domain; each message names the field at fault.
    pub fn validate(&self, domain: [f64; 3], slice: bool) -> Result<(), String> {
        let finite = |name: &str, v: (f64, f64, f64), bound: f64| {
            let a = [v.0, v.1, v.2];
            if a.iter().all(|x| x.is_finite() && x.abs() <= bound) {
                Ok(())
            } else {
                Err(format!("{name} {v:?} must be finite and at most {bound:e}"))
            }
        };
        let extent = match &self.shape {
            BodyShape::Box { half_extents: e } => {
                finite("box half_extents", *e, MAX_COORDINATE)?;
                let z_ok = slice || e.2 > 0.0;
                if e.0 <= 0.0 || e.1 <= 0.0 || !z_ok {
                    return Err(format!(
                        "box half_extents {e:?} must be positive on every axis"
                    ));
                }
                (e.0 * e.0 + e.1 * e.1 + if slice { 0.0 } else { e.2 * e.2 }).sqrt()
            }
            BodyShape::Sphere { radius } => {
                if !(radius.is_finite() && *radius > 0.0 && *radius <= MAX_COORDINATE) {
                    return Err(format!(
                        "sphere radius must be positive and finite, got {radius}"
                    ));
                }
                *radius
            }
        };
        finite("center", self.center, MAX_COORDINATE)?;
        let c = [self.center.0, self.center.1, self.center.2];
        let axes = if slice { 2 } else { 3 };
        for a in 0..axes {
            if c[a] <= 0.0 || c[a] >= domain[a] {
                return Err(format!(
                    "center {:?} lies outside the domain [0, {domain:?}]",
                    self.center
                ));
            }
            if 2.0 * extent >= domain[a] {
                return Err(format!(
                    "the body spans {:.3} m, too large for the domain's {:.3} m along axis {a}",
                    2.0 * extent,
                    domain[a]
                ));
            }
        }
        if !(MIN_BODY_DENSITY..=MAX_BODY_DENSITY).contains(&self.density) {
            return Err(format!(
                "density must be in [{MIN_BODY_DENSITY:e}, {MAX_BODY_DENSITY:e}] kg/m^3, got {}",
                self.density
            ));
        }
        check_speed([self.velocity.0, self.velocity.1, self.velocity.2])
            .map_err(|m| format!("velocity {:?}: {m}", self.velocity))?;
        finite("angular_velocity", self.angular_velocity, MAX_SPEED)?;
        finite("rotation_deg", self.rotation_deg, 1e6)?;
        if slice
            && (self.rotation_deg.0 != 0.0
                || self.rotation_deg.1 != 0.0
                || self.angular_velocity.0 != 0.0
                || self.angular_velocity.1 != 0.0)
        {
            return Err(
                "a body in a smoke slice turns about z only: rotation_deg and angular_velocity \
                 must have zero x and y"
                    .into(),
            );
        }
        if !(0.0..=1.0).contains(&self.restitution) {
            return Err(format!(
                "restitution must be in [0, 1], got {}",
                self.restitution
            ));
        }
        if !(self.friction.is_finite() && (0.0..=100.0).contains(&self.friction)) {
            return Err(format!(
                "friction must be in [0, 100], got {}",
                self.friction
            ));
        }
        Ok(())
    }
}

impl PressureSettings {
    pub fn validate(&self) -> Result<(), String> {
        if !(self.tolerance > 0.0 && self.tolerance < 1.0) {
            return Err(format!(
                "pressure.tolerance must be in (0, 1) (relative residual), got {}",
                self.tolerance
            ));
        }
        if self.tolerance < MIN_TOLERANCE {
            return Err(format!(
                "pressure.tolerance {:e} is below {MIN_TOLERANCE:e}, which f32 PCG cannot reach \
                 (every solve would stop at max_iterations)",
                self.tolerance
            ));
        }
        if self.max_iterations == 0 {
            return Err("pressure.max_iterations must be at least 1".into());
        }
        if self.max_iterations > 100_000 {
            return Err(format!(
                "pressure.max_iterations must be at most 100000, got {}",
                self.max_iterations
            ));
        }
        if self.check_every == 0 {
            return Err("pressure.check_every must be at least 1".into());
        }
        Ok(())
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
    /// A solid that moves with its `velocity` and bounces off the domain walls; the viewer
    /// lets the user drag it. Its faces push the smoke (u.n = u_solid.n).
    pub obstacle: Option<Shape>,
    /// Tracer particles advected by the flow (drawn with trails in the viewer).
    pub tracers: u32,
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
        }
    }
}

/// Most tracer particles a smoke scene may ask for.
pub const MAX_TRACERS: u32 = 1 << 22;

impl SmokeSettings {
    pub fn validate(&self, domain: [f64; 3]) -> Result<(), String> {
        let signed = [
            ("smoke.vorticity", self.vorticity),
            ("smoke.buoyancy", self.buoyancy),
            ("smoke.dye_weight", self.dye_weight),
            ("smoke.ambient_temperature", self.ambient_temperature),
        ];
        for (name, v) in signed {
            if !v.is_finite() {
                return Err(format!("{name} must be finite, got {v}"));
            }
            if v.abs() > MAX_SMOKE_VALUE {
                return Err(format!(
                    "{name} is {v:e}; at most {MAX_SMOKE_VALUE:e} in magnitude (f32 headroom)"
                ));
            }
        }
        if self.vorticity < 0.0 {
            return Err(format!(
                "smoke.vorticity must be >= 0, got {}",
                self.vorticity
            ));
        }
        let rates = [
            ("smoke.velocity_dissipation", self.velocity_dissipation),
            ("smoke.dye_dissipation", self.dye_dissipation),
            (
                "smoke.temperature_dissipation",
                self.temperature_dissipation,
            ),
        ];
        for (name, v) in rates {
            if !(v.is_finite() && (0.0..=MAX_SMOKE_VALUE).contains(&v)) {
                return Err(format!(
                    "{name} must be a rate in [0, {MAX_SMOKE_VALUE:e}] (1/s), got {v}"
                ));
            }
        }
        if self.tracers > MAX_TRACERS {
            return Err(format!(
                "smoke.tracers must be at most {MAX_TRACERS}, got {}",
                self.tracers
            ));
        }
        if self.sources.len() > MAX_SMOKE_SOURCES {
            return Err(format!(
                "smoke.sources has {} entries; at most {MAX_SMOKE_SOURCES}",
                self.sources.len()
            ));
        }
        let inside = |s: &Shape| {
            let (lo, hi) = s.bounds();
            (0..2).all(|a| hi[a] > 0.0 && lo[a] < domain[a])
        };
        for (i, src) in self.sources.iter().enumerate() {
            let at = format!("smoke.sources[{i}]");
            validate_shape(&src.shape).map_err(|m| format!("{at}.shape: {m}"))?;
            if !inside(&src.shape) {
                return Err(format!("{at} lies outside the domain [0, {domain:?}]"));
            }
            let dye = [src.dye.0, src.dye.1, src.dye.2];
            if dye
                .iter()
                .any(|x| !(x.is_finite() && (0.0..=MAX_SMOKE_VALUE).contains(x)))
            {
                return Err(format!(
                    "{at}.dye {:?}: every channel must be in [0, {MAX_SMOKE_VALUE:e}]",
                    src.dye
                ));
            }
            if !(src.temperature.is_finite() && src.temperature.abs() <= MAX_SMOKE_VALUE) {
                return Err(format!(
                    "{at}.temperature must be finite and at most {MAX_SMOKE_VALUE:e} in magnitude, got {}",
                    src.temperature
                ));
            }
            let v = [src.velocity.0, src.velocity.1, src.velocity.2];
            check_speed(v).map_err(|m| format!("{at}.velocity {:?}: {m}", src.velocity))?;
        }
        if let Some(o) = &self.obstacle {
            validate_shape(o).map_err(|m| format!("smoke.obstacle: {m}"))?;
            let (lo, hi) = o.bounds();
            if (0..2).any(|a| lo[a] < 0.0 || hi[a] > domain[a]) {
                return Err(format!(
                    "smoke.obstacle must lie inside the domain in x and y: bounds {lo:?} .. {hi:?}"
                ));
            }
        }
        Ok(())
    }
}

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

fn norm(v: [f64; 3]) -> f64 {
    (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt()
}

fn check_speed(v: [f64; 3]) -> Result<(), String> {
    if v.iter().any(|x| !x.is_finite()) {
        return Err("must be finite".into());
    }
    if norm(v) > MAX_SPEED {
        return Err(format!("speed exceeds {MAX_SPEED:e} m/s"));
    }
    Ok(())
}

fn check_point(p: &(f64, f64, f64)) -> bool {
    [p.0, p.1, p.2]
        .iter()
        .all(|x| x.is_finite() && x.abs() <= MAX_COORDINATE)
}

/// Checks one shape; each message names the field at fault.
fn validate_shape(s: &Shape) -> Result<(), String> {
    let coord = |name: &str, p: &(f64, f64, f64)| {
        if check_point(p) {
            Ok(())
        } else {
            Err(format!(
                "{name} {p:?} must be finite and within {MAX_COORDINATE:e} m of the origin"
            ))
        }
    };
    let velocity = match s {
        Shape::Box { min, max, velocity } => {
            coord("box min", min)?;
            coord("box max", max)?;
            if max.0 <= min.0 || max.1 <= min.1 || max.2 <= min.2 {
                return Err(format!(
                    "box max {max:?} must exceed min {min:?} on every axis"
                ));
            }
            velocity
        }
        Shape::Sphere {
            center,
            radius,
            velocity,
        } => {
            coord("sphere center", center)?;
            if !(radius.is_finite() && *radius > 0.0 && *radius <= MAX_COORDINATE) {
                return Err(format!(
                    "sphere radius must be positive and at most {MAX_COORDINATE:e} m, got {radius}"
                ));
            }
            velocity
        }
    };
    check_speed([velocity.0, velocity.1, velocity.2])
        .map_err(|m| format!("velocity {velocity:?}: {m}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Result<Scene, SceneError> {
        Scene::parse(s, Path::new("test.ron"))
    }

    const OK: &str = "(domain: (1.0, 0.5, 0.5), resolution: (16, 8, 8), fluid: [Box(min: (0,0,0), max: (0.5,0.25,0.5))])";

    #[test]
    fn minimal_scene_parses_with_defaults() {
        let s = parse(OK).unwrap();
        assert_eq!(s.dims(), [16, 8, 8]);
        assert!((s.h() - 1.0 / 16.0).abs() < 1e-12);
        assert_eq!(s.pressure.preconditioner, PreconditionerKind::Mg);
    }

    #[test]
    fn syntax_error_reports_line_and_column() {
        let err = parse("(\n  domain: (1.0, 1.0 1.0),\n)").unwrap_err();
        match err {
            SceneError::Parse { line, col, .. } => {
                assert_eq!(line, 2);
                assert!(col > 1);
            }
            e => panic!("expected a parse error, got {e}"),
        }
    }

    #[test]
    fn unknown_field_is_rejected() {
        let err = parse("(domian: (1.0, 1.0, 1.0))").unwrap_err().to_string();
        assert!(err.contains("domian"), "{err}");
    }

    #[test]
    fn bad_values_are_rejected_with_the_field_named() {
        let cases = [
            ("resolution: (0, 8, 8)", "resolution"),
            ("domain: (-1.0, 0.5, 0.5)", "domain"),
            ("resolution: (16, 9, 8)", "cubes"),
            ("fluid: [Box(min: (2,2,2), max: (3,3,3))]", "outside"),
            (
                "fluid: [Sphere(center: (0.5,0.2,0.2), radius: 0.0)]",
                "radius",
            ),
            ("pressure: (tolerance: 0.0)", "tolerance"),
            ("pressure: (max_iterations: 0)", "max_iterations"),
            ("pic_ratio: 1.5", "pic_ratio"),
            ("particles_per_cell: 5", "particles_per_cell"),
        ];
        for (field, needle) in cases {
            let text = OK.replacen('(', &format!("({field}, "), 1);
            // later keys win in the struct; put the override after the defaults
            let text = if text.contains("resolution: (16, 8, 8)") && field.starts_with("resolution")
            {
                text.replace(", resolution: (16, 8, 8)", "")
            } else if field.starts_with("domain") {
                text.replace(", domain: (1.0, 0.5, 0.5)", "")
            } else if field.starts_with("fluid") {
                text.replace(", fluid: [Box(min: (0,0,0), max: (0.5,0.25,0.5))]", "")
            } else {
                text
            };
            let err = parse(&text).map(|_| ()).unwrap_err().to_string();
            assert!(err.contains(needle), "{field}: {err}");
        }
    }

    #[test]
    fn transfer_parses_defaults_to_flip_and_is_checked() {
        assert_eq!(parse(OK).unwrap().transfer, TransferKind::Flip);
        let apic = OK.replacen('(', "(transfer: apic, ", 1);
        assert_eq!(parse(&apic).unwrap().transfer, TransferKind::Apic);
        let err = parse(&OK.replacen('(', "(transfer: mpm, ", 1))
            .unwrap_err()
            .to_string();
        assert!(err.contains("mpm") && err.contains("apic"), "{err}");
        let smoke = Scene {
            kind: SceneKind::Smoke,
            resolution: (16, 16, 1),
            ..Scene::default()
        };
        assert!(smoke.validate().is_ok());
        let err = Scene {
            transfer: TransferKind::Apic,
            ..smoke
        }
        .validate()
        .unwrap_err();
        assert!(err.contains("transfer"), "{err}");
    }

    #[test]
    fn unknown_preconditioner_is_rejected() {
        let text = OK.replacen('(', "(pressure: (preconditioner: amg), ", 1);
        assert!(parse(&text).is_err());
        assert!("amg".parse::<PreconditionerKind>().is_err());
        assert_eq!(
            "IP".parse::<PreconditionerKind>().unwrap(),
            PreconditionerKind::Ip
        );
    }

    #[test]
    fn cell_count_saturates_instead_of_wrapping() {
        let mut s = parse(OK).unwrap();
        // 2^22 * 2^21 * 2^21 = 2^64 wraps to 0 in u64.
        s.resolution = (4_194_304, 2_097_152, 2_097_152);
        assert_eq!(s.cell_count(), u64::MAX);
        assert!(s.validate().is_err());
    }

    #[test]
    fn particle_counts_match_seeding_and_the_bound_covers_them() {
        let text = OK.replace(
            "fluid: [Box(min: (0,0,0), max: (0.5,0.25,0.5))]",
            "fluid: [Box(min: (0,0,0), max: (0.5,0.25,0.5)), Sphere(center: (0.7,0.3,0.25), radius: 0.15)], \
             solids: [Box(min: (0.2,0,0), max: (0.3,0.1,0.5))]",
        );
        let s = parse(&text).unwrap();
        let seeded = s.initial_state().positions.len() as u64;
        assert!(seeded > 0);
        assert_eq!(s.particle_count(), seeded);
        assert!(s.particle_bound() >= seeded);
        let per_shape = s.seeded_cells_per_shape();
        assert_eq!(per_shape.len(), 2);
        assert!(per_shape.iter().all(|n| *n > 0));
        let (solid, _) = s.solid_cells();
        assert_eq!(
            s.solid_cell_count(),
            solid.iter().filter(|c| **c != 0).count() as u64
        );
    }

    #[test]
    fn a_byte_order_mark_is_not_part_of_the_scene() {
        let s = parse(&format!("\u{feff}{OK}")).unwrap();
        assert_eq!(s.dims(), [16, 8, 8]);
    }

    #[test]
    fn parse_errors_quote_the_line_at_fault() {
        let err = parse("(\n  domain: (1.0, 0.5, 0.5),\n  resolution: (16.5, 8, 8),\n)")
            .unwrap_err()
            .to_string();
        assert!(err.contains("test.ron:3:"), "{err}");
        assert!(err.contains("resolution: (16.5, 8, 8)"), "{err}");
    }

    #[test]
    fn values_beyond_f32_headroom_are_rejected() {
        let cases = [
            ("gravity: (0.0, -1e30, 0.0)", "gravity"),
            ("cfl: 1e-9", "cfl"),
            ("frame_dt: 1e-300", "frame_dt"),
            ("max_substeps: 4294967295", "max_substeps"),
            ("pressure: (tolerance: 1e-300)", "tolerance"),
            ("name: \"a\\u{7}b\"", "control character"),
            (
                "smoke: (buoyancy: 2.0)",
                "smoke settings apply to smoke scenes",
            ),
        ];
        for (field, needle) in cases {
            let text = OK.replacen('(', &format!("({field}, "), 1);
            let err = parse(&text).map(|_| ()).unwrap_err().to_string();
            assert!(err.contains(needle), "{field}: {err}");
        }
    }

    #[test]
    fn with_resolution_keeps_cubic_cells() {
        let s = parse(OK).unwrap().with_resolution(32);
        assert_eq!(s.dims(), [32, 16, 16]);
        s.validate().unwrap();
    }
}

/// A small deterministic generator (SplitMix64) so seeding is identical on every platform.
#[derive(Clone, Debug)]
pub struct SplitMix64(pub u64);

impl SplitMix64 {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Initial state derived from a scene: solid cells, their velocities and the particles.
#[derive(Clone, Debug)]
pub struct InitialState {
    /// 1 where the cell centre lies inside a solid shape.
    pub solid: Vec<u32>,
    /// Velocity of the solid covering each cell (xyz, w unused).
    pub solid_velocity: Vec<[f32; 4]>,
    /// Particle positions (xyz, w unused) in metres.
    pub positions: Vec<[f32; 4]>,
    /// Particle velocities (xyz, w unused) in m/s.
    pub velocities: Vec<[f32; 4]>,
}

impl Scene {
    fn cell_centre(&self, i: u32, j: u32, k: u32) -> [f64; 3] {
        let h = self.h();
        let hz = self.domain.2 / self.resolution.2 as f64;
        [
            (i as f64 + 0.5) * h,
            (j as f64 + 0.5) * h,
            (k as f64 + 0.5) * hz,
        ]
    }

    /// Voxelises the solids (a cell is SOLID when its centre is inside a solid shape).
    pub fn solid_cells(&self) -> (Vec<u32>, Vec<[f32; 4]>) {
        let [nx, ny, nz] = self.dims();
        let n = self.cell_count() as usize;
        let mut solid = vec![0u32; n];
        let mut vel = vec![[0f32; 4]; n];
        for k in 0..nz {
            for j in 0..ny {
                for i in 0..nx {
                    let c = (i + nx * (j + ny * k)) as usize;
                    let p = self.cell_centre(i, j, k);
                    let smoke = self.kind == SceneKind::Smoke;
                    let inside = |s: &&Shape| {
                        if smoke {
                            s.contains_xy([p[0], p[1]])
                        } else {
                            s.contains(p)
                        }
                    };
                    if let Some(s) = self.solids.iter().rev().find(inside) {
                        solid[c] = 1;
                        let v = s.velocity();
                        vel[c] = [v[0] as f32, v[1] as f32, v[2] as f32, 0.0];
                    }
                }
            }
        }
        (solid, vel)
    }

    /// SOLID cells, counted without allocating the grid (see `solid_cells`).
    pub fn solid_cell_count(&self) -> u64 {
        let [nx, ny, nz] = self.dims();
        let smoke = self.kind == SceneKind::Smoke;
        let mut n = 0u64;
        for k in 0..nz {
            for j in 0..ny {
                for i in 0..nx {
                    let p = self.cell_centre(i, j, k);
                    let inside = |s: &Shape| {
                        if smoke {
                            s.contains_xy([p[0], p[1]])
                        } else {
                            s.contains(p)
                        }
                    };
                    n += self.solids.iter().any(inside) as u64;
                }
            }
        }
        n
    }

    /// Visits the cells a liquid scene seeds, in seeding order (i fastest), with the index
    /// of the fluid shape that seeds each: the first holding the cell centre, unless a solid
    /// holds it. Allocates nothing, so sizes can be checked before seeding.
    fn for_each_seeded_cell(&self, mut visit: impl FnMut(u32, u32, u32, usize)) {
        if self.kind != SceneKind::Liquid {
            return;
        }
        let [nx, ny, nz] = self.dims();
        for k in 0..nz {
            for j in 0..ny {
                for i in 0..nx {
                    let centre = self.cell_centre(i, j, k);
                    if self.solids.iter().any(|s| s.contains(centre)) {
                        continue;
                    }
                    if let Some(shape) = self.fluid.iter().position(|s| s.contains(centre)) {
                        visit(i, j, k, shape);
                    }
                }
            }
        }
    }

    /// Cells each fluid shape seeds (a shape inside a solid, or holding no cell centre,
    /// seeds none).
    pub fn seeded_cells_per_shape(&self) -> Vec<u64> {
        let mut cells = vec![0u64; self.fluid.len()];
        self.for_each_seeded_cell(|_, _, _, s| cells[s] += 1);
        cells
    }

    /// Particles `initial_state` will seed, counted without seeding them.
    pub fn particle_count(&self) -> u64 {
        self.seeded_cells_per_shape()
            .iter()
            .sum::<u64>()
            .saturating_mul(self.particles_per_cell as u64)
    }

    /// A quick upper bound on the particles (cells whose centres lie in each fluid shape's
    /// bounding box, overlaps counted twice), for size checks that must not walk a huge grid.
    pub fn particle_bound(&self) -> u64 {
        if self.kind != SceneKind::Liquid {
            return 0;
        }
        let n = self.dims();
        let d = self.domain_size();
        let mut total = 0u64;
        for s in &self.fluid {
            let (lo, hi) = s.bounds();
            let mut cells = 1u64;
            for a in 0..3 {
                let h = d[a] / n[a] as f64;
                // Cells whose centre (i + 0.5) h lies in [lo, hi].
                let first = (lo[a] / h - 0.5).ceil().max(0.0);
                let last = (hi[a] / h - 0.5).floor().min(n[a] as f64 - 1.0);
                let count = if last >= first {
                    last - first + 1.0
                } else {
                    0.0
                };
                cells = cells.saturating_mul(count as u64);
            }
            total = total.saturating_add(cells);
        }
        total.saturating_mul(self.particles_per_cell as u64)
    }

    /// Seeds `particles_per_cell` jittered particles (one per sub-cell) in every non-solid
    /// cell whose centre is inside a fluid shape. Deterministic for a given `seed`.
    pub fn initial_state(&self) -> InitialState {
        let (solid, solid_velocity) = self.solid_cells();
        let h = self.h();
        let hz = self.domain.2 / self.resolution.2 as f64;
        let per_axis = (self.particles_per_cell as f64).cbrt().round() as u32;
        let mut rng = SplitMix64(self.seed);
        let mut positions = Vec::new();
        let mut velocities = Vec::new();
        let sub = 1.0 / per_axis as f64;
        self.for_each_seeded_cell(|i, j, k, shape| {
            let v = self.fluid[shape].velocity();
            for sk in 0..per_axis {
                for sj in 0..per_axis {
                    for si in 0..per_axis {
                        let mut jitter = |s: u32| (s as f64 + 0.1 + 0.8 * rng.next_f64()) * sub;
                        let x = (i as f64 + jitter(si)) * h;
                        let y = (j as f64 + jitter(sj)) * h;
                        let z = (k as f64 + jitter(sk)) * hz;
                        positions.push([x as f32, y as f32, z as f32, 0.0]);
                        velocities.push([v[0] as f32, v[1] as f32, v[2] as f32, 0.0]);
                    }
                }
            }
        });
        InitialState {
            solid,
            solid_velocity,
            positions,
            velocities,
        }
    }
}

/// The standard problems that benchmarks and solver tests share, on a cubic 1 m domain.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StandardProblem {
    /// Dam break at frame 0: a 0.4 x 0.6 x 1 m column against the x = 0 wall.
    DamBreak,
    /// A pool 0.4 m deep over the whole floor with a block on the floor, measured after
    /// `settle_frames` frames at rest. Without the block the system would be
    /// one-dimensional (b constant over the bottom layer) and plain CG would solve it in as
    /// many iterations as the pool is deep, which says nothing about preconditioners.
    SettledPool,
}

impl StandardProblem {
    pub const ALL: [StandardProblem; 2] = [StandardProblem::DamBreak, StandardProblem::SettledPool];

    pub fn name(self) -> &'static str {
        match self {
            StandardProblem::DamBreak => "dam_break",
            StandardProblem::SettledPool => "settled_pool",
        }
    }

    /// Frames to simulate before the system is measured.
    pub fn settle_frames(self) -> u32 {
        match self {
            StandardProblem::DamBreak => 0,
            StandardProblem::SettledPool => 30,
        }
    }

    /// The problem on an n x n x n grid.
    pub fn scene(self, n: u32) -> Scene {
        let fluid = match self {
            StandardProblem::DamBreak => Shape::Box {
                min: (0.0, 0.0, 0.0),
                max: (0.4, 0.6, 1.0),
                velocity: (0.0, 0.0, 0.0),
            },
            StandardProblem::SettledPool => Shape::Box {
                min: (0.0, 0.0, 0.0),
                max: (1.0, 0.4, 1.0),
                velocity: (0.0, 0.0, 0.0),
            },
        };
        let solids = match self {
            StandardProblem::DamBreak => vec![],
            // A block on the floor makes the pool's system genuinely 3D.
            StandardProblem::SettledPool => vec![Shape::Box {
                min: (0.55, 0.0, 0.3),
                max: (0.8, 0.25, 0.7),
                velocity: (0.0, 0.0, 0.0),
            }],
        };
        Scene {
            name: self.name().into(),
            domain: (1.0, 1.0, 1.0),
            resolution: (n, n, n),
            fluid: vec![fluid],
            solids,
            ..Scene::default()
        }
    }
}
