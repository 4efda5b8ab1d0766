//! Particle/grid transfers and particle advection.

use super::{face_index, Grid, MacField};

/// Trilinear stencil of component `comp` at `x`: base node, clamped next node, fractions.
pub fn stencil(g: &Grid, comp: usize, x: [f64; 3]) -> ([usize; 3], [usize; 3], [f64; 3]) {
    let d = g.face_dims(comp);
    let mut base = [0; 3];
    let mut next = [0; 3];
    let mut f = [0.0; 3];
    for a in 0..3 {
        let mut gc = x[a] / g.h - 0.5;
        if a == comp {
            gc = x[a] / g.h;
        }
        let c = gc.clamp(0.0, (d[a] - 1) as f64);
        let b = (c.floor() as usize).min(d[a] - 1);
        base[a] = b;
        next[a] = (b + 1).min(d[a] - 1);
        f[a] = c - b as f64;
    }
    (base, next, f)
}

/// The 8 (index, weight) pairs of a stencil in the face array of `comp`.
pub fn stencil_nodes(g: &Grid, comp: usize, x: [f64; 3]) -> [(usize, f64); 8] {
    let (b, n, f) = stencil(g, comp, x);
    let d = g.face_dims(comp);
    let mut out = [(0, 0.0); 8];
    for (corner, o) in out.iter_mut().enumerate() {
        let mut node = [0; 3];
        let mut w = 1.0;
        for a in 0..3 {
            let hi = corner & (1 << a) != 0;
            node[a] = if hi { n[a] } else { b[a] };
            w *= if hi { f[a] } else { 1.0 - f[a] };
        }
        *o = (face_index(node, d), w);
    }
    out
}

/// APIC affine matrix of one particle: row `a` is c_a, the gradient of velocity component
/// `a` (1/s).
pub type Affine = [[f64; 3]; 3];

/// The 8 (node, weight, weight gradient in 1/m) triples of the stencil of `comp` at `x`.
/// Along an axis where the stencil clamps `x` into the nodes the interpolant is constant,
/// so the gradient there is zero.
pub fn stencil_corners(g: &Grid, comp: usize, x: [f64; 3]) -> [([usize; 3], f64, [f64; 3]); 8] {
    let (b, n, f) = stencil(g, comp, x);
    let d = g.face_dims(comp);
    let mut slope = [0.0; 3];
    for a in 0..3 {
        let gc = x[a] / g.h - if a == comp { 0.0 } else { 0.5 };
        if gc >= 0.0 && gc <= (d[a] - 1) as f64 {
            slope[a] = 1.0 / g.h;
        }
    }
    let mut out = [([0; 3], 0.0, [0.0; 3]); 8];
    for (corner, o) in out.iter_mut().enumerate() {
        let hi = [0, 1, 2].map(|a| corner & (1 << a) != 0);
        let w = [0, 1, 2].map(|a| if hi[a] { f[a] } else { 1.0 - f[a] });
        let dw = [0, 1, 2].map(|a| if hi[a] { slope[a] } else { -slope[a] });
        o.0 = [0, 1, 2].map(|a| if hi[a] { n[a] } else { b[a] });
        o.1 = w[0] * w[1] * w[2];
        o.2 = [
            dw[0] * w[1] * w[2],
            w[0] * dw[1] * w[2],
            w[0] * w[1] * dw[2],
        ];
    }
    out
}

/// Position (m) of face node `node` of component `comp`.
pub fn face_position(g: &Grid, comp: usize, node: [usize; 3]) -> [f64; 3] {
    [0, 1, 2].map(|a| (node[a] as f64 + if a == comp { 0.0 } else { 0.5 }) * g.h)
}

/// Interpolates a face field at `x`.
pub fn interpolate(g: &Grid, field: &MacField, x: [f64; 3]) -> [f64; 3] {
    let mut v = [0.0; 3];
    for (comp, out) in v.iter_mut().enumerate() {
        let data = field.comp(comp);
        *out = stencil_nodes(g, comp, x)
            .iter()
            .map(|(i, w)| w * data[*i])
            .sum();
    }
    v
}

pub struct P2gResult {
    pub vel: MacField,
    pub weight: MacField,
    pub count: Vec<u32>,
}

