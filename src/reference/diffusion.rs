//! Implicit diffusion in f64: viscosity on the face velocities and heat/dye on the cells,
//! one backward-Euler step (I - k dt L) x = x_old solved to round-off. The GPU stage
//! (src/sim/core/diffusion.rs, src/sim/core/diffusion.wgsl) assembles exactly these rows.
//!
//! Velocity (component c on its faces). Unknown: a face with a FLUID cell on one side and
//! no SOLID (nor the domain's outside) on either. Its neighbours g = f +- e_a, a = k dt/h^2:
//! - an unknown: the coupling -a (the 7-point Laplacian);
//! - outside the face grid (across a domain wall, tangential): no-slip against the wall
//!   halfway between, the ghost 2 u_w - u_f: +2a on the diagonal and 2a u_w on the right,
//!   u_w the wall's sliding velocity along the component (0 but for a sliding lid);
//! - a face with SOLID on both sides (tangential): no-slip against that solid halfway
//!   between, the ghost 2 u_g - u_f: +2a on the diagonal, 2a u_g on the right;
//! - any other face touching SOLID (the wall face along c, or a tangential face half in a
//!   solid): its value is known (the boundary stage set it), +a and a u_g;
//! - in a slice (nz = 1), nothing along z: the slice is a 2D flow, not a thin gap;
//! - an AIR face (the liquid's free surface): the ghost copies u_f (zero normal
//!   derivative), so nothing: the surface neither drags the liquid toward the air's
//!   velocity (which is only extrapolated) nor pulls momentum out of it.
//!
//! Scalars (temperature, dye; channel k on the cells). Unknown: a FLUID cell. Neighbours:
//! FLUID cells couple; a domain wall holding a value s_w for the channel (Dirichlet, at
//! distance h/2: the ghost 2 s_w - s_c) adds 2a and 2a s_w; every other neighbour (an
//! insulated wall, SOLID, AIR) adds nothing (zero flux), so an insulated box keeps its
//! total exactly.
//!
//! The ghost rules make sin modes exact eigenvectors of the discrete operator (sampled at
//! the faces or cells, reflected antisymmetrically across walls halfway out), which the
//! analytic tests (tests/integration/diffusion.rs) rely on.

use super::{Grid, AIR, FLUID, SOLID};
use crate::scene::{Wall, WallValues};

/// A symmetric positive definite system on the unknowns of a field: rows of (column,
/// coefficient) off the diagonal, the diagonal, the right-hand side, and for each unknown
/// its index in the field.
#[derive(Clone, Debug, Default)]
pub struct DiffusionSystem {
    pub index: Vec<usize>,
    pub diag: Vec<f64>,
    pub off: Vec<Vec<(usize, f64)>>,
    pub rhs: Vec<f64>,
}

impl DiffusionSystem {
    fn apply(&self, x: &[f64], out: &mut [f64]) {
        for r in 0..x.len() {
            let mut s = self.diag[r] * x[r];
            for &(c, v) in &self.off[r] {
                s += v * x[c];
            }
            out[r] = s;
        }
    }

    /// Jacobi-preconditioned CG from x = rhs, to a relative residual of 1e-14 (2-norm).
    pub fn solve(&self) -> Vec<f64> {
        let n = self.rhs.len();
        let mut x = self.rhs.clone();
        let mut ax = vec![0.0; n];
        self.apply(&x, &mut ax);
        let mut r: Vec<f64> = (0..n).map(|i| self.rhs[i] - ax[i]).collect();
        let norm_b = self.rhs.iter().map(|v| v * v).sum::<f64>().sqrt();
        if norm_b == 0.0 {
            return vec![0.0; n];
        }
        let mut z: Vec<f64> = (0..n).map(|i| r[i] / self.diag[i]).collect();
        let mut d = z.clone();
        let mut rz: f64 = (0..n).map(|i| r[i] * z[i]).sum();
        let mut q = vec![0.0; n];
        for _ in 0..10 * n + 100 {
            let rn = r.iter().map(|v| v * v).sum::<f64>().sqrt();
            if rn <= 1e-14 * norm_b {
                break;
            }
            self.apply(&d, &mut q);
            let dq: f64 = (0..n).map(|i| d[i] * q[i]).sum();
            if dq <= 0.0 {
                break;
            }
            let alpha = rz / dq;
            for i in 0..n {
                x[i] += alpha * d[i];
                r[i] -= alpha * q[i];
                z[i] = r[i] / self.diag[i];
            }
            let rz_new: f64 = (0..n).map(|i| r[i] * z[i]).sum();
            let beta = rz_new / rz;
            rz = rz_new;
            for i in 0..n {
                d[i] = z[i] + beta * d[i];
            }
        }
        x
    }
}

