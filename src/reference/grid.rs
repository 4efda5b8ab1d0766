//! Grid stages: marking, forces, solid boundaries, divergence, projection, extrapolation.

use super::{face_cells, face_index, for_each_face, Cut, Grid, MacField, AIR, FLUID, SOLID};

/// Relative particle density of every cell: the mean weight of its six faces over
/// `rest_weight` (particles per cell), a face against a solid or the domain wall counted
/// twice (at rest it collects half an interior face's weight); 0 in SOLID cells.
pub fn relative_density(g: &Grid, weight: &MacField, solid: &[bool], rest_weight: f64) -> Vec<f64> {
    let walled = |x: [i64; 3]| g.cell_at(x).is_none_or(|c| solid[c]);
    (0..g.cells())
        .map(|c| {
            if solid[c] {
                return 0.0;
            }
            let x = g.coord(c);
            let xi = x.map(|v| v as i64);
            let mut s = 0.0;
            for comp in 0..3 {
                let d = g.face_dims(comp);
                let mut hi = x;
                hi[comp] += 1;
                let (mut lo_c, mut hi_c) = (xi, xi);
                lo_c[comp] -= 1;
                hi_c[comp] += 1;
                let factor = |w: bool| if w { 2.0 } else { 1.0 };
                s += weight.comp(comp)[face_index(x, d)] * factor(walled(lo_c));
                s += weight.comp(comp)[face_index(hi, d)] * factor(walled(hi_c));
            }
            s / (6.0 * rest_weight)
        })
        .collect()
}

/// SOLID from the mask; FLUID where a particle lies and the relative density reaches
/// [`crate::gpu::constants::FLUID_DENSITY_FRACTION`]; AIR elsewhere.
pub fn mark_cells(
    g: &Grid,
    count: &[u32],
    weight: &MacField,
    solid: &[bool],
    rest_weight: f64,
) -> Vec<u8> {
    mark_cells_cut(g, count, weight, solid, rest_weight, None)
}

/// [`mark_cells`] with cut cells (`solid` true in them too): AIR, then FLUID where a cell
/// the particles marked FLUID lies across one of their open faces (mark_cells.wgsl,
/// `cut_cells`).
pub fn mark_cells_cut(
    g: &Grid,
    count: &[u32],
    weight: &MacField,
    solid: &[bool],
    rest_weight: f64,
    cut: Option<&Cut>,
) -> Vec<u8> {
    let density = relative_density(g, weight, solid, rest_weight);
    let threshold = crate::gpu::constants::FLUID_DENSITY_FRACTION as f64;
    let partial = |c: usize| cut.is_some_and(|k| k.is_partial(c));
    let mut types: Vec<u8> = (0..g.cells())
        .map(|c| {
            if partial(c) {
                AIR
            } else if solid[c] {
                SOLID
            } else if count[c] > 0 && density[c] >= threshold {
                FLUID
            } else {
                AIR
            }
        })
        .collect();
    if let Some(k) = cut {
        let first = types.clone();
        for (c, t) in types.iter_mut().enumerate() {
            if !k.is_partial(c) {
                continue;
            }
            let x = g.coord(c);
            let wet = (0..3).any(|comp| {
                [false, true].iter().any(|&up| {
                    let mut nb = x.map(|v| v as i64);
                    nb[comp] += if up { 1 } else { -1 };
                    let Some(n) = g.cell_at(nb) else { return false };
                    let mut f = x;
                    if up {
                        f[comp] += 1;
                    }
                    let i = face_index(f, g.face_dims(comp));
                    k.flags[n] == 0 && first[n] == FLUID && k.open.comp(comp)[i] > 0.0
                })
            });
            if wet {
                *t = FLUID;
            }
        }
    }
    types
}

fn touches_fluid(g: &Grid, types: &[u8], comp: usize, f: [usize; 3]) -> bool {
    face_cells(comp, f)
        .iter()
        .any(|c| g.type_at(types, *c) == FLUID)
}

