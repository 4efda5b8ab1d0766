//! Pressure system: packed and CSR matrices, preconditioners, PCG, an accurate solve.

use super::{Grid, FLUID};
use crate::scene::PreconditionerKind;
use nalgebra_sparse::{CooMatrix, CsrMatrix};

/// Packed matrix per cell: (diag, +x, +y, +z), p = 0 at AIR cell centres. Rows of
/// non-FLUID cells are zero.
pub fn build_matrix(g: &Grid, types: &[u8]) -> Vec<[f64; 4]> {
    super::build_matrix_free_surface(g, types, None)
}

/// Neighbour of cell `c` along `comp`, above (`up`) or below, or None outside the grid.
pub(crate) fn neighbour(g: &Grid, c: usize, comp: usize, up: bool) -> Option<usize> {
    let mut x = g.coord(c).map(|v| v as i64);
    x[comp] += if up { 1 } else { -1 };
    g.cell_at(x)
}

/// The full symmetric matrix of packed `a` over FLUID cells (rows in cell-index order) and
/// the cell of each row.
pub fn assemble_csr(g: &Grid, types: &[u8], a: &[[f64; 4]]) -> (CsrMatrix<f64>, Vec<usize>) {
    let rows: Vec<usize> = (0..g.cells()).filter(|&c| types[c] == FLUID).collect();
    let mut row_of = vec![usize::MAX; g.cells()];
    for (r, &c) in rows.iter().enumerate() {
        row_of[c] = r;
    }
    let mut coo = CooMatrix::new(rows.len(), rows.len());
    for (r, &c) in rows.iter().enumerate() {
        coo.push(r, r, a[c][0]);
        for comp in 0..3 {
            if let Some(n) = neighbour(g, c, comp, true) {
                if a[c][comp + 1] != 0.0 {
                    coo.push(r, row_of[n], a[c][comp + 1]);
                    coo.push(row_of[n], r, a[c][comp + 1]);
                }
            }
        }
    }
    (CsrMatrix::from(&coo), rows)
}

/// A x with the 7-point stencil of the packed matrix (zero on non-FLUID rows).
pub fn apply_packed(g: &Grid, a: &[[f64; 4]], x: &[f64]) -> Vec<f64> {
    (0..g.cells())
        .map(|c| {
            if a[c][0] == 0.0 {
                return 0.0;
            }
            let mut s = a[c][0] * x[c];
            for comp in 0..3 {
                if let Some(n) = neighbour(g, c, comp, true) {
                    s += a[c][comp + 1] * x[n];
                }
                if let Some(m) = neighbour(g, c, comp, false) {
                    s += a[m][comp + 1] * x[m];
                }
            }
            s
        })
        .collect()
}

pub use crate::gpu::constants::{MIC_SIGMA, MIC_TAU};

/// MIC(0) inverse diagonal in lexicographic order (Bridson, Fluid Simulation for Computer
/// Graphics, 2nd ed., fig. 5.2): the tiled factorisation with one tile as large as the grid,
/// so nothing is dropped.
pub fn mic0_factor(g: &Grid, a: &[[f64; 4]]) -> Vec<f64> {
    super::mic0_factor_blocks(g, a, g.n())
}

/// The preconditioners of eddy, in f64.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Preconditioner {
    None,
    Jacobi,
    IncompletePoisson,
    Mic0,
    /// MIC(0) per tile, couplings between tiles dropped (see `multigrid.rs`).
    Mic0Tiled,
    /// One multigrid V-cycle (see `multigrid.rs`).
    Multigrid,
}

impl From<PreconditionerKind> for Preconditioner {
    fn from(k: PreconditionerKind) -> Self {
        match k {
            PreconditionerKind::None => Self::None,
            PreconditionerKind::Jacobi => Self::Jacobi,
            PreconditionerKind::Ip => Self::IncompletePoisson,
            PreconditionerKind::Mic0 => Self::Mic0,
            PreconditionerKind::Mic0Tiled => Self::Mic0Tiled,
            PreconditionerKind::Mg => Self::Multigrid,
        }
    }
}

impl Preconditioner {
    pub const ALL: [Preconditioner; 6] = [
        Self::None,
        Self::Jacobi,
        Self::IncompletePoisson,
        Self::Mic0,
        Self::Mic0Tiled,
        Self::Multigrid,
    ];

    /// z = M^-1 r (z = 0 on non-FLUID cells). `types` are the cell types the matrix was
    /// built from (multigrid coarsens them).
    pub fn apply(self, g: &Grid, types: &[u8], a: &[[f64; 4]], r: &[f64]) -> Vec<f64> {
        self.prepare(g, types, a).apply(r)
    }

    /// The per-system set-up (factorisation, hierarchy), done once per solve.
    pub fn prepare<'a>(self, g: &'a Grid, types: &[u8], a: &'a [[f64; 4]]) -> Prepared<'a> {
        let setup = match self {
            Self::Mic0 => Setup::Factor(mic0_factor(g, a)),
            Self::Mic0Tiled => Setup::Factor(super::mic0_tiled_factor(g, a)),
            Self::Multigrid => Setup::Multigrid(super::Multigrid::new(g, types, a)),
            _ => Setup::Nothing,
        };
        Prepared {
            kind: self,
            g,
            a,
            setup,
        }
    }
}