fn cell_type(g: &Grid, types: &[u8], c: [i64; 3]) -> u8 {
    g.cell_at(c).map_or(SOLID, |i| types[i])
}

fn face_index(d: [usize; 3], f: [i64; 3]) -> usize {
    f[0] as usize + d[0] * (f[1] as usize + d[1] * f[2] as usize)
}

fn in_dims(d: [usize; 3], f: [i64; 3]) -> bool {
    (0..3).all(|a| f[a] >= 0 && (f[a] as usize) < d[a])
}

/// What a face of component `comp` is for the velocity diffusion.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FaceKind {
    Unknown,
    /// Touches SOLID (or the domain wall) on both sides.
    FullySolid,
    /// Touches SOLID on one side: its value is fixed by the boundary condition.
    Fixed,
    /// No FLUID on either side and no SOLID: air beyond the free surface.
    Air,
}

pub fn face_kind(g: &Grid, types: &[u8], comp: usize, f: [i64; 3]) -> FaceKind {
    let mut lo = f;
    lo[comp] -= 1;
    let (a, b) = (cell_type(g, types, lo), cell_type(g, types, f));
    match (a == SOLID, b == SOLID) {
        (true, true) => FaceKind::FullySolid,
        (true, false) | (false, true) => FaceKind::Fixed,
        _ if a == FLUID || b == FLUID => FaceKind::Unknown,
        _ => {
            debug_assert!(a == AIR && b == AIR);
            FaceKind::Air
        }
    }
}

/// The velocity system of component `comp`: `vel` holds u, v, w back to back (as on the
/// GPU), `a` = nu dt / h^2.
pub fn velocity_system(
    g: &Grid,
    types: &[u8],
    vel: &[f64],
    comp: usize,
    a: f64,
    slide: [f64; 4],
) -> DiffusionSystem {
    let d = g.face_dims(comp);
    let offset: usize = (0..comp)
        .map(|c| g.face_dims(c).iter().product::<usize>())
        .sum();
    let count: usize = d.iter().product();
    let mut row_of = vec![usize::MAX; count];
    let mut sys = DiffusionSystem::default();
    let coord = |i: usize| {
        [
            (i % d[0]) as i64,
            ((i / d[0]) % d[1]) as i64,
            (i / (d[0] * d[1])) as i64,
        ]
    };
    for (i, row) in row_of.iter_mut().enumerate() {
        if face_kind(g, types, comp, coord(i)) == FaceKind::Unknown {
            *row = sys.index.len();
            sys.index.push(offset + i);
        }
    }
    for &gi in &sys.index {
        let f = coord(gi - offset);
        let mut diag = 1.0;
        let mut rhs = vel[gi];
        let mut off = Vec::new();
        // A slice (nz = 1) is a 2D flow: no shear against its front and back.
        for ax in 0..if g.nz == 1 { 2 } else { 3 } {
            for s in [-1i64, 1] {
                let mut n = f;
                n[ax] += s;
                if !in_dims(d, n) {
                    diag += 2.0 * a;
                    // Walls 0 left, 1 right (x), 2 bottom, 3 top (y): they slide along the
                    // other in-plane axis.
                    if ax < 2 && comp < 2 && comp != ax {
                        rhs += 2.0 * a * slide[2 * ax + (s > 0) as usize];
                    }
                    continue;
                }
                let ni = face_index(d, n);
                match face_kind(g, types, comp, n) {
                    FaceKind::Unknown => {
                        diag += a;
                        off.push((row_of[ni], -a));
                    }
                    FaceKind::FullySolid if ax != comp => {
                        diag += 2.0 * a;
                        rhs += 2.0 * a * vel[offset + ni];
                    }
                    FaceKind::FullySolid | FaceKind::Fixed => {
                        diag += a;
                        rhs += a * vel[offset + ni];
                    }
                    FaceKind::Air => {}
                }
            }
        }
        sys.diag.push(diag);
        sys.off.push(off);
        sys.rhs.push(rhs);
    }
    sys
}

