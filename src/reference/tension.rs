//! Surface tension on the ghost-fluid free surface, in f64: the GPU's is
//! src/sim/core/tension.wgsl (the curvature and the right-hand side's jump) and
//! tension_phi.wgsl (the surface's value of the pressure unknown); the reasoning is in
//! src/sim/core/tension.rs.

use super::{face_index, free_surface::surface_theta, Cut, Grid, AIR, FLUID};
use crate::gpu::constants::TENSION_MIN_GRADIENT;

/// The mean curvature (1/m) of the level set 0.5 - `surface` at every cell centre:
/// div(grad phi / |grad phi|) from central differences, phi extended outside the grid by
/// its nearest cell, 0 where |grad phi| per cell is under [`TENSION_MIN_GRADIENT`], and
/// clamped to 1/h.
pub fn curvature(g: &Grid, surface: &[f64]) -> Vec<f64> {
    let n = g.n();
    let level = |c: [i64; 3]| {
        let k = |a: usize| c[a].clamp(0, n[a] as i64 - 1) as usize;
        0.5 - surface[g.cell(k(0), k(1), k(2))]
    };
    (0..g.cells())
        .map(|c| {
            let x = g.coord(c).map(|v| v as i64);
            let at = |d: [i64; 3]| level([x[0] + d[0], x[1] + d[1], x[2] + d[2]]);
            let unit = |a: usize| {
                let mut e = [0; 3];
                e[a] = 1;
                e
            };
            let neg = |e: [i64; 3]| e.map(|v| -v);
            let add = |a: [i64; 3], b: [i64; 3]| [a[0] + b[0], a[1] + b[1], a[2] + b[2]];
            let p0 = at([0, 0, 0]);
            let d1: Vec<f64> = (0..3)
                .map(|a| 0.5 * (at(unit(a)) - at(neg(unit(a)))))
                .collect();
            let d2: Vec<f64> = (0..3)
                .map(|a| at(unit(a)) - 2.0 * p0 + at(neg(unit(a))))
                .collect();
            let cross = |a: usize, b: usize| {
                let (ea, eb) = (unit(a), unit(b));
                0.25 * (at(add(ea, eb)) - at(add(ea, neg(eb))) - at(add(neg(ea), eb))
                    + at(add(neg(ea), neg(eb))))
            };
            let (px, py, pz) = (d1[0], d1[1], d1[2]);
            let g2 = px * px + py * py + pz * pz;
            if g2 <= TENSION_MIN_GRADIENT * TENSION_MIN_GRADIENT {
                return 0.0;
            }
            let num = d2[0] * (py * py + pz * pz)
                + d2[1] * (px * px + pz * pz)
                + d2[2] * (px * px + py * py)
                - 2.0 * (px * py * cross(0, 1) + px * pz * cross(0, 2) + py * pz * cross(1, 2));
            (num / (g2 * g2.sqrt())).clamp(-1.0, 1.0) / g.h
        })
        .collect()
}

/// The pressure unknown phi = p dt / rho on the surface between FLUID cell `fluid` and AIR
/// cell `air`, the level set crossing at `theta`: sigma kappa dt / rho, kappa interpolated
/// between the two cells' curvatures. `tension` is sigma / rho (m^3/s^2).
pub fn surface_phi(
    kappa: &[f64],
    fluid: usize,
    air: usize,
    theta: f64,
    tension: f64,
    dt: f64,
) -> f64 {
    tension * dt * ((1.0 - theta) * kappa[fluid] + theta * kappa[air])
}

/// Each FLUID cell's share of the right-hand side from the surface: w phi_s / theta over
/// its faces to AIR cells (w the face's open fraction).
pub fn jump_rhs(
    g: &Grid,
    types: &[u8],
    surface: &[f64],
    cut: Option<&Cut>,
    kappa: &[f64],
    (tension, dt): (f64, f64),
) -> Vec<f64> {
    let mut rhs = vec![0.0; g.cells()];
    for (c, out) in rhs.iter_mut().enumerate() {
        if types[c] != FLUID {
            continue;
        }
        let x = g.coord(c).map(|v| v as i64);
        for comp in 0..3 {
            for up in [false, true] {
                let mut nb = x;
                nb[comp] += if up { 1 } else { -1 };
                if g.type_at(types, nb) != AIR {
                    continue;
                }
                let Some(b) = g.cell_at(nb) else { continue };
                // The face between them: the upper cell's lower face.
                let mut f = if up { nb } else { x }.map(|v| v as usize);
                f[comp] = f[comp].min(g.n()[comp]);
                let w = super::face_open(cut, comp, face_index(f, g.face_dims(comp)));
                if w == 0.0 {
                    continue;
                }
                let theta = surface_theta(Some(surface), c, b);
                *out += w * surface_phi(kappa, c, b, theta, tension, dt) / theta;
            }
        }
    }
    rhs
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A radial density about `centre` (cells) falling through 0.5 at radius `r`, linearly
    /// in the distance (a signed distance scaled: central differences then see its level
    /// sets to second order; a step a cell or two wide reads them 10-20% more curved).
    fn blob(g: &Grid, centre: [f64; 3], r: f64) -> Vec<f64> {
        (0..g.cells())
            .map(|c| {
                let x = g.coord(c);
                let d = (0..3)
                    .map(|a| (x[a] as f64 + 0.5 - centre[a]).powi(2))
                    .sum::<f64>()
                    .sqrt();
                0.5 - 0.1 * (d - r)
            })
            .collect()
    }

    #[test]
    fn a_round_blob_reads_two_over_its_radius_and_a_disc_one() {
        // Every level set of a radial density is a sphere: at a cell centre at distance d
        // from the centre the curvature is 2/d (1/d in the slice), to the differences'
        // second-order error.
        let g = Grid {
            nx: 24,
            ny: 24,
            nz: 24,
            h: 0.01,
        };
        let (centre, r) = ([12.0, 12.0, 12.0], 6.0);
        let k = curvature(&g, &blob(&g, centre, r));
        let c = g.cell(17, 12, 12);
        let d = 17.5 - 12.0;
        assert!(
            (k[c] * g.h * d / 2.0 - 1.0).abs() < 0.02,
            "{}",
            k[c] * g.h * d
        );
        let s = Grid {
            nx: 24,
            ny: 24,
            nz: 1,
            h: 0.01,
        };
        let k = curvature(&s, &blob(&s, [12.0, 12.0, 0.5], r));
        assert!((k[s.cell(17, 12, 0)] * s.h * d - 1.0).abs() < 0.02);
        // A flat surface: 0.
        let flat: Vec<f64> = (0..g.cells())
            .map(|c| if g.coord(c)[1] < 10 { 1.0 } else { 0.0 })
            .collect();
        assert!(curvature(&g, &flat).iter().all(|v| v.abs() < 1e-12));
    }
}
