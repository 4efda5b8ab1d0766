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
}

impl Cut {
    /// From the fractions as the GPU holds them (u, v, w back to back).
    pub fn new(g: &Grid, open: &[f32], flags: Vec<u32>, solid_vel: Vec<[f64; 3]>) -> Self {
        let len = |c: usize| g.face_dims(c).iter().product::<usize>();
        let (nu, nv) = (len(0), len(1));
        let f = |s: &[f32]| s.iter().map(|x| *x as f64).collect::<Vec<_>>();
        assert_eq!(open.len(), nu + nv + len(2), "one fraction per face");
        Self {
            open: MacField {
                u: f(&open[..nu]),
                v: f(&open[nu..nu + nv]),
                w: f(&open[nu + nv..]),
            },
            flags,
            solid_vel,
        }
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
                if self.flags[ci] != 0 {
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

/// A face's weight in the pressure solve: 0 next to a SOLID cell, else its open fraction.
pub fn face_weight(
    g: &Grid,
    types: &[u8],
    cut: Option<&Cut>,
    comp: usize,
    f: [usize; 3],
    i: usize,
) -> f64 {
    let [a, b] = face_cells(comp, f);
    if g.type_at(types, a) == SOLID || g.type_at(types, b) == SOLID {
        0.0
    } else {
        face_open(cut, comp, i)
    }
}

/// The velocity a face's flux is made of: the fluid's `u` on its open part, the solid's on
/// the rest (a face next to a SOLID cell carries the solid's already).
pub fn flux_velocity(
    g: &Grid,
    types: &[u8],
    cut: Option<&Cut>,
    comp: usize,
    f: [usize; 3],
    i: usize,
    u: f64,
) -> f64 {
    let Some(c) = cut else { return u };
    let [a, b] = face_cells(comp, f);
    if g.type_at(types, a) == SOLID || g.type_at(types, b) == SOLID {
        return u;
    }
    let w = c.open.comp(comp)[i];
    if w == 1.0 {
        u
    } else {
        w * u + (1.0 - w) * c.covered_velocity(g, comp, f)
    }
}
