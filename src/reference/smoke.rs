//! The smoke stages in f64 (src/sim/smoke/*.wgsl): marking with static solids and rigid
//! bodies (moving ones included), sources and splats, semi-Lagrangian / MacCormack advection,
//! vorticity confinement and buoyancy, and the per-step statistics. The boundary
//! conditions, divergence, pressure solve and projection are the liquid's (grid.rs,
//! pressure.rs): the smoke mode is the same grid with nz = 1.

use super::bodies::{body_cells, cover_faces, cross, RefBody};
use super::cut::Cut;
use super::{face_cells, face_index, for_each_face, interpolate, stencil_nodes, Grid, MacField};
use super::{FLUID, SOLID};
use crate::gpu::constants::{SOLID_CLOSED, SOLID_PARTIAL};
use crate::scene::fractions::face_slot;

/// Dye rgb and temperature (w) per cell.
pub type Dye = Vec<[f64; 4]>;

/// A region of the slice (x and y only; the slice is one cell thick).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Region {
    Box {
        lo: [f64; 2],
        hi: [f64; 2],
    },
    Disc {
        centre: [f64; 2],
        radius: f64,
    },
    /// Weight exp(-|x - centre|^2 / radius^2) everywhere.
    Gaussian {
        centre: [f64; 2],
        radius: f64,
    },
}

impl Region {
    /// 1 inside a box or disc (0 outside), the gaussian's weight.
    pub fn weight(&self, x: [f64; 3]) -> f64 {
        match *self {
            Region::Box { lo, hi } => {
                (x[0] >= lo[0] && x[1] >= lo[1] && x[0] <= hi[0] && x[1] <= hi[1]) as u8 as f64
            }
            Region::Disc { centre, radius } => {
                let (dx, dy) = (x[0] - centre[0], x[1] - centre[1]);
                (dx * dx + dy * dy <= radius * radius) as u8 as f64
            }
            Region::Gaussian { centre, radius } => {
                let (dx, dy) = (x[0] - centre[0], x[1] - centre[1]);
                (-(dx * dx + dy * dy) / (radius * radius)).exp()
            }
        }
    }
}

/// A source or splat: inside a box or disc, dye/temperature are raised to `dye` and the
/// velocity set to `velocity` when `set_velocity`; a gaussian adds weight x `dye` and
/// weight x `velocity`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Source {
    pub region: Region,
    pub dye: [f64; 4],
    pub velocity: [f64; 3],
    pub set_velocity: bool,
}

/// The settings of one smoke substep.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Params {
    /// Unit vector against gravity.
    pub up: [f64; 3],
    /// Per-substep factors of dye r, g, b and temperature, and of the velocity.
    pub dye_decay: [f64; 4],
    pub velocity_decay: f64,
    pub buoyancy: f64,
    pub dye_weight: f64,
    pub ambient: f64,
    /// Confinement epsilon.
    pub vorticity: f64,
    /// MacCormack instead of plain semi-Lagrangian.
    pub maccormack: bool,
}

pub fn cell_centre(g: &Grid, c: usize) -> [f64; 3] {
    let x = g.coord(c);
    [0, 1, 2].map(|a| (x[a] as f64 + 0.5) * g.h)
}

pub fn face_position(g: &Grid, comp: usize, f: [usize; 3]) -> [f64; 3] {
    let mut x = [0, 1, 2].map(|a| (f[a] as f64 + 0.5) * g.h);
    x[comp] = f[comp] as f64 * g.h;
    x
}

/// A rigid body in the slice as the marking stage stamps it: its shape and its velocity
/// and angular velocity (the point velocity v + w x r goes to its cells).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MovingSolid {
    pub body: RefBody,
    pub velocity: [f64; 3],
    pub omega: [f64; 3],
}

/// Rounds of closing pockets after the bodies are stamped (src/sim/bodies/coupling.wgsl).
const POCKET_ROUNDS: usize = 2;

