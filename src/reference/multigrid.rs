//! Geometric multigrid V-cycle used as the PCG preconditioner (`mg`), and the tiled
//! (block-Jacobi) MIC(0) preconditioner (`mic0_tiled`), in f64. The GPU versions
//! (src/sim/core/pressure/multigrid.wgsl, src/sim/core/pressure/precond.wgsl) follow these step for step.
//!
//! The V-cycle (in the spirit of McAdams, Sifakis and Teran 2010):
//! - Levels by 2x coarsening of every axis longer than one cell (a smoke slice stays one
//!   cell deep) until the longest axis has at most [`MG_COARSEST`] cells. Odd sizes round up;
//!   the last coarse cell of an odd axis has one child.
//! - A coarse cell is AIR if any child is AIR, else FLUID if any child is FLUID, else SOLID.
//!   AIR wins because the Dirichlet condition is what makes the liquid's system definite
//!   and what fixes its surface pressure; letting a mostly-FLUID cell become FLUID would move
//!   the free surface outwards and give coarse corrections the fine grid cannot use. SOLID
//!   only survives where no child holds liquid, so thin walls do not close coarse channels.
//! - Coarse operators are rediscretised from the coarse types with the same neighbour-count
//!   stencil as the fine one ([`build_matrix`]); they equal H^2 times the Laplacian, so the
//!   restricted residual is scaled by (H/h)^2 = 4.
//! - Prolongation is cell-centred trilinear interpolation (weights 3/4 and 1/4 per coarsened
//!   axis) from the coarse cells that are not SOLID: an AIR node carries 0 (Dirichlet), a
//!   SOLID or out-of-grid node is dropped and the weights renormalised (Neumann, so a
//!   constant is interpolated exactly next to walls). Treating walls as zeros instead made
//!   the iterations grow with the grid (9, 12, 16 from 16^3 to 64^3 against 6, 7, 7).
//!   Restriction is the transpose times 4 / 2^k (k coarsened axes): an average, scaled.
//! - Smoothing is red-black Gauss-Seidel (colour (i+j+k) mod 2): [`MG_SWEEPS`] red-black
//!   sweeps over all cells, then [`MG_BOUNDARY_SWEEPS`] over the boundary cells (FLUID cells
//!   next to AIR, or whose coarse parent is not FLUID: the coarse grid cannot correct them).
//!   Without AIR (the smoke's systems) every FLUID cell's coarse parent is FLUID, so no cell
//!   is a boundary cell and the GPU does not run these sweeps at all (`Multigrid::set_air`).
//!   The post-smoother runs the same updates in the reverse order, which makes the cycle a
//!   symmetric operator; every colour update is an exact block solve, so the cycle is
//!   positive definite on the FLUID cells and CG stays valid.
//! - The coarsest level (at most 8^3 cells) gets [`MG_COARSE_SWEEPS`] symmetric red-black
//!   pairs; when it has no AIR cell the system is singular (pure Neumann, e.g. smoke) and the
//!   mean over its FLUID cells is removed from the right-hand side and from the result
//!   (a symmetric projection), which keeps the constant null space out of the cycle.
//! - The cycle is a fixed linear operator (no convergence test inside it).

use super::pressure::neighbour;
use super::{build_matrix, Grid, AIR, FLUID};

/// The coarsest level has at most this many cells along its longest axis.
pub const MG_COARSEST: usize = crate::gpu::constants::MG_COARSEST as usize;
/// Red-black Gauss-Seidel sweeps before (and, mirrored, after) the coarse correction.
pub const MG_SWEEPS: usize = crate::gpu::constants::MG_SWEEPS as usize;
/// Extra red-black sweeps over the boundary cells only, after the full sweeps.
pub const MG_BOUNDARY_SWEEPS: usize = crate::gpu::constants::MG_BOUNDARY_SWEEPS as usize;
/// Symmetric red-black sweep pairs on the coarsest level.
pub const MG_COARSE_SWEEPS: usize = crate::gpu::constants::MG_COARSE_SWEEPS as usize;