/// One backward-Euler step of viscosity `nu` (m^2/s) over `dt` on all three components;
/// faces that are not unknowns keep their values.
pub fn diffuse_velocity(g: &Grid, types: &[u8], vel: &[f64], nu: f64, dt: f64) -> Vec<f64> {
    diffuse_velocity_sliding(g, types, vel, nu, dt, [0.0; 4])
}

/// [`diffuse_velocity`] with the domain walls sliding: `slide` is the tangential velocity
/// of the left, right (along y) and bottom, top (along x) walls, m/s.
pub fn diffuse_velocity_sliding(
    g: &Grid,
    types: &[u8],
    vel: &[f64],
    nu: f64,
    dt: f64,
    slide: [f64; 4],
) -> Vec<f64> {
    let a = nu * dt / (g.h * g.h);
    let mut out = vel.to_vec();
    for comp in 0..3 {
        let sys = velocity_system(g, types, vel, comp, a, slide);
        for (r, x) in sys.solve().into_iter().enumerate() {
            out[sys.index[r]] = x;
        }
    }
    out
}

/// A body's velocity and angular velocity.
pub type RigidVelocity = ([f64; 3], [f64; 3]);

/// A body's shape for [`diffuse_velocity_coupled`]: a sphere (a slice's cylinder), or a
/// box with its half extents and the world directions of its axes.
#[derive(Clone, Copy, Debug)]
pub enum RefShape {
    Sphere { radius: f64 },
    Box { half: [f64; 3], axes: [[f64; 3]; 3] },
}

/// A dynamic body in [`diffuse_velocity_coupled`]: its centre (m), shape, mass (kg), world
/// inertia (kg m^2, rows) and the velocity and angular velocity it starts the step with.
#[derive(Clone, Copy, Debug)]
pub struct RefViscousBody {
    /// Whether its velocity is an unknown (a dynamic body); a kinematic or fixed body's
    /// faces keep their values.
    pub coupled: bool,
    pub centre: [f64; 3],
    pub shape: RefShape,
    pub mass: f64,
    pub inertia: [[f64; 3]; 3],
    pub vel: [f64; 3],
    pub omega: [f64; 3],
}

