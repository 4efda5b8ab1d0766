//! The scene's static solids on the grid, cut cells included: which cells they close, which
//! they only cut, and how much of every MAC face they leave open to the fluid.
//!
//! A cell whose centre lies inside a solid used to be SOLID whole, so a sloped or curved
//! obstacle reached the pressure solve as a staircase. Here each face gets the fraction of its
//! area outside every solid (from the solids' signed distance at the grid's nodes, the
//! corners of the faces), and the pressure solve weights the face by it (Batty, Bertails &
//! Bridson 2007; Ng, Min & Gibou 2009): the flux through a face is its open part times the
//! fluid's velocity plus its covered part times the solid's, and the matrix couples two cells
//! with the open fraction of the face between them. A cell whose centre is inside a solid but
//! which still has an open face is `SOLID_PARTIAL`: the particles stay out of it (as before),
//! while the solve gives it an unknown, so the liquid's pressure reaches the solid's true
//! surface. A cell with no open face is `SOLID_CLOSED`.
//!
//! The fractions are exact for a solid whose distance is linear over each of a face's
//! triangles (a plane): every face is split along both diagonals and the two answers averaged,
//! so the result does not depend on which diagonal was picked. A smoke slice's faces are
//! segments in the slice's plane (its shapes are prisms and discs across it).

use super::*;
use crate::gpu::constants::{OPEN_FRACTION_MIN, SOLID_CLOSED, SOLID_PARTIAL};

/// The static solids of a scene on its grid.
#[derive(Clone, Debug)]
pub struct StaticSolids {
    /// Per cell: 0 (open), `SOLID_CLOSED` or `SOLID_PARTIAL`.
    pub flags: Vec<u32>,
    /// The velocity of the solid holding each cell's centre (xyz, w unused; zero elsewhere).
    pub velocity: Vec<[f32; 4]>,
    /// Per MAC face (u, then v, then w, as the GPU's face buffers), the fraction of its area
    /// open to the fluid, in [0, 1] (0 on the domain's walls). None where the staircase of
    /// the cells is exact: every face is then open exactly when neither of its cells holds a
    /// solid, and no cell is cut.
    pub open: Option<Vec<f32>>,
}

impl StaticSolids {
    /// Cells the pressure solve treats as SOLID.
    pub fn closed_cells(&self) -> usize {
        self.flags.iter().filter(|f| **f == SOLID_CLOSED).count()
    }

    /// Cells a solid cuts: their centre inside it, some face open.
    pub fn partial_cells(&self) -> usize {
        self.flags.iter().filter(|f| **f == SOLID_PARTIAL).count()
    }
}

/// A distance beyond any domain: far from every solid (finite, so a face's fraction between
/// such a node and one inside a solid is still a number).
const FAR: f64 = 1e30;

/// Signed distance to a box (negative inside).
fn box_sdf(p: [f64; 3], lo: [f64; 3], hi: [f64; 3], axes: usize) -> f64 {
    let mut outside = 0.0;
    let mut inside = f64::NEG_INFINITY;
    for a in 0..axes {
        let c = 0.5 * (lo[a] + hi[a]);
        let q = (p[a] - c).abs() - 0.5 * (hi[a] - lo[a]);
        outside += q.max(0.0).powi(2);
        inside = inside.max(q);
    }
    outside.sqrt() + inside.min(0.0)
}