/// Cell containing `x` (clamped into the grid).
pub fn cell_of(g: &Grid, x: [f64; 3]) -> usize {
    let n = g.n();
    let c = |a: usize| ((x[a] / g.h).floor().max(0.0) as usize).min(n[a] - 1);
    g.cell(c(0), c(1), c(2))
}

/// Particle-to-grid: weighted average of particle velocities on each face.
pub fn p2g(g: &Grid, pos: &[[f64; 3]], vel: &[[f64; 3]]) -> P2gResult {
    p2g_with(g, pos, vel, None)
}

/// APIC particle-to-grid: weighted average of each particle's affine velocity field
/// v + c_a . (x_face - x) on each face.
pub fn p2g_apic(g: &Grid, pos: &[[f64; 3]], vel: &[[f64; 3]], affine: &[Affine]) -> P2gResult {
    p2g_with(g, pos, vel, Some(affine))
}

fn p2g_with(g: &Grid, pos: &[[f64; 3]], vel: &[[f64; 3]], affine: Option<&[Affine]>) -> P2gResult {
    let mut mom = MacField::zeros(g);
    let mut weight = MacField::zeros(g);
    let mut count = vec![0u32; g.cells()];
    for (p, (x, v)) in pos.iter().zip(vel).enumerate() {
        count[cell_of(g, *x)] += 1;
        for comp in 0..3 {
            let d = g.face_dims(comp);
            for (node, w, _) in stencil_corners(g, comp, *x) {
                let mut u = v[comp];
                if let Some(c) = affine {
                    let xf = face_position(g, comp, node);
                    u += (0..3).map(|a| c[p][comp][a] * (xf[a] - x[a])).sum::<f64>();
                }
                let i = face_index(node, d);
                mom.comp_mut(comp)[i] += w * u;
                weight.comp_mut(comp)[i] += w;
            }
        }
    }
    let mut out = MacField::zeros(g);
    for comp in 0..3 {
        let (m, w) = (mom.comp(comp), weight.comp(comp));
        for (i, o) in out.comp_mut(comp).iter_mut().enumerate() {
            *o = if w[i] > 0.0 { m[i] / w[i] } else { 0.0 };
        }
    }
    P2gResult {
        vel: out,
        weight,
        count,
    }
}

/// Grid-to-particle with the PIC/FLIP blend: r * new + (1 - r) * (v + new - old).
pub fn g2p(
    g: &Grid,
    pos: &[[f64; 3]],
    vel: &[[f64; 3]],
    new: &MacField,
    old: &MacField,
    pic_ratio: f64,
) -> Vec<[f64; 3]> {
    pos.iter()
        .zip(vel)
        .map(|(x, v)| {
            let n = interpolate(g, new, *x);
            let o = interpolate(g, old, *x);
            let mut out = [0.0; 3];
            for a in 0..3 {
                out[a] = pic_ratio * n[a] + (1.0 - pic_ratio) * (v[a] + n[a] - o[a]);
            }
            out
        })
        .collect()
}

/// Grid-to-particle where each face's change new - old is weighed by `scale` (the bodies'
/// gather factors, [`super::bodies::gather_scale`]): with c = interp(scale (new - old)),
/// r * (interp(old) + c) + (1 - r) * (v + c); with `apic` the velocity interp(old) + c.
pub fn g2p_scaled(
    g: &Grid,
    pos: &[[f64; 3]],
    vel: &[[f64; 3]],
    (new, old, scale): (&MacField, &MacField, &MacField),
    pic_ratio: f64,
    apic: bool,
) -> Vec<[f64; 3]> {
    pos.iter()
        .zip(vel)
        .map(|(x, v)| {
            let mut out = [0.0; 3];
            for (a, o) in out.iter_mut().enumerate() {
                let (n, u0, s) = (new.comp(a), old.comp(a), scale.comp(a));
                let (mut before, mut change) = (0.0, 0.0);
                for (i, w) in stencil_nodes(g, a, *x) {
                    before += w * u0[i];
                    change += w * s[i] * (n[i] - u0[i]);
                }
                let grid = before + change;
                *o = if apic {
                    grid
                } else {
                    pic_ratio * grid + (1.0 - pic_ratio) * (v[a] + change)
                };
            }
            out
        })
        .collect()
}