/// Cell types and solid velocities of a smoke step: the static solids, then the bodies over
/// them (a cell whose centre lies in a body takes the first such body's v + w x r), then,
/// when there are bodies, two rounds that close pockets (a non-solid cell with solids or
/// walls on three of its four in-plane sides becomes SOLID at rest; each round decides
/// every cell before filling any) and a pass that fills the cells left closed on all four.
/// Dye inside every SOLID cell is cleared.
pub fn mark(
    g: &Grid,
    static_solid: &[u32],
    static_vel: &[[f64; 3]],
    bodies: &[MovingSolid],
    dye: &mut Dye,
) -> (Vec<u8>, Vec<[f64; 3]>) {
    let (types, solid_vel, _) = mark_bodies(g, static_solid, static_vel, None, bodies, dye);
    (types, solid_vel)
}

/// The velocity of body `b` at `x`: v + w x r.
fn point_velocity(b: &MovingSolid, x: [f64; 3]) -> [f64; 3] {
    let wr = cross(b.omega, [0, 1, 2].map(|a| x[a] - b.body.centre[a]));
    [0, 1, 2].map(|a| b.velocity[a] + wr[a])
}

/// [`mark`] for bodies that cut faces (`Scene::bodies_cut_faces`; coupling.wgsl's
/// `cover_faces` and `stamp`), from the static solids' open fractions `static_open` (None:
/// every face open). A body's cell with a face still open is a cut cell (SOLID_PARTIAL,
/// FLUID for the solve), one with none is SOLID; a cell outside the bodies with a face one
/// covers carries that body's velocity. Returns the cut the later stages see: the open
/// fractions the bodies leave, the solid flags, velocities and bodies per cell.
pub fn mark_cut(
    g: &Grid,
    static_solid: &[u32],
    static_vel: &[[f64; 3]],
    static_open: Option<&[f32]>,
    bodies: &[MovingSolid],
    dye: &mut Dye,
) -> (Vec<u8>, Vec<[f64; 3]>, Cut) {
    let (types, solid_vel, cut) =
        mark_bodies(g, static_solid, static_vel, Some(static_open), bodies, dye);
    (
        types,
        solid_vel,
        cut.expect("bodies that cut faces give a cut"),
    )
}

/// The part of each face a body uncovered since the last substep joins the air at that
/// body's velocity (coupling.wgsl's `cover_faces` with `uncover`, the smoke's, whose face
/// velocities carry over): where a face's open fraction grew from `last_open` to `open` and
/// `last_cover` names the body that covered it, u = (o u + (o' - o) u_b) / o', u_b the body's
/// v + w x r at the face's centre. Fractions and covers are per face slot (u, v, w back to
/// back, as the GPU holds them).
pub fn uncover(
    g: &Grid,
    bodies: &[MovingSolid],
    (last_cover, last_open): (&[u32], &[f32]),
    open: &[f32],
    vel: &mut MacField,
) {
    let n = g.n();
    for_each_face(g, |comp, f, i| {
        let slot = face_slot(n, comp, f);
        let owner = (last_cover[slot] >> 24) as usize;
        let (was, now) = (last_open[slot] as f64, open[slot] as f64);
        if owner == 0 || owner > bodies.len() || now <= was {
            return;
        }
        let x = face_position(g, comp, f);
        let ub = point_velocity(&bodies[owner - 1], x)[comp];
        let u = &mut vel.comp_mut(comp)[i];
        *u = (was * *u + (now - was) * ub) / now;
    });
}