/// Tile of the tiled MIC(0): 8x8x8 cells in 3D, 16x16 on a one-cell-deep slice (the GPU's
/// constants).
pub fn mic_tile(n: [usize; 3]) -> [usize; 3] {
    use crate::gpu::constants::{MIC_TILE_3D, MIC_TILE_SLICE};
    if n[2] == 1 {
        [MIC_TILE_SLICE as usize, MIC_TILE_SLICE as usize, 1]
    } else {
        [MIC_TILE_3D as usize; 3]
    }
}

/// Cell dimensions of every multigrid level, finest first.
pub fn mg_level_dims(n: [usize; 3]) -> Vec<[usize; 3]> {
    let mut levels = vec![n];
    loop {
        let d = *levels.last().unwrap_or(&n);
        if d.iter().copied().max().unwrap_or(1) <= MG_COARSEST {
            return levels;
        }
        levels.push(d.map(|x| if x > 1 { x.div_ceil(2) } else { 1 }));
    }
}

/// Coarse cell types from fine ones (the rule is in the module documentation).
pub fn coarsen_types(fine: [usize; 3], types: &[u8], coarse: [usize; 3]) -> Vec<u8> {
    let gf = grid(fine);
    let gc = grid(coarse);
    let ratio = ratios(fine, coarse);
    (0..gc.cells())
        .map(|c| {
            let x = gc.coord(c);
            let (mut air, mut fluid) = (false, false);
            for dz in 0..ratio[2] {
                for dy in 0..ratio[1] {
                    for dx in 0..ratio[0] {
                        let f = [
                            x[0] * ratio[0] + dx,
                            x[1] * ratio[1] + dy,
                            x[2] * ratio[2] + dz,
                        ];
                        if (0..3).all(|a| f[a] < fine[a]) {
                            let t = types[gf.cell(f[0], f[1], f[2])];
                            air |= t == AIR;
                            fluid |= t == FLUID;
                        }
                    }
                }
            }
            if air {
                AIR
            } else if fluid {
                FLUID
            } else {
                super::SOLID
            }
        })
        .collect()
}

fn grid(n: [usize; 3]) -> Grid {
    Grid {
        nx: n[0],
        ny: n[1],
        nz: n[2],
        h: 1.0,
    }
}

fn ratios(fine: [usize; 3], coarse: [usize; 3]) -> [usize; 3] {
    [0, 1, 2].map(|a| if coarse[a] < fine[a] { 2 } else { 1 })
}

/// Sum of the off-diagonal terms of row `c` times `x`.
fn offdiag(g: &Grid, a: &[[f64; 4]], x: &[f64], c: usize) -> f64 {
    let p = g.coord(c);
    let n = g.n();
    let mut s = 0.0;
    for comp in 0..3 {
        if p[comp] + 1 < n[comp] {
            let mut q = p;
            q[comp] += 1;
            s += a[c][comp + 1] * x[g.cell(q[0], q[1], q[2])];
        }
        if p[comp] > 0 {
            let mut q = p;
            q[comp] -= 1;
            let m = g.cell(q[0], q[1], q[2]);
            s += a[m][comp + 1] * x[m];
        }
    }
    s
}

fn colour(g: &Grid, c: usize) -> usize {
    let p = g.coord(c);
    (p[0] + p[1] + p[2]) % 2
}

/// One level of the hierarchy.
#[derive(Clone, Debug)]
pub struct MgLevel {
    pub n: [usize; 3],
    pub types: Vec<u8>,
    pub a: Vec<[f64; 4]>,
    /// FLUID cells that get the extra boundary sweeps (empty on the coarsest level).
    pub boundary: Vec<bool>,
}

/// The multigrid hierarchy of one pressure system.
#[derive(Clone, Debug)]
pub struct Multigrid {
    pub levels: Vec<MgLevel>,
}

/// What one V-cycle leaves on each level (the viewer's debug views show the GPU's).
#[derive(Clone, Debug, Default)]
pub struct VcycleTrace {
    /// Residual after pre-smoothing, per level (the right-hand side on the coarsest).
    pub residual: Vec<Vec<f64>>,
    /// The level's correction (its solution) at the end of the cycle.
    pub correction: Vec<Vec<f64>>,
}

