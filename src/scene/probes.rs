//! Probes: time series at a place, as an experiment's instruments record them. A point's
//! pressure, velocity, density or dye; a wave gauge's water level; a wall pressure sensor
//! averaged over its face; the force and moment on a solid or a body. The simulation
//! samples them on the GPU after every substep (src/sim/core/probes.rs) and `eddy run`
//! writes them to probes.csv.

use super::{Scene, SceneKind};
use serde::{Deserialize, Serialize};

/// Most probes in one scene, and most columns they may write together.
pub const MAX_PROBES: usize = 256;
pub const MAX_PROBE_COLUMNS: usize = 1024;

/// One instrument.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub enum ProbeSpec {
    /// Quantities at a point, interpolated from the grid: `p` (Pa), `u`, `v`, `w` (m/s), and
    /// in a liquid `density` (the relative density the cells are marked with, 1 at rest)
    /// and `level` (the level set 0.5 - density: negative in the liquid), in a smoke
    /// `temperature` and `dye` (the sum of its three components). Default: all of them.
    Point {
        name: String,
        at: (f64, f64, f64),
        #[serde(default, skip_serializing_if = "Option::is_none")]
        quantities: Option<Vec<String>>,
    },
    /// A wave gauge: the height (m, above y = 0) of the liquid's surface on the vertical
    /// line through (x, z), where the level set first crosses zero going up from the
    /// bottom. A slice's gauge takes only `x`.
    Gauge {
        name: String,
        x: f64,
        #[serde(default)]
        z: Option<f64>,
    },
    /// A pressure transducer on a wall: the pressure (Pa) on the wall's face nearest to
    /// `at` (a domain wall or a solid's face, within half a cell), averaged over a disc of
    /// `radius` (m) centred on `at`.
    Sensor {
        name: String,
        at: (f64, f64, f64),
        radius: f64,
    },
    /// A load cell: the pressure force (N) and moment (N m) the fluid puts on static solid
    /// `solid` (its index in `solids`; moment about the centre of its cells), or the
    /// pressure and viscous force on rigid body `body` (moment about its centre of mass).
    Force {
        name: String,
        #[serde(default)]
        solid: Option<usize>,
        #[serde(default)]
        body: Option<usize>,
    },
}

/// How often probes.csv gets a row.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProbeEvery {
    /// After every substep (impact pressures last a few milliseconds).
    #[default]
    Substep,
    /// After each frame's last substep.
    Frame,
}

impl ProbeEvery {
    pub fn is_substep(&self) -> bool {
        *self == ProbeEvery::Substep
    }
}

/// What a point probe can read, by mode: (name, unit).
pub fn point_quantities(kind: SceneKind) -> &'static [(&'static str, &'static str)] {
    match kind {
        SceneKind::Liquid => &[
            ("p", "Pa"),
            ("u", "m/s"),
            ("v", "m/s"),
            ("w", "m/s"),
            ("density", "1"),
            ("level", "1"),
        ],
        SceneKind::Smoke => &[
            ("p", "Pa"),
            ("u", "m/s"),
            ("v", "m/s"),
            ("w", "m/s"),
            ("temperature", "K"),
            ("dye", "1"),
        ],
    }
}

/// The force probe's columns, after its name and a dot.
pub const FORCE_COLUMNS: [(&str, &str); 6] = [
    ("fx", "N"),
    ("fy", "N"),
    ("fz", "N"),
    ("tx", "N m"),
    ("ty", "N m"),
    ("tz", "N m"),
];

impl ProbeSpec {
    pub fn name(&self) -> &str {
        match self {
            ProbeSpec::Point { name, .. }
            | ProbeSpec::Gauge { name, .. }
            | ProbeSpec::Sensor { name, .. }
            | ProbeSpec::Force { name, .. } => name,
        }
    }

    /// The point quantities this probe reads, in the order of `point_quantities`.
    pub fn quantities(&self, kind: SceneKind) -> Vec<&'static str> {
        let ProbeSpec::Point { quantities, .. } = self else {
            return vec![];
        };
        point_quantities(kind)
            .iter()
            .map(|(q, _)| *q)
            .filter(|q| {
                quantities
                    .as_ref()
                    .is_none_or(|list| list.iter().any(|l| l == q))
            })
            .collect()
    }

    /// The probe's probes.csv columns and their units.
    pub fn columns(&self, kind: SceneKind) -> Vec<(String, &'static str)> {
        let name = self.name();
        match self {
            ProbeSpec::Point { .. } => {
                let units = point_quantities(kind);
                self.quantities(kind)
                    .into_iter()
                    .map(|q| {
                        let unit = units.iter().find(|(n, _)| *n == q).map_or("", |u| u.1);
                        (format!("{name}.{q}"), unit)
                    })
                    .collect()
            }
            ProbeSpec::Gauge { .. } => vec![(name.to_string(), "m")],
            ProbeSpec::Sensor { .. } => vec![(name.to_string(), "Pa")],
            ProbeSpec::Force { .. } => FORCE_COLUMNS
                .iter()
                .map(|(c, u)| (format!("{name}.{c}"), *u))
                .collect(),
        }
    }
}

