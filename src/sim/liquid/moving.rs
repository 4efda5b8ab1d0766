//! Keyframed mesh solids (src/scene/motion.rs): before each substep the host places each
//! moving mesh where its path is at the substep's start, marks the cells whose centre it
//! holds SOLID over the static solids, and gives them the velocity their material point
//! has over the substep (where the mesh's motion carries the cell centre in `dt`, over `dt`:
//! translation and rotation together), so the boundary stage sets u.n = u_solid.n on their
//! faces. The cells are uploaded over the scene's static SOLID cells each substep.

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
    pub solid: Vec<u32>,
    pub vel: Vec<[f32; 4]>,
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
        let (static_solid, static_vel) = fixed.solid_cells();
        Ok(Some(Self {
            movers,
            solid: static_solid.clone(),
            vel: static_vel.clone(),
            static_solid,
            static_vel,
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
        let dims = scene.dims();
        let h = scene.h();
        let mut fastest: f64 = 0.0;
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
        self.max_speed = fastest;
        true
    }
}