impl Multigrid {
    /// Builds the hierarchy for the fine cell types and the fine packed matrix.
    pub fn new(g: &Grid, types: &[u8], a: &[[f64; 4]]) -> Self {
        let dims = mg_level_dims(g.n());
        let mut levels = vec![MgLevel {
            n: g.n(),
            types: types.to_vec(),
            a: a.to_vec(),
            boundary: vec![],
        }];
        for l in 1..dims.len() {
            let t = coarsen_types(dims[l - 1], &levels[l - 1].types, dims[l]);
            let a = build_matrix(&grid(dims[l]), &t);
            levels.push(MgLevel {
                n: dims[l],
                types: t,
                a,
                boundary: vec![],
            });
        }
        for l in 0..levels.len() - 1 {
            levels[l].boundary = boundary_cells(&levels[l], &levels[l + 1]);
        }
        Self { levels }
    }

    /// z = M^-1 r: one V-cycle from a zero guess.
    pub fn apply(&self, r: &[f64]) -> Vec<f64> {
        self.vcycle(0, r, &mut VcycleTrace::default())
    }

    /// The same, keeping every level's residual and correction.
    pub fn apply_traced(&self, r: &[f64]) -> (Vec<f64>, VcycleTrace) {
        let mut t = VcycleTrace {
            residual: vec![vec![]; self.levels.len()],
            correction: vec![vec![]; self.levels.len()],
        };
        let z = self.vcycle(0, r, &mut t);
        (z, t)
    }

    fn vcycle(&self, l: usize, b: &[f64], trace: &mut VcycleTrace) -> Vec<f64> {
        let lv = &self.levels[l];
        let g = grid(lv.n);
        if l + 1 == self.levels.len() {
            let x = coarse_solve(&g, lv, b);
            if !trace.residual.is_empty() {
                trace.residual[l] = b.to_vec();
                trace.correction[l] = x.clone();
            }
            return x;
        }
        let mut x = vec![0.0; g.cells()];
        let all = vec![true; g.cells()];
        for _ in 0..MG_SWEEPS {
            for col in [0, 1] {
                gs(&g, &lv.a, b, &mut x, col, &all);
            }
        }
        for _ in 0..MG_BOUNDARY_SWEEPS {
            for col in [0, 1] {
                gs(&g, &lv.a, b, &mut x, col, &lv.boundary);
            }
        }
        let ax = super::apply_packed(&g, &lv.a, &x);
        let res: Vec<f64> = (0..g.cells())
            .map(|c| if lv.a[c][0] != 0.0 { b[c] - ax[c] } else { 0.0 })
            .collect();
        let next = &self.levels[l + 1];
        let bc = restrict(lv, &res, next);
        let xc = self.vcycle(l + 1, &bc, trace);
        prolong_add(lv, &mut x, next, &xc);
        for _ in 0..MG_BOUNDARY_SWEEPS {
            for col in [1, 0] {
                gs(&g, &lv.a, b, &mut x, col, &lv.boundary);
            }
        }
        for _ in 0..MG_SWEEPS {
            for col in [1, 0] {
                gs(&g, &lv.a, b, &mut x, col, &all);
            }
        }
        if !trace.residual.is_empty() {
            trace.residual[l] = res;
            trace.correction[l] = x.clone();
        }
        x
    }
}

/// FLUID cells next to AIR (6-neighbours) or whose coarse parent is not FLUID.
fn boundary_cells(fine: &MgLevel, coarse: &MgLevel) -> Vec<bool> {
    let g = grid(fine.n);
    let gc = grid(coarse.n);
    let ratio = ratios(fine.n, coarse.n);
    (0..g.cells())
        .map(|c| {
            if fine.types[c] != FLUID {
                return false;
            }
            let p = g.coord(c);
            let parent = gc.cell(p[0] / ratio[0], p[1] / ratio[1], p[2] / ratio[2]);
            if coarse.types[parent] != FLUID {
                return true;
            }
            let q = p.map(|v| v as i64);
            (0..3).any(|comp| {
                [-1i64, 1].iter().any(|s| {
                    let mut y = q;
                    y[comp] += s;
                    g.cell_at(y).is_some_and(|m| fine.types[m] == AIR)
                })
            })
        })
        .collect()
}

