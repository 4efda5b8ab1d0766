//! Cut faces in f64: the static solids' open face fractions (src/scene/fractions.rs) and what
//! the pressure solve does with them (the GPU's sim/core/open.wgsl, covered.wgsl and the
//! kernels that include them). Every function of the reference that takes `cut:
//! Option<&Cut>` is the staircase without one.

use super::{face_cells, Grid, MacField, SOLID};
use crate::gpu::constants::SOLID_PARTIAL;

/// The static solids on a grid as the solve sees them.
#[derive(Clone, Debug)]
pub struct Cut {
    /// Open fraction per face.
    pub open: MacField,
    /// Per cell 0, SOLID_CLOSED or SOLID_PARTIAL.
    pub flags: Vec<u32>,
    /// The solid velocity per cell.
    pub solid_vel: Vec<[f64; 3]>,
    /// Per cell the rigid body (index + 1, 0: none) whose velocity it carries: the body's
    /// own cells and, where bodies cut faces, the cells next to a face one covers (the w of
    /// the GPU's `solid_vel`).
    pub body: Vec<u32>,
}

impl Cut {
    /// From the fractions as the GPU holds them (u, v, w back to back).
    pub fn new(g: &Grid, open: &[f32], flags: Vec<u32>, solid_vel: Vec<[f64; 3]>) -> Self {
        let len = |c: usize| g.face_dims(c).iter().product::<usize>();
        assert_eq!(
            open.len(),
            len(0) + len(1) + len(2),
            "one fraction per face"
        );
        Self {
            open: MacField::from_faces(g, open),
            body: vec![0; flags.len()],
            flags,
            solid_vel,
        }
    }

    /// Whether cell `ci` carries a solid's velocity (covered.wgsl's `carries_solid`).
    pub fn carries_solid(&self, ci: usize) -> bool {
        self.flags[ci] != 0 || self.body[ci] != 0
    }

    /// From a scene's static solids, when they cut a face (None: the staircase is exact).
    pub fn of_scene(g: &Grid, scene: &crate::scene::Scene) -> Option<Self> {
        let s = scene.static_solids();
        let vel = s
            .velocity
            .iter()
            .map(|v| [v[0] as f64, v[1] as f64, v[2] as f64])
            .collect();
        Some(Self::new(g, s.open.as_deref()?, s.flags, vel))
    }

    pub fn is_partial(&self, c: usize) -> bool {
        self.flags[c] == SOLID_PARTIAL
    }

    /// The velocity of the solid covering part of face `f` (covered.wgsl).
    pub fn covered_velocity(&self, g: &Grid, comp: usize, f: [usize; 3]) -> f64 {
        let (mut s, mut n) = (0.0, 0.0);
        for c in face_cells(comp, f) {
            if let Some(ci) = g.cell_at(c) {
                if self.carries_solid(ci) {
                    s += self.solid_vel[ci][comp];
                    n += 1.0;
                }
            }
        }
        if n > 0.0 {
            s / n
        } else {
            0.0
        }
    }
}

/// Open fraction of face `i` of component `comp` (1 without cut faces).
pub fn face_open(cut: Option<&Cut>, comp: usize, i: usize) -> f64 {
    cut.map_or(1.0, |c| c.open.comp(comp)[i])
}

/// Whether face `f` of component `comp` has a SOLID cell on a side (outside the grid too).
fn next_to_solid(g: &Grid, types: &[u8], comp: usize, f: [usize; 3]) -> bool {
    face_cells(comp, f)
        .iter()
        .any(|c| g.type_at(types, *c) == SOLID)
}

/// A face's weight in the pressure solve: 0 next to a SOLID cell, else its open fraction.
pub fn face_weight(
    g: &Grid,
    types: &[u8],
    cut: Option<&Cut>,
    comp: usize,
    f: [usize; 3],
    i: usize,
) -> f64 {
    if next_to_solid(g, types, comp, f) {
        0.0
    } else {
        face_open(cut, comp, i)
    }
}

/// The velocity a face's flux is made of, for a face of weight `w` ([`face_weight`]): the
/// fluid's `u` on its open part, the solid's on the rest. A face of weight 0 (next to a SOLID
/// cell, or closed whole) carries the solid's velocity in `u` already ([`super::apply_boundary_cut`]).
pub fn flux_velocity(
    g: &Grid,
    cut: Option<&Cut>,
    comp: usize,
    f: [usize; 3],
    w: f64,
    u: f64,
) -> f64 {
    match cut {
        Some(c) if w != 0.0 && w != 1.0 => w * u + (1.0 - w) * c.covered_velocity(g, comp, f),
        _ => u,
    }
}