impl RefViscousBody {
    /// Signed distance from `x` to the body's surface (m, negative inside; a slice's bodies
    /// are prisms across z), as shape.wgsl's `body_distance`.
    pub fn distance(&self, x: [f64; 3], slice: bool) -> f64 {
        let mut d: [f64; 3] = std::array::from_fn(|i| x[i] - self.centre[i]);
        if slice {
            d[2] = 0.0;
        }
        match self.shape {
            RefShape::Sphere { radius } => {
                (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt() - radius
            }
            RefShape::Box { half, axes } => {
                let mut q: [f64; 3] = std::array::from_fn(|a| {
                    let l = d[0] * axes[a][0] + d[1] * axes[a][1] + d[2] * axes[a][2];
                    l.abs() - half[a]
                });
                if slice {
                    q[2] = -1e30;
                }
                let outside = q.iter().map(|v| v.max(0.0).powi(2)).sum::<f64>().sqrt();
                outside + q[0].max(q[1]).max(q[2]).min(0.0)
            }
        }
    }
}

/// One backward-Euler viscosity step with the dynamic bodies' velocities unknowns too
/// (src/sim/bodies/viscous.wgsl writes out the system): the faces' rows as
/// [`velocity_system`]'s, but a face body k covers at least half of (`covered[face]` =
/// (k + 1, its share), the faces indexed as `vel`) is fixed like a solid's, one it covers
/// less of has the liquid's share of the face (1 - share) as its mass, and a link of a
/// coupled body
/// (a face it covers, else one whose SOLID cell is its, `owner[cell]` = k + 1, both cells
/// the same body's for a face inside it) takes the body's rigid velocity there,
/// e . (v + w x r) at the face's centre, as an unknown instead of the face's value; the
/// body's six rows are M (q - q*) = the links' viscous impulse. The
/// whole system, faces and bodies, is solved at once (Jacobi PCG, f64). `m_face` is a
/// face's mass (rho h A_face, kg). In a slice (nz = 1) a body keeps its z velocity and its
/// turns about x and y. Returns the face velocities and each body's new (v, w).
#[allow(clippy::too_many_arguments)]
pub fn diffuse_velocity_coupled(
    g: &Grid,
    types: &[u8],
    (owner, covered): (&[usize], &[(usize, f64)]),
    vel: &[f64],
    nu: f64,
    dt: f64,
    m_face: f64,
    bodies: &[RefViscousBody],
) -> (Vec<f64>, Vec<RigidVelocity>) {
    let a = nu * dt / (g.h * g.h);
    let slice = g.nz == 1;
    let offsets: Vec<usize> = (0..3)
        .map(|c| {
            (0..c)
                .map(|k| g.face_dims(k).iter().product::<usize>())
                .sum()
        })
        .collect();
    let coupling = Coupling {
        g,
        types,
        owner,
        covered,
        bodies,
        offsets,
        a,
        slice,
    };
    let offsets = &coupling.offsets;
    // Rows: every unknown face, then six per body.
    let mut row_of = vec![usize::MAX; vel.len()];
    let mut sys = DiffusionSystem::default();
    for comp in 0..3 {
        let d = g.face_dims(comp);
        for i in 0..d.iter().product::<usize>() {
            if coupling.kind_of(comp, face_coord(d, i)) == FaceKind::Unknown {
                row_of[offsets[comp] + i] = sys.index.len();
                sys.index.push(offsets[comp] + i);
            }
        }
    }
    let faces = sys.index.len();
    let n = faces + 6 * bodies.len();
    let mut rows = CoupledRows {
        faces,
        diag: vec![0.0; n],
        off: vec![Default::default(); n],
        rhs: vec![0.0; n],
    };
    for r in 0..faces {
        coupling.face_row(&mut rows, (r, sys.index[r]), vel, &row_of);
    }
    for (k, b) in bodies.iter().enumerate() {
        rows.body_rows(k, b, slice, m_face);
    }
    let full = DiffusionSystem {
        index: (0..n).collect(),
        diag: rows.diag,
        off: rows
            .off
            .into_iter()
            .map(|m| m.into_iter().collect())
            .collect(),
        rhs: rows.rhs,
    };
    let x = full.solve();
    let mut out = vel.to_vec();
    for r in 0..faces {
        out[sys.index[r]] = x[r];
    }
    let moved = (0..bodies.len())
        .map(|k| {
            let q = &x[faces + 6 * k..faces + 6 * k + 6];
            ([q[0], q[1], q[2]], [q[3], q[4], q[5]])
        })
        .collect();
    (out, moved)
}

/// The coordinates of face `i` on a face grid of `d` faces, i fastest.
fn face_coord(d: [usize; 3], i: usize) -> [i64; 3] {
    [
        (i % d[0]) as i64,
        ((i / d[0]) % d[1]) as i64,
        (i / (d[0] * d[1])) as i64,
    ]
}

/// The system of [`diffuse_velocity_coupled`] as it is assembled: per row (the unknown
/// faces, then six per body) its diagonal, its couplings off the diagonal and its
/// right-hand side.
struct CoupledRows {
    /// Rows of faces; the bodies' rows follow.
    faces: usize,
    diag: Vec<f64>,
    off: Vec<std::collections::BTreeMap<usize, f64>>,
    rhs: Vec<f64>,
}

/// What [`diffuse_velocity_coupled`] builds the faces' rows from: the grid, its cells, the
/// bodies and what they cover, where each component's faces start among all faces, a =
/// nu dt / h^2, and whether the grid is a slice.
struct Coupling<'a> {
    g: &'a Grid,
    types: &'a [u8],
    owner: &'a [usize],
    covered: &'a [(usize, f64)],
    bodies: &'a [RefViscousBody],
    offsets: Vec<usize>,
    a: f64,
    slice: bool,
}

/// A link from the row `r` of face `f` (component `comp`) to the neighbouring face `nb`.
#[derive(Clone, Copy)]
struct Link {
    r: usize,
    comp: usize,
    f: [i64; 3],
    nb: [i64; 3],
}