/// Gauss-Seidel update of the cells of one colour that are in `mask`.
fn gs(g: &Grid, a: &[[f64; 4]], b: &[f64], x: &mut [f64], col: usize, mask: &[bool]) {
    for c in 0..g.cells() {
        if colour(g, c) != col || !mask[c] {
            continue;
        }
        x[c] = if a[c][0] != 0.0 {
            (b[c] - offdiag(g, a, x, c)) / a[c][0]
        } else {
            0.0
        };
    }
}

/// Whether a level's system is singular: no AIR cell gives a Dirichlet condition.
fn is_singular(lv: &MgLevel) -> bool {
    !lv.types.contains(&AIR)
}

/// Removes the mean over the active cells (those with a non-zero diagonal).
fn remove_mean(a: &[[f64; 4]], v: &mut [f64]) {
    let (mut s, mut n) = (0.0, 0usize);
    for (c, row) in a.iter().enumerate() {
        if row[0] != 0.0 {
            s += v[c];
            n += 1;
        }
    }
    if n == 0 {
        return;
    }
    let mean = s / n as f64;
    for (c, row) in a.iter().enumerate() {
        if row[0] != 0.0 {
            v[c] -= mean;
        }
    }
}

fn coarse_solve(g: &Grid, lv: &MgLevel, b: &[f64]) -> Vec<f64> {
    let singular = is_singular(lv);
    let mut b = b.to_vec();
    if singular {
        remove_mean(&lv.a, &mut b);
    }
    let mut x = vec![0.0; g.cells()];
    let all = vec![true; g.cells()];
    for _ in 0..MG_COARSE_SWEEPS {
        for col in [0, 1, 1, 0] {
            gs(g, &lv.a, &b, &mut x, col, &all);
        }
    }
    if singular {
        remove_mean(&lv.a, &mut x);
    }
    x
}

/// Trilinear prolongation weights of fine index `i` along one axis: (coarse index, weight)
/// pairs, the parent first.
fn prolong_taps(i: usize, ratio: usize, coarse_len: usize) -> [(usize, f64); 2] {
    if ratio == 1 {
        return [(i, 1.0), (usize::MAX, 0.0)];
    }
    let parent = i / 2;
    let other = if i % 2 == 1 {
        parent + 1
    } else {
        parent.wrapping_sub(1)
    };
    if other < coarse_len {
        [(parent, 0.75), (other, 0.25)]
    } else {
        [(parent, 0.75), (usize::MAX, 0.0)]
    }
}

/// The coarse nodes a fine cell interpolates from and their weights: trilinear taps
/// (3/4 parent, 1/4 neighbour per coarsened axis) over the coarse cells that are not SOLID
/// and inside the grid, renormalised to sum to one. AIR nodes keep their weight with the
/// value 0 (Dirichlet); SOLID and out-of-grid nodes are dropped (Neumann: the weight goes
/// to the others, so a constant is interpolated exactly next to walls).
fn prolong_stencil(
    p: [usize; 3],
    ratio: [usize; 3],
    coarse: [usize; 3],
    ctypes: &[u8],
) -> Vec<(usize, f64)> {
    let gc = grid(coarse);
    let t = [0, 1, 2].map(|ax| prolong_taps(p[ax], ratio[ax], coarse[ax]));
    let mut out = Vec::with_capacity(8);
    for tz in t[2] {
        for ty in t[1] {
            for tx in t[0] {
                let w = tx.1 * ty.1 * tz.1;
                if w == 0.0 {
                    continue;
                }
                let c = gc.cell(tx.0, ty.0, tz.0);
                if ctypes[c] != super::SOLID {
                    out.push((c, w));
                }
            }
        }
    }
    let sum: f64 = out.iter().map(|(_, w)| w).sum();
    if sum > 0.0 {
        for (_, w) in &mut out {
            *w /= sum;
        }
    }
    out
}

