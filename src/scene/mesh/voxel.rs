//! The signed distance of a mesh at the cells' centres, and which cells it holds.

use super::*;

/// The signed distance of `mesh` at the centre of every cell of a `dims` grid of cells
/// `h` (cell (i, j, k) centred at ((i + 0.5) h_x, (j + 0.5) h_y, (k + 0.5) h_z), index
/// i + nx (j + ny k)): negative inside, in the units of the mesh.
pub fn voxelise(mesh: &TriMesh, dims: [u32; 3], h: [f64; 3]) -> Vec<f32> {
    let bvh = Bvh::new(mesh);
    let [nx, ny, nz] = dims.map(|n| n as usize);
    parallel_cells(nx * ny * nz, |c| {
        let p = [
            ((c % nx) as f64 + 0.5) * h[0],
            ((c / nx % ny) as f64 + 0.5) * h[1],
            ((c / (nx * ny)) as f64 + 0.5) * h[2],
        ];
        bvh.sdf(p) as f32
    })
}

/// Which cells of a grid are inside a mesh, over the box of cells its bounds reach.
#[derive(Clone, Debug, PartialEq)]
pub struct CellMask {
    /// First cell of the box and its size in cells.
    pub lo: [u32; 3],
    pub size: [u32; 3],
    pub inside: Vec<bool>,
}

impl CellMask {
    pub fn get(&self, i: u32, j: u32, k: u32) -> bool {
        let (a, b, c) = (
            i.wrapping_sub(self.lo[0]),
            j.wrapping_sub(self.lo[1]),
            k.wrapping_sub(self.lo[2]),
        );
        if a >= self.size[0] || b >= self.size[1] || c >= self.size[2] {
            return false;
        }
        self.inside[(a + self.size[0] * (b + self.size[1] * c)) as usize]
    }

    pub fn count(&self) -> u64 {
        self.inside.iter().filter(|x| **x).count() as u64
    }
}

pub(super) type MaskKey = ([u32; 3], [u64; 3]);

/// Runs `f` on every index in `0..n` on all cores, in chunks; results in index order (the
/// same whatever the scheduling).
pub(crate) fn parallel_cells<T: Send + Copy + Default>(
    n: usize,
    f: impl Fn(usize) -> T + Sync,
) -> Vec<T> {
    let threads = std::thread::available_parallelism()
        .map(|t| t.get())
        .unwrap_or(1)
        .min(16);
    let mut out = vec![T::default(); n];
    let chunk = n.div_ceil(threads * 8).max(1024);
    let work = Mutex::new(out.chunks_mut(chunk).enumerate());
    std::thread::scope(|s| {
        for _ in 0..threads.min(n.div_ceil(chunk)) {
            s.spawn(|| loop {
                let next = work.lock().unwrap_or_else(|e| e.into_inner()).next();
                let Some((c, slice)) = next else { break };
                for (k, o) in slice.iter_mut().enumerate() {
                    *o = f(c * chunk + k);
                }
            });
        }
    });
    out
}
