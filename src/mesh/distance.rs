//! A narrow-band signed distance to the liquid's surface, for level-set volumes (the
//! OpenVDB caches): the exact distance from each lattice node to the surface mesh marching
//! cubes extracts from the same lattice, signed by the lattice (negative inside, the level
//! set convention), within `band` of the surface; farther nodes hold plus or minus `band`.

use super::{Lattice, SurfaceMesh};

/// The closest point to `p` on triangle `abc` (Ericson, Real-Time Collision Detection,
/// 5.1.5), returned as its squared distance.
fn distance2_to_triangle(p: [f64; 3], a: [f64; 3], b: [f64; 3], c: [f64; 3]) -> f64 {
    let sub = |u: [f64; 3], v: [f64; 3]| [u[0] - v[0], u[1] - v[1], u[2] - v[2]];
    let dot = |u: [f64; 3], v: [f64; 3]| u[0] * v[0] + u[1] * v[1] + u[2] * v[2];
    let at = |u: [f64; 3], v: [f64; 3], s: f64| [u[0] + s * v[0], u[1] + s * v[1], u[2] + s * v[2]];
    let (ab, ac, ap) = (sub(b, a), sub(c, a), sub(p, a));
    let (d1, d2) = (dot(ab, ap), dot(ac, ap));
    let closest = if d1 <= 0.0 && d2 <= 0.0 {
        a
    } else {
        let bp = sub(p, b);
        let (d3, d4) = (dot(ab, bp), dot(ac, bp));
        let cp = sub(p, c);
        let (d5, d6) = (dot(ab, cp), dot(ac, cp));
        let vc = d1 * d4 - d3 * d2;
        let vb = d5 * d2 - d1 * d6;
        let va = d3 * d6 - d5 * d4;
        if d3 >= 0.0 && d4 <= d3 {
            b
        } else if vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0 {
            at(a, ab, d1 / (d1 - d3))
        } else if d6 >= 0.0 && d5 <= d6 {
            c
        } else if vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0 {
            at(a, ac, d2 / (d2 - d6))
        } else if va <= 0.0 && (d4 - d3) >= 0.0 && (d5 - d6) >= 0.0 {
            at(b, sub(c, b), (d4 - d3) / ((d4 - d3) + (d5 - d6)))
        } else {
            let denom = va + vb + vc;
            if denom.abs() < 1e-300 {
                // A degenerate triangle (two caps meeting on a box edge): its vertices.
                return [a, b, c]
                    .iter()
                    .map(|&v| dot(sub(p, v), sub(p, v)))
                    .fold(f64::INFINITY, f64::min);
            }
            let (v, w) = (vb / denom, vc / denom);
            at(at(a, ab, v), ac, w)
        }
    };
    let d = sub(p, closest);
    dot(d, d)
}