#[cfg(test)]
mod tests {
    use super::super::{
        apply_boundary_cut, build_matrix_cut, direct_solve, divergence_cut, for_each_face,
        project_cut, AIR, FLUID,
    };
    use super::*;
    use crate::gpu::constants::{OPEN_FRACTION_MIN, SOLID_CLOSED};
    use crate::scene::Scene;

    /// The largest change of a face's flux (per unit area, relative to U) the projection makes
    /// to a uniform flow U (1 m/s) along a plane tilted by `deg` degrees from x toward y (a
    /// solid below it, the cap of a huge cylinder); with the cut faces or the staircase.
    /// The cells along x = 0, x = 1 and y = 1 are AIR (p = 0, open), so the system is not
    /// singular and needs no inflow data; p = 0 is the exact answer.
    fn deflection(n: usize, slice: bool, deg: f64, cut_faces: bool) -> f64 {
        let a = deg.to_radians();
        let (nz, dz) = if slice { (1, 1.0 / n as f64) } else { (n, 1.0) };
        // The cap's plane passes through (0.5, 0.41): axis (-sin a, cos a), centre 5 m
        // below along the axis, length 10 (the cap at the plane), radius 20.
        let (cx, cy) = (0.5 + 5.0 * a.sin(), 0.41 - 5.0 * a.cos());
        let kind = if slice {
            "kind: smoke,"
        } else {
            "fluid: [Box(min: (0, 0.9, 0), max: (1, 1, 1))],"
        };
        let text = format!(
            "(name: \"t\", {kind} resolution: ({n}, {n}, {nz}), domain: (1.0, 1.0, {dz}),
              solids: [Cylinder(center: ({cx}, {cy}, 0.5), axis: ({}, {}, 0.0), radius: 20.0,
                                length: 10.0)])",
            -a.sin(),
            a.cos()
        );
        let scene = Scene::parse(&text, std::path::Path::new("t.ron")).expect("scene");
        let g = Grid {
            nx: n,
            ny: n,
            nz,
            h: 1.0 / n as f64,
        };
        let st = scene.static_solids();
        let cut = if cut_faces {
            Some(Cut::of_scene(&g, &scene).expect("the plane cuts faces"))
        } else {
            None
        };
        let types: Vec<u8> = (0..g.cells())
            .map(|c| {
                let [i, j, _] = g.coord(c);
                let solid = if cut_faces {
                    st.flags[c] == SOLID_CLOSED
                } else {
                    st.flags[c] != 0
                };
                if solid {
                    SOLID
                } else if i == 0 || i == n - 1 || j == n - 1 {
                    AIR
                } else {
                    FLUID
                }
            })
            .collect();
        let u = [a.cos(), a.sin(), 0.0];
        let mut vel = MacField::zeros(&g);
        for_each_face(&g, |comp, _, i| vel.comp_mut(comp)[i] = u[comp]);
        let still = vec![[0.0; 3]; g.cells()];
        apply_boundary_cut(&g, &types, &still, cut.as_ref(), &mut vel);
        let before = vel.clone();
        let (_, b) = divergence_cut(&g, &types, &vel, cut.as_ref());
        let m = build_matrix_cut(&g, &types, None, cut.as_ref());
        let phi = direct_solve(&g, &m, &b);
        project_cut(&g, &types, None, cut.as_ref(), &phi, &mut vel);
        // The change of each face's flux, |w du| (a face with a sliver open may take a large
        // du for a small flux: the projection corrects fluxes).
        let mut worst: f64 = 0.0;
        for comp in 0..2 {
            let moved = vel.comp(comp).iter().zip(before.comp(comp));
            for (i, (x, y)) in moved.enumerate() {
                worst = worst.max(face_open(cut.as_ref(), comp, i) * (x - y).abs());
            }
        }
        worst
    }

    /// A uniform flow along a sloped wall is already divergence-free with no flow into the
    /// wall: the projection must leave it alone. Through the cut faces it does, to the
    /// fractions snapped at OPEN_FRACTION_MIN (a face open less than that is closed, and its
    /// flux goes elsewhere); the staircase stops the flow at every step and deflects it by a
    /// large part of U.
    #[test]
    fn a_flow_along_a_sloped_wall_passes_the_projection_unchanged() {
        for (n, slice) in [(32, true), (64, true), (16, false)] {
            for deg in [17.0, 31.0] {
                let cut = deflection(n, slice, deg, true);
                let stairs = deflection(n, slice, deg, false);
                eprintln!("n {n} slice {slice} {deg} deg: cut {cut:.2e}, staircase {stairs:.2e}");
                assert!(
                    cut < OPEN_FRACTION_MIN as f64,
                    "cut faces change a flux by {cut}"
                );
                assert!(stairs > 0.1, "the staircase deflects it by only {stairs}");
            }
        }
    }
}