/// APIC grid-to-particle: the interpolated velocity and its gradient, row per component.
pub fn g2p_apic(g: &Grid, pos: &[[f64; 3]], new: &MacField) -> (Vec<[f64; 3]>, Vec<Affine>) {
    pos.iter()
        .map(|x| {
            let mut v = [0.0; 3];
            let mut c = [[0.0; 3]; 3];
            for comp in 0..3 {
                let (d, data) = (g.face_dims(comp), new.comp(comp));
                for (node, w, dw) in stencil_corners(g, comp, *x) {
                    let u = data[face_index(node, d)];
                    v[comp] += w * u;
                    for a in 0..3 {
                        c[comp][a] += dw[a] * u;
                    }
                }
            }
            (v, c)
        })
        .unzip()
}

/// RK2 (midpoint) advection, then the domain clamp and the axis-by-axis solid push-back.
pub fn advect(
    g: &Grid,
    solid: &[bool],
    grid_vel: &MacField,
    pos: &mut [[f64; 3]],
    vel: &mut [[f64; 3]],
    dt: f64,
) {
    let m = 0.01 * g.h;
    let n = g.n();
    for (x0, v) in pos.iter_mut().zip(vel.iter_mut()) {
        let u0 = interpolate(g, grid_vel, *x0);
        let mid = [0, 1, 2].map(|a| x0[a] + 0.5 * dt * u0[a]);
        let u1 = interpolate(g, grid_vel, mid);
        let mut x = [0, 1, 2].map(|a| x0[a] + dt * u1[a]);
        for a in 0..3 {
            let hi = n[a] as f64 * g.h - m;
            if x[a] < m || x[a] > hi {
                x[a] = x[a].clamp(m, hi);
                v[a] = 0.0;
            }
        }
        let is_solid = |p: [f64; 3]| solid[cell_of(g, p)];
        if is_solid(x) && !is_solid(*x0) {
            let mut p = *x0;
            for a in 0..3 {
                let mut cand = p;
                cand[a] = x[a];
                if is_solid(cand) {
                    let lo = g.coord(cell_of(g, p))[a] as f64 * g.h;
                    cand[a] = x[a].clamp(lo + m, lo + g.h - m);
                    v[a] = 0.0;
                }
                p = cand;
            }
            x = p;
        }
        *x0 = x;
    }
}

/// Max speed, largest x and kinetic energy (mass per particle `mass`).
pub fn particle_stats(pos: &[[f64; 3]], vel: &[[f64; 3]], mass: f64) -> (f64, f64, f64) {
    let mut max_speed = 0.0f64;
    let mut front = 0.0f64;
    let mut ke = 0.0;
    for (x, v) in pos.iter().zip(vel) {
        let s2 = v[0] * v[0] + v[1] * v[1] + v[2] * v[2];
        max_speed = max_speed.max(s2.sqrt());
        front = front.max(x[0]);
        ke += 0.5 * mass * s2;
    }
    (max_speed, front, ke)
}

#[cfg(test)]
mod tests {
    use super::super::testutil::Rng;
    use super::*;

    fn grid(nz: usize) -> Grid {
        Grid {
            nx: 8,
            ny: 7,
            nz,
            h: 0.1,
        }
    }

    fn random_particles(g: &Grid, n: usize, rng: &mut Rng) -> Vec<[f64; 3]> {
        (0..n)
            .map(|_| {
                [
                    rng.f() * g.nx as f64 * g.h,
                    rng.f() * g.ny as f64 * g.h,
                    rng.f() * g.nz as f64 * g.h,
                ]
            })
            .collect()
    }

    #[test]
    fn stencil_weights_sum_to_one_and_hit_real_faces() {
        let mut rng = Rng(3);
        for nz in [1, 5] {
            let g = grid(nz);
            for x in random_particles(&g, 200, &mut rng) {
                for comp in 0..3 {
                    let nodes = stencil_nodes(&g, comp, x);
                    let s: f64 = nodes.iter().map(|n| n.1).sum();
                    assert!((s - 1.0).abs() < 1e-12);
                    let len = MacField::zeros(&g).comp(comp).len();
                    assert!(nodes.iter().all(|n| n.0 < len));
                }
            }
        }
    }

