//! Scene files: RON, SI units (metres, seconds, y up), validated with clear errors.
//!
//! A scene describes the domain and its grid, where the liquid (or smoke) starts, the solid
//! obstacles, and the solver settings. `Scene::load` parses and validates; nothing is
//! allocated on a GPU before a scene has passed validation.

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use thiserror::Error;

/// Cell types shared by every stage (keep in sync with shaders/prelude.wgsl).
pub const AIR: u32 = 0;
pub const FLUID: u32 = 1;
pub const SOLID: u32 = 2;

#[derive(Debug, Error)]
pub enum SceneError {
    #[error("cannot read scene {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
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
            check_every: 8,
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
    /// Largest distance in cells a particle may move in one substep.
    pub cfl: f64,
    /// Seconds per frame.
    pub frame_dt: f64,
    /// Upper bound on substeps per frame.
    pub max_substeps: u32,
    /// Layers of velocity extrapolation into AIR.
    pub extrapolation_layers: u32,
    pub pressure: PressureSettings,
    /// Smoke settings (smoke scenes only).
    pub smoke: SmokeSettings,
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
            cfl: 1.0,
            frame_dt: 1.0 / 60.0,
            max_substeps: 32,
            extrapolation_layers: 3,
            pressure: PressureSettings::default(),
            smoke: SmokeSettings::default(),
        }
    }
}

/// Hard limit on grid cells independent of the adapter: indices are u32 in the shaders.
const MAX_CELLS: u64 = 1 << 28;

