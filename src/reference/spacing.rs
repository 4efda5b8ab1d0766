//! Particle spacing (the GPU's src/sim/liquid/spacing.wgsl): particles closer than `radius` push
//! each other apart by `strength` times the overlap, summed over the particles of the 27
//! cells around each particle's own. Only particles inside the liquid move (a FLUID cell with no AIR
//! neighbour; outside the grid counts as wall). The move is clamped to just under a cell per
//! axis (the GPU's 21-bit sums), then to the domain, and undone if it ends in a SOLID cell.

use super::{cell_of, Grid, AIR, FLUID};

/// The particles of each cell, in index order.
fn bin(g: &Grid, pos: &[[f64; 3]]) -> Vec<Vec<usize>> {
    let mut bins: Vec<Vec<usize>> = vec![Vec::new(); g.cells()];
    for (p, x) in pos.iter().enumerate() {
        bins[cell_of(g, *x)].push(p);
    }
    bins
}

/// The cells of the 3 x 3 x 3 block around the cell holding `x` that lie in the grid.
fn neighbour_cells(g: &Grid, x: [f64; 3]) -> impl Iterator<Item = usize> + '_ {
    let home = g.coord(cell_of(g, x));
    let n = g.n().map(|v| v as i64);
    (0..27i64).filter_map(move |k| {
        let c = [
            home[0] as i64 + k % 3 - 1,
            home[1] as i64 + (k / 3) % 3 - 1,
            home[2] as i64 + k / 9 - 1,
        ];
        (0..3)
            .all(|a| c[a] >= 0 && c[a] < n[a])
            .then(|| g.cell(c[0] as usize, c[1] as usize, c[2] as usize))
    })
}

fn distance(a: [f64; 3], b: [f64; 3]) -> ([f64; 3], f64) {
    let d = [0, 1, 2].map(|i| a[i] - b[i]);
    (d, (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt())
}

/// Whether a particle in cell `c` moves: `c` FLUID and none of its six neighbours AIR.
fn interior(g: &Grid, types: &[u8], c: usize) -> bool {
    if types[c] != FLUID {
        return false;
    }
    let x = g.coord(c);
    let n = g.n();
    (0..3).all(|a| {
        [-1i64, 1].iter().all(|&s| {
            let mut y = x.map(|v| v as i64);
            y[a] += s;
            let outside = y[a] < 0 || y[a] >= n[a] as i64;
            outside || types[g.cell(y[0] as usize, y[1] as usize, y[2] as usize)] != AIR
        })
    })
}

/// `types`: the cells' SOLID / FLUID / AIR marking of the substep.
pub fn push_apart(
    g: &Grid,
    solid: &[bool],
    types: &[u8],
    pos: &[[f64; 3]],
    radius: f64,
    strength: f64,
) -> Vec<[f64; 3]> {
    let bins = bin(g, pos);
    let n = g.n();
    let m = 0.01 * g.h;
    pos.iter()
        .enumerate()
        .map(|(p, x0)| {
            if !interior(g, types, cell_of(g, *x0)) {
                return *x0;
            }
            let mut shift = [0.0f64; 3];
            for c in neighbour_cells(g, *x0) {
                for &q in bins[c].iter().filter(|&&q| q != p) {
                    let (d, dist) = distance(*x0, pos[q]);
                    if dist >= radius || dist < 1e-6 * g.h {
                        continue;
                    }
                    for a in 0..3 {
                        shift[a] += strength * (radius - dist) / dist * d[a];
                    }
                }
            }
            // The GPU keeps each sum in 21 bits of h / 2^20: just under a cell per axis.
            let unit = g.h / crate::gpu::constants::SPACING_SHIFT_SCALE as f64;
            let shift = shift.map(|s| s.clamp(-1048576.0 * unit, 1048575.0 * unit));
            let x = [0, 1, 2].map(|a| (x0[a] + shift[a]).clamp(m, n[a] as f64 * g.h - m));
            if solid[cell_of(g, x)] {
                *x0
            } else {
                x
            }
        })
        .collect()
}

/// The smallest distance between any two particles closer than `within` (brute force over
/// pairs in neighbouring cells), and how many pairs are closer than `within`.
pub fn close_pairs(g: &Grid, pos: &[[f64; 3]], within: f64) -> (f64, usize) {
    let bins = bin(g, pos);
    let mut closest = f64::INFINITY;
    let mut count = 0;
    for (p, x0) in pos.iter().enumerate() {
        for c in neighbour_cells(g, *x0) {
            for &q in bins[c].iter().filter(|&&q| q > p) {
                let dist = distance(*x0, pos[q]).1;
                if dist < within {
                    count += 1;
                    closest = closest.min(dist);
                }
            }
        }
    }
    (closest, count)
}