impl Shape {
    /// Signed distance at `p` (negative inside); in a slice (`slice`) the distance of the
    /// shape's cross-section in x and y (the shape [`Shape::contains_xy`] tests), with the
    /// slice's mid-depth `z_mid` for a mesh.
    fn signed_distance(&self, p: [f64; 3], slice: bool, z_mid: f64) -> f64 {
        let axes = if slice { 2 } else { 3 };
        match self {
            Shape::Box { min, max, .. } => {
                box_sdf(p, [min.0, min.1, min.2], [max.0, max.1, max.2], axes)
            }
            Shape::Sphere { center, radius, .. } => {
                let c = [center.0, center.1, center.2];
                (0..axes).map(|a| (p[a] - c[a]).powi(2)).sum::<f64>().sqrt() - radius
            }
            Shape::Cylinder {
                center,
                axis,
                radius,
                length,
                ..
            } => {
                let q = if slice { [p[0], p[1], center.2] } else { p };
                let (along, r2) = cylinder_coords(*center, *axis, q);
                let (qx, qy) = (r2.max(0.0).sqrt() - radius, along.abs() - 0.5 * length);
                qx.max(qy).min(0.0) + (qx.max(0.0).powi(2) + qy.max(0.0).powi(2)).sqrt()
            }
            Shape::Mesh { loaded, .. } => loaded
                .get()
                .map_or(FAR, |m| m.sdf(if slice { [p[0], p[1], z_mid] } else { p })),
        }
    }
}

/// Fraction of a triangle where a linear function with these vertex values is positive.
fn triangle_open(v: [f64; 3]) -> f64 {
    let pos = v.iter().filter(|x| **x > 0.0).count();
    match pos {
        0 => 0.0,
        3 => 1.0,
        _ => {
            // The lone vertex (the only positive one, or the only non-positive one) cuts off
            // a similar triangle: its share is t_1 t_2 along its two edges.
            let lone = if pos == 1 {
                v.iter().position(|x| *x > 0.0)
            } else {
                v.iter().position(|x| *x <= 0.0)
            }
            .unwrap_or(0);
            let a = v[lone];
            let (b, c) = (v[(lone + 1) % 3], v[(lone + 2) % 3]);
            let share = if a == 0.0 {
                0.0
            } else {
                (a / (a - b)) * (a / (a - c))
            };
            if pos == 1 {
                share
            } else {
                1.0 - share
            }
        }
    }
}

/// Open fraction of a square face from its corners' distances `[v00, v10, v01, v11]`
/// (positive outside the solids): both diagonal splits, averaged.
pub fn quad_open(v: [f64; 4]) -> f64 {
    let [a, b, c, d] = v;
    let split1 = 0.5 * (triangle_open([a, b, d]) + triangle_open([a, d, c]));
    let split2 = 0.5 * (triangle_open([a, b, c]) + triangle_open([b, d, c]));
    0.5 * (split1 + split2)
}

/// Open fraction of a segment from its ends' distances.
pub fn segment_open(a: f64, b: f64) -> f64 {
    match (a > 0.0, b > 0.0) {
        (true, true) => 1.0,
        (false, false) => 0.0,
        (true, false) => a / (a - b),
        (false, true) => b / (b - a),
    }
}

/// Open fraction of face `f` of component `comp` from the distance at the grid's nodes
/// (`phi` of node coordinates; a slice's nodes have k = 0 and its z faces are walls).
pub fn face_open_at(
    phi: impl Fn([usize; 3]) -> f64,
    comp: usize,
    f: [usize; 3],
    slice: bool,
) -> f64 {
    let [i, j, _] = f;
    if slice {
        return match comp {
            0 => segment_open(phi([i, j, 0]), phi([i, j + 1, 0])),
            1 => segment_open(phi([i, j, 0]), phi([i + 1, j, 0])),
            _ => 0.0,
        };
    }
    // The face's corners, in its two tangent axes.
    let (t1, t2) = ((comp + 1) % 3, (comp + 2) % 3);
    let corner = |a: usize, b: usize| {
        let mut x = f;
        x[t1] += a;
        x[t2] += b;
        phi(x)
    };
    quad_open([corner(0, 0), corner(1, 0), corner(0, 1), corner(1, 1)])
}

/// Faces of each component (u, v, w) of a grid of `n` cells.
pub fn face_counts(n: [usize; 3]) -> [usize; 3] {
    std::array::from_fn(|comp| {
        let mut d = n;
        d[comp] += 1;
        d.iter().product()
    })
}