/// Gravity on faces next to FLUID or carrying P2G weight.
pub fn apply_forces(
    g: &Grid,
    types: &[u8],
    weight: &MacField,
    vel: &mut MacField,
    gravity: [f64; 3],
    dt: f64,
) {
    for_each_face(g, |comp, f, i| {
        if touches_fluid(g, types, comp, f) || weight.comp(comp)[i] > 0.0 {
            vel.comp_mut(comp)[i] += gravity[comp] * dt;
        }
    });
}

/// u.n = u_solid.n on faces next to SOLID cells (outside the grid: solid at rest).
pub fn apply_boundary(g: &Grid, types: &[u8], solid_vel: &[[f64; 3]], vel: &mut MacField) {
    apply_boundary_cut(g, types, solid_vel, None, vel)
}

/// [`apply_boundary`], and the solid's velocity on faces the static solids close whole
/// between two cells that are not SOLID.
pub fn apply_boundary_cut(
    g: &Grid,
    types: &[u8],
    solid_vel: &[[f64; 3]],
    cut: Option<&Cut>,
    vel: &mut MacField,
) {
    for_each_face(g, |comp, f, i| {
        let cells = face_cells(comp, f);
        let sv = |c: [i64; 3]| g.cell_at(c).map_or(0.0, |ci| solid_vel[ci][comp]);
        let sa = g.type_at(types, cells[0]) == SOLID;
        let sb = g.type_at(types, cells[1]) == SOLID;
        // The rigid body a cell carries the velocity of (0: none).
        let body = |c: [i64; 3]| {
            cut.zip(g.cell_at(c))
                .map_or(0, |(k, ci)| k.body.get(ci).copied().unwrap_or(0))
        };
        let mean = 0.5 * (sv(cells[0]) + sv(cells[1]));
        let value = match (sa, sb) {
            (true, true) => Some(mean),
            // The SOLID cell's velocity; where the other cell carries the same body's (a
            // body that cuts faces), their mean: the body's velocity at the face's centre.
            (true, false) | (false, true) => {
                let (s, o) = if sa { (0, 1) } else { (1, 0) };
                let b = body(cells[s]);
                Some(if b != 0 && body(cells[o]) == b {
                    mean
                } else {
                    sv(cells[s])
                })
            }
            _ => cut
                .filter(|k| k.open.comp(comp)[i] == 0.0)
                .map(|k| k.covered_velocity(g, comp, f)),
        };
        if let Some(v) = value {
            vel.comp_mut(comp)[i] = v;
        }
    });
}

/// Divergence (1/s) of FLUID cells and the right-hand side b = -h^2 div.
pub fn divergence(g: &Grid, types: &[u8], vel: &MacField) -> (Vec<f64>, Vec<f64>) {
    divergence_cut(g, types, vel, None)
}

/// [`divergence`] of the fluid's part of cut cells: a cut face's flux is its open part at
/// the fluid's velocity and the rest at the solid's.
pub fn divergence_cut(
    g: &Grid,
    types: &[u8],
    vel: &MacField,
    cut: Option<&Cut>,
) -> (Vec<f64>, Vec<f64>) {
    let mut div = vec![0.0; g.cells()];
    for (c, d) in div.iter_mut().enumerate() {
        if types[c] != FLUID {
            continue;
        }
        let x = g.coord(c);
        let (mut flux, mut open_sum) = (0.0, 0.0);
        for comp in 0..3 {
            let dims = g.face_dims(comp);
            let mut hi = x;
            hi[comp] += 1;
            for (f, sign) in [(hi, 1.0), (x, -1.0)] {
                let i = face_index(f, dims);
                let w = super::face_weight(g, types, cut, comp, f, i);
                flux += sign * super::flux_velocity(g, cut, comp, f, w, vel.comp(comp)[i]);
                open_sum += w;
            }
        }
        // A FLUID cell no face opens onto has no row in A.
        *d = if open_sum == 0.0 { 0.0 } else { flux / g.h };
    }
    let rhs = div.iter().map(|d| -g.h * g.h * d).collect();
    (div, rhs)
}

/// u -= grad(phi) on faces between two non-SOLID cells with at least one FLUID, phi = 0 at
/// AIR cell centres (the first-order free surface; [`project_free_surface`] with a density).
pub fn project(g: &Grid, types: &[u8], phi: &[f64], vel: &mut MacField) {
    project_free_surface(g, types, None, phi, vel)
}

