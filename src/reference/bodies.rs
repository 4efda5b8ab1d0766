//! Reference of the bodies' coupling stage (src/sim/bodies/coupling.wgsl) in f64: which cells a body
//! covers, and the pressure force and torque on each body summed over its faces with FLUID
//! cells.

use super::{Grid, FLUID};

/// A body as the coupling sees it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RefBody {
    pub centre: [f64; 3],
    /// World directions of the body's x, y, z axes.
    pub axes: [[f64; 3]; 3],
    /// Box half extents, or the sphere's radius in [0].
    pub half: [f64; 3],
    pub sphere: bool,
}

fn dot(a: [f64; 3], b: [f64; 3]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

pub(crate) fn cross(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

impl RefBody {
    /// `x` in the body's frame (z dropped in a slice, `slice`).
    fn local(&self, x: [f64; 3], slice: bool) -> [f64; 3] {
        let mut d = [
            x[0] - self.centre[0],
            x[1] - self.centre[1],
            x[2] - self.centre[2],
        ];
        if slice {
            d[2] = 0.0;
        }
        let mut l = self.axes.map(|a| dot(d, a));
        if slice {
            l[2] = 0.0;
        }
        l
    }

    /// Whether `x` lies inside (in a slice, `slice`, z is ignored).
    pub fn contains(&self, x: [f64; 3], slice: bool) -> bool {
        let l = self.local(x, slice);
        if self.sphere {
            dot(l, l) <= self.half[0] * self.half[0]
        } else {
            (0..3).all(|a| l[a].abs() <= self.half[a])
        }
    }
}

/// Body index + 1 per cell whose centre lies inside a body (the first body wins), else 0.
pub fn body_cells(g: Grid, bodies: &[RefBody], slice: bool) -> Vec<u32> {
    (0..g.cells())
        .map(|c| {
            let [i, j, k] = g.coord(c);
            let x = [
                (i as f64 + 0.5) * g.h,
                (j as f64 + 0.5) * g.h,
                (k as f64 + 0.5) * g.h,
            ];
            bodies
                .iter()
                .position(|b| b.contains(x, slice))
                .map_or(0, |b| b as u32 + 1)
        })
        .collect()
}

/// Force (N) and torque about the centre (N m) on each body: over every face of a FLUID
/// cell that a body covers a share c of (`cover`, see [`cover_faces`]), -p c n dA with n
/// the direction from the face back into the cell (the body's outward normal where whole
/// cells meet), p = pressure_scale phi of the cell minus rho_g . (h/2) n (the hydrostatic
/// change over the half cell from the cell's centre to the face: whole cells only, pass
/// rho_g = 0 where bodies cut faces and the force is the pressure gradient over what they
/// cover), dA = face_area; `scale` is (pressure_scale, face_area, rho_g). A face beyond
/// which a static solid's cell lies is left out.
pub fn body_forces(
    g: Grid,
    bodies: &[RefBody],
    cover: (&[u32], &[u32]),
    cell_type: &[u8],
    phi: &[f32],
    scale: (f64, f64, [f64; 3]),
    slice: bool,
) -> Vec<[f64; 6]> {
    let (pressure_scale, face_area, rho_g) = scale;
    let mut out = vec![[0.0; 6]; bodies.len()];
    for f in covered_faces(g, bodies.len(), cover, cell_type) {
        let n = f.n;
        let p = phi[f.cell] as f64 * pressure_scale - 0.5 * g.h * dot(rho_g, n);
        let df = n.map(|v| -p * f.share * face_area * v);
        let t = cross(lever(bodies[f.body].centre, f.centre, slice), df);
        for a in 0..3 {
            out[f.body][a] += df[a];
            out[f.body][3 + a] += t[a];
        }
    }
    out
}

/// A body as the strong coupling sees it (src/sim/bodies/strong.wgsl): its centre and its
/// inverse mass and inverse inertia, each already times s = h rho A_face.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RefCoupledBody {
    pub centre: [f64; 3],
    /// s / m per axis.
    pub inv_mass: [f64; 3],
    /// s I^-1, rows (symmetric, so also its columns).
    pub inv_inertia: [[f64; 3]; 3],
}

/// A face's cover word (coupling.wgsl's `cover`): the covering body's index + 1 in the top 8
/// bits, its share of the face in unorm24 below.
pub const COVER_ONE: u32 = 0x00ff_ffff;

/// (body index + 1, share) of a cover word.
pub fn cover_parts(w: u32) -> (usize, f64) {
    (
        (w >> 24) as usize,
        (w & COVER_ONE) as f64 / COVER_ONE as f64,
    )
}

/// Whole cells (coupling.wgsl's `cover_cells`): every face of a body's cell is that body's
/// whole (the lower cell's body where two meet).
pub fn whole_cell_cover(g: Grid, body_id: &[u32], max_bodies: usize) -> Vec<u32> {
    let n = g.n();
    let mut out = vec![0u32; crate::scene::fractions::face_counts(n).iter().sum()];
    super::for_each_face(&g, |comp, f, _| {
        let mut owner = 0u32;
        for c in super::face_cells(comp, f).into_iter().rev() {
            if let Some(i) = g.cell_at(c) {
                let id = body_id[i];
                if id != 0 && id as usize <= max_bodies {
                    owner = id;
                }
            }
        }
        if owner != 0 {
            out[crate::scene::fractions::face_slot(n, comp, f)] = (owner << 24) | COVER_ONE;
        }
    });
    out
}

impl RefBody {
    /// Signed distance from `x` to the surface (negative inside; a slice's bodies are prisms).
    pub fn distance(&self, x: [f64; 3], slice: bool) -> f64 {
        let l = self.local(x, slice);
        if self.sphere {
            return dot(l, l).sqrt() - self.half[0];
        }
        let mut q: [f64; 3] = std::array::from_fn(|a| l[a].abs() - self.half[a]);
        if slice {
            q[2] = -1e30;
        }
        let out = q.map(|v| v.max(0.0));
        dot(out, out).sqrt() + q[0].max(q[1]).max(q[2]).min(0.0)
    }
}

/// The bodies' cover of every face and the open fractions they leave (coupling.wgsl's
/// `cover_faces`), from the static fractions `base` (None: every face open): a face's
/// control volume lies inside body b by clamp(1/2 - d_b / h), d_b the distance from the
/// face's centre to b's surface; the body with the largest share owns the face; shares and
/// open fractions under `SHARE_MIN` snap; walls (and a slice's z faces) stay uncovered.
pub fn cover_faces(
    g: Grid,
    bodies: &[RefBody],
    base: Option<&[f32]>,
    slice: bool,
) -> (Vec<u32>, Vec<f64>) {
    const SHARE_MIN: f64 = 0.02;
    let n = g.n();
    let faces: usize = crate::scene::fractions::face_counts(n).iter().sum();
    let mut cover = vec![0u32; faces];
    let mut open = vec![1.0; faces];
    super::for_each_face(&g, |comp, f, _| {
        let slot = crate::scene::fractions::face_slot(n, comp, f);
        let b0 = base.map_or(1.0, |b| b[slot] as f64);
        let wall = f[comp] == 0 || f[comp] == n[comp] || (slice && comp == 2);
        let (mut best, mut owner) = (0.0f64, 0u32);
        if !wall {
            let x: [f64; 3] =
                std::array::from_fn(|a| (f[a] as f64 + if a == comp { 0.0 } else { 0.5 }) * g.h);
            for (k, b) in bodies.iter().enumerate() {
                let c = (0.5 - b.distance(x, slice) / g.h).clamp(0.0, 1.0);
                if c > best {
                    best = c;
                    owner = k as u32 + 1;
                }
            }
        }
        let mut o = b0 * (1.0 - best);
        if o < SHARE_MIN {
            o = 0.0;
        }
        let mut share = b0 - o;
        if share < SHARE_MIN {
            share = 0.0;
            o = b0;
        }
        let q = (share * COVER_ONE as f64).round() as u32;
        cover[slot] = if q != 0 { (owner << 24) | q } else { 0 };
        open[slot] = o;
    });
    (cover, open)
}

/// How far from a body (in cells) G2P weighs a face's change: the particles whose kernels
/// reach a face lie within sqrt(3) cells of its centre (coupling.wgsl `GATHER_REACH`).
pub const GATHER_REACH: f64 = 1.8;
/// The largest factor on a face's change (coupling.wgsl `GATHER_SCALE_MAX`).
pub const GATHER_SCALE_MAX: f64 = 2.0;

/// The factor on each face's velocity change that G2P hands the particles (coupling.wgsl
/// `gather_scale_faces`), faces u, v, w back to back: within [`GATHER_REACH`] cells of a
/// body, 0 on a face against a SOLID cell, the solve's liquid over the particles' own,
/// `rest_weight * open / weight` (at most [`GATHER_SCALE_MAX`], 0 where no particle
/// reaches the face) on a face between two FLUID cells neither of which has an AIR
/// neighbour that no solid cuts (`solid` 0: the free surface), the same ratio where it is
/// under 1 on the other faces (by AIR: only ever scaled down), and 1 elsewhere, the
/// domain's walls included.
#[allow(clippy::too_many_arguments)]
pub fn gather_scale(
    g: Grid,
    bodies: &[RefBody],
    cell_type: &[u8],
    solid: &[u32],
    open: &[f64],
    weight: &[f64],
    rest_weight: f64,
    slice: bool,
) -> Vec<f64> {
    let n = g.n();
    let faces: usize = crate::scene::fractions::face_counts(n).iter().sum();
    let mut out = vec![1.0; faces];
    let by_the_air = |x: [i64; 3]| {
        (0..6).any(|i| {
            let mut y = x;
            y[i / 2] += if i % 2 == 1 { 1 } else { -1 };
            g.cell_at(y)
                .is_some_and(|c| cell_type[c] == super::AIR && solid[c] == 0)
        })
    };
    super::for_each_face(&g, |comp, f, _| {
        let slot = crate::scene::fractions::face_slot(n, comp, f);
        if f[comp] == 0 || f[comp] == n[comp] {
            // The domain's walls keep FLIP's own transfer (`cover_faces` leaves them
            // uncovered and the distance unset).
            return;
        }
        let x = super::transfer::face_position(&g, comp, f);
        let d = bodies
            .iter()
            .map(|b| b.distance(x, slice) / g.h)
            .fold(f64::INFINITY, f64::min);
        if d >= GATHER_REACH {
            return;
        }
        let hi = f.map(|v| v as i64);
        let mut lo = hi;
        lo[comp] -= 1;
        let (t0, t1) = (g.type_at(cell_type, lo), g.type_at(cell_type, hi));
        out[slot] = if t0 == super::SOLID || t1 == super::SOLID {
            0.0
        } else {
            let (w, share) = (weight[slot], rest_weight * open[slot]);
            if t0 == FLUID && t1 == FLUID && !by_the_air(lo) && !by_the_air(hi) {
                if w > 0.0 {
                    (share / w).min(GATHER_SCALE_MAX)
                } else {
                    0.0
                }
            } else if w > share {
                share / w
            } else {
                1.0
            }
        };
    });
    out
}

/// A face of a FLUID cell that a body covers a share of (`cover`, see [`cover_faces`]).
struct CoveredFace {
    /// The body's index.
    body: usize,
    /// The FLUID cell.
    cell: usize,
    share: f64,
    /// The direction from the face back into the cell (the body's outward normal where
    /// whole cells meet).
    n: [f64; 3],
    /// The face's centre, m.
    centre: [f64; 3],
}

/// Every face of a FLUID cell that one of `bodies` bodies covers, over the cells in order;
/// a face beyond which a static solid's cell lies (SOLID, of no body) is left out
/// (strong.wgsl's `covered_face`).
fn covered_faces(
    g: Grid,
    bodies: usize,
    (body_id, cover): (&[u32], &[u32]),
    cell_type: &[u8],
) -> Vec<CoveredFace> {
    let n3 = g.n();
    let mut out = vec![];
    for c in (0..g.cells()).filter(|&c| cell_type[c] == FLUID) {
        let xu = g.coord(c);
        let x = xu.map(|v| v as i64);
        for axis in 0..3 {
            for s in [-1i64, 1] {
                let mut e = [0i64; 3];
                e[axis] = s;
                let y = [x[0] + e[0], x[1] + e[1], x[2] + e[2]];
                let Some(cy) = g.cell_at(y) else { continue };
                let f = if s > 0 { y.map(|v| v as usize) } else { xu };
                let (id, share) =
                    cover_parts(cover[crate::scene::fractions::face_slot(n3, axis, f)]);
                if id == 0 || id > bodies {
                    continue;
                }
                if cell_type[cy] == super::SOLID && body_id[cy] as usize != id {
                    continue;
                }
                let d = e.map(|v| v as f64);
                out.push(CoveredFace {
                    body: id - 1,
                    cell: c,
                    share,
                    n: d.map(|v| -v),
                    centre: std::array::from_fn(|a| (x[a] as f64 + 0.5 + 0.5 * d[a]) * g.h),
                });
            }
        }
    }
    out
}

/// The lever from `centre` to `x` (z dropped in a slice).
fn lever(centre: [f64; 3], x: [f64; 3], slice: bool) -> [f64; 3] {
    let mut r: [f64; 3] = std::array::from_fn(|a| x[a] - centre[a]);
    if slice {
        r[2] = 0.0;
    }
    r
}

/// Every covered face of a FLUID cell: (body, fluid cell, j) with j = c_f (n, r x n), c_f the
/// body's share of the face and r from the body's centre to the face's centre.
fn coupled_faces(
    g: Grid,
    bodies: &[RefCoupledBody],
    cover: (&[u32], &[u32]),
    cell_type: &[u8],
    slice: bool,
) -> Vec<(usize, usize, [f64; 6])> {
    covered_faces(g, bodies.len(), cover, cell_type)
        .into_iter()
        .map(|f| {
            let t = cross(lever(bodies[f.body].centre, f.centre, slice), f.n);
            let n = f.n;
            let j = [n[0], n[1], n[2], t[0], t[1], t[2]].map(|v| v * f.share);
            (f.body, f.cell, j)
        })
        .collect()
}

/// The strong coupling's added term K x = s J^T M^-1 J x per cell (zero outside the FLUID
/// cells next to a body), in f64.
pub fn coupled_term(
    g: Grid,
    bodies: &[RefCoupledBody],
    cover: (&[u32], &[u32]),
    cell_type: &[u8],
    x: &[f32],
    slice: bool,
) -> Vec<f64> {
    let faces = coupled_faces(g, bodies, cover, cell_type, slice);
    let mut jx = vec![[0.0f64; 6]; bodies.len()];
    for &(k, c, j) in &faces {
        for a in 0..6 {
            jx[k][a] += j[a] * x[c] as f64;
        }
    }
    let w: Vec<[f64; 6]> = bodies
        .iter()
        .zip(&jx)
        .map(|(b, s)| {
            let ang = [s[3], s[4], s[5]];
            let wa = b.inv_inertia.map(|row| dot(row, ang));
            [
                b.inv_mass[0] * s[0],
                b.inv_mass[1] * s[1],
                b.inv_mass[2] * s[2],
                wa[0],
                wa[1],
                wa[2],
            ]
        })
        .collect();
    let mut out = vec![0.0; g.cells()];
    for &(k, c, j) in &faces {
        out[c] += (0..6).map(|a| j[a] * w[k][a]).sum::<f64>();
    }
    out
}

/// The smoke's closed box: P K P x with P = I - 1 1^T / n over the FLUID cells (the
/// projection off the constant, which a body against a wall would otherwise give an
/// eigenvalue: src/sim/bodies/strong.wgsl), in f64.
pub fn coupled_term_projected(
    g: Grid,
    bodies: &[RefCoupledBody],
    cover: (&[u32], &[u32]),
    cell_type: &[u8],
    x: &[f32],
    slice: bool,
) -> Vec<f64> {
    let fluid: Vec<usize> = (0..g.cells()).filter(|&c| cell_type[c] == FLUID).collect();
    let n = fluid.len().max(1) as f64;
    let mean = fluid.iter().map(|&c| x[c] as f64).sum::<f64>() / n;
    // K is linear: K (x - mean 1) = K x - mean K 1, both from f32 inputs exactly.
    let kx = coupled_term(g, bodies, cover, cell_type, x, slice);
    let ones = vec![1.0f32; x.len()];
    let k1 = coupled_term(g, bodies, cover, cell_type, &ones, slice);
    let mut y: Vec<f64> = (0..g.cells()).map(|c| kx[c] - mean * k1[c]).collect();
    let y_mean = fluid.iter().map(|&c| y[c]).sum::<f64>() / n;
    for &c in &fluid {
        y[c] -= y_mean;
    }
    y
}

/// One body's blocks of the deflation of the strong coupling's modes (strong.wgsl,
/// `deflate_setup`): E_k^-1 with E_k = Z_k^T A Z_k + G_k C_k G_k, and G_k C_k, where Z_k is
/// the body's deflation space ([`deflation_space`]), G_k = J_k Z_k and C_k = s M_k^-1.
/// Modes whose pivot falls below 1e-5 of E_k's largest diagonal entry are left out (zero
/// rows and columns of E_k^-1), as on the GPU.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DeflationBlock {
    pub e_inv: [[f64; 6]; 6],
    pub gc: [[f64; 6]; 6],
}