/// x_fine += P x_coarse on the active fine cells.
fn prolong_add(fine: &MgLevel, x: &mut [f64], coarse: &MgLevel, xc: &[f64]) {
    let gf = grid(fine.n);
    let ratio = ratios(fine.n, coarse.n);
    for c in 0..gf.cells() {
        if fine.a[c][0] == 0.0 {
            continue;
        }
        let st = prolong_stencil(gf.coord(c), ratio, coarse.n, &coarse.types);
        x[c] += st.iter().map(|&(m, w)| w * xc[m]).sum::<f64>();
    }
}

/// b_coarse = 4 / 2^k P^T r on the active coarse cells.
fn restrict(fine: &MgLevel, r: &[f64], coarse: &MgLevel) -> Vec<f64> {
    let gf = grid(fine.n);
    let gc = grid(coarse.n);
    let ratio = ratios(fine.n, coarse.n);
    let k = ratio.iter().filter(|&&q| q == 2).count() as i32;
    let scale = 4.0 / 2f64.powi(k);
    let mut b = vec![0.0; gc.cells()];
    // Scatter each fine residual to the coarse cells its prolongation reads: P^T exactly.
    for c in 0..gf.cells() {
        if r[c] == 0.0 {
            continue;
        }
        for (m, w) in prolong_stencil(gf.coord(c), ratio, coarse.n, &coarse.types) {
            b[m] += scale * w * r[c];
        }
    }
    for (c, row) in coarse.a.iter().enumerate() {
        if row[0] == 0.0 {
            b[c] = 0.0;
        }
    }
    b
}

/// Tile index of a cell and whether two cells share a tile.
fn same_tile(g: &Grid, tile: [usize; 3], c: usize, m: usize) -> bool {
    let (p, q) = (g.coord(c), g.coord(m));
    (0..3).all(|a| p[a] / tile[a] == q[a] / tile[a])
}

/// Fraction of the couplings a tile drops that is taken off its diagonal. Block Jacobi
/// leaves a tile's rows summing to its dropped couplings; taking them off the diagonal in
/// full would make interior tiles singular (pure Neumann), half of it keeps every block
/// definite and brings the iterations from 59 to 45 on the reference pool at 24^3 (ip 70,
/// exact MIC(0) 24). 16x16x8 tiles would give 37, with 16x fewer workgroups.
pub use crate::gpu::constants::MIC_TILE_THETA;

/// MIC(0) inverse diagonal (tau 0.97, sigma 0.25) of the block-diagonal part of A whose
/// blocks are the tiles of [`mic_tile`]: couplings between tiles are dropped, and
/// [`MIC_TILE_THETA`] of them taken off the diagonal.
pub fn mic0_tiled_factor(g: &Grid, a: &[[f64; 4]]) -> Vec<f64> {
    mic0_factor_blocks(g, a, mic_tile(g.n()))
}

/// MIC(0) with couplings across `tile` boundaries dropped (a tile as large as the grid is
/// exact MIC(0): nothing is dropped).
pub fn mic0_factor_blocks(g: &Grid, a: &[[f64; 4]], tile: [usize; 3]) -> Vec<f64> {
    use super::{MIC_SIGMA, MIC_TAU};
    let mut pr = vec![0.0; g.cells()];
    for c in 0..g.cells() {
        if a[c][0] == 0.0 {
            continue;
        }
        // Couplings to other tiles, partly moved onto the diagonal.
        let mut dropped = 0.0;
        for comp in 0..3 {
            if let Some(m) = neighbour(g, c, comp, false).filter(|&m| !same_tile(g, tile, c, m)) {
                dropped -= a[m][comp + 1];
            }
            if neighbour(g, c, comp, true).is_some_and(|u| !same_tile(g, tile, c, u)) {
                dropped -= a[c][comp + 1];
            }
        }
        let mut e = a[c][0] - MIC_TILE_THETA * dropped;
        for comp in 0..3 {
            let Some(m) = neighbour(g, c, comp, false).filter(|&m| same_tile(g, tile, c, m)) else {
                continue;
            };
            let rm = a[m];
            let off = rm[comp + 1] * pr[m];
            // Fill-in of m's other upper couplings that stay inside the tile.
            let others: f64 = (0..3)
                .filter(|&k| k != comp)
                .filter(|&k| neighbour(g, m, k, true).is_some_and(|u| same_tile(g, tile, m, u)))
                .map(|k| rm[k + 1])
                .sum();
            e -= off * off + MIC_TAU * rm[comp + 1] * others * pr[m] * pr[m];
        }
        if e < MIC_SIGMA * a[c][0] {
            e = a[c][0];
        }
        pr[c] = 1.0 / e.sqrt();
    }
    pr
}