/// Signed distance from every node of `lat` to `mesh`, clamped to `[-band, band]`, and
/// whether the node lies within `band` of the surface (the narrow band). `mesh` should be
/// the lattice's own zero surface ([`super::extract`]); the sign is the lattice's.
pub fn narrow_band(lat: &Lattice, mesh: &SurfaceMesh, band: f64) -> (Vec<f32>, Vec<bool>) {
    let dims = lat.dims;
    let sign = |n: usize| if lat.values[n] > 0.0 { -1.0 } else { 1.0 };
    let mut values: Vec<f32> = (0..lat.values.len())
        .map(|n| (sign(n) * band) as f32)
        .collect();
    let mut active = vec![false; values.len()];
    if mesh.triangles.is_empty() || band.is_nan() || band <= 0.0 {
        return (values, active);
    }
    // Buckets of `band` (at least one spacing) in lattice units; each triangle goes into
    // every bucket its bounding box touches, so a node finds every triangle within `band`
    // in its own bucket and the 26 around it.
    let size = band.max(lat.spacing);
    let buckets = [0, 1, 2].map(|a| {
        let extent = (dims[a].saturating_sub(1)) as f64 * lat.spacing;
        ((extent / size).floor() as usize + 1).max(1)
    });
    let bucket_of = |x: f64, a: usize| -> usize {
        (((x - lat.origin[a]) / size).floor().max(0.0) as usize).min(buckets[a] - 1)
    };
    let mut lists: Vec<Vec<u32>> = vec![vec![]; buckets[0] * buckets[1] * buckets[2]];
    let pos = |v: u32| mesh.positions[v as usize].map(|c| c as f64);
    for (t, tri) in mesh.triangles.iter().enumerate() {
        let p = tri.map(pos);
        let lo = [0, 1, 2].map(|a| bucket_of(p[0][a].min(p[1][a]).min(p[2][a]), a));
        let hi = [0, 1, 2].map(|a| bucket_of(p[0][a].max(p[1][a]).max(p[2][a]), a));
        for k in lo[2]..=hi[2] {
            for j in lo[1]..=hi[1] {
                for i in lo[0]..=hi[0] {
                    lists[i + buckets[0] * (j + buckets[1] * k)].push(t as u32);
                }
            }
        }
    }
    let band2 = band * band;
    for k in 0..dims[2] {
        for j in 0..dims[1] {
            for i in 0..dims[0] {
                let n = lat.index(i, j, k);
                let p = [i, j, k].map(|c| c as f64);
                let p = [0, 1, 2].map(|a| lat.origin[a] + p[a] * lat.spacing);
                let b = [0, 1, 2].map(|a| bucket_of(p[a], a));
                let mut best = band2;
                for bk in b[2].saturating_sub(1)..=(b[2] + 1).min(buckets[2] - 1) {
                    for bj in b[1].saturating_sub(1)..=(b[1] + 1).min(buckets[1] - 1) {
                        for bi in b[0].saturating_sub(1)..=(b[0] + 1).min(buckets[0] - 1) {
                            for &t in &lists[bi + buckets[0] * (bj + buckets[1] * bk)] {
                                let [a, b, c] = mesh.triangles[t as usize].map(pos);
                                best = best.min(distance2_to_triangle(p, a, b, c));
                            }
                        }
                    }
                }
                if best < band2 {
                    values[n] = (sign(n) * best.sqrt()) as f32;
                    active[n] = true;
                }
            }
        }
    }
    (values, active)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn point_triangle_distances() {
        let (a, b, c) = ([0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]);
        let d = |p| distance2_to_triangle(p, a, b, c).sqrt();
        // Above the face, beyond each vertex, beyond each edge.
        assert!((d([0.25, 0.25, 2.0]) - 2.0).abs() < 1e-12);
        assert!((d([-1.0, -1.0, 0.0]) - 2f64.sqrt()).abs() < 1e-12);
        assert!((d([3.0, 0.0, 0.0]) - 2.0).abs() < 1e-12);
        assert!((d([0.0, 2.5, 0.0]) - 1.5).abs() < 1e-12);
        assert!((d([0.5, -1.0, 0.0]) - 1.0).abs() < 1e-12);
        assert!((d([-2.0, 0.5, 0.0]) - 2.0).abs() < 1e-12);
        assert!((d([1.0, 1.0, 0.0]) - 0.5f64.sqrt()).abs() < 1e-12);
    }

    #[test]
    fn a_sphere_s_distance_is_its_radius_less_the_distance_from_its_centre() {
        // f = R - |x - c| sampled on a lattice: the band holds the sphere's distance to
        // within marching cubes' chord error (a small fraction of a spacing).
        let (n, dx, r) = (24usize, 0.05, 0.4);
        let c = [0.6; 3];
        let mut lat = Lattice::new([n; 3], [0.0; 3], dx, 0.0);
        for k in 0..n {
            for j in 0..n {
                for i in 0..n {
                    let p = [i, j, k].map(|v| v as f64 * dx);
                    let d = ((p[0] - c[0]).powi(2) + (p[1] - c[1]).powi(2) + (p[2] - c[2]).powi(2))
                        .sqrt();
                    let at = lat.index(i, j, k);
                    lat.values[at] = (r - d) as f32;
                }
            }
        }
        let mesh = crate::mesh::extract(&lat, crate::mesh::Border::Samples);
        let band = 3.0 * dx;
        let (values, active) = narrow_band(&lat, &mesh, band);
        let mut worst = 0f64;
        let mut count = 0;
        for n in 0..values.len() {
            let exact = -(lat.values[n] as f64);
            if exact.abs() < band - dx {
                assert!(
                    active[n],
                    "node {n} at distance {exact} is outside the band"
                );
                worst = worst.max((values[n] as f64 - exact).abs());
                count += 1;
            } else if exact.abs() > band + dx {
                assert!(!active[n]);
                assert_eq!(values[n], (exact.signum() * band) as f32);
            }
        }
        assert!(count > 1000, "{count} nodes in the band");
        assert!(worst < 0.05 * dx, "worst error {worst} for spacing {dx}");
    }
}