/// Per body, the rows of J_k^T at the FLUID cells next to its covered faces: (cell, v_c).
pub fn body_rows(
    g: Grid,
    bodies: &[RefCoupledBody],
    cover: (&[u32], &[u32]),
    cell_type: &[u8],
    slice: bool,
) -> Vec<Vec<(usize, [f64; 6])>> {
    let mut rows: Vec<std::collections::BTreeMap<usize, [f64; 6]>> =
        vec![Default::default(); bodies.len()];
    for (k, c, j) in coupled_faces(g, bodies, cover, cell_type, slice) {
        let v = rows[k].entry(c).or_insert([0.0; 6]);
        for a in 0..6 {
            v[a] += j[a];
        }
    }
    rows.into_iter().map(|m| m.into_iter().collect()).collect()
}

/// C_k = s M_k^-1 as a 6x6 matrix.
pub fn c_matrix(b: &RefCoupledBody) -> [[f64; 6]; 6] {
    let mut c = [[0.0; 6]; 6];
    for i in 0..3 {
        c[i][i] = b.inv_mass[i];
        for j in 0..3 {
            c[3 + i][3 + j] = b.inv_inertia[i][j];
        }
    }
    c
}

/// The inverse of a symmetric positive semi-definite 6x6 by Gauss-Jordan without pivoting,
/// skipping pivots below 1e-5 of the largest diagonal entry (their rows and columns of the
/// inverse are zero): strong.wgsl's `deflate_setup`.
fn spd_inverse_6(mut m: [[f64; 6]; 6]) -> [[f64; 6]; 6] {
    let dmax = (0..6).map(|i| m[i][i]).fold(0.0, f64::max);
    let mut inv = [[0.0; 6]; 6];
    for (i, row) in inv.iter_mut().enumerate() {
        row[i] = 1.0;
    }
    let mut live = [false; 6];
    for p in 0..6 {
        let piv = m[p][p];
        live[p] = dmax > 0.0 && piv > 1e-5 * dmax;
        if !live[p] {
            continue;
        }
        for j in 0..6 {
            m[p][j] /= piv;
            inv[p][j] /= piv;
        }
        for i in 0..6 {
            if i == p {
                continue;
            }
            let f = m[i][p];
            for j in 0..6 {
                m[i][j] -= f * m[p][j];
                inv[i][j] -= f * inv[p][j];
            }
        }
    }
    for i in 0..6 {
        for j in 0..6 {
            if !(live[i] && live[j]) {
                inv[i][j] = 0.0;
            }
        }
    }
    inv
}