impl Scene {
    /// Where a probe placed at `at` samples: a slice's z is its cell layer's middle.
    pub fn probe_point(&self, at: (f64, f64, f64)) -> [f64; 3] {
        let z = if self.kind == SceneKind::Smoke {
            0.5 * self.h()
        } else {
            at.2
        };
        [at.0, at.1, z]
    }

    /// Every probe's columns, in order.
    pub fn probe_columns(&self) -> Vec<(String, &'static str)> {
        self.probes
            .iter()
            .flat_map(|p| p.columns(self.kind))
            .collect()
    }

    /// Checks the probes: names, places inside the domain and outside the solids, a
    /// sensor on a wall, a force on a solid or body that exists. Each message names the
    /// probe by its index.
    pub fn validate_probes(&self) -> Result<(), String> {
        if self.probes.len() > MAX_PROBES {
            return Err(format!(
                "probes: {} probes, eddy supports at most {MAX_PROBES}",
                self.probes.len()
            ));
        }
        let d = self.domain_size();
        let slice = self.kind == SceneKind::Smoke;
        for (i, p) in self.probes.iter().enumerate() {
            let at = |m: String| format!("probes[{i}] ({:?}): {m}", p.name());
            let name = p.name();
            if name.is_empty()
                || name.len() > 64
                || !name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "_-".contains(c))
            {
                return Err(format!(
                    "probes[{i}]: name {name:?} must be 1 to 64 letters, digits, '_' or '-' \
                     (it names probes.csv's columns)"
                ));
            }
            if self.probes[..i].iter().any(|q| q.name() == name) {
                return Err(at("another probe has this name".into()));
            }
            self.validate_probe(p, d, slice).map_err(at)?;
        }
        let columns = self.probe_columns().len();
        if columns > MAX_PROBE_COLUMNS {
            return Err(format!(
                "probes: {columns} columns, eddy writes at most {MAX_PROBE_COLUMNS}"
            ));
        }
        Ok(())
    }

    fn validate_probe(&self, p: &ProbeSpec, d: [f64; 3], slice: bool) -> Result<(), String> {
        let inside = |q: [f64; 3]| -> Result<(), String> {
            let axes = if slice { 2 } else { 3 };
            if (0..axes).any(|a| !(q[a].is_finite() && q[a] >= 0.0 && q[a] <= d[a])) {
                return Err(format!(
                    "{:?} is outside the domain [0, {:?}]",
                    &q[..axes],
                    &d[..axes]
                ));
            }
            Ok(())
        };
        let slice_z = |z: f64| if slice { 0.5 * d[2] } else { z };
        match p {
            ProbeSpec::Point { at, quantities, .. } => {
                let q = [at.0, at.1, slice_z(at.2)];
                inside(q)?;
                if self.solids.iter().any(|s| s.contains(q)) {
                    return Err(format!("{q:?} is inside a solid"));
                }
                if let Some(list) = quantities {
                    let known = point_quantities(self.kind);
                    if list.is_empty() {
                        return Err("quantities is empty (leave it out for all)".into());
                    }
                    if let Some(bad) = list.iter().find(|l| !known.iter().any(|k| k.0 == *l)) {
                        let names: Vec<&str> = known.iter().map(|k| k.0).collect();
                        return Err(format!(
                            "quantity {bad:?} is not one a {:?} point reads ({})",
                            self.kind,
                            names.join(", ")
                        ));
                    }
                }
            }
            ProbeSpec::Gauge { x, z, .. } => {
                if slice {
                    return Err("a gauge reads a liquid's surface; a smoke has none".into());
                }
                let z = z.ok_or("a gauge needs z in a 3D liquid (x and z place its line)")?;
                inside([*x, 0.0, z])?;
            }
            ProbeSpec::Sensor { at, radius, .. } => {
                let q = [at.0, at.1, slice_z(at.2)];
                inside(q)?;
                let h = self.h();
                if !(radius.is_finite() && *radius >= 0.0 && *radius <= 0.25 * d[0].max(d[1])) {
                    return Err(format!(
                        "radius {radius} must be between 0 and a quarter of the domain"
                    ));
                }
                if self.sensor_wall(q).is_none() {
                    return Err(format!(
                        "{q:?} is on no wall: no face between the fluid and a solid or the \
                         domain's side lies within half a cell ({:.4} m) of it",
                        0.5 * h
                    ));
                }
            }
            ProbeSpec::Force { solid, body, .. } => match (solid, body) {
                (Some(s), None) if *s < self.solids.len() => {}
                (Some(s), None) => {
                    return Err(format!(
                        "solid {s}: the scene has {} solids",
                        self.solids.len()
                    ))
                }
                (None, Some(b)) if *b < self.bodies.len() => {}
                (None, Some(b)) => {
                    return Err(format!(
                        "body {b}: the scene has {} bodies",
                        self.bodies.len()
                    ))
                }
                _ => return Err("a force probe names one solid or one body".into()),
            },
        }
        Ok(())
    }

    /// The wall a sensor at `q` sits on: (the axis of its normal, the fluid cell next to
    /// it, the normal's sign pointing into the fluid) for the face nearest to `q`, within
    /// half a cell, between a cell whose centre is in no static solid and a solid cell or
    /// the outside of the domain. None when no such face is that near.
    pub fn sensor_wall(&self, q: [f64; 3]) -> Option<WallFace> {
        let h = self.h();
        let n = self.dims();
        let slice = self.kind == SceneKind::Smoke;
        let cell = |a: usize| ((q[a] / h).floor().max(0.0) as i64).min(n[a] as i64 - 1);
        let solid = |c: [i64; 3]| -> bool {
            if (0..3).any(|a| c[a] < 0 || c[a] >= n[a] as i64) {
                return true;
            }
            let centre = [0, 1, 2].map(|a| (c[a] as f64 + 0.5) * h);
            self.solids.iter().any(|s| s.contains(centre))
        };
        let mut best: Option<(f64, WallFace)> = None;
        for a in 0..if slice { 2 } else { 3 } {
            let plane = (q[a] / h).round();
            let dist = (q[a] - plane * h).abs();
            if dist > 0.5 * h + 1e-12 {
                continue;
            }
            let mut lo = [cell(0), cell(1), cell(2)];
            lo[a] = plane as i64 - 1;
            let mut hi = lo;
            hi[a] = plane as i64;
            let (fluid, sign) = match (solid(lo), solid(hi)) {
                (true, false) => (hi, 1),
                (false, true) => (lo, -1),
                _ => continue,
            };
            if best.is_none_or(|(d, _)| dist < d) {
                best = Some((dist, (a, fluid.map(|v| v as u32), sign)));
            }
        }
        best.map(|b| b.1)
    }
}