/// z = (L L^T)^-1 r with the tiled factor: forward and backward substitution per tile.
pub fn mic0_blocks_apply(
    g: &Grid,
    a: &[[f64; 4]],
    pr: &[f64],
    tile: [usize; 3],
    r: &[f64],
) -> Vec<f64> {
    let n = g.cells();
    let mut q = vec![0.0; n];
    for c in 0..n {
        if pr[c] == 0.0 {
            continue;
        }
        let mut s = r[c];
        for comp in 0..3 {
            if let Some(m) = neighbour(g, c, comp, false).filter(|&m| same_tile(g, tile, c, m)) {
                s -= a[m][comp + 1] * pr[m] * q[m];
            }
        }
        q[c] = s * pr[c];
    }
    let mut z = vec![0.0; n];
    for c in (0..n).rev() {
        if pr[c] == 0.0 {
            continue;
        }
        let mut s = q[c];
        for comp in 0..3 {
            if let Some(u) = neighbour(g, c, comp, true).filter(|&u| same_tile(g, tile, c, u)) {
                s -= a[c][comp + 1] * pr[c] * z[u];
            }
        }
        z[c] = s * pr[c];
    }
    z
}

#[cfg(test)]
mod tests {
    use super::super::testutil::Rng;
    use super::super::{pcg, Preconditioner, SOLID};
    use super::*;

    #[test]
    fn level_dims_cover_odd_thin_and_slice_grids() {
        assert_eq!(
            mg_level_dims([32, 32, 16]),
            vec![[32, 32, 16], [16, 16, 8], [8, 8, 4]]
        );
        assert_eq!(mg_level_dims([8, 8, 8]), vec![[8, 8, 8]]);
        assert_eq!(
            mg_level_dims([37, 9, 3]),
            vec![[37, 9, 3], [19, 5, 2], [10, 3, 1], [5, 2, 1]]
        );
        assert_eq!(
            mg_level_dims([64, 40, 1]),
            vec![[64, 40, 1], [32, 20, 1], [16, 10, 1], [8, 5, 1]]
        );
    }

    #[test]
    fn coarse_types_keep_air_then_fluid() {
        let fine = [3, 2, 1];
        // Pairs along x: (FLUID, AIR) -> AIR, (SOLID, FLUID) -> FLUID, lone SOLID -> SOLID.
        let t = vec![FLUID, AIR, SOLID, SOLID, FLUID, SOLID];
        let c = coarsen_types(fine, &t, [2, 1, 1]);
        assert_eq!(c, vec![AIR, SOLID]);
        let t = vec![FLUID, FLUID, SOLID, SOLID, SOLID, SOLID];
        assert_eq!(coarsen_types(fine, &t, [2, 1, 1]), vec![FLUID, SOLID]);
    }

    /// A liquid-like system: a pool with a bump, a solid block, air above.
    fn pool(n: [usize; 3], seed: u64) -> (Grid, Vec<u8>, Vec<[f64; 4]>, Vec<f64>) {
        let g = grid(n);
        let mut rng = Rng(seed);
        let types: Vec<u8> = (0..g.cells())
            .map(|c| {
                let [i, j, _] = g.coord(c);
                let depth = n[1] as f64 * (0.5 + 0.2 * (i as f64 / n[0] as f64));
                if i >= n[0] * 2 / 3 && j < n[1] / 4 {
                    SOLID
                } else if (j as f64) < depth {
                    FLUID
                } else {
                    AIR
                }
            })
            .collect();
        let a = build_matrix(&g, &types);
        let b = (0..g.cells())
            .map(|c| {
                if types[c] == FLUID {
                    rng.f() - 0.5
                } else {
                    0.0
                }
            })
            .collect();
        (g, types, a, b)
    }

