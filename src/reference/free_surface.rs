//! The liquid's free surface (ghost fluid) and the volume correction, in f64. The GPU
//! versions are src/sim/core/free_surface.wgsl, src/sim/core/pressure/matrix.wgsl and
//! src/sim/liquid/volume_correction.wgsl; the reasoning is written there.

use super::{face_cells, face_index, stencil_nodes, Cut, Grid, FLUID, SOLID};

/// The constants the GPU's free surface and volume correction use too.
pub use crate::gpu::constants::{MAX_EXCESS, MAX_SHIFT, SURFACE_CURVE, THETA_MIN, TOLERATED};

/// Fraction of the way from FLUID cell `fluid`'s centre to AIR cell `air`'s at which the
/// level set 0.5 - surface crosses zero (`surface` the filtered density,
/// [`surface_density`]); 1 without one or without a crossing.
pub fn surface_theta(surface: Option<&[f64]>, fluid: usize, air: usize) -> f64 {
    let Some(d) = surface else { return 1.0 };
    let (pa, pb) = (0.5 - d[fluid], 0.5 - d[air]);
    if pb <= pa || pa > 0.0 {
        return 1.0;
    }
    let t = pa / (pa - pb);
    (t - SURFACE_CURVE * (std::f64::consts::TAU * t).sin()).clamp(THETA_MIN, 1.0)
}

/// (phi_b - phi_a) / h across face `f` of component `comp` with ghost values in AIR, or
/// None where the face carries no gradient (a SOLID side, or no FLUID side).
pub fn face_gradient(
    g: &Grid,
    types: &[u8],
    surface: Option<&[f64]>,
    phi: &[f64],
    comp: usize,
    f: [usize; 3],
) -> Option<f64> {
    face_gradient_cut(g, types, surface, None, phi, comp, f)
}

/// [`face_gradient`], None also where the static solids close the face whole.
pub fn face_gradient_cut(
    g: &Grid,
    types: &[u8],
    surface: Option<&[f64]>,
    cut: Option<&Cut>,
    phi: &[f64],
    comp: usize,
    f: [usize; 3],
) -> Option<f64> {
    let [a, b] = face_cells(comp, f);
    let (ta, tb) = (g.type_at(types, a), g.type_at(types, b));
    if ta == SOLID || tb == SOLID || (ta != FLUID && tb != FLUID) {
        return None;
    }
    if super::face_open(cut, comp, face_index(f, g.face_dims(comp))) == 0.0 {
        return None;
    }
    let (ca, cb) = (g.cell_at(a)?, g.cell_at(b)?);
    Some(match (ta == FLUID, tb == FLUID) {
        (true, true) => (phi[cb] - phi[ca]) / g.h,
        (true, false) => -phi[ca] / surface_theta(surface, ca, cb) / g.h,
        _ => phi[cb] / surface_theta(surface, cb, ca) / g.h,
    })
}

/// The density filtered with weights (1 2 1)/4 per axis over the non-SOLID cells of each
/// 3x3x3 block (the `filter_density` kernel of mark_cells.wgsl); 0 in SOLID cells.
pub fn surface_density(g: &Grid, density: &[f64], solid: &[bool]) -> Vec<f64> {
    (0..g.cells())
        .map(|c| {
            if solid[c] {
                return 0.0;
            }
            let x = g.coord(c).map(|v| v as i64);
            let (mut sum, mut wsum) = (0.0, 0.0);
            for o in 0..27i64 {
                let d = [o % 3 - 1, (o / 3) % 3 - 1, o / 9 - 1];
                let Some(y) = g.cell_at([x[0] + d[0], x[1] + d[1], x[2] + d[2]]) else {
                    continue;
                };
                if solid[y] {
                    continue;
                }
                let w: f64 = d.iter().map(|v| (2 - v.abs()) as f64).product();
                sum += w * density[y];
                wsum += w;
            }
            sum / wsum
        })
        .collect()
}

/// Packed matrix with the ghost-fluid free surface: an AIR neighbour adds 1/theta to the
/// diagonal. Without a density it is the first-order matrix (theta = 1).
pub fn build_matrix_free_surface(g: &Grid, types: &[u8], surface: Option<&[f64]>) -> Vec<[f64; 4]> {
    build_matrix_cut(g, types, surface, None)
}