/// J_k x over one body's rows of J^T.
fn rows_times(rows: &[(usize, [f64; 6])], x: &[f64]) -> [f64; 6] {
    let mut s = [0.0; 6];
    for &(c, v) in rows {
        for i in 0..6 {
            s[i] += v[i] * x[c];
        }
    }
    s
}

/// out += J_k^T (e_inv rhs) over one body's rows of J^T.
fn add_rows(rows: &[(usize, [f64; 6])], e_inv: &[[f64; 6]; 6], rhs: [f64; 6], out: &mut [f64]) {
    let y: [f64; 6] = std::array::from_fn(|i| (0..6).map(|j| e_inv[i][j] * rhs[j]).sum());
    for &(c, v) in rows {
        out[c] += (0..6).map(|i| v[i] * y[i]).sum::<f64>();
    }
}

/// Weight of the two damped Jacobi sweeps that make the deflation space (strong.wgsl,
/// `deflate_z`).
pub const DEFLATION_OMEGA: f64 = 0.8;

/// Per body, the rows of its deflation space Z_k = S J_k^T at the cells where they may be
/// non-zero (strong.wgsl, `deflate_z`): two damped Jacobi sweeps on A z = J_k^T from z = 0,
/// S = 2 w D^-1 - w^2 D^-1 A D^-1 with D = diag(A) and w = [`DEFLATION_OMEGA`]: J_k^T
/// spread one cell further and shaped towards A^-1 J_k^T. Zero where A has no row.
pub fn deflation_space(
    g: Grid,
    rows: &[Vec<(usize, [f64; 6])>],
    a: &[[f64; 4]],
) -> Vec<Vec<(usize, [f64; 6])>> {
    use super::pressure::neighbour;
    let w = DEFLATION_OMEGA;
    rows.iter()
        .map(|rows| {
            // u = D^-1 J_k^T.
            let mut u = std::collections::BTreeMap::new();
            for &(c, v) in rows {
                if a[c][0] > 0.0 {
                    u.insert(c, v.map(|x| x / a[c][0]));
                }
            }
            let mut cells = std::collections::BTreeSet::new();
            for &c in u.keys() {
                cells.insert(c);
                for comp in 0..3 {
                    for up in [true, false] {
                        if let Some(n) = neighbour(&g, c, comp, up) {
                            cells.insert(n);
                        }
                    }
                }
            }
            cells
                .into_iter()
                .filter(|&c| a[c][0] > 0.0)
                .map(|c| {
                    let uc = u.get(&c).copied().unwrap_or([0.0; 6]);
                    // (A u)_c.
                    let mut au = uc.map(|x| a[c][0] * x);
                    for comp in 0..3 {
                        if let Some(un) = neighbour(&g, c, comp, true).and_then(|n| u.get(&n)) {
                            for j in 0..6 {
                                au[j] += a[c][comp + 1] * un[j];
                            }
                        }
                        if let Some(m) = neighbour(&g, c, comp, false) {
                            if let Some(um) = u.get(&m) {
                                for j in 0..6 {
                                    au[j] += a[m][comp + 1] * um[j];
                                }
                            }
                        }
                    }
                    let z: [f64; 6] =
                        std::array::from_fn(|j| 2.0 * w * uc[j] - w * w * au[j] / a[c][0]);
                    (c, z)
                })
                .collect()
        })
        .collect()
}