/// u -= grad(phi) with the ghost-fluid free surface of the filtered density `surface` (see
/// [`super::face_gradient`]).
pub fn project_free_surface(
    g: &Grid,
    types: &[u8],
    surface: Option<&[f64]>,
    phi: &[f64],
    vel: &mut MacField,
) {
    project_cut(g, types, surface, None, phi, vel)
}

/// [`project_free_surface`] through the open faces only.
pub fn project_cut(
    g: &Grid,
    types: &[u8],
    surface: Option<&[f64]>,
    cut: Option<&Cut>,
    phi: &[f64],
    vel: &mut MacField,
) {
    for_each_face(g, |comp, f, i| {
        if let Some(grad) = super::face_gradient_cut(g, types, surface, cut, phi, comp, f) {
            vel.comp_mut(comp)[i] -= grad;
        }
    });
}

/// Extrapolates velocities into faces that neither touch FLUID nor carry P2G weight, one
/// layer at a time (average of valid same-component neighbours); faces never reached are
/// zeroed. Returns the final validity flags per component.
pub fn extrapolate(
    g: &Grid,
    types: &[u8],
    weight: &MacField,
    vel: &mut MacField,
    layers: usize,
) -> [Vec<bool>; 3] {
    let mut valid: [Vec<bool>; 3] = [vec![], vec![], vec![]];
    for (comp, v) in valid.iter_mut().enumerate() {
        *v = vec![false; vel.comp(comp).len()];
    }
    for_each_face(g, |comp, f, i| {
        valid[comp][i] = touches_fluid(g, types, comp, f) || weight.comp(comp)[i] > 0.0;
    });
    for _ in 0..layers {
        let prev = valid.clone();
        for (comp, prev_c) in prev.iter().enumerate() {
            let d = g.face_dims(comp);
            let data = vel.comp(comp).clone();
            for k in 0..d[2] {
                for j in 0..d[1] {
                    for i in 0..d[0] {
                        let idx = face_index([i, j, k], d);
                        if prev_c[idx] {
                            continue;
                        }
                        let (mut sum, mut n) = (0.0, 0);
                        let f = [i as i64, j as i64, k as i64];
                        for axis in 0..3 {
                            for s in [-1i64, 1] {
                                let mut nb = f;
                                nb[axis] += s;
                                if (0..3).all(|a| nb[a] >= 0 && (nb[a] as usize) < d[a]) {
                                    let ni = face_index(nb.map(|x| x as usize), d);
                                    if prev_c[ni] {
                                        sum += data[ni];
                                        n += 1;
                                    }
                                }
                            }
                        }
                        if n > 0 {
                            vel.comp_mut(comp)[idx] = sum / n as f64;
                            valid[comp][idx] = true;
                        }
                    }
                }
            }
        }
    }
    for (comp, v) in valid.iter().enumerate() {
        for (i, ok) in v.iter().enumerate() {
            if !ok {
                vel.comp_mut(comp)[i] = 0.0;
            }
        }
    }
    valid
}

/// Counts of each cell type (AIR, FLUID, SOLID).
pub fn type_counts(types: &[u8]) -> [usize; 3] {
    let mut c = [0; 3];
    for t in types {
        c[*t as usize] += 1;
    }
    c
}

#[cfg(test)]
mod tests {
    use super::super::testutil::Rng;
    use super::super::{pressure::*, transfer::p2g};
    use super::*;

    /// Random types: a solid block, fluid in the lower part, air above.
    pub(crate) fn random_setup(g: &Grid, seed: u64) -> (Vec<u8>, MacField) {
        let mut rng = Rng(seed);
        let types: Vec<u8> = (0..g.cells())
            .map(|c| {
                let [i, j, _] = g.coord(c);
                if i >= g.nx - 3 && j < 2 {
                    SOLID
                } else if (j as f64) < g.ny as f64 * 0.6 || rng.f() < 0.1 {
                    if rng.f() < 0.05 {
                        AIR
                    } else {
                        FLUID
                    }
                } else {
                    AIR
                }
            })
            .collect();
        let mut vel = MacField::zeros(g);
        for comp in 0..3 {
            for x in vel.comp_mut(comp).iter_mut() {
                *x = rng.f() * 2.0 - 1.0;
            }
        }
        (types, vel)
    }

