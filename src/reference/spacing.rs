//! Particle spacing (the GPU's shaders/spacing.wgsl): particles closer than `radius` push
//! each other apart by `strength` times the overlap, summed over the particles of the 27
//! cells around each particle's own; a cell holding more than `slots` particles is skipped
//! as a neighbour. The move is clamped to the domain and undone if it ends in a SOLID cell.

use super::{cell_of, Grid};

pub fn push_apart(
    g: &Grid,
    solid: &[bool],
    pos: &[[f64; 3]],
    radius: f64,
    strength: f64,
    slots: usize,
) -> Vec<[f64; 3]> {
    let mut bins: Vec<Vec<usize>> = vec![Vec::new(); g.cells()];
    for (p, x) in pos.iter().enumerate() {
        bins[cell_of(g, *x)].push(p);
    }
    let n = g.n().map(|v| v as i64);
    let m = 0.01 * g.h;
    pos.iter()
        .enumerate()
        .map(|(p, x0)| {
            let home = g.coord(cell_of(g, *x0));
            let mut shift = [0.0f64; 3];
            for k in 0..27i64 {
                let c = [
                    home[0] as i64 + k % 3 - 1,
                    home[1] as i64 + (k / 3) % 3 - 1,
                    home[2] as i64 + k / 9 - 1,
                ];
                if (0..3).any(|a| c[a] < 0 || c[a] >= n[a]) {
                    continue;
                }
                let bin = &bins[g.cell(c[0] as usize, c[1] as usize, c[2] as usize)];
                if bin.len() > slots {
                    continue;
                }
                for &q in bin {
                    if q == p {
                        continue;
                    }
                    let d = [0, 1, 2].map(|a| x0[a] - pos[q][a]);
                    let dist = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt();
                    if dist >= radius || dist < 1e-6 * g.h {
                        continue;
                    }
                    for a in 0..3 {
                        shift[a] += strength * (radius - dist) / dist * d[a];
                    }
                }
            }
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
    let mut bins: Vec<Vec<usize>> = vec![Vec::new(); g.cells()];
    for (p, x) in pos.iter().enumerate() {
        bins[cell_of(g, *x)].push(p);
    }
    let n = g.n().map(|v| v as i64);
    let mut closest = f64::INFINITY;
    let mut count = 0;
    for (p, x0) in pos.iter().enumerate() {
        let home = g.coord(cell_of(g, *x0));
        for k in 0..27i64 {
            let c = [
                home[0] as i64 + k % 3 - 1,
                home[1] as i64 + (k / 3) % 3 - 1,
                home[2] as i64 + k / 9 - 1,
            ];
            if (0..3).any(|a| c[a] < 0 || c[a] >= n[a]) {
                continue;
            }
            for &q in &bins[g.cell(c[0] as usize, c[1] as usize, c[2] as usize)] {
                if q <= p {
                    continue;
                }
                let d = [0, 1, 2].map(|a| x0[a] - pos[q][a]);
                let dist = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt();
                if dist < within {
                    count += 1;
                    closest = closest.min(dist);
                }
            }
        }
    }
    (closest, count)
}