impl Coupling<'_> {
    /// The body covering at least half of a face, or 0.
    fn cover_of(&self, i: usize) -> usize {
        let (k, share) = self.covered[i];
        if k != 0 && share >= 0.5 {
            k
        } else {
            0
        }
    }

    /// What face `f` of component `comp` is, a face a body covers at least half of being
    /// fixed.
    fn kind_of(&self, comp: usize, f: [i64; 3]) -> FaceKind {
        let (g, types, offsets) = (self.g, self.types, &self.offsets);
        let global = offsets[comp] + face_index(g.face_dims(comp), f);
        match face_kind(g, types, comp, f) {
            FaceKind::Unknown | FaceKind::Air if self.cover_of(global) != 0 => FaceKind::Fixed,
            k => k,
        }
    }

    /// Whether body `k` (1-based; 0 for none) is coupled.
    fn coupled(&self, k: usize) -> bool {
        k != 0 && self.bodies[k - 1].coupled
    }

    /// The body (1-based) whose SOLID cell `c` is, or 0.
    fn owner_of(&self, c: [i64; 3]) -> usize {
        let (g, types, owner) = (self.g, self.types, self.owner);
        g.cell_at(c)
            .filter(|&i| types[i] == SOLID)
            .map_or(0, |i| owner[i])
    }

    /// Adds the row `r` of the face `gi` (its index among all faces, as `vel`'s): its mass,
    /// and its links to its neighbours; `row_of` gives each unknown face's row.
    fn face_row(
        &self,
        rows: &mut CoupledRows,
        (r, gi): (usize, usize),
        vel: &[f64],
        row_of: &[usize],
    ) {
        let (g, covered, offsets) = (self.g, self.covered, &self.offsets);
        let (a, slice) = (self.a, self.slice);
        let comp = (0..3).rev().find(|&c| gi >= offsets[c]).unwrap_or(0);
        let d = g.face_dims(comp);
        let f = face_coord(d, gi - offsets[comp]);
        let mass = if covered[gi].0 != 0 {
            1.0 - covered[gi].1
        } else {
            1.0
        };
        rows.diag[r] += mass;
        rows.rhs[r] += mass * vel[gi];
        for ax in 0..if slice { 2 } else { 3 } {
            for s in [-1i64, 1] {
                let mut nb = f;
                nb[ax] += s;
                if !in_dims(d, nb) {
                    rows.diag[r] += 2.0 * a;
                    continue;
                }
                let ni = offsets[comp] + face_index(d, nb);
                let kind = self.kind_of(comp, nb);
                let c = match kind {
                    FaceKind::Unknown => {
                        rows.diag[r] += a;
                        *rows.off[r].entry(row_of[ni]).or_default() -= a;
                        continue;
                    }
                    FaceKind::Air => continue,
                    FaceKind::FullySolid if ax != comp => 2.0,
                    _ => 1.0,
                };
                let mut lo = nb;
                lo[comp] -= 1;
                let (ka, kb) = (self.owner_of(lo), self.owner_of(nb));
                let k = match kind {
                    FaceKind::Fixed if self.cover_of(ni) != 0 => self.cover_of(ni),
                    FaceKind::Fixed => ka.max(kb),
                    _ if ka == kb => ka,
                    _ => 0,
                };
                let k = if self.coupled(k) { k } else { 0 };
                if k == 0 {
                    rows.diag[r] += c * a;
                    rows.rhs[r] += c * a * vel[ni];
                    continue;
                }
                self.link_body(rows, Link { r, comp, f, nb }, c, k);
            }
        }
    }

    /// Links the row of `link` to body `k` (1-based, coupled) across its neighbour, a face
    /// fixed by the body with weight `c` a.
    fn link_body(&self, rows: &mut CoupledRows, link: Link, c: f64, k: usize) {
        let Link { r, comp, f, nb } = link;
        let (g, a, slice, faces) = (self.g, self.a, self.slice, rows.faces);
        let (diag, off) = (&mut rows.diag, &mut rows.off);
        // The body's rigid velocity where its surface is (the ghost-fluid wall at
        // theta between the two faces' centres, where its signed distance crosses
        // zero, at the row's centre if that is inside already; else, the
        // neighbour's centre outside, the stair-step's: the face, or the wall
        // halfway), J q with J = (e, r x e), weight a / theta.
        let b = &self.bodies[k - 1];
        let centre_of = |face: [i64; 3]| -> [f64; 3] {
            std::array::from_fn(|ax2| {
                let shift = if ax2 == comp { 0.0 } else { 0.5 };
                (face[ax2] as f64 + shift) * g.h
            })
        };
        let (from, mut at) = (centre_of(f), centre_of(nb));
        let (da, db) = (b.distance(from, slice), b.distance(at, slice));
        let mut weight = c * a;
        if db <= 0.0 {
            let dp = da.max(0.0);
            let least = crate::gpu::constants::WALL_THETA_MIN;
            let theta = if dp - db > 0.0 {
                (dp / (dp - db)).max(least)
            } else {
                least
            };
            weight = a / theta;
            at = std::array::from_fn(|i| from[i] + theta * (at[i] - from[i]));
        }
        let c = weight / a;
        diag[r] += weight;
        let mut x: [f64; 3] = std::array::from_fn(|i| at[i] - b.centre[i]);
        if slice {
            x[2] = 0.0;
        }
        let mut e = [0.0; 3];
        e[comp] = 1.0;
        let rxe = [
            x[1] * e[2] - x[2] * e[1],
            x[2] * e[0] - x[0] * e[2],
            x[0] * e[1] - x[1] * e[0],
        ];
        let j = [e[0], e[1], e[2], rxe[0], rxe[1], rxe[2]];
        let base = faces + 6 * (k - 1);
        for i in 0..6 {
            if j[i] == 0.0 {
                continue;
            }
            *off[r].entry(base + i).or_default() -= c * a * j[i];
            *off[base + i].entry(r).or_default() -= c * a * j[i];
            for (m, jm) in j.iter().enumerate() {
                if i == m {
                    diag[base + i] += c * a * j[i] * jm;
                } else if *jm != 0.0 {
                    *off[base + i].entry(base + m).or_default() += c * a * j[i] * jm;
                }
            }
        }
    }
}

