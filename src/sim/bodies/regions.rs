//! The separate regions of the smoke's closed box. Bodies pressed against each other, the
//! walls or the static solids can wall off a pocket of air; each region is its own pure
//! Neumann problem, solvable only when its own right-hand side sums to zero, and a pocket
//! whose moving walls squeeze it does not conserve its volume. One mean removed over the
//! whole box leaves such a pocket's excess in place and the solve fails (pressures of
//! kilopascals that throw light bodies about). The regions are found here on the host,
//! from the SOLID flags the stamp wrote; the GPU then removes each region's own mean
//! (coupling.wgsl, `rhs_sum`, `rhs_compatible`).

use crate::gpu::constants::{MAX_REGIONS, NO_REGION, SOLID_PARTIAL};

/// Whether a cell's solid flag walls it off from the regions.
fn walls(flag: u32) -> bool {
    flag != 0 && flag != SOLID_PARTIAL
}

/// The (i, j, k) of cell `c` of a `dims` grid.
fn cell_coord(c: usize, [nx, ny, _]: [usize; 3]) -> [usize; 3] {
    [c % nx, (c / nx) % ny, c / (nx * ny)]
}

/// The regions of the non-solid cells of an `n` grid, connected through faces (in-plane
/// only on a one-slice grid, `n[2] == 1`).
#[derive(Clone, Debug, PartialEq)]
pub struct Regions {
    /// Per cell, its region (0..MAX_REGIONS), or [`NO_REGION`] for solid cells and for
    /// regions beyond the [`MAX_REGIONS`] largest, which become solid at rest.
    pub label: Vec<u32>,
    /// Cells of each kept region.
    pub cells: Vec<u32>,
}

impl Regions {
    /// Labels the regions of `solid` (SOLID_CLOSED: solid; a cut cell, SOLID_PARTIAL, is
    /// part of its region: the solve reaches it through its open faces, which are taken as
    /// open whatever their fraction). Regions are numbered by size,
    /// largest first (ties by their lowest cell index), so the labels do not depend on
    /// anything but the flags.
    pub fn find(solid: &[u32], n: [u32; 3]) -> Self {
        Self::find_through(solid, None, n)
    }

    /// [`Self::find`], two cells joining only through a face with some of it open where
    /// `open` gives the faces' open fractions (u, v, w back to back): a body cutting faces
    /// seals a pocket once the faces between are closed, whatever the cells' flags.
    pub fn find_through(solid: &[u32], open: Option<&[f32]>, n: [u32; 3]) -> Self {
        let dims = n.map(|v| v as usize);
        assert_eq!(
            solid.len(),
            dims.iter().product::<usize>(),
            "one flag per cell"
        );
        Self::label(
            dims,
            |c| walls(solid[c]),
            |c, axis| {
                open.is_none_or(|o| {
                    o[crate::scene::fractions::face_slot(dims, axis, cell_coord(c, dims))] > 0.0
                })
            },
        )
    }

    /// [`Self::find_through`] from the GPU's packing (coupling.wgsl, `pack_regions`): per
    /// cell 4 bits, 8 cells to a word, bit 0 the cell walls the regions off, bits 1-3 some
    /// of its lower x, y, z face is open.
    pub fn find_packed(words: &[u32], n: [u32; 3]) -> Self {
        let dims = n.map(|v| v as usize);
        assert!(
            words.len() * 8 >= dims.iter().product::<usize>(),
            "4 bits per cell"
        );
        let bits = |c: usize| (words[c / 8] >> (4 * (c % 8))) & 0xf;
        Self::label(
            dims,
            |c| bits(c) & 1 != 0,
            |c, axis| bits(c) & (2 << axis) != 0,
        )
    }