/// [`build_matrix_free_surface`] with each face weighted by [`super::face_weight`].
pub fn build_matrix_cut(
    g: &Grid,
    types: &[u8],
    surface: Option<&[f64]>,
    cut: Option<&Cut>,
) -> Vec<[f64; 4]> {
    (0..g.cells())
        .map(|c| {
            let mut row = [0.0; 4];
            if types[c] != FLUID {
                return row;
            }
            let x = g.coord(c);
            for comp in 0..3 {
                for s in [-1i64, 1] {
                    let mut nb = x.map(|v| v as i64);
                    nb[comp] += s;
                    let mut f = x;
                    if s == 1 {
                        f[comp] += 1;
                    }
                    let i = face_index(f, g.face_dims(comp));
                    // 0 next to a SOLID cell.
                    let w = super::face_weight(g, types, cut, comp, f, i);
                    if w == 0.0 {
                        continue;
                    }
                    if g.type_at(types, nb) == FLUID {
                        row[0] += w;
                        if s == 1 {
                            row[comp + 1] = -w;
                        }
                    } else {
                        let air = g.cell_at(nb).expect("AIR cells lie inside the grid");
                        row[0] += w / surface_theta(surface, c, air);
                    }
                }
            }
            row
        })
        .collect()
}

/// Right-hand side of the volume correction on FLUID cells: -h^2 times the density error
/// beyond +-TOLERATED, clamped to [-MAX_EXCESS, MAX_EXCESS], and to [0, MAX_EXCESS] next to
/// AIR.
pub fn volume_correction_rhs(g: &Grid, types: &[u8], density: &[f64]) -> Vec<f64> {
    volume_correction_rhs_cut(g, types, density, None)
}

/// [`volume_correction_rhs`], 0 in cut cells (they hold no particles).
pub fn volume_correction_rhs_cut(
    g: &Grid,
    types: &[u8],
    density: &[f64],
    cut: Option<&Cut>,
) -> Vec<f64> {
    (0..g.cells())
        .map(|c| {
            if types[c] != FLUID || cut.is_some_and(|k| k.is_partial(c)) {
                return 0.0;
            }
            let x = g.coord(c).map(|v| v as i64);
            let surface = (0..3).any(|comp| {
                [-1i64, 1].iter().any(|s| {
                    let mut nb = x;
                    nb[comp] += s;
                    g.type_at(types, nb) == super::AIR
                })
            });
            let lowest = if surface { 0.0 } else { -MAX_EXCESS };
            let e = density[c] - 1.0;
            let beyond = e.signum() * (e.abs() - TOLERATED).max(0.0);
            -g.h * g.h * beyond.clamp(lowest, MAX_EXCESS)
        })
        .collect()
}

/// Particles moved by the interpolated face gradient of `psi` (clamped to MAX_SHIFT cells
/// per axis), kept inside the domain; a move that would end in a SOLID cell is dropped.
pub fn volume_correction_displace(
    g: &Grid,
    types: &[u8],
    surface: &[f64],
    solid: &[bool],
    psi: &[f64],
    pos: &[[f64; 3]],
) -> Vec<[f64; 3]> {
    volume_correction_displace_cut(g, types, surface, None, solid, psi, pos)
}

/// [`volume_correction_displace`] with no gradient through closed faces.
pub fn volume_correction_displace_cut(
    g: &Grid,
    types: &[u8],
    surface: &[f64],
    cut: Option<&Cut>,
    solid: &[bool],
    psi: &[f64],
    pos: &[[f64; 3]],
) -> Vec<[f64; 3]> {
    let n = g.n();
    let m = 0.01 * g.h;
    pos.iter()
        .map(|x0| {
            let mut x = *x0;
            for comp in 0..3 {
                let d = g.face_dims(comp);
                let mut shift = 0.0;
                for (idx, w) in stencil_nodes(g, comp, *x0) {
                    let f = [idx % d[0], (idx / d[0]) % d[1], idx / (d[0] * d[1])];
                    if let Some(grad) =
                        face_gradient_cut(g, types, Some(surface), cut, psi, comp, f)
                    {
                        shift += w * grad;
                    }
                }
                let lim = MAX_SHIFT * g.h;
                x[comp] = (x0[comp] + shift.clamp(-lim, lim)).clamp(m, n[comp] as f64 * g.h - m);
            }
            let cell = super::cell_of(g, x);
            if solid[cell] {
                *x0
            } else {
                x
            }
        })
        .collect()
}
