//! Keyframed mesh solids (src/scene/motion.rs): before each substep the host places each
//! moving mesh where its path is at the substep's start, marks the cells whose centre it
//! holds SOLID over the static solids, and gives them the velocity their material point
//! has over the substep (where the mesh's motion carries the cell centre in `dt`, over `dt`:
//! translation and rotation together), so the boundary stage sets u.n = u_solid.n on their
//! faces. The cells are uploaded over the scene's static SOLID cells each substep.
//!
//! With `cut_faces` (the default) the mesh also cuts the faces near its surface, as the static
//! solids do (src/scene/fractions.rs): the open fractions come from its signed distance at
//! the grid's nodes where it is at the substep's start, a cell whose faces it closes whole is
//! SOLID_CLOSED and a cell whose centre it holds with a face still open is SOLID_PARTIAL, so
//! the fluid sees the mesh slide across a cell as a smooth change of its faces, not as a
//! cell switching from fluid to solid at once.

use crate::scene::fractions;
use crate::scene::mesh::{load_placed, Placement, SolidMesh};
use crate::scene::motion::{pose_at, Keyframe};
use crate::scene::{Scene, Shape};
use glam::{DQuat, DVec3};

/// One moving mesh: the mesh scaled but not placed, and its path.
struct Mover {
    local: SolidMesh,
    keys: Vec<Keyframe>,
}

/// The scene's moving meshes and the grid they are stamped into.
pub struct MovingSolids {
    movers: Vec<Mover>,
    /// SOLID cells and velocities of the scene's other solids.
    static_solid: Vec<u32>,
    static_vel: Vec<[f32; 4]>,
    /// The static solids' open face fractions (every face open where they cut none), when
    /// the scene cuts faces.
    static_open: Option<Vec<f32>>,
    pub solid: Vec<u32>,
    pub vel: Vec<[f32; 4]>,
    /// The faces' open fractions after the last stamp (with `cut_faces`).
    pub open: Option<Vec<f32>>,
    /// Largest speed of a moving cell at the last stamp, m/s.
    pub max_speed: f64,
    /// Every mesh's pose at the last stamp, when all of them were at rest: nothing to
    /// stamp again until one moves.
    resting: Option<Vec<Pose>>,
}

/// (rotation_deg, translation) on a path.
type Pose = ((f64, f64, f64), (f64, f64, f64));

fn rotation(deg: (f64, f64, f64)) -> DQuat {
    (DQuat::from_rotation_z(deg.2.to_radians())
        * DQuat::from_rotation_y(deg.1.to_radians())
        * DQuat::from_rotation_x(deg.0.to_radians()))
    .normalize()
}

fn pose(keys: &[Keyframe], t: f64) -> (DQuat, DVec3) {
    let (r, x) = pose_at(keys, t);
    (rotation(r), DVec3::new(x.0, x.1, x.2))
}

impl MovingSolids {
    /// `None` when the scene has no keyframed mesh.
    pub fn from_scene(scene: &Scene) -> Result<Option<Self>, String> {
        let mut movers = Vec::new();
        let mut fixed = scene.clone();
        fixed.solids.clear();
        for (i, s) in scene.solids.iter().enumerate() {
            match s {
                Shape::Mesh {
                    path,
                    scale,
                    keyframes,
                    loaded,
                    ..
                } if !keyframes.is_empty() => {
                    let base = loaded
                        .get()
                        .map(|m| m.base.clone())
                        .ok_or_else(|| format!("solids[{i}]: mesh {path} is not loaded"))?;
                    let placement = Placement {
                        scale: *scale,
                        rotation_deg: (0.0, 0.0, 0.0),
                        translation: (0.0, 0.0, 0.0),
                    };
                    let local = load_placed(path, &placement, &base)
                        .map_err(|e| format!("solids[{i}]: {e}"))?;
                    movers.push(Mover {
                        local,
                        keys: keyframes.clone(),
                    });
                }
                other => fixed.solids.push(other.clone()),
            }
        }
        if movers.is_empty() {
            return Ok(None);
        }
        let crate::scene::fractions::StaticSolids {
            flags: static_solid,
            velocity: static_vel,
            open,
        } = fixed.static_solids();
        let static_open = scene
            .cut_faces
            .then(|| open.unwrap_or_else(|| scene.every_face_open()));
        Ok(Some(Self {
            movers,
            solid: static_solid.clone(),
            vel: static_vel.clone(),
            open: static_open.clone(),
            static_solid,
            static_vel,
            static_open,
            max_speed: 0.0,
            resting: None,
        }))
    }