    #[test]
    fn transfers_reproduce_a_linear_field() {
        let g = grid(6);
        let mut rng = Rng(5);
        // Dense particles so every face near the middle has weight.
        let pos: Vec<[f64; 3]> = random_particles(&g, 20000, &mut rng);
        let f = |x: [f64; 3]| [0.3 + 0.5 * x[1], -0.2 + 0.7 * x[0], 0.1 - 0.4 * x[2]];
        let vel: Vec<[f64; 3]> = pos.iter().map(|x| f(*x)).collect();
        let r = p2g(&g, &pos, &vel);
        // G2P of the grid field at interior points reproduces the field approximately
        // (P2G averages over the stencil, exact for linear fields up to sampling noise).
        let mut worst = 0.0f64;
        for _ in 0..200 {
            let x = [
                0.2 + rng.f() * 0.4,
                0.2 + rng.f() * 0.3,
                0.2 + rng.f() * 0.2,
            ];
            let v = interpolate(&g, &r.vel, x);
            let e = f(x);
            for a in 0..3 {
                worst = worst.max((v[a] - e[a]).abs());
            }
        }
        assert!(worst < 5e-3, "linear field error {worst}");
        let total: u32 = r.count.iter().sum();
        assert_eq!(total, 20000);
    }

    #[test]
    fn uniform_velocity_is_transferred_exactly() {
        let g = grid(1);
        let mut rng = Rng(9);
        let pos = random_particles(&g, 300, &mut rng);
        let vel = vec![[0.7, -1.3, 0.0]; 300];
        let r = p2g(&g, &pos, &vel);
        for comp in 0..3 {
            for (v, w) in r.vel.comp(comp).iter().zip(r.weight.comp(comp)) {
                if *w > 0.0 {
                    assert!((v - vel[0][comp]).abs() < 1e-12);
                }
            }
        }
        let back = g2p(&g, &pos, &vel, &r.vel, &r.vel, 0.05);
        assert!(back
            .iter()
            .all(|v| (v[0] - 0.7).abs() < 1e-12 && (v[1] + 1.3).abs() < 1e-12));
    }

    /// A random affine field u(x) = b + A x: (b, A), row a of A the gradient of u_a.
    fn affine_field(rng: &mut Rng) -> ([f64; 3], Affine) {
        let b = [0, 1, 2].map(|_| rng.f() * 2.0 - 1.0);
        let a = [0, 1, 2].map(|_| [0, 1, 2].map(|_| (rng.f() * 2.0 - 1.0) * 5.0));
        (b, a)
    }

    fn eval(f: &([f64; 3], Affine), x: [f64; 3]) -> [f64; 3] {
        [0, 1, 2].map(|r| f.0[r] + (0..3).map(|c| f.1[r][c] * x[c]).sum::<f64>())
    }

    #[test]
    fn apic_gradient_is_the_derivative_of_the_interpolant() {
        let g = grid(6);
        let mut rng = Rng(13);
        let mut field = MacField::zeros(&g);
        for comp in 0..3 {
            for x in field.comp_mut(comp).iter_mut() {
                *x = rng.f() * 2.0 - 1.0;
            }
        }
        // Positions anywhere, the clamped half cells at the walls included.
        let pos = random_particles(&g, 300, &mut rng);
        let (vel, affine) = g2p_apic(&g, &pos, &field);
        let eps = 1e-7 * g.h;
        let mut worst = 0.0f64;
        let mut largest = 0.0f64;
        for ((x, v), c) in pos.iter().zip(&vel).zip(&affine) {
            let iv = interpolate(&g, &field, *x);
            assert!((0..3).all(|a| (v[a] - iv[a]).abs() < 1e-14));
            for a in 0..3 {
                let (mut lo, mut hi) = (*x, *x);
                lo[a] -= eps;
                hi[a] += eps;
                let (l, h) = (interpolate(&g, &field, lo), interpolate(&g, &field, hi));
                for comp in 0..3 {
                    let fd = (h[comp] - l[comp]) / (2.0 * eps);
                    worst = worst.max((fd - c[comp][a]).abs());
                    largest = largest.max(c[comp][a].abs());
                }
            }
        }
        assert!(largest > 1.0, "gradients are trivial");
        assert!(worst < 1e-5 * largest, "gradient error {worst}");
    }