enum Setup {
    Nothing,
    Factor(Vec<f64>),
    Multigrid(super::Multigrid),
}

/// A preconditioner set up for one system.
pub struct Prepared<'a> {
    kind: Preconditioner,
    g: &'a Grid,
    a: &'a [[f64; 4]],
    setup: Setup,
}

impl Prepared<'_> {
    pub fn multigrid(&self) -> Option<&super::Multigrid> {
        match &self.setup {
            Setup::Multigrid(m) => Some(m),
            _ => None,
        }
    }

    pub fn apply(&self, r: &[f64]) -> Vec<f64> {
        let (g, a) = (self.g, self.a);
        let n = g.cells();
        match (&self.setup, self.kind) {
            (Setup::Multigrid(mg), _) => mg.apply(r),
            (Setup::Factor(pr), Preconditioner::Mic0Tiled) => {
                super::mic0_blocks_apply(g, a, pr, super::mic_tile(g.n()), r)
            }
            (Setup::Factor(pr), _) => super::mic0_blocks_apply(g, a, pr, g.n(), r),
            (_, Preconditioner::Jacobi) => (0..n)
                .map(|c| if a[c][0] != 0.0 { r[c] / a[c][0] } else { 0.0 })
                .collect(),
            (_, Preconditioner::IncompletePoisson) => {
                // t = K^T r, z = K t with K = I - L D^-1.
                let t: Vec<f64> = (0..n)
                    .map(|c| {
                        if a[c][0] == 0.0 {
                            return 0.0;
                        }
                        let s: f64 = (0..3)
                            .filter_map(|comp| {
                                neighbour(g, c, comp, true).map(|nb| a[c][comp + 1] * r[nb])
                            })
                            .sum();
                        r[c] - s / a[c][0]
                    })
                    .collect();
                (0..n)
                    .map(|c| {
                        if a[c][0] == 0.0 {
                            return 0.0;
                        }
                        let s: f64 = (0..3)
                            .filter_map(|comp| {
                                neighbour(g, c, comp, false)
                                    .filter(|&m| a[m][0] != 0.0)
                                    .map(|m| a[m][comp + 1] * t[m] / a[m][0])
                            })
                            .sum();
                        t[c] - s
                    })
                    .collect()
            }
            _ => (0..n)
                .map(|c| if a[c][0] != 0.0 { r[c] } else { 0.0 })
                .collect(),
        }
    }
}

pub struct PcgResult {
    pub p: Vec<f64>,
    pub iterations: usize,
    /// max|r| / max|b| before the first iteration and after each one (as on the GPU).
    pub residual_history: Vec<f64>,
    pub converged: bool,
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

fn max_abs(a: &[f64]) -> f64 {
    a.iter().fold(0.0, |m, x| m.max(x.abs()))
}

/// PCG with the GPU's stopping rule: max|r| <= tol * max|b|.
#[allow(clippy::too_many_arguments)]
pub fn pcg(
    g: &Grid,
    types: &[u8],
    a: &[[f64; 4]],
    b: &[f64],
    m: Preconditioner,
    tol: f64,
    max_iterations: usize,
    x0: Option<&[f64]>,
) -> PcgResult {
    let n = g.cells();
    let mut x: Vec<f64> = match x0 {
        Some(x0) => (0..n)
            .map(|c| if a[c][0] != 0.0 { x0[c] } else { 0.0 })
            .collect(),
        None => vec![0.0; n],
    };
    let ax = apply_packed(g, a, &x);
    let mut r: Vec<f64> = (0..n).map(|c| b[c] - ax[c]).collect();
    let bmax = max_abs(b);
    if bmax == 0.0 {
        return PcgResult {
            p: x,
            iterations: 0,
            residual_history: vec![0.0],
            converged: true,
        };
    }
    let mut history = vec![max_abs(&r) / bmax];
    if history[0] <= tol {
        return PcgResult {
            p: x,
            iterations: 0,
            residual_history: history,
            converged: true,
        };
    }
    let m = m.prepare(g, types, a);
    let mut z = m.apply(&r);
    let mut d = z.clone();
    let mut rho = dot(&r, &z);
    for it in 1..=max_iterations {
        let q = apply_packed(g, a, &d);
        let alpha = rho / dot(&d, &q);
        for c in 0..n {
            x[c] += alpha * d[c];
            r[c] -= alpha * q[c];
        }
        let res = max_abs(&r) / bmax;
        history.push(res);
        if res <= tol {
            return PcgResult {
                p: x,
                iterations: it,
                residual_history: history,
                converged: true,
            };
        }
        z = m.apply(&r);
        let rho_new = dot(&r, &z);
        let beta = rho_new / rho;
        rho = rho_new;
        for c in 0..n {
            d[c] = z[c] + beta * d[c];
        }
    }
    PcgResult {
        p: x,
        iterations: max_iterations,
        residual_history: history,
        converged: false,
    }
}

/// An accurate solution (MIC(0)-PCG to max|r| <= 1e-12 max|b|), the ground truth for tests.
pub fn direct_solve(g: &Grid, a: &[[f64; 4]], b: &[f64]) -> Vec<f64> {
    pcg(
        g,
        &[],
        a,
        b,
        Preconditioner::Mic0,
        1e-12,
        20 * g.cells() + 100,
        None,
    )
    .p
}

#[cfg(test)]
mod tests {
    use super::super::testutil::Rng;
    use super::super::{AIR, SOLID};
    use super::*;