/// Index of face `x` of component `comp` among every face of a grid of `n` cells (u, v, w
/// back to back, each i fastest: the GPU's face buffers).
pub fn face_slot(n: [usize; 3], comp: usize, x: [usize; 3]) -> usize {
    let mut d = n;
    d[comp] += 1;
    face_counts(n)[..comp].iter().sum::<usize>() + x[0] + d[0] * (x[1] + d[1] * x[2])
}

/// Whether cell `x` of a grid of `n` cells has a face with some of it open.
pub fn has_open_face(open: &[f32], n: [usize; 3], x: [usize; 3]) -> bool {
    (0..3).any(|comp| {
        let mut up = x;
        up[comp] += 1;
        open[face_slot(n, comp, x)] > 0.0 || open[face_slot(n, comp, up)] > 0.0
    })
}

/// Snaps a fraction within OPEN_FRACTION_MIN of 0 or 1 to it.
pub fn snap(f: f64) -> f32 {
    let m = OPEN_FRACTION_MIN as f64;
    if f < m {
        0.0
    } else if f > 1.0 - m {
        1.0
    } else {
        f as f32
    }
}

impl Scene {
    /// One open fraction per face of this grid, every face open: the base the moving solids
    /// (keyframed meshes, rigid bodies) cut when the static solids cut none.
    pub fn every_face_open(&self) -> Vec<f32> {
        vec![1.0; face_counts(self.dims().map(|v| v as usize)).iter().sum()]
    }

    /// The static solids on this grid: flags, velocities and open face fractions (see the
    /// module's notes). Meshes are measured exactly only near their surface (nodes whose
    /// cells disagree about the inside); elsewhere their cell masks decide.
    pub fn static_solids(&self) -> StaticSolids {
        if self.solids.iter().any(|s| !s.keyframes().is_empty()) {
            return self.keyframed_static_solids();
        }
        let (centre, velocity) = self.centre_cells();
        let mut out = StaticSolids {
            flags: centre.clone(),
            velocity,
            open: None,
        };
        if self.solids.is_empty() || !self.cut_faces {
            return out;
        }
        let [nx, ny, nz] = self.dims().map(|v| v as usize);
        let slice = self.kind == SceneKind::Smoke;
        let h = self.h();
        let hz = self.domain.2 / self.resolution.2 as f64;
        let nodes = Nodes {
            cells: [nx, ny, nz],
            dims: [nx + 1, ny + 1, if slice { 1 } else { nz + 1 }],
            h,
            hz,
            slice,
        };
        let phi = self.node_distances(&nodes);
        let n = [nx, ny, nz];
        let cell = |i: usize, j: usize, k: usize| i + nx * (j + ny * k);
        let (open, exact) = open_faces(&nodes, &centre, &phi);
        if exact {
            return out;
        }
        for k in 0..nz {
            for j in 0..ny {
                for i in 0..nx {
                    let c = cell(i, j, k);
                    out.flags[c] = match (centre[c] != 0, has_open_face(&open, n, [i, j, k])) {
                        (_, false) => SOLID_CLOSED,
                        (true, true) => SOLID_PARTIAL,
                        (false, true) => 0,
                    };
                }
            }
        }
        out.open = Some(open);
        out
    }

    /// [`Scene::static_solids`] with keyframed meshes: those of the fixed solids, plus the
    /// cells the keyframed meshes start in, closed.
    fn keyframed_static_solids(&self) -> StaticSolids {
        // A keyframed mesh moves: src/sim/liquid/moving.rs stamps it, and cuts its faces,
        // over the fixed solids' each substep. Here it closes the cells it starts in.
        let mut fixed = self.clone();
        fixed.solids.retain(|s| s.keyframes().is_empty());
        let mut out = fixed.static_solids();
        let (all, vel) = self.centre_cells();
        let (still, _) = fixed.centre_cells();
        for c in 0..all.len() {
            if all[c] != 0 && still[c] == 0 {
                out.flags[c] = SOLID_CLOSED;
                out.velocity[c] = vel[c];
            }
        }
        out
    }