/// The deflation's blocks of every body, for the packed matrix `a` (f64): E_k = Z_k^T A Z_k
/// + G_k C_k G_k with Z_k = S J_k^T ([`deflation_space`]) and G_k = J_k Z_k.
pub fn deflation_blocks(
    g: Grid,
    bodies: &[RefCoupledBody],
    cover: (&[u32], &[u32]),
    cell_type: &[u8],
    a: &[[f64; 4]],
    slice: bool,
) -> Vec<DeflationBlock> {
    let rows = body_rows(g, bodies, cover, cell_type, slice);
    let space = deflation_space(g, &rows, a);
    bodies
        .iter()
        .zip(rows.iter().zip(&space))
        .map(|(b, (rows, zrows))| {
            // Z_k^T A Z_k from A applied to each column of Z_k, G_k = J_k Z_k.
            let mut zaz = [[0.0; 6]; 6];
            let mut gm = [[0.0; 6]; 6];
            for j in 0..6 {
                let mut col = vec![0.0; g.cells()];
                for &(c, v) in zrows {
                    col[c] = v[j];
                }
                let acol = super::apply_packed(&g, a, &col);
                for &(c, v) in zrows {
                    for i in 0..6 {
                        zaz[i][j] += v[i] * acol[c];
                    }
                }
                for &(c, v) in rows {
                    for i in 0..6 {
                        gm[i][j] += v[i] * col[c];
                    }
                }
            }
            let cm = c_matrix(b);
            let mut gc = [[0.0; 6]; 6];
            for i in 0..6 {
                for j in 0..6 {
                    gc[i][j] = (0..6).map(|l| gm[i][l] * cm[l][j]).sum();
                }
            }
            let mut e = zaz;
            for i in 0..6 {
                for j in 0..6 {
                    e[i][j] += (0..6).map(|l| gc[i][l] * gm[l][j]).sum::<f64>();
                }
            }
            DeflationBlock {
                e_inv: spd_inverse_6(e),
                gc,
            }
        })
        .collect()
}

