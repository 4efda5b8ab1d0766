//! Surface tension on the ghost-fluid free surface, in f64: the GPU's is
//! src/sim/core/tension.wgsl (the curvature and the right-hand side's jump) and
//! tension_phi.wgsl (the surface's value of the pressure unknown); the reasoning is in
//! src/sim/core/tension.rs.

use super::{face_index, free_surface::surface_theta, Cut, Grid, AIR, FLUID};
use crate::gpu::constants::{TENSION_FULL, TENSION_MIN_GRADIENT, TENSION_REACH, TENSION_SPREAD};

/// The mean curvature (1/m) of the level set 0.5 - `surface` at every cell centre. Where
/// the 5x5 columns (less the corners) of 2 [`TENSION_REACH`] + 1 cells along the level
/// set's gradient's largest axis each hold the whole step (at least [`TENSION_FULL`] at the
/// liquid end, at most 1 - that at the air end) and the cell's own column puts the surface
/// within a cell of its centre, from the height function:
/// kappa = -div(grad H / sqrt(1 + |grad H|^2)) on the 3x3 around the cell, H each column's
/// liquid (the density clamped to [0, 1]) less [`TENSION_SPREAD`] times the heights'
/// Laplacian. Elsewhere div(grad phi / |grad phi|) from central differences (0 where
/// |grad phi| per cell is under [`TENSION_MIN_GRADIENT`]). kappa h is clamped to 1; the
/// density is mirrored outside the grid (-1 reads 0, -2 reads 1).
pub fn curvature(g: &Grid, surface: &[f64]) -> Vec<f64> {
    curvature_by_scheme(g, surface)
        .into_iter()
        .map(|k| match k {
            Ok(k) | Err(k) => k,
        })
        .collect()
}