    /// The solids' signed distance at every node (the least over the solids; negative
    /// inside), a node on a surface to round-off put on it.
    fn node_distances(&self, nodes: &Nodes) -> Vec<f64> {
        let (h, hz, slice) = (nodes.h, nodes.hz, nodes.slice);
        let masks = self.mesh_masks();
        let mut phi = vec![FAR; nodes.len()];
        for (s, mask) in self.solids.iter().zip(&masks) {
            let (lo, hi) = s.bounds();
            let reach = 2.0 * h.max(hz);
            let near_bounds = |p: [f64; 3]| {
                (0..if slice { 2 } else { 3 })
                    .all(|a| p[a] >= lo[a] - reach && p[a] <= hi[a] + reach)
            };
            let values = match mask {
                None => crate::scene::mesh::parallel_cells(phi.len(), |n| {
                    let p = nodes.position(n);
                    if near_bounds(p) {
                        s.signed_distance(p, slice, 0.5 * hz)
                    } else {
                        FAR
                    }
                }),
                Some(m) => mask_distances(s, m, nodes),
            };
            for (p, v) in phi.iter_mut().zip(values) {
                *p = p.min(v);
            }
        }
        // A node on a solid's surface (to round-off) is on it: a face lying in a box's side
        // must come out closed, not half open from the sign of 1e-17.
        let eps = 1e-9 * h.min(hz);
        for p in phi.iter_mut() {
            if p.abs() < eps {
                *p = 0.0;
            }
        }
        phi
    }
}

/// The nodes of a grid, the corners of its faces, where the solids' distance is measured; a
/// slice has one layer of them, at its mid-depth.
struct Nodes {
    /// Cells along x, y, z.
    cells: [usize; 3],
    /// Nodes along x, y, z.
    dims: [usize; 3],
    /// Cell size in x and y.
    h: f64,
    /// Cell size in z.
    hz: f64,
    /// Whether the grid is a smoke slice.
    slice: bool,
}

impl Nodes {
    /// How many nodes there are.
    fn len(&self) -> usize {
        self.dims[0] * self.dims[1] * self.dims[2]
    }

    /// Index of node (i, j, k), i fastest.
    fn index(&self, i: usize, j: usize, k: usize) -> usize {
        i + self.dims[0] * (j + self.dims[1] * k)
    }

    /// Position of node `n`.
    fn position(&self, n: usize) -> [f64; 3] {
        let [mx, my, _] = self.dims;
        let (h, hz) = (self.h, self.hz);
        let (i, j, k) = (n % mx, (n / mx) % my, n / (mx * my));
        if self.slice {
            [i as f64 * h, j as f64 * h, 0.5 * hz]
        } else {
            [i as f64 * h, j as f64 * h, k as f64 * hz]
        }
    }
}

/// The signed distance at the nodes of the mesh solid `s` whose cell mask is `m`: exact
/// near its surface, elsewhere far inside or far outside as its cells say.
fn mask_distances(s: &Shape, m: &mesh::CellMask, nodes: &Nodes) -> Vec<f64> {
    let [nx, ny, nz] = nodes.cells;
    let [mx, my, mz] = nodes.dims;
    let (slice, hz) = (nodes.slice, nodes.hz);
    let count = nodes.len();
    // The cells around node (i, j, k) (inside the grid): the surface passes
    // near it when they disagree.
    let cells_around = |n: usize| {
        let x = [n % mx, (n / mx) % my, n / (mx * my)];
        let span = |a: usize, len: usize| x[a].max(1) - 1..=x[a].min(len - 1);
        let ks = if slice { 0..=0 } else { span(2, nz) };
        let (mut any_in, mut any_out) = (false, false);
        for k in ks {
            for j in span(1, ny) {
                for i in span(0, nx) {
                    let inside = m.get(i as u32, j as u32, k as u32);
                    any_in |= inside;
                    any_out |= !inside;
                }
            }
        }
        (any_in, any_out)
    };
    let around: Vec<(bool, bool)> = crate::scene::mesh::parallel_cells(count, cells_around);
    // Exact distances at the nodes whose cells disagree and at their
    // neighbours (a face may join a node near the surface to one that is not).
    let mut near = vec![false; count];
    for (n, a) in around.iter().enumerate() {
        if !(a.0 && a.1) {
            continue;
        }
        let x = [n % mx, (n / mx) % my, n / (mx * my)];
        let span = |a: usize, len: usize| x[a].max(1) - 1..=(x[a] + 1).min(len - 1);
        for k in span(2, mz) {
            for j in span(1, my) {
                for i in span(0, mx) {
                    near[nodes.index(i, j, k)] = true;
                }
            }
        }
    }
    crate::scene::mesh::parallel_cells(count, |n| {
        if near[n] {
            s.signed_distance(nodes.position(n), slice, 0.5 * hz)
        } else if around[n].0 {
            -FAR
        } else {
            FAR
        }
    })
}

