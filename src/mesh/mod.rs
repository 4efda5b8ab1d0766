//! Surface meshes of the liquid for offline rendering: an implicit surface from the
//! particles (`field`), marching cubes over it on the CPU in parallel (`marching_cubes`),
//! binary PLY files (`ply`).
//!
//! The mesh is closed everywhere: where the liquid meets a domain wall it is capped by a
//! flat face lying in the wall plane, so every mesh bounds a volume (what a renderer needs
//! for refraction and absorption) and every edge is shared by exactly two triangles.
//! Triangles are counter-clockwise seen from outside the liquid, and vertex normals point
//! out of it.

pub mod distance;
pub mod field;
pub mod marching_cubes;
pub mod ply;

use crate::scene::{Scene, SceneKind};
use std::path::Path;
use thiserror::Error;

pub use field::{density_lattice, DensityParams};
pub use marching_cubes::{extract, Border, Lattice};

/// The finest lattice, relative to the simulation grid, `--mesh-resolution` accepts.
pub const MAX_MESH_RESOLUTION: u32 = 8;

/// Lattice nodes a mesh may sample (about 1 GiB of working memory at 16 bytes a node).
pub const MAX_LATTICE_NODES: u64 = 1 << 26;

/// A triangle mesh with per-vertex normals.
#[derive(Clone, Debug, Default)]
pub struct SurfaceMesh {
    pub positions: Vec<[f32; 3]>,
    pub normals: Vec<[f32; 3]>,
    /// Vertex indices, counter-clockwise seen from outside.
    pub triangles: Vec<[u32; 3]>,
}

#[derive(Debug, Error)]
pub enum MeshError {
    #[error("--dump-mesh meshes the liquid's particles; smoke scenes have none")]
    NotLiquid,
    #[error("--mesh-resolution must be between 1 and {MAX_MESH_RESOLUTION}, got {0}")]
    Resolution(u32),
    #[error(
        "--mesh-resolution {resolution} samples a {dims:?} lattice ({nodes} nodes), above the \
         limit of {MAX_LATTICE_NODES}: use a lower resolution"
    )]
    TooLarge {
        resolution: u32,
        dims: [usize; 3],
        nodes: u64,
    },
    #[error("cannot write {path}: {source}")]
    Write {
        path: String,
        source: std::io::Error,
    },
}

/// The field parameters for a scene at `resolution` times its grid, after checking that
/// the scene is a liquid and the lattice fits in memory.
pub fn params_for(scene: &Scene, resolution: u32) -> Result<DensityParams, MeshError> {
    if scene.kind != SceneKind::Liquid {
        return Err(MeshError::NotLiquid);
    }
    if !(1..=MAX_MESH_RESOLUTION).contains(&resolution) {
        return Err(MeshError::Resolution(resolution));
    }
    let params = DensityParams::for_grid(
        scene.domain_size(),
        scene.h(),
        scene.particles_per_cell,
        resolution,
    );
    let dims = params.lattice_dims();
    let nodes = dims.iter().map(|&n| n as u64).product::<u64>();
    if nodes > MAX_LATTICE_NODES {
        return Err(MeshError::TooLarge {
            resolution,
            dims,
            nodes,
        });
    }
    Ok(params)
}

/// The liquid surface of particles at `positions` (xyz, w unused) in `scene`, sampled
/// `resolution` times finer than its grid. Bubbles smaller than one grid cell are left out:
/// the simulation cannot hold air pockets below its cell size (a cell is FLUID or AIR), so
/// those are dips in the particle density (FLIP leaves particle-poor pockets, mostly along
/// the walls), not air.
pub fn liquid_surface(
    scene: &Scene,
    positions: &[[f32; 4]],
    resolution: u32,
) -> Result<SurfaceMesh, MeshError> {
    let params = params_for(scene, resolution)?;
    let lattice = density_lattice(positions, &params);
    let h = scene.h();
    Ok(without_small_cavities(
        extract(&lattice, Border::WallPadding),
        h * h * h,
    ))
}

/// Removes the closed components of an outward-oriented mesh that enclose air (negative
/// signed volume) of less than `min_volume`; every other component is kept whole, so a
/// closed mesh stays closed. Vertices keep their order.
pub fn without_small_cavities(mesh: SurfaceMesh, min_volume: f64) -> SurfaceMesh {
    let n = mesh.positions.len();
    let mut parent: Vec<u32> = (0..n as u32).collect();
    fn root(parent: &mut [u32], mut v: u32) -> u32 {
        while parent[v as usize] != v {
            let up = parent[parent[v as usize] as usize];
            parent[v as usize] = up;
            v = up;
        }
        v
    }
    for t in &mesh.triangles {
        for &v in &t[1..] {
            let (a, b) = (root(&mut parent, t[0]), root(&mut parent, v));
            parent[a.max(b) as usize] = a.min(b);
        }
    }
    // Signed volume per component (divergence theorem: sum of a . (b x c) / 6).
    let mut volume = vec![0.0f64; n];
    for t in &mesh.triangles {
        let [a, b, c] = t.map(|v| mesh.positions[v as usize].map(|x| x as f64));
        let bxc = [
            b[1] * c[2] - b[2] * c[1],
            b[2] * c[0] - b[0] * c[2],
            b[0] * c[1] - b[1] * c[0],
        ];
        volume[root(&mut parent, t[0]) as usize] +=
            (a[0] * bxc[0] + a[1] * bxc[1] + a[2] * bxc[2]) / 6.0;
    }
    let small_cavity = |v: f64| v < 0.0 && -v < min_volume;
    if !volume.iter().any(|&v| small_cavity(v)) {
        return mesh;
    }
    let keep: Vec<bool> = (0..n as u32)
        .map(|v| !small_cavity(volume[root(&mut parent, v) as usize]))
        .collect();
    let mut new_index = vec![u32::MAX; n];
    let mut out = SurfaceMesh::default();
    for v in 0..n {
        if keep[v] {
            new_index[v] = out.positions.len() as u32;
            out.positions.push(mesh.positions[v]);
            out.normals.push(mesh.normals[v]);
        }
    }
    out.triangles = mesh
        .triangles
        .iter()
        .filter(|t| keep[t[0] as usize])
        .map(|t| t.map(|v| new_index[v as usize]))
        .collect();
    out
}

/// What writing one frame's mesh took.
#[derive(Clone, Copy, Debug)]
pub struct MeshTiming {
    pub vertices: usize,
    pub triangles: usize,
    /// Field plus marching cubes.
    pub mesh_s: f64,
    /// Writing the PLY file.
    pub write_s: f64,
}

/// Meshes the liquid and writes it to `path` as binary PLY (atomically).
pub fn write_liquid_surface(
    path: &Path,
    scene: &Scene,
    positions: &[[f32; 4]],
    resolution: u32,
    comment: &str,
) -> Result<MeshTiming, MeshError> {
    let t0 = std::time::Instant::now();
    let mesh = liquid_surface(scene, positions, resolution)?;
    let t1 = std::time::Instant::now();
    ply::write_mesh_ply(path, &mesh, comment).map_err(|source| MeshError::Write {
        path: path.display().to_string(),
        source,
    })?;
    Ok(MeshTiming {
        vertices: mesh.positions.len(),
        triangles: mesh.triangles.len(),
        mesh_s: (t1 - t0).as_secs_f64(),
        write_s: t1.elapsed().as_secs_f64(),
    })
}
