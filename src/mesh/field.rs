//! The liquid's implicit surface: the particles' smoothed number density, as a fraction of
//! the rest density, minus one half.
//!
//! Why this field: for a uniform half-space of particles and any symmetric kernel, the
//! smoothed density on the boundary plane is exactly half the interior's, so the level set
//! at 1/2 sits on the true free surface with no tuned constant (a settled pool's mesh top
//! is the pool's height). On a curved surface it shrinks by about R^2 / (10 r) for a sphere
//! of radius r and kernel radius R (the poly6 kernel's moments), 2% of the area for the
//! drop scene's sphere at its default resolution. The price: liquid thinner than about a
//! kernel radius (single drops, spray) falls below the level and is not meshed.
//!
//! The domain walls are solid, so liquid against a wall would look half as dense there and
//! pull away from it. Particles within a kernel radius of a wall are mirrored across it
//! (and across two or three walls near edges and corners), which keeps the density uniform
//! up to the wall.

use super::marching_cubes::{parallel_map, thread_count, Lattice};

/// The poly6 kernel's integral over its ball, divided by R^3: 4 pi * 16 / 315.
const KERNEL_VOLUME: f64 = 64.0 * std::f64::consts::PI / 315.0;

/// Kernel radius in particle spacings: enough neighbours (about 110 at 8 per cell) that the
/// jittered seeding does not show as bumps, small enough to keep the curvature bias low.
pub const KERNEL_SPACINGS: f64 = 3.0;

/// What the field is built from.
#[derive(Clone, Copy, Debug)]
pub struct DensityParams {
    /// Box [0, domain] holding the particles; its faces are the walls.
    pub domain: [f64; 3],
    /// Kernel radius, metres.
    pub kernel_radius: f64,
    /// Particles per cubic metre at rest.
    pub rest_density: f64,
    /// Lattice spacing, metres.
    pub spacing: f64,
}

impl DensityParams {
    /// For a scene's grid: cell size `h`, `particles_per_cell` at rest, and the lattice
    /// `resolution` times finer than the grid.
    pub fn for_grid(domain: [f64; 3], h: f64, particles_per_cell: u32, resolution: u32) -> Self {
        let ppc = particles_per_cell.max(1) as f64;
        Self {
            domain,
            kernel_radius: KERNEL_SPACINGS * h / ppc.cbrt(),
            rest_density: ppc / (h * h * h),
            spacing: h / resolution.max(1) as f64,
        }
    }

    /// Lattice cells along each axis inside the domain (its nodes are one more, the outer
    /// ones lying in the walls).
    pub fn cells(&self) -> [usize; 3] {
        self.domain
            .map(|d| ((d / self.spacing).round() as usize).max(1))
    }

    /// Nodes of the sampled lattice along each axis: the domain's plus one padding layer
    /// outside each wall.
    pub fn lattice_dims(&self) -> [usize; 3] {
        self.cells().map(|n| n + 3)
    }
}

/// Particles plus their mirror images across the walls they are within `r` of.
fn with_mirrors(positions: &[[f32; 4]], domain: [f64; 3], r: f64) -> Vec<[f64; 3]> {
    let mut out = Vec::with_capacity(positions.len() + positions.len() / 4);
    for p in positions {
        let p: [f64; 3] = [0, 1, 2].map(|a| (p[a] as f64).clamp(0.0, domain[a]));
        if !p.iter().all(|x| x.is_finite()) {
            continue;
        }
        // Per axis: the particle itself, then its images across the walls it is near.
        let images = |a: usize| {
            let mut v = ([p[a]; 3], 1);
            for (near, image) in [
                (p[a] < r, -p[a]),
                (p[a] > domain[a] - r, 2.0 * domain[a] - p[a]),
            ] {
                if near {
                    v.0[v.1] = image;
                    v.1 += 1;
                }
            }
            v
        };
        let (xs, ys, zs) = (images(0), images(1), images(2));
        for &z in &zs.0[..zs.1] {
            for &y in &ys.0[..ys.1] {
                for &x in &xs.0[..xs.1] {
                    out.push([x, y, z]);
                }
            }
        }
    }
    out
}

/// Samples the field on a lattice of nodes `spacing` apart spanning the domain, walls
/// included, with one padding layer outside each wall held at -1/2 (no liquid), ready for
/// [`super::marching_cubes::Border::WallPadding`]. Values above zero are inside the liquid. Runs in parallel over z layers; each node sums its
/// particles in the same order whatever the thread count, so the result is deterministic.
pub fn density_lattice(positions: &[[f32; 4]], params: &DensityParams) -> Lattice {
    density_lattice_on(positions, params, thread_count())
}