/// [`mark`] (`cut_faces` None: whole cells) and [`mark_cut`] (`Some(static_open)`).
fn mark_bodies(
    g: &Grid,
    static_solid: &[u32],
    static_vel: &[[f64; 3]],
    cut_faces: Option<Option<&[f32]>>,
    bodies: &[MovingSolid],
    dye: &mut Dye,
) -> (Vec<u8>, Vec<[f64; 3]>, Option<Cut>) {
    let slice = g.nz == 1;
    let n = g.n();
    let mut types = vec![FLUID; g.cells()];
    let mut solid_vel = vec![[0.0; 3]; g.cells()];
    let mut flags = static_solid.to_vec();
    for c in 0..g.cells() {
        // A cut cell (SOLID_PARTIAL) stays FLUID: the solve reaches it through its open
        // faces.
        if static_solid[c] != 0 {
            if static_solid[c] != SOLID_PARTIAL {
                types[c] = SOLID;
            }
            solid_vel[c] = static_vel[c];
        }
    }
    let shapes: Vec<RefBody> = bodies.iter().map(|b| b.body).collect();
    let covers = cut_faces.map(|base| cover_faces(*g, &shapes, base, slice));
    let mut carried = vec![0u32; g.cells()];
    // The faces of cell `x` between it and another cell, in coupling.wgsl's order (-x, +x,
    // -y, +y, -z, +z), as face slots.
    let inner_faces = |x: [usize; 3]| {
        let axes = if slice { 2 } else { 3 };
        (0..axes).flat_map(move |a| {
            [-1i64, 1].into_iter().filter_map(move |s| {
                let mut y = x.map(|v| v as i64);
                y[a] += s;
                if y[a] < 0 || y[a] >= n[a] as i64 {
                    return None;
                }
                let f = if s > 0 { y.map(|v| v as usize) } else { x };
                Some(face_slot(n, a, f))
            })
        })
    };
    let ids = body_cells(*g, &shapes, slice);
    for (c, &id) in ids.iter().enumerate() {
        if id == 0 {
            continue;
        }
        let b = &bodies[id as usize - 1];
        let cut = covers
            .as_ref()
            .is_some_and(|(_, open)| inner_faces(g.coord(c)).any(|f| open[f] > 0.0));
        flags[c] = if cut { SOLID_PARTIAL } else { SOLID_CLOSED };
        carried[c] = id;
        if !cut {
            types[c] = SOLID;
        }
        solid_vel[c] = point_velocity(b, cell_centre(g, c));
    }
    if let Some((cover, _)) = &covers {
        for c in 0..g.cells() {
            if ids[c] != 0 || flags[c] != 0 {
                continue;
            }
            let k = inner_faces(g.coord(c))
                .map(|f| cover[f] >> 24)
                .find(|&k| k != 0);
            if let Some(k) = k {
                solid_vel[c] = point_velocity(&bodies[k as usize - 1], cell_centre(g, c));
                carried[c] = k;
            }
        }
    }
    if !bodies.is_empty() {
        let axes = if slice { 2 } else { 3 };
        // The rounds, then a last pass that takes only cells closed on every side (the
        // last round may close one in: it would have no row in A). A cell with a solid
        // flag is never filled; a cut cell is open (coupling.wgsl's `walled_or_solid`).
        for round in 0..=POCKET_ROUNDS {
            let open_allowed = if round < POCKET_ROUNDS { 1 } else { 0 };
            let closed = |c: usize, flags: &[u32]| {
                let x = g.coord(c);
                let mut n = 0;
                for a in 0..axes {
                    for s in [-1i64, 1] {
                        let mut y = x.map(|v| v as i64);
                        y[a] += s;
                        let outside = y[a] < 0 || y[a] >= g.n()[a] as i64;
                        let walled = outside || {
                            let [i, j, k] = y.map(|v| v as usize);
                            let f = flags[g.cell(i, j, k)];
                            f != 0 && f != SOLID_PARTIAL
                        };
                        n += walled as usize;
                    }
                }
                n + open_allowed >= 2 * axes
            };
            let pockets: Vec<usize> = (0..g.cells())
                .filter(|&c| flags[c] == 0 && closed(c, &flags))
                .collect();
            for c in pockets {
                types[c] = SOLID;
                solid_vel[c] = [0.0; 3];
                flags[c] = SOLID_CLOSED;
                carried[c] = 0;
            }
        }
    }
    for c in 0..g.cells() {
        if types[c] == SOLID {
            dye[c] = [0.0; 4];
        }
    }
    let cut = covers.map(|(_, open)| {
        let open: Vec<f32> = open.iter().map(|&o| o as f32).collect();
        let mut cut = Cut::new(g, &open, flags, solid_vel.clone());
        cut.body = carried;
        cut
    });
    (types, solid_vel, cut)
}