    #[test]
    fn projection_removes_divergence() {
        for nz in [1, 6] {
            let g = Grid {
                nx: 10,
                ny: 8,
                nz,
                h: 0.05,
            };
            let (types, mut vel) = random_setup(&g, 1);
            let solid_vel = vec![[0.2, -0.1, 0.0]; g.cells()];
            apply_boundary(&g, &types, &solid_vel, &mut vel);
            let (div, b) = divergence(&g, &types, &vel);
            assert!(div.iter().any(|d| d.abs() > 1.0));
            let a = build_matrix(&g, &types);
            let phi = direct_solve(&g, &a, &b);
            project(&g, &types, &phi, &mut vel);
            let (after, _) = divergence(&g, &types, &vel);
            let worst = after.iter().fold(0.0f64, |m, d| m.max(d.abs()));
            assert!(worst < 1e-8, "nz {nz}: divergence left {worst}");
        }
    }

    #[test]
    fn boundary_sets_solid_velocity_and_walls() {
        let g = Grid {
            nx: 6,
            ny: 5,
            nz: 4,
            h: 0.1,
        };
        let (types, mut vel) = random_setup(&g, 2);
        let solid_vel = vec![[0.5, 0.25, -0.75]; g.cells()];
        apply_boundary(&g, &types, &solid_vel, &mut vel);
        // Domain walls: u at i = 0 and i = nx are 0.
        let d = g.face_dims(0);
        for k in 0..d[2] {
            for j in 0..d[1] {
                assert_eq!(vel.u[face_index([0, j, k], d)], 0.0);
            }
        }
        // A face between a FLUID cell and the solid block takes the solid's velocity.
        let mut found = false;
        for_each_face(&g, |comp, f, i| {
            let [a, b] = face_cells(comp, f);
            let (ta, tb) = (g.type_at(&types, a), g.type_at(&types, b));
            if g.cell_at(a).is_some() && g.cell_at(b).is_some() && ta == SOLID && tb == FLUID {
                assert_eq!(vel.comp(comp)[i], solid_vel[0][comp]);
                found = true;
            }
        });
        assert!(found);
    }

    #[test]
    fn extrapolation_fills_layers_and_zeroes_the_rest() {
        let g = Grid {
            nx: 12,
            ny: 12,
            nz: 1,
            h: 0.1,
        };
        let types: Vec<u8> = (0..g.cells())
            .map(|c| if g.coord(c)[1] < 3 { FLUID } else { AIR })
            .collect();
        let mut vel = MacField::zeros(&g);
        for x in vel.u.iter_mut() {
            *x = 1.0;
        }
        let weight = MacField::zeros(&g);
        let valid = extrapolate(&g, &types, &weight, &mut vel, 2);
        let d = g.face_dims(0);
        // Rows j = 0..2 touch fluid; j = 3, 4 are the two layers; above is zeroed.
        assert_eq!(vel.u[face_index([5, 4, 0], d)], 1.0);
        assert!(valid[0][face_index([5, 4, 0], d)]);
        assert_eq!(vel.u[face_index([5, 5, 0], d)], 0.0);
        assert!(!valid[0][face_index([5, 5, 0], d)]);
    }

    #[test]
    fn marking_needs_density() {
        let g = Grid {
            nx: 4,
            ny: 4,
            nz: 4,
            h: 0.25,
        };
        // One particle alone in a cell: weight far below half of 8 particles per cell.
        let pos = vec![[0.6, 0.6, 0.6]];
        let r = p2g(&g, &pos, &[[0.0; 3]]);
        let solid = vec![false; g.cells()];
        let t = mark_cells(&g, &r.count, &r.weight, &solid, 4.0);
        assert_eq!(type_counts(&t), [64, 0, 0]);
        let t = mark_cells(&g, &r.count, &r.weight, &solid, 0.0);
        assert_eq!(type_counts(&t), [63, 1, 0]);
    }
}