/// A sensor's wall: the axis of its normal, the fluid cell next to it and the normal's
/// sign pointing into the fluid.
pub type WallFace = (usize, [u32; 3], i32);

/// What one probes.csv column samples.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ColumnKind {
    /// p (Pa) at the point: trilinear over the cells that are not SOLID (AIR's p is 0).
    Pressure,
    /// A velocity component (0 u, 1 v, 2 w) at the point: the G2P stencil.
    Velocity(usize),
    /// The relative density, and the level set 0.5 - density: trilinear like the pressure.
    Density,
    Level,
    /// The smoke's temperature and dye (the sum of its components).
    Temperature,
    Dye,
    /// A gauge's surface height on the vertical line through the point's x and z.
    Gauge,
    /// A wall sensor: the wall's normal axis, its plane (the index of its faces along the
    /// axis), the normal's sign into the fluid and the disc's radius (m).
    Sensor {
        axis: usize,
        plane: u32,
        sign: i32,
        radius: f64,
    },
    /// A static solid's load: column 0-2 the force, 3-5 the moment about `centre`, summed
    /// over `count` faces of the plan's face list from `first`.
    Force {
        column: usize,
        first: u32,
        count: u32,
        centre: [f64; 3],
    },
    /// A rigid body's force (0-2) and moment (3-5), filled by the host.
    Body {
        body: usize,
        column: usize,
    },
}

/// One probes.csv column: what it samples and where (a slice's z is its middle).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Column {
    pub kind: ColumnKind,
    pub at: [f64; 3],
}

/// Every column of a scene's probes, the solids' faces the force columns sum over (the
/// fluid-side cell, its axis | 4 when the fluid lies on the face's + side), the fluid's
/// density (the pressure is the solve's phi times it over dt) and the area of a cell's
/// face on a solid (h^2, or h times a slice's depth).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ProbePlan {
    pub columns: Vec<Column>,
    pub faces: Vec<[u32; 2]>,
    pub rho: f64,
    pub face_area: f64,
}