fn density_lattice_on(positions: &[[f32; 4]], params: &DensityParams, threads: usize) -> Lattice {
    let dims = params.lattice_dims();
    // Last node index inside the domain (the far wall); index 0 is padding.
    let last = dims.map(|n| n - 2);
    let dx = params.spacing;
    let origin = [-dx; 3];
    let mut lat = Lattice::new(dims, origin, dx, -0.5);
    let r = params.kernel_radius;
    let mut points = with_mirrors(positions, params.domain, r);
    // Sorted by z so each z slab visits only the particles that reach it.
    points.sort_unstable_by(|a, b| a[2].total_cmp(&b[2]));
    let scale = 1.0 / (params.rest_density * KERNEL_VOLUME * r * r * r);
    let inv_r2 = 1.0 / (r * r);
    let (nx, ny) = (dims[0], dims[1]);
    let layer = nx * ny;
    // Lattice index range of domain nodes within `half` of coordinate x along an axis
    // (empty when lo > hi).
    let node_range = |x: f64, a: usize, half: f64| -> (usize, usize) {
        let lo = ((x - half - origin[a]) / dx).ceil().max(1.0) as usize;
        let hi = ((x + half - origin[a]) / dx).floor().min(last[a] as f64) as usize;
        (lo, hi)
    };
    let parts = (threads * 4).clamp(1, last[2]);
    let chunks: Vec<std::ops::Range<usize>> = (0..parts)
        .map(|p| (1 + p * last[2] / parts)..(1 + (p + 1) * last[2] / parts))
        .filter(|c| !c.is_empty())
        .collect();
    let slabs: Vec<Vec<f32>> = parallel_map(&chunks, threads, |_, ks| {
        let mut sums = vec![0f64; ks.len() * layer];
        let z_lo = origin[2] + ks.start as f64 * dx - r;
        let z_hi = origin[2] + (ks.end - 1) as f64 * dx + r;
        let first = points.partition_point(|p| p[2] < z_lo);
        for p in points[first..].iter().take_while(|p| p[2] <= z_hi) {
            let (k0, k1) = node_range(p[2], 2, r);
            for k in k0.max(ks.start)..=k1.min(ks.end - 1) {
                let dz = origin[2] + k as f64 * dx - p[2];
                let (j0, j1) = node_range(p[1], 1, (r * r - dz * dz).max(0.0).sqrt());
                for j in j0..=j1 {
                    let dy = origin[1] + j as f64 * dx - p[1];
                    let row = (k - ks.start) * layer + j * nx;
                    // Only the chord of the kernel's ball along this row.
                    let half = (r * r - dz * dz - dy * dy).max(0.0).sqrt();
                    let (i0, i1) = node_range(p[0], 0, half);
                    for i in i0..=i1 {
                        let dxx = origin[0] + i as f64 * dx - p[0];
                        let q = (dxx * dxx + dy * dy + dz * dz) * inv_r2;
                        if q < 1.0 {
                            let t = 1.0 - q;
                            sums[row + i] += t * t * t;
                        }
                    }
                }
            }
        }
        sums.into_iter()
            .enumerate()
            .map(|(n, s)| {
                let (i, j) = (n % nx, (n / nx) % ny);
                let pad = i == 0 || j == 0 || i == nx - 1 || j == ny - 1;
                if pad {
                    -0.5
                } else {
                    (s * scale - 0.5) as f32
                }
            })
            .collect()
    });
    for (c, slab) in chunks.iter().zip(slabs) {
        lat.values[c.start * layer..c.end * layer].copy_from_slice(&slab);
    }
    lat
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_field_does_not_depend_on_the_thread_count() {
        let mut x = 99u32;
        let mut rnd = || {
            x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (x >> 8) as f32 / (1u32 << 24) as f32
        };
        let pos: Vec<[f32; 4]> = (0..3000)
            .map(|_| [rnd(), 0.5 * rnd(), 0.5 * rnd(), 0.0])
            .collect();
        let params = DensityParams::for_grid([1.0, 0.5, 0.5], 1.0 / 16.0, 8, 2);
        let one = density_lattice_on(&pos, &params, 1);
        assert!(one.values.iter().any(|&v| v > 0.0));
        for threads in [2, 5] {
            assert_eq!(
                density_lattice_on(&pos, &params, threads).values,
                one.values
            );
        }
    }

    #[test]
    fn mirrors_cover_edges_and_corners() {
        let pts = with_mirrors(&[[0.01, 0.5, 0.99, 0.0]], [1.0; 3], 0.1);
        // Near x = 0 and z = 1: itself, two single images and one double image.
        assert_eq!(pts.len(), 4);
        assert!(pts
            .iter()
            .any(|p| (p[0] + 0.01).abs() < 1e-6 && (p[2] - 1.01).abs() < 1e-6));
    }

    #[test]
    fn uniform_particles_fill_to_the_walls_at_rest_density() {
        // One particle per cell on a regular lattice, pool up to y = 0.5: every node below the
        // surface, walls included, reads about 1/2 (density 1), nodes above about -1/2.
        let n = 16;
        let h = 1.0 / n as f64;
        let mut pos = Vec::new();
        for k in 0..n {
            for j in 0..n / 2 {
                for i in 0..n {
                    let c = |x: usize| ((x as f64 + 0.5) * h) as f32;
                    pos.push([c(i), c(j), c(k), 0.0]);
                }
            }
        }
        let params = DensityParams::for_grid([1.0; 3], h, 1, 1);
        let lat = density_lattice(&pos, &params);
        let v = |i, j, k| lat.values[lat.index(i, j, k)];
        // Node index i lies at x = (i - 1) h: 1 and 17 are in the walls.
        for (i, k) in [(1, 1), (8, 8), (17, 17), (1, 17), (9, 1)] {
            for j in [1, 3] {
                let deep = v(i, j, k);
                assert!((deep - 0.5).abs() < 0.05, "node ({i}, {j}, {k}): {deep}");
            }
            assert!(v(i, 15, k) < -0.45, "above the pool: {}", v(i, 15, k));
            // Nodes 8 and 10 lie a cell below and above the surface y = 0.5.
            assert!(v(i, 8, k) > 0.3 && v(i, 10, k) < -0.3);
        }
        assert_eq!(v(0, 2, 2), -0.5, "padding");
    }
}
