//! Which deflation space gives `mg`-PCG on the strong coupling's system K = A + J^T C J
//! (src/sim/bodies/strong.wgsl) the iterations of A alone? In f64 throughout (the reference
//! V-cycle of src/reference/multigrid.rs), on `eddy bench`'s `floating_bodies` problem at N^3
//! after its settling frames, to max|r| <= 1e-6 max|b|.
//!
//!     cargo run --release --example deflation_study -- N [CASE...]
//!
//! CASE: `base` (A alone, K undeflated, Z = J^T), `shipped` (the reference's
//! `deflation_space`, what strong.wgsl deflates with), `jac2` `jac4` `jac8` `jac16` (Z = that
//! many damped Jacobi sweeps on A z = J^T), `mgz` (Z = one V-cycle of J^T) and `exact`
//! (Z = A^-1 J^T, whole and cut to the body's box grown by 2, 4 and 8 cells); all without
//! one. The settled system is kept in $TMPDIR/eddy_deflation_study_N (delete it to settle
//! again). benchmarks/history.md quotes what it printed.
use eddy::reference::bodies::{body_rows, c_matrix};
use eddy::reference::{apply_packed, Grid, Multigrid, FLUID};
use std::sync::Arc;

type Rows = Vec<(usize, [f64; 6])>;

struct Sys {
    g: Grid,
    types: Vec<u8>,
    a: Vec<[f64; 4]>,
    b: Vec<f64>,
    rows: Vec<Rows>,
    c: Vec<[[f64; 6]; 6]>,
}