    fn setup(g: &Grid, seed: u64) -> (Vec<u8>, Vec<f64>) {
        let mut rng = Rng(seed);
        let types: Vec<u8> = (0..g.cells())
            .map(|c| {
                let [i, j, _] = g.coord(c);
                if i >= g.nx - 3 && j < 2 {
                    SOLID
                } else if (j as f64) < g.ny as f64 * 0.6 {
                    if rng.f() < 0.03 {
                        AIR
                    } else {
                        FLUID
                    }
                } else {
                    AIR
                }
            })
            .collect();
        let b = (0..g.cells())
            .map(|c| {
                if types[c] == FLUID {
                    rng.f() - 0.5
                } else {
                    0.0
                }
            })
            .collect();
        (types, b)
    }

    #[test]
    fn csr_equals_packed_and_is_symmetric() {
        let g = Grid {
            nx: 9,
            ny: 7,
            nz: 5,
            h: 0.1,
        };
        let (types, _) = setup(&g, 4);
        let a = build_matrix(&g, &types);
        let (csr, rows) = assemble_csr(&g, &types, &a);
        let mut dense = vec![vec![0.0; rows.len()]; rows.len()];
        for (r, c, v) in csr.triplet_iter() {
            dense[r][c] = *v;
        }
        let mut row_of = vec![usize::MAX; g.cells()];
        for (r, &c) in rows.iter().enumerate() {
            row_of[c] = r;
        }
        for (r, &c) in rows.iter().enumerate() {
            assert_eq!(dense[r][r], a[c][0]);
            for comp in 0..3 {
                if let Some(nb) = neighbour(&g, c, comp, true) {
                    if types[nb] == FLUID {
                        assert_eq!(dense[r][row_of[nb]], a[c][comp + 1]);
                        assert_eq!(dense[row_of[nb]][r], a[c][comp + 1]);
                    }
                }
            }
        }
        // Same product as the packed stencil.
        let x: Vec<f64> = (0..g.cells())
            .map(|c| {
                if types[c] == FLUID {
                    (c % 7) as f64
                } else {
                    0.0
                }
            })
            .collect();
        let packed = apply_packed(&g, &a, &x);
        let xr: Vec<f64> = rows.iter().map(|&c| x[c]).collect();
        for (r, &c) in rows.iter().enumerate() {
            let s: f64 = (0..rows.len()).map(|k| dense[r][k] * xr[k]).sum();
            assert!((s - packed[c]).abs() < 1e-12);
        }
    }

    #[test]
    fn preconditioners_are_positive_definite_on_random_residuals() {
        for nz in [1, 6] {
            let g = Grid {
                nx: 10,
                ny: 9,
                nz,
                h: 0.1,
            };
            let (types, _) = setup(&g, 6);
            let a = build_matrix(&g, &types);
            let mut rng = Rng(8);
            for m in Preconditioner::ALL {
                for _ in 0..20 {
                    let r: Vec<f64> = (0..g.cells())
                        .map(|c| {
                            if types[c] == FLUID {
                                rng.f() - 0.5
                            } else {
                                0.0
                            }
                        })
                        .collect();
                    let z = m.apply(&g, &types, &a, &r);
                    assert!(dot(&z, &r) > 0.0, "{m:?}");
                }
            }
        }
    }

    #[test]
    fn pcg_converges_to_the_accurate_solution_with_each_preconditioner() {
        let g = Grid {
            nx: 12,
            ny: 10,
            nz: 8,
            h: 0.1,
        };
        let (types, b) = setup(&g, 10);
        let a = build_matrix(&g, &types);
        let exact = direct_solve(&g, &a, &b);
        let res = apply_packed(&g, &a, &exact);
        assert!(res.iter().zip(&b).all(|(x, y)| (x - y).abs() < 1e-10));
        let mut its = vec![];
        for m in Preconditioner::ALL {
            let r = pcg(&g, &types, &a, &b, m, 1e-10, 1000, None);
            assert!(r.converged, "{m:?}");
            let err = exact
                .iter()
                .zip(&r.p)
                .map(|(x, y)| (x - y).abs())
                .fold(0.0, f64::max)
                / max_abs(&exact);
            assert!(err < 1e-8, "{m:?}: {err}");
            its.push(r.iterations);
        }
        assert!(
            its[3] < its[2] && its[2] < its[0] && its[5] < its[3] && its[4] < its[2],
            "iterations none/jacobi/ip/mic0/mic0_tiled/mg: {its:?}"
        );
    }
}