/// Sources raise dye/temperature to their value (and may set a jet velocity); splats add.
/// Faces next to a SOLID cell or a wall are left to the boundary conditions.
pub fn emit(g: &Grid, types: &[u8], sources: &[Source], dye: &mut Dye, vel: &mut MacField) {
    let adds = |s: &Source| matches!(s.region, Region::Gaussian { .. });
    for c in 0..g.cells() {
        if types[c] == SOLID {
            continue;
        }
        let x = cell_centre(g, c);
        let mut d = dye[c];
        for s in sources {
            let w = s.region.weight(x);
            if w <= 0.0 {
                continue;
            }
            for a in 0..4 {
                d[a] = if adds(s) {
                    d[a] + w * s.dye[a]
                } else {
                    d[a].max(s.dye[a])
                };
            }
        }
        dye[c] = d;
    }
    for_each_face(g, |comp, f, i| {
        let [a, b] = face_cells(comp, f);
        if g.type_at(types, a) == SOLID || g.type_at(types, b) == SOLID {
            return;
        }
        let x = face_position(g, comp, f);
        let mut u = vel.comp(comp)[i];
        for s in sources {
            let w = s.region.weight(x);
            if w <= 0.0 {
                continue;
            }
            if adds(s) {
                u += w * s.velocity[comp];
            } else if s.set_velocity {
                u = s.velocity[comp];
            }
        }
        vel.comp_mut(comp)[i] = u;
    });
}

/// RK2 trace from `x` over time `t` through `vel` (negative `t`: back-trace).
pub fn trace(g: &Grid, vel: &MacField, x: [f64; 3], t: f64) -> [f64; 3] {
    let u = interpolate(g, vel, x);
    let mid = [0, 1, 2].map(|a| x[a] + 0.5 * t * u[a]);
    let um = interpolate(g, vel, mid);
    [0, 1, 2].map(|a| x[a] + t * um[a])
}

/// A sample with the range of the values it interpolated.
struct Sample<T> {
    value: T,
    lo: T,
    hi: T,
}

fn face_sample(g: &Grid, data: &[f64], comp: usize, x: [f64; 3]) -> Sample<f64> {
    let mut s = Sample {
        value: 0.0,
        lo: f64::INFINITY,
        hi: f64::NEG_INFINITY,
    };
    for (i, w) in stencil_nodes(g, comp, x) {
        s.value += w * data[i];
        s.lo = s.lo.min(data[i]);
        s.hi = s.hi.max(data[i]);
    }
    s
}

/// Trilinear sample of cell-centred `q` at `x`, skipping SOLID cells and renormalising.
fn cell_sample(g: &Grid, types: &[u8], q: &Dye, x: [f64; 3]) -> Sample<[f64; 4]> {
    let n = g.n();
    let mut base = [0usize; 3];
    let mut next = [0usize; 3];
    let mut f = [0.0; 3];
    for a in 0..3 {
        let gc = (x[a] / g.h - 0.5).clamp(0.0, (n[a] - 1) as f64);
        base[a] = (gc.floor() as usize).min(n[a] - 1);
        next[a] = (base[a] + 1).min(n[a] - 1);
        f[a] = gc - base[a] as f64;
    }
    let mut s = Sample {
        value: [0.0; 4],
        lo: [f64::INFINITY; 4],
        hi: [f64::NEG_INFINITY; 4],
    };
    let mut wsum = 0.0;
    for corner in 0..8 {
        let mut node = [0; 3];
        let mut w = 1.0;
        for a in 0..3 {
            let hi = corner & (1 << a) != 0;
            node[a] = if hi { next[a] } else { base[a] };
            w *= if hi { f[a] } else { 1.0 - f[a] };
        }
        let c = g.cell(node[0], node[1], node[2]);
        if types[c] == SOLID {
            continue;
        }
        wsum += w;
        for a in 0..4 {
            s.value[a] += w * q[c][a];
            s.lo[a] = s.lo[a].min(q[c][a]);
            s.hi[a] = s.hi[a].max(q[c][a]);
        }
    }
    if wsum <= 0.0 {
        return Sample {
            value: [0.0; 4],
            lo: [0.0; 4],
            hi: [0.0; 4],
        };
    }
    s.value = s.value.map(|v| v / wsum);
    s
}