    #[test]
    fn apic_transfers_an_affine_field_exactly() {
        let g = grid(5);
        let mut rng = Rng(17);
        let f = affine_field(&mut rng);
        // About one particle per cell: PIC's face averages sit at the particles' weighted
        // centroid, not at the face, and miss an affine field; APIC's do not.
        let pos = random_particles(&g, 300, &mut rng);
        let vel: Vec<[f64; 3]> = pos.iter().map(|x| eval(&f, *x)).collect();
        let affine = vec![f.1; pos.len()];
        let apic = p2g_apic(&g, &pos, &vel, &affine);
        let pic = p2g(&g, &pos, &vel);
        let (mut e_apic, mut e_pic) = (0.0f64, 0.0f64);
        for comp in 0..3 {
            let d = g.face_dims(comp);
            for (i, w) in apic.weight.comp(comp).iter().enumerate() {
                if *w <= 0.0 {
                    continue;
                }
                let node = [i % d[0], (i / d[0]) % d[1], i / (d[0] * d[1])];
                let exact = eval(&f, face_position(&g, comp, node))[comp];
                e_apic = e_apic.max((apic.vel.comp(comp)[i] - exact).abs());
                e_pic = e_pic.max((pic.vel.comp(comp)[i] - exact).abs());
            }
        }
        assert!(e_apic < 1e-12, "APIC P2G error {e_apic}");
        assert!(
            e_pic > 1e-2,
            "PIC P2G error {e_pic}: the test would not tell them apart"
        );
        // G2P of the exact face field gives back the field and its gradient wherever the
        // stencil is not clamped (at least half a cell from every wall).
        let mut exact = MacField::zeros(&g);
        for comp in 0..3 {
            let d = g.face_dims(comp);
            for (i, u) in exact.comp_mut(comp).iter_mut().enumerate() {
                let node = [i % d[0], (i / d[0]) % d[1], i / (d[0] * d[1])];
                *u = eval(&f, face_position(&g, comp, node))[comp];
            }
        }
        let n = g.n();
        let inner: Vec<[f64; 3]> = (0..200)
            .map(|_| [0, 1, 2].map(|a| (0.5 + rng.f() * (n[a] as f64 - 1.0)) * g.h))
            .collect();
        let (v, c) = g2p_apic(&g, &inner, &exact);
        for ((x, v), c) in inner.iter().zip(&v).zip(&c) {
            let e = eval(&f, *x);
            for r in 0..3 {
                assert!((v[r] - e[r]).abs() < 1e-12);
                for k in 0..3 {
                    assert!((c[r][k] - f.1[r][k]).abs() < 1e-9, "C[{r}][{k}]");
                }
            }
        }
    }

    #[test]
    fn advection_stays_in_the_domain_and_out_of_solids() {
        for nz in [1, 6] {
            let g = grid(nz);
            let mut rng = Rng(11);
            let mut solid = vec![false; g.cells()];
            for (c, s) in solid.iter_mut().enumerate() {
                let [i, j, _] = g.coord(c);
                *s = (3..5).contains(&i) && j < 3;
            }
            let mut field = MacField::zeros(&g);
            for comp in 0..3 {
                for x in field.comp_mut(comp).iter_mut() {
                    *x = (rng.f() - 0.5) * 8.0;
                }
            }
            let mut pos: Vec<[f64; 3]> = random_particles(&g, 500, &mut rng)
                .into_iter()
                .filter(|p| !solid[cell_of(&g, *p)])
                .collect();
            let mut vel = vec![[0.0; 3]; pos.len()];
            let start = pos.clone();
            advect(&g, &solid, &field, &mut pos, &mut vel, 0.02);
            assert_ne!(pos, start);
            for p in &pos {
                for a in 0..3 {
                    assert!(p[a] > 0.0 && p[a] < g.n()[a] as f64 * g.h);
                }
                assert!(!solid[cell_of(&g, *p)]);
            }
        }
    }
}