    /// The labelling: `walled(c)` whether cell c walls the regions off, `lower_open(c, axis)`
    /// whether c joins its neighbour below along `axis` (the face between them has some of
    /// it open).
    fn label(
        dims: [usize; 3],
        walled: impl Fn(usize) -> bool,
        lower_open: impl Fn(usize, usize) -> bool,
    ) -> Self {
        let [nx, ny, nz] = dims;
        let mut raw = vec![NO_REGION; nx * ny * nz];
        let mut sizes: Vec<u32> = Vec::new();
        let mut stack = Vec::new();
        for start in 0..raw.len() {
            if walled(start) || raw[start] != NO_REGION {
                continue;
            }
            let id = sizes.len() as u32;
            let mut count = 0u32;
            raw[start] = id;
            stack.push(start);
            while let Some(c) = stack.pop() {
                count += 1;
                let [i, j, k] = cell_coord(c, dims);
                // d is c's neighbour along `axis`, above it with `up`.
                let mut visit = |d: usize, axis: usize, up: bool| {
                    let face_open = lower_open(if up { d } else { c }, axis);
                    if !walled(d) && raw[d] == NO_REGION && face_open {
                        raw[d] = id;
                        stack.push(d);
                    }
                };
                if i > 0 {
                    visit(c - 1, 0, false);
                }
                if i + 1 < nx {
                    visit(c + 1, 0, true);
                }
                if j > 0 {
                    visit(c - nx, 1, false);
                }
                if j + 1 < ny {
                    visit(c + nx, 1, true);
                }
                if k > 0 {
                    visit(c - nx * ny, 2, false);
                }
                if k + 1 < nz {
                    visit(c + nx * ny, 2, true);
                }
            }
            sizes.push(count);
        }
        // Largest first; a stable sort keeps the order of discovery among equals.
        let mut order: Vec<usize> = (0..sizes.len()).collect();
        order.sort_by_key(|&r| std::cmp::Reverse(sizes[r]));
        let mut rank = vec![NO_REGION; sizes.len()];
        let mut cells = Vec::new();
        for (place, &r) in order.iter().take(MAX_REGIONS).enumerate() {
            rank[r] = place as u32;
            cells.push(sizes[r]);
        }
        let label = raw
            .iter()
            .map(|&r| if r == NO_REGION { r } else { rank[r as usize] })
            .collect();
        Regions { label, cells }
    }

    /// The labels: the GPU's `regions` buffer (the GPU counts each region's FLUID cells
    /// itself, coupling.wgsl `rhs_sum`, so the labels of the static solids alone serve
    /// while no body can seal a region, [`super::coupling::BodyCoupling::separate_regions`]).
    pub fn gpu_words(&self) -> Vec<u32> {
        self.label.clone()
    }
}

