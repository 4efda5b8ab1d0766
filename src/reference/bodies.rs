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

fn cross(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

impl RefBody {
    /// Whether `x` lies inside (in a slice, `slice`, z is ignored).
    pub fn contains(&self, x: [f64; 3], slice: bool) -> bool {
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

/// Force (N) and torque about the centre (N m) on each body: the sum of -p n dA over the
/// faces between the body's cells and FLUID cells, with n the body's outward normal,
/// p = pressure_scale phi of the FLUID cell minus rho_g . (h/2) n (the hydrostatic change
/// over the half cell from the cell's centre back to the face), dA = face_area; `scale` is (pressure_scale, face_area, rho_g).
pub fn body_forces(
    g: Grid,
    bodies: &[RefBody],
    body_id: &[u32],
    cell_type: &[u8],
    phi: &[f32],
    scale: (f64, f64, [f64; 3]),
    slice: bool,
) -> Vec<[f64; 6]> {
    let (pressure_scale, face_area, rho_g) = scale;
    let mut out = vec![[0.0; 6]; bodies.len()];
    let fluid = |c: [i64; 3]| g.cell_at(c).filter(|&i| cell_type[i] == FLUID);
    for (c, &id) in body_id.iter().enumerate().take(g.cells()) {
        let id = id as usize;
        if id == 0 {
            continue;
        }
        let b = &bodies[id - 1];
        let x = g.coord(c).map(|v| v as i64);
        for axis in 0..3 {
            for s in [-1i64, 1] {
                let mut e = [0i64; 3];
                e[axis] = s;
                let y = [x[0] + e[0], x[1] + e[1], x[2] + e[2]];
                let Some(cy) = fluid(y) else { continue };
                let n = e.map(|v| v as f64);
                let p = phi[cy] as f64 * pressure_scale
                    - 0.5 * g.h * (rho_g[0] * n[0] + rho_g[1] * n[1] + rho_g[2] * n[2]);
                let df = n.map(|v| -p * face_area * v);
                let xf: [f64; 3] = std::array::from_fn(|a| (x[a] as f64 + 0.5 + 0.5 * n[a]) * g.h);
                let mut r: [f64; 3] = std::array::from_fn(|a| xf[a] - b.centre[a]);
                if slice {
                    r[2] = 0.0;
                }
                let t = cross(r, df);
                for a in 0..3 {
                    out[id - 1][a] += df[a];
                    out[id - 1][3 + a] += t[a];
                }
            }
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

/// Each FLUID-facing face of every body: (body, fluid cell, j = (n, r x n)) with n the
/// body's outward normal and r from its centre to the face's centre (z dropped in a
/// slice), in the order of the body's cells.
fn coupled_faces(
    g: Grid,
    bodies: &[RefCoupledBody],
    body_id: &[u32],
    cell_type: &[u8],
    slice: bool,
) -> Vec<(usize, usize, [f64; 6])> {
    let mut out = vec![];
    for (c, &id) in body_id.iter().enumerate().take(g.cells()) {
        let id = id as usize;
        if id == 0 || id > bodies.len() {
            continue;
        }
        let b = &bodies[id - 1];
        let x = g.coord(c).map(|v| v as i64);
        for axis in 0..3 {
            for s in [-1i64, 1] {
                let mut e = [0i64; 3];
                e[axis] = s;
                let y = [x[0] + e[0], x[1] + e[1], x[2] + e[2]];
                let Some(cy) = g.cell_at(y).filter(|&i| cell_type[i] == FLUID) else {
                    continue;
                };
                let n = e.map(|v| v as f64);
                let xf: [f64; 3] = std::array::from_fn(|a| (x[a] as f64 + 0.5 + 0.5 * n[a]) * g.h);
                let mut r: [f64; 3] = std::array::from_fn(|a| xf[a] - b.centre[a]);
                if slice {
                    r[2] = 0.0;
                }
                let t = cross(r, n);
                out.push((id - 1, cy, [n[0], n[1], n[2], t[0], t[1], t[2]]));
            }
        }
    }
    out
}

/// The strong coupling's added term K x = s J^T M^-1 J x per cell (zero outside the FLUID
/// cells next to a body), in f64.
pub fn coupled_term(
    g: Grid,
    bodies: &[RefCoupledBody],
    body_id: &[u32],
    cell_type: &[u8],
    x: &[f32],
    slice: bool,
) -> Vec<f64> {
    let faces = coupled_faces(g, bodies, body_id, cell_type, slice);
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
    body_id: &[u32],
    cell_type: &[u8],
    x: &[f32],
    slice: bool,
) -> Vec<f64> {
    let fluid: Vec<usize> = (0..g.cells()).filter(|&c| cell_type[c] == FLUID).collect();
    let n = fluid.len().max(1) as f64;
    let mean = fluid.iter().map(|&c| x[c] as f64).sum::<f64>() / n;
    // K is linear: K (x - mean 1) = K x - mean K 1, both from f32 inputs exactly.
    let kx = coupled_term(g, bodies, body_id, cell_type, x, slice);
    let ones = vec![1.0f32; x.len()];
    let k1 = coupled_term(g, bodies, body_id, cell_type, &ones, slice);
    let mut y: Vec<f64> = (0..g.cells()).map(|c| kx[c] - mean * k1[c]).collect();
    let y_mean = fluid.iter().map(|&c| y[c]).sum::<f64>() / n;
    for &c in &fluid {
        y[c] -= y_mean;
    }
    y
}