    /// Largest speed any moving mesh reaches on its path, m/s (for the CFL step before
    /// the first stamp): the fastest key interval's translation, plus the fastest turn
    /// times the mesh's reach.
    pub fn path_speed(&self) -> f64 {
        let mut v: f64 = self.max_speed;
        for m in &self.movers {
            let (lo, hi) = m.local.bounds;
            let reach = (0..3)
                .map(|a| lo[a].abs().max(hi[a].abs()).powi(2))
                .sum::<f64>()
                .sqrt();
            for w in m.keys.windows(2) {
                let dt = w[1].time - w[0].time;
                let (a, b) = (w[0].translation, w[1].translation);
                let d = DVec3::new(b.0 - a.0, b.1 - a.1, b.2 - a.2).length();
                let (ra, rb) = (rotation(w[0].rotation_deg), rotation(w[1].rotation_deg));
                let angle = ra.angle_between(rb);
                v = v.max((d + angle * reach) / dt);
            }
        }
        v
    }

    /// Stamps every moving mesh where it is at `t`, with its cells' velocities over
    /// [t, t + dt], over the static solids (`solid`, `vel`).
    /// Returns whether the cells changed since the last stamp (false while every mesh
    /// rests where the last stamp put it: no upload needed).
    pub fn stamp(&mut self, scene: &Scene, t: f64, dt: f64) -> bool {
        let at_t: Vec<Pose> = self.movers.iter().map(|m| pose_at(&m.keys, t)).collect();
        let still = self
            .movers
            .iter()
            .zip(&at_t)
            .all(|(m, p)| pose_at(&m.keys, t + dt) == *p);
        if still && self.resting.as_ref() == Some(&at_t) {
            return false;
        }
        self.resting = still.then_some(at_t);
        self.solid.copy_from_slice(&self.static_solid);
        self.vel.copy_from_slice(&self.static_vel);
        if let (Some(open), Some(base)) = (self.open.as_mut(), self.static_open.as_ref()) {
            open.copy_from_slice(base);
        }
        let dims = scene.dims();
        let h = scene.h();
        let mut fastest: f64 = 0.0;
        let mut regions = Vec::new();
        for m in &self.movers {
            let (q0, x0) = pose(&m.keys, t);
            let (q1, x1) = pose(&m.keys, t + dt);
            let inv = q0.inverse();
            // World bounds of the mesh at t: its local box's corners placed.
            let (lo, hi) = m.local.bounds;
            let mut wlo = DVec3::splat(f64::INFINITY);
            let mut whi = DVec3::splat(f64::NEG_INFINITY);
            for c in 0..8 {
                let p = DVec3::new(
                    if c & 1 == 0 { lo[0] } else { hi[0] },
                    if c & 2 == 0 { lo[1] } else { hi[1] },
                    if c & 4 == 0 { lo[2] } else { hi[2] },
                );
                let w = q0 * p + x0;
                wlo = wlo.min(w);
                whi = whi.max(w);
            }
            let range = |a: usize| {
                let first = (wlo[a] / h - 0.5).ceil().max(0.0);
                let last = (whi[a] / h - 0.5).floor().min(dims[a] as f64 - 1.0);
                (first as u32, last)
            };
            let (rx, ry, rz) = (range(0), range(1), range(2));
            if let Some(open) = self.open.as_mut() {
                let mesh = Placed {
                    local: &m.local,
                    inv,
                    x0,
                };
                regions.push(mesh.cut(dims, h, wlo, whi, open));
            }
            if rx.1 < rx.0 as f64 || ry.1 < ry.0 as f64 || rz.1 < rz.0 as f64 {
                continue;
            }
            for k in rz.0..=rz.1 as u32 {
                for j in ry.0..=ry.1 as u32 {
                    for i in rx.0..=rx.1 as u32 {
                        let p = DVec3::new(
                            (i as f64 + 0.5) * h,
                            (j as f64 + 0.5) * h,
                            (k as f64 + 0.5) * h,
                        );
                        let local = inv * (p - x0);
                        if !m.local.contains(local.to_array()) {
                            continue;
                        }
                        let v = (q1 * local + x1 - p) / dt;
                        fastest = fastest.max(v.length());
                        let c = (i + dims[0] * (j + dims[1] * k)) as usize;
                        self.solid[c] = 1;
                        self.vel[c] = [v.x as f32, v.y as f32, v.z as f32, 0.0];
                    }
                }
            }
        }
        if let Some(open) = self.open.as_ref() {
            for r in regions.iter().flatten() {
                classify_cut_cells(dims, *r, open, &self.static_solid, &mut self.solid);
            }
        }
        self.max_speed = fastest;
        true
    }
}