impl CoupledRows {
    /// Adds the six rows of body `k`: `m_face` is a face's mass, and in a `slice` the body
    /// keeps its z velocity and its turns about x and y.
    fn body_rows(&mut self, k: usize, b: &RefViscousBody, slice: bool, m_face: f64) {
        let (faces, diag, off, rhs) = (self.faces, &mut self.diag, &mut self.off, &mut self.rhs);
        let base = faces + 6 * k;
        if !b.coupled {
            // Its rows are q = q*, alone.
            for i in 0..6 {
                diag[base + i] = 1.0;
                rhs[base + i] = [
                    b.vel[0], b.vel[1], b.vel[2], b.omega[0], b.omega[1], b.omega[2],
                ][i];
            }
            return;
        }
        let q0 = [
            b.vel[0], b.vel[1], b.vel[2], b.omega[0], b.omega[1], b.omega[2],
        ];
        let frozen = |i: usize| slice && (2..=4).contains(&i);
        for i in 0..6 {
            let mut row_mass = [0.0; 6];
            if i < 3 {
                row_mass[i] = b.mass / m_face;
            } else {
                for m in 3..6 {
                    row_mass[m] = b.inertia[i - 3][m - 3] / m_face;
                }
            }
            if frozen(i) {
                // Left out: q_i = q*_i, with nothing else in its row or column.
                diag[base + i] = 1.0;
                off[base + i].clear();
                rhs[base + i] = q0[i];
                for o in off.iter_mut() {
                    o.remove(&(base + i));
                }
                continue;
            }
            for m in 0..6 {
                if frozen(m) || row_mass[m] == 0.0 {
                    continue;
                }
                rhs[base + i] += row_mass[m] * q0[m];
                if m == i {
                    diag[base + i] += row_mass[m];
                } else {
                    *off[base + i].entry(base + m).or_default() += row_mass[m];
                }
            }
        }
    }
}