/// Advects the face velocities and the dye through `vel` (the velocity at the start of
/// the stage) with the scheme and dissipation of `p`.
pub fn advect(g: &Grid, types: &[u8], p: &Params, dt: f64, vel: &mut MacField, dye: &mut Dye) {
    let vel_old = vel.clone();
    let dye_old = dye.clone();
    let maccormack = p.maccormack;
    let mut vel_hat = MacField::zeros(g);
    for_each_face(g, |comp, f, i| {
        let x = face_position(g, comp, f);
        vel_hat.comp_mut(comp)[i] =
            face_sample(g, vel_old.comp(comp), comp, trace(g, &vel_old, x, -dt)).value;
    });
    let decay = p.velocity_decay;
    for_each_face(g, |comp, f, i| {
        let mut q = vel_hat.comp(comp)[i];
        if maccormack {
            let x = face_position(g, comp, f);
            let back = face_sample(g, vel_old.comp(comp), comp, trace(g, &vel_old, x, -dt));
            let tilde = face_sample(g, vel_hat.comp(comp), comp, trace(g, &vel_old, x, dt)).value;
            q = (q + 0.5 * (vel_old.comp(comp)[i] - tilde)).clamp(back.lo, back.hi);
        }
        vel.comp_mut(comp)[i] = q * decay;
    });
    let mut dye_hat = vec![[0.0; 4]; g.cells()];
    for c in 0..g.cells() {
        if types[c] != SOLID {
            let x = cell_centre(g, c);
            dye_hat[c] = cell_sample(g, types, &dye_old, trace(g, &vel_old, x, -dt)).value;
        }
    }
    let dd = p.dye_decay;
    for c in 0..g.cells() {
        if types[c] == SOLID {
            dye[c] = [0.0; 4];
            continue;
        }
        let mut q = dye_hat[c];
        if maccormack {
            let x = cell_centre(g, c);
            let back = cell_sample(g, types, &dye_old, trace(g, &vel_old, x, -dt));
            let tilde = cell_sample(g, types, &dye_hat, trace(g, &vel_old, x, dt)).value;
            for a in 0..4 {
                q[a] = (q[a] + 0.5 * (dye_old[c][a] - tilde[a])).clamp(back.lo[a], back.hi[a]);
            }
        }
        dye[c] = [0, 1, 2, 3].map(|a| q[a] * dd[a]);
    }
}

/// Cell-centred velocity (mean of the two faces per component).
pub fn centre_velocity(g: &Grid, vel: &MacField, x: [usize; 3]) -> [f64; 3] {
    [0, 1, 2].map(|comp| {
        let d = g.face_dims(comp);
        let mut hi = x;
        hi[comp] += 1;
        0.5 * (vel.comp(comp)[face_index(x, d)] + vel.comp(comp)[face_index(hi, d)])
    })
}

/// The neighbours of cell `x` along `axis`, clamped into the grid, and their distance (m).
fn neighbours(g: &Grid, x: [usize; 3], axis: usize) -> ([usize; 3], [usize; 3], f64) {
    let n = g.n();
    let mut lo = x;
    let mut hi = x;
    lo[axis] = x[axis].saturating_sub(1);
    hi[axis] = (x[axis] + 1).min(n[axis] - 1);
    (lo, hi, (hi[axis] - lo[axis]) as f64 * g.h)
}

/// Vorticity (xyz) and its magnitude (w) per cell; zero in SOLID cells. Central
/// differences of cell-centred velocities, one-sided at the walls.
pub fn vorticity(g: &Grid, types: &[u8], vel: &MacField) -> Vec<[f64; 4]> {
    let dvel = |x: [usize; 3], comp: usize, axis: usize| {
        let (lo, hi, s) = neighbours(g, x, axis);
        if s <= 0.0 {
            return 0.0;
        }
        (centre_velocity(g, vel, hi)[comp] - centre_velocity(g, vel, lo)[comp]) / s
    };
    (0..g.cells())
        .map(|c| {
            if types[c] == SOLID {
                return [0.0; 4];
            }
            let x = g.coord(c);
            let w = [
                dvel(x, 2, 1) - dvel(x, 1, 2),
                dvel(x, 0, 2) - dvel(x, 2, 0),
                dvel(x, 1, 0) - dvel(x, 0, 1),
            ];
            [
                w[0],
                w[1],
                w[2],
                (w[0] * w[0] + w[1] * w[1] + w[2] * w[2]).sqrt(),
            ]
        })
        .collect()
}