    #[test]
    fn vcycle_is_symmetric_and_positive_definite() {
        for n in [[12, 10, 7], [20, 17, 1], [9, 9, 9]] {
            let (g, types, a, _) = pool(n, 3);
            let mg = Multigrid::new(&g, &types, &a);
            let mut rng = Rng(5);
            let rand = |rng: &mut Rng| -> Vec<f64> {
                (0..g.cells())
                    .map(|c| {
                        if types[c] == FLUID {
                            rng.f() - 0.5
                        } else {
                            0.0
                        }
                    })
                    .collect()
            };
            for _ in 0..5 {
                let (x, y) = (rand(&mut rng), rand(&mut rng));
                let (mx, my) = (mg.apply(&x), mg.apply(&y));
                let dot = |p: &[f64], q: &[f64]| p.iter().zip(q).map(|(a, b)| a * b).sum::<f64>();
                let (ymx, xmy) = (dot(&y, &mx), dot(&x, &my));
                assert!(
                    (ymx - xmy).abs() < 1e-10 * ymx.abs().max(1.0),
                    "{n:?}: {ymx} {xmy}"
                );
                assert!(dot(&x, &mx) > 0.0);
            }
        }
    }

    #[test]
    fn mg_pcg_converges_in_few_iterations_that_barely_grow() {
        let mut its = vec![];
        for n in [16, 32, 64] {
            let (g, types, a, b) = pool([n, n, n], 7);
            let r = pcg(
                &g,
                &types,
                &a,
                &b,
                Preconditioner::Multigrid,
                1e-6,
                200,
                None,
            );
            assert!(r.converged);
            let mic = pcg(&g, &types, &a, &b, Preconditioner::Mic0, 1e-6, 500, None);
            println!("{n}^3: mg {} mic0 {}", r.iterations, mic.iterations);
            assert!(r.iterations <= 10 && r.iterations <= mic.iterations);
            its.push(r.iterations);
        }
        assert!(its[2] <= its[0] + 2, "{its:?}");
    }

    #[test]
    fn mg_handles_a_singular_slice() {
        // Pure Neumann (no AIR), as in smoke: b with zero mean.
        let n = [40, 24, 1];
        let g = grid(n);
        let types: Vec<u8> = (0..g.cells())
            .map(|c| {
                let [i, j, _] = g.coord(c);
                if (15..18).contains(&i) && (4..16).contains(&j) {
                    SOLID
                } else {
                    FLUID
                }
            })
            .collect();
        let a = build_matrix(&g, &types);
        let mut rng = Rng(3);
        let mut b: Vec<f64> = (0..g.cells())
            .map(|c| {
                if types[c] == FLUID {
                    rng.f() - 0.5
                } else {
                    0.0
                }
            })
            .collect();
        remove_mean(&a, &mut b);
        let r = pcg(
            &g,
            &types,
            &a,
            &b,
            Preconditioner::Multigrid,
            1e-6,
            200,
            None,
        );
        assert!(r.converged && r.iterations <= 15, "{}", r.iterations);
    }

    #[test]
    fn tiled_mic0_lies_between_ip_and_mic0() {
        let (g, types, a, b) = pool([24, 24, 24], 9);
        let it = |m| pcg(&g, &types, &a, &b, m, 1e-6, 500, None).iterations;
        let (ip, tiled, mic) = (
            it(Preconditioner::IncompletePoisson),
            it(Preconditioner::Mic0Tiled),
            it(Preconditioner::Mic0),
        );
        println!("ip {ip} mic0_tiled {tiled} mic0 {mic}");
        assert!(
            mic <= tiled && tiled < ip,
            "ip {ip} mic0_tiled {tiled} mic0 {mic}"
        );
        // A tile as large as the grid is exact MIC(0).
        let whole = mic0_factor_blocks(&g, &a, g.n());
        assert_eq!(whole, super::super::mic0_factor(&g, &a));
    }
}
