//! Seeding: the solid cells and their velocities, and the particles of the fluid shapes,
//! derived from a scene deterministically on every platform.

use super::fractions::StaticSolids;
use super::*;

/// A small deterministic generator (SplitMix64) so seeding is identical on every platform.
#[derive(Clone, Debug)]
pub struct SplitMix64(pub u64);

impl SplitMix64 {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Initial state derived from a scene: solid cells, their velocities and the particles.
#[derive(Clone, Debug)]
pub struct InitialState {
    /// Per cell 0, `SOLID_CLOSED` or `SOLID_PARTIAL` (see [`Scene::static_solids`]).
    pub solid: Vec<u32>,
    /// Velocity of the solid covering each cell (xyz, w unused).
    pub solid_velocity: Vec<[f32; 4]>,
    /// The faces' open fractions where the solids cut them ([`Scene::static_solids`]).
    pub open: Option<Vec<f32>>,
    /// Particle positions (xyz, w unused) in metres.
    pub positions: Vec<[f32; 4]>,
    /// Particle velocities (xyz, w unused) in m/s.
    pub velocities: Vec<[f32; 4]>,
}

impl Scene {
    fn cell_centre(&self, i: u32, j: u32, k: u32) -> [f64; 3] {
        let h = self.h();
        let hz = self.domain.2 / self.resolution.2 as f64;
        [
            (i as f64 + 0.5) * h,
            (j as f64 + 0.5) * h,
            (k as f64 + 0.5) * hz,
        ]
    }

    /// Per solid, the cells of this grid a mesh solid holds (computed once per mesh and
    /// grid, on all cores; None for the other shapes).
    pub(super) fn mesh_masks(&self) -> Vec<Option<std::sync::Arc<mesh::CellMask>>> {
        let h = self.h();
        let hz = self.domain.2 / self.resolution.2 as f64;
        self.solids
            .iter()
            .map(|s| s.solid_mesh().map(|m| m.cell_mask(self.dims(), [h, h, hz])))
            .collect()
    }

    /// Whether solid `s` holds cell (i, j, k) of centre `p`: a mesh when its signed distance
    /// at the cell centre is negative (in a slice, the centre at mid-depth), the other shapes
    /// when they contain the centre (in a slice, in x and y).
    fn solid_holds(
        &self,
        s: &Shape,
        mask: Option<&mesh::CellMask>,
        [i, j, k]: [u32; 3],
        p: [f64; 3],
    ) -> bool {
        match mask {
            Some(m) => m.get(i, j, k),
            None if self.kind == SceneKind::Smoke => s.contains_xy([p[0], p[1]]),
            None => s.contains(p),
        }
    }

    /// The static solids' cell flags and velocities: 0 where no solid holds a cell, else
    /// `SOLID_CLOSED` or, where the solids cut the cell's faces, `SOLID_PARTIAL`
    /// ([`Scene::static_solids`], which also gives the faces' open fractions).
    pub fn solid_cells(&self) -> (Vec<u32>, Vec<[f32; 4]>) {
        let s = self.static_solids();
        (s.flags, s.velocity)
    }

    /// Voxelises the solids by cell centre: 1 where a solid shape holds the centre.
    pub(super) fn centre_cells(&self) -> (Vec<u32>, Vec<[f32; 4]>) {
        let [nx, ny, nz] = self.dims();
        let n = self.cell_count() as usize;
        let mut solid = vec![0u32; n];
        let mut vel = vec![[0f32; 4]; n];
        let masks = self.mesh_masks();
        for k in 0..nz {
            for j in 0..ny {
                for i in 0..nx {
                    let c = (i + nx * (j + ny * k)) as usize;
                    let p = self.cell_centre(i, j, k);
                    let inside = |(s, m): &(&Shape, &Option<std::sync::Arc<mesh::CellMask>>)| {
                        self.solid_holds(s, m.as_deref(), [i, j, k], p)
                    };
                    if let Some((s, _)) = self.solids.iter().zip(&masks).rev().find(inside) {
                        solid[c] = 1;
                        let v = s.velocity();
                        vel[c] = [v[0] as f32, v[1] as f32, v[2] as f32, 0.0];
                    }
                }
            }
        }
        (solid, vel)
    }

    /// SOLID cells, counted without allocating the grid (see `solid_cells`).
    pub fn solid_cell_count(&self) -> u64 {
        let [nx, ny, nz] = self.dims();
        let masks = self.mesh_masks();
        let mut n = 0u64;
        for k in 0..nz {
            for j in 0..ny {
                for i in 0..nx {
                    let p = self.cell_centre(i, j, k);
                    let inside = |(s, m): (&Shape, &Option<std::sync::Arc<mesh::CellMask>>)| {
                        self.solid_holds(s, m.as_deref(), [i, j, k], p)
                    };
                    n += self.solids.iter().zip(&masks).any(inside) as u64;
                }
            }
        }
        n
    }