/// A moving mesh where it is: world point p is `inv * (p - x0)` in the mesh's frame.
struct Placed<'a> {
    local: &'a SolidMesh,
    inv: DQuat,
    x0: DVec3,
}

impl Placed<'_> {
    /// Closes the part of every face near the mesh that it covers: each face whose corners
    /// lie in the mesh's bounds (one cell around) takes the smaller of its open fraction and
    /// the mesh's. Returns the cells it may have changed (lo, hi exclusive).
    fn cut(
        &self,
        dims: [u32; 3],
        h: f64,
        wlo: DVec3,
        whi: DVec3,
        open: &mut [f32],
    ) -> Option<([usize; 3], [usize; 3])> {
        let n = dims.map(|v| v as usize);
        let lo: [usize; 3] =
            std::array::from_fn(|a| ((wlo[a] / h).floor() - 1.0).max(0.0) as usize);
        let hi: [usize; 3] =
            std::array::from_fn(|a| (((whi[a] / h).ceil() + 1.0).max(0.0) as usize).min(n[a]));
        if (0..3).any(|a| lo[a] >= hi[a]) {
            return None;
        }
        let ext = [hi[0] - lo[0] + 1, hi[1] - lo[1] + 1, hi[2] - lo[2] + 1];
        let phi = crate::scene::mesh::parallel_cells(ext[0] * ext[1] * ext[2], |q| {
            let x = [q % ext[0], (q / ext[0]) % ext[1], q / (ext[0] * ext[1])];
            let p = DVec3::new(
                (lo[0] + x[0]) as f64 * h,
                (lo[1] + x[1]) as f64 * h,
                (lo[2] + x[2]) as f64 * h,
            );
            self.local.sdf((self.inv * (p - self.x0)).to_array())
        });
        let node = |x: [usize; 3]| {
            phi[(x[0] - lo[0]) + ext[0] * ((x[1] - lo[1]) + ext[1] * (x[2] - lo[2]))]
        };
        for comp in 0..3 {
            let mut d = n;
            d[comp] += 1;
            // Faces whose four corners are nodes of the region.
            let mut top = hi;
            for (a, t) in top.iter_mut().enumerate() {
                if a != comp {
                    *t -= 1;
                }
            }
            for k in lo[2]..=top[2].min(d[2] - 1) {
                for j in lo[1]..=top[1].min(d[1] - 1) {
                    for i in lo[0]..=top[0].min(d[0] - 1) {
                        let f = [i, j, k];
                        let g = fractions::face_slot(n, comp, f);
                        let frac = fractions::snap(fractions::face_open_at(node, comp, f, false));
                        open[g] = open[g].min(frac);
                    }
                }
            }
        }
        // The cells around the faces that changed.
        Some((
            std::array::from_fn(|a| lo[a].saturating_sub(1)),
            std::array::from_fn(|a| (hi[a] + 1).min(n[a])),
        ))
    }
}

/// After the stamps: a cell whose six faces are closed is SOLID_CLOSED; a cell a mesh
/// stamped (its centre inside) with a face still open is SOLID_PARTIAL, unless a static
/// solid already closes it.
fn classify_cut_cells(
    dims: [u32; 3],
    (lo, hi): ([usize; 3], [usize; 3]),
    open: &[f32],
    static_solid: &[u32],
    solid: &mut [u32],
) {
    use crate::gpu::constants::{SOLID_CLOSED, SOLID_PARTIAL};
    let n = dims.map(|v| v as usize);
    for k in lo[2]..hi[2] {
        for j in lo[1]..hi[1] {
            for i in lo[0]..hi[0] {
                let c = i + n[0] * (j + n[1] * k);
                solid[c] = if !fractions::has_open_face(open, n, [i, j, k]) {
                    SOLID_CLOSED
                } else if solid[c] == SOLID_CLOSED && static_solid[c] != SOLID_CLOSED {
                    SOLID_PARTIAL
                } else {
                    solid[c]
                };
            }
        }
    }
}