impl Scene {
    /// Reads, parses and validates a scene file.
    pub fn load(path: impl AsRef<Path>) -> Result<Scene, SceneError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|source| SceneError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        Self::parse(&text, path)
    }

    /// Parses and validates scene text; `path` is only used in messages.
    pub fn parse(text: &str, path: &Path) -> Result<Scene, SceneError> {
        let scene: Scene = ron::from_str(text).map_err(|e| SceneError::Parse {
            path: path.to_path_buf(),
            line: e.span.start.line,
            col: e.span.start.col,
            message: e.code.to_string(),
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

    pub fn cell_count(&self) -> u64 {
        self.resolution.0 as u64 * self.resolution.1 as u64 * self.resolution.2 as u64
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
    pub fn validate(&self) -> Result<(), String> {
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
        let d = self.domain_size();
        if d.iter().any(|v| !v.is_finite() || *v <= 0.0) {
            return Err(format!(
                "domain {:?} must be positive on every axis (metres)",
                self.domain
            ));
        }
        if self.cell_count() > MAX_CELLS {
            return Err(format!(
                "resolution {:?} has {} cells; eddy supports at most {MAX_CELLS}",
                self.resolution,
                self.cell_count()
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
        if self.kind == SceneKind::Smoke && nz != 1 {
            return Err(format!(
                "smoke scenes are 2D: resolution z must be 1, got {nz}"
            ));
        }
        let g = [self.gravity.0, self.gravity.1, self.gravity.2];
        if g.iter().any(|v| !v.is_finite()) {
            return Err("gravity must be finite".into());
        }
        if self.kind == SceneKind::Liquid && self.fluid.is_empty() {
            return Err("a liquid scene needs at least one shape in `fluid`".into());
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
        if !(self.cfl > 0.0 && self.cfl <= 10.0) {
            return Err(format!("cfl must be in (0, 10], got {}", self.cfl));
        }
        if !(self.frame_dt > 0.0 && self.frame_dt.is_finite()) {
            return Err(format!("frame_dt must be positive, got {}", self.frame_dt));
        }
        if self.max_substeps == 0 {
            return Err("max_substeps must be at least 1".into());
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
        self.pressure.validate()
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
        let finite = [
            ("smoke.vorticity", self.vorticity),
            ("smoke.buoyancy", self.buoyancy),
            ("smoke.dye_weight", self.dye_weight),
            ("smoke.ambient_temperature", self.ambient_temperature),
        ];
        for (name, v) in finite {
            if !v.is_finite() {
                return Err(format!("{name} must be finite, got {v}"));
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
            if !(v.is_finite() && v >= 0.0) {
                return Err(format!("{name} must be a rate >= 0 (1/s), got {v}"));
            }
        }
        if self.tracers > MAX_TRACERS {
            return Err(format!(
                "smoke.tracers must be at most {MAX_TRACERS}, got {}",
                self.tracers
            ));
        }
        let inside = |s: &Shape| {
            let (lo, hi) = s.bounds();
            (0..2).all(|a| hi[a] > 0.0 && lo[a] < domain[a])
        };
        for (i, src) in self.sources.iter().enumerate() {
            validate_shape(&src.shape).map_err(|m| format!("smoke.sources[{i}]: {m}"))?;
            if !inside(&src.shape) {
                return Err(format!(
                    "smoke.sources[{i}] lies outside the domain [0, {domain:?}]"
                ));
            }
            let d = [src.dye.0, src.dye.1, src.dye.2, src.temperature];
            let v = [src.velocity.0, src.velocity.1, src.velocity.2];
            if d.iter().chain(v.iter()).any(|x| !x.is_finite()) || d[..3].iter().any(|x| *x < 0.0) {
                return Err(format!(
                    "smoke.sources[{i}]: dye must be finite and >= 0, temperature and velocity finite"
                ));
            }
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

fn validate_shape(s: &Shape) -> Result<(), String> {
    let finite = |v: &(f64, f64, f64)| v.0.is_finite() && v.1.is_finite() && v.2.is_finite();
    match s {
        Shape::Box { min, max, velocity } => {
            if !finite(min) || !finite(max) || !finite(velocity) {
                return Err("box coordinates must be finite".into());
            }
            if max.0 <= min.0 || max.1 <= min.1 || max.2 <= min.2 {
                return Err(format!(
                    "box max {max:?} must exceed min {min:?} on every axis"
                ));
            }
        }
        Shape::Sphere {
            center,
            radius,
            velocity,
        } => {
            if !finite(center) || !finite(velocity) || !radius.is_finite() || *radius <= 0.0 {
                return Err(format!("sphere radius must be positive, got {radius}"));
            }
        }
    }
    Ok(())
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

    /// Seeds `particles_per_cell` jittered particles (one per sub-cell) in every non-solid
    /// cell whose centre is inside a fluid shape. Deterministic for a given `seed`.
    pub fn initial_state(&self) -> InitialState {
        let (solid, solid_velocity) = self.solid_cells();
        let [nx, ny, nz] = self.dims();
        let h = self.h();
        let hz = self.domain.2 / nz as f64;
        let per_axis = (self.particles_per_cell as f64).cbrt().round() as u32;
        let mut rng = SplitMix64(self.seed);
        let mut positions = Vec::new();
        let mut velocities = Vec::new();
        if self.kind == SceneKind::Liquid {
            for k in 0..nz {
                for j in 0..ny {
                    for i in 0..nx {
                        let c = (i + nx * (j + ny * k)) as usize;
                        let centre = self.cell_centre(i, j, k);
                        if solid[c] != 0 {
                            continue;
                        }
                        let Some(shape) = self.fluid.iter().find(|s| s.contains(centre)) else {
                            continue;
                        };
                        let v = shape.velocity();
                        let sub = 1.0 / per_axis as f64;
                        for sk in 0..per_axis {
                            for sj in 0..per_axis {
                                for si in 0..per_axis {
                                    let jitter = |s: u32, rng: &mut SplitMix64| {
                                        (s as f64 + 0.1 + 0.8 * rng.next_f64()) * sub
                                    };
                                    let x = (i as f64 + jitter(si, &mut rng)) * h;
                                    let y = (j as f64 + jitter(sj, &mut rng)) * h;
                                    let z = (k as f64 + jitter(sk, &mut rng)) * hz;
                                    positions.push([x as f32, y as f32, z as f32, 0.0]);
                                    velocities.push([v[0] as f32, v[1] as f32, v[2] as f32, 0.0]);
                                }
                            }
                        }
                    }
                }
            }
        }
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