/// The deflated z = M^-1 r (strong.wgsl's `deflate_sums` and `deflate_add`):
/// z + Z y with y_k = E_k^-1 (Z_k^T (r - A z) - G_k C_k J_k z), in f64.
#[allow(clippy::too_many_arguments)]
pub fn deflate(
    g: Grid,
    bodies: &[RefCoupledBody],
    cover: (&[u32], &[u32]),
    cell_type: &[u8],
    a: &[[f64; 4]],
    blocks: &[DeflationBlock],
    r: &[f64],
    z: &[f64],
    slice: bool,
) -> Vec<f64> {
    let rows = body_rows(g, bodies, cover, cell_type, slice);
    let space = deflation_space(g, &rows, a);
    let az = super::apply_packed(&g, a, z);
    let u: Vec<f64> = r.iter().zip(&az).map(|(r, az)| r - az).collect();
    let mut out = z.to_vec();
    for ((rows, zrows), blk) in rows.iter().zip(&space).zip(blocks) {
        let (zu, jz) = (rows_times(zrows, &u), rows_times(rows, z));
        let rhs: [f64; 6] =
            std::array::from_fn(|i| zu[i] - (0..6).map(|j| blk.gc[i][j] * jz[j]).sum::<f64>());
        add_rows(zrows, &blk.e_inv, rhs, &mut out);
    }
    out
}