/// Confinement + buoyancy force per cell (m/s^2), zero in SOLID cells.
pub fn cell_forces(
    g: &Grid,
    types: &[u8],
    p: &Params,
    curl: &[[f64; 4]],
    dye: &Dye,
) -> Vec<[f64; 3]> {
    let eps = p.vorticity;
    let up = p.up;
    (0..g.cells())
        .map(|c| {
            if types[c] == SOLID {
                return [0.0; 3];
            }
            let x = g.coord(c);
            let mut eta = [0.0; 3];
            for (a, e) in eta.iter_mut().enumerate() {
                let (lo, hi, s) = neighbours(g, x, a);
                if s > 0.0 {
                    *e = (curl[g.cell(hi[0], hi[1], hi[2])][3]
                        - curl[g.cell(lo[0], lo[1], lo[2])][3])
                        / s;
                }
            }
            let mut f = [0.0; 3];
            let len = (eta[0] * eta[0] + eta[1] * eta[1] + eta[2] * eta[2]).sqrt();
            if eps > 0.0 && len * g.h > 1e-6 {
                let nv = eta.map(|e| e / len);
                let w = curl[c];
                let cross = [
                    nv[1] * w[2] - nv[2] * w[1],
                    nv[2] * w[0] - nv[0] * w[2],
                    nv[0] * w[1] - nv[1] * w[0],
                ];
                f = cross.map(|v| eps * g.h * v);
            }
            let q = dye[c];
            let b = p.buoyancy * (q[3] - p.ambient) - p.dye_weight * (q[0] + q[1] + q[2]) / 3.0;
            [0, 1, 2].map(|a| f[a] + b * up[a])
        })
        .collect()
}

/// Applies the cell forces over `dt` to the faces between two non-SOLID cells.
pub fn forces(g: &Grid, types: &[u8], p: &Params, dt: f64, vel: &mut MacField, dye: &Dye) {
    let curl = vorticity(g, types, vel);
    let force = cell_forces(g, types, p, &curl, dye);
    for_each_face(g, |comp, f, i| {
        let [a, b] = face_cells(comp, f);
        if g.type_at(types, a) == SOLID || g.type_at(types, b) == SOLID {
            return;
        }
        let fa = force[g.cell_at(a).unwrap()][comp];
        let fb = force[g.cell_at(b).unwrap()][comp];
        vel.comp_mut(comp)[i] += dt * 0.5 * (fa + fb);
    });
}

/// Sums over non-SOLID cells: (dye, dye * y, |omega|^2, |u|^2) per cell (not yet times the
/// cell volume), with the largest cell-centre speed.
pub fn stats(g: &Grid, types: &[u8], vel: &MacField, dye: &Dye) -> ([f64; 4], f64) {
    let curl = vorticity(g, types, vel);
    let mut s = [0.0; 4];
    let mut max_speed: f64 = 0.0;
    for c in 0..g.cells() {
        if types[c] == SOLID {
            continue;
        }
        let u = centre_velocity(g, vel, g.coord(c));
        let m = (dye[c][0] + dye[c][1] + dye[c][2]) / 3.0;
        let w = curl[c];
        let u2 = u[0] * u[0] + u[1] * u[1] + u[2] * u[2];
        s[0] += m;
        s[1] += m * cell_centre(g, c)[1];
        s[2] += w[0] * w[0] + w[1] * w[1] + w[2] * w[2];
        s[3] += u2;
        max_speed = max_speed.max(u2.sqrt());
    }
    (s, max_speed)
}