/// The wall a cell's face in direction (axis, side) lies on, and the coordinate along it of
/// the face's centre; None for the front and back of a slice (always insulated).
pub fn wall_of(g: &Grid, c: [i64; 3], axis: usize, side: i64) -> Option<(Wall, f64)> {
    let centre = |ax: usize| (c[ax] as f64 + 0.5) * g.h;
    match (axis, side) {
        (0, -1) => Some((Wall::Left, centre(1))),
        (0, _) => Some((Wall::Right, centre(1))),
        (1, -1) => Some((Wall::Bottom, centre(0))),
        (1, _) => Some((Wall::Top, centre(0))),
        _ => None,
    }
}

/// Fixed wall values of the four scalar channels: dye (r, g, b) from `dye`, temperature
/// (w) from `temperature`.
pub fn channel_wall_value(
    temperature: &WallValues,
    dye: &WallValues,
    channel: usize,
    wall: Wall,
    s: f64,
) -> Option<f64> {
    if channel == 3 {
        temperature.value_at(wall, s)
    } else {
        dye.value_at(wall, s)
    }
}

/// One backward-Euler step of the scalars (dye rgb, temperature w) with diffusivities `k`
/// (m^2/s per channel; 0 leaves a channel alone) over `dt`. Non-FLUID cells keep their
/// values.
pub fn diffuse_scalars(
    g: &Grid,
    types: &[u8],
    field: &[[f64; 4]],
    k: [f64; 4],
    dt: f64,
    temperature: &WallValues,
    dye: &WallValues,
) -> Vec<[f64; 4]> {
    let mut out = field.to_vec();
    let cells = g.cells();
    let mut row_of = vec![usize::MAX; cells];
    let mut unknowns = Vec::new();
    for c in 0..cells {
        if types[c] == FLUID {
            row_of[c] = unknowns.len();
            unknowns.push(c);
        }
    }
    for ch in 0..4 {
        if k[ch] == 0.0 {
            continue;
        }
        let a = k[ch] * dt / (g.h * g.h);
        let mut sys = DiffusionSystem {
            index: unknowns.clone(),
            ..Default::default()
        };
        for &c in &unknowns {
            let x = g.coord(c).map(|v| v as i64);
            let mut diag = 1.0;
            let mut rhs = field[c][ch];
            let mut off = Vec::new();
            for ax in 0..3 {
                for s in [-1i64, 1] {
                    let mut n = x;
                    n[ax] += s;
                    match g.cell_at(n) {
                        Some(m) if types[m] == FLUID => {
                            diag += a;
                            off.push((row_of[m], -a));
                        }
                        Some(_) => {}
                        None => {
                            let fixed = wall_of(g, x, ax, s).and_then(|(w, along)| {
                                channel_wall_value(temperature, dye, ch, w, along)
                            });
                            if let Some(v) = fixed {
                                diag += 2.0 * a;
                                rhs += 2.0 * a * v;
                            }
                        }
                    }
                }
            }
            sys.diag.push(diag);
            sys.off.push(off);
            sys.rhs.push(rhs);
        }
        for (r, v) in sys.solve().into_iter().enumerate() {
            out[sys.index[r]][ch] = v;
        }
    }
    out
}

/// The viscosity's incremental pressure correction (src/sim/core/split.rs): on every face
/// the velocity step solves for ([`FaceKind::Unknown`]) and the projection moves (a
/// gradient across it, ghost fluid at the free surface, through the open faces),
/// u += sign dt (g - grad last), `last` = p / rho of the last projection in FLUID cells.
/// `sign` 1 before the viscosity solve, -1 after it.
#[allow(clippy::too_many_arguments)]
pub fn pressure_shift(
    g: &Grid,
    types: &[u8],
    surface: Option<&[f64]>,
    cut: Option<&super::Cut>,
    last: &[f64],
    (gravity, dt, sign): ([f64; 3], f64, f64),
    vel: &mut super::MacField,
) {
    super::for_each_face(g, |comp, f, i| {
        let fi = [f[0] as i64, f[1] as i64, f[2] as i64];
        if face_kind(g, types, comp, fi) != FaceKind::Unknown {
            return;
        }
        if let Some(grad) = super::face_gradient_cut(g, types, surface, cut, last, comp, f) {
            vel.comp_mut(comp)[i] += sign * dt * (gravity[comp] - grad);
        }
    });
}

