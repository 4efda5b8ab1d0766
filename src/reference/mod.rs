//! CPU reference of every simulation stage, in f64. The tests run each GPU stage and
//! compare it with these functions on the same input.
//!
//! This module is the written spec of the conventions the GPU kernels follow:
//! - Grid of `nx x ny x nz` cubic cells of size `h`, domain `[0, n*h]` per axis, y up;
//!   `nz` may be 1 (the smoke mode). Cell index `i + nx*(j + ny*k)`.
//! - MAC faces in three arrays: u `(nx+1)*ny*nz` at `(i, j+1/2, k+1/2)h`, v `nx*(ny+1)*nz`
//!   at `(i+1/2, j, k+1/2)h`, w `nx*ny*(nz+1)` at `(i+1/2, j+1/2, k)h`, each i-fastest.
//! - Cell types AIR 0, FLUID 1, SOLID 2; cells outside the grid are SOLID at rest.
//! - The trilinear stencil clamps the sample point into the face grid, so P2G and G2P use
//!   identical weights and every weight lands on a real face.
//! - The pressure unknown is phi = p dt / rho (m^2/s): A phi = b with b = -h^2 div u, A the
//!   7-point "neighbour count" matrix packed per cell as (diag, +x, +y, +z). At the liquid's
//!   free surface an AIR neighbour adds 1/theta (ghost fluid, `free_surface.rs`), theta the
//!   fraction of the way to the AIR cell's centre where the level set 0.5 - density is 0.

pub mod bodies;
mod cut;
pub mod diffusion;
pub mod flow;
mod free_surface;
mod grid;
mod multigrid;
mod pressure;
pub mod probes;
pub mod smoke;
mod spacing;
pub mod surface;
pub mod tension;
mod transfer;

pub use cut::*;
pub use free_surface::*;
pub use grid::*;
pub use multigrid::*;
pub use pressure::*;
pub use spacing::*;
pub use transfer::*;

// The GPU's cell types (src/gpu/constants.rs), as the bytes the reference stores.
pub const AIR: u8 = crate::gpu::constants::AIR as u8;
pub const FLUID: u8 = crate::gpu::constants::FLUID as u8;
pub const SOLID: u8 = crate::gpu::constants::SOLID as u8;

/// Grid dimensions and cell size.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Grid {
    pub nx: usize,
    pub ny: usize,
    pub nz: usize,
    pub h: f64,
}

impl Grid {
    pub fn n(&self) -> [usize; 3] {
        [self.nx, self.ny, self.nz]
    }

    pub fn cells(&self) -> usize {
        self.nx * self.ny * self.nz
    }

    pub fn cell(&self, i: usize, j: usize, k: usize) -> usize {
        i + self.nx * (j + self.ny * k)
    }

    pub fn coord(&self, c: usize) -> [usize; 3] {
        [
            c % self.nx,
            (c / self.nx) % self.ny,
            c / (self.nx * self.ny),
        ]
    }

    /// Dimensions of the face grid of component `comp`.
    pub fn face_dims(&self, comp: usize) -> [usize; 3] {
        let mut d = self.n();
        d[comp] += 1;
        d
    }

    /// Cell index of signed coordinates, or None outside the grid.
    pub fn cell_at(&self, c: [i64; 3]) -> Option<usize> {
        let n = self.n();
        if (0..3).all(|a| c[a] >= 0 && (c[a] as usize) < n[a]) {
            Some(self.cell(c[0] as usize, c[1] as usize, c[2] as usize))
        } else {
            None
        }
    }

    /// Type of a cell by signed coordinates (outside the grid: SOLID).
    pub fn type_at(&self, types: &[u8], c: [i64; 3]) -> u8 {
        self.cell_at(c).map_or(SOLID, |i| types[i])
    }
}

/// Face velocities (or any per-face quantity) of the three components.
#[derive(Clone, Debug, PartialEq)]
pub struct MacField {
    pub u: Vec<f64>,
    pub v: Vec<f64>,
    pub w: Vec<f64>,
}

impl MacField {
    pub fn zeros(g: &Grid) -> Self {
        let len = |c| g.face_dims(c).iter().product::<usize>();
        Self {
            u: vec![0.0; len(0)],
            v: vec![0.0; len(1)],
            w: vec![0.0; len(2)],
        }
    }

    /// From a buffer of every face, u, v, w back to back (as the GPU holds them).
    pub fn from_faces(g: &Grid, faces: &[f32]) -> Self {
        let len = |c: usize| g.face_dims(c).iter().product::<usize>();
        let (nu, nv) = (len(0), len(1));
        let f = |s: &[f32]| s.iter().map(|x| *x as f64).collect::<Vec<_>>();
        Self {
            u: f(&faces[..nu]),
            v: f(&faces[nu..nu + nv]),
            w: f(&faces[nu + nv..]),
        }
    }

    pub fn comp(&self, c: usize) -> &Vec<f64> {
        [&self.u, &self.v, &self.w][c]
    }

    pub fn comp_mut(&mut self, c: usize) -> &mut Vec<f64> {
        match c {
            0 => &mut self.u,
            1 => &mut self.v,
            _ => &mut self.w,
        }
    }
}

/// Index of face `f` in a face grid of dimensions `d`.
pub fn face_index(f: [usize; 3], d: [usize; 3]) -> usize {
    f[0] + d[0] * (f[1] + d[1] * f[2])
}

/// The two cells on either side of face `f` of component `comp` (negative side first).
pub fn face_cells(comp: usize, f: [usize; 3]) -> [[i64; 3]; 2] {
    let b = [f[0] as i64, f[1] as i64, f[2] as i64];
    let mut a = b;
    a[comp] -= 1;
    [a, b]
}

/// Calls `visit(comp, face coordinates, index)` for every face of every component.
pub fn for_each_face(g: &Grid, mut visit: impl FnMut(usize, [usize; 3], usize)) {
    for comp in 0..3 {
        let d = g.face_dims(comp);
        for k in 0..d[2] {
            for j in 0..d[1] {
                for i in 0..d[0] {
                    visit(comp, [i, j, k], face_index([i, j, k], d));
                }
            }
        }
    }
}

#[cfg(test)]
pub(crate) mod testutil {
    /// Deterministic test input.
    pub struct Rng(pub u64);
    impl Rng {
        pub fn f(&mut self) -> f64 {
            self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
        }
    }
}