/// The deflated start's correction (strong.wgsl's `deflate_start` and `deflate_p`):
/// Z y with y_k = E_k^-1 Z_k^T r, in f64; the solve adds it to p.
#[allow(clippy::too_many_arguments)]
pub fn deflated_start(
    g: Grid,
    bodies: &[RefCoupledBody],
    cover: (&[u32], &[u32]),
    cell_type: &[u8],
    a: &[[f64; 4]],
    blocks: &[DeflationBlock],
    r: &[f64],
    slice: bool,
) -> Vec<f64> {
    let rows = body_rows(g, bodies, cover, cell_type, slice);
    let space = deflation_space(g, &rows, a);
    let mut out = vec![0.0; g.cells()];
    for (zrows, blk) in space.iter().zip(blocks) {
        add_rows(zrows, &blk.e_inv, rows_times(zrows, r), &mut out);
    }
    out
}

/// A body as the push-out sees it (coupling.wgsl, `push_count` and `push_out`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PushBody {
    pub body: RefBody,
    pub vel: [f64; 3],
    pub omega: [f64; 3],
    /// 1/m, then 1/I about the body's own x, y, z axes (0 where it cannot move).
    pub inverse: [f64; 4],
}

/// The push-out's settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PushSettings {
    /// How far outside the surface a pushed particle ends, m.
    pub margin: f64,
    /// Liquid per particle, kg (0: massless tracers).
    pub particle_mass: f64,
    pub slice: bool,
    /// The domain's far corner (n h), m.
    pub domain: [f64; 3],
}