/// The smoke's incremental correction: u += sign dt delta on the faces the velocity step
/// solves for, `delta` the last substep's acceleration of each face by its forces and
/// pressure (u, v, w back to back).
pub fn delta_shift(
    g: &Grid,
    types: &[u8],
    (delta, dt, sign): (&[f64], f64, f64),
    vel: &mut super::MacField,
) {
    let mut at = 0;
    for comp in 0..3 {
        let n = g.face_dims(comp).iter().product::<usize>();
        super::for_each_face(g, |c, f, i| {
            let fi = [f[0] as i64, f[1] as i64, f[2] as i64];
            if c == comp && face_kind(g, types, c, fi) == FaceKind::Unknown {
                vel.comp_mut(c)[i] += sign * dt * delta[at + i];
            }
        });
        at += n;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shear mode sin(pi x/Lx) sin(pi y/Ly) on u faces of a closed FLUID slice decays
    /// at the discrete rate, and backward Euler's factor per step is exact for it.
    #[test]
    fn velocity_mode_is_an_eigenvector() {
        let g = Grid {
            nx: 8,
            ny: 12,
            nz: 1,
            h: 0.1,
        };
        let types = vec![FLUID; g.cells()];
        let nu_dt = 0.003;
        let a = nu_dt / (g.h * g.h);
        let d = g.face_dims(0);
        let (lx, ly) = (0.8, 1.2);
        let nfaces: usize = (0..3)
            .map(|c| g.face_dims(c).iter().product::<usize>())
            .sum();
        let mut vel = vec![0.0; nfaces];
        for j in 0..d[1] {
            for i in 0..d[0] {
                let (x, y) = (i as f64 * g.h, (j as f64 + 0.5) * g.h);
                vel[i + d[0] * j] =
                    (std::f64::consts::PI * x / lx).sin() * (std::f64::consts::PI * y / ly).sin();
            }
        }
        let out = diffuse_velocity(&g, &types, &vel, nu_dt, 1.0);
        let lam =
            |l: f64| 4.0 / (g.h * g.h) * (std::f64::consts::PI * g.h / (2.0 * l)).sin().powi(2);
        let factor = 1.0 / (1.0 + a * g.h * g.h * (lam(lx) + lam(ly)));
        for i in 0..d[0] * d[1] {
            assert!(
                (out[i] - factor * vel[i]).abs() < 1e-12,
                "{i}: {} vs {}",
                out[i],
                factor * vel[i]
            );
        }
    }

    /// Insulated walls and solids: the total is kept; a linear profile between two fixed
    /// walls is steady.
    #[test]
    fn scalars_conserve_and_keep_linear_profile() {
        let g = Grid {
            nx: 5,
            ny: 7,
            nz: 1,
            h: 0.2,
        };
        let mut types = vec![FLUID; g.cells()];
        types[g.cell(2, 3, 0)] = SOLID;
        let field: Vec<[f64; 4]> = (0..g.cells())
            .map(|c| {
                [
                    0.0,
                    0.0,
                    0.0,
                    if types[c] == FLUID {
                        (c * 37 % 11) as f64
                    } else {
                        0.0
                    },
                ]
            })
            .collect();
        let none = WallValues::default();
        let out = diffuse_scalars(&g, &types, &field, [0.0, 0.0, 0.0, 0.5], 0.3, &none, &none);
        let sum = |f: &[[f64; 4]]| f.iter().map(|v| v[3]).sum::<f64>();
        assert!((sum(&out) - sum(&field)).abs() < 1e-10 * sum(&field));
        let walls = WallValues {
            bottom: Some(2.0),
            top: Some(-1.0),
            ..Default::default()
        };
        let types = vec![FLUID; g.cells()];
        let ly = g.ny as f64 * g.h;
        let lin: Vec<[f64; 4]> = (0..g.cells())
            .map(|c| {
                let y = (g.coord(c)[1] as f64 + 0.5) * g.h;
                [0.0, 0.0, 0.0, 2.0 - 3.0 * y / ly]
            })
            .collect();
        let out = diffuse_scalars(&g, &types, &lin, [0.0, 0.0, 0.0, 0.5], 0.3, &walls, &none);
        for c in 0..g.cells() {
            assert!((out[c][3] - lin[c][3]).abs() < 1e-12);
        }
    }
}
