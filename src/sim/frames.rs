//! What a simulation hands out as plain data for the files `output` writes: a frame's grid
//! fields (the VTK caches) and a pressure system (the Matrix Market export). Defined here,
//! so that the simulation builds them without importing `output`, which imports `sim`.

/// The pressure system of one solve in plain data, rows restricted to FLUID cells.
pub struct ExportedSystem {
    pub dims: [u32; 3],
    /// Packed matrix per cell (diag, +x, +y, +z).
    pub a: Vec<[f32; 4]>,
    pub b: Vec<f32>,
    pub p: Vec<f32>,
}

/// One named array over the cells, `components` values per cell (i fastest).
#[derive(Clone, Debug, PartialEq)]
pub struct CellArray {
    pub name: String,
    pub components: u32,
    pub values: Vec<f32>,
}

/// The grid fields of one frame.
#[derive(Clone, Debug, PartialEq)]
pub struct FieldFrame {
    /// Cells along x, y, z (z is 1 in a smoke slice).
    pub dims: [u32; 3],
    /// Cell size, m.
    pub h: f64,
    /// Cell arrays (cell types, pressure, cell-centred velocity, ...).
    pub cells: Vec<CellArray>,
    /// The MAC face velocities u, v, w (m/s), each over its own face grid (i fastest); w is
    /// empty in a slice. None when not asked for.
    pub faces: Option<[Vec<f32>; 3]>,
    /// With `faces`, where the solids cut faces: each face's open fraction, over the same
    /// face grids (written beside the velocity as `open_fraction`).
    pub open: Option<[Vec<f32>; 3]>,
}

impl FieldFrame {
    /// A slice (one cell layer along z): written as 2D image data.
    pub fn is_slice(&self) -> bool {
        self.dims[2] == 1
    }

    /// Points of the face grid of component `comp` and its origin, m.
    pub fn face_grid(&self, comp: usize) -> ([u32; 3], [f64; 3]) {
        let mut d = self.dims;
        d[comp] += 1;
        let mut origin = [0.5 * self.h; 3];
        origin[comp] = 0.0;
        if self.is_slice() {
            origin[2] = 0.0;
        }
        (d, origin)
    }
}