/// Measures every face's open fraction from the distance `phi` at the `nodes`; `centre`
/// flags the cells whose centre lies in a solid (see the comment below for what comes back).
fn open_faces(nodes: &Nodes, centre: &[u32], phi: &[f64]) -> (Vec<f32>, bool) {
    let [nx, ny, nz] = nodes.cells;
    let slice = nodes.slice;
    let n = [nx, ny, nz];
    let cell = |i: usize, j: usize, k: usize| i + nx * (j + ny * k);
    // Each face's open fraction, and whether every one is what the staircase of the
    // cells would make it (open exactly when neither cell's centre is in a solid).
    let mut open = Vec::with_capacity(face_counts(n).iter().sum());
    let mut exact = true;
    for comp in 0..3 {
        let mut d = [nx, ny, nz];
        d[comp] += 1;
        for k in 0..d[2] {
            for j in 0..d[1] {
                for i in 0..d[0] {
                    let f = [i, j, k];
                    let wall = f[comp] == 0 || f[comp] == d[comp] - 1;
                    let (frac, stair) = if wall {
                        (0.0, 0.0)
                    } else {
                        let mut lo = f;
                        lo[comp] -= 1;
                        let free = |y: [usize; 3]| centre[cell(y[0], y[1], y[2])] == 0;
                        let frac =
                            face_open_at(|x| phi[nodes.index(x[0], x[1], x[2])], comp, f, slice);
                        (snap(frac), if free(lo) && free(f) { 1.0 } else { 0.0 })
                    };
                    exact &= frac == stair;
                    open.push(frac);
                }
            }
        }
    }
    (open, exact)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plane_cuts_a_face_by_its_exact_area() {
        // phi = x - 0.3 over the unit square (corners at x = 0 and 1): open 0.7.
        let f = quad_open([-0.3, 0.7, -0.3, 0.7]);
        assert!((f - 0.7).abs() < 1e-12, "{f}");
        // A diagonal plane x + y - 0.5: the open part is 1 - 0.125.
        let f = quad_open([-0.5, 0.5, 0.5, 1.5]);
        assert!((f - 0.875).abs() < 1e-12, "{f}");
        // The other diagonal gives the same by symmetry.
        let f = quad_open([0.5, -0.5, 1.5, 0.5]);
        assert!((f - 0.875).abs() < 1e-12, "{f}");
        assert_eq!(quad_open([1.0; 4]), 1.0);
        assert_eq!(quad_open([-1.0; 4]), 0.0);
        assert_eq!(
            quad_open([0.0; 4]),
            0.0,
            "a face in a solid's side is closed"
        );
        assert_eq!(
            quad_open([0.0, 0.0, 1.0, 1.0]),
            1.0,
            "a face touching a side is open"
        );
        assert!((segment_open(-0.25, 0.75) - 0.75).abs() < 1e-12);
        assert!((segment_open(0.75, -0.25) - 0.75).abs() < 1e-12);
    }

    fn scene(text: &str) -> Scene {
        Scene::parse(text, std::path::Path::new("test.ron")).expect("scene parses")
    }

    #[test]
    fn a_box_on_the_grid_lines_keeps_the_staircase() {
        let s = scene(
            "(name: \"t\", resolution: (16, 16, 16), domain: (1.0, 1.0, 1.0),
              fluid: [Box(min: (0,0,0), max: (1,0.5,1))],
              solids: [Box(min: (0.25, 0, 0.25), max: (0.5, 0.25, 0.75))])",
        );
        let st = s.static_solids();
        assert!(
            st.open.is_none(),
            "a box on cell faces is its own staircase"
        );
        assert_eq!(st.partial_cells(), 0);
        assert_eq!(st.flags.iter().filter(|f| **f != 0).count(), 4 * 4 * 8);
    }

    #[test]
    fn a_sphere_opens_its_faces_by_their_area_and_cuts_cells() {
        let s = scene(
            "(name: \"t\", resolution: (16, 16, 16), domain: (1.0, 1.0, 1.0),
              fluid: [Box(min: (0,0,0), max: (1,0.5,1))],
              solids: [Sphere(center: (0.5, 0.47, 0.52), radius: 0.27)])",
        );
        let st = s.static_solids();
        let open = st.open.as_ref().expect("a sphere cuts faces");
        assert!(st.partial_cells() > 0);
        // The closed area of the x-faces on the plane x = 0.5 (through the centre) is the
        // disc's area, pi r^2, to the accuracy of linear distance along each triangle.
        let (n, h) = (16usize, 1.0 / 16.0);
        let i = 8; // x = i h = 0.5
        let mut closed = 0.0;
        for k in 0..n {
            for j in 0..n {
                closed += (1.0 - open[i + (n + 1) * (j + n * k)] as f64) * h * h;
            }
        }
        let disc = std::f64::consts::PI * 0.27f64.powi(2);
        assert!(
            (closed - disc).abs() < 0.01 * disc,
            "closed {closed} against {disc}"
        );
        // Every fraction is snapped or inside (0, 1); cut cells have an open face.
        assert!(open.iter().all(|f| *f == 0.0
            || *f == 1.0
            || (*f >= OPEN_FRACTION_MIN && *f <= 1.0 - OPEN_FRACTION_MIN)));
    }

    #[test]
    fn a_slice_cuts_its_disc_in_the_plane() {
        let s = scene(
            "(name: \"t\", kind: smoke, resolution: (32, 32, 1), domain: (1.0, 1.0, 0.03125),
              solids: [Sphere(center: (0.5, 0.5, 0.0), radius: 0.2)])",
        );
        let st = s.static_solids();
        let open = st.open.as_ref().expect("a disc cuts faces");
        // Closed length of the x-faces on x = 0.5: the disc's diameter.
        let (n, h) = (32usize, 1.0 / 32.0);
        let closed: f64 = (0..n)
            .map(|j| (1.0 - open[16 + (n + 1) * j] as f64) * h)
            .sum();
        assert!((closed - 0.4).abs() < 0.02 * 0.4, "closed {closed}");
        // z faces are the slice's walls.
        let nu = (n + 1) * n;
        let nv = n * (n + 1);
        assert!(open[nu + nv..].iter().all(|f| *f == 0.0));
    }

    #[test]
    fn every_shipped_scene_has_finite_fractions() {
        for entry in std::fs::read_dir("scenes").expect("scenes folder") {
            let path = entry.expect("entry").path();
            if path.extension().is_none_or(|e| e != "ron") {
                continue;
            }
            let scene = Scene::load(&path).expect("shipped scene loads");
            if let Some(open) = scene.static_solids().open {
                assert!(
                    open.iter().all(|f| (0.0..=1.0).contains(f)),
                    "{}: a fraction outside [0, 1]",
                    path.display()
                );
            }
        }
    }
}