impl Sys {
    fn k(&self, x: &[f64], with_term: bool) -> Vec<f64> {
        let mut y = apply_packed(&self.g, &self.a, x);
        if with_term {
            for (rows, c) in self.rows.iter().zip(&self.c) {
                let mut jx = [0.0; 6];
                for &(cell, v) in rows {
                    for i in 0..6 {
                        jx[i] += v[i] * x[cell];
                    }
                }
                let w: [f64; 6] = std::array::from_fn(|i| (0..6).map(|j| c[i][j] * jx[j]).sum());
                for &(cell, v) in rows {
                    y[cell] += (0..6).map(|i| v[i] * w[i]).sum::<f64>();
                }
            }
        }
        y
    }
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

fn max_abs(a: &[f64]) -> f64 {
    a.iter().fold(0.0, |m, x| m.max(x.abs()))
}

/// Sparse columns of Z.
type Z = Vec<Vec<(usize, f64)>>;

fn zt(z: &Z, x: &[f64]) -> Vec<f64> {
    z.iter()
        .map(|col| col.iter().map(|&(c, v)| v * x[c]).sum())
        .collect()
}

fn add_z(z: &Z, y: &[f64], out: &mut [f64]) {
    for (col, &yy) in z.iter().zip(y) {
        for &(c, v) in col {
            out[c] += v * yy;
        }
    }
}

/// Pseudo-inverse of symmetric E (eigenvalues below 1e-10 of the largest dropped).
fn pinv(e: &[Vec<f64>]) -> nalgebra::DMatrix<f64> {
    let m = e.len();
    let mat = nalgebra::DMatrix::from_fn(m, m, |i, j| 0.5 * (e[i][j] + e[j][i]));
    let eig = mat.symmetric_eigen();
    let lmax = eig.eigenvalues.iter().fold(0.0f64, |a, &b| a.max(b));
    let mut inv = nalgebra::DMatrix::zeros(m, m);
    for k in 0..m {
        let l = eig.eigenvalues[k];
        if l > 1e-10 * lmax {
            let v = eig.eigenvectors.column(k);
            inv += (v * v.transpose()) / l;
        }
    }
    inv
}

/// A-DEF2 PCG on K with the mg V-cycle and deflation space Z (blocks: E block-diagonal per
/// body when `blocks` gives each column's body). Returns iterations to max|r| <= tol max|b|.
fn solve(
    s: &Sys,
    mg: &Multigrid,
    term: bool,
    z: Option<(&Z, Option<&[usize]>)>,
    tol: f64,
) -> usize {
    let n = s.g.cells();
    let live = |c: usize| s.a[c][0] != 0.0;
    let (einv, zz) = match z {
        Some((z, blocks)) => {
            let kz: Vec<Vec<f64>> = z
                .iter()
                .map(|col| {
                    let mut x = vec![0.0; n];
                    for &(c, v) in col {
                        x[c] = v;
                    }
                    s.k(&x, term)
                })
                .collect();
            let m = z.len();
            let mut e = vec![vec![0.0; m]; m];
            for i in 0..m {
                for j in 0..m {
                    if blocks.is_some_and(|b| b[i] != b[j]) {
                        continue;
                    }
                    e[i][j] = z[i].iter().map(|&(c, v)| v * kz[j][c]).sum();
                }
            }
            (Some(pinv(&e)), Some(z))
        }
        None => (None, None),
    };
    let q_apply = |r: &[f64]| -> Vec<f64> {
        let (einv, z) = (einv.as_ref().unwrap(), zz.unwrap());
        let y = einv * nalgebra::DVector::from_vec(zt(z, r));
        let mut out = vec![0.0; n];
        add_z(z, y.as_slice(), &mut out);
        out
    };
    let mut x = vec![0.0; n];
    if zz.is_some() {
        x = q_apply(&s.b);
    }
    let kx = s.k(&x, term);
    let mut r: Vec<f64> = (0..n)
        .map(|c| if live(c) { s.b[c] - kx[c] } else { 0.0 })
        .collect();
    let bmax = max_abs(&s.b);
    let precond = |r: &[f64]| -> Vec<f64> {
        let mut z = mg.apply(r);
        for (c, zc) in z.iter_mut().enumerate() {
            if !live(c) {
                *zc = 0.0;
            }
        }
        if zz.is_some() {
            let kz = s.k(&z, term);
            let rr: Vec<f64> = (0..n).map(|c| r[c] - kz[c]).collect();
            for (zc, corr) in z.iter_mut().zip(q_apply(&rr)) {
                *zc += corr;
            }
        }
        z
    };
    let mut zv = precond(&r);
    let mut d = zv.clone();
    let mut rho = dot(&r, &zv);
    for it in 1..=300 {
        let q = s.k(&d, term);
        let alpha = rho / dot(&d, &q);
        for c in 0..n {
            x[c] += alpha * d[c];
            r[c] -= alpha * q[c];
        }
        if max_abs(&r) <= tol * bmax {
            return it;
        }
        zv = precond(&r);
        let rho_new = dot(&r, &zv);
        let beta = rho_new / rho;
        rho = rho_new;
        for c in 0..n {
            d[c] = zv[c] + beta * d[c];
        }
    }
    999
}

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let n: u32 = args.get(1).map_or(32, |s| s.parse().unwrap());
    let cache = std::env::temp_dir().join(format!("eddy_deflation_study_{n}"));
    let sys = if cache.join("system.json").exists() {
        eddy::output::frozen::load_frozen_system(&cache).map_err(anyhow::Error::msg)?
    } else {
        let ctx = Arc::new(eddy::gpu::GpuContext::new()?);
        let problem = eddy::scene::StandardProblem::FloatingBodies;
        let mut scene = problem.scene(n);
        scene.pressure.tolerance = 1e-6;
        let mut sim = eddy::sim::Simulation::new(ctx, &scene)?;
        sim.keep_solver_vectors();
        for _ in 0..problem.settle_frames() {
            sim.step_frame()?;
        }
        let f = sim.freeze_system()?;
        eddy::output::frozen::save_frozen_system(&cache, &f)?;
        f
    };
    let g = Grid {
        nx: sys.dims[0] as usize,
        ny: sys.dims[1] as usize,
        nz: sys.dims[2] as usize,
        h: sys.h as f64,
    };
    let types: Vec<u8> = sys.cell_type.iter().map(|&t| t as u8).collect();
    let a: Vec<[f64; 4]> = sys.a.iter().map(|r| r.map(|v| v as f64)).collect();
    let b: Vec<f64> = sys.b.iter().map(|&v| v as f64).collect();
    let fb = sys.bodies.as_ref().expect("bodies");
    let bodies = fb.ref_bodies();
    let rows = body_rows(g, &bodies, (&fb.body_id, &fb.cover), &types, false);
    let c: Vec<[[f64; 6]; 6]> = bodies.iter().map(c_matrix).collect();
    let s = Sys {
        g,
        types,
        a,
        b,
        rows,
        c,
    };
    let mg = Multigrid::new(&s.g, &s.types, &s.a);
    let tol = 1e-6;
    let nb = s.rows.len();
    let fluid = s.types.iter().filter(|&&t| t == FLUID).count();
    eprintln!("{n}^3: {nb} bodies, {fluid} fluid cells");
    let jt: Z = s
        .rows
        .iter()
        .flat_map(|rows| (0..6).map(move |i| rows.iter().map(|&(c, v)| (c, v[i])).collect()))
        .collect();
    let owner: Vec<usize> = (0..nb).flat_map(|k| std::iter::repeat_n(k, 6)).collect();
    // Deflated with `z`: each body's block of E alone, then the full E.
    let report = |what: &str, z: &Z| {
        println!(
            "K, Z = {what}: block E {}, full E {}",
            solve(&s, &mg, true, Some((z, Some(&owner))), tol),
            solve(&s, &mg, true, Some((z, None)), tol)
        );
    };
    let which: Vec<String> = args[2..].to_vec();
    let want = |w: &str| which.is_empty() || which.iter().any(|x| x == w);
    if want("base") {
        println!("A alone: {}", solve(&s, &mg, false, None, tol));
        println!("K undeflated: {}", solve(&s, &mg, true, None, tol));
        report("J^T", &jt);
    }
    let dense = |col: &[(usize, f64)]| {
        let mut x = vec![0.0; s.g.cells()];
        for &(c, v) in col {
            x[c] = v;
        }
        x
    };
    let sparse = |x: &[f64]| -> Vec<(usize, f64)> {
        x.iter()
            .enumerate()
            .filter(|&(c, &v)| v != 0.0 && s.a[c][0] != 0.0)
            .map(|(c, &v)| (c, v))
            .collect()
    };
    if want("shipped") {
        let space = eddy::reference::bodies::deflation_space(s.g, &s.rows, &s.a);
        let zs: Z = space
            .iter()
            .flat_map(|rows| (0..6).map(move |i| rows.iter().map(|&(c, v)| (c, v[i])).collect()))
            .collect();
        report("deflation_space", &zs);
    }
    // Jacobi-smoothed J^T: z <- z + w D^-1 (J^T - A z), from z = 0.
    for sweeps in [2usize, 4, 8, 16] {
        if !want(&format!("jac{sweeps}")) {
            continue;
        }
        let zs: Z = jt
            .iter()
            .map(|col| {
                let f = dense(col);
                let mut z = vec![0.0; f.len()];
                for _ in 0..sweeps {
                    let az = apply_packed(&s.g, &s.a, &z);
                    for c in 0..f.len() {
                        if s.a[c][0] != 0.0 {
                            z[c] += 0.8 * (f[c] - az[c]) / s.a[c][0];
                        }
                    }
                }
                sparse(&z)
            })
            .collect();
        let support: usize = zs.iter().map(|c| c.len()).sum::<usize>() / zs.len();
        report(
            &format!("{sweeps} Jacobi sweeps of J^T (avg support {support})"),
            &zs,
        );
    }
    // One V-cycle of J^T (global support), and truncated to a box around the body.
    if want("mgz") {
        let zs: Z = jt
            .iter()
            .map(|col| sparse(&mg.apply(&dense(col))))
            .collect();
        report("M J^T", &zs);
    }
    if want("exact") {
        // A^-1 J^T to 1e-8 by mg-PCG on A.
        let zs: Z = jt
            .iter()
            .map(|col| {
                let f = dense(col);
                let r = eddy::reference::pcg(
                    &s.g,
                    &s.types,
                    &s.a,
                    &f,
                    eddy::reference::Preconditioner::Multigrid,
                    1e-8,
                    200,
                    None,
                );
                sparse(&r.p)
            })
            .collect();
        report("A^-1 J^T", &zs);
        // Truncated to the body's box grown by `grow` cells.
        for grow in [2i64, 4, 8] {
            let zt_: Z = zs
                .iter()
                .zip(&owner)
                .map(|(col, &k)| {
                    let cb = &fb.couple[k];
                    col.iter()
                        .copied()
                        .filter(|&(c, _)| {
                            let p = s.g.coord(c);
                            (0..3).all(|ax| {
                                let v = p[ax] as i64;
                                v >= cb.lo[ax] as i64 - grow && v < cb.hi[ax] as i64 + grow
                            })
                        })
                        .collect()
                })
                .collect();
            report(&format!("A^-1 J^T on the box + {grow}"), &zt_);
        }
    }
    Ok(())
}