    /// Visits the cells a liquid scene seeds, in seeding order (i fastest), with the index
    /// of the fluid shape that seeds each: the first holding the cell centre, unless a solid
    /// holds it. Allocates nothing, so sizes can be checked before seeding.
    fn for_each_seeded_cell(&self, mut visit: impl FnMut(u32, u32, u32, usize)) {
        if self.kind != SceneKind::Liquid {
            return;
        }
        let [nx, ny, nz] = self.dims();
        let masks = self.mesh_masks();
        for k in 0..nz {
            for j in 0..ny {
                for i in 0..nx {
                    let centre = self.cell_centre(i, j, k);
                    let solid = |(s, m): (&Shape, &Option<std::sync::Arc<mesh::CellMask>>)| {
                        self.solid_holds(s, m.as_deref(), [i, j, k], centre)
                    };
                    if self.solids.iter().zip(&masks).any(solid) {
                        continue;
                    }
                    if let Some(shape) = self.fluid.iter().position(|s| s.contains(centre)) {
                        visit(i, j, k, shape);
                    }
                }
            }
        }
    }

    /// Cells each fluid shape seeds (a shape inside a solid, or holding no cell centre,
    /// seeds none).
    pub fn seeded_cells_per_shape(&self) -> Vec<u64> {
        let mut cells = vec![0u64; self.fluid.len()];
        self.for_each_seeded_cell(|_, _, _, s| cells[s] += 1);
        cells
    }

    /// Particles `initial_state` will seed, counted without seeding them.
    pub fn particle_count(&self) -> u64 {
        self.seeded_cells_per_shape()
            .iter()
            .sum::<u64>()
            .saturating_mul(self.particles_per_cell as u64)
    }

    /// A quick upper bound on the particles (cells whose centres lie in each fluid shape's
    /// bounding box, overlaps counted twice), for size checks that must not walk a huge grid.
    pub fn particle_bound(&self) -> u64 {
        if self.kind != SceneKind::Liquid {
            return 0;
        }
        let n = self.dims();
        let d = self.domain_size();
        let mut total = 0u64;
        for s in &self.fluid {
            let (lo, hi) = s.bounds();
            let mut cells = 1u64;
            for a in 0..3 {
                let h = d[a] / n[a] as f64;
                // Cells whose centre (i + 0.5) h lies in [lo, hi].
                let first = (lo[a] / h - 0.5).ceil().max(0.0);
                let last = (hi[a] / h - 0.5).floor().min(n[a] as f64 - 1.0);
                let count = if last >= first {
                    last - first + 1.0
                } else {
                    0.0
                };
                cells = cells.saturating_mul(count as u64);
            }
            total = total.saturating_add(cells);
        }
        total.saturating_mul(self.particles_per_cell as u64)
    }

    /// Seeds `particles_per_cell` jittered particles (one per sub-cell) in every non-solid
    /// cell whose centre is inside a fluid shape. Deterministic for a given `seed`.
    pub fn initial_state(&self) -> InitialState {
        let StaticSolids {
            flags: solid,
            velocity: solid_velocity,
            open,
        } = self.static_solids();
        let h = self.h();
        let hz = self.domain.2 / self.resolution.2 as f64;
        let per_axis = (self.particles_per_cell as f64).cbrt().round() as u32;
        let mut rng = SplitMix64(self.seed);
        let mut positions = Vec::new();
        let mut velocities = Vec::new();
        let sub = 1.0 / per_axis as f64;
        self.for_each_seeded_cell(|i, j, k, shape| {
            let v = self.fluid[shape].velocity();
            for sk in 0..per_axis {
                for sj in 0..per_axis {
                    for si in 0..per_axis {
                        let mut jitter = |s: u32| (s as f64 + 0.1 + 0.8 * rng.next_f64()) * sub;
                        let x = (i as f64 + jitter(si)) * h;
                        let y = (j as f64 + jitter(sj)) * h;
                        let z = (k as f64 + jitter(sk)) * hz;
                        positions.push([x as f32, y as f32, z as f32, 0.0]);
                        velocities.push([v[0] as f32, v[1] as f32, v[2] as f32, 0.0]);
                    }
                }
            }
        });
        InitialState {
            solid,
            solid_velocity,
            open,
            positions,
            velocities,
        }
    }
}