/// `rhs` with each region's mean removed over its cells (f64 reference of the GPU's
/// `rhs_sum` and `rhs_compatible`, for this module's tests); cells without a region keep
/// their value.
#[cfg(test)]
fn compatible_rhs(rhs: &[f64], regions: &Regions) -> Vec<f64> {
    let mut sum = vec![0.0f64; regions.cells.len()];
    for (c, &r) in regions.label.iter().enumerate() {
        if r != NO_REGION {
            sum[r as usize] += rhs[c];
        }
    }
    rhs.iter()
        .zip(&regions.label)
        .map(|(&b, &r)| {
            if r == NO_REGION {
                b
            } else {
                b - sum[r as usize] / regions.cells[r as usize] as f64
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 7 x 5 slice: a wall across x = 2 splits it, and a ring of solids encloses one
    /// cell on the right.
    #[test]
    fn regions_are_split_by_walls_and_numbered_by_size() {
        let (nx, ny) = (7usize, 5usize);
        let mut solid = vec![0u32; nx * ny];
        for j in 0..ny {
            solid[2 + nx * j] = 1;
        }
        // A pocket at (5, 2): solids at (4,2), (6,2), (5,1), (5,3).
        for (i, j) in [(4, 2), (6, 2), (5, 1), (5, 3)] {
            solid[i + nx * j] = 1;
        }
        let r = Regions::find(&solid, [nx as u32, ny as u32, 1]);
        // Left: 2 x 5 = 10 cells; right: 4 x 5 - 4 solids - 1 pocket = 15; pocket: 1.
        assert_eq!(r.cells, vec![15, 10, 1]);
        let frozen = |r: &Regions, solid: &[u32]| {
            (r.label.iter().zip(solid))
                .filter(|(&l, &s)| s == 0 && l == NO_REGION)
                .count()
        };
        assert_eq!(frozen(&r, &solid), 0);
        assert_eq!(r.label[0], 1);
        assert_eq!(r.label[3], 0, "the largest region is numbered first");
        assert_eq!(r.label[5 + nx * 2], 2, "the pocket");
        assert_eq!(r.label[2], NO_REGION, "solid");
        // Each region's right-hand side sums to zero after the correction.
        let rhs: Vec<f64> = (0..nx * ny).map(|c| (c as f64 * 0.37).sin()).collect();
        let b = compatible_rhs(&rhs, &r);
        for region in 0..3u32 {
            let s: f64 = (0..nx * ny)
                .filter(|&c| r.label[c] == region)
                .map(|c| b[c])
                .sum();
            assert!(s.abs() < 1e-12, "region {region} sums to {s}");
        }
        assert_eq!(b[2], rhs[2], "solid cells keep their value");
    }

    /// The GPU's 4 bits per cell (coupling.wgsl, `pack_regions`) label as the flags and
    /// fractions they were packed from.
    #[test]
    fn packed_bits_label_as_the_flags_and_fractions() {
        let n = [4u32, 3, 1];
        let dims = [4usize, 3, 1];
        let mut solid = vec![0u32; 12];
        solid[5] = SOLID_PARTIAL;
        solid[6] = crate::gpu::constants::SOLID_CLOSED;
        let faces: usize = crate::scene::fractions::face_counts(dims).iter().sum();
        let mut open = vec![1.0f32; faces];
        // Close the faces around cell 4 but its lower-x one, and one between cells 9 and 10.
        use crate::scene::fractions::face_slot;
        open[face_slot(dims, 0, [1, 1, 0])] = 0.0;
        open[face_slot(dims, 1, [0, 1, 0])] = 0.0;
        open[face_slot(dims, 1, [0, 2, 0])] = 0.0;
        open[face_slot(dims, 0, [2, 2, 0])] = 0.0;
        let mut words = vec![0u32; 2];
        for c in 0..12 {
            let x = cell_coord(c, dims);
            let mut b = walls(solid[c]) as u32;
            for a in 0..3 {
                if x[a] > 0 && open[face_slot(dims, a, x)] > 0.0 {
                    b |= 2 << a;
                }
            }
            words[c / 8] |= b << (4 * (c % 8));
        }
        let expect = Regions::find_through(&solid, Some(&open), n);
        assert!(expect.cells.len() >= 2, "{expect:?}");
        assert_eq!(Regions::find_packed(&words, n), expect);
    }

    #[test]
    fn closed_faces_split_regions_whatever_the_flags() {
        // A 4 x 1 row of cut cells (a body's rim): one region through open faces, two where
        // the face between cells 1 and 2 is closed, and cut cells alone never wall.
        let n = [4u32, 1, 1];
        let solid = [SOLID_PARTIAL; 4];
        let faces = 5 + 2 * 4 + 2 * 4;
        let mut open = vec![1.0f32; faces];
        let r = Regions::find_through(&solid, Some(&open), n);
        assert_eq!(r.cells, vec![4]);
        open[2] = 0.0;
        let r = Regions::find_through(&solid, Some(&open), n);
        assert_eq!(r.cells, vec![2, 2]);
        assert_eq!(r.label, vec![0, 0, 1, 1]);
        // A sliver of an open face still joins them.
        open[2] = 0.03;
        assert_eq!(Regions::find_through(&solid, Some(&open), n).cells, vec![4]);
        assert_eq!(Regions::find(&solid, n).cells, vec![4]);
    }

    /// A 3D grid connects through z as well; past MAX_REGIONS the smallest regions are
    /// frozen.
    #[test]
    fn regions_connect_in_3d_and_the_smallest_beyond_the_limit_freeze() {
        // Two cells stacked in z, solids around: one region of 2.
        let n = [1u32, 1, 2];
        let r = Regions::find(&[0, 0], n);
        assert_eq!(r.cells, vec![2]);
        // A row of alternating fluid and solid cells: MAX_REGIONS + 3 one-cell regions,
        // and one of two cells at the end.
        let singles = MAX_REGIONS + 3;
        let mut solid = Vec::new();
        for _ in 0..singles {
            solid.extend([0u32, 1]);
        }
        solid.extend([0, 0]);
        let r = Regions::find(&solid, [solid.len() as u32, 1, 1]);
        assert_eq!(r.cells.len(), MAX_REGIONS);
        assert_eq!(r.cells[0], 2, "the largest region comes first");
        let frozen = (r.label.iter().zip(&solid))
            .filter(|(&l, &s)| s == 0 && l == NO_REGION)
            .count();
        assert_eq!(frozen, 4, "the last four single cells are frozen");
        assert_eq!(r.label[solid.len() - 1], 0);
        assert_eq!(r.label[0], 1, "the first single cell is kept");
        assert_eq!(
            r.label[2 * (singles - 1)],
            NO_REGION,
            "the last single is frozen"
        );
        assert_eq!(r.gpu_words().len(), solid.len(), "a label per cell");
    }
}