/// Whether an outcome of [`push_out`] hangs on a comparison closer than `tie`: a particle
/// near a body's surface, or whose nearest faces nearly tie, may go either way in f32.
pub fn push_is_close(bodies: &[PushBody], s: &PushSettings, x: [f64; 3], tie: f64) -> bool {
    bodies.iter().any(|p| {
        let b = &p.body;
        let l = b.local(x, s.slice);
        if b.sphere {
            return (dot(l, l).sqrt() - b.half[0]).abs() < tie || dot(l, l).sqrt() < tie;
        }
        let gaps: Vec<f64> = (0..3).map(|a| b.half[a] - l[a].abs()).collect();
        if gaps.iter().any(|g| g.abs() < tie) {
            return true;
        }
        // Penetrations through each face; two nearly equal smallest ones tie.
        let mut pens: Vec<f64> = (0..6)
            .filter(|f| !(s.slice && f / 2 == 2))
            .map(|f| {
                let sign = if f & 1 == 1 { 1.0 } else { -1.0 };
                b.half[f / 2] - sign * l[f / 2]
            })
            .collect();
        pens.sort_by(f64::total_cmp);
        b.contains(x, s.slice) && pens.len() > 1 && pens[1] - pens[0] < tie
    })
}

/// The push-out in f64: moves each particle out of every body it lies in (a sphere along its
/// radius, a box through its nearest face that leads back into the domain), takes up the
/// share of its approach along the surface normal that an inelastic meeting with the body
/// gives (all of it for a body that cannot move or a massless particle; see coupling.wgsl,
/// `push_share`), and returns per body the momentum and angular momentum about its centre
/// the particles gained. The particles inside each body are counted first, at their
/// positions before any moved.
pub fn push_out(
    bodies: &[PushBody],
    s: &PushSettings,
    pos: &mut [[f64; 3]],
    vel: &mut [[f64; 3]],
) -> Vec<([f64; 3], [f64; 3])> {
    let counts: Vec<usize> = bodies
        .iter()
        .map(|p| pos.iter().filter(|&&x| p.body.contains(x, s.slice)).count())
        .collect();
    let in_domain =
        |x: [f64; 3]| (0..3).all(|a| (s.slice && a == 2) || (x[a] > 0.0 && x[a] < s.domain[a]));
    let clamp_domain = |x: [f64; 3]| {
        std::array::from_fn(|a| {
            if s.slice && a == 2 {
                x[a]
            } else {
                x[a].clamp(s.margin, s.domain[a] - s.margin)
            }
        })
    };
    let add =
        |a: [f64; 3], b: [f64; 3], k: f64| -> [f64; 3] { std::array::from_fn(|i| a[i] + k * b[i]) };
    let mut sums = vec![([0.0; 3], [0.0; 3]); bodies.len()];
    for (x, v) in pos.iter_mut().zip(vel.iter_mut()) {
        for (k, p) in bodies.iter().enumerate() {
            let b = &p.body;
            if !b.contains(*x, s.slice) {
                continue;
            }
            let v0 = *v;
            let l = b.local(*x, s.slice);
            let mut n = [0.0; 3];
            if b.sphere {
                let len = dot(l, l).sqrt();
                let dir = if len > 1e-12 {
                    l.map(|c| c / len)
                } else {
                    [0.0, 1.0, 0.0]
                };
                let out = dir.map(|c| c * (b.half[0] + s.margin));
                n = (0..3).fold([0.0; 3], |acc, a| add(acc, b.axes[a], dir[a]));
                let world = (0..3).fold(b.centre, |acc, a| add(acc, b.axes[a], out[a]));
                let z = if s.slice { x[2] } else { world[2] };
                *x = clamp_domain([world[0], world[1], z]);
            } else {
                let mut best = f64::INFINITY;
                let mut out = *x;
                for f in 0..6 {
                    let a = f / 2;
                    if a == 2 && s.slice {
                        continue;
                    }
                    let sign = if f & 1 == 1 { 1.0 } else { -1.0 };
                    let pen = b.half[a] - sign * l[a];
                    let cand = add(*x, b.axes[a], sign * (pen + s.margin));
                    if pen < best && in_domain(cand) {
                        best = pen;
                        out = cand;
                        n = b.axes[a].map(|c| sign * c);
                    }
                }
                *x = out;
            }
            let r = [x[0] - b.centre[0], x[1] - b.centre[1], x[2] - b.centre[2]];
            let vb = add(p.vel, cross(p.omega, r), 1.0);
            let vn = dot(add(*v, vb, -1.0), n);
            if vn < 0.0 {
                let share = if s.particle_mass > 0.0 {
                    let m_in = counts[k] as f64 * s.particle_mass;
                    let rn = cross(r, n);
                    let rl = b.axes.map(|a| dot(rn, a));
                    let w = p.inverse[0]
                        + (0..3)
                            .map(|a| rl[a] * rl[a] * p.inverse[a + 1])
                            .sum::<f64>();
                    1.0 / (1.0 + m_in * w)
                } else {
                    1.0
                };
                *v = add(*v, n, -share * vn);
            }
            let dp = add(*v, v0, -1.0).map(|c| c * s.particle_mass);
            sums[k].0 = add(sums[k].0, dp, 1.0);
            sums[k].1 = add(sums[k].1, cross(r, dp), 1.0);
        }
    }
    sums
}