/// [`curvature`], Ok where the height function gave it and Err where the differences did.
pub fn curvature_by_scheme(g: &Grid, surface: &[f64]) -> Vec<Result<f64, f64>> {
    let n = g.n();
    let at_cell = |c: [i64; 3]| {
        // Mirrored across the walls: -1 reads 0, -2 reads 1, n reads n - 1.
        let k = |a: usize| {
            let m = n[a] as i64;
            let i = if c[a] < 0 { -1 - c[a] } else { c[a] };
            let i = if i >= m { 2 * m - 1 - i } else { i };
            i.clamp(0, m - 1) as usize
        };
        surface[g.cell(k(0), k(1), k(2))]
    };
    let unit = |a: usize| {
        let mut e = [0i64; 3];
        e[a] = 1;
        e
    };
    let off =
        |x: [i64; 3], e: [i64; 3], k: i64| [x[0] + k * e[0], x[1] + k * e[1], x[2] + k * e[2]];
    let reach = TENSION_REACH as i64;
    let filled = |c: [i64; 3]| at_cell(c).clamp(0.0, 1.0);
    // A column's liquid, or None when it does not hold the whole surface.
    let column = |x: [i64; 3], e: [i64; 3], up: i64| {
        let whole = filled(off(x, e, -reach * up)) >= TENSION_FULL
            && filled(off(x, e, reach * up)) <= 1.0 - TENSION_FULL;
        whole.then(|| (-reach..=reach).map(|k| filled(off(x, e, k))).sum::<f64>())
    };
    // kappa h per cell: Ok from the heights, Err from second differences (or 0 where the
    // level set is flat).
    let raw: Vec<Result<f64, f64>> = (0..g.cells())
        .map(|c| {
            let x = g.coord(c).map(|v| v as i64);
            let at = |d: [i64; 3]| 0.5 - at_cell([x[0] + d[0], x[1] + d[1], x[2] + d[2]]);
            let neg = |e: [i64; 3]| e.map(|v| -v);
            let add = |a: [i64; 3], b: [i64; 3]| [a[0] + b[0], a[1] + b[1], a[2] + b[2]];
            let p0 = at([0, 0, 0]);
            let d1: Vec<f64> = (0..3)
                .map(|a| 0.5 * (at(unit(a)) - at(neg(unit(a)))))
                .collect();
            let (px, py, pz) = (d1[0], d1[1], d1[2]);
            let g2 = px * px + py * py + pz * pz;
            if g2 <= TENSION_MIN_GRADIENT * TENSION_MIN_GRADIENT {
                return Err(0.0);
            }
            let mut a = 0;
            for k in 1..3 {
                if d1[k].abs() > d1[a].abs() {
                    a = k;
                }
            }
            let (ea, eb, ec) = (unit(a), unit((a + 1) % 3), unit((a + 2) % 3));
            let up = if d1[a] > 0.0 { 1 } else { -1 };
            // The cell's own column must hold the whole step and put the surface within a
            // cell of its centre; then the 5x5 columns less the corners must all be whole,
            // and the 3x3 around the cell are unblurred.
            let column_at = |i: i64, j: i64| column(off(off(x, eb, i), ec, j), ea, up);
            let own = column_at(0, 0).filter(|h| (h - reach as f64 - 0.5).abs() <= 1.0);
            let blurred: Option<Vec<f64>> = own.and_then(|_| {
                (0..25i64)
                    .map(|k| {
                        let (i, j) = (k % 5 - 2, k / 5 - 2);
                        match i.abs() == 2 && j.abs() == 2 {
                            true => Some(0.0),
                            false => column_at(i, j),
                        }
                    })
                    .collect()
            });
            let heights = blurred.map(|b| {
                (0..9)
                    .map(|k| {
                        let at: usize = 5 * (k / 3 + 1) + k % 3 + 1;
                        let lap = b[at - 1] + b[at + 1] + b[at - 5] + b[at + 5] - 4.0 * b[at];
                        b[at] - TENSION_SPREAD * lap
                    })
                    .collect::<Vec<f64>>()
            });
            match heights {
                Some(hs) => {
                    let hb = 0.5 * (hs[5] - hs[3]);
                    let hc = 0.5 * (hs[7] - hs[1]);
                    let hbb = hs[5] - 2.0 * hs[4] + hs[3];
                    let hcc = hs[7] - 2.0 * hs[4] + hs[1];
                    let hbc = 0.25 * (hs[8] - hs[6] - hs[2] + hs[0]);
                    let q = 1.0 + hb * hb + hc * hc;
                    let kappa = -(hbb * (1.0 + hc * hc) + hcc * (1.0 + hb * hb)
                        - 2.0 * hbc * hb * hc)
                        / (q * q.sqrt());
                    Ok(kappa.clamp(-1.0, 1.0))
                }
                None => {
                    let d2: Vec<f64> = (0..3)
                        .map(|a| at(unit(a)) - 2.0 * p0 + at(neg(unit(a))))
                        .collect();
                    let cross = |a: usize, b: usize| {
                        let (ea, eb) = (unit(a), unit(b));
                        0.25 * (at(add(ea, eb)) - at(add(ea, neg(eb))) - at(add(neg(ea), eb))
                            + at(add(neg(ea), neg(eb))))
                    };
                    let num = d2[0] * (py * py + pz * pz)
                        + d2[1] * (px * px + pz * pz)
                        + d2[2] * (px * px + py * py)
                        - 2.0
                            * (px * py * cross(0, 1)
                                + px * pz * cross(0, 2)
                                + py * pz * cross(1, 2));
                    Err((num / (g2 * g2.sqrt())).clamp(-1.0, 1.0))
                }
            }
        })
        .collect();
    raw.into_iter()
        .map(|k| k.map(|k| k / g.h).map_err(|k| k / g.h))
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
    /// sets to second order; a step a cell or two wide reads them 10-20% more curved). Too
    /// gentle a slope for the height function's columns to hold it whole.
    fn blob(g: &Grid, centre: [f64; 3], r: f64) -> Vec<f64> {
        (0..g.cells())
            .map(|c| {
                let x = g.coord(c);
                let d = (0..3)
                    .map(|a| (x[a] as f64 + 0.5 - centre[a]).powi(2))
                    .sum::<f64>()
                    .sqrt();
                0.5 - 0.05 * (d - r)
            })
            .collect()
    }

    /// The volume fraction of a ball (a disc in the slice) in each cell, from 8 samples
    /// per axis.
    fn ball(g: &Grid, centre: [f64; 3], r: f64) -> Vec<f64> {
        let m = 8;
        let axes = if g.nz == 1 { 2 } else { 3 };
        (0..g.cells())
            .map(|c| {
                let x = g.coord(c);
                let mut inside = 0;
                for k in 0..m * m * m {
                    let o = [k % m, k / m % m, k / (m * m)];
                    let d2: f64 = (0..axes)
                        .map(|a| (x[a] as f64 + (o[a] as f64 + 0.5) / m as f64 - centre[a]).powi(2))
                        .sum();
                    inside += (d2 < r * r) as u32;
                }
                inside as f64 / (m * m * m) as f64
            })
            .collect()
    }

    /// `v` blurred by (1/8, 3/4, 1/8) along each axis the grid has more than one cell on,
    /// extended by its nearest cell.
    fn blurred(g: &Grid, v: &[f64]) -> Vec<f64> {
        let n = g.n();
        let mut v = v.to_vec();
        for a in 0..3 {
            if n[a] == 1 {
                continue;
            }
            v = (0..g.cells())
                .map(|c| {
                    let x = g.coord(c);
                    let at = |d: i64| {
                        let mut y = x;
                        y[a] = (x[a] as i64 + d).clamp(0, n[a] as i64 - 1) as usize;
                        v[g.cell(y[0], y[1], y[2])]
                    };
                    0.125 * at(-1) + 0.75 * at(0) + 0.125 * at(1)
                })
                .collect();
        }
        v
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
        // The filtered density of a ball: its volume fractions blurred sideways as P2G's
        // tents and the six faces blur them (a kernel of variance 1/4 cell^2 per axis).
        // The height function reads the surface's own curvature, 2/r, on the cells each
        // side of it that have whole columns to 1% on average, where second differences of
        // the step read it 5-15% off.
        // (radius, nz, bound on the mean, on each cell, least share with whole columns)
        let cases = [
            (6.0, 24, 0.015, 0.15, 0.33),
            (4.0, 24, 0.015, 0.15, 0.1),
            (6.0, 1, 0.015, 0.3, 0.33),
        ];
        for (r, nz, bound, spread, share) in cases {
            let s = Grid { nz, ..g };
            let centre = [12.17, 11.9, if nz == 1 { 0.5 } else { 12.05 }];
            let density = blurred(&s, &ball(&s, centre, r));
            let k = curvature_by_scheme(&s, &density);
            let want = if nz == 1 { 1.0 / r } else { 2.0 / r };
            // The cells the jump reads: each side of the surface, density 0.5.
            let on_surface = |c: usize| {
                let x = s.coord(c).map(|v| v as i64);
                (0..6).any(|k| {
                    let mut y = x;
                    y[k / 2] += if k % 2 == 0 { -1 } else { 1 };
                    s.cell_at(y)
                        .is_some_and(|b| (density[b] >= 0.5) != (density[c] >= 0.5))
                })
            };
            let surface_cells = (0..s.cells()).filter(|&c| on_surface(c)).count();
            let on_step: Vec<f64> = (0..s.cells())
                .filter(|&c| on_surface(c))
                .filter_map(|c| k[c].ok())
                .map(|k| k * s.h / want)
                .collect();
            // The share with whole columns: 44% at 12 cells across, 15% at 8.
            assert!(
                on_step.len() as f64 > share * surface_cells as f64,
                "{} of {surface_cells}",
                on_step.len()
            );
            let mean = on_step.iter().sum::<f64>() / on_step.len() as f64;
            let worst = on_step.iter().fold(0.0f64, |m, v| m.max((v - 1.0).abs()));
            assert!(on_step.len() > 20);
            assert!((mean - 1.0).abs() < bound, "r {r}, nz {nz}: mean {mean}");
            // Cell by cell: the volume fractions' sampling (1/512).
            assert!(worst < spread, "r {r}, nz {nz}: worst {worst}");
        }
        // A standing wave's crest against a wall (the slice): the density mirrored across
        // the wall reads the same curvature there as the wave has, -A k^2 cos(k x) to the
        // slope's correction, where the nearest cell's extension would flatten it.
        let s = Grid {
            nx: 24,
            ny: 24,
            nz: 1,
            h: 1.0,
        };
        let (depth, a, k) = (12.0, 1.5, std::f64::consts::PI / 24.0);
        let top = |x: f64| depth + a * (k * x).cos();
        let layer: Vec<f64> = (0..s.cells())
            .map(|c| {
                let x = s.coord(c);
                let m = 16;
                let inside = (0..m * m)
                    .filter(|q| {
                        let px = x[0] as f64 + (q % m) as f64 / m as f64 + 0.5 / m as f64;
                        let py = x[1] as f64 + (q / m) as f64 / m as f64 + 0.5 / m as f64;
                        py < top(px)
                    })
                    .count();
                inside as f64 / (m * m) as f64
            })
            .collect();
        let k_wave = curvature(&s, &layer);
        for col in [0, 1, 23] {
            let x = col as f64 + 0.5;
            let slope = -a * k * (k * x).sin();
            let want = a * k * k * (k * x).cos() / (1.0 + slope * slope).powf(1.5);
            // The two cells each side of the surface in this column.
            let row = top(x).floor() as usize;
            for y in [row - 1, row, row + 1] {
                if !(0.05..0.95).contains(&layer[s.cell(col, y, 0)]) && y != row {
                    continue;
                }
                let got = k_wave[s.cell(col, y, 0)];
                assert!(
                    (got - want).abs() < 0.15 * want.abs(),
                    "column {col}, row {y}: {got} against {want}"
                );
            }
        }
        // A flat surface: 0.
        let flat: Vec<f64> = (0..g.cells())
            .map(|c| if g.coord(c)[1] < 10 { 1.0 } else { 0.0 })
            .collect();
        assert!(curvature(&g, &flat).iter().all(|v| v.abs() < 1e-12));
    }
}