impl ProbePlan {
    /// The plan of `scene`'s probes (valid ones: [`Scene::validate_probes`]).
    pub fn of(scene: &Scene) -> ProbePlan {
        let slice = scene.kind == SceneKind::Smoke;
        let (rho, face_area) = if slice {
            (
                crate::gpu::constants::AIR_DENSITY,
                scene.h() * scene.domain.2,
            )
        } else {
            (crate::gpu::constants::DENSITY, scene.h() * scene.h())
        };
        let mut plan = ProbePlan {
            rho,
            face_area,
            ..Default::default()
        };
        let point = |at| scene.probe_point(at);
        // The static solids' cells, voxelised once for every force probe.
        let mut statics = None;
        for probe in &scene.probes {
            match probe {
                ProbeSpec::Point { at, .. } => {
                    for q in probe.quantities(scene.kind) {
                        let kind = match q {
                            "p" => ColumnKind::Pressure,
                            "u" => ColumnKind::Velocity(0),
                            "v" => ColumnKind::Velocity(1),
                            "w" => ColumnKind::Velocity(2),
                            "density" => ColumnKind::Density,
                            "level" => ColumnKind::Level,
                            "temperature" => ColumnKind::Temperature,
                            _ => ColumnKind::Dye,
                        };
                        plan.columns.push(Column {
                            kind,
                            at: point(*at),
                        });
                    }
                }
                ProbeSpec::Gauge { x, z, .. } => {
                    let at = [*x, 0.0, z.unwrap_or(0.0)];
                    plan.columns.push(Column {
                        kind: ColumnKind::Gauge,
                        at,
                    });
                }
                ProbeSpec::Sensor { at, radius, .. } => {
                    let q = point(*at);
                    let (axis, fluid, sign) = scene
                        .sensor_wall(q)
                        .expect("a validated sensor lies on a wall");
                    let plane = if sign > 0 {
                        fluid[axis]
                    } else {
                        fluid[axis] + 1
                    };
                    let kind = ColumnKind::Sensor {
                        axis,
                        plane,
                        sign,
                        radius: *radius,
                    };
                    plan.columns.push(Column { kind, at: q });
                }
                ProbeSpec::Force { solid: Some(s), .. } => {
                    let statics = statics.get_or_insert_with(|| scene.static_solids());
                    let (faces, centre) = solid_faces(scene, statics, *s);
                    let first = plan.faces.len() as u32;
                    let count = faces.len() as u32;
                    plan.faces.extend(faces);
                    for column in 0..6 {
                        let kind = ColumnKind::Force {
                            column,
                            first,
                            count,
                            centre,
                        };
                        plan.columns.push(Column { kind, at: centre });
                    }
                }
                ProbeSpec::Force { body, .. } => {
                    let body = body.expect("a validated force names a solid or a body");
                    for column in 0..6 {
                        let kind = ColumnKind::Body { body, column };
                        plan.columns.push(Column { kind, at: [0.0; 3] });
                    }
                }
            }
        }
        plan
    }
}

/// The faces between static solid `index`'s cells (their centres inside it) and cells whose
/// centres lie in no solid, as (the fluid-side cell, its axis | 4 when the fluid is on the
/// face's + side), and the centre of the solid's cells (the force probe's moment centre).
pub fn solid_faces(
    scene: &Scene,
    statics: &super::fractions::StaticSolids,
    index: usize,
) -> (Vec<[u32; 2]>, [f64; 3]) {
    let [nx, ny, nz] = scene.dims();
    let n = [nx, ny, nz];
    let h = scene.h();
    let shape = &scene.solids[index];
    let id = |c: [u32; 3]| (c[0] + nx * (c[1] + ny * c[2])) as usize;
    let centre_of = |c: [u32; 3]| [0, 1, 2].map(|a| (c[a] as f64 + 0.5) * h);
    let mut faces = Vec::new();
    let mut sum = [0.0; 3];
    let mut cells = 0u64;
    for k in 0..nz {
        for j in 0..ny {
            for i in 0..nx {
                let c = [i, j, k];
                if statics.flags[id(c)] == 0 || !shape.contains(centre_of(c)) {
                    continue;
                }
                cells += 1;
                for (a, s) in centre_of(c).iter().enumerate() {
                    sum[a] += s;
                }
                for axis in 0..3 {
                    for up in [false, true] {
                        let mut m = c;
                        match up {
                            true if c[axis] + 1 < n[axis] => m[axis] += 1,
                            false if c[axis] > 0 => m[axis] -= 1,
                            _ => continue,
                        }
                        if statics.flags[id(m)] == 0 {
                            faces.push([id(m) as u32, axis as u32 | if up { 4 } else { 0 }]);
                        }
                    }
                }
            }
        }
    }
    (faces, sum.map(|s| s / cells.max(1) as f64))
}
